// A vLLM serving JSON on one line, as `vllm bench serve --save-result --save-detailed` writes it,
// generated at run time (never committed): the browser bench's ~120 MB file of 20 million
// per-request values and the exactness test's smaller one. The layout and the values are those of
// scripts/bench-ingest-json.sh (summary fields, then `input_lens`, `output_lens`, `ttfts`,
// `itls`, `generated_texts`, `errors`, `start_times`, `latencies`), so the native and the
// browser figures are of the same file. Self-contained functions, so a page can build the file
// from their source (`servingBlobSource`) instead of receiving it through the test driver.

/**
 * The text of request `i`'s fields for a run of `k` gaps a request. `varied` (the exactness
 * test's form): request `i` has `k - i % 4` gaps, every 7th none at all, and every 50th (from
 * the 4th) failed with the error "boom"; otherwise every request has `k` gaps and no error, as
 * in the bench script.
 */
export function servingRequest(i, k, varied) {
  const gapCount = varied ? (i % 7 === 5 ? 0 : k - (i % 4)) : k;
  const gaps = [];
  for (let j = 0; j < gapCount; j++) gaps.push((0.011 + ((i + j * 7) % 31) / 1000).toFixed(3));
  return {
    input: '1024',
    output: String(k + 1),
    ttft: (0.03 + (i % 97) / 1000).toFixed(4),
    gaps,
    error: varied && i % 50 === 3 ? 'boom' : '',
    start: (1000 + i / 163.2).toFixed(4),
    latency: (3.9 + (i % 89) / 100).toFixed(4),
  };
}

/** The file's parts (strings, to be joined or put in a Blob) for `n` requests. */
export function servingParts(n, k, varied) {
  const parts = [
    `{"date": "20250301-101500", "endpoint_type": "vllm", "backend": "vllm", "label": null, "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": ${n}, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": 256, "duration": 612.5, "completed": ${n}, "failed": 0, "total_input_tokens": ${n * 1024}, "total_output_tokens": ${n * (k + 1)}, "request_throughput": 163.2, "output_throughput": 32150.4, "total_token_throughput": 199300.1, "mean_ttft_ms": 51.2, "median_ttft_ms": 48.9, "p99_ttft_ms": 130.5, "mean_itl_ms": 19.1, "p99_itl_ms": 34.0`,
  ];
  // One list at a time, a part per 1,000 requests: no string of the whole file is built.
  const list = (key, field) => {
    parts.push(`, "${key}": [`);
    for (let at = 0; at < n; at += 1000) {
      const items = [];
      for (let i = at; i < Math.min(n, at + 1000); i++) items.push(field(servingRequest(i, k, varied)));
      parts.push((at ? ',' : '') + items.join(','));
    }
    parts.push(']');
  };
  list('input_lens', (q) => q.input);
  list('output_lens', (q) => q.output);
  list('ttfts', (q) => q.ttft);
  list('itls', (q) => `[${q.gaps.join(',')}]`);
  list('generated_texts', () => '"tok tok tok"');
  list('errors', (q) => JSON.stringify(q.error));
  list('start_times', (q) => q.start);
  list('latencies', (q) => q.latency);
  parts.push('}\n');
  return parts;
}

/** Source of a function body returning `servingParts`, for `new Function` in a page. */
export const servingPartsSource = `${servingRequest.toString()}\nreturn ${servingParts.toString()};`;

/**
 * What the explorer should show for such a file, computed here from the same fields: the
 * values of each per-request quantity (successful requests only, as the distribution view
 * takes them), in ms where the file has seconds.
 */
export function servingValues(n, k, varied) {
  const ttft = [];
  const itl = [];
  for (let i = 0; i < n; i++) {
    const q = servingRequest(i, k, varied);
    if (q.error) continue;
    ttft.push(Number(q.ttft) * 1000);
    for (const g of q.gaps) itl.push(Number(g) * 1000);
  }
  return { ttft, itl };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The browser bench's part for the large serving JSON: in a browser of its own (so its renderer
 * process is the page's and its parse worker's alone), builds the `requests`-request file in
 * the page (`itls` gaps each; defaults as scripts/bench-ingest-json.sh: 100,000 and 196, about
 * 20 million per-request values, 124 MB), drops it and measures drop -> first chart, the
 * longest main-thread task meanwhile, and memory: the renderer process's resident size (polled
 * every ~100 ms from /proc: the page and its worker, which runs inside it), the parse worker's
 * wasm memory when it has sent everything (wasm memory only grows, so that is its peak: the
 * build in `dist` is served with its worker's entry script extended to post it, a `memory`
 * message the page ignores) and the page's wasm memory (from Trunk's start event).
 * `serveDist`, `launch` (harness.mjs) and `rendererRss` (tidy.mjs) come from the caller.
 */
export async function benchServing({ serveDist, launch, rendererRss, dist, requests = 100_000, itls = 196 }) {
  const { readFile } = await import('node:fs/promises');
  const { join, resolve } = await import('node:path');
  const entry = await readFile(join(resolve(import.meta.dirname, '..', '..', dist), 'parse-worker.js'), 'utf8');
  const server = await serveDist(dist, '/', {
    '/parse-worker.js': (req, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(`${entry}
{
  const parseOne = self.onmessage;
  self.onmessage = async (event) => {
    await parseOne(event);
    self.postMessage({ kind: 'memory', bytes: (await ready).memory.buffer.byteLength });
  };
}
`);
    },
  });
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('pageerror', (e) => console.error('page error:', String(e).slice(0, 300)));
    page.on('crash', () => console.error('the page crashed'));
    await page.addInitScript(() => {
      addEventListener('TrunkApplicationStarted', (e) => {
        window.__pageWasm = e.detail.wasm;
      });
      const Real = window.Worker;
      window.__workerWasm = 0;
      window.Worker = class extends Real {
        constructor(...args) {
          super(...args);
          this.addEventListener('message', (ev) => {
            if (ev.data?.kind === 'memory') window.__workerWasm = Math.max(window.__workerWasm, ev.data.bytes);
          });
        }
      };
    });
    await page.goto(server.url);
    await page.waitForSelector('#empty-state');
    const size = await page.evaluate(({ src, n, k }) => {
      window.__servingFile = new File(new Function(src)()(n, k, false), 'vllm-serving-100k.json');
      return window.__servingFile.size;
    }, { src: servingPartsSource, n: requests, k: itls });
    // The generated text is garbage now: collect it before the baseline.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    await sleep(1000);
    const wasmBytes = () => page.evaluate(() => window.__pageWasm?.memory?.buffer?.byteLength ?? 0);
    const rssEmpty = await rendererRss();
    const pageWasmEmpty = await wasmBytes();
    // Each JS heap's ArrayBuffer memory (`Runtime.getHeapUsage`'s backingStorageSize: the
    // worker's file slices and the messages between the two, freed when that heap's garbage
    // collector runs), the page's from its own session and the worker's through the browser's
    // (`Target.attachToTarget` without flattening: a message relayed to it).
    const isolates = await isolateSampler(browser, cdp);
    let polling = true;
    let rssPeak = rssEmpty;
    const poll = (async () => {
      while (polling) {
        rssPeak = Math.max(rssPeak, await rendererRss());
        await isolates.sample();
        await sleep(100);
      }
    })();
    const load = await page.evaluate(async () => {
      const longTasks = [];
      const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => [e.startTime, e.duration])));
      observer.observe({ type: 'longtask' });
      const dt = new DataTransfer();
      dt.items.add(window.__servingFile);
      await new Promise((r) => requestAnimationFrame(r));
      const t0 = performance.now();
      document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        const d = document.getElementById('chart')?.data;
        if (d && d.length && d.some((t) => t.x.length)) break;
        const failed = document.querySelector('#file-list li.failed .error');
        if (failed) throw new Error(failed.textContent);
        if (performance.now() - t0 > 300000) throw new Error('no chart after 300 s');
      }
      const ms = performance.now() - t0;
      await new Promise((r) => setTimeout(r, 100));
      observer.disconnect();
      const after = longTasks.filter(([start]) => start >= t0).map(([, d]) => d);
      return { ms, longest: Math.max(0, ...after), count: document.querySelector('#file-list > li .count')?.textContent };
    });
    polling = false;
    await poll;
    const rssLoaded = await rendererRss();
    const pageWasm = await wasmBytes();
    await cdp.send('HeapProfiler.collectGarbage');
    await sleep(1000);
    const rssCollected = await rendererRss();
    const heapCollected = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
    const workerWasm = await page.evaluate(() => window.__workerWasm);
    // Then the distribution of every inter-token gap (the CDF and percentiles of all of them):
    // the time from choosing it to its table, and the page's wasm memory after.
    await page.click('button[data-view="distribution"]');
    await page.waitForSelector('#percentile-table');
    const t0 = Date.now();
    await page.selectOption('#dist-quantity', 'itl_ms');
    await page.waitForFunction(
      (n) => document.querySelector('#percentile-table tbody tr:first-child td:nth-child(2)')?.textContent === String(n),
      requests * itls,
      { timeout: 300000 },
    );
    const itlMs = Date.now() - t0;
    const pageWasmItl = await wasmBytes();
    const rssItl = await rendererRss();
    return { size, requests, values: requests * (itls + 7), gaps: requests * itls, ...load, rssEmpty, rssPeak, rssLoaded, rssCollected, heapCollected, pageWasmEmpty, pageWasm, workerWasm, buffers: isolates.peaks, itlMs, pageWasmItl, rssItl };
  } finally {
    await browser.close();
    server.close();
  }
}

/**
 * Samples the ArrayBuffer memory of the page's JS heap (through `cdp`) and of every worker's
 * (through a browser CDP session); `peaks` holds the largest of each seen, in bytes.
 */
async function isolateSampler(browser, cdp) {
  const session = await browser.newBrowserCDPSession();
  const pending = new Map();
  let nextId = 1;
  session.on('Target.receivedMessageFromTarget', (e) => {
    const m = JSON.parse(e.message);
    pending.get(m.id)?.(m.result ?? null);
    pending.delete(m.id);
  });
  // A worker may end between the question and its answer: no answer within 300 ms is none.
  const ask = (sessionId, method) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    session.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method }) }).catch(() => resolve(null));
    setTimeout(() => { pending.delete(id); resolve(null); }, 300);
  });
  const attached = new Map();
  const peaks = { page: 0, worker: 0 };
  return {
    peaks,
    async sample() {
      const { targetInfos } = await session.send('Target.getTargets');
      for (const t of targetInfos) {
        if (t.type !== 'worker' || attached.has(t.targetId)) continue;
        const got = await session.send('Target.attachToTarget', { targetId: t.targetId, flatten: false }).catch(() => null);
        if (got) attached.set(t.targetId, got.sessionId);
      }
      const page = await cdp.send('Runtime.getHeapUsage').catch(() => null);
      peaks.page = Math.max(peaks.page, page?.backingStorageSize ?? 0);
      for (const id of attached.values()) {
        const w = await ask(id, 'Runtime.getHeapUsage');
        peaks.worker = Math.max(peaks.worker, w?.backingStorageSize ?? 0);
      }
    },
  };
}

/** Prints what `benchServing` measured. */
export function printServing(m) {
  const mb = (b) => (b / 1e6).toFixed(0);
  const x = (b) => (b / m.size).toFixed(2);
  console.log(`  vLLM serving JSON on one line (${m.requests} requests, ${m.values} per-request values, ${(m.size / 1e6).toFixed(1)} MB, ${m.count}):`);
  console.log(`    drop -> first chart ${m.ms.toFixed(0)} ms (${(m.size / 1e6 / (m.ms / 1000)).toFixed(1)} MB/s end to end); longest main-thread task from drop to chart ${m.longest.toFixed(0)} ms`);
  console.log(`    parse worker's wasm memory ${mb(m.workerWasm)} MB (${x(m.workerWasm)}x the file); page's wasm memory ${mb(m.pageWasm)} MB (${x(m.pageWasm)}x; ${mb(m.pageWasmEmpty)} MB before the drop)`);
  console.log(`    ArrayBuffer memory waiting for a collection (largest seen, sampled with the resident size): page ${mb(m.buffers.page)} MB, parse worker ${mb(m.buffers.worker)} MB`);
  console.log(`    renderer process (page + worker) resident: peak ${mb(m.rssPeak)} MB during the load (${x(m.rssPeak)}x the file; ${x(m.rssPeak - m.rssEmpty)}x above the ${mb(m.rssEmpty)} MB before the drop), ${mb(m.rssLoaded)} MB after the first chart, ${mb(m.rssCollected)} MB (${x(m.rssCollected)}x) after a garbage collection; JS heap then ${mb(m.heapCollected)} MB`);
  console.log(`    the distribution of all ${m.gaps} inter-token gaps (CDF and percentiles): ${m.itlMs} ms from choosing it to its table; the page's wasm memory then ${mb(m.pageWasmItl)} MB (${x(m.pageWasmItl)}x the file), the renderer ${mb(m.rssItl)} MB resident`);
}
