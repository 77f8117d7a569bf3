//! Server telemetry: the inference server's Prometheus `/metrics`, scraped on the run's clock
//! (`run --scrape-metrics`) and reduced to a few quantities every engine reports under its own
//! name. Only `# TYPE` lines and sample lines (`name{labels} value [timestamp]`) are read, by
//! hand: the `prometheus-parse` crate (0.2.5) matches metric names with `\w+`, so the colon in
//! vLLM's, SGLang's and llama.cpp's names (`vllm:num_requests_running`, valid Prometheus) does not
//! read there, and nothing else of the exposition format is needed here.
//!
//! A gauge is recorded as read. A counter (`# TYPE … counter`, or an untyped name ending in
//! `_total`) only grows since the server started, so it is recorded as its rate per second over
//! the interval between two scrapes (nothing at the first scrape, nor across a reset). Two
//! counters over each other are the ratio of their increases. llama.cpp's
//! `n_busy_slots_per_decode` is typed a gauge but is the mean over every decode since the server
//! started: with the `n_decode_total` counter it becomes the mean over the decodes of the interval.
//!
//! | common name | vLLM | SGLang | TGI | llama.cpp server |
//! |---|---|---|---|---|
//! | `running` | `vllm:num_requests_running` | `sglang:num_running_reqs` | `tgi_batch_current_size` | `llamacpp:requests_processing` |
//! | `waiting` | `vllm:num_requests_waiting` | `sglang:num_queue_reqs` | `tgi_queue_size` | `llamacpp:requests_deferred` |
//! | `kv_cache_usage` (0–1) | `vllm:kv_cache_usage_perc`, `vllm:gpu_cache_usage_perc` | `sglang:token_usage` | — | `llamacpp:kv_cache_usage_ratio` (older servers; not exported by llama.cpp's server since it moved to `tools/server/server-task.cpp`) |
//! | `prefix_cache_hit_rate` (0–1) | `vllm:gpu_prefix_cache_hit_rate`, `vllm:prefix_cache_hits` / `vllm:prefix_cache_queries` (counters) | `sglang:cache_hit_rate` | — | — |
//! | `batch_size` | `vllm:num_requests_running` | `sglang:num_running_reqs` | `tgi_batch_current_size` | `llamacpp:n_busy_slots_per_decode` over `llamacpp:n_decode_total` |
//! | `prompt_tokens_per_s` | `vllm:prompt_tokens` (counter) | `sglang:prompt_tokens` (counter) | — | `llamacpp:prompt_tokens` (counter) |
//! | `generation_tokens_per_s` | `vllm:generation_tokens` (counter) | `sglang:generation_tokens` (counter) | — | `llamacpp:tokens_predicted` (counter) |
//!
//! Values are summed over label sets (several models or engines behind one endpoint), ratio
//! gauges averaged. An engine is recognised by its names' prefix (`vllm:`, `sglang:`, `tgi_`,
//! `llamacpp:`); a quantity that engine has a name for but the server did not export is
//! [`missing`]. Names are those of the engines' documentation and source (vLLM's
//! `vllm/v1/metrics/loggers.py`, SGLang's `sglang/srt/metrics/collector.py`, TGI's
//! `router/src`, llama.cpp's `tools/server/server-task.cpp`).

use std::collections::{BTreeMap, BTreeSet};

/// How a quantity combines a gauge over label sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Combine {
    Sum,
    Mean,
}

/// Where a quantity comes from in one engine's metrics. Names are written without `_total`.
#[derive(Clone, Copy)]
enum Source {
    /// One metric: a gauge as read, a counter as its rate per second.
    Metric(&'static str),
    /// One metric over another: gauges divided, counters' increases divided.
    Ratio(&'static str, &'static str),
    /// A mean since the server started over a counter of what it averages: the mean over the
    /// interval is Δ(mean × count) / Δcount.
    MeanSince(&'static str, &'static str),
}

impl Source {
    fn names(self) -> Vec<&'static str> {
        match self {
            Source::Metric(a) => vec![a],
            Source::Ratio(a, b) | Source::MeanSince(a, b) => vec![a, b],
        }
    }
}

/// Engines, as named in messages, and the prefix of their metric names.
const ENGINES: &[(&str, &str)] = &[
    ("vLLM", "vllm:"),
    ("SGLang", "sglang:"),
    ("TGI", "tgi_"),
    ("llama.cpp", "llamacpp:"),
];

fn engine_of(name: &str) -> Option<&'static str> {
    ENGINES
        .iter()
        .find(|(_, prefix)| name.starts_with(prefix))
        .map(|(engine, _)| *engine)
}

/// Common name, how its gauges combine, and the engines' sources for it (first found wins).
const QUANTITIES: &[(&str, Combine, &[Source])] = &[
    (
        "running",
        Combine::Sum,
        &[
            Source::Metric("vllm:num_requests_running"),
            Source::Metric("sglang:num_running_reqs"),
            Source::Metric("tgi_batch_current_size"),
            Source::Metric("llamacpp:requests_processing"),
        ],
    ),
    (
        "waiting",
        Combine::Sum,
        &[
            Source::Metric("vllm:num_requests_waiting"),
            Source::Metric("sglang:num_queue_reqs"),
            Source::Metric("tgi_queue_size"),
            Source::Metric("llamacpp:requests_deferred"),
        ],
    ),
    (
        "kv_cache_usage",
        Combine::Mean,
        &[
            Source::Metric("vllm:kv_cache_usage_perc"),
            Source::Metric("vllm:gpu_cache_usage_perc"),
            Source::Metric("sglang:token_usage"),
            Source::Metric("llamacpp:kv_cache_usage_ratio"),
        ],
    ),
    (
        "prefix_cache_hit_rate",
        Combine::Mean,
        &[
            Source::Metric("vllm:gpu_prefix_cache_hit_rate"),
            Source::Ratio("vllm:prefix_cache_hits", "vllm:prefix_cache_queries"),
            Source::Metric("sglang:cache_hit_rate"),
        ],
    ),
    (
        "batch_size",
        Combine::Sum,
        &[
            Source::MeanSince("llamacpp:n_busy_slots_per_decode", "llamacpp:n_decode"),
            Source::Metric("tgi_batch_current_size"),
            Source::Metric("vllm:num_requests_running"),
            Source::Metric("sglang:num_running_reqs"),
        ],
    ),
    (
        "prompt_tokens_per_s",
        Combine::Sum,
        &[
            Source::Metric("vllm:prompt_tokens"),
            Source::Metric("sglang:prompt_tokens"),
            Source::Metric("llamacpp:prompt_tokens"),
        ],
    ),
    (
        "generation_tokens_per_s",
        Combine::Sum,
        &[
            Source::Metric("vllm:generation_tokens"),
            Source::Metric("sglang:generation_tokens"),
            Source::Metric("llamacpp:tokens_predicted"),
        ],
    ),
];

/// Whether `name` (without `_total`) is one the table reads.
fn mapped(name: &str) -> Option<&'static str> {
    QUANTITIES
        .iter()
        .flat_map(|(_, _, sources)| sources.iter().flat_map(|s| s.names()))
        .find(|n| *n == name)
}

/// One mapped metric in one scrape: its samples' sum and count over label sets, and whether it
/// is a counter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The values summed over label sets.
    pub sum: f64,
    /// How many label sets.
    pub n: usize,
    /// A counter (rated between scrapes), else a gauge.
    pub counter: bool,
}

/// One scrape: the mapped metrics it had (names without `_total`), and the engines whose
/// names it had at all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Mapped metric (without `_total`) → its samples.
    pub samples: BTreeMap<&'static str, Sample>,
    /// Engines whose names the scrape had, as messages name them (`llama.cpp`).
    pub engines: BTreeSet<&'static str>,
}

impl Reading {
    /// Whether the scrape had none of the names benchlens maps.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// One sample line's metric name and value; `None` for comments, blank lines and lines that
/// do not read. Label values are skipped over (quoted, so a `}` inside one is fine).
fn sample(line: &str) -> Option<(&str, f64)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let (name, mut rest) = line.split_at(name_end);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(labels) = rest.strip_prefix('{') {
        let mut in_quotes = false;
        let mut escaped = false;
        let close = labels.char_indices().find_map(|(i, c)| {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_quotes => escaped = true,
                '"' => in_quotes = !in_quotes,
                '}' if !in_quotes => return Some(i),
                _ => {}
            }
            None
        })?;
        rest = &labels[close + 1..];
    }
    let value = rest.split_whitespace().next()?;
    let v = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        _ => value.parse().ok()?,
    };
    Some((name, v))
}

/// A `# TYPE name kind` line's name and whether the kind is `counter` (`None` for `untyped`,
/// `unknown` and other lines).
fn type_line(line: &str) -> Option<(&str, bool)> {
    let mut words = line.trim().strip_prefix('#')?.split_whitespace();
    if words.next()? != "TYPE" {
        return None;
    }
    let name = words.next()?;
    match words.next()? {
        "counter" => Some((name, true)),
        "untyped" | "unknown" => None,
        _ => Some((name, false)),
    }
}

/// Reads a `/metrics` body. Lines that do not read are skipped; a body with none of the known
/// names gives an empty reading. A metric is a counter when its `# TYPE` says so, or, untyped,
/// when its name ends in `_total`.
pub fn read(text: &str) -> Reading {
    let strip = |name: &str| name.strip_suffix("_total").unwrap_or(name).to_string();
    let types: BTreeMap<String, bool> = text
        .lines()
        .filter_map(type_line)
        .map(|(name, counter)| (strip(name), counter))
        .collect();
    let mut r = Reading::default();
    for (name, v) in text.lines().filter_map(sample) {
        if let Some(engine) = engine_of(name) {
            r.engines.insert(engine);
        }
        let base = name.strip_suffix("_total").unwrap_or(name);
        let Some(key) = mapped(base) else { continue };
        if !v.is_finite() {
            continue;
        }
        let counter = types.get(base).copied().unwrap_or(name.ends_with("_total"));
        let s = r.samples.entry(key).or_insert(Sample {
            sum: 0.0,
            n: 0,
            counter,
        });
        s.sum += v;
        s.n += 1;
    }
    r
}

/// How much counter `name` grew from one reading to the next; `None` across a reset.
fn increase(prev: &Reading, cur: &Reading, name: &str) -> Option<f64> {
    let (a, b) = (prev.samples.get(name)?, cur.samples.get(name)?);
    (b.sum >= a.sum).then_some(b.sum - a.sum)
}

/// `source`'s value at `cur` (with the reading before it, `dt` seconds earlier, for counters).
fn value(
    source: Source,
    combine: Combine,
    prev: Option<(&Reading, f64)>,
    cur: &Reading,
) -> Option<f64> {
    let get = |name: &str| cur.samples.get(name).copied();
    match source {
        Source::Metric(m) => {
            let s = get(m)?;
            if !s.counter {
                return Some(match combine {
                    Combine::Sum => s.sum,
                    Combine::Mean => s.sum / s.n.max(1) as f64,
                });
            }
            let (p, dt) = prev?;
            (dt > 0.0).then_some(increase(p, cur, m)? / dt)
        }
        Source::Ratio(a, b) => {
            let (sa, sb) = (get(a)?, get(b)?);
            let (num, den) = match sa.counter || sb.counter {
                false => (sa.sum, sb.sum),
                true => {
                    let (p, _) = prev?;
                    (increase(p, cur, a)?, increase(p, cur, b)?)
                }
            };
            (den > 0.0).then_some(num / den)
        }
        Source::MeanSince(mean, count) => {
            let (m, c) = (get(mean)?, get(count)?);
            let (p, _) = prev?;
            let (m0, c0) = (p.samples.get(mean)?, p.samples.get(count)?);
            let dc = c.sum - c0.sum;
            (dc > 0.0).then(|| ((m.sum * c.sum - m0.sum * c0.sum) / dc).max(0.0))
        }
    }
}

/// Readings at seconds `t_s` from the stage start, as series columns `server.<name>` over the
/// seconds `0 … seconds − 1` (the last reading in a second wins; NaN where none). Of a
/// quantity's sources the first the reading has is used; counters are rated against the
/// reading before.
pub fn columns(readings: &[(f64, Reading)], seconds: usize) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    if seconds == 0 {
        return out;
    }
    for (k, (t, r)) in readings.iter().enumerate() {
        if t.is_nan() || *t < 0.0 {
            continue;
        }
        let prev = k
            .checked_sub(1)
            .and_then(|j| readings.get(j))
            .map(|(t0, p)| (p, t - t0));
        for (name, combine, sources) in QUANTITIES {
            let Some(source) = sources
                .iter()
                .find(|s| s.names().iter().all(|n| r.samples.contains_key(n)))
            else {
                continue;
            };
            let column = out
                .entry(format!("server.{name}"))
                .or_insert_with(|| vec![f64::NAN; seconds]);
            if let Some(v) = value(*source, *combine, prev, r) {
                column[(t.floor() as usize).min(seconds - 1)] = v;
            }
        }
    }
    out
}

/// The quantities an engine the server was recognised as has names for, none of which any
/// reading had: `common name (metric, …)`, once each.
pub fn missing(readings: &[(f64, Reading)]) -> Vec<String> {
    let engines: BTreeSet<&str> = readings
        .iter()
        .flat_map(|(_, r)| r.engines.iter().copied())
        .collect();
    let mut out = Vec::new();
    for (name, _, sources) in QUANTITIES {
        for engine in &engines {
            let theirs: Vec<Source> = sources
                .iter()
                .copied()
                .filter(|s| s.names().first().and_then(|n| engine_of(n)) == Some(*engine))
                .collect();
            let found = readings.iter().any(|(_, r)| {
                theirs
                    .iter()
                    .any(|s| s.names().iter().all(|n| r.samples.contains_key(n)))
            });
            if !theirs.is_empty() && !found {
                let names: Vec<&str> = theirs.iter().flat_map(|s| s.names()).collect();
                out.push(format!("{name} ({})", names.join(", ")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of vLLM's `/metrics` (names from its v1 loggers).
    const VLLM: &str = "\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 7.0
vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 5.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5
vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.25
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1000.0
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 400.0
";

    /// `/metrics` of llama.cpp's server as `tools/server/server-task.cpp` writes it (the
    /// vendored llama.cpp of llama-cpp-python 0.3.36): counters typed, the batch a mean since
    /// the server started, no KV-cache metric.
    fn llama(decodes: f64, per_decode: f64, predicted: f64, processing: f64) -> String {
        format!(
            "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed\n\
             # TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 640\n\
             # TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total {predicted}\n\
             # TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total {decodes}\n\
             # TYPE llamacpp:n_tokens_max counter\nllamacpp:n_tokens_max 96\n\
             # TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing {processing}\n\
             # TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n\
             # TYPE llamacpp:n_busy_slots_per_decode gauge\nllamacpp:n_busy_slots_per_decode {per_decode}\n"
        )
    }

    #[test]
    fn vllm_names_map_to_common_ones() {
        let r = read(VLLM);
        let cols = columns(&[(0.5, r.clone())], 1);
        let at = |k: &str| cols[&format!("server.{k}")][0];
        assert_eq!(at("running"), 12.0);
        assert_eq!(at("waiting"), 3.0);
        assert_eq!(at("kv_cache_usage"), 0.375);
        assert_eq!(at("batch_size"), 12.0);
        // Counters (typed without `_total`, sampled with it): nothing from one scrape.
        assert!(at("prefix_cache_hit_rate").is_nan());
        assert_eq!(
            r.samples["vllm:prefix_cache_hits"],
            Sample {
                sum: 400.0,
                n: 1,
                counter: true
            }
        );
        assert!(!r.samples["vllm:kv_cache_usage_perc"].counter);
        assert_eq!(r.engines, BTreeSet::from(["vLLM"]));
    }

    #[test]
    fn other_engines_and_garbage() {
        let sglang = "sglang:num_running_reqs{model_name=\"m\"} 4\nsglang:num_queue_reqs{model_name=\"m\"} 1\nsglang:token_usage{model_name=\"m\"} 0.2\nsglang:cache_hit_rate{model_name=\"m\"} 0.9\n";
        let values = |text: &str, keys: [&str; 3]| {
            let cols = columns(&[(0.0, read(text))], 1);
            keys.map(|k| cols.get(&format!("server.{k}")).map(|c| c[0]))
        };
        assert_eq!(
            values(sglang, ["running", "waiting", "kv_cache_usage"]),
            [Some(4.0), Some(1.0), Some(0.2)]
        );
        assert_eq!(
            values(sglang, ["prefix_cache_hit_rate", "batch_size", "nothing"]),
            [Some(0.9), Some(4.0), None]
        );
        let tgi = "# TYPE tgi_queue_size gauge\ntgi_queue_size 2\n# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 6\n";
        assert_eq!(
            values(tgi, ["running", "waiting", "batch_size"]),
            [Some(6.0), Some(2.0), Some(6.0)]
        );
        assert!(read("<html>not metrics</html>").is_empty());
        assert_eq!(
            sample("x{a=\"}\\\" {\",b=\"2\"} 1.5 1700000000000"),
            Some(("x", 1.5))
        );
        assert_eq!(sample("x +Inf"), Some(("x", f64::INFINITY)));
        assert_eq!(sample("9x 1"), None);
        assert_eq!(sample("x{a=\"1\" 2"), None);
        assert_eq!(read(""), Reading::default());
        assert_eq!(
            type_line("# TYPE a:b_total counter"),
            Some(("a:b_total", true))
        );
        assert_eq!(type_line("# TYPE a gauge"), Some(("a", false)));
        assert_eq!(type_line("# TYPE a untyped"), None);
        assert_eq!(type_line("# HELP a counter"), None);
    }

    #[test]
    fn counters_become_rates_over_the_interval_gauges_stay() {
        // Untyped: `_total` makes a counter, anything else a gauge.
        let untyped = |tokens: f64, running: f64| {
            read(&format!(
                "vllm:generation_tokens_total{{m=\"a\"}} {tokens}\nvllm:num_requests_running {running}\n"
            ))
        };
        let cols = columns(
            &[
                (0.25, untyped(1000.0, 3.0)),
                (1.25, untyped(1400.0, 4.0)),
                (2.75, untyped(2000.0, 4.0)),
                // A restarted server: its counter starts again, no rate across the reset.
                (3.25, untyped(10.0, 1.0)),
                (4.25, untyped(60.0, 1.0)),
            ],
            5,
        );
        let rate = &cols["server.generation_tokens_per_s"];
        assert!(rate[0].is_nan() && rate[3].is_nan(), "{rate:?}");
        assert_eq!([rate[1], rate[2], rate[4]], [400.0, 400.0, 50.0]);
        assert_eq!(cols["server.running"], vec![3.0, 4.0, 4.0, 1.0, 1.0]);

        // A `# TYPE … gauge` keeps even a `_total` name a gauge.
        let typed =
            read("# TYPE vllm:generation_tokens_total gauge\nvllm:generation_tokens_total 7\n");
        assert!(!typed.samples["vllm:generation_tokens"].counter);
        assert_eq!(
            columns(&[(0.0, typed)], 1)["server.generation_tokens_per_s"],
            vec![7.0]
        );
    }

    #[test]
    fn llama_cpp_batch_is_the_mean_over_the_interval_not_since_start() {
        // The server ran 1000 decodes at 1 busy slot before the run; then 4 slots are busy on
        // each of 300 decodes: the since-start mean creeps from 1.0 to 1.69 (what benchlens used
        // to record), the interval's mean is 4.
        let since = |d: f64| (1000.0 + 4.0 * (d - 1000.0)) / d;
        let readings: Vec<(f64, Reading)> = [
            (0.1, 1000.0, 0.0),
            (1.1, 1150.0, 600.0),
            (2.1, 1300.0, 1200.0),
        ]
        .iter()
        .map(|&(t, d, p)| (t, read(&llama(d, (since(d) * 1e5).round() / 1e5, p, 4.0))))
        .collect();
        let r = &readings[1].1;
        assert!(r.samples["llamacpp:n_decode"].counter);
        assert!(!r.samples["llamacpp:n_busy_slots_per_decode"].counter);
        let cols = columns(&readings, 3);
        let batch = &cols["server.batch_size"];
        assert!(batch[0].is_nan());
        for b in &batch[1..] {
            assert!((b - 4.0).abs() < 0.01, "{batch:?}");
        }
        assert!(since(1300.0) < 1.7);
        assert_eq!(cols["server.running"], vec![4.0; 3]);
        let gen = &cols["server.generation_tokens_per_s"];
        assert_eq!(&gen[1..], &[600.0, 600.0]);
        assert_eq!(cols["server.prompt_tokens_per_s"][1..], [0.0, 0.0]);
        // Today's server has no KV-cache metric: named, once.
        assert_eq!(
            missing(&readings),
            vec!["kv_cache_usage (llamacpp:kv_cache_usage_ratio)".to_string()]
        );
        assert!(!cols.contains_key("server.kv_cache_usage"));
    }

    #[test]
    fn missing_names_only_what_a_recognised_engine_lacks() {
        let vllm = [(0.0, read(VLLM))];
        assert_eq!(
            missing(&vllm),
            vec![
                "prompt_tokens_per_s (vllm:prompt_tokens)".to_string(),
                "generation_tokens_per_s (vllm:generation_tokens)".to_string()
            ]
        );
        // No engine recognised: nothing to say beyond "none of the names".
        assert!(missing(&[(0.0, read("x 1\n"))]).is_empty());
        // A name found in any reading counts.
        let later = read("vllm:prompt_tokens_total 1\nvllm:generation_tokens_total 1\n");
        assert!(missing(&[vllm[0].clone(), (1.0, later)]).is_empty());
    }

    #[test]
    fn columns_bin_by_second_and_rate_the_counters() {
        let at = |t: f64, q: f64, h: f64, running: f64| {
            (
                t,
                read(&format!(
                    "# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total {q}\n\
                     # TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total {h}\n\
                     vllm:num_requests_running {running}\n"
                )),
            )
        };
        let cols = columns(
            &[
                at(0.2, 100.0, 10.0, 1.0),
                at(1.1, 200.0, 60.0, 3.0),
                at(9.0, 300.0, 60.0, 2.0),
            ],
            3,
        );
        assert_eq!(cols["server.running"], vec![1.0, 3.0, 2.0]);
        let hit = &cols["server.prefix_cache_hit_rate"];
        assert!(hit[0].is_nan());
        assert_eq!(hit[1], 0.5);
        assert_eq!(hit[2], 0.0);
        assert!(columns(&[at(0.0, 1.0, 1.0, 1.0)], 0).is_empty());
    }
}
