//! Data of local files carried inside a link's fragment: "copy link" packs the canonical
//! records of each file, compressed, into `#data=1.<base64url>` when the whole link stays within
//! a limit ([`share_link`]), and opening such a link unpacks them ([`link_payload`],
//! [`link_files`]) with bounds on every size, so a damaged or crafted link is a clear error.
//!
//! The data is raw deflate (RFC 1951). This module does everything but the compression
//! itself, which is the caller's: the page uses the browser's `CompressionStream` and
//! `DecompressionStream` (`app::deflate`), so its wasm carries no deflate code; the tests use
//! miniz_oxide, and read links either one wrote.

use base64::Engine as _;

use super::address::decode_component;
use super::json_tree::JsonTree;
use super::view::ViewState;
use crate::model::canonical;
use crate::model::Record;

/// The longest link "copy link" produces with data inside, in characters (the whole address).
///
/// 32,000 fits the places links are pasted: Slack truncates messages at 40,000 characters,
/// GitHub comments hold at most 65,536, and Chromium shows at most 32 KiB of an address in its
/// address bar (it keeps up to 2 MiB). Sources are in docs/sharing.md.
pub const SAFE_LINK_CHARS: usize = 32_000;

/// The longest data fragment a link may carry when opened (Chromium's own address limit,
/// 2 MiB); longer ones are refused before anything is decoded.
pub const MAX_LINK_DATA_CHARS: usize = 2 * 1024 * 1024;

/// The most bytes a link's data may inflate to. Deflate can expand a thousandfold, so this is
/// enforced while inflating: a crafted fragment cannot make the page allocate more.
pub const MAX_LINK_DATA_BYTES: usize = 32 * 1024 * 1024;

/// The fragment key holding the data: `#data=1.<base64url of raw deflate>`.
const DATA_KEY: &str = "data=";

/// The layout version written before the `.` (bumped if the envelope changes).
const DATA_VERSION: &str = "1";

/// Most characters kept of a file name read from a link.
const MAX_NAME_CHARS: usize = 200;

/// A local file carried inside a link: its name, detected format and its records as canonical
/// CSV or canonical JSON text, which the explorer's parse worker reads like any file (the page
/// carries no reader).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkFile {
    /// The file's name as it was loaded.
    pub name: String,
    /// Human name of the format it was read as (`vLLM serving JSON`).
    pub format: String,
    /// Its records: canonical CSV, or a canonical JSON document.
    pub text: String,
}

/// Why the data in a link cannot be read. Messages speak to the person who opened the link
/// and name the underlying error, which is also kept as the [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
pub enum LinkDataError {
    /// The fragment is longer than any link this explorer writes or a browser keeps.
    #[error("the data in this link is {chars} characters long, more than the {max} a link can carry; ask for the files instead")]
    TooLong {
        /// Characters in the fragment's data.
        chars: usize,
        /// The most accepted.
        max: usize,
    },
    /// Not `data=<version>.<payload>`, or a version this build does not know.
    #[error("the data in this link is not in a form this explorer writes ({0}); the link may have been cut or edited")]
    Form(String),
    /// Not base64url.
    #[error("the data in this link is damaged (not base64url: {0}); the link may have been cut when it was copied")]
    Base64(#[source] base64::DecodeError),
    /// Not a complete deflate stream.
    #[error("the data in this link is damaged (it does not decompress: {status}); the link may have been cut when it was copied")]
    Inflate {
        /// What the inflater said.
        status: String,
    },
    /// Inflates to more than [`MAX_LINK_DATA_BYTES`].
    #[error(
        "the data in this link would decompress to more than {max_bytes} bytes; it was not opened"
    )]
    TooLarge {
        /// The limit.
        max_bytes: usize,
    },
    /// Decompressed, but not JSON (what the JSON reader said).
    #[error("the data in this link is not benchlens records ({0})")]
    Json(String),
    /// JSON, but not the envelope of files.
    #[error("the data in this link is not benchlens records ({0})")]
    Envelope(String),
}

/// A local file offered to [`share_link`].
#[derive(Clone, Copy, Debug)]
pub struct ShareFile<'a> {
    /// The file's name.
    pub name: &'a str,
    /// Human name of its format.
    pub format: &'a str,
    /// Its records.
    pub records: &'a [Record],
}

/// What "copy link" produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLink {
    /// The whole address to share.
    pub url: String,
    /// Local files whose records are inside `url`.
    pub embedded: Vec<String>,
    /// Local files that did not fit: the receiver must drop these.
    pub needs: Vec<String>,
    /// What happened to the local files' data.
    pub data: LinkData,
}

/// What a shared link did with the local files' data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkData {
    /// There were no local files.
    NoLocalFiles,
    /// Their records are inside the link.
    Carried,
    /// They did not fit. `with_data_chars`: the length the link would have had, when it was
    /// built (not when the records were far too long to be worth compressing).
    TooLong {
        /// Characters of the link with the data inside.
        with_data_chars: Option<usize>,
    },
}

impl SharedLink {
    /// What the person who copied the link is told.
    pub fn note(&self) -> String {
        let k = |n: usize| format!("{:.1}k characters", n as f64 / 1000.0);
        let must_drop = if self.needs.is_empty() {
            String::new()
        } else {
            format!(" Whoever opens it must drop: {}.", self.needs.join(", "))
        };
        match self.data {
            LinkData::Carried => format!(
                "Link copied with the data of {} inside ({} long; it stays in the part after #, \
                 which browsers never send to a server).{must_drop}",
                self.embedded.join(", "),
                k(self.url.len())
            ),
            LinkData::TooLong {
                with_data_chars: Some(n),
            } => format!(
                "Link copied without the data: with it the link would be {} long, over the {} \
                 that chat and comment boxes keep.{must_drop}",
                k(n),
                k(SAFE_LINK_CHARS)
            ),
            LinkData::TooLong {
                with_data_chars: None,
            } => format!(
                "Link copied without the data, far too long for the {} that chat and comment \
                 boxes keep.{must_drop}",
                k(SAFE_LINK_CHARS)
            ),
            LinkData::NoLocalFiles => format!("Link copied.{must_drop}"),
        }
    }
}

/// The envelope a link's fragment carries for `files`, before it is raw-deflated:
/// `{"files":[{"name","format","csv":<canonical CSV text>}]}` (or `"records":<canonical JSON
/// document>` for records CSV cannot hold). Written as text around the canonical writer's
/// own: its document goes in as it was written, never read back.
fn envelope_json(files: &[ShareFile<'_>]) -> String {
    let string = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = String::from(r#"{"files":["#);
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"name":"#);
        out.push_str(&string(f.name));
        out.push_str(r#","format":"#);
        out.push_str(&string(f.format));
        // Canonical CSV names each column once, where JSON repeats every key per record:
        // a third shorter once deflated. Used when it reads back exactly (per-request
        // detail and tags only travel as JSON).
        if canonical::csv_holds(f.records) {
            out.push_str(r#","csv":"#);
            out.push_str(&string(&canonical::to_csv(f.records)));
        } else {
            out.push_str(r#","records":"#);
            out.push_str(&canonical::to_json(f.records));
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// The fragment data (`1.<base64url>`, without `data=`) of a raw-deflated envelope.
fn pack(deflated: &[u8]) -> String {
    format!(
        "{DATA_VERSION}.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(deflated)
    )
}

/// Records JSON is not compressed when it is this many times longer than the link may be:
/// benchmark records deflate far less than that, and compressing tens of megabytes on the
/// page's thread would stall it for nothing.
const MAX_EXPECTED_RATIO: usize = 40;

/// The data part of a page fragment (`#a=b&data=1.xyz` → `1.xyz`), if it has one.
pub fn link_data_of_fragment(fragment: &str) -> Option<&str> {
    fragment
        .trim_start_matches('#')
        .split('&')
        .find_map(|p| p.strip_prefix(DATA_KEY))
}

/// The raw-deflated envelope a link's data carries (the `1.<base64url>` after `data=`),
/// refusing over-long data before decoding it. The caller inflates it, stopping at
/// [`MAX_LINK_DATA_BYTES`] (the page with the browser's own `DecompressionStream`), and reads
/// the files with [`link_files`].
pub fn link_payload(data: &str) -> Result<Vec<u8>, LinkDataError> {
    let data = data.trim();
    if data.len() > MAX_LINK_DATA_CHARS {
        return Err(LinkDataError::TooLong {
            chars: data.len(),
            max: MAX_LINK_DATA_CHARS,
        });
    }
    let (version, payload) = data
        .split_once('.')
        .ok_or_else(|| LinkDataError::Form("no version mark".into()))?;
    if version != DATA_VERSION {
        return Err(LinkDataError::Form(format!(
            "version {:?}, this build reads {DATA_VERSION}",
            version.chars().take(12).collect::<String>()
        )));
    }
    // Some chat programs percent-encode or pad what they pass on; both are harmless here.
    let payload = decode_component(payload);
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let deflated = engine
        .decode(payload.as_bytes())
        .map_err(LinkDataError::Base64)?;
    if deflated.is_empty() {
        return Err(LinkDataError::Inflate {
            status: "no data".into(),
        });
    }
    Ok(deflated)
}

/// The files in an inflated envelope (see [`link_payload`]), read with serde_json: the tests'
/// way in to [`link_files_in`].
#[cfg(test)]
pub(crate) fn link_files(json: &[u8]) -> Result<Vec<LinkFile>, LinkDataError> {
    let doc: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| LinkDataError::Json(e.to_string()))?;
    link_files_in(&doc)
}

/// The files in a parsed envelope (any [`JsonTree`]: the page parses with the browser's own
/// `JSON.parse`).
pub fn link_files_in<T: JsonTree>(doc: T) -> Result<Vec<LinkFile>, LinkDataError> {
    let files = doc
        .field("files")
        .and_then(|f| f.items())
        .ok_or_else(|| LinkDataError::Envelope("no list of files".into()))?;
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text = |key: &str| {
                f.field(key)
                    .and_then(|v| v.text())
                    .map(|s| s.chars().take(MAX_NAME_CHARS).collect::<String>())
            };
            let name = text("name")
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| LinkDataError::Envelope(format!("file {} has no name", i + 1)))?;
            let text_of = match (f.field("csv").and_then(|v| v.text()), f.field("records")) {
                (Some(csv), _) => csv,
                (None, Some(doc))
                    if doc.field("schema_version").is_some()
                        && doc.field("records").is_some_and(|r| r.is_array()) =>
                {
                    doc.to_json_text()
                }
                (None, Some(_)) => {
                    return Err(LinkDataError::Envelope(format!(
                        "{name}'s records are not a canonical records document"
                    )))
                }
                (None, None) => {
                    return Err(LinkDataError::Envelope(format!("{name} has no records")))
                }
            };
            Ok(LinkFile {
                name,
                format: text("format").unwrap_or_else(|| "benchlens records".into()),
                text: text_of,
            })
        })
        .collect()
}

/// The link for `view` (which already names its URL files and samples) at `base` (the page's
/// address without query or fragment). Local `files` travel inside the fragment when the whole
/// link stays within `max_chars`; otherwise none do and the link names them as needed, so the
/// receiver is asked to drop them.
///
/// Deflating is the caller's (the page uses the browser's own `CompressionStream`, so it
/// carries no compressor): with local files this returns a [`LinkDraft`] whose
/// [`envelope`](LinkDraft::envelope) is to be raw-deflated and handed to
/// [`finish`](LinkDraft::finish), unless the records are far too long to be worth it.
pub fn share_link(
    base: &str,
    view: &ViewState,
    files: &[ShareFile<'_>],
    max_chars: usize,
) -> LinkStep {
    let plain = with_query(base, view);
    if files.is_empty() {
        return LinkStep::Done(SharedLink {
            url: plain,
            embedded: Vec::new(),
            needs: view.needs.clone(),
            data: LinkData::NoLocalFiles,
        });
    }
    let draft = LinkDraft {
        base: base.to_string(),
        view: view.clone(),
        names: files.iter().map(|f| f.name.to_string()).collect(),
        envelope: envelope_json(files),
        max_chars,
    };
    if draft.envelope.len() / MAX_EXPECTED_RATIO > max_chars {
        LinkStep::Done(draft.without_data(None))
    } else {
        LinkStep::Deflate(Box::new(draft))
    }
}

/// `base` with `view`'s query.
fn with_query(base: &str, view: &ViewState) -> String {
    let q = view.to_query();
    if q.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{q}")
    }
}

/// What [`share_link`] returns: the link, or a draft waiting for its envelope to be deflated.
#[derive(Debug)]
pub enum LinkStep {
    /// The link is made.
    Done(SharedLink),
    /// Deflate [`LinkDraft::envelope`], then call [`LinkDraft::finish`].
    Deflate(Box<LinkDraft>),
}

/// A link with local files whose data may go inside, once deflated.
#[derive(Debug)]
pub struct LinkDraft {
    base: String,
    view: ViewState,
    names: Vec<String>,
    envelope: String,
    max_chars: usize,
}

impl LinkDraft {
    /// The bytes to raw-deflate (RFC 1951, no zlib or gzip header).
    pub fn envelope(&self) -> &[u8] {
        self.envelope.as_bytes()
    }

    /// The link, with `deflated` (the raw deflate of [`envelope`](Self::envelope)) inside when
    /// it fits; `None` when it could not be compressed, so the files are named instead.
    pub fn finish(self, deflated: Option<&[u8]>) -> SharedLink {
        let Some(deflated) = deflated else {
            return self.without_data(None);
        };
        let with_data = format!(
            "{}#{DATA_KEY}{}",
            with_query(&self.base, &self.view),
            pack(deflated)
        );
        if with_data.len() <= self.max_chars {
            return SharedLink {
                data: LinkData::Carried,
                url: with_data,
                embedded: self.names,
                needs: self.view.needs,
            };
        }
        self.without_data(Some(with_data.len()))
    }

    /// The link naming the local files as needed.
    fn without_data(self, with_data_chars: Option<usize>) -> SharedLink {
        let mut needing = self.view;
        for n in self.names {
            if !needing.needs.contains(&n) {
                needing.needs.push(n);
            }
        }
        SharedLink {
            url: with_query(&self.base, &needing),
            embedded: Vec::new(),
            needs: needing.needs,
            data: LinkData::TooLong { with_data_chars },
        }
    }
}

#[cfg(test)]
mod tests;
