use proptest::prelude::*;

use super::*;

#[test]
fn gpu_names_find_their_family() {
    for (name, family) in [
        ("NVIDIA H100 80GB HBM3", Some("H100")),
        ("h100-sxm", Some("H100")),
        ("H100NVL", Some("H100")),
        ("8xH100", Some("H100")),
        ("8x B200", Some("B200")),
        ("NVIDIA GB200", Some("GB200")),
        ("gb200-nvl72", Some("GB200")),
        ("B200", Some("B200")),
        ("AMD Instinct MI300X", Some("MI300X")),
        ("mi355x", Some("MI355X")),
        ("NVIDIA A100-SXM4-80GB", Some("A100")),
        ("L40S", Some("L40S")),
        ("H20", None),
        ("A10", None),
        ("H1000", None),
        ("DGXH100", None),
        ("", None),
    ] {
        assert_eq!(gpu_family(name), family, "{name}");
    }
}

#[test]
fn gpu_counts_come_from_the_column_else_the_parallelism() {
    assert_eq!(
        gpus_of(Some(8), Some(4), Some(1), None),
        Some((8, GpuCountFrom::Column))
    );
    assert_eq!(
        gpus_of(None, Some(4), Some(2), None),
        Some((8, GpuCountFrom::Parallelism))
    );
    assert_eq!(
        gpus_of(Some(0), Some(4), None, None),
        Some((4, GpuCountFrom::Parallelism))
    );
    assert_eq!(
        gpus_of(None, None, Some(2), None),
        Some((2, GpuCountFrom::Parallelism))
    );
    // Nothing said: no count, not 1.
    assert_eq!(gpus_of(None, None, None, None), None);
    assert_eq!(gpus_of(None, Some(0), Some(2), None), None);
    assert_eq!(gpus_of(None, Some(u64::MAX), Some(2), None), None);
    // dp replicas of the tp × pp group multiply; dp alone counts.
    assert_eq!(
        gpus_of(None, Some(4), Some(2), Some(2)),
        Some((16, GpuCountFrom::Parallelism))
    );
    assert_eq!(
        gpus_of(None, None, None, Some(4)),
        Some((4, GpuCountFrom::Parallelism))
    );
    assert_eq!(
        gpus_of(Some(8), Some(4), None, Some(4)),
        Some((8, GpuCountFrom::Column))
    );
}

#[test]
fn dp_comes_from_its_tag_and_a_flag_is_not_a_size() {
    let rec = |tags: &[(&str, &str)]| {
        let mut r = Record {
            tp: Some(4),
            ..Record::default()
        };
        for (k, v) in tags {
            r.tags.insert((*k).into(), (*v).into());
        }
        r
    };
    assert_eq!(
        record_gpus(&rec(&[("dp", "2")])),
        Some((8, GpuCountFrom::Parallelism))
    );
    assert_eq!(
        record_gpus(&rec(&[("Data-Parallel-Size", "3")])).map(|g| g.0),
        Some(12)
    );
    // InferenceX's dp_attention is data-parallel attention inside the tp GPUs: no size.
    assert_eq!(
        record_gpus(&rec(&[("dp_attention", "true")])).map(|g| g.0),
        Some(4)
    );
    assert_eq!(record_gpus(&rec(&[("dp", "two")])).map(|g| g.0), Some(4));
    assert_eq!(record_gpus(&rec(&[("dp", "0")])).map(|g| g.0), Some(4));
    assert_eq!(dp_size(&DimValue::Num(2.5)), None);
    assert_eq!(dp_size(&DimValue::Text(" 8 ".into())), Some(8));
}

#[test]
fn interactivity_is_a_thousand_over_tpot_and_its_percentile_turns() {
    assert_eq!(interactivity(20.0), Some(50.0));
    assert_eq!(interactivity(0.0), None);
    assert_eq!(interactivity(-1.0), None);
    assert_eq!(interactivity(f64::NAN), None);
    assert_eq!(interactivity_percentile(90.0), 10.0);
    assert_eq!(interactivity_percentile(99.9), 0.1);
    assert_eq!(interactivity_percentile(50.0), 50.0);
}

#[test]
fn cost_and_energy_per_token() {
    // 8 GPUs at $2.95/h make 10,000 tok/s: $23.60/h for 36 M tokens.
    let usd = usd_per_million_tokens(10_000.0, 8, 2.95).unwrap();
    assert!((usd - 23.6 / 36.0).abs() < 1e-12, "{usd}");
    assert_eq!(usd_per_million_tokens(0.0, 8, 2.95), None);
    assert_eq!(usd_per_million_tokens(10.0, 0, 2.95), None);
    assert_eq!(usd_per_million_tokens(10.0, 1, f64::NAN), None);
    assert_eq!(usd_per_million_tokens(10.0, 1, 0.0), Some(0.0));
    // 8 × 0.7 kW = 5.6 kW at 10,000 tok/s: 0.56 J per token, 1.79 M tok/s per MW.
    let j = joules_per_token(10_000.0, 8, 0.7).unwrap();
    assert!((j - 0.56).abs() < 1e-12, "{j}");
    let per_mw = tokens_per_s_per_mw(10_000.0, 8, 0.7).unwrap();
    assert!((per_mw - 1e6 / 0.56).abs() < 1e-6, "{per_mw}");
    assert_eq!(joules_per_token(10.0, 1, 0.0), None);
}

#[test]
fn assumption_lists_parse_or_name_the_bad_part() {
    assert_eq!(
        Assumptions::parse_list(" H100=2.5, B200 = $5.1 ,").unwrap(),
        vec![("H100".to_string(), 2.5), ("B200".to_string(), 5.1)]
    );
    assert_eq!(
        Assumptions::parse_list("H100=2.5, B200").unwrap_err().0,
        "`B200`: expected GPU=number, e.g. H100=2.95"
    );
    assert_eq!(
        Assumptions::parse_list("H100=-1").unwrap_err().0,
        "`H100=-1`: `-1` is not a number ≥ 0"
    );
    assert_eq!(
        Assumptions::parse_list("H100=NaN").unwrap_err().0,
        "`H100=NaN`: `NaN` is not a number ≥ 0"
    );
    assert_eq!(
        Assumptions::parse_list("=3").unwrap_err().0,
        "`=3`: no GPU name before `=`"
    );
    assert_eq!(Assumptions::parse_list(" , ").unwrap(), vec![]);
    let list = vec![("H100".to_string(), 2.5), ("my card".to_string(), 0.25)];
    assert_eq!(
        Assumptions::parse_list(&Assumptions::list_text(&list)).unwrap(),
        list
    );
}

#[test]
fn prices_come_from_the_user_then_the_family_then_the_defaults() {
    let a = Assumptions {
        prices: vec![("h100".into(), 2.0), ("RTX 4090".into(), 0.4)],
        kw: vec![("B200".into(), 1.6)],
    };
    let p = a.price("NVIDIA H100 80GB HBM3").unwrap();
    assert_eq!((p.value, &p.source), (2.0, &Source::User));
    assert_eq!(a.price("rtx 4090").unwrap().value, 0.4);
    let d = a.price("B200").unwrap();
    assert_eq!(d.value, 5.25);
    assert!(matches!(d.source, Source::Default(s) if s.contains("Lyceum")));
    // A family with no public price has none, never a made-up one.
    assert_eq!(a.price("GB200"), None);
    assert_eq!(a.price("some card"), None);
    assert_eq!(a.power("8xB200").unwrap().value, 1.6);
    assert_eq!(a.power("H100").unwrap().value, 0.7);
    assert_eq!(a.power("GB200").unwrap().value, 1.2);
}

/// Interactivity (higher better) against throughput per GPU (higher better).
const FRONT: [(f64, f64); 3] = [(10.0, 3000.0), (30.0, 1800.0), (60.0, 600.0)];

#[test]
fn a_target_between_points_is_interpolated() {
    let r = read_at(&FRONT, true, true, 20.0).unwrap().unwrap();
    assert_eq!(
        r,
        Reading {
            value: 2400.0,
            clamped: None
        }
    );
    let r = read_at(&FRONT, true, true, 30.0).unwrap().unwrap();
    assert_eq!(r.value, 1800.0);
    // Order of the input does not matter.
    let mut shuffled = FRONT;
    shuffled.reverse();
    assert_eq!(
        read_at(&shuffled, true, true, 45.0).unwrap().unwrap().value,
        1200.0
    );
}

#[test]
fn a_target_past_the_ends_is_clamped_or_unreached_never_extrapolated() {
    // Every point gives more than 5 tok/s per user: the best of them, marked.
    let r = read_at(&FRONT, true, true, 5.0).unwrap().unwrap();
    assert_eq!(
        r,
        Reading {
            value: 3000.0,
            clamped: Some(10.0)
        }
    );
    // Nothing measured reaches 80 tok/s per user.
    assert_eq!(
        read_at(&FRONT, true, true, 80.0),
        Err(Unreached { best: 60.0 })
    );
    assert_eq!(read_at(&[], true, true, 80.0), Ok(None));
    assert_eq!(read_at(&FRONT, true, true, f64::NAN), Ok(None));
}

#[test]
fn lower_is_better_axes_read_the_same_way() {
    // p99 TTFT (lower better) against throughput: a TTFT target of at most 150 ms.
    let front = [(100.0, 500.0), (200.0, 900.0), (400.0, 1000.0)];
    let r = read_at(&front, false, true, 150.0).unwrap().unwrap();
    assert_eq!(
        r,
        Reading {
            value: 700.0,
            clamped: None
        }
    );
    assert_eq!(
        read_at(&front, false, true, 50.0),
        Err(Unreached { best: 100.0 })
    );
    let r = read_at(&front, false, true, 1000.0).unwrap().unwrap();
    assert_eq!(
        r,
        Reading {
            value: 1000.0,
            clamped: Some(400.0)
        }
    );
    // Interactivity against $ per million tokens (lower better).
    let cost = [(10.0, 0.5), (30.0, 1.0), (60.0, 4.0)];
    assert_eq!(
        read_at(&cost, true, false, 20.0).unwrap().unwrap().value,
        0.75
    );
}

#[test]
fn the_best_interactivity_under_a_cost_cap() {
    let cost = [(10.0, 0.5), (30.0, 1.0), (60.0, 4.0)];
    assert_eq!(
        best_x_within(&cost, true, false, 2.5),
        Some(Reading {
            value: 45.0,
            clamped: None
        })
    );
    assert_eq!(
        best_x_within(&cost, true, false, 1.0),
        Some(Reading {
            value: 30.0,
            clamped: None
        })
    );
    // Every point is under $10: the best measured, marked.
    assert_eq!(
        best_x_within(&cost, true, false, 10.0),
        Some(Reading {
            value: 60.0,
            clamped: Some(60.0)
        })
    );
    // None is under $0.10.
    assert_eq!(best_x_within(&cost, true, false, 0.1), None);
    assert_eq!(best_x_within(&cost, true, false, f64::NAN), None);
}

#[test]
fn points_off_the_frontier_do_not_bend_it() {
    // (20, 1000) is dominated by (30, 1800); a duplicate x keeps its best y.
    let pts = [
        (10.0, 3000.0),
        (20.0, 1000.0),
        (30.0, 1800.0),
        (30.0, 100.0),
        (60.0, 600.0),
    ];
    assert_eq!(
        read_at(&pts, true, true, 20.0).unwrap().unwrap().value,
        2400.0
    );
}

fn frontier_strategy() -> impl Strategy<Value = Vec<(f64, f64)>> {
    prop::collection::vec((-1e6f64..1e6, -1e6f64..1e6), 1..30)
}

proptest! {
    /// Whatever the points and the target, a reading lies within the y range of the points
    /// and is never made up past the measured x range.
    #[test]
    fn a_reading_never_leaves_the_frontier_range(
        pts in frontier_strategy(),
        target in -2e6f64..2e6,
        x_hib: bool,
        y_hib: bool,
    ) {
        let (lo_y, hi_y) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
        let (lo_x, hi_x) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.0), h.max(p.0)));
        match read_at(&pts, x_hib, y_hib, target) {
            Ok(Some(r)) => {
                prop_assert!(r.value >= lo_y && r.value <= hi_y, "{r:?} outside {lo_y}..{hi_y}");
                if let Some(at) = r.clamped {
                    prop_assert!(at >= lo_x && at <= hi_x);
                }
            }
            Ok(None) => prop_assert!(false, "finite points and target give a reading"),
            Err(u) => {
                prop_assert!(u.best >= lo_x && u.best <= hi_x);
                // Unreached means the target is past every point's x.
                let past = if x_hib { target > hi_x } else { target < lo_x };
                prop_assert!(past, "unreached at {target} inside {lo_x}..{hi_x}");
            }
        }
        if let Some(r) = best_x_within(&pts, x_hib, y_hib, target) {
            prop_assert!(r.value >= lo_x && r.value <= hi_x, "{r:?} outside {lo_x}..{hi_x}");
        }
    }
}
