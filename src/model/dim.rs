//! Dimensions: what a benchmark point was measured under (model, engine, GPU, load, ...).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The text standing for a missing dimension value: in charts, filter lists and links.
pub const NO_VALUE: &str = "(none)";

/// What kind of value a well-known dimension holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimKind {
    /// Free text (`model`, `gpu`, ...).
    Text,
    /// A non-negative whole number (`gpu_count`, `batch_size`, ...).
    Count,
    /// A real number, possibly infinite (`request_rate` may be `inf`).
    Real,
}

macro_rules! dims {
    ($( $variant:ident => $name:literal, $kind:ident, $label:literal; )*) => {
        /// A well-known dimension. Its [`name`](Dim::name) is the canonical JSON/CSV field name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Dim {
            $(
                #[doc = $label]
                $variant,
            )*
        }

        impl Dim {
            /// Every well-known dimension, in canonical column order.
            pub const ALL: &'static [Dim] = &[$(Dim::$variant),*];

            /// The canonical field name (`request_rate`).
            pub fn name(self) -> &'static str {
                match self { $(Dim::$variant => $name),* }
            }

            /// A human label with unit (`Request rate (req/s)`).
            pub fn label(self) -> &'static str {
                match self { $(Dim::$variant => $label),* }
            }

            /// The kind of value this dimension holds.
            pub fn kind(self) -> DimKind {
                match self { $(Dim::$variant => DimKind::$kind),* }
            }

            /// The dimension with this canonical name.
            pub fn from_name(name: &str) -> Option<Dim> {
                match name { $($name => Some(Dim::$variant),)* _ => None }
            }
        }
    };
}

dims! {
    Source => "source", Text, "Source file";
    Format => "format", Text, "Format";
    Model => "model", Text, "Model";
    Engine => "engine", Text, "Engine";
    EngineVersion => "engine_version", Text, "Engine version";
    Gpu => "gpu", Text, "GPU";
    GpuCount => "gpu_count", Count, "GPU count";
    Tp => "tp", Count, "Tensor parallel size";
    Pp => "pp", Count, "Pipeline parallel size";
    Precision => "precision", Text, "Precision";
    Dataset => "dataset", Text, "Dataset";
    InputLen => "input_len", Real, "Input length (tokens)";
    OutputLen => "output_len", Real, "Output length (tokens)";
    BatchSize => "batch_size", Count, "Batch size";
    MaxConcurrency => "max_concurrency", Count, "Max concurrency";
    RequestRate => "request_rate", Real, "Request rate (req/s)";
    Burstiness => "burstiness", Real, "Burstiness";
    NumPrompts => "num_prompts", Count, "Number of prompts";
    Date => "date", Text, "Date";
    Label => "label", Text, "Label";
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Any dimension: a well-known one or a free-form tag (`tag.<key>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DimKey {
    /// A well-known dimension.
    Known(Dim),
    /// A free-form tag; the string is the key without the `tag.` prefix.
    Tag(String),
}

impl DimKey {
    /// The canonical field name: `gpu` or `tag.<key>`.
    pub fn name(&self) -> String {
        match self {
            DimKey::Known(d) => d.name().to_string(),
            DimKey::Tag(k) => format!("tag.{k}"),
        }
    }

    /// A human label: the dimension's label, or the tag key.
    pub fn label(&self) -> String {
        match self {
            DimKey::Known(d) => d.label().to_string(),
            DimKey::Tag(k) => k.clone(),
        }
    }

    /// Parses a canonical field name (`gpu`, `tag.node`).
    pub fn from_name(name: &str) -> Option<DimKey> {
        if let Some(tag) = name.strip_prefix("tag.") {
            if tag.is_empty() {
                return None;
            }
            return Some(DimKey::Tag(tag.to_string()));
        }
        Dim::from_name(name).map(DimKey::Known)
    }
}

impl From<Dim> for DimKey {
    fn from(d: Dim) -> Self {
        DimKey::Known(d)
    }
}

impl fmt::Display for DimKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The value of a dimension. Numbers sort before text, numerically (`inf` last among numbers);
/// text reads numbers inside it as numbers ([`natural_cmp`]: `node2` before `node10`, a tag
/// `128000` after `16000`).
#[derive(Clone, Debug)]
pub enum DimValue {
    /// A number (counts are whole numbers; `request_rate` may be infinite).
    Num(f64),
    /// Text.
    Text(String),
}

impl DimValue {
    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            DimValue::Num(v) => Some(*v),
            DimValue::Text(_) => None,
        }
    }

    /// The text, if this is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            DimValue::Text(s) => Some(s),
            DimValue::Num(_) => None,
        }
    }
}

/// `x` rounded to `digits` significant digits (halves away from zero); zero and non-finite
/// values as they are. With [`format_number`], the short form of a measured value (`224.234`).
pub fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    let rounded = (x * scale).round() / scale;
    // Past f64's range (1e-300 to 17 digits needs a scale of 1e316) the value stays as it is.
    if rounded.is_finite() && scale.is_finite() && scale > 0.0 {
        rounded
    } else {
        x
    }
}

/// Formats a number the way people write it: whole numbers without a fraction, `inf` for +∞.
pub fn format_number(v: f64) -> String {
    let mut s = String::new();
    number_into(&mut s, v);
    s
}

/// [`format_number`] into `buf` (cleared first): writers of millions of cells reuse one buffer.
pub(crate) fn number_into(buf: &mut String, v: f64) {
    use std::fmt::Write as _;
    buf.clear();
    if v.is_nan() {
        buf.push_str("NaN");
    } else if v.is_infinite() {
        buf.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else if v == v.trunc() && v.abs() < 1e15 {
        let _ = write!(buf, "{}", v as i64);
    } else {
        let _ = write!(buf, "{v}");
    }
}

impl fmt::Display for DimValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimValue::Num(v) => f.write_str(&format_number(*v)),
            DimValue::Text(s) => f.write_str(s),
        }
    }
}

impl PartialEq for DimValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for DimValue {}

impl PartialOrd for DimValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DimValue {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (DimValue::Num(a), DimValue::Num(b)) => a.total_cmp(b),
            (DimValue::Num(_), DimValue::Text(_)) => Ordering::Less,
            (DimValue::Text(_), DimValue::Num(_)) => Ordering::Greater,
            (DimValue::Text(a), DimValue::Text(b)) => natural_cmp(a, b),
        }
    }
}

/// Orders text the way people read it: text that is a whole number (`80`, `1.5`, `inf`) before
/// other text and by value (`inf` last); elsewhere runs of digits compare as numbers
/// (`8xH100` before `16xH100`). Ties fall back to plain byte order, so only equal strings are
/// equal.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let number = |s: &str| s.trim().parse::<f64>().ok().filter(|v| !v.is_nan());
    let by_meaning = match (number(a), number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => digit_runs_cmp(a, b),
    };
    by_meaning.then_with(|| a.cmp(b))
}

/// Compares text chunk by chunk, runs of ASCII digits by their value.
fn digit_runs_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let run = |s: &[u8], mut k: usize| {
                let start = k;
                while k < s.len() && s[k].is_ascii_digit() {
                    k += 1;
                }
                (start, k)
            };
            let ((sa, ea), (sb, eb)) = (run(a, i), run(b, j));
            // Leading zeros do not change a number's value.
            let trim = |s: &[u8], mut k: usize, e: usize| {
                while k + 1 < e && s[k] == b'0' {
                    k += 1;
                }
                k
            };
            let (ta, tb) = (trim(a, sa, ea), trim(b, sb, eb));
            let o = (ea - ta)
                .cmp(&(eb - tb))
                .then_with(|| a[ta..ea].cmp(&b[tb..eb]));
            if o != Ordering::Equal {
                return o;
            }
            i = ea;
            j = eb;
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

impl Hash for DimValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            DimValue::Num(v) => {
                0u8.hash(state);
                v.to_bits().hash(state);
            }
            DimValue::Text(s) => {
                1u8.hash(state);
                s.hash(state);
            }
        }
    }
}

impl From<&str> for DimValue {
    fn from(s: &str) -> Self {
        DimValue::Text(s.to_string())
    }
}

impl From<String> for DimValue {
    fn from(s: String) -> Self {
        DimValue::Text(s)
    }
}

impl From<f64> for DimValue {
    fn from(v: f64) -> Self {
        DimValue::Num(v)
    }
}

impl From<u64> for DimValue {
    fn from(v: u64) -> Self {
        DimValue::Num(v as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dim::ALL {
            assert_eq!(Dim::from_name(d.name()), Some(*d));
            assert_eq!(DimKey::from_name(d.name()), Some(DimKey::Known(*d)));
        }
        assert_eq!(
            DimKey::from_name("tag.node"),
            Some(DimKey::Tag("node".into()))
        );
        assert_eq!(DimKey::from_name("tag."), None);
        assert_eq!(DimKey::from_name("nonsense"), None);
    }

    #[test]
    fn values_sort_numbers_first_and_infinity_last() {
        let mut v = [
            DimValue::from("b"),
            DimValue::Num(f64::INFINITY),
            DimValue::Num(10.0),
            DimValue::Num(2.0),
            DimValue::from("a"),
        ];
        v.sort();
        let shown: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(shown, ["2", "10", "inf", "a", "b"]);
    }

    #[test]
    fn text_sorts_numbers_by_value() {
        let mut v: Vec<DimValue> = [
            "10000", "128000", "16000", "32000", "64000", "80", "inf", "node10", "node2",
            "16xH100", "8xH100", "a",
        ]
        .iter()
        .map(|s| DimValue::from(*s))
        .collect();
        v.sort();
        let shown: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            shown,
            [
                "80", "10000", "16000", "32000", "64000", "128000", "inf", "8xH100", "16xH100",
                "a", "node2", "node10"
            ]
        );
        // Equal only when identical, so sets and maps keep both spellings.
        assert_ne!(DimValue::from("1"), DimValue::from("01"));
        assert_eq!(natural_cmp("x01", "x1"), "x01".cmp("x1"));
    }

    #[test]
    fn numbers_format_like_people_write_them() {
        assert_eq!(format_number(512.0), "512");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(format_number(f64::INFINITY), "inf");
        assert_eq!(format_number(f64::NAN), "NaN");
    }
}
