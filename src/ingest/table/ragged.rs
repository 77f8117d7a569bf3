//! Ragged rows (more or fewer cells than the header) of a CSV: each is read (missing cells
//! empty, extra cells ignored) with a warning; the first 20 are listed, the rest counted.

use crate::ingest::Warning;

/// Ragged-row bookkeeping for CSV reading: the first 20 are listed, then a count.
pub(super) struct Ragged {
    pub(super) count: usize,
}

impl Ragged {
    /// Ragged rows listed one by one; the rest are counted.
    pub(super) const LISTED: usize = 20;

    pub(super) fn check(
        &mut self,
        line: usize,
        cells: usize,
        header: usize,
        warnings: &mut Vec<Warning>,
    ) {
        if cells == header {
            return;
        }
        self.count += 1;
        if self.count <= Self::LISTED {
            let what = if cells < header {
                "missing cells left empty"
            } else {
                "extra cells ignored"
            };
            warnings.push(Warning::line(
                line,
                format!("{cells} cells where the header has {header}; {what}"),
            ));
        }
    }

    pub(super) fn finish(&self, warnings: &mut Vec<Warning>) {
        if self.count > Self::LISTED {
            warnings.push(Warning::file(format!(
                "{} ragged rows in all (only the first 20 are listed)",
                self.count
            )));
        }
    }
}
