//! Raw deflate (RFC 1951) through the browser's own `CompressionStream` and
//! `DecompressionStream` ("deflate-raw"; every browser the explorer supports has them), so the
//! page's wasm carries no compressor: used for the files a shared link carries
//! (`crate::share::link_data`, which does everything else).

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, ReadableStream, ReadableStreamDefaultReader, ReadableWritablePair};

use super::browser::js_error_text;

#[wasm_bindgen]
extern "C" {
    /// `new CompressionStream(format)`: a readable/writable pair.
    #[wasm_bindgen(extends = js_sys::Object)]
    type CompressionStream;
    #[wasm_bindgen(catch, constructor)]
    fn new(format: &str) -> Result<CompressionStream, JsValue>;
}

#[wasm_bindgen]
extern "C" {
    /// `new DecompressionStream(format)`.
    #[wasm_bindgen(extends = js_sys::Object)]
    type DecompressionStream;
    #[wasm_bindgen(catch, constructor)]
    fn new(format: &str) -> Result<DecompressionStream, JsValue>;
}

/// Why raw deflate data could not be inflated.
#[derive(Debug)]
pub enum InflateError {
    /// It inflates to more than the limit asked for (reading stopped there).
    TooLarge,
    /// Not a complete deflate stream, or the browser has no `DecompressionStream`: its words.
    Damaged(String),
}

/// The raw deflate of `bytes`, or the browser's reason it could not be made.
pub async fn deflate_raw(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let pair = CompressionStream::new("deflate-raw").map_err(|e| js_error_text(&e))?;
    let mut out = Vec::new();
    read_all(through(bytes, pair.unchecked_ref())?, usize::MAX, &mut out).await?;
    Ok(out)
}

/// `bytes` inflated, stopping (and refusing) once it passes `limit` bytes: a crafted link
/// cannot make the page allocate more.
pub async fn inflate_raw(bytes: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let pair = DecompressionStream::new("deflate-raw")
        .map_err(|e| InflateError::Damaged(js_error_text(&e)))?;
    let stream = through(bytes, pair.unchecked_ref()).map_err(InflateError::Damaged)?;
    let mut out = Vec::new();
    match read_all(stream, limit, &mut out).await {
        Ok(()) => Ok(out),
        Err(_) if out.len() > limit => Err(InflateError::TooLarge),
        Err(e) => Err(InflateError::Damaged(e)),
    }
}

/// A stream of `bytes` piped through the transform `pair`.
fn through(bytes: &[u8], pair: &ReadableWritablePair) -> Result<ReadableStream, String> {
    let blob = Blob::new_with_u8_array_sequence(&Array::of1(&Uint8Array::from(bytes)))
        .map_err(|e| js_error_text(&e))?;
    Ok(blob.stream().pipe_through(pair))
}

/// Reads `stream` to its end into `out`; past `limit` bytes it cancels the stream and errs.
async fn read_all(stream: ReadableStream, limit: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| js_error_text(&e))?;
        if Reflect::get(&chunk, &"done".into()).is_ok_and(|d| d.is_truthy()) {
            return Ok(());
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(|e| js_error_text(&e))?;
        out.extend_from_slice(&Uint8Array::new(&value).to_vec());
        if out.len() > limit {
            let _ = reader.cancel();
            return Err(format!("more than {limit} bytes"));
        }
    }
}
