//! The Pareto frontier against its definition: every pair compared, with ties, signed zeros,
//! NaN and infinities, and with more points than the candidate bins.

use super::super::*;
use proptest::prelude::*;

/// The definition itself, every pair compared: what [`pareto_frontier`] must equal.
fn frontier_by_pairs(points: &[(f64, f64)], xh: bool, yh: bool) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| !points.iter().any(|&q| dominates(q, points[i], xh, yh)))
        .collect()
}

#[test]
fn frontier_keeps_ties_zero_signs_and_nan_as_the_definition_does() {
    let pts = [
        (1.0, 5.0),
        (1.0, 5.0),  // identical: both kept
        (-0.0, 2.0), // equals x 0.0 below, lower y: dominated
        (0.0, 3.0),
        (1.0, 4.0), // same x, lower y: dominated
        (f64::NAN, 0.0),
        (f64::INFINITY, 9.0),
        (2.0, f64::NEG_INFINITY),
    ];
    for (xh, yh) in [(true, true), (false, true), (true, false), (false, false)] {
        assert_eq!(
            pareto_frontier(&pts, xh, yh),
            frontier_by_pairs(&pts, xh, yh),
            "{xh} {yh}"
        );
    }
    // Lower latency better, higher throughput better: (inf, 9) has the best throughput.
    assert_eq!(pareto_frontier(&pts, false, true), [0, 1, 3, 5, 6]);
    assert!(pareto_frontier(&[], false, true).is_empty());
}

proptest! {
    #[test]
    fn frontier_is_non_dominated_and_dominates_the_rest(
        // Few distinct values, so ties and duplicates are common.
        pts in prop::collection::vec(((0u8..8).prop_map(f64::from), (0u8..8).prop_map(f64::from)), 0..60),
        xh in any::<bool>(),
        yh in any::<bool>(),
    ) {
        let f = pareto_frontier(&pts, xh, yh);
        for &i in &f {
            for &j in &f {
                prop_assert!(!dominates(pts[i], pts[j], xh, yh));
            }
        }
        for k in 0..pts.len() {
            if !f.contains(&k) {
                prop_assert!(f.iter().any(|&i| dominates(pts[i], pts[k], xh, yh)));
            }
        }
        prop_assert!(pts.is_empty() || !f.is_empty());
        prop_assert_eq!(f, frontier_by_pairs(&pts, xh, yh));
    }

    #[test]
    fn frontier_equals_the_definition_with_odd_values(
        pts in prop::collection::vec((
            prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
            prop::sample::select(vec![0.0, -0.0, 1.0, 2.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]),
        ), 0..40),
        xh in any::<bool>(),
        yh in any::<bool>(),
    ) {
        prop_assert_eq!(pareto_frontier(&pts, xh, yh), frontier_by_pairs(&pts, xh, yh));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// More points than the candidate bins, so the linear pass that sets points aside is at
    /// work: ties inside one bin, a bin per value, values at the range's two ends, infinite y.
    #[test]
    fn the_bins_set_aside_only_dominated_points(
        pts in prop::collection::vec((
            prop_oneof![
                (0u16..4096).prop_map(|v| f64::from(v) / 7.0),
                prop::sample::select(vec![0.0, -0.0, 585.0]),
            ],
            prop_oneof![
                (0u16..64).prop_map(f64::from),
                prop::sample::select(vec![f64::INFINITY, f64::NEG_INFINITY, f64::NAN]),
            ],
        ), 1100..2500),
        xh in any::<bool>(),
        yh in any::<bool>(),
    ) {
        prop_assert_eq!(pareto_frontier(&pts, xh, yh), frontier_by_pairs(&pts, xh, yh));
    }
}
