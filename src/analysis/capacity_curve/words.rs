//! The capacity curve in words: per sweep, the capacity and its uncertainty (the sweep's own
//! sentence, or what its probes shown support), the repeats on both sides of the knee, the
//! goodput there and the objectives ([`capacity_words`]); for the selection, what is not drawn
//! ([`selection_notes`]).

use super::{CapacityCurves, GoodputSource, Probe, ProbeVerdict, Sweep, MAX_CURVE_PANELS};
use crate::analysis::capacity::Capacity;
use crate::charts::style::format_value;

/// What is said under the chart about one sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepWords {
    /// The sweep's name.
    pub name: String,
    /// The capacity and its uncertainty.
    pub capacity: String,
    /// The rest: the repeats at the knee, the goodput there, the objectives, what is missing.
    pub notes: Vec<String>,
}

/// The capacity's sentence as the sweep would have written it, from the probes shown.
fn computed_words(c: &Capacity, unit: &str) -> String {
    match c {
        Capacity::AtLeast { load, rests_on, .. } => format!(
            "capacity at least {load:.3} {unit}: every load shown met the objectives by the \
             majority of its probes (the highest load is probe {}); no failing load bounds it",
            rests_on + 1
        ),
        other => other.describe(unit),
    }
}

/// "2 of 2 probes at 51.880 passed".
fn repeats_at(s: &Sweep, load: f64) -> String {
    let at: Vec<&Probe> = s
        .probes
        .iter()
        .filter(|p| p.load == load && p.verdict != ProbeVerdict::Unjudged)
        .collect();
    let passed = at
        .iter()
        .filter(|p| p.verdict == ProbeVerdict::Passed)
        .count();
    let probes = if at.len() == 1 { "probe" } else { "probes" };
    format!("{passed} of {} {probes} at {load:.3} passed", at.len())
}

/// The capacity of each sweep in words, with its uncertainty: the sweep's own sentence (or
/// the one its probes give, when it recorded none or the probes shown say otherwise), the
/// repeats on both sides of the knee, the goodput at the capacity with its spread, and the
/// objectives.
pub fn capacity_words(c: &CapacityCurves) -> Vec<SweepWords> {
    let unit = c.axis.unit();
    c.sweeps
        .iter()
        .map(|s| {
            let computed = s.capacity.as_ref().map(|cap| computed_words(cap, unit));
            let mut notes = Vec::new();
            let capacity = match (&s.recorded, &computed) {
                (Some(rec), Some(comp)) if rec == comp => rec.clone(),
                (Some(rec), Some(comp)) => {
                    notes.push(format!("The {} probes shown give: {comp}.", s.probes.len()));
                    rec.clone()
                }
                (Some(rec), None) => rec.clone(),
                (None, Some(comp)) => {
                    notes.push(
                        "The sweep recorded no capacity (it did not finish); this one is \
                         worked out from its probes' verdicts."
                            .to_string(),
                    );
                    comp.clone()
                }
                (None, None) => "no capacity: no probe shown was judged".to_string(),
            };
            if let Some(Capacity::Found {
                load, failed_at, ..
            }) = s.capacity
            {
                notes.push(format!(
                    "At the knee: {}; {}.",
                    repeats_at(s, load),
                    repeats_at(s, failed_at)
                ));
            }
            if let Some((load, _)) = s.knee() {
                let label = match s.goodput {
                    GoodputSource::Absent => "request throughput",
                    _ => "goodput",
                };
                if let Some(at) = s
                    .by_load(|p| s.first_panel_value(p))
                    .into_iter()
                    .find(|l| l.load == load)
                {
                    let spread = if at.probes > 1 {
                        format!(
                            " ({} – {} over {} probes)",
                            format_value(at.min),
                            format_value(at.max),
                            at.probes
                        )
                    } else {
                        String::new()
                    };
                    notes.push(format!(
                        "{} at the capacity: {} req/s{spread}.",
                        crate::model::capitalized(label),
                        format_value(at.mean)
                    ));
                }
            }
            match (&s.objectives, &s.objectives_error) {
                (Some(slo), _) => notes.push(format!("Objectives: {slo}.")),
                (None, Some(e)) => notes.push(format!("Objectives unreadable: {e}.")),
                (None, None) => notes.push("No objectives recorded (tag.objectives).".into()),
            }
            match s.goodput {
                GoodputSource::Derived => notes.push(
                    "Goodput is request throughput × the share of good requests (the records \
                     carry no request_goodput)."
                        .into(),
                ),
                GoodputSource::Absent if s.objectives.is_some() => notes.push(
                    "Percentile objectives alone define no goodput: the first panel shows \
                     request throughput."
                        .into(),
                ),
                _ => {}
            }
            let unjudged = s
                .probes
                .iter()
                .filter(|p| p.verdict == ProbeVerdict::Unjudged)
                .count();
            if unjudged > 0 {
                notes.push(format!(
                    "{unjudged} probe(s) cut short (tag.partial) or too short to judge a \
                     percentile (tag.verdict \"too short\", probed again longer): drawn, not \
                     judged."
                ));
            }
            SweepWords {
                name: s.name.clone(),
                capacity,
                notes,
            }
        })
        .collect()
}

/// What the view says about the selection as a whole: records that are not probes, sweeps on
/// another axis, objectives without a panel. Empty when there is nothing to say.
pub fn selection_notes(c: &CapacityCurves) -> Vec<String> {
    let mut notes = Vec::new();
    if c.not_probes > 0 {
        notes.push(format!(
            "{} selected record(s) are not probes of a `benchlens sweep` (no tag.verdict) and \
             are not drawn.",
            c.not_probes
        ));
    }
    if c.other_axis_sweeps > 0 {
        let other = c.axis.other();
        notes.push(format!(
            "{} sweep(s) over the {} are not drawn: the load axis is the {}. Filter them in \
             alone to see them.",
            c.other_axis_sweeps,
            other.dim().label().to_lowercase(),
            c.axis.dim().label().to_lowercase()
        ));
    }
    if c.panels_left_out > 0 {
        notes.push(format!(
            "{} objective(s) have no panel: at most {} are drawn.",
            c.panels_left_out,
            MAX_CURVE_PANELS - 1
        ));
    }
    notes
}
