//! Addresses: turning the addresses people paste into ones that serve the raw file
//! ([`raw_url`]), a file's name from its address, and the percent-encoding and query strings
//! that page addresses are made of.

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
