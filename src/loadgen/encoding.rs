//! A reply's `Content-Encoding`: what the client does with a compressed event stream. The client
//! asks for no encoding, but a proxy or a server may compress anyway. gzip (`x-gzip`) and
//! deflate (zlib-wrapped as RFC 9110 says, or raw as some servers send it) are decoded as they
//! arrive (flate2 on miniz_oxide, pure Rust); any other encoding (`br`, `zstd`, ...) is named, so
//! the request fails as `compressed_stream` instead of as an empty or malformed stream. Pure
//! (no I/O, no clock). Must not import app code.

use std::io::Write;

use flate2::write::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// Compressed bytes decoded at a time: deflate expands at most about 1,032 to 1, so one piece
/// yields at most about half a megabyte however much one read brought (a decompression bomb
/// reaches the event parser, whose own limits apply, in bounded steps).
const PIECE_BYTES: usize = 512;

/// How a reply's body is decoded.
pub enum BodyDecoder {
    /// No encoding (absent, `identity`): bytes pass through.
    Identity,
    /// gzip, one member or several.
    Gzip(Box<MultiGzDecoder<Vec<u8>>>),
    /// deflate, until its first byte tells zlib-wrapped from raw.
    DeflateUnknown,
    /// deflate with the zlib wrapper.
    Zlib(Box<ZlibDecoder<Vec<u8>>>),
    /// Raw deflate.
    Raw(Box<DeflateDecoder<Vec<u8>>>),
}

impl std::fmt::Debug for BodyDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl BodyDecoder {
    /// The decoder of a `Content-Encoding` header value; `Err` names an encoding this client
    /// cannot decode (`br`, `zstd`, or several stacked).
    pub fn for_header(value: Option<&str>) -> Result<BodyDecoder, String> {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(BodyDecoder::Identity);
        };
        match v.to_ascii_lowercase().as_str() {
            "identity" => Ok(BodyDecoder::Identity),
            "gzip" | "x-gzip" => Ok(BodyDecoder::Gzip(Box::new(MultiGzDecoder::new(Vec::new())))),
            "deflate" => Ok(BodyDecoder::DeflateUnknown),
            _ => Err(v.to_string()),
        }
    }

    /// The encoding's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            BodyDecoder::Identity => "identity",
            BodyDecoder::Gzip(_) => "gzip",
            BodyDecoder::DeflateUnknown | BodyDecoder::Zlib(_) | BodyDecoder::Raw(_) => "deflate",
        }
    }

    /// Whether bytes pass through unchanged.
    pub fn is_identity(&self) -> bool {
        matches!(self, BodyDecoder::Identity)
    }

    /// Decodes `data`, handing the decoded bytes to `sink` in bounded pieces; stops at the
    /// first `Err` of `sink` and returns it. A corrupt stream is `Err(Left(message))`.
    pub fn decode<E>(
        &mut self,
        data: &[u8],
        mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), DecodeError<E>> {
        if let BodyDecoder::Identity = self {
            return sink(data).map_err(DecodeError::Sink);
        }
        for piece in data.chunks(PIECE_BYTES) {
            self.settle(piece);
            let out = self.write(piece).map_err(DecodeError::Corrupt)?;
            if !out.is_empty() {
                sink(&out).map_err(DecodeError::Sink)?;
            }
        }
        Ok(())
    }

    /// The body ended: the last decoded bytes (and a check that the stream was whole).
    pub fn finish<E>(
        &mut self,
        sink: impl FnOnce(&[u8]) -> Result<(), E>,
    ) -> Result<(), DecodeError<E>> {
        let name = self.name();
        let corrupt = |e: std::io::Error| DecodeError::Corrupt(format!("{name}: {e}"));
        let out = match self {
            BodyDecoder::Identity | BodyDecoder::DeflateUnknown => return Ok(()),
            BodyDecoder::Gzip(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
            BodyDecoder::Zlib(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
            BodyDecoder::Raw(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
        }
        .map_err(corrupt)?;
        if out.is_empty() {
            return Ok(());
        }
        sink(&out).map_err(DecodeError::Sink)
    }

    /// deflate: the first byte tells a zlib header (compression method 8 in its low bits, and
    /// the two header bytes a multiple of 31, checked by the decoder) from raw deflate.
    fn settle(&mut self, first: &[u8]) {
        let Some(&b) = first.first() else {
            return;
        };
        if matches!(self, BodyDecoder::DeflateUnknown) {
            *self = if b & 0x0f == 8 && b >> 4 <= 7 {
                BodyDecoder::Zlib(Box::new(ZlibDecoder::new(Vec::new())))
            } else {
                BodyDecoder::Raw(Box::new(DeflateDecoder::new(Vec::new())))
            };
        }
    }

    /// Feeds one piece and takes what it decoded.
    fn write(&mut self, piece: &[u8]) -> Result<Vec<u8>, String> {
        fn run<W: Write>(w: &mut W, piece: &[u8]) -> std::io::Result<()> {
            w.write_all(piece)?;
            w.flush()
        }
        let name = self.name();
        let out = match self {
            BodyDecoder::Identity => return Ok(piece.to_vec()),
            BodyDecoder::DeflateUnknown => return Ok(Vec::new()),
            BodyDecoder::Gzip(d) => run(d.as_mut(), piece).map(|()| std::mem::take(d.get_mut())),
            BodyDecoder::Zlib(d) => run(d.as_mut(), piece).map(|()| std::mem::take(d.get_mut())),
            BodyDecoder::Raw(d) => run(d.as_mut(), piece).map(|()| std::mem::take(d.get_mut())),
        };
        out.map_err(|e| format!("{name}: {e}"))
    }
}

/// Why decoding stopped.
#[derive(Debug, PartialEq)]
pub enum DecodeError<E> {
    /// The compressed bytes are not valid (the message names the encoding).
    Corrupt(String),
    /// The sink said stop.
    Sink(E),
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// Decodes `data` read `step` bytes at a time.
    fn decode_in_steps(mut d: BodyDecoder, data: &[u8], step: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut sink = |b: &[u8]| -> Result<(), ()> {
            out.extend_from_slice(b);
            Ok(())
        };
        for read in data.chunks(step) {
            d.decode(read, &mut sink).map_err(|e| format!("{e:?}"))?;
        }
        d.finish(&mut sink).map_err(|e| format!("{e:?}"))?;
        Ok(out)
    }

    const EVENTS: &[u8] = b"data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n";

    #[test]
    fn gzip_and_both_deflates_decode_read_by_read() {
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::fast());
        zlib.write_all(EVENTS).unwrap();
        let zlib = zlib.finish().unwrap();
        let mut raw = DeflateEncoder::new(Vec::new(), Compression::fast());
        raw.write_all(EVENTS).unwrap();
        let raw = raw.finish().unwrap();
        for step in [1, 7, 4096] {
            for (header, bytes) in [
                ("gzip", gzip(EVENTS)),
                ("deflate", zlib.clone()),
                ("deflate", raw.clone()),
            ] {
                let d = BodyDecoder::for_header(Some(header)).unwrap();
                assert_eq!(
                    decode_in_steps(d, &bytes, step).unwrap(),
                    EVENTS,
                    "{header} {step}"
                );
            }
        }
        // Two gzip members one after the other (a server compressing each flush apart).
        let two = [gzip(b"data: 1\n\n"), gzip(b"data: 2\n\n")].concat();
        let d = BodyDecoder::for_header(Some("x-gzip")).unwrap();
        assert_eq!(
            decode_in_steps(d, &two, 5).unwrap(),
            b"data: 1\n\ndata: 2\n\n"
        );
    }

    #[test]
    fn other_encodings_are_named_and_corrupt_bytes_fail() {
        assert_eq!(BodyDecoder::for_header(Some(" br ")).unwrap_err(), "br");
        assert_eq!(BodyDecoder::for_header(Some("zstd")).unwrap_err(), "zstd");
        assert_eq!(
            BodyDecoder::for_header(Some("gzip, br")).unwrap_err(),
            "gzip, br"
        );
        assert!(BodyDecoder::for_header(None).unwrap().is_identity());
        assert!(BodyDecoder::for_header(Some("Identity"))
            .unwrap()
            .is_identity());
        let d = BodyDecoder::for_header(Some("gzip")).unwrap();
        let e = decode_in_steps(d, b"data: not gzip at all\n\n", 64).unwrap_err();
        assert!(e.contains("gzip"), "{e}");
        // A gzip stream cut short is not whole.
        let cut = gzip(EVENTS);
        let d = BodyDecoder::for_header(Some("gzip")).unwrap();
        assert!(decode_in_steps(d, &cut[..cut.len() - 6], 64).is_err());
    }

    #[test]
    fn a_bomb_reaches_the_sink_in_bounded_pieces() {
        let big = gzip(&vec![b'a'; 8 << 20]);
        let mut d = BodyDecoder::for_header(Some("gzip")).unwrap();
        let mut largest = 0;
        let mut total = 0;
        let mut sink = |b: &[u8]| -> Result<(), ()> {
            largest = largest.max(b.len());
            total += b.len();
            Ok(())
        };
        d.decode(&big, &mut sink).unwrap();
        d.finish(&mut sink).unwrap();
        assert_eq!(total, 8 << 20);
        assert!(largest <= PIECE_BYTES * 1100, "{largest}");
        // The sink stops it at once.
        let mut d = BodyDecoder::for_header(Some("gzip")).unwrap();
        let r = d.decode(&big, |_| Err("enough"));
        assert_eq!(r, Err(DecodeError::Sink("enough")));
    }
}
