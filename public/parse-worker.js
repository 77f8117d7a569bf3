// The parse worker's entry script (see src/bin/benchlens-worker.rs). Trunk builds the worker
// binary as benchlens-worker.js + benchlens-worker_bg.wasm next to this file; both are found
// relative to this script, so the public URL (/ or a sub-path) needs no configuration.
importScripts('./benchlens-worker.js');
const ready = wasm_bindgen({ module_or_path: './benchlens-worker_bg.wasm' });
self.onmessage = async (event) => {
  try {
    await ready;
  } catch (e) {
    self.postMessage({ kind: 'error', message: `the parser could not start (${e})` });
    return;
  }
  const { name, bytes } = event.data;
  wasm_bindgen.parse(name, new Uint8Array(bytes));
};
