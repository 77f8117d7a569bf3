// Browser-side speed of the explorer, printed as numbers (no verdicts): drop to first chart for a
// 100k-row tidy CSV and a ~10 MB vLLM serving JSON with per-request arrays, filter change to
// redrawn chart, the longest pause in frames while a file loads, and the wasm sizes (page and
// parse worker); for a 10^6-row tidy CSV (~67 MB) the first chart, the longest main-thread
// task from drop to chart, filter click to redrawn chart, the trade-off view's steps with their
// longest task, and the page's memory; for a ~124 MB vLLM serving JSON on one line (20 million
// per-request values, tests/browser/serving.mjs) the first chart, the longest task and the
// page's, the parse worker's and their process's memory.
// Run by `make bench` after `make build`.
import { wideCsv, dropAndTimeChart } from './wide.mjs';
import { tidyCsv, dropTidy, filterClicks, rendererRss, tradeoffTasks } from './tidy.mjs';
import { readdir, stat } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT, serveDist, launch } from './harness.mjs';
import { benchServing, printServing } from './serving.mjs';

function vllmServingJson(targetBytes) {
  // One run with per-request arrays, as `vllm bench serve --save-result --save-detailed` writes.
  const n = Math.round(targetBytes / 1000);
  const ttfts = [], itls = [], inputLens = [], outputLens = [], texts = [], errors = [];
  for (let i = 0; i < n; i++) {
    ttfts.push(0.05 + (i % 100) / 1000);
    itls.push(Array.from({ length: 128 }, (_, j) => 0.007 + ((i + j) % 13) / 10000));
    inputLens.push(1000);
    outputLens.push(128);
    texts.push('lorem ipsum '.repeat(10));
    errors.push('');
  }
  return JSON.stringify({
    date: '20250414-170715', backend: 'vllm', model_id: 'meta-llama/Llama-3.1-8B-Instruct',
    tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct', num_prompts: n, request_rate: 'inf',
    burstiness: 1.0, max_concurrency: 256, duration: 30.5, completed: n, total_input_tokens: n * 1000,
    total_output_tokens: n * 128, request_throughput: n / 30.5, output_throughput: (n * 128) / 30.5,
    total_token_throughput: (n * 1128) / 30.5, mean_ttft_ms: 99.5, median_ttft_ms: 99.0,
    std_ttft_ms: 28.8, p99_ttft_ms: 149.0, mean_tpot_ms: 7.6, median_tpot_ms: 7.6, std_tpot_ms: 0.3,
    p99_tpot_ms: 8.2, mean_itl_ms: 7.6, median_itl_ms: 7.6, std_itl_ms: 0.4, p99_itl_ms: 8.2,
    input_lens: inputLens, output_lens: outputLens, ttfts, itls, generated_texts: texts, errors,
  });
}

async function dropAndTime(page, name, text) {
  return page.evaluate(
    async ({ name, text }) => {
      const chart = () => document.getElementById('chart');
      const before = chart()?.data?.length ? chart().data : null;
      // Responsiveness while loading: gaps between animation frames (with the file's status
      // when each gap began) and the main thread's long tasks (> 50 ms).
      const status = () => document.querySelector('#file-list > li.loading .status')?.textContent ?? '';
      const frames = [];
      const longTasks = [];
      const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
      observer.observe({ type: 'longtask' });
      let running = true;
      // performance.now(), not the callback's argument: that is the frame's planned start,
      // which a long task before the callback does not move.
      const tick = () => {
        frames.push([performance.now(), status()]);
        if (running) requestAnimationFrame(tick);
      };
      const dt = new DataTransfer();
      dt.items.add(new File([text], name));
      await new Promise((r) => requestAnimationFrame(r));
      requestAnimationFrame(tick);
      const t0 = performance.now();
      document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        const d = chart()?.data;
        if (d && d.length && d !== before && d.some((t) => t.x.length)) break;
        const failed = document.querySelector('#file-list li.failed .error');
        if (failed) throw new Error(failed.textContent);
        if (performance.now() - t0 > 60000) throw new Error('no chart after 60 s');
      }
      const ms = performance.now() - t0;
      running = false;
      await new Promise((r) => setTimeout(r, 0));
      observer.disconnect();
      let maxGap = 0;
      let maxGapParsing = 0;
      for (let i = 1; i < frames.length; i++) {
        const gap = frames[i][0] - frames[i - 1][0];
        maxGap = Math.max(maxGap, gap);
        if (!frames[i - 1][1].startsWith('indexing') && frames[i - 1][1] !== '') maxGapParsing = Math.max(maxGapParsing, gap);
      }
      return { ms, maxGap, maxGapParsing, longest: Math.max(0, ...longTasks), frames: frames.length };
    },
    { name, text },
  );
}

async function filterRedrawMs(page, dim) {
  return page.evaluate(async (dim) => {
    // Facet checkboxes are re-rendered on every change: look each one up again by value.
    const box = (value) => document.querySelector(`fieldset[data-dim="${dim}"] input[data-value="${value}"]`);
    const values = [...document.querySelectorAll(`fieldset[data-dim="${dim}"] input`)].map((b) => b.dataset.value);
    const times = [];
    for (const value of values.slice(0, 4)) {
      for (let k = 0; k < 2; k++) {
        const drawn = new Promise((r) => document.getElementById('chart').once('plotly_afterplot', r));
        const t0 = performance.now();
        box(value).click();
        await Promise.race([drawn, new Promise((_, fail) => setTimeout(() => fail(new Error('no redraw in 10 s')), 10000))]);
        times.push(performance.now() - t0);
      }
    }
    times.sort((a, b) => a - b);
    return { median: times[Math.floor(times.length / 2)], max: times.at(-1), n: times.length };
  }, dim);
}

// BENCH_DIST=<dir> measures another build (e.g. an older one, for a before/after).
const DIST = process.env.BENCH_DIST ?? 'dist';
// BENCH_PARTS=million measures only the 10^6-row CSV (to alternate builds quickly).
const ONLY_MILLION = process.env.BENCH_PARTS === 'million';
// BENCH_PARTS=serving measures only the ~120 MB serving JSON of 20 million per-request values.
const ONLY_SERVING = process.env.BENCH_PARTS === 'serving';
const server = await serveDist(DIST);
const browser = await launch();
try {
  if (!ONLY_MILLION && !ONLY_SERVING) {
    const csv = tidyCsv(100_000);
    const json = vllmServingJson(10_000_000);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('crash', () => console.error('the page crashed'));
    page.on('pageerror', (e) => console.error('page error:', String(e).slice(0, 300)));
    await page.goto(server.url);
    await page.waitForSelector('#empty-state');
    const csvRun = await dropAndTime(page, 'tidy-100k.csv', csv);
    const records = await page.textContent('#match-count');
    const filter = await filterRedrawMs(page, 'engine');
    const page2 = await browser.newPage();
    await page2.goto(server.url);
    await page2.waitForSelector('#empty-state');
    const jsonRun = await dropAndTime(page2, 'vllm-serving-10mb.json', json);
    // Width: two-row CSVs of 25k, 50k and 100k metric columns, each on a fresh page.
    const wide = [];
    for (const columns of [25_000, 50_000, 100_000]) {
      const p = await browser.newPage();
      await p.goto(server.url);
      await p.waitForSelector('#empty-state');
      const text = wideCsv(columns);
      wide.push([columns, text.length, await dropAndTimeChart(p, `wide-${columns}.csv`, text)]);
      await p.close();
    }
    const dist = resolve(ROOT, DIST);
    const files = await readdir(dist);
    const sizes = async (f) => [(await stat(join(dist, f))).size, gzipSync(readFileSync(join(dist, f)), { level: 9 }).length];
    const [wasmBytes, wasmGz] = await sizes(files.find((f) => f.endsWith('.wasm') && !f.startsWith('benchlens-worker')));
    const worker = files.includes('benchlens-worker_bg.wasm') ? await sizes('benchlens-worker_bg.wasm') : null;
    const plotly = (await readdir(dist)).find((f) => f.startsWith('plotly'));
    const plotlyGz = gzipSync(readFileSync(join(dist, plotly)), { level: 9 }).length;

    const mb = (s) => (s.length / 1e6).toFixed(1);
    console.log('explorer in headless Chromium:');
    const run = (label, bytes, r) => {
      console.log(`  drop -> first chart, ${label}:  ${r.ms.toFixed(0)} ms  (${(bytes / 1e6 / (r.ms / 1000)).toFixed(1)} MB/s end to end)`);
      console.log(`    longest gap between frames while reading, parsing and receiving: ${r.maxGapParsing.toFixed(0)} ms; overall (incl. indexing and the first chart): ${r.maxGap.toFixed(0)} ms; longest main-thread task: ${r.longest.toFixed(0)} ms`);
    };
    run(`100k-row tidy CSV (${mb(csv)} MB, ${records})`, csv.length, csvRun);
    run(`vLLM serving JSON with per-request arrays (${mb(json)} MB)`, json.length, jsonRun);
    for (const [columns, bytes, r] of wide) {
      console.log(`  drop -> first chart, ${columns} columns (${(bytes / 1e6).toFixed(1)} MB): ${r.ms.toFixed(0)} ms (${(columns / (r.ms / 1000) / 1000).toFixed(0)}k columns/s, ${(r.ms / wide[0][2].ms).toFixed(2)}x the ${wide[0][0]}-column time); longest main-thread task ${r.longestMs.toFixed(0)} ms`);
    }
    console.log(`  filter change -> redrawn chart on 100k records: median ${filter.median.toFixed(1)} ms, max ${filter.max.toFixed(1)} ms over ${filter.n} changes`);
    console.log(`  wasm: ${(wasmBytes / 1e6).toFixed(2)} MB, ${(wasmGz / 1e6).toFixed(3)} MB gzip (plotly.js not included: ${(plotlyGz / 1e6).toFixed(3)} MB gzip)`);
    if (worker) console.log(`  parse worker wasm: ${(worker[0] / 1e6).toFixed(2)} MB, ${(worker[1] / 1e6).toFixed(3)} MB gzip`);
  }
  // A million rows, in a browser of its own so its renderer process is the page's alone.
  const millionOf = (canonical) => (async () => {
    const b = await launch();
    try {
      const p = await b.newPage({ viewport: { width: 1400, height: 1000 } });
      p.on('pageerror', (e) => console.error('page error:', String(e).slice(0, 300)));
      await p.addInitScript(() => {
        addEventListener('TrunkApplicationStarted', (e) => {
          window.__pageWasm = e.detail.wasm;
        });
        // The page's own long tasks while it starts (plotly.js's warm-up among them).
        window.__startTasks = [];
        new PerformanceObserver((l) => window.__startTasks.push(...l.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
      });
      const wasmBytes = () => p.evaluate(() => window.__pageWasm?.memory?.buffer?.byteLength ?? 0);
      await p.goto(server.url);
      await p.waitForSelector('#empty-state');
      const rssEmpty = await rendererRss();
      const wasmEmpty = await wasmBytes();
      // Idle a moment: what the page does once it has started is done by then.
      await new Promise((r) => setTimeout(r, 1500));
      const startTasks = await p.evaluate(() => window.__startTasks);
      const load = await dropTidy(p, 'tidy-1m.csv', 1_000_000, true, canonical);
      const count = await p.textContent('#match-count');
      const rssLoaded = await rendererRss();
      // How much of each click is plotly.js redrawing the chart (`Plotly.react`, synchronous).
      await p.evaluate(() => {
        const react = Plotly.react;
        window.__reactMs = [];
        Plotly.react = function (...args) {
          const t0 = performance.now();
          const drawn = react.apply(this, args);
          window.__reactMs.push(performance.now() - t0);
          return drawn;
        };
      });
      const clicks = await filterClicks(p, 'engine', 10);
      const reactMs = (await p.evaluate(() => window.__reactMs)).sort((a, b) => a - b);
      const rssAfter = await rendererRss();
      // The trade-off view of the 10^6 points (issue 33 item 4: no main-thread task over 100 ms).
      const tradeoff = await tradeoffTasks(p, 'Tokens per second per user (tok/s, 1000 / mean TPOT)');
      // What the page holds once garbage is collected: the generated text, the file's bytes
      // and the worker's messages are garbage by then, but a collection may not have run.
      const cdp = await p.context().newCDPSession(p);
      await cdp.send('HeapProfiler.collectGarbage');
      await new Promise((r) => setTimeout(r, 1000));
      const heapCollected = await p.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
      return { ...load, count, rssEmpty, rssLoaded, rssAfter, rssCollected: await rendererRss(), heapCollected, clicks, reactMs, wasmEmpty, wasm: await wasmBytes(), startTasks, tradeoff };
    } finally {
      await b.close();
    }
  })();
  // The same rows under the generic header and under benchlens's own column names.
  const millions = ONLY_SERVING ? [] : [[false, await millionOf(false)], [true, await millionOf(true)]];

  if (ONLY_MILLION) console.log('explorer in headless Chromium:');
  for (const [canonical, m] of millions) {
    const fileMb = m.size / 1e6;
    const c = m.clicks;
    console.log(`  10^6-row tidy CSV under ${canonical ? "benchlens's canonical header" : 'a generic header'} (${fileMb.toFixed(1)} MB, ${m.count}):`);
    console.log(`    drop -> first chart ${m.ms.toFixed(0)} ms (${(fileMb / (m.ms / 1000)).toFixed(1)} MB/s end to end); longest main-thread task from drop to chart ${m.longest.toFixed(0)} ms`);
    console.log(`    filter click -> redrawn chart: median ${c[Math.floor(c.length / 2)].toFixed(1)} ms, max ${c.at(-1).toFixed(1)} ms over ${c.length} clicks`);
    const r = m.reactMs;
    if (r.length) console.log(`      of which plotly.js redrawing (Plotly.react): median ${r[Math.floor(r.length / 2)].toFixed(1)} ms, max ${r.at(-1).toFixed(1)} ms`);
    const tasks = (s) => s.tasks.map((d) => d.toFixed(0)).join(', ') || 'none';
    console.log(`    trade-off view of the 10^6 points (16 series): view opened -> drawn ${m.tradeoff.open.ms.toFixed(0)} ms (tasks over 50 ms: ${tasks(m.tradeoff.open)}); x axis chosen -> chart ${m.tradeoff.axis.ms.toFixed(0)} ms (tasks over 50 ms: ${tasks(m.tradeoff.axis)}); longest main-thread task ${m.tradeoff.longest.toFixed(0)} ms`);
    console.log(`    page memory: renderer process ${(m.rssLoaded / 1e6).toFixed(0)} MB resident after the first chart (${(m.rssLoaded / m.size).toFixed(2)}x the file), ${(m.rssAfter / 1e6).toFixed(0)} MB after the clicks; JS heap ${(m.heap / 1e6).toFixed(0)} MB`);
    console.log(`    after a garbage collection: renderer process ${(m.rssCollected / 1e6).toFixed(0)} MB resident (${(m.rssCollected / m.size).toFixed(2)}x the file), JS heap ${(m.heapCollected / 1e6).toFixed(0)} MB; the page before the drop ${(m.rssEmpty / 1e6).toFixed(0)} MB`);
    console.log(`    before the drop, while the empty page starts: tasks over 50 ms: ${m.startTasks.map((d) => d.toFixed(0)).join(", ") || "none"} ms (loading plotly.js and the app, drawing the empty page, plotly.js's warm-up)`);
    console.log(`    the page's wasm memory (it only grows, so this is its peak) ${(m.wasm / 1e6).toFixed(0)} MB (${(m.wasm / m.size).toFixed(2)}x the file; ${(m.wasmEmpty / 1e6).toFixed(0)} MB before the drop)`);
  }
  if (!ONLY_MILLION) {
    if (ONLY_SERVING) console.log('explorer in headless Chromium:');
    printServing(await benchServing({ serveDist, launch, rendererRss, dist: DIST }));
  }
} finally {
  await browser.close();
  server.close();
}
