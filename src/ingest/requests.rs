//! Fast parsing of a run object's per-request arrays (`input_lens`, `output_lens`, `ttfts`,
//! `itls`, `errors`, `start_times`; `generated_texts` skipped): straight into typed vectors while the
//! document is parsed, instead of through `serde_json::Value` (a large, slow detour for
//! millions of numbers). Everything else in the document is parsed as `Value` as usual.
//!
//! Lenient like the rest of ingest: numbers may be strings (`"inf"`, `"1,024"`) or null, and
//! an array of an unexpected shape is dropped with a note rather than failing the document.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::model::canonical::parse_number_text;

/// The per-request arrays of one run object. A number array holds NaN where an element is
/// not a number (null, text that is none): 8 bytes a value, as the columns they become.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RequestArrays {
    pub input_lens: Option<Vec<f64>>,
    pub output_lens: Option<Vec<f64>>,
    pub ttfts: Option<Vec<f64>>,
    pub itls: Option<Vec<Vec<f64>>>,
    pub errors: Option<Vec<Option<String>>>,
    /// vLLM's `start_times` (`--save-detailed`): each request's send time on a clock of its own.
    pub start_times: Option<Vec<f64>>,
    /// Keys whose value was not an array of the expected shape.
    pub malformed: Vec<String>,
}

impl RequestArrays {
    pub fn is_empty(&self) -> bool {
        self.input_lens.is_none()
            && self.output_lens.is_none()
            && self.ttfts.is_none()
            && self.itls.is_none()
            && self.errors.is_none()
            && self.start_times.is_none()
            && self.malformed.is_empty()
    }
}

/// A parsed JSON document: the value, plus the per-request arrays lifted out of it when it is
/// an object (their keys stay in the value, set to null, so classification still sees them).
pub(crate) struct Doc {
    pub value: Value,
    pub arrays: Option<Box<RequestArrays>>,
}

/// A number, a string holding one, or null/anything else (`None`).
pub(super) struct OptF64(pub(super) Option<f64>);

impl<'de> Deserialize<'de> for OptF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptF64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E>(self, v: f64) -> Result<OptF64, E> {
                Ok(OptF64(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<OptF64, E> {
                Ok(OptF64(Some(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<OptF64, E> {
                Ok(OptF64(Some(v as f64)))
            }
            fn visit_str<E>(self, v: &str) -> Result<OptF64, E> {
                Ok(OptF64(parse_number_text(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<OptF64, E> {
                Ok(OptF64(None))
            }
            fn visit_unit<E>(self) -> Result<OptF64, E> {
                Ok(OptF64(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OptF64, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(OptF64(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OptF64, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(OptF64(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A list of `T`, or `None` when the value is not an array (consumed and dropped).
pub(super) struct Lenient<T>(pub(super) Option<Vec<T>>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lenient<T>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(x) = seq.next_element::<T>()? {
                    out.push(x);
                }
                Ok(Lenient(Some(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lenient<T>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Lenient<T>, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

thread_local! {
    /// [`GapValues`]'s collecting buffer, kept between requests.
    static SCRATCH: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Inter-token gaps of one request: numbers only; anything else counts as no gaps. Collected
/// straight into `f64`s (no intermediate `Option<f64>` list: these are most of a file).
pub(super) struct GapValues(pub(super) Vec<f64>);

impl<'de> Deserialize<'de> for GapValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Collected in a reused buffer, then copied to a vector of exactly that length:
        // growing each request's own vector would leave up to half of it unused, and these
        // vectors are most of what a large run holds.
        let scratch = ScratchGaps::deserialize(d)?;
        let out = scratch.0.to_vec();
        scratch.recycle();
        Ok(GapValues(out))
    }
}

/// [`GapValues`] left in the thread's reused buffer, for a caller that copies them elsewhere
/// itself (the streaming reader's chunked list): no vector of their own.
pub(super) struct ScratchGaps(pub(super) Vec<f64>);

impl ScratchGaps {
    /// Gives the buffer back for the next request (a pathological request's is not kept).
    pub(super) fn recycle(mut self) {
        self.0.clear();
        if self.0.capacity() <= 1 << 16 {
            SCRATCH.with(|s| s.set(self.0));
        }
    }
}

impl<'de> Deserialize<'de> for ScratchGaps {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ScratchGaps;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of numbers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ScratchGaps, A::Error> {
                let mut buf = SCRATCH.with(std::cell::Cell::take);
                buf.clear();
                loop {
                    match seq.next_element::<OptF64>() {
                        Ok(Some(x)) => {
                            if let Some(v) = x.0 {
                                buf.push(v);
                            }
                        }
                        Ok(None) => return Ok(ScratchGaps(buf)),
                        Err(e) => {
                            ScratchGaps(buf).recycle();
                            return Err(e);
                        }
                    }
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScratchGaps, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
            fn visit_unit<E>(self) -> Result<ScratchGaps, E> {
                Ok(ScratchGaps(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// An error text, or `None` for null/empty/anything else.
pub(super) struct OptText(pub(super) Option<String>);

impl<'de> Deserialize<'de> for OptText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(OptText(match v {
            Value::String(s) if !s.is_empty() => Some(s),
            _ => None,
        }))
    }
}

/// A number array's values, NaN where an element is not a number.
pub(super) fn numbers(l: Lenient<OptF64>) -> Option<Vec<f64>> {
    l.0.map(|v| v.into_iter().map(|x| x.0.unwrap_or(f64::NAN)).collect())
}

/// A JSON document parsed with its object's fields in a list, in the file's order, each key
/// borrowed from the text when it holds no escape: no map and no key string a field, for a
/// reader that visits each field once ([`super::serving::read_object`], a million JSON lines).
/// The per-request arrays are lifted out as for [`Doc`], which is this document as a map.
pub(crate) struct FlatDoc<'de> {
    pub body: Flat<'de>,
    pub arrays: Option<Box<RequestArrays>>,
}

/// What a [`FlatDoc`] holds.
pub(crate) enum Flat<'de> {
    /// An object's fields (a lifted array's key kept, with null, so classification sees it).
    Fields(Vec<(Cow<'de, str>, Value)>),
    /// Any other document (a list, a scalar).
    Value(Value),
}

impl FlatDoc<'_> {
    /// The document with its object as a map.
    pub(crate) fn into_doc(self) -> Doc {
        let value = match self.body {
            Flat::Fields(fields) => Value::Object(
                fields
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v))
                    .collect::<Map<String, Value>>(),
            ),
            Flat::Value(v) => v,
        };
        Doc {
            value,
            arrays: self.arrays,
        }
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FlatDoc::deserialize(d).map(FlatDoc::into_doc)
    }
}

/// An object's key: borrowed from the text when it can be.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for FlatDoc<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FlatDoc<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON document")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FlatDoc<'de>, A::Error> {
                let mut fields = Fields::List(Vec::with_capacity(16), 0);
                let mut arrays = RequestArrays::default();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    let lifted = match &*key {
                        "input_lens" => {
                            arrays.input_lens = numbers(map.next_value()?);
                            arrays.input_lens.is_some()
                        }
                        "output_lens" => {
                            arrays.output_lens = numbers(map.next_value()?);
                            arrays.output_lens.is_some()
                        }
                        "ttfts" => {
                            arrays.ttfts = numbers(map.next_value()?);
                            arrays.ttfts.is_some()
                        }
                        "start_times" => {
                            arrays.start_times = numbers(map.next_value()?);
                            arrays.start_times.is_some()
                        }
                        "itls" => {
                            let l: Lenient<GapValues> = map.next_value()?;
                            arrays.itls = l.0.map(|v| v.into_iter().map(|g| g.0).collect());
                            arrays.itls.is_some()
                        }
                        "errors" => {
                            let l: Lenient<OptText> = map.next_value()?;
                            arrays.errors = l.0.map(|v| v.into_iter().map(|e| e.0).collect());
                            arrays.errors.is_some()
                        }
                        "generated_texts" => {
                            map.next_value::<IgnoredAny>()?;
                            true
                        }
                        _ => {
                            let v: Value = map.next_value()?;
                            fields.set(key, v);
                            continue;
                        }
                    };
                    if !lifted {
                        arrays.malformed.push(key.to_string());
                    }
                    fields.set(key, Value::Null);
                }
                let arrays = (!arrays.is_empty()).then(|| Box::new(arrays));
                Ok(FlatDoc {
                    body: fields.into_flat(),
                    arrays,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FlatDoc<'de>, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(FlatDoc::plain(Value::Array(items)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_u64<E>(self, v: u64) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(Value::from(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(Value::String(v.to_string())))
            }
            fn visit_bool<E>(self, v: bool) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(Value::Bool(v)))
            }
            fn visit_unit<E>(self) -> Result<FlatDoc<'de>, E> {
                Ok(FlatDoc::plain(Value::Null))
            }
        }
        d.deserialize_any(V)
    }
}

/// Keys an object's fields are kept in a list for at most: beyond, in a map (finding a
/// repeated key in a list is a walk over it).
const FLAT_KEYS: usize = 64;

/// An object's fields as they are read: in a list while few, else in a map.
enum Fields<'de> {
    /// The fields, and a bit per key's [`key_bit`] (a key whose bit is not set yet is new).
    List(Vec<(Cow<'de, str>, Value)>, u64),
    Map(Map<String, Value>),
}

/// One of 64 bits for a key, from its length and two of its bytes: a repeated key is looked
/// for only when its bit is set already (a few of a run's dozen keys), not for every key.
fn key_bit(key: &str) -> u64 {
    let b = key.as_bytes();
    let mix = b
        .len()
        .wrapping_mul(31)
        .wrapping_add(usize::from(b.last().copied().unwrap_or(0)).wrapping_mul(7))
        .wrapping_add(usize::from(b.get(b.len() / 2).copied().unwrap_or(0)));
    1 << (mix % 64)
}

impl<'de> Fields<'de> {
    /// Adds a field as a map holds it: a repeated key keeps its first place and takes the
    /// last value (serde_json's map with `preserve_order`).
    fn set(&mut self, key: Cow<'de, str>, v: Value) {
        match self {
            Fields::List(list, bits) => {
                let bit = key_bit(&key);
                let old = if *bits & bit == 0 {
                    None
                } else {
                    list.iter_mut().find(|(k, _)| *k == key)
                };
                *bits |= bit;
                if let Some((_, old)) = old {
                    *old = v;
                } else if list.len() < FLAT_KEYS {
                    list.push((key, v));
                } else {
                    let mut map: Map<String, Value> = std::mem::take(list)
                        .into_iter()
                        .map(|(k, v)| (k.into_owned(), v))
                        .collect();
                    map.insert(key.into_owned(), v);
                    *self = Fields::Map(map);
                }
            }
            Fields::Map(map) => {
                map.insert(key.into_owned(), v);
            }
        }
    }

    fn into_flat(self) -> Flat<'de> {
        match self {
            Fields::List(list, _) => Flat::Fields(list),
            Fields::Map(map) => Flat::Value(Value::Object(map)),
        }
    }
}

impl FlatDoc<'_> {
    fn plain(value: Value) -> Self {
        FlatDoc {
            body: Flat::Value(value),
            arrays: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_lifted_and_keys_kept() {
        let t = r#"{"a": 1, "ttfts": [0.1, "inf", null], "itls": [[0.01, 0.02], [], 5],
                   "errors": ["", "boom"], "generated_texts": ["x"], "input_lens": 3}"#;
        let d: Doc = serde_json::from_str(t).unwrap();
        assert_eq!(d.value["a"], 1);
        assert!(d.value.get("ttfts").is_some());
        let a = d.arrays.unwrap();
        let ttfts = a.ttfts.unwrap();
        assert_eq!(ttfts[..2], [0.1, f64::INFINITY]);
        assert!(ttfts[2].is_nan() && ttfts.len() == 3);
        assert_eq!(a.itls, Some(vec![vec![0.01, 0.02], vec![], vec![]]));
        assert_eq!(a.errors, Some(vec![None, Some("boom".into())]));
        assert_eq!(a.malformed, vec!["input_lens".to_string()]);
    }
}
