//! Economics: what a deployment costs per token and per joule, and what a frontier gives at a
//! target. Pure arithmetic on figures the records already hold, plus the assumptions a user
//! supplies (a price per GPU-hour, a power per GPU), each named with where it came from.
//!
//! - **GPUs a figure divides by** ([`gpus_of`]): the record's `gpu_count`, else
//!   `tp × pp × dp` (a parallelism that names every GPU it uses; dp from a [`DP_TAGS`] tag);
//!   never guessed as 1.
//! - **Interactivity**: tokens per second one user sees, `1000 / TPOT`. Because it falls as
//!   TPOT rises, TPOT's p90 is interactivity's p10: the slow user, whom 90 % of users beat
//!   ([`interactivity_percentile`]).
//! - **Cost** ([`usd_per_million_tokens`]): `$/GPU-hour × GPUs / 3600 / (tok/s) × 10^6`.
//! - **Energy** ([`joules_per_token`], [`tokens_per_s_per_mw`]): from kW per GPU, board power
//!   unless the user gives an all-in figure.
//! - **Reading a frontier** ([`read_at`], [`best_x_within`]): linear interpolation between the
//!   two frontier points around the target, which keeps the frontier's monotone order; never
//!   extrapolated. A target the frontier does more than asks for is read at its nearest end and
//!   marked [`Reading::clamped`]; a target it never reaches is [`Unreached`].

use std::fmt;

use crate::model::{DimValue, Record};

/// A GPU model's default price and power, with where each figure comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuDefaults {
    /// The family name GPU names are matched to ([`gpu_family`]).
    pub family: &'static str,
    /// On-demand rental, US dollars per GPU-hour, where a public source gives one.
    pub usd_per_hour: Option<f64>,
    /// Where the price comes from.
    pub price_source: &'static str,
    /// Board power (TDP), kW per GPU: excludes the host, network and cooling.
    pub kw: f64,
    /// Where the power comes from.
    pub power_source: &'static str,
}

const AIMULTIPLE: &str =
    "AIMultiple cloud GPU index, median on-demand, May 2026 (aimultiple.com/gpu-index)";
const MERCATUS: &str =
    "Mercatus cloud GPU pricing, specialty-cloud tier midpoint, May 2026 (mercatus-ai.com/blog/cloud-gpu-pricing)";
const LYCEUM: &str =
    "Lyceum B200 cloud pricing, specialized-cloud on-demand midpoint, March 2026 (lyceum.technology)";
const NVIDIA_TDP: &str = "NVIDIA datasheet TDP (SXM)";
const AMD_TDP: &str = "AMD datasheet TBP";

/// Defaults for common GPUs. Prices move monthly and differ 3× between providers: they are a
/// starting point to edit, and the page and exports always say which ones were used.
pub const GPU_DEFAULTS: &[GpuDefaults] = &[
    GpuDefaults {
        family: "GB200",
        usd_per_hour: None,
        price_source: "",
        kw: 1.2,
        power_source: NVIDIA_TDP,
    },
    GpuDefaults {
        family: "B200",
        usd_per_hour: Some(5.25),
        price_source: LYCEUM,
        kw: 1.0,
        power_source: NVIDIA_TDP,
    },
    GpuDefaults {
        family: "H200",
        usd_per_hour: Some(4.0),
        price_source: MERCATUS,
        kw: 0.7,
        power_source: NVIDIA_TDP,
    },
    GpuDefaults {
        family: "H100",
        usd_per_hour: Some(2.95),
        price_source: AIMULTIPLE,
        kw: 0.7,
        power_source: NVIDIA_TDP,
    },
    GpuDefaults {
        family: "A100",
        usd_per_hour: Some(1.3),
        price_source: MERCATUS,
        kw: 0.4,
        power_source: NVIDIA_TDP,
    },
    GpuDefaults {
        family: "L40S",
        usd_per_hour: None,
        price_source: "",
        kw: 0.35,
        power_source: "NVIDIA datasheet max power",
    },
    GpuDefaults {
        family: "MI355X",
        usd_per_hour: None,
        price_source: "",
        kw: 1.4,
        power_source: AMD_TDP,
    },
    GpuDefaults {
        family: "MI325X",
        usd_per_hour: None,
        price_source: "",
        kw: 1.0,
        power_source: AMD_TDP,
    },
    GpuDefaults {
        family: "MI300X",
        usd_per_hour: None,
        price_source: "",
        kw: 0.75,
        power_source: AMD_TDP,
    },
];

/// The family a GPU name belongs to (`NVIDIA H100 80GB HBM3` → `H100`, `h100-sxm` → `H100`,
/// `8xB200` → `B200`), when it is one of [`GPU_DEFAULTS`]: the first family whose name stands
/// in the text as a word of its own (so `GB200` is not read as `B200`).
pub fn gpu_family(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    GPU_DEFAULTS
        .iter()
        .map(|d| d.family)
        .find(|family| word_in(&upper, family))
}

/// Whether `word` occurs in `text` as a name of its own: before it nothing, a separator or
/// a count such as `8x`; after it anything but a digit (`H100-SXM`, `H100 80GB`, `H100NVL`
/// match `H100`; `GB200` does not match `B200`, nor `H1000` `H100`).
fn word_in(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(word).any(|(at, _)| {
        let after_ok = b.get(at + word.len()).is_none_or(|c| !c.is_ascii_digit());
        let before_ok = match at.checked_sub(1).map(|i| b[i]) {
            None => true,
            Some(c) if !c.is_ascii_alphanumeric() => true,
            // A count: digits, then `x`, right before the name, themselves after a separator.
            Some(b'X') => {
                let digits = b[..at - 1]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                digits > 0
                    && (at - 1 - digits)
                        .checked_sub(1)
                        .is_none_or(|i| !b[i].is_ascii_alphanumeric())
            }
            Some(_) => false,
        };
        before_ok && after_ok
    })
}

/// Where a GPU count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuCountFrom {
    /// The record's `gpu_count`.
    Column,
    /// `tp × pp × dp` (each defaulting to 1 when another is given).
    Parallelism,
}

/// The GPUs a record's figures divide by: `gpu_count` when given and above 0, else
/// `tp × pp × dp` when any of them is given (dp: replicas of the tp × pp group, the
/// data-parallel size); `None` when none says (never guessed as 1).
pub fn gpus_of(
    gpu_count: Option<u64>,
    tp: Option<u64>,
    pp: Option<u64>,
    dp: Option<u64>,
) -> Option<(u64, GpuCountFrom)> {
    if let Some(n) = gpu_count.filter(|&n| n > 0) {
        return Some((n, GpuCountFrom::Column));
    }
    if tp.is_none() && pp.is_none() && dp.is_none() {
        return None;
    }
    let n = tp
        .unwrap_or(1)
        .checked_mul(pp.unwrap_or(1))?
        .checked_mul(dp.unwrap_or(1))?;
    (n > 0).then_some((n, GpuCountFrom::Parallelism))
}

/// Tags that give the data-parallel size, in any case, with `-` or `_` (`dp`,
/// `data-parallel-size`). A flag such as InferenceX's `dp_attention` (data-parallel attention
/// inside the tp GPUs) is not a size and is not one of them.
pub const DP_TAGS: [&str; 4] = ["dp", "dp_size", "data_parallel_size", "data_parallel"];

/// Whether a tag's name is one of [`DP_TAGS`].
pub fn is_dp_tag(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    DP_TAGS.contains(&name.as_str())
}

/// A data-parallel size as a tag holds it: a whole number ≥ 1, as a number or as text.
pub fn dp_size(v: &DimValue) -> Option<u64> {
    match v {
        DimValue::Num(n) => whole_size(*n),
        DimValue::Text(t) => dp_size_text(t),
    }
}

/// [`dp_size`] of a tag's text.
fn dp_size_text(t: &str) -> Option<u64> {
    whole_size(t.trim().parse().ok()?)
}

fn whole_size(n: f64) -> Option<u64> {
    (n >= 1.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX)).then_some(n as u64)
}

/// The GPUs of a record ([`gpus_of`]), its dp from a [`DP_TAGS`] tag.
pub fn record_gpus(r: &Record) -> Option<(u64, GpuCountFrom)> {
    let dp = r
        .tags
        .iter()
        .find(|(k, _)| is_dp_tag(k))
        .and_then(|(_, v)| dp_size_text(v));
    gpus_of(r.gpu_count, r.tp, r.pp, dp)
}

/// Tokens per second one user sees: `1000 / TPOT (ms)`; `None` for a TPOT that is not a
/// positive finite number.
pub fn interactivity(tpot_ms: f64) -> Option<f64> {
    (tpot_ms.is_finite() && tpot_ms > 0.0).then(|| 1000.0 / tpot_ms)
}

/// The interactivity percentile a TPOT percentile describes: TPOT's `p` is interactivity's
/// `100 − p` (TPOT's p90 is the slow user's interactivity, p10).
pub fn interactivity_percentile(tpot_percentile: f64) -> f64 {
    // Rounded to the hundredth so 100 − 99.9 prints as 0.1, not 0.09999999999999432.
    ((100.0 - tpot_percentile) * 100.0).round() / 100.0
}

/// US dollars per million tokens at `tokens_per_s` from `gpus` GPUs at `usd_per_gpu_hour`
/// each; `None` unless every input is positive and finite.
pub fn usd_per_million_tokens(tokens_per_s: f64, gpus: u64, usd_per_gpu_hour: f64) -> Option<f64> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(tokens_per_s) && gpus > 0 && usd_per_gpu_hour.is_finite() && usd_per_gpu_hour >= 0.0) {
        return None;
    }
    Some(usd_per_gpu_hour * gpus as f64 / 3600.0 / tokens_per_s * 1e6)
}

/// Joules per token at `tokens_per_s` from `gpus` GPUs drawing `kw_per_gpu` each.
pub fn joules_per_token(tokens_per_s: f64, gpus: u64, kw_per_gpu: f64) -> Option<f64> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    (ok(tokens_per_s) && gpus > 0 && ok(kw_per_gpu))
        .then(|| kw_per_gpu * 1000.0 * gpus as f64 / tokens_per_s)
}

/// Tokens per second per megawatt of GPU power.
pub fn tokens_per_s_per_mw(tokens_per_s: f64, gpus: u64, kw_per_gpu: f64) -> Option<f64> {
    joules_per_token(tokens_per_s, gpus, kw_per_gpu).map(|j| 1e6 / j)
}

/// Where an assumed figure came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// Typed by the user (page, address or `--price`).
    User,
    /// [`GPU_DEFAULTS`], with its source.
    Default(&'static str),
}

/// One assumed figure for one GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Assumed {
    /// The GPU name or family it was given for.
    pub gpu: String,
    /// The figure.
    pub value: f64,
    /// Where it came from.
    pub source: Source,
}

/// A bad `GPU=value` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadAssumption(pub String);

impl fmt::Display for BadAssumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadAssumption {}

/// The user's figures per GPU: prices in US dollars per GPU-hour and powers in kW per GPU,
/// each keyed by a GPU name or family; defaults fill the rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assumptions {
    /// `(gpu, $/GPU-hour)`, in the order given.
    pub prices: Vec<(String, f64)>,
    /// `(gpu, kW per GPU)`, in the order given.
    pub kw: Vec<(String, f64)>,
}

impl Assumptions {
    /// Parses `H100=2.5, B200=5.1` (the format `--price` and the page's box share): every
    /// part `GPU=number`, the number finite and ≥ 0; an error names the first bad part.
    pub fn parse_list(text: &str) -> Result<Vec<(String, f64)>, BadAssumption> {
        text.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|part| {
                let (gpu, value) = part.split_once('=').ok_or_else(|| {
                    BadAssumption(format!("`{part}`: expected GPU=number, e.g. H100=2.95"))
                })?;
                let gpu = gpu.trim();
                if gpu.is_empty() {
                    return Err(BadAssumption(format!("`{part}`: no GPU name before `=`")));
                }
                let value = value
                    .trim()
                    .trim_start_matches('$')
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| {
                        BadAssumption(format!("`{part}`: `{}` is not a number ≥ 0", value.trim()))
                    })?;
                Ok((gpu.to_string(), value))
            })
            .collect()
    }

    /// The list as [`Assumptions::parse_list`] reads it back.
    pub fn list_text(list: &[(String, f64)]) -> String {
        list.iter()
            .map(|(g, v)| format!("{g}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The price of one GPU-hour of `gpu`: the user's figure for that exact name (any case),
    /// else for its family, else the family's default.
    pub fn price(&self, gpu: &str) -> Option<Assumed> {
        lookup(&self.prices, gpu).or_else(|| {
            let d = defaults_of(gpu)?;
            Some(Assumed {
                gpu: d.family.to_string(),
                value: d.usd_per_hour?,
                source: Source::Default(d.price_source),
            })
        })
    }

    /// The power of one `gpu`, kW, by the same rules as [`Assumptions::price`].
    pub fn power(&self, gpu: &str) -> Option<Assumed> {
        lookup(&self.kw, gpu).or_else(|| {
            let d = defaults_of(gpu)?;
            Some(Assumed {
                gpu: d.family.to_string(),
                value: d.kw,
                source: Source::Default(d.power_source),
            })
        })
    }
}

fn defaults_of(gpu: &str) -> Option<&'static GpuDefaults> {
    let family = gpu_family(gpu)?;
    GPU_DEFAULTS.iter().find(|d| d.family == family)
}

fn lookup(list: &[(String, f64)], gpu: &str) -> Option<Assumed> {
    let exact = list
        .iter()
        .find(|(g, _)| g.eq_ignore_ascii_case(gpu.trim()));
    let family = gpu_family(gpu);
    let by_family = || {
        list.iter()
            .find(|(g, _)| family.is_some() && gpu_family(g) == family)
    };
    exact.or_else(by_family).map(|(g, v)| Assumed {
        gpu: g.clone(),
        value: *v,
        source: Source::User,
    })
}

/// A figure read off a frontier at a target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// The value.
    pub value: f64,
    /// Set when the target lies beyond the frontier's better end of x: the frontier's nearest
    /// point (which does better than asked) is read, and this is its x.
    pub clamped: Option<f64>,
}

/// A target the frontier never reaches; `best` is the best x it does reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unreached {
    /// The best x measured.
    pub best: f64,
}

/// A frontier as `(x, y)` points, turned so both axes are "higher is better", sorted by x;
/// then y never rises as x does (a point with a better x and a better y would dominate).
fn up_frontier(frontier: &[(f64, f64)], x_hib: bool, y_hib: bool) -> Vec<(f64, f64)> {
    let up = |v: f64, hib: bool| if hib { v } else { -v };
    let mut pts: Vec<(f64, f64)> = frontier
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (up(x, x_hib), up(y, y_hib)))
        .collect();
    crate::model::order::sort_by(&mut pts, |a, b| {
        a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1))
    });
    // Of equal x keep the best y; then keep y non-increasing (drop anything a later point
    // beats, in case the caller passed points that are not all on the frontier).
    pts.dedup_by(|later, earlier| later.0 == earlier.0);
    let mut kept: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
    for p in pts.into_iter().rev() {
        if kept.last().is_none_or(|k| p.1 > k.1) {
            kept.push(p);
        }
    }
    kept.reverse();
    kept
}

/// The y a frontier gives at x = `target`: the best y any deployment on the frontier reaches
/// while meeting the target. Between two frontier points, linear interpolation; past the
/// frontier's better end of x (every point does better than asked) the nearest end's y,
/// marked clamped; past its worse end, [`Unreached`]. `Ok(None)` when the frontier has no
/// finite point.
pub fn read_at(
    frontier: &[(f64, f64)],
    x_higher_is_better: bool,
    y_higher_is_better: bool,
    target: f64,
) -> Result<Option<Reading>, Unreached> {
    let pts = up_frontier(frontier, x_higher_is_better, y_higher_is_better);
    let down = |v: f64, hib: bool| if hib { v } else { -v };
    let (Some(&first), Some(&last)) = (pts.first(), pts.last()) else {
        return Ok(None);
    };
    let t = down(target, x_higher_is_better);
    if !t.is_finite() {
        return Ok(None);
    }
    if t > last.0 {
        return Err(Unreached {
            best: down(last.0, x_higher_is_better),
        });
    }
    if t <= first.0 {
        return Ok(Some(Reading {
            value: down(first.1, y_higher_is_better),
            clamped: (t < first.0).then(|| down(first.0, x_higher_is_better)),
        }));
    }
    // The first point at or past t; its predecessor is before t.
    let k = pts.partition_point(|p| p.0 < t);
    let (a, b) = (pts[k - 1], pts[k]);
    let y = if b.0 == t {
        b.1
    } else {
        let f = (t - a.0) / (b.0 - a.0);
        (a.1 + f * (b.1 - a.1)).clamp(b.1, a.1)
    };
    Ok(Some(Reading {
        value: down(y, y_higher_is_better),
        clamped: None,
    }))
}

/// The inverse question: the best x the frontier reaches while y stays within `limit` (at
/// most `limit` when lower y is better, at least it when higher is): interpolated between
/// the two frontier points around the limit. `None` when no point is within the limit;
/// clamped (to the best x measured) when every point is.
pub fn best_x_within(
    frontier: &[(f64, f64)],
    x_higher_is_better: bool,
    y_higher_is_better: bool,
    limit: f64,
) -> Option<Reading> {
    let pts = up_frontier(frontier, x_higher_is_better, y_higher_is_better);
    let down = |v: f64, hib: bool| if hib { v } else { -v };
    let l = down(limit, y_higher_is_better);
    if !l.is_finite() {
        return None;
    }
    // y falls as x rises: the points within the limit are a prefix.
    let within = pts.partition_point(|p| p.1 >= l);
    if within == 0 {
        return None;
    }
    let a = pts[within - 1];
    let Some(&b) = pts.get(within) else {
        return Some(Reading {
            value: down(a.0, x_higher_is_better),
            clamped: Some(down(a.0, x_higher_is_better)),
        });
    };
    // a.1 >= l > b.1: interpolate x where y crosses the limit.
    let f = (a.1 - l) / (a.1 - b.1);
    let x = (a.0 + f * (b.0 - a.0)).clamp(a.0, b.0);
    Some(Reading {
        value: down(x, x_higher_is_better),
        clamped: None,
    })
}

#[cfg(test)]
mod tests;
