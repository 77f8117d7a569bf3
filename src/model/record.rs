//! The canonical record: one benchmark point.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::dim::{Dim, DimKey, DimKind, DimValue};
use super::gaps::Gaps;
use super::metric::MetricKey;
use super::metrics::Metrics;

/// One benchmark point: the dimensions it was measured under and the metrics measured.
///
/// Well-known dimensions are typed fields; free-form dimensions live in [`tags`](Record::tags).
/// Every field is optional. Fields whose value was inferred (from a file name, a test name,
/// surrounding text or the user) rather than read are listed in [`inferred`](Record::inferred)
/// by canonical name, with where the value came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// `source`: the file the record came from.
    pub source: Option<Arc<str>>,
    /// `format`: the reader that produced it.
    pub format: Option<Arc<str>>,
    /// `model`.
    pub model: Option<Arc<str>>,
    /// `engine` (vllm, sglang, tgi, trtllm, ...).
    pub engine: Option<Arc<str>>,
    /// `engine_version`.
    pub engine_version: Option<Arc<str>>,
    /// `gpu`, as written (A100, A100 40G, H100).
    pub gpu: Option<Arc<str>>,
    /// `gpu_count`.
    pub gpu_count: Option<u64>,
    /// `tp`: tensor-parallel size.
    pub tp: Option<u64>,
    /// `pp`: pipeline-parallel size.
    pub pp: Option<u64>,
    /// `precision` (fp16, bf16, fp8, awq, ...).
    pub precision: Option<Arc<str>>,
    /// `dataset` (sharegpt, random, ...).
    pub dataset: Option<Arc<str>>,
    /// `input_len`: tokens per request (mean where they vary).
    pub input_len: Option<f64>,
    /// `output_len`: tokens per request (mean where they vary).
    pub output_len: Option<f64>,
    /// `batch_size`.
    pub batch_size: Option<u64>,
    /// `max_concurrency`.
    pub max_concurrency: Option<u64>,
    /// `request_rate` in req/s; `f64::INFINITY` when unbounded.
    pub request_rate: Option<f64>,
    /// `burstiness` (1 = Poisson arrivals).
    pub burstiness: Option<f64>,
    /// `num_prompts`.
    pub num_prompts: Option<u64>,
    /// `date`, as written by the tool.
    pub date: Option<Arc<str>>,
    /// `label`.
    pub label: Option<Arc<str>>,
    /// Free-form dimensions (`tag.<key>`), e.g. `--metadata` pairs.
    pub tags: BTreeMap<String, String>,
    /// Measured values, keyed by metric. Latencies are in milliseconds.
    pub metrics: Metrics,
    /// Canonical field name → where its inferred value came from (`file name`, `user`, ...).
    pub inferred: BTreeMap<String, String>,
    /// Per-request detail, when the source carried it.
    pub requests: Vec<RequestDetail>,
    /// Time series of the run, by column: `t_s` (seconds from the stage's start) and one
    /// column per quantity (`sent`, `in_flight`, `output_tokens`, `ttft_p50_ms`, …,
    /// `server.<name>`), each as long as `t_s`; NaN where a second has no value. Inline: boxed
    /// (`Option<Box<…>>`, 8 bytes instead of 24) a million-row read held 16 MiB less but took
    /// 12–17 % more CPU here (docs/design-notes.md).
    pub series: SeriesColumns,
}

/// A record's time series, column name → one value per second (see [`Record::series`]).
pub type SeriesColumns = BTreeMap<String, Vec<f64>>;

/// What one request of a benchmark run did, for distribution charts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestDetail {
    /// Prompt tokens.
    pub input_len: Option<u64>,
    /// Generated tokens.
    pub output_len: Option<u64>,
    /// Time to first token, ms.
    pub ttft_ms: Option<f64>,
    /// Gaps between consecutive output chunks after the first, ms (held exactly, in as few
    /// bytes as their values allow: [`Gaps`]).
    pub itl_ms: Gaps,
    /// End-to-end latency, ms.
    pub e2el_ms: Option<f64>,
    /// Error text when the request failed.
    pub error: Option<String>,
    /// Scheduled send time, seconds from the stage's start.
    pub intended_s: Option<f64>,
    /// When the request went on the wire, seconds from the stage's start; TTFT and E2EL count
    /// from here ([`RequestDetail::first_token_s`], [`RequestDetail::end_s`]).
    pub sent_s: Option<f64>,
    /// Why the request failed, as a short snake_case name (`http_503`, `first_token_timeout`,
    /// the load generator's failure kinds); `None` when it succeeded or the source did not say.
    pub error_kind: Option<String>,
}

impl RequestDetail {
    /// When the first token arrived, seconds from the stage's start (`sent_s` + TTFT).
    pub fn first_token_s(&self) -> Option<f64> {
        Some(self.sent_s? + self.ttft_ms? / 1000.0)
    }

    /// When the request ended, seconds from the stage's start (`sent_s` + E2EL).
    pub fn end_s(&self) -> Option<f64> {
        Some(self.sent_s? + self.e2el_ms? / 1000.0)
    }
}

/// Why a dimension value could not be set.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SetDimError {
    /// A count dimension got a value that is not a non-negative whole number.
    #[error("{dim} must be a whole number ≥ 0, got {value}")]
    NotACount {
        /// The dimension.
        dim: Dim,
        /// The offending value.
        value: String,
    },
    /// A numeric dimension got text that is not a number.
    #[error("{dim} must be a number, got {value:?}")]
    NotANumber {
        /// The dimension.
        dim: Dim,
        /// The offending text.
        value: String,
    },
}

fn count_from(dim: Dim, v: f64) -> Result<u64, SetDimError> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9.007_199_254_740_992e15 {
        Ok(v as u64)
    } else {
        Err(SetDimError::NotACount {
            dim,
            value: super::dim::format_number(v),
        })
    }
}

/// Parses a number as written in a dimension cell: `inf`, `Infinity`, `1,024`, `8`.
pub(crate) fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    t.replace(',', "").parse().ok()
}

/// A record's dimension value borrowed from it ([`Record::dim_borrowed`]): numbers by their
/// bits, texts as they are. The same borrowed values are the same [`DimValue`]s; the converse
/// can fail only for texts that sort as equal (`a01`, `a1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BorrowedDim<'a> {
    /// A numeric value's `f64` bits.
    Num(u64),
    /// A text value.
    Text(&'a str),
}

impl Record {
    /// The value of a dimension, if set.
    pub fn dim(&self, key: &DimKey) -> Option<DimValue> {
        match key {
            DimKey::Known(d) => self.known(*d),
            DimKey::Tag(k) => self.tags.get(k).map(|v| DimValue::Text(v.clone())),
        }
    }

    /// The value of a well-known dimension, if set.
    pub fn known(&self, d: Dim) -> Option<DimValue> {
        if let Some(v) = self.count_field(d) {
            return v.map(|n| DimValue::Num(n as f64));
        }
        if let Some(v) = self.real_field(d) {
            return v.map(DimValue::Num);
        }
        self.known_text(d).map(|s| DimValue::Text(s.to_string()))
    }

    /// The text of a text-valued well-known dimension, borrowed (`None` for numeric ones).
    pub fn known_text(&self, d: Dim) -> Option<&str> {
        self.text_field(d)?.as_deref()
    }

    /// The record's value of `key`, borrowed: for grouping many records by their values
    /// without building each value ([`BorrowedDim`]).
    pub fn dim_borrowed(&self, key: &DimKey) -> Option<BorrowedDim<'_>> {
        match key {
            DimKey::Tag(k) => self.tags.get(k).map(|t| BorrowedDim::Text(t)),
            DimKey::Known(d) => match self.known_text(*d) {
                Some(t) => Some(BorrowedDim::Text(t)),
                None => self
                    .count_field(*d)
                    .flatten()
                    .map(|n| n as f64)
                    .or(self.real_field(*d).flatten())
                    .map(|v| BorrowedDim::Num(v.to_bits())),
            },
        }
    }

    /// Whether the record's value of `key` equals `value` as [`DimValue`]s compare (`None`:
    /// the record has no value), without building the record's value.
    pub fn dim_equals(&self, key: &DimKey, value: Option<&DimValue>) -> bool {
        let text_equals = |t: &str| matches!(value, Some(DimValue::Text(v)) if super::dim::natural_cmp(t, v).is_eq());
        match key {
            DimKey::Tag(k) => match self.tags.get(k) {
                Some(t) => text_equals(t),
                None => value.is_none(),
            },
            DimKey::Known(d) => match (self.known_text(*d), d.kind()) {
                (Some(t), _) => text_equals(t),
                (None, DimKind::Text) => value.is_none(),
                (None, _) => self.known(*d).as_ref() == value,
            },
        }
    }

    /// Whether a well-known dimension has a value (without building it).
    pub fn has_known(&self, d: Dim) -> bool {
        match (self.count_field(d), self.real_field(d)) {
            (Some(v), _) => v.is_some(),
            (_, Some(v)) => v.is_some(),
            _ => self.known_text(d).is_some(),
        }
    }

    /// Sets (or with `None` clears) a dimension. Text is parsed for numeric dimensions
    /// (`"1,024"`, `"inf"`); numbers are written out for text dimensions.
    pub fn set_dim(&mut self, key: &DimKey, value: Option<DimValue>) -> Result<(), SetDimError> {
        match key {
            DimKey::Tag(k) => {
                match value {
                    Some(v) => self.tags.insert(k.clone(), v.to_string()),
                    None => self.tags.remove(k),
                };
                Ok(())
            }
            DimKey::Known(d) => self.set_known(*d, value),
        }
    }

    /// The field of a text dimension ([`DimKind::Text`]); `None` for the numeric ones.
    pub fn text_field(&self, d: Dim) -> Option<&Option<Arc<str>>> {
        Some(match d {
            Dim::Source => &self.source,
            Dim::Format => &self.format,
            Dim::Model => &self.model,
            Dim::Engine => &self.engine,
            Dim::EngineVersion => &self.engine_version,
            Dim::Gpu => &self.gpu,
            Dim::Precision => &self.precision,
            Dim::Dataset => &self.dataset,
            Dim::Date => &self.date,
            Dim::Label => &self.label,
            _ => return None,
        })
    }

    /// The field of a text dimension, to set; `None` for the numeric ones.
    pub fn text_field_mut(&mut self, d: Dim) -> Option<&mut Option<Arc<str>>> {
        Some(match d {
            Dim::Source => &mut self.source,
            Dim::Format => &mut self.format,
            Dim::Model => &mut self.model,
            Dim::Engine => &mut self.engine,
            Dim::EngineVersion => &mut self.engine_version,
            Dim::Gpu => &mut self.gpu,
            Dim::Precision => &mut self.precision,
            Dim::Dataset => &mut self.dataset,
            Dim::Date => &mut self.date,
            Dim::Label => &mut self.label,
            _ => return None,
        })
    }

    /// The field of a whole-number dimension ([`DimKind::Count`]); `None` for the others.
    pub fn count_field(&self, d: Dim) -> Option<Option<u64>> {
        Some(match d {
            Dim::GpuCount => self.gpu_count,
            Dim::Tp => self.tp,
            Dim::Pp => self.pp,
            Dim::BatchSize => self.batch_size,
            Dim::MaxConcurrency => self.max_concurrency,
            Dim::NumPrompts => self.num_prompts,
            _ => return None,
        })
    }

    /// The field of a whole-number dimension, to set; `None` for the others.
    pub fn count_field_mut(&mut self, d: Dim) -> Option<&mut Option<u64>> {
        Some(match d {
            Dim::GpuCount => &mut self.gpu_count,
            Dim::Tp => &mut self.tp,
            Dim::Pp => &mut self.pp,
            Dim::BatchSize => &mut self.batch_size,
            Dim::MaxConcurrency => &mut self.max_concurrency,
            Dim::NumPrompts => &mut self.num_prompts,
            _ => return None,
        })
    }

    /// The field of a real-valued dimension ([`DimKind::Real`]); `None` for the others.
    pub fn real_field(&self, d: Dim) -> Option<Option<f64>> {
        Some(match d {
            Dim::InputLen => self.input_len,
            Dim::OutputLen => self.output_len,
            Dim::RequestRate => self.request_rate,
            Dim::Burstiness => self.burstiness,
            _ => return None,
        })
    }

    /// The field of a real-valued dimension, to set; `None` for the others.
    pub fn real_field_mut(&mut self, d: Dim) -> Option<&mut Option<f64>> {
        Some(match d {
            Dim::InputLen => &mut self.input_len,
            Dim::OutputLen => &mut self.output_len,
            Dim::RequestRate => &mut self.request_rate,
            Dim::Burstiness => &mut self.burstiness,
            _ => return None,
        })
    }

    /// Sets (or clears) a well-known dimension; see [`set_dim`](Record::set_dim).
    pub fn set_known(&mut self, d: Dim, value: Option<DimValue>) -> Result<(), SetDimError> {
        let Some(value) = value else {
            self.clear_known(d);
            return Ok(());
        };
        match d.kind() {
            DimKind::Text => {
                let s: Arc<str> = match value {
                    DimValue::Text(t) => t.into(),
                    num => num.to_string().into(),
                };
                if let Some(slot) = self.text_field_mut(d) {
                    *slot = Some(s);
                }
            }
            DimKind::Count | DimKind::Real => {
                let v = match value {
                    DimValue::Num(v) => v,
                    DimValue::Text(t) => {
                        parse_number(&t).ok_or(SetDimError::NotANumber { dim: d, value: t })?
                    }
                };
                if let Some(slot) = self.real_field_mut(d) {
                    *slot = Some(v);
                } else if let Some(slot) = self.count_field_mut(d) {
                    *slot = Some(count_from(d, v)?);
                }
            }
        }
        Ok(())
    }

    fn clear_known(&mut self, d: Dim) {
        if let Some(slot) = self.text_field_mut(d) {
            *slot = None;
        } else if let Some(slot) = self.count_field_mut(d) {
            *slot = None;
        } else if let Some(slot) = self.real_field_mut(d) {
            *slot = None;
        }
    }

    /// Sets a dimension and records where the value came from.
    pub fn set_inferred(
        &mut self,
        key: &DimKey,
        value: DimValue,
        from: &str,
    ) -> Result<(), SetDimError> {
        self.set_dim(key, Some(value))?;
        self.inferred.insert(key.name(), from.to_string());
        Ok(())
    }

    /// Whether the named field's value was inferred rather than read.
    pub fn is_inferred(&self, name: &str) -> bool {
        self.inferred.contains_key(name)
    }

    /// Every dimension this record has a value for, well-known ones first in canonical order.
    pub fn dims(&self) -> impl Iterator<Item = (DimKey, DimValue)> + '_ {
        Dim::ALL
            .iter()
            .filter_map(|d| self.known(*d).map(|v| (DimKey::Known(*d), v)))
            .chain(
                self.tags
                    .iter()
                    .map(|(k, v)| (DimKey::Tag(k.clone()), DimValue::Text(v.clone()))),
            )
    }

    /// The value of a metric, if measured.
    pub fn metric(&self, key: &MetricKey) -> Option<f64> {
        self.metrics.get(key).copied()
    }

    /// Sets a metric.
    pub fn set_metric(&mut self, key: MetricKey, value: f64) {
        self.metrics.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_get_every_dimension() {
        let mut r = Record::default();
        for d in Dim::ALL {
            let value = match d.kind() {
                DimKind::Text => DimValue::from("x"),
                _ => DimValue::Num(4.0),
            };
            r.set_known(*d, Some(value.clone())).unwrap();
            assert_eq!(r.known(*d), Some(value), "{d}");
        }
        assert_eq!(r.dims().count(), Dim::ALL.len());
        for d in Dim::ALL {
            r.set_known(*d, None).unwrap();
        }
        assert_eq!(r, Record::default());
    }

    #[test]
    fn numeric_dimensions_parse_text_and_reject_nonsense() {
        let mut r = Record::default();
        r.set_known(Dim::BatchSize, Some("1,024".into())).unwrap();
        assert_eq!(r.batch_size, Some(1024));
        r.set_known(Dim::RequestRate, Some("inf".into())).unwrap();
        assert_eq!(r.request_rate, Some(f64::INFINITY));
        assert!(r.set_known(Dim::GpuCount, Some(1.5.into())).is_err());
        assert!(r.set_known(Dim::Tp, Some("eight".into())).is_err());
        assert_eq!(r.tp, None);
    }

    #[test]
    fn inferred_values_are_marked() {
        let mut r = Record::default();
        r.set_inferred(&DimKey::Known(Dim::Gpu), "H100".into(), "user")
            .unwrap();
        assert_eq!(r.gpu.as_deref(), Some("H100"));
        assert!(r.is_inferred("gpu"));
        assert!(!r.is_inferred("model"));
    }
}
