//! A run's per-request detail sent apart from its record, a few thousand requests a message
//! ([`encode_requests`], [`append_requests`]): a vLLM serving JSON of 100,000 requests and 20
//! million inter-token gaps is one record, which as one record batch was one message of 160 MB
//! that the page decoded in one task. Each field is a column over the batch's requests: the
//! numbers raw little-endian (`f64`, or `u64` for token counts), present ones only, after a
//! byte that says whether all, none or some are present (then a byte per request); the gaps as
//! one count per request and then all their values end to end; texts (error, error kind) only
//! where some request has one.

use super::*;

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

/// Encodes `requests`, the next of record `record`'s per-request detail (the record itself
/// went in a record batch before, without them).
pub fn encode_requests(record: usize, requests: &[RequestDetail]) -> Vec<u8> {
    let gaps: usize = requests.iter().map(|q| q.itl_ms.len()).sum();
    let mut out = Vec::with_capacity(16 + requests.len() * 60 + 8 * gaps);
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
    for q in requests {
        put_u32(&mut out, q.itl_ms.len() as u32);
    }
    for q in requests {
        for v in &q.itl_ms {
            put_f64(&mut out, *v);
        }
    }
    out
}

/// Decodes a batch [`encode_requests`] wrote and appends its requests to the record it names
/// in `records`; returns how many it held. A damaged batch, or one naming a record that is not
/// there, changes nothing.
pub fn append_requests(bytes: &[u8], records: &mut [Record]) -> Result<usize, WireError> {
    let mut reader = Reader { bytes, at: 0 };
    let record = reader.u32()? as usize;
    if record >= records.len() {
        return Err(WireError::NoSuchRecord { at: 0 });
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
    let lens = reader.u32s(n)?;
    let mut decoded = Vec::with_capacity(n);
    let fields = input_len
        .into_iter()
        .zip(output_len)
        .zip(ttft_ms.into_iter().zip(e2el_ms))
        .zip(intended_s.into_iter().zip(sent_s))
        .zip(error.into_iter().zip(error_kind))
        .zip(lens);
    for (((((i, o), (t, e)), (intended, sent)), (error, error_kind)), len) in fields {
        let raw = reader.take((len as usize).saturating_mul(8))?;
        decoded.push(RequestDetail {
            input_len: count(i),
            output_len: count(o),
            ttft_ms: real(t),
            itl_ms: raw.chunks_exact(8).map(f64_of).collect(),
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
        RequestDetail {
            input_len: (!i.is_multiple_of(3)).then_some(100 + i as u64),
            output_len: Some(7),
            ttft_ms: Some(0.1 * i as f64),
            itl_ms: (0..i % 5).map(|j| j as f64 + 0.25).collect(),
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
            sent += append_requests(&encode_requests(1, batch), &mut records).unwrap();
        }
        assert_eq!(sent, 23);
        assert!(records[0].requests.is_empty());
        assert_eq!(records[1].requests.len(), 23);
        for (a, b) in all.iter().zip(&records[1].requests) {
            assert!(same(a, b), "{a:?} != {b:?}");
        }
        // Fields no request has, and an empty batch.
        let bare = vec![RequestDetail::default(); 3];
        append_requests(&encode_requests(0, &bare), &mut records).unwrap();
        assert_eq!(records[0].requests, bare);
        assert_eq!(
            append_requests(&encode_requests(0, &[]), &mut records),
            Ok(0)
        );
    }

    #[test]
    fn damaged_batches_are_errors_that_change_nothing() {
        let batch: Vec<RequestDetail> = (0..9).map(request).collect();
        let bytes = encode_requests(0, &batch);
        let mut records = vec![Record::default()];
        for cut in 0..bytes.len() {
            assert!(
                append_requests(&bytes[..cut], &mut records).is_err(),
                "{cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            append_requests(&longer, &mut records),
            Err(WireError::TrailingBytes { at: bytes.len() })
        );
        assert_eq!(
            append_requests(&encode_requests(1, &batch), &mut records),
            Err(WireError::NoSuchRecord { at: 0 })
        );
        let mut huge = bytes.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            append_requests(&huge, &mut records),
            Err(WireError::EndsEarly { at: 4 })
        );
        assert!(records[0].requests.is_empty());
    }
}
