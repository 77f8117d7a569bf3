//! Links: turning the addresses people paste into fetchable ones, and the explorer's view state
//! to and from a page address, so a shared link reopens the same view.
//!
//! Shared and pure (string in, string out); the browser does the fetching.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::canonical::parse_number_text;
use crate::model::{DimKey, DimKind, DimValue, Filter};

/// What a shared link carries: the view, chart choices, filters and the data addresses.
///
/// In the page address: `view=latency&x=request_rate&metric=mean_ttft_ms&series=engine&log2=1`
/// `&f.engine=vllm&f.engine=sgl&f.gpu=(none)&data=https://...` (`data` and `f.*` repeat).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewState {
    /// Active view id (`latency`, `throughput`, `scaling`, ...).
    pub view: Option<String>,
    /// X dimension name.
    pub x: Option<String>,
    /// Metric name of the active view.
    pub metric: Option<String>,
    /// Series dimension names; `Some(empty)` means one series.
    pub series: Option<Vec<String>>,
    /// Log-2 x axis.
    pub log2: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Improvement view: the compared dimension's name.
    pub compare: Option<String>,
    /// Improvement view: the baseline value.
    pub baseline: Option<String>,
    /// Improvement view: the candidate value.
    pub candidate: Option<String>,
    /// Improvement view: dimensions left out of the match key.
    pub ignore: Vec<String>,
    /// View-specific settings (trade-off axes, SLO limits, ...), as `v.<name>=<value>`.
    pub params: BTreeMap<String, String>,
    /// Selected values per dimension name; `(none)` selects records without a value.
    pub filters: BTreeMap<String, Vec<String>>,
    /// Data file addresses to fetch.
    pub data: Vec<String>,
}

/// The text standing for "no value" in links and filter lists.
pub const NO_VALUE: &str = "(none)";

impl ViewState {
    /// The query string (without `?`) for this state.
    pub fn to_query(&self) -> String {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut push = |k: &str, v: &str| pairs.push((k.to_string(), v.to_string()));
        if let Some(v) = &self.view {
            push("view", v);
        }
        if let Some(v) = &self.x {
            push("x", v);
        }
        if let Some(v) = &self.metric {
            push("metric", v);
        }
        if let Some(series) = &self.series {
            push("series", &series.join(","));
        }
        if self.log2 {
            push("log2", "1");
        }
        if self.log_y {
            push("logy", "1");
        }
        for (k, v) in [
            ("cmp", &self.compare),
            ("base", &self.baseline),
            ("cand", &self.candidate),
        ] {
            if let Some(v) = v {
                push(k, v);
            }
        }
        for d in &self.ignore {
            push("ignore", d);
        }
        for (k, v) in &self.params {
            push(&format!("v.{k}"), v);
        }
        for (dim, values) in &self.filters {
            for v in values {
                push(&format!("f.{dim}"), v);
            }
        }
        for d in &self.data {
            push("data", d);
        }
        build_query(&pairs)
    }

    /// Reads a query string; unknown keys are ignored.
    pub fn from_query(query: &str) -> ViewState {
        let mut state = ViewState::default();
        for (k, v) in parse_query(query) {
            match k.as_str() {
                "view" => state.view = Some(v),
                "x" => state.x = Some(v),
                "metric" => state.metric = Some(v),
                "series" => {
                    state.series = Some(
                        v.split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect(),
                    )
                }
                "log2" => state.log2 = v == "1" || v == "true",
                "logy" => state.log_y = v == "1" || v == "true",
                "data" if !v.trim().is_empty() => state.data.push(v),
                "cmp" => state.compare = Some(v),
                "base" => state.baseline = Some(v),
                "cand" => state.candidate = Some(v),
                "ignore" => state.ignore.push(v),
                _ => {
                    if let Some(name) = k.strip_prefix("v.") {
                        state.params.insert(name.to_string(), v);
                    } else if let Some(dim) = k.strip_prefix("f.") {
                        state.filters.entry(dim.to_string()).or_default().push(v);
                    }
                }
            }
        }
        state
    }

    /// The filter these selections describe. Names that are not dimensions are skipped.
    pub fn filter(&self) -> Filter {
        let mut filter = Filter::default();
        for (name, values) in &self.filters {
            let Some(key) = DimKey::from_name(name) else {
                continue;
            };
            let numeric = matches!(&key, DimKey::Known(d) if d.kind() != DimKind::Text);
            let set: BTreeSet<Option<DimValue>> = values
                .iter()
                .map(|v| {
                    if v == NO_VALUE {
                        None
                    } else if numeric {
                        Some(
                            parse_number_text(v)
                                .map_or_else(|| DimValue::from(v.as_str()), DimValue::Num),
                        )
                    } else {
                        Some(DimValue::from(v.as_str()))
                    }
                })
                .collect();
            filter.selected.insert(key, set);
        }
        filter
    }

    /// Records a filter's selections.
    pub fn set_filter(&mut self, filter: &Filter) {
        self.filters = filter
            .selected
            .iter()
            .filter(|(_, set)| !set.is_empty())
            .map(|(k, set)| {
                (
                    k.name(),
                    set.iter()
                        .map(|v| v.as_ref().map_or(NO_VALUE.to_string(), ToString::to_string))
                        .collect(),
                )
            })
            .collect();
    }
}

/// Why an address cannot be fetched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Empty input.
    #[error("the address is empty")]
    Empty,
    /// Not http or https.
    #[error("only http:// and https:// addresses can be fetched, not {0:?}")]
    Scheme(String),
    /// No host after the scheme.
    #[error("{0:?} has no host name")]
    NoHost(String),
}

/// Rewrites an address to one that serves the raw file, and checks it can be fetched:
/// `github.com/o/r/blob/ref/path` → `raw.githubusercontent.com/o/r/ref/path`,
/// `gist.github.com/u/id` → `gist.githubusercontent.com/u/id/raw`. Other http(s) addresses
/// pass unchanged.
pub fn raw_url(input: &str) -> Result<String, UrlError> {
    let url = input.trim();
    if url.is_empty() {
        return Err(UrlError::Empty);
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| UrlError::Scheme(url.chars().take(40).collect()))?;
    let scheme_lower = scheme.to_ascii_lowercase();
    if scheme_lower != "http" && scheme_lower != "https" {
        return Err(UrlError::Scheme(format!("{scheme}:")));
    }
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.is_empty() {
        return Err(UrlError::NoHost(url.to_string()));
    }
    let host_lower = host.to_ascii_lowercase();
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if host_lower == "github.com" || host_lower == "www.github.com" {
        if let [owner, repo, "blob" | "raw", git_ref, file @ ..] = parts.as_slice() {
            if !file.is_empty() {
                return Ok(format!(
                    "https://raw.githubusercontent.com/{owner}/{repo}/{git_ref}/{}",
                    file.join("/")
                ));
            }
        }
    }
    if host_lower == "gist.github.com" {
        match parts.as_slice() {
            [user, id] => {
                return Ok(format!(
                    "https://gist.githubusercontent.com/{user}/{id}/raw"
                ))
            }
            [id] => return Ok(format!("https://gist.githubusercontent.com/{id}/raw")),
            _ => {}
        }
    }
    Ok(url.to_string())
}

/// The last path segment of an address, for the file list (`.../run.json?x=1` → `run.json`).
pub fn file_name_of(url: &str) -> String {
    let no_query = url.split(['?', '#']).next().unwrap_or(url);
    let after_scheme = no_query.split_once("://").map_or(no_query, |(_, r)| r);
    after_scheme
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(after_scheme)
        .to_string()
}

/// Percent-encodes a query component (RFC 3986 unreserved characters kept).
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes a percent-encoded query component (`+` as space); invalid escapes are kept as-is.
pub fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a query string (`?a=1&b=2`, leading `?` optional) into decoded pairs, in order.
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode_component(k), decode_component(v))
        })
        .collect()
}

/// Joins pairs into a query string without the leading `?`.
pub fn build_query(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_links_become_raw() {
        assert_eq!(
            raw_url("https://github.com/acme/bench/blob/main/results/run.json").unwrap(),
            "https://raw.githubusercontent.com/acme/bench/main/results/run.json"
        );
        assert_eq!(
            raw_url("https://gist.github.com/alice/0123abcd").unwrap(),
            "https://gist.githubusercontent.com/alice/0123abcd/raw"
        );
        assert_eq!(
            raw_url(" http://127.0.0.1:8000/x.jsonl ").unwrap(),
            "http://127.0.0.1:8000/x.jsonl"
        );
    }

    #[test]
    fn only_http_and_https() {
        assert_eq!(
            raw_url("file:///etc/passwd"),
            Err(UrlError::Scheme("file:".into()))
        );
        assert!(matches!(
            raw_url("javascript:alert(1)"),
            Err(UrlError::Scheme(_))
        ));
        assert_eq!(raw_url("  "), Err(UrlError::Empty));
        assert!(matches!(raw_url("https:///x"), Err(UrlError::NoHost(_))));
    }

    #[test]
    fn view_state_round_trips_through_a_query() {
        let filter = Filter::default()
            .select(crate::model::Dim::Engine, Some("vllm".into()))
            .select(crate::model::Dim::Engine, Some("s g&l".into()))
            .select(crate::model::Dim::RequestRate, Some(f64::INFINITY.into()))
            .select(crate::model::Dim::RequestRate, Some(10.0.into()))
            .select(crate::model::Dim::Gpu, None);
        let mut state = ViewState {
            view: Some("throughput".into()),
            x: Some("max_concurrency".into()),
            metric: Some("p99.9_ttft_ms".into()),
            series: Some(vec!["engine".into(), "gpu".into()]),
            log2: true,
            log_y: true,
            compare: Some("gpu".into()),
            baseline: Some("Tesla".into()),
            candidate: Some("A100 80G".into()),
            ignore: vec!["engine_version".into(), "tag.status".into()],
            params: [(
                "slo".to_string(),
                "p99_ttft_ms<=500, mean_tpot_ms<=50".to_string(),
            )]
            .into(),
            data: vec!["https://h/x.json?a=1&b=2".into(), "https://h/y.csv".into()],
            ..ViewState::default()
        };
        state.set_filter(&filter);
        let q = state.to_query();
        let back = ViewState::from_query(&format!("?{q}"));
        assert_eq!(back, state);
        assert_eq!(back.filter(), filter);
        assert_eq!(ViewState::from_query("series=").series, Some(vec![]));
    }

    #[test]
    fn names_and_queries() {
        assert_eq!(file_name_of("https://h/a/b/run.json?x=1"), "run.json");
        assert_eq!(file_name_of("https://host/"), "host");
        let pairs = vec![
            ("data".to_string(), "https://h/a b.json?x=1&y=2".to_string()),
            ("f.engine".to_string(), "vllm,sgl".to_string()),
        ];
        let q = build_query(&pairs);
        assert!(!q.contains(' '));
        assert_eq!(parse_query(&format!("?{q}")), pairs);
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz%4"), "%zz%4");
        assert_eq!(decode_component("%E2%9C%93"), "✓");
    }
}
