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
use serde_json::{Map, Value};

use super::address::decode_component;
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
    /// Decompressed, but not JSON.
    #[error("the data in this link is not benchlens records ({0})")]
    Json(#[source] serde_json::Error),
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
/// document>` for records CSV cannot hold).
fn envelope_json(files: &[ShareFile<'_>]) -> String {
    let envelope: Vec<Value> = files
        .iter()
        .map(|f| {
            let mut m = Map::new();
            m.insert("name".into(), Value::String(f.name.to_string()));
            m.insert("format".into(), Value::String(f.format.to_string()));
            // Canonical CSV names each column once, where JSON repeats every key per record:
            // a third shorter once deflated. Used when it reads back exactly (per-request
            // detail and tags only travel as JSON).
            if canonical::csv_holds(f.records) {
                m.insert("csv".into(), Value::String(canonical::to_csv(f.records)));
            } else {
                // The canonical writer's document, as a value inside the envelope.
                let doc = serde_json::from_slice(canonical::to_json(f.records).as_bytes());
                m.insert("records".into(), doc.unwrap_or(Value::Null));
            }
            Value::Object(m)
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("files".into(), Value::Array(envelope));
    serde_json::to_string(&Value::Object(doc)).unwrap_or_default()
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

/// The files in an inflated envelope (see [`link_payload`]).
pub fn link_files(json: &[u8]) -> Result<Vec<LinkFile>, LinkDataError> {
    let doc: Value = serde_json::from_slice(json).map_err(LinkDataError::Json)?;
    let files = doc
        .get("files")
        .and_then(Value::as_array)
        .ok_or_else(|| LinkDataError::Envelope("no list of files".into()))?;
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text = |key: &str| {
                f.get(key)
                    .and_then(Value::as_str)
                    .map(|s| s.chars().take(MAX_NAME_CHARS).collect::<String>())
            };
            let name = text("name")
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| LinkDataError::Envelope(format!("file {} has no name", i + 1)))?;
            let text_of = match (f.get("csv").and_then(Value::as_str), f.get("records")) {
                (Some(csv), _) => csv.to_string(),
                (None, Some(doc)) if canonical::looks_canonical(doc) => {
                    serde_json::to_string(doc).unwrap_or_default()
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
mod tests {
    use super::*;
    use crate::model::DimKey;

    /// [`super::share_link`] finished with miniz_oxide's raw deflate, as the page finishes it
    /// with the browser's.
    fn share_link(
        base: &str,
        view: &ViewState,
        files: &[ShareFile<'_>],
        max_chars: usize,
    ) -> SharedLink {
        match super::share_link(base, view, files, max_chars) {
            LinkStep::Done(link) => link,
            LinkStep::Deflate(draft) => {
                let deflated = miniz_oxide::deflate::compress_to_vec(draft.envelope(), 9);
                draft.finish(Some(&deflated))
            }
        }
    }

    /// The data part of a link carrying `files`.
    fn encode_link_data(files: &[ShareFile<'_>]) -> String {
        pack(&miniz_oxide::deflate::compress_to_vec(
            envelope_json(files).as_bytes(),
            9,
        ))
    }

    /// [`link_payload`], inflated at most to [`MAX_LINK_DATA_BYTES`] as the page does, then
    /// [`link_files`].
    fn decode_link_data(data: &str) -> Result<Vec<LinkFile>, LinkDataError> {
        let deflated = link_payload(data)?;
        let json =
            miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, MAX_LINK_DATA_BYTES)
                .map_err(|e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkDataError::TooLarge {
                        max_bytes: MAX_LINK_DATA_BYTES,
                    },
                    status => LinkDataError::Inflate {
                        status: format!("{status:?}"),
                    },
                })?;
        link_files(&json)
    }

    /// A file offered to [`share_link`] under `name`, in a format named "f".
    fn file<'a>(name: &'a str, records: &'a [Record]) -> ShareFile<'a> {
        ShareFile {
            name,
            format: "f",
            records,
        }
    }

    /// A carried file's records as the parse worker reads them (its entry point, natively),
    /// each stamped with the file's name and the carrier's format (canonical CSV or JSON),
    /// here cleared to compare with what was sent; no warning but the count of inferred fields.
    fn read_back(f: &LinkFile) -> Vec<Record> {
        let (records, warnings) =
            match crate::ingest::read_columnar(&f.name, f.text.as_bytes()).unwrap() {
                crate::ingest::Contents::Records(r) => (r.records, r.warnings),
                crate::ingest::Contents::Columns(c) => (c.columns.rows().collect(), c.warnings),
            };
        let warnings: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            warnings.iter().all(|w| w.contains("inferred from")),
            "{warnings:?}"
        );
        records
            .into_iter()
            .map(|mut r| {
                assert_eq!(r.source.as_deref(), Some(f.name.as_str()));
                assert!(r
                    .format
                    .as_deref()
                    .is_some_and(|k| k.starts_with("canonical_")));
                r.source = None;
                r.format = None;
                r
            })
            .collect()
    }

    fn run_records(n: usize, seed: u64) -> Vec<Record> {
        // A small deterministic generator: values that do not compress away.
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|i| {
                let mut r = Record {
                    engine: Some(if i % 2 == 0 { "vllm" } else { "sgl" }.into()),
                    request_rate: Some(if i % 7 == 6 {
                        f64::INFINITY
                    } else {
                        (i % 7) as f64
                    }),
                    ..Record::default()
                };
                r.set_metric(
                    crate::model::MetricKey::latency(
                        crate::model::LatencyMetric::Ttft,
                        crate::model::Stat::Mean,
                    ),
                    next() * 1000.0,
                );
                r.set_metric(crate::model::MetricKey::OutputThroughput, next() * 5000.0);
                r
            })
            .collect()
    }

    #[test]
    fn link_data_round_trips_records_names_and_formats() {
        let a = run_records(40, 1);
        let mut b = run_records(3, 2);
        b[0].set_inferred(
            &DimKey::Known(crate::model::Dim::Gpu),
            "H100".into(),
            "user",
        )
        .unwrap();
        // Per-request detail does not fit a CSV row: that file travels as JSON.
        b[1].requests.push(crate::model::RequestDetail {
            input_len: Some(128),
            output_len: Some(3),
            ttft_ms: Some(12.5),
            itl_ms: vec![1.25, 2.5].into(),
            e2el_ms: Some(16.25),
            error: None,
            ..crate::model::RequestDetail::default()
        });
        let files = [
            ShareFile {
                name: "run a.json",
                format: "vLLM serving JSON",
                records: &a,
            },
            ShareFile {
                name: "b.csv",
                format: "tidy CSV",
                records: &b,
            },
        ];
        let envelope: Value = serde_json::from_str(&envelope_json(&files)).unwrap();
        assert!(envelope["files"][0]["csv"].is_string());
        assert!(envelope["files"][1]["records"].is_object());
        let data = encode_link_data(&files);
        assert!(data.starts_with("1."));
        assert!(data[2..]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        let back = decode_link_data(&data).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].name, "run a.json");
        assert_eq!(back[0].format, "vLLM serving JSON");
        assert_eq!(read_back(&back[0]), a);
        assert_eq!(read_back(&back[1]), b);
        let fragment = format!("#x=1&data={data}");
        assert_eq!(link_data_of_fragment(&fragment), Some(data.as_str()));
        assert_eq!(link_data_of_fragment("#view=latency"), None);
    }

    #[test]
    fn a_link_carries_the_data_when_it_fits_and_names_the_files_when_not() {
        let view = ViewState {
            view: Some("latency".into()),
            samples: vec!["001_b815cef7710eda19.txt".into()],
            data: vec!["https://h/x.json".into()],
            ..ViewState::default()
        };
        let small = run_records(20, 3);
        let big = run_records(5000, 4);
        let base = "https://h/benchlens/";
        let fits = share_link(base, &view, &[file("small.json", &small)], SAFE_LINK_CHARS);
        assert_eq!(fits.embedded, ["small.json"]);
        assert!(fits.needs.is_empty());
        assert!(fits.url.len() <= SAFE_LINK_CHARS);
        let (before, data) = fits.url.split_once("#data=").unwrap();
        let opened = ViewState::from_query(before.split_once('?').unwrap().1);
        assert_eq!(opened, view);
        assert_eq!(read_back(&decode_link_data(data).unwrap()[0]), small);

        let too_big = share_link(
            base,
            &view,
            &[file("small.json", &small), file("big.csv", &big)],
            SAFE_LINK_CHARS,
        );
        assert!(too_big.embedded.is_empty());
        assert_eq!(too_big.needs, ["small.json", "big.csv"]);
        let LinkData::TooLong {
            with_data_chars: Some(n),
        } = too_big.data
        else {
            panic!("{:?}", too_big.data)
        };
        assert!(n > SAFE_LINK_CHARS);
        let note = too_big.note();
        assert!(note.contains("without the data"), "{note}");
        assert!(note.contains("must drop: small.json, big.csv."), "{note}");
        assert!(fits.note().contains("with the data of small.json inside"));
        assert!(!too_big.url.contains('#'));
        let opened = ViewState::from_query(too_big.url.split_once('?').unwrap().1);
        assert_eq!(opened.needs, ["small.json", "big.csv"]);
        assert_eq!(opened.samples, view.samples);

        // The limit is the caller's: the same data fits a larger one.
        let roomy = share_link(base, &view, &[file("big.csv", &big)], MAX_LINK_DATA_CHARS);
        assert_eq!(roomy.embedded, ["big.csv"]);

        let none = share_link(base, &ViewState::default(), &[], SAFE_LINK_CHARS);
        assert_eq!(none.url, base);
        // Far too long to try: not even compressed.
        let tiny_limit = share_link(base, &view, &[file("big.csv", &big)], 100);
        assert_eq!(tiny_limit.needs, ["big.csv"]);
        assert_eq!(
            tiny_limit.data,
            LinkData::TooLong {
                with_data_chars: None
            }
        );
        assert_eq!(none.note(), "Link copied.");
    }

    #[test]
    fn damaged_or_hostile_link_data_gives_a_clear_error() {
        let good = encode_link_data(&[ShareFile {
            name: "a.json",
            format: "f",
            records: &run_records(200, 5),
        }]);
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "not in a form"),
            ("garbage".into(), "not in a form"),
            ("2.AAAA".into(), "version \"2\""),
            ("1.@@@@".into(), "not base64url"),
            ("1.".into(), "does not decompress"),
            // A link cut short when it was copied.
            (good[..good.len() / 2].to_string(), "may have been cut"),
            (
                good[..2 + (good.len() - 2) / 8 * 4].to_string(),
                "does not decompress",
            ),
            (
                format!(
                    "1.{}",
                    base64::engine::general_purpose::URL_SAFE_NO_PAD
                        .encode(miniz_oxide::deflate::compress_to_vec(b"[1,2]", 6))
                ),
                "no list of files",
            ),
            (
                format!(
                    "1.{}",
                    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
                        miniz_oxide::deflate::compress_to_vec(
                            br#"{"files":[{"name":"x","records":[1]}]}"#,
                            6
                        )
                    )
                ),
                "x's records are not a canonical records document",
            ),
            (
                format!("1.{}", "A".repeat(MAX_LINK_DATA_CHARS)),
                "more than the 2097152",
            ),
        ];
        for (data, expected) in cases {
            let e = decode_link_data(&data).unwrap_err().to_string();
            assert!(e.contains(expected), "{expected:?} not in {e:?}");
        }
        // A carried document the worker cannot read fails there, naming why.
        let later = format!(
            "1.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
                miniz_oxide::deflate::compress_to_vec(
                    br#"{"files":[{"name":"x","records":{"schema_version":99,"records":[]}}]}"#,
                    6
                )
            )
        );
        let carried = decode_link_data(&later).unwrap();
        let e = crate::ingest::read_columnar(&carried[0].name, carried[0].text.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("schema_version 99"), "{e}");
        // The underlying error stays reachable, not only its text.
        let e = decode_link_data("1.@@@@").unwrap_err();
        assert!(matches!(e, LinkDataError::Base64(_)), "{e:?}");
        assert!(std::error::Error::source(&e).is_some());
    }

    /// The data of a link written before the page deflated with the browser's
    /// `CompressionStream` (miniz_oxide at level 9); tests/browser/links.test.mjs opens it too.
    pub(crate) const EARLIER_LINK: &str = "1.ZcvNCoJAFIbhW4mzPomjSea2SwjaZMiURx2Yn5o5I4R47027qN3H9_AuMChNAZrLAlYaggZIeq3IZ_cwA8LgvJGcblb9a3M8ndP3kQaM60kj2VFZQk_PSIE7L5nQkLQd88CdCegiPyJ3PHkXxynN1motjdzWN5y1NiiwEFmFpch_ZYdllRUVClF_Wxi1tGPqxAHLvPqX1Ilsn7oi37UW1uv6Bg";

    #[test]
    fn a_link_an_earlier_build_wrote_still_opens() {
        let files = decode_link_data(EARLIER_LINK).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "earlier.csv");
        assert_eq!(files[0].format, "tidy CSV");
        let records =
            match crate::ingest::read_columnar(&files[0].name, files[0].text.as_bytes()).unwrap() {
                crate::ingest::Contents::Records(r) => r.records,
                crate::ingest::Contents::Columns(c) => c.columns.rows().collect(),
            };
        assert_eq!(records.len(), 4);
        assert_eq!(records[3].engine.as_deref(), Some("sglang"));
        assert_eq!(
            records[3].metric(&crate::model::MetricKey::OutputThroughput),
            Some(1204.0)
        );
    }

    #[test]
    fn a_zip_bomb_stops_at_the_size_limit() {
        // 64 MiB of spaces deflate to about 64 KB: a short link that would inflate hugely.
        let out = miniz_oxide::deflate::compress_to_vec(&vec![b' '; 64 << 20], 6);
        let data = format!(
            "1.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&out)
        );
        assert!(data.len() < MAX_LINK_DATA_CHARS, "{}", data.len());
        assert!(matches!(
            decode_link_data(&data),
            Err(LinkDataError::TooLarge {
                max_bytes: MAX_LINK_DATA_BYTES
            })
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_fragment_decodes_or_errs_without_panicking(s in "\\PC{0,200}") {
            let _ = decode_link_data(&s);
            let _ = decode_link_data(&format!("1.{s}"));
        }
    }
}
