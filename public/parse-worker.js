// The parse worker's entry script (see src/bin/benchlens-worker.rs). Trunk builds the worker
// binary as benchlens-worker.js + benchlens-worker_bg.wasm next to this file; both are found
// relative to this script, so the public URL (/ or a sub-path) needs no configuration.
importScripts('./benchlens-worker.js');
const ready = wasm_bindgen({ module_or_path: './benchlens-worker_bg.wasm' });
// A failed start is reported to the page with the next file (below), not as an unhandled error.
ready.catch(() => {});
self.onmessage = async (event) => {
  // A dropped or picked file comes as the File itself (read in slices), other input as bytes.
  const { name, bytes, file } = event.data;
  try {
    await ready;
  } catch (e) {
    self.postMessage({ kind: 'error', message: `${name}: the parser could not start (${e})` });
    return;
  }
  if (file) wasm_bindgen.parse_file(name, file);
  else wasm_bindgen.parse(name, new Uint8Array(bytes));
};
