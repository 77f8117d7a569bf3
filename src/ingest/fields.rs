//! Record-building helpers shared by the readers: setting dimensions with a warning instead of
//! an error, numbers from JSON values, and latency names in the spellings tools use.

use serde_json::Value;

use super::{Ingested, Warning};
use crate::model::canonical::number_from_json;
use crate::model::{
    Dim, DimKey, DimKind, DimValue, LatencyMetric, MetricKey, Percentile, Record, Stat,
};

/// `at.field` (`line 3: field` after a line), or `field` when `at` is empty.
pub(crate) fn place(at: &str, field: &str) -> String {
    let mut s = String::new();
    place_into(&mut s, at, field);
    s
}

/// [`place`] appended to `s`: a reader that places every field of every document (a warning
/// may need it) reuses one buffer. Without the formatting machinery: through `format!` it
/// was a fifth of reading a million JSON lines.
pub(crate) fn place_into(s: &mut String, at: &str, field: &str) {
    let sep = if at.is_empty() {
        ""
    } else if at.starts_with("line ") {
        ": "
    } else {
        "."
    };
    s.reserve(at.len() + sep.len() + field.len());
    s.push_str(at);
    s.push_str(sep);
    s.push_str(field);
}

/// A file-level warning (unit conversions, reinterpretations), added once per file.
pub(crate) fn note(out: &mut Ingested, message: impl Into<String>) {
    note_in(&mut out.warnings, message);
}

/// [`note`] into a list of warnings.
pub(crate) fn note_in(warnings: &mut Vec<Warning>, message: impl Into<String>) {
    let message = message.into();
    if !warnings
        .iter()
        .any(|w| w.at.is_none() && w.message == message)
    {
        warnings.push(Warning::file(message));
    }
}

/// Sets a dimension; a value the dimension cannot hold becomes a warning at `at`.
pub(crate) fn set_dim(r: &mut Record, d: Dim, value: DimValue, at: &str, out: &mut Ingested) {
    if let Err(e) = r.set_known(d, Some(value)) {
        out.warnings.push(Warning::at(at, format!("{e}, ignored")));
    }
}

/// Sets a dimension unless already set, marking it inferred from `from`.
pub(crate) fn infer_dim(r: &mut Record, d: Dim, value: DimValue, from: &str) {
    if !r.has_known(d) && r.set_known(d, Some(value)).is_ok() {
        r.inferred.insert(d.name().to_string(), from.to_string());
    }
}

/// The mean input and output lengths of a run, inferred from its token totals (the
/// `extra.total_input_tokens` and `extra.total_output_tokens` metrics) over its completed
/// requests, unless the record has them already. `from` names the three figures as the file
/// calls them (`["total_input_tokens", "total_output_tokens", "completed"]`).
pub(crate) fn lengths_from_totals(r: &mut Record, [input, output, completed]: [&str; 3]) {
    let Some(c) = r.metric(&MetricKey::Completed).filter(|c| *c > 0.0) else {
        return;
    };
    for (dim, total_key, total_name) in [
        (Dim::InputLen, "total_input_tokens", input),
        (Dim::OutputLen, "total_output_tokens", output),
    ] {
        if let Some(t) = r.metric(&MetricKey::Extra(total_key.into())) {
            infer_dim(
                r,
                dim,
                DimValue::Num(t / c),
                &format!("{total_name} / {completed}"),
            );
        }
    }
}

/// Whether an inferred field's origin is [`lengths_from_totals`]' (`total_input_tokens /
/// completed`): a mean of what the run produced, not a length anyone asked for.
fn from_totals(from: &str) -> bool {
    from.contains(" / ")
}

/// Configured and measured lengths decided per column of a file: when some of `records`
/// carry an input (or output) length they were configured with, a mean another record got
/// from its token totals ([`lengths_from_totals`]; a ShareGPT run beside random-length runs)
/// is a measurement, never a value of that dimension: it moves to
/// `extra.mean_input_tokens` (`extra.mean_output_tokens`), when it has a fraction (a whole
/// mean, such as one request's 128,000 tokens, may be the length every request was given).
/// Where no record has a configured length the means stay, as the only lengths the file
/// tells.
pub(crate) fn measured_lengths(records: &mut [Record]) {
    for (d, metric) in [
        (Dim::InputLen, "mean_input_tokens"),
        (Dim::OutputLen, "mean_output_tokens"),
    ] {
        let from_totals = |r: &Record| r.inferred.get(d.name()).is_some_and(|f| from_totals(f));
        let configured = records.iter().any(|r| r.has_known(d) && !from_totals(r));
        if !configured {
            continue;
        }
        for r in records.iter_mut().filter(|r| from_totals(r)) {
            let Some(v) = r.dim(&DimKey::Known(d)).and_then(|v| v.as_f64()) else {
                continue;
            };
            if v.fract() != 0.0 {
                r.set_metric(MetricKey::Extra(metric.into()), v);
                let _ = r.set_known(d, None);
                r.inferred.remove(d.name());
            }
        }
    }
}

/// Makes room for a length someone configured (a file name's `in2048`): a mean length `r`
/// got from its token totals ([`lengths_from_totals`]) is a measurement, kept as
/// `extra.mean_input_tokens` (`extra.mean_output_tokens`), and the dimension is left empty.
pub(crate) fn measured_mean_aside(r: &mut Record, d: Dim) {
    let metric = match d {
        Dim::InputLen => "mean_input_tokens",
        Dim::OutputLen => "mean_output_tokens",
        _ => return,
    };
    if !r.inferred.get(d.name()).is_some_and(|f| from_totals(f)) {
        return;
    }
    if let Some(v) = r.dim(&DimKey::Known(d)).and_then(|v| v.as_f64()) {
        r.set_metric(MetricKey::Extra(metric.into()), v);
    }
    let _ = r.set_known(d, None);
    r.inferred.remove(d.name());
}

/// Sets a dimension from a JSON value (number, or text holding one for numeric dimensions).
pub(crate) fn set_dim_json(r: &mut Record, d: Dim, v: &Value, at: &str, out: &mut Ingested) {
    let value = match v {
        Value::Null => return,
        Value::String(s) => {
            if s.trim().is_empty() {
                return;
            }
            // Numeric dimensions accept "1,024", "inf" and "512 tokens".
            match super::text::parse_quantity(s) {
                Some((n, _)) if d.kind() != DimKind::Text => DimValue::Num(n),
                _ => DimValue::Text(s.trim().to_string()),
            }
        }
        Value::Number(_) => match number_from_json(v) {
            Some(n) => DimValue::Num(n),
            None => return,
        },
        Value::Bool(b) => DimValue::Text(b.to_string()),
        _ => {
            out.warnings
                .push(Warning::at(at, "not a single value, ignored"));
            return;
        }
    };
    set_dim(r, d, value, at, out);
}

/// Sets a metric from a JSON value; a value that is not a number becomes a warning.
pub(crate) fn set_metric_json(
    r: &mut Record,
    key: MetricKey,
    v: &Value,
    scale: f64,
    at: &str,
    out: &mut Ingested,
) {
    if v.is_null() {
        return;
    }
    if let Some(n) = number_from_json(v) {
        r.set_metric(key, n * scale);
        return;
    }
    // Text with a unit: "12.34 ms", "1.2 s".
    let quantity = v.as_str().and_then(super::text::parse_quantity);
    match quantity {
        Some((n, unit)) => {
            let factor = match (&key, super::text::to_ms_factor(unit)) {
                (MetricKey::Latency(..), Some(f)) => f,
                _ => scale,
            };
            r.set_metric(key, n * factor);
        }
        None => out
            .warnings
            .push(Warning::at(at, format!("{v} is not a number, ignored"))),
    }
}

/// A scalar JSON value as tag text (`None` for null, arrays, objects).
pub(crate) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A latency family from the names tools use (`ttft`, `time_to_first_token`, `e2e_latency`).
pub(crate) fn latency_family(name: &str) -> Option<LatencyMetric> {
    let n = name.to_ascii_lowercase();
    let n = n.trim_end_matches("_ms").trim_end_matches("_s");
    match n {
        "ttft" | "time_to_first_token" => Some(LatencyMetric::Ttft),
        "tpot" | "time_per_output_token" => Some(LatencyMetric::Tpot),
        "itl" | "inter_token_latency" => Some(LatencyMetric::Itl),
        "e2el" | "e2e_latency" | "e2e" | "end_to_end_latency" | "request_latency" | "latency" => {
            Some(LatencyMetric::E2el)
        }
        _ => None,
    }
}

/// A statistic from the names tools use (`avg`, `mean`, `p50`, `quantiles_p99`, `stddev`).
/// `min` and `max` have no canonical statistic and give `None`.
pub(crate) fn stat_name(name: &str) -> Option<Stat> {
    let n = name.to_ascii_lowercase();
    let n = n.strip_prefix("quantiles_").unwrap_or(&n);
    match n {
        "mean" | "avg" | "average" => Some(Stat::Mean),
        "median" => Some(Stat::Median),
        "std" | "stddev" | "std_dev" | "stdev" => Some(Stat::Std),
        _ => {
            let p = n.strip_prefix('p').unwrap_or(n);
            let p = p.replace('_', ".");
            Percentile::parse(&p).map(Stat::P)
        }
    }
}

/// Parses a latency metric name as vLLM or SGLang write it: `mean_ttft_ms`, `p99.9_itl_ms`,
/// `median_e2e_latency_ms`.
pub(crate) fn serving_metric_name(key: &str) -> Option<MetricKey> {
    if let Some(k) = MetricKey::from_name(key) {
        if !matches!(k, MetricKey::Extra(_)) {
            return Some(k);
        }
        return None;
    }
    let body = key.strip_suffix("_ms")?;
    let (stat, family) = body.split_once('_')?;
    Some(MetricKey::Latency(
        latency_family(family)?,
        stat_name(stat)?,
    ))
}

/// Sets a tag from a key and a scalar JSON value.
pub(crate) fn set_tag(r: &mut Record, key: &str, v: &Value) {
    if let Some(t) = scalar_text(v) {
        r.tags.insert(super::text::snake(key), t);
    }
}

/// Sets dimension `name` (canonical) if it is one, else a tag. A run's index among repeats of
/// one configuration (`run_number`, as `vllm bench sweep` writes it) is neither: as a tag it
/// would make each repeat a configuration of its own, drawn as competing series, so it is left
/// out with a warning.
pub(crate) fn set_named(r: &mut Record, name: &str, v: &Value, at: &str, out: &mut Ingested) {
    match DimKey::from_name(name) {
        Some(DimKey::Known(d)) => set_dim_json(r, d, v, at, out),
        _ if repeat_index(name, v) => out.warnings.push(Warning::at(
            at,
            "the run's index among repeats of one configuration, not a setting: ignored",
        )),
        _ => set_tag(r, name, v),
    }
}

/// Whether a field is a run's index among repeats: a whole number named so.
fn repeat_index(name: &str, v: &Value) -> bool {
    matches!(
        super::text::snake(name).as_str(),
        "run_number" | "run_index" | "repeat" | "repeat_index" | "repetition" | "trial"
    ) && v.as_u64().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serving_names_in_every_spelling() {
        for (name, want) in [
            ("mean_ttft_ms", "mean_ttft_ms"),
            ("p99.9_itl_ms", "p99.9_itl_ms"),
            ("median_e2e_latency_ms", "median_e2el_ms"),
            ("p90_tpot_ms", "p90_tpot_ms"),
        ] {
            assert_eq!(serving_metric_name(name).unwrap().name(), want);
        }
        assert_eq!(serving_metric_name("max_foo_ms"), None);
        assert_eq!(
            stat_name("quantiles_p99"),
            Some(Stat::P(Percentile::new(99.0).unwrap()))
        );
        assert_eq!(stat_name("min"), None);
    }
}
