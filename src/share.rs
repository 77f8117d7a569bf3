//! Links: turning the addresses people paste into fetchable ones, the explorer's view state
//! to and from a page address, so a shared link reopens the same view, and the data of local
//! files carried inside a link's fragment ([`share_link`], [`link_payload`], [`link_files_in`]).
//!
//! Shared and pure (string in, string out); the browser does the fetching.
//!
//! One file per job: [`view`] (the view state in a query string), [`address`] (fetchable
//! addresses, percent-encoding, query strings), [`link_data`] (files carried inside a link) and
//! [`index`] (the index file listing many result files), read from a parsed document of
//! either side ([`json_tree`]: serde_json natively, the browser's `JSON.parse` on the page).
//! Everything public is re-exported here.

pub(crate) mod address;
pub mod index;
pub mod json_tree;
pub(crate) mod link_data;
pub(crate) mod view;

pub use address::{
    build_query, decode_component, encode_component, file_name_of, parse_query, raw_url, UrlError,
};
pub use json_tree::JsonTree;
pub use link_data::{
    link_data_of_fragment, link_files_in, link_payload, share_link, LinkData, LinkDataError,
    LinkDraft, LinkFile, LinkStep, ShareFile, SharedLink, MAX_LINK_DATA_BYTES, MAX_LINK_DATA_CHARS,
    SAFE_LINK_CHARS,
};
pub use view::{ViewState, NO_VALUE};
