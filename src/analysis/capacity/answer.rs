//! What a capacity search's probes say: each probe's outcome, a load's standing verdict (the
//! majority of its probes), the bracket they make, and the capacity found, in words
//! ([`Capacity::describe`]) and from a finished list of probes ([`Capacity::from_probes`], as a
//! sweep's file is read back). The search itself ([`super::search`]) decides what to probe next
//! by the same rules.

/// One probe's load and whether it passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeOutcome {
    /// The load probed.
    pub load: f64,
    /// Whether it met the objectives.
    pub passed: bool,
}

/// How many of a load's probes met the objectives, and how many there were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Probes that met the objectives.
    pub met: usize,
    /// Probes of the load.
    pub probes: usize,
}

impl Tally {
    pub(super) fn of(probes: &[ProbeOutcome], load: f64) -> Tally {
        let at = probes.iter().filter(|p| p.load == load);
        Tally {
            met: at.clone().filter(|p| p.passed).count(),
            probes: at.count(),
        }
    }

    /// "the one probe", "all 2 probes" or "2 of 3 probes" that met the objectives (`missed`:
    /// that did not).
    fn words(self, missed: bool) -> String {
        let k = if missed {
            self.probes - self.met
        } else {
            self.met
        };
        match (k == self.probes, self.probes) {
            (true, 1) => "the one probe".into(),
            (true, _) => format!("all {} probes", self.probes),
            (false, _) => format!("{k} of {} probes", self.probes),
        }
    }
}

/// The search's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// Found: the knee lies between `load` (passed by the majority of its probes) and
    /// `failed_at`.
    Found {
        /// The highest load that passed by the majority of its probes: the capacity.
        load: f64,
        /// The lowest load above it that failed by the majority of its probes.
        failed_at: f64,
        /// Index (in probe order) of the last probe of `load`.
        rests_on: usize,
        /// The probes at `load`.
        at_load: Tally,
        /// The probes at `failed_at`.
        at_failed: Tally,
    },
    /// Every load up to the maximum passed: the capacity is at least `load`.
    AtLeast {
        /// The highest load probed (and passed).
        load: f64,
        /// Index of its last probe.
        rests_on: usize,
        /// The probes at `load`.
        at_load: Tally,
    },
    /// Even the minimum load failed.
    BelowMin {
        /// The lowest load probed (and failed).
        load: f64,
    },
}

impl Capacity {
    /// The capacity in words, with its uncertainty and how many probes on each side met the
    /// objectives (a load's verdict is the majority of its probes).
    pub fn describe(&self, unit: &str) -> String {
        match self {
            Capacity::Found {
                load,
                failed_at,
                rests_on,
                at_load,
                at_failed,
            } => format!(
                "capacity {load:.3} {unit}: {} at {load:.3} met the objectives and {} at \
                 {failed_at:.3} did not, so the knee lies in [{load:.3}, {failed_at:.3}) \
                 (+{:.1} %); it rests on probe {}",
                at_load.words(false),
                at_failed.words(true),
                (failed_at / load - 1.0) * 100.0,
                rests_on + 1
            ),
            Capacity::AtLeast {
                load,
                rests_on,
                at_load,
            } => format!(
                "capacity at least {load:.3} {unit}: every load up to the maximum met the \
                 objectives by the majority of its probes ({} at {load:.3}; probe {})",
                at_load.words(false),
                rests_on + 1
            ),
            Capacity::BelowMin { load } => format!(
                "capacity below {load:.3} {unit}: even the lowest load probed missed the objectives"
            ),
        }
    }
}

/// A load's standing verdict from all its probes: passed when its passes outnumber its
/// failures, failed when they are fewer, `None` on a tie (probe it again). One outlier does not
/// outvote a later contradicting probe, and a tie is never read as either side.
pub(super) fn verdict(probes: &[ProbeOutcome], load: f64) -> Option<bool> {
    let (pass, fail) =
        probes
            .iter()
            .filter(|p| p.load == load)
            .fold((0usize, 0usize), |(a, b), p| {
                if p.passed {
                    (a + 1, b)
                } else {
                    (a, b + 1)
                }
            });
    match pass.cmp(&fail) {
        std::cmp::Ordering::Greater => Some(true),
        std::cmp::Ordering::Less => Some(false),
        std::cmp::Ordering::Equal => None,
    }
}

/// The highest load that passed (by its verdict) below the lowest load that failed; and that
/// lowest failing load. Tied loads are in neither until settled.
pub(super) fn bracket(probes: &[ProbeOutcome]) -> (Option<f64>, Option<f64>) {
    let min = |m: Option<f64>, x: f64| Some(m.map_or(x, |m: f64| m.min(x)));
    let max = |m: Option<f64>, x: f64| Some(m.map_or(x, |m: f64| m.max(x)));
    let failed = probes
        .iter()
        .map(|p| p.load)
        .filter(|&l| verdict(probes, l) == Some(false))
        .fold(None, min);
    let passed = probes
        .iter()
        .map(|p| p.load)
        .filter(|&l| failed.is_none_or(|f| l < f) && verdict(probes, l) == Some(true))
        .fold(None, max);
    (passed, failed)
}

impl Capacity {
    /// What a finished list of probes (a sweep's records, read back) says by the search's own
    /// rule, whatever the order: found between the highest load that passed (most of its
    /// probes passed) below the lowest failing load (most failed), and that load; at least the highest pass when no
    /// probe failed; below the lowest failure when none passed. `rests_on` is the index in
    /// `probes` of the last probe at the capacity. `None` without probes.
    pub fn from_probes(probes: &[ProbeOutcome]) -> Option<Capacity> {
        let last_at = |load: f64| {
            probes
                .iter()
                .rposition(|p| p.load == load)
                .unwrap_or_default()
        };
        match bracket(probes) {
            (Some(load), Some(failed_at)) => Some(Capacity::Found {
                load,
                failed_at,
                rests_on: last_at(load),
                at_load: Tally::of(probes, load),
                at_failed: Tally::of(probes, failed_at),
            }),
            (Some(load), None) => Some(Capacity::AtLeast {
                load,
                rests_on: last_at(load),
                at_load: Tally::of(probes, load),
            }),
            (None, Some(load)) => Some(Capacity::BelowMin { load }),
            (None, None) => None,
        }
    }
}
