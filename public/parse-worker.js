// The parse worker's entry script (see src/bin/benchlens-worker.rs). Trunk builds the worker
// binary as benchlens-worker.js + benchlens-worker_bg.wasm next to this file; both are found
// relative to this script, so the public URL (/ or a sub-path) needs no configuration.
importScripts('./benchlens-worker.js');
const ready = wasm_bindgen({ module_or_path: './benchlens-worker_bg.wasm' });
// A failed start is reported to the page with the next file (below), not as an unhandled error.
ready.catch(() => {});
self.onmessage = async (event) => {
  const { name, bytes } = event.data;
  try {
    await ready;
  } catch (e) {
    self.postMessage({ kind: 'error', message: `${name}: the parser could not start (${e})` });
    return;
  }
  wasm_bindgen.parse(name, new Uint8Array(bytes));
};
