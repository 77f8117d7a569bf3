//! Format detection and readers: bytes of any benchmark result file in, canonical records out.
