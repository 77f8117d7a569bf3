//! Where requests go: `--base-url` parsed with [`hyper::Uri`] into scheme, authority and path
//! prefix ([`BaseUrl`]), joined with `--endpoint` and resolved once into a [`Target`] before the
//! run. A URL or path that cannot be used is a [`TargetError`] naming the option; a parser's or
//! resolver's reason is its [`source`](std::error::Error::source), not repeated in the message.

use std::net::SocketAddr;

use hyper::header::{HeaderName, HeaderValue};
use hyper::http::uri::InvalidUri;
use hyper::Uri;

/// A `--base-url` or `--endpoint` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Not a URL at all.
    #[error("invalid --base-url: {url}")]
    Unparsable {
        /// The URL given.
        url: String,
        /// The parser's reason.
        #[source]
        source: InvalidUri,
    },
    /// A scheme other than `http://` or `https://`, or none.
    #[error("invalid --base-url: {url}: only http:// and https:// URLs are supported")]
    Scheme {
        /// The URL given.
        url: String,
    },
    /// No host after the scheme.
    #[error("invalid --base-url: {url}: no host")]
    NoHost {
        /// The URL given.
        url: String,
    },
    /// A port that is not a number from 0 to 65535.
    #[error("invalid --base-url: {url}: {port:?} is not a port number")]
    Port {
        /// The URL given.
        url: String,
        /// What stood where the port goes.
        port: String,
    },
    /// Credentials or a query in the base URL, which would not reach the server as meant.
    #[error("invalid --base-url: {url}: {part} in the base URL is not supported")]
    Unsupported {
        /// The URL given.
        url: String,
        /// `user info` or `a query`.
        part: &'static str,
    },
    /// The host name could not be resolved.
    #[error("invalid --base-url: cannot resolve {authority}")]
    Resolve {
        /// `host:port`.
        authority: String,
        /// The resolver's reason.
        #[source]
        source: std::io::Error,
    },
    /// The host name resolved to nothing.
    #[error("invalid --base-url: {authority} resolves to no address")]
    NoAddress {
        /// `host:port`.
        authority: String,
    },
    /// The base URL's prefix and the endpoint do not make a request path.
    #[error("invalid --endpoint: {path:?} is not a valid request path")]
    Endpoint {
        /// The joined path.
        path: String,
        /// The parser's reason.
        #[source]
        source: InvalidUri,
    },
}

/// Where requests go: parsed once from `--base-url` and `--endpoint`.
#[derive(Clone, Debug)]
pub struct Target {
    /// `http(s)://host:port/path` for messages.
    pub url: String,
    /// `http(s)://host:port`.
    pub origin: String,
    /// Whether the connection is TLS (`https://`).
    pub tls: bool,
    /// The path and query sent in the request line.
    pub path: String,
    /// `Host` header value (`host:port`).
    pub host: String,
    /// The host alone (no port, no brackets), for TLS server name checks.
    pub server_name: String,
    /// The path prefix of `--base-url` (empty or `/prefix`), for setup requests.
    pub prefix: String,
    /// Resolved socket address.
    pub addr: SocketAddr,
    /// Extra headers (`Authorization`, `--header`), in order; a name given twice is sent twice.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// A parsed `--base-url`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl {
    /// `https://`.
    pub tls: bool,
    /// `host:port` (the scheme's default port when none was given).
    pub authority: String,
    /// The host alone, without port or IPv6 brackets.
    pub host: String,
    /// The path prefix: empty or `/prefix`.
    pub prefix: String,
}

/// Splits `http(s)://host[:port][/prefix]` into its parts.
pub fn split_base_url(base: &str) -> Result<BaseUrl, TargetError> {
    let uri: Uri = base.parse().map_err(|source| TargetError::Unparsable {
        url: base.to_string(),
        source,
    })?;
    let tls = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        _ => {
            return Err(TargetError::Scheme {
                url: base.to_string(),
            })
        }
    };
    let authority = uri.authority().ok_or_else(|| TargetError::NoHost {
        url: base.to_string(),
    })?;
    let unsupported = |part| TargetError::Unsupported {
        url: base.to_string(),
        part,
    };
    if authority.as_str().contains('@') {
        return Err(unsupported("user info"));
    }
    if uri.query().is_some() {
        return Err(unsupported("a query"));
    }
    // `host()` keeps an IPv6 address's brackets; the server name goes without them.
    let host = authority.host();
    let bare_host = host.trim_start_matches('[').trim_end_matches(']');
    if bare_host.is_empty() {
        return Err(TargetError::NoHost {
            url: base.to_string(),
        });
    }
    // What follows the host is `:port` or nothing; `Authority::port` hides a bad port as none.
    let port_text = authority.as_str()[host.len()..].strip_prefix(':');
    let port = match port_text.map(str::parse::<u16>) {
        Some(Ok(port)) => port,
        Some(Err(_)) => {
            return Err(TargetError::Port {
                url: base.to_string(),
                port: port_text.unwrap_or_default().to_string(),
            })
        }
        None if tls => 443,
        None => 80,
    };
    Ok(BaseUrl {
        tls,
        authority: format!("{host}:{port}"),
        host: bare_host.to_string(),
        prefix: uri.path().trim_end_matches('/').to_string(),
    })
}

impl Target {
    /// Resolves `base_url` + `endpoint`.
    pub async fn resolve(
        base_url: &str,
        endpoint: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Target, TargetError> {
        let base = split_base_url(base_url)?;
        let authority = base.authority;
        let addr = tokio::net::lookup_host(&authority)
            .await
            .map_err(|source| TargetError::Resolve {
                authority: authority.clone(),
                source,
            })?
            .next()
            .ok_or_else(|| TargetError::NoAddress {
                authority: authority.clone(),
            })?;
        let endpoint = if endpoint.starts_with('/') {
            endpoint.to_string()
        } else {
            format!("/{endpoint}")
        };
        let path = format!("{}{endpoint}", base.prefix);
        if let Err(source) = path.parse::<Uri>() {
            return Err(TargetError::Endpoint { path, source });
        }
        let origin = format!("{}://{authority}", if base.tls { "https" } else { "http" });
        Ok(Target {
            url: format!("{origin}{path}"),
            origin,
            tls: base.tls,
            path,
            prefix: base.prefix,
            host: authority,
            server_name: base.host,
            addr,
            headers,
        })
    }

    /// Where a redirect's `Location` leads when it stays on this target's origin (the same
    /// scheme, host and port, or a path alone): the path and query to request. `None` for
    /// another origin or a `Location` that is no URL.
    pub fn same_origin_path(&self, location: &str) -> Option<String> {
        let loc = location.trim();
        if loc.starts_with('/') && !loc.starts_with("//") {
            return loc.parse::<Uri>().ok().map(|_| loc.to_string());
        }
        let uri: Uri = loc.parse().ok()?;
        let (scheme, authority) = (uri.scheme_str()?, uri.authority()?);
        let base = split_base_url(&format!("{scheme}://{authority}")).ok()?;
        (base.tls == self.tls && base.authority.eq_ignore_ascii_case(&self.host)).then(|| {
            uri.path_and_query()
                .map_or_else(|| "/".to_string(), |p| p.as_str().to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_stay_within_the_origin_or_are_not_followed() {
        let t = Target {
            url: "http://gpu-box:8000/v1/completions".into(),
            origin: "http://gpu-box:8000".into(),
            tls: false,
            path: "/v1/completions".into(),
            host: "gpu-box:8000".into(),
            server_name: "gpu-box".into(),
            prefix: String::new(),
            addr: "127.0.0.1:8000".parse().unwrap(),
            headers: vec![],
        };
        let p = |l: &str| t.same_origin_path(l);
        assert_eq!(
            p("/v2/completions?x=1").as_deref(),
            Some("/v2/completions?x=1")
        );
        assert_eq!(p("http://GPU-box:8000/v2").as_deref(), Some("/v2"));
        assert_eq!(p("http://gpu-box:8000").as_deref(), Some("/"));
        // Another scheme, port or host, a scheme-relative URL, garbage: not followed.
        assert_eq!(p("https://gpu-box:8000/v2"), None);
        assert_eq!(p("http://gpu-box/v2"), None);
        assert_eq!(p("http://evil:8000/v2"), None);
        assert_eq!(p("//evil:8000/v2"), None);
        assert_eq!(p("not a url"), None);
        assert_eq!(p("/has space"), None);
    }

    #[test]
    fn base_urls_split_into_authority_and_prefix() {
        let split = |u: &str| split_base_url(u).map(|b| (b.tls, b.authority, b.host, b.prefix));
        assert_eq!(
            split("http://127.0.0.1:8000").unwrap(),
            (
                false,
                "127.0.0.1:8000".into(),
                "127.0.0.1".into(),
                "".into()
            )
        );
        assert_eq!(
            split("http://localhost/api/").unwrap(),
            (
                false,
                "localhost:80".into(),
                "localhost".into(),
                "/api".into()
            )
        );
        assert_eq!(
            split("https://gpu-box/v1").unwrap(),
            (true, "gpu-box:443".into(), "gpu-box".into(), "/v1".into())
        );
        assert_eq!(
            split("https://[::1]:8443").unwrap(),
            (true, "[::1]:8443".into(), "::1".into(), "".into())
        );
        assert_eq!(
            split("http://[::1]").unwrap(),
            (false, "[::1]:80".into(), "::1".into(), "".into())
        );
        assert!(split("ftp://x").is_err());
        assert!(split("http:///x").is_err());
        assert!(split("http://host:http").is_err());
        assert!(split("https://[::1").is_err());
        let err = |u: &str| split_base_url(u).unwrap_err();
        assert!(matches!(err("localhost:8000"), TargetError::Scheme { .. }));
        assert_eq!(
            err("http://host:http").to_string(),
            "invalid --base-url: http://host:http: \"http\" is not a port number"
        );
        assert!(matches!(err("http://host:70000"), TargetError::Port { .. }));
        assert!(matches!(
            err("http://user:pw@host/"),
            TargetError::Unsupported {
                part: "user info",
                ..
            }
        ));
        assert!(matches!(
            err("http://host/v1?x=1"),
            TargetError::Unsupported {
                part: "a query",
                ..
            }
        ));
        let unparsable = err("http://ho st/");
        assert!(
            std::error::Error::source(&unparsable).is_some(),
            "{unparsable:?}"
        );
    }

    #[tokio::test]
    async fn invalid_endpoints_are_rejected_up_front() {
        let e = Target::resolve("http://127.0.0.1:1", "/v1/has space", vec![])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("--endpoint"), "{e}");
        let t = Target::resolve("http://127.0.0.1:1/api", "v1/completions", vec![])
            .await
            .unwrap();
        assert_eq!(
            (t.path.as_str(), t.prefix.as_str()),
            ("/api/v1/completions", "/api")
        );
        assert_eq!(t.url, "http://127.0.0.1:1/api/v1/completions");
    }
}
