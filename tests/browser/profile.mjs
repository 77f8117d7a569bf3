// Where the page's main thread spends a 10^6-row load or its filter clicks: a sampling profile
// (Chrome DevTools Protocol `Profiler`) printed as self and inclusive milliseconds per function.
//   PROFILE=click (default) | load | tradeoff   what is profiled (8 clicks on `engine` after 2
//                                    unprofiled; the load; the trade-off view's first drawing)
//   BENCH_DIST=<dir>                 the build (default dist)
//   PROFILE_CALLERS=<text>           also where the samples in functions named <text> come from
//   PROFILE_TOP=<n>                  how many functions the inclusive list shows (default 60)
//   PROFILE_WASM=<file>              the page's wasm swapped in, e.g. the wasm-bindgen output
//                                    before wasm-opt (target/wasm-bindgen/release/benchlens_bg.wasm),
//                                    which keeps Rust function names
// Run after `make build`: `node tests/browser/profile.mjs`.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dropTidy, filterClicks } from './tidy.mjs';
import { ROOT, serveDist, launch } from './harness.mjs';

let dist = resolve(ROOT, process.env.BENCH_DIST ?? 'dist');
let scratch = null;
if (process.env.PROFILE_WASM) {
  scratch = mkdtempSync(join(tmpdir(), 'benchlens-profile-'));
  cpSync(dist, scratch, { recursive: true });
  const wasm = readdirSync(scratch).find((f) => f.endsWith('_bg.wasm') && !f.startsWith('benchlens-worker'));
  cpSync(process.env.PROFILE_WASM, join(scratch, wasm));
  // The swapped file no longer matches the page's integrity hashes.
  const html = join(scratch, 'index.html');
  writeFileSync(html, readFileSync(html, 'utf8').replace(/ integrity="[^"]*"/g, ''));
  dist = scratch;
}
const mode = process.env.PROFILE ?? 'click';
const server = await serveDist(dist);
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(server.url);
  await page.waitForSelector('#empty-state');
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  if (mode === 'load') await cdp.send('Profiler.start');
  const load = await dropTidy(page, 'tidy-1m.csv', 1_000_000);
  console.log(`drop -> first chart ${load.ms.toFixed(0)} ms, longest task ${load.longest.toFixed(0)} ms`);
  if (mode === 'tradeoff') {
    // The trade-off view on the 10^6 rows, its x axis chosen as tokens/s per user (the tidy
    // file has a mean TPOT, no p99 TTFT): one task, as the dense test times it.
    await page.click('button[data-view="tradeoff"]');
    await page.waitForSelector('#tradeoff-latency');
    await cdp.send('Profiler.start');
    const t0 = Date.now();
    await page.selectOption('#tradeoff-latency', { index: 2 });
    await page.waitForFunction(() => (document.getElementById('tradeoff-chart')?.data?.length ?? 0) >= 2, null, { timeout: 120000 });
    console.log(`x axis chosen -> trade-off chart ${Date.now() - t0} ms`);
  }
  if (mode === 'click') {
    await filterClicks(page, 'engine', 2);
    await cdp.send('Profiler.start');
    const clicks = await filterClicks(page, 'engine', 8);
    console.log(`clicks (ms, sorted): ${clicks.map((x) => x.toFixed(0)).join(' ')}`);
  }
  const { profile } = await cdp.send('Profiler.stop');
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id) => {
    const f = byId.get(id).callFrame;
    return `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
  };
  const self = new Map();
  const inclusive = new Map();
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    self.set(name(id), (self.get(name(id)) ?? 0) + ms);
    const seen = new Set();
    for (let c = id; c; c = parent.get(c)) {
      const n = name(c);
      if (!seen.has(n)) {
        seen.add(n);
        inclusive.set(n, (inclusive.get(n) ?? 0) + ms);
      }
    }
  });
  const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
  // PROFILE_CALLERS=<text>: where the samples in functions whose name holds <text> come from
  // (each sample's chain of callers, the first five Rust frames above it).
  if (process.env.PROFILE_CALLERS) {
    const callers = new Map();
    profile.samples.forEach((id, i) => {
      if (!name(id).includes(process.env.PROFILE_CALLERS)) return;
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      const chain = [];
      for (let c = parent.get(id); c && chain.length < 5; c = parent.get(c)) {
        const n = name(c);
        if (n.includes('benchlens::') || n.includes('Plotly') || n.includes('reactive_graph')) chain.push(n.replace(/::h[0-9a-f]{16}.*$/, ''));
      }
      const key = chain.join(' <- ');
      callers.set(key, (callers.get(key) ?? 0) + ms);
    });
    console.log(`callers of ${process.env.PROFILE_CALLERS}:`);
    for (const [n, ms] of top(callers, 15)) console.log(`${ms.toFixed(1).padStart(9)}  ${n}`);
  }
  console.log('self ms:');
  for (const [n, ms] of top(self, 40)) console.log(`${ms.toFixed(1).padStart(9)}  ${n}`);
  console.log('inclusive ms:');
  for (const [n, ms] of top(inclusive, Number(process.env.PROFILE_TOP ?? 60))) console.log(`${ms.toFixed(1).padStart(9)}  ${n}`);
} finally {
  await browser.close();
  server.close?.();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
