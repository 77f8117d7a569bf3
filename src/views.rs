//! What each explorer view shows, as pure functions of the user's choices and the data, so
//! they are tested natively and the Leptos components in `app` only present: the main chart
//! ([`chart`]), the filter panel ([`filters`]), the improvement view ([`improvement`]) and the
//! trade-off, SLO and regression views ([`analysis`]).
//!
//! Shared by both faces and pure, like [`crate::analysis`], which does the work they show.

pub mod analysis;
pub mod chart;
pub mod filters;
pub mod improvement;
