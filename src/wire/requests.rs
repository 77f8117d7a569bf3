//! A run's per-request detail sent apart from its record, a few thousand requests a message
//! ([`encode_requests`], [`append_requests`]): a vLLM serving JSON of 100,000 requests and 20
//! million inter-token gaps is one record, which as one record batch was one message of 160 MB
//! that the page decoded in one task. Each field is a column over the batch's requests: the
//! numbers raw little-endian (`f64`, or `u64` for token counts), present ones only, after a
//! byte that says whether all, none or some are present (then a byte per request); the gaps as
//! one count per request and then all their values end to end; texts (error, error kind) only
//! where some request has one.
//!
//! A worker that reads the gaps apart ([`crate::ingest::read_json_stream_gaps_apart`]) sends
//! them ahead, while it reads, as `gaps` messages ([`encode_gaps`]); the page keeps them in
//! order ([`StreamedGaps`]) and the `requests` batches then carry each request's count of gaps
//! only, each request taking the next list waiting. Neither side ever holds the gaps twice.

use super::*;
use crate::model::Gaps;

/// None of the batch's requests has the field.
const NONE: u8 = 0;
/// Every request has it.
const ALL: u8 = 1;
/// Some have it: a byte per request (1 present) follows.
const SOME: u8 = 2;

/// Writes which of `n` requests have a field.
fn put_presence(out: &mut Vec<u8>, present: &[bool]) {
    if present.iter().all(|p| !p) {
        out.push(NONE);
    } else if present.iter().all(|p| *p) {
        out.push(ALL);
    } else {
        out.push(SOME);
        out.extend(present.iter().map(|p| u8::from(*p)));
    }
}

/// Reads which of `n` requests have a field.
fn presence(reader: &mut Reader<'_>, n: usize) -> Result<Vec<bool>, WireError> {
    let at = reader.at;
    Ok(match reader.u8()? {
        NONE => vec![false; n],
        ALL => vec![true; n],
        SOME => reader.take(n)?.iter().map(|b| *b != 0).collect(),
        _ => return Err(WireError::UnknownValueKind { at }),
    })
}

fn put_numbers(out: &mut Vec<u8>, values: impl Iterator<Item = Option<[u8; 8]>> + Clone) {
    let present: Vec<bool> = values.clone().map(|v| v.is_some()).collect();
    put_presence(out, &present);
    for v in values.flatten() {
        out.extend_from_slice(&v);
    }
}

fn numbers(reader: &mut Reader<'_>, n: usize) -> Result<Vec<Option<[u8; 8]>>, WireError> {
    let present = presence(reader, n)?;
    let count = present.iter().filter(|p| **p).count();
    let mut raw = reader.take(count.saturating_mul(8))?.chunks_exact(8);
    Ok(present
        .iter()
        .map(|p| {
            p.then(|| raw.next())
                .flatten()
                .map(|b| [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        })
        .collect())
}

fn put_texts<'a>(out: &mut Vec<u8>, texts: impl Iterator<Item = Option<&'a str>> + Clone) {
    let present: Vec<bool> = texts.clone().map(|t| t.is_some()).collect();
    put_presence(out, &present);
    for t in texts.flatten() {
        put_str(out, t);
    }
}

fn texts(reader: &mut Reader<'_>, n: usize) -> Result<Vec<Option<String>>, WireError> {
    let present = presence(reader, n)?;
    present
        .iter()
        .map(|p| match p {
            true => reader.str().map(|s| Some(s.to_string())),
            false => Ok(None),
        })
        .collect()
}

/// The gaps follow in the batch.
const GAPS_INLINE: u8 = 0;
/// The gaps were sent ahead ([`encode_gaps`]): the batch has each request's count only.
const GAPS_AHEAD: u8 = 1;

/// Where a batch's requests' inter-token gaps are.
#[derive(Clone, Copy, Debug)]
pub enum GapsIn<'a> {
    /// In each request's `itl_ms`, sent with the batch.
    Requests,
    /// Sent ahead ([`encode_gaps`]); these are the requests' counts, one a request (their
    /// `itl_ms` are not read).
    Ahead(&'a [u32]),
}

/// Encodes `requests`, the next of record `record`'s per-request detail (the record itself
/// went in a record batch before, without them). With [`GapsIn::Ahead`] whose counts are not
/// one a request, the requests' own gaps go with the batch.
pub fn encode_requests(record: usize, requests: &[RequestDetail], gaps_in: GapsIn<'_>) -> Vec<u8> {
    let ahead = match gaps_in {
        GapsIn::Ahead(lens) if lens.len() == requests.len() => Some(lens),
        _ => None,
    };
    let gaps: usize = match ahead {
        Some(_) => 0,
        None => requests.iter().map(|q| q.itl_ms.len()).sum(),
    };
    let mut out = Vec::with_capacity(17 + requests.len() * 60 + 8 * gaps);
    out.push(match ahead {
        Some(_) => GAPS_AHEAD,
        None => GAPS_INLINE,
    });
    put_u32(&mut out, record as u32);
    put_u32(&mut out, requests.len() as u32);
    let qs = requests.iter();
    put_numbers(
        &mut out,
        qs.clone().map(|q| q.input_len.map(u64::to_le_bytes)),
    );
    put_numbers(
        &mut out,
        qs.clone().map(|q| q.output_len.map(u64::to_le_bytes)),
    );
    put_numbers(
        &mut out,
        qs.clone().map(|q| q.ttft_ms.map(f64::to_le_bytes)),
    );
    put_numbers(
        &mut out,
        qs.clone().map(|q| q.e2el_ms.map(f64::to_le_bytes)),
    );
    put_numbers(
        &mut out,
        qs.clone().map(|q| q.intended_s.map(f64::to_le_bytes)),
    );
    put_numbers(&mut out, qs.clone().map(|q| q.sent_s.map(f64::to_le_bytes)));
    put_texts(&mut out, qs.clone().map(|q| q.error.as_deref()));
    put_texts(&mut out, qs.clone().map(|q| q.error_kind.as_deref()));
    match ahead {
        Some(lens) => put_u32s(&mut out, lens),
        None => {
            for q in requests {
                put_u32(&mut out, q.itl_ms.len() as u32);
            }
            for q in requests {
                put_gaps(&mut out, &q.itl_ms);
            }
        }
    }
    out
}

/// Encodes gap lists sent ahead of their requests: their count, each one's length, then
/// each list as it is held ([`Gaps`]: integers where its values are short decimals).
pub fn encode_gaps(lists: &[Gaps]) -> Vec<u8> {
    let bytes: usize = lists.iter().map(|g| 3 + g.heap_bytes()).sum();
    let mut out = Vec::with_capacity(4 + 4 * lists.len() + bytes);
    put_u32(&mut out, lists.len() as u32);
    for g in lists {
        put_u32(&mut out, g.len() as u32);
    }
    for g in lists {
        put_gaps(&mut out, g);
    }
    out
}

/// Gap lists sent ahead ([`encode_gaps`]) that wait for the `requests` batches taking them,
/// in order.
#[derive(Debug, Default)]
pub struct StreamedGaps {
    lists: std::collections::VecDeque<Gaps>,
}

impl StreamedGaps {
    /// Decodes a [`encode_gaps`] message and keeps its lists after those waiting; returns how
    /// many it held. A damaged message changes nothing.
    pub fn append(&mut self, bytes: &[u8]) -> Result<usize, WireError> {
        let mut reader = Reader { bytes, at: 0 };
        let at = reader.at;
        let n = reader.u32()? as usize;
        if n > bytes.len() / 4 {
            return Err(WireError::EndsEarly { at });
        }
        let lens = reader.u32s(n)?;
        let mut lists = Vec::with_capacity(n);
        for len in lens {
            lists.push(gaps(&mut reader, len as usize)?);
        }
        if reader.at != bytes.len() {
            return Err(WireError::TrailingBytes { at: reader.at });
        }
        self.lists.extend(lists);
        Ok(n)
    }

    /// Lists waiting.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// Whether no list waits.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Drops every list waiting (and the room they took).
    pub fn clear(&mut self) {
        self.lists = std::collections::VecDeque::new();
    }
}

/// Decodes a batch [`encode_requests`] wrote and appends its requests to the record it names
/// in `records`; returns how many it held. A batch whose gaps were sent ahead takes its
/// requests' lists from `ahead`, in order. A damaged batch, one naming a record that is not
/// there, or one whose counts of gaps are not those of the lists waiting, changes nothing.
pub fn append_requests(
    bytes: &[u8],
    records: &mut [Record],
    ahead: &mut StreamedGaps,
) -> Result<usize, WireError> {
    let mut reader = Reader { bytes, at: 0 };
    let gaps_ahead = match reader.u8()? {
        GAPS_INLINE => false,
        GAPS_AHEAD => true,
        _ => return Err(WireError::UnknownValueKind { at: 0 }),
    };
    let record_at = reader.at;
    let record = reader.u32()? as usize;
    if record >= records.len() {
        return Err(WireError::NoSuchRecord { at: record_at });
    }
    let at = reader.at;
    let n = reader.u32()? as usize;
    // Every request takes at least 4 bytes (its count of gaps): a larger count is damage.
    if n > bytes.len() / 4 {
        return Err(WireError::EndsEarly { at });
    }
    let count = |v: Option<[u8; 8]>| v.map(u64::from_le_bytes);
    let real = |v: Option<[u8; 8]>| v.map(f64::from_le_bytes);
    let input_len = numbers(&mut reader, n)?;
    let output_len = numbers(&mut reader, n)?;
    let ttft_ms = numbers(&mut reader, n)?;
    let e2el_ms = numbers(&mut reader, n)?;
    let intended_s = numbers(&mut reader, n)?;
    let sent_s = numbers(&mut reader, n)?;
    let error = texts(&mut reader, n)?;
    let error_kind = texts(&mut reader, n)?;
    let lens_at = reader.at;
    let lens = reader.u32s(n)?;
    if gaps_ahead
        && (ahead.len() < n
            || lens
                .iter()
                .zip(&ahead.lists)
                .any(|(&len, list)| len as usize != list.len()))
    {
        return Err(WireError::GapsNotAhead { at: lens_at });
    }
    let mut decoded = Vec::with_capacity(n);
    let fields = input_len
        .into_iter()
        .zip(output_len)
        .zip(ttft_ms.into_iter().zip(e2el_ms))
        .zip(intended_s.into_iter().zip(sent_s))
        .zip(error.into_iter().zip(error_kind))
        .zip(lens);
    for (((((i, o), (t, e)), (intended, sent)), (error, error_kind)), len) in fields {
        let itl_ms = match gaps_ahead {
            // Taken only once the whole batch is read (below): a stand-in until then.
            true => Gaps::default(),
            false => gaps(&mut reader, len as usize)?,
        };
        decoded.push(RequestDetail {
            input_len: count(i),
            output_len: count(o),
            ttft_ms: real(t),
            itl_ms,
            e2el_ms: real(e),
            error,
            intended_s: real(intended),
            sent_s: real(sent),
            error_kind,
        });
    }
    if reader.at != bytes.len() {
        return Err(WireError::TrailingBytes { at: reader.at });
    }
    if gaps_ahead {
        // Checked above: `n` lists wait, each as long as its request's count.
        for q in &mut decoded {
            q.itl_ms = ahead.lists.pop_front().unwrap_or_default();
        }
    }
    let target = &mut records[record].requests;
    target.reserve(decoded.len());
    target.extend(decoded);
    Ok(n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn request(i: usize) -> RequestDetail {
        // Gaps held each way: as they are, as small integers, as signed ones of seconds.
        let values: Vec<f64> = (0..i % 5).map(|j| j as f64 + 0.25).collect();
        let negative: Vec<f64> = values.iter().map(|v| -v).collect();
        RequestDetail {
            input_len: (!i.is_multiple_of(3)).then_some(100 + i as u64),
            output_len: Some(7),
            ttft_ms: Some(0.1 * i as f64),
            itl_ms: match i % 3 {
                0 => values.into(),
                1 => Gaps::exact(&values),
                _ => Gaps::ms_of_seconds(&negative),
            },
            e2el_ms: i.is_multiple_of(2).then_some(f64::NAN),
            error: (i % 4 == 1).then(|| format!("boom {i}")),
            intended_s: None,
            sent_s: Some(-0.0),
            error_kind: (i % 4 == 1).then(|| "http_503".to_string()),
        }
    }

    fn same(a: &RequestDetail, b: &RequestDetail) -> bool {
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        a.input_len == b.input_len
            && a.output_len == b.output_len
            && bits(a.ttft_ms) == bits(b.ttft_ms)
            && bits(a.e2el_ms) == bits(b.e2el_ms)
            && bits(a.intended_s) == bits(b.intended_s)
            && bits(a.sent_s) == bits(b.sent_s)
            && a.itl_ms
                .iter()
                .map(|v| v.to_bits())
                .eq(b.itl_ms.iter().map(|v| v.to_bits()))
            && a.error == b.error
            && a.error_kind == b.error_kind
    }

    #[test]
    fn batches_append_every_field_bit_for_bit_to_the_named_record() {
        let all: Vec<RequestDetail> = (0..23).map(request).collect();
        let mut records = vec![Record::default(), Record::default()];
        let mut sent = 0;
        for batch in all.chunks(10) {
            sent += append_requests(
                &encode_requests(1, batch, GapsIn::Requests),
                &mut records,
                &mut StreamedGaps::default(),
            )
            .unwrap();
        }
        assert_eq!(sent, 23);
        assert!(records[0].requests.is_empty());
        assert_eq!(records[1].requests.len(), 23);
        for (a, b) in all.iter().zip(&records[1].requests) {
            assert!(same(a, b), "{a:?} != {b:?}");
        }
        // Fields no request has, and an empty batch.
        let bare = vec![RequestDetail::default(); 3];
        append_requests(
            &encode_requests(0, &bare, GapsIn::Requests),
            &mut records,
            &mut StreamedGaps::default(),
        )
        .unwrap();
        assert_eq!(records[0].requests, bare);
        assert_eq!(
            append_requests(
                &encode_requests(0, &[], GapsIn::Requests),
                &mut records,
                &mut StreamedGaps::default()
            ),
            Ok(0)
        );
    }

    #[test]
    fn damaged_batches_are_errors_that_change_nothing() {
        let batch: Vec<RequestDetail> = (0..9).map(request).collect();
        let bytes = encode_requests(0, &batch, GapsIn::Requests);
        let mut records = vec![Record::default()];
        for cut in 0..bytes.len() {
            assert!(
                append_requests(&bytes[..cut], &mut records, &mut StreamedGaps::default()).is_err(),
                "{cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            append_requests(&longer, &mut records, &mut StreamedGaps::default()),
            Err(WireError::TrailingBytes { at: bytes.len() })
        );
        assert_eq!(
            append_requests(
                &encode_requests(1, &batch, GapsIn::Requests),
                &mut records,
                &mut StreamedGaps::default()
            ),
            Err(WireError::NoSuchRecord { at: 1 })
        );
        let mut huge = bytes.clone();
        huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            append_requests(&huge, &mut records, &mut StreamedGaps::default()),
            Err(WireError::EndsEarly { at: 5 })
        );
        assert!(records[0].requests.is_empty());
    }

    #[test]
    fn gaps_sent_ahead_go_to_their_requests_in_order() {
        let all: Vec<RequestDetail> = (0..23).map(request).collect();
        assert!(all
            .iter()
            .any(|q| matches!(q.itl_ms.parts(), GapsParts::Small { .. })));
        assert!(all
            .iter()
            .any(|q| matches!(q.itl_ms.parts(), GapsParts::Wide { .. })));
        let lens: Vec<u32> = all.iter().map(|q| q.itl_ms.len() as u32).collect();
        let lists: Vec<Gaps> = all.iter().map(|q| q.itl_ms.clone()).collect();
        let mut ahead = StreamedGaps::default();
        // Ahead in batches of another size than the requests'.
        for part in lists.chunks(7) {
            assert_eq!(ahead.append(&encode_gaps(part)), Ok(part.len()));
        }
        assert_eq!(ahead.len(), 23);
        let mut records = vec![Record::default()];
        let bare: Vec<RequestDetail> = all
            .iter()
            .map(|q| RequestDetail {
                itl_ms: Gaps::default(),
                ..q.clone()
            })
            .collect();
        for (k, (batch, counts)) in bare.chunks(10).zip(lens.chunks(10)).enumerate() {
            let bytes = encode_requests(0, batch, GapsIn::Ahead(counts));
            // The batch carries the counts, not the values.
            let whole = &all[10 * k..10 * k + batch.len()];
            let values: usize = whole
                .iter()
                .map(|q| {
                    let mut out = Vec::new();
                    put_gaps(&mut out, &q.itl_ms);
                    out.len()
                })
                .sum();
            assert_eq!(
                encode_requests(0, whole, GapsIn::Requests).len(),
                bytes.len() + values
            );
            append_requests(&bytes, &mut records, &mut ahead).unwrap();
        }
        assert!(ahead.is_empty());
        for (a, b) in all.iter().zip(&records[0].requests) {
            assert!(same(a, b), "{a:?} != {b:?}");
        }
        // Counts that are not one a request: the requests' own gaps go with the batch.
        let inline = encode_requests(0, &all[..3], GapsIn::Ahead(&[1]));
        let mut records = vec![Record::default()];
        append_requests(&inline, &mut records, &mut StreamedGaps::default()).unwrap();
        assert!(records[0]
            .requests
            .iter()
            .zip(&all)
            .all(|(a, b)| same(a, b)));
    }

    #[test]
    fn gaps_travel_as_integers_where_they_can_and_damage_is_refused() {
        // Three-digit ms as `f64`: sent as 2-byte integers, read back bit for bit.
        let ms: Vec<f64> = (0..200).map(|k| f64::from(k) * 0.125 + 7.5).collect();
        let lists = [
            Gaps::from(ms.clone()),
            Gaps::ms_of_seconds(&[0.023, 0.0117]),
        ];
        let bytes = encode_gaps(&lists);
        assert_eq!(bytes.len(), 4 + 2 * 4 + (3 + 2 * 200) + (3 + 2 * 2));
        let mut ahead = StreamedGaps::default();
        assert_eq!(ahead.append(&bytes), Ok(2));
        let back: Vec<u64> = ahead.lists[0].iter().map(f64::to_bits).collect();
        assert_eq!(back, ms.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert_eq!(
            ahead.lists[1].to_vec(),
            vec![0.023 * 1000.0, 0.0117 * 1000.0]
        );
        // The first list's kind byte, then its powers of ten.
        let kind_at = 4 + 2 * 4;
        for (at, value) in [(kind_at, 9), (kind_at + 1, 23), (kind_at + 2, 200)] {
            let mut bad = bytes.clone();
            bad[at] = value;
            let mut ahead = StreamedGaps::default();
            assert_eq!(
                ahead.append(&bad),
                Err(WireError::UnknownValueKind { at: kind_at }),
                "byte {at} = {value}"
            );
            assert!(ahead.is_empty());
        }
    }

    #[test]
    fn requests_whose_gaps_are_not_ahead_change_nothing() {
        let all: Vec<RequestDetail> = (0..9).map(request).collect();
        let lens: Vec<u32> = all.iter().map(|q| q.itl_ms.len() as u32).collect();
        let lists: Vec<Gaps> = all.iter().map(|q| q.itl_ms.clone()).collect();
        let gaps = encode_gaps(&lists);
        for cut in 0..gaps.len() {
            let mut ahead = StreamedGaps::default();
            assert!(ahead.append(&gaps[..cut]).is_err(), "{cut}");
            assert!(ahead.is_empty());
        }
        let mut longer = gaps.clone();
        longer.push(0);
        assert!(StreamedGaps::default().append(&longer).is_err());
        let bytes = encode_requests(0, &all, GapsIn::Ahead(&lens));
        let mut records = vec![Record::default()];
        // Nothing waits, or fewer lists than requests, or lists of other lengths.
        let mut ahead = StreamedGaps::default();
        let wrong = append_requests(&bytes, &mut records, &mut ahead);
        assert!(
            matches!(wrong, Err(WireError::GapsNotAhead { .. })),
            "{wrong:?}"
        );
        ahead.append(&encode_gaps(&lists[..8])).unwrap();
        assert!(append_requests(&bytes, &mut records, &mut ahead).is_err());
        assert_eq!(ahead.len(), 8);
        let mut shifted = StreamedGaps::default();
        let mut other = lists.clone();
        other.rotate_left(1);
        shifted.append(&encode_gaps(&other)).unwrap();
        assert!(append_requests(&bytes, &mut records, &mut shifted).is_err());
        assert_eq!(shifted.len(), 9);
        assert!(records[0].requests.is_empty());
        // A mode byte that is neither.
        let mut odd = bytes.clone();
        odd[0] = 7;
        assert_eq!(
            append_requests(&odd, &mut records, &mut shifted),
            Err(WireError::UnknownValueKind { at: 0 })
        );
    }
}
