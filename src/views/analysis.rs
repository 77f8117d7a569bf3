//! The trade-off, SLO and regression views' rules, shared and pure so they are tested
//! natively: reading the typed SLO limits, the load an SLO is checked along, the frontier rows
//! under the trade-off chart, the numbers typed as its targets and which two files a
//! regression check compares.

use crate::analysis::slo::SloLimit;
use crate::analysis::tradeoff::TradeoffSeries;
use crate::model::{Dataset, Dim, DimKey};

/// The dimensions an SLO can be checked along, in menu order.
pub const SLO_LOADS: [Dim; 3] = [Dim::RequestRate, Dim::MaxConcurrency, Dim::BatchSize];

/// The limits typed as `p99_ttft_ms<=500, mean_tpot_ms<=50`: every comma-separated part
/// parsed, or the first part's error; at least one limit.
pub fn parse_slo_limits(text: &str) -> Result<Vec<SloLimit>, String> {
    let limits = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| SloLimit::parse(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if limits.is_empty() {
        return Err("give at least one limit, e.g. p99_ttft_ms<=500".to_string());
    }
    Ok(limits)
}

/// A number typed in a target box: `None` when empty, else a finite number or an error
/// naming the box (`what`) and the text.
pub fn parse_target(text: &str, what: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Some)
        .ok_or_else(|| format!("the {what} `{t}` is not a number"))
}

/// Numbers typed as a list (`20, 50, 100`): every part a finite number, or an error naming
/// the box (`what`) and the part; empty is an empty list.
pub fn parse_numbers(text: &str, what: &str) -> Result<Vec<f64>, String> {
    text.split([',', ' '])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("the {what} `{p}` is not a number"))
        })
        .collect()
}

/// The load an SLO is checked along when the user has not chosen: the first of [`SLO_LOADS`]
/// that varies in the data, else the request rate.
pub fn default_slo_load(ds: &Dataset) -> DimKey {
    SLO_LOADS
        .into_iter()
        .map(DimKey::Known)
        .find(|k| ds.distinct_len(k) > 1)
        .unwrap_or(DimKey::Known(Dim::RequestRate))
}

/// One row of the frontier table: the series name, latency, throughput and how many of the
/// series' records sit on that very point.
pub type FrontierRow = (String, f64, f64, usize);

/// The Pareto frontier points of every series, series by series in latency order: the first
/// `max` distinct points, and how many more distinct points there are (a million points on a
/// smooth trade-off can all be on the frontier, and a table of them all would freeze the page).
/// Records on the same point (a sweep run twice, say) make one row with their count: the
/// frontier keeps every one of them, but a table listing the same two numbers twice says
/// nothing more.
pub fn frontier_rows(series: &[TradeoffSeries], max: usize) -> (Vec<FrontierRow>, usize) {
    let mut rows: Vec<FrontierRow> = Vec::new();
    let mut more = 0;
    for s in series {
        let mut last: Option<(f64, f64)> = None;
        for point in s.frontier.iter().filter_map(|&p| s.points.get(p)) {
            let at = (point.latency, point.throughput);
            // Same bits, so a NaN coordinate matches only the same NaN.
            let same = last.is_some_and(|l| {
                l.0.to_bits() == at.0.to_bits() && l.1.to_bits() == at.1.to_bits()
            });
            last = Some(at);
            if same {
                if let Some(row) = rows.last_mut().filter(|_| more == 0) {
                    row.3 += 1;
                }
            } else if rows.len() < max {
                rows.push((s.name.clone(), at.0, at.1, 1));
            } else {
                more += 1;
            }
        }
    }
    (rows, more)
}

/// Which two of the loaded files (ids in load order) a regression check compares: the chosen
/// ones still loaded, else the first as old and the last as new.
pub fn regression_pair(
    loaded: &[u32],
    old: Option<u32>,
    new: Option<u32>,
) -> Result<(u32, u32), String> {
    let (Some(&first), Some(&last)) = (loaded.first(), loaded.last()) else {
        return Err(TWO_FILES.to_string());
    };
    if loaded.len() < 2 {
        return Err(TWO_FILES.to_string());
    }
    let pick = |chosen: Option<u32>, fallback: u32| {
        chosen.filter(|id| loaded.contains(id)).unwrap_or(fallback)
    };
    let (old, new) = (pick(old, first), pick(new, last));
    if old == new {
        return Err("choose two different files".to_string());
    }
    Ok((old, new))
}

/// What the regression view says with fewer than two files.
const TWO_FILES: &str =
    "load two result files of the same configurations (an old and a new run) to compare them";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::slo::limits_text;
    use crate::analysis::tradeoff::TradeoffPoint;
    use crate::model::Record;

    #[test]
    fn slo_limits_parse_all_or_name_the_bad_one() {
        let limits = parse_slo_limits(" p99_ttft_ms<=500, mean_tpot_ms<=50 ,").unwrap();
        assert_eq!(limits_text(&limits), "p99_ttft_ms<=500, mean_tpot_ms<=50");
        assert!(parse_slo_limits("p99_ttft_ms<=500, nonsense").is_err());
        assert_eq!(
            parse_slo_limits(" , ").unwrap_err(),
            "give at least one limit, e.g. p99_ttft_ms<=500"
        );
    }

    #[test]
    fn targets_are_empty_or_finite_numbers() {
        assert_eq!(parse_target("  ", "target"), Ok(None));
        assert_eq!(parse_target(" 50 ", "target"), Ok(Some(50.0)));
        assert_eq!(
            parse_target("fast", "target"),
            Err("the target `fast` is not a number".to_string())
        );
        assert!(parse_target("inf", "limit").is_err());
    }

    #[test]
    fn number_lists_parse_or_name_the_bad_part() {
        assert_eq!(
            parse_numbers(" 20, 50 100 ", "level"),
            Ok(vec![20.0, 50.0, 100.0])
        );
        assert_eq!(parse_numbers("", "level"), Ok(vec![]));
        assert_eq!(
            parse_numbers("20, fast", "level"),
            Err("the level `fast` is not a number".to_string())
        );
    }

    #[test]
    fn the_slo_load_is_the_first_that_varies() {
        let rec = |rate: f64, concurrency: u64| Record {
            request_rate: Some(rate),
            max_concurrency: Some(concurrency),
            ..Record::default()
        };
        let sweep = Dataset::new(vec![rec(1.0, 8), rec(1.0, 16)]);
        assert_eq!(default_slo_load(&sweep), DimKey::Known(Dim::MaxConcurrency));
        let one = Dataset::new(vec![rec(1.0, 8)]);
        assert_eq!(default_slo_load(&one), DimKey::Known(Dim::RequestRate));
    }

    #[test]
    fn frontier_rows_follow_each_series_frontier() {
        let point = |latency: f64, throughput: f64| TradeoffPoint {
            record: 0,
            latency,
            throughput,
            on_frontier: false,
            dominated_by: None,
            interval: None,
        };
        let series = [TradeoffSeries {
            name: "vllm".into(),
            points: vec![point(10.0, 100.0), point(20.0, 90.0), point(30.0, 300.0)],
            frontier: vec![0, 2],
        }];
        assert_eq!(
            frontier_rows(&series, 10),
            (
                vec![
                    ("vllm".to_string(), 10.0, 100.0, 1),
                    ("vllm".to_string(), 30.0, 300.0, 1)
                ],
                0
            )
        );
        assert_eq!(
            frontier_rows(&series, 1),
            (vec![("vllm".to_string(), 10.0, 100.0, 1)], 1)
        );
    }

    #[test]
    fn records_on_one_frontier_point_make_one_row() {
        let point = |latency: f64, throughput: f64| TradeoffPoint {
            record: 0,
            latency,
            throughput,
            on_frontier: true,
            dominated_by: None,
            interval: None,
        };
        let series = [
            TradeoffSeries {
                name: "vllm".into(),
                points: vec![
                    point(10.0, 100.0),
                    point(10.0, 100.0),
                    point(30.0, 300.0),
                    point(10.0, 100.0),
                    point(30.0, 300.0),
                ],
                // In latency order, as `tradeoff` gives them.
                frontier: vec![0, 1, 3, 2, 4],
            },
            TradeoffSeries {
                name: "sglang".into(),
                points: vec![
                    point(10.0, 100.0),
                    point(f64::NAN, 5.0),
                    point(f64::NAN, 5.0),
                ],
                frontier: vec![0, 1, 2],
            },
        ];
        assert_eq!(
            frontier_rows(&series, 3),
            (
                vec![
                    ("vllm".to_string(), 10.0, 100.0, 3),
                    ("vllm".to_string(), 30.0, 300.0, 2),
                    // Another series' equal point is its own row.
                    ("sglang".to_string(), 10.0, 100.0, 1),
                ],
                1
            )
        );
        // NaN rows are compared apart (NaN != NaN in a tuple): same bits make one row.
        let (rows, more) = frontier_rows(&series, 10);
        assert_eq!(rows.len(), 4);
        assert_eq!(more, 0);
        assert_eq!(rows[3].0, "sglang");
        assert!(rows[3].1.is_nan());
        assert_eq!((rows[3].2, rows[3].3), (5.0, 2));
        // Past `max`, distinct points are counted, not records.
        assert_eq!(frontier_rows(&series, 1).1, 3);
        assert_eq!(frontier_rows(&series, 2).1, 2);
    }

    #[test]
    fn regression_compares_first_and_last_unless_chosen() {
        assert_eq!(regression_pair(&[4, 7, 9], None, None), Ok((4, 9)));
        assert_eq!(regression_pair(&[4, 7, 9], Some(7), None), Ok((7, 9)));
        // A file removed since it was chosen falls back.
        assert_eq!(
            regression_pair(&[4, 9], Some(7), Some(4)),
            Err("choose two different files".to_string())
        );
        assert_eq!(
            regression_pair(&[4], None, None),
            Err(TWO_FILES.to_string())
        );
    }
}
