// A vLLM serving JSON with per-request arrays (tests/browser/serving.mjs, generated here: 8,000
// requests of up to 40 gaps, some with none, every 50th failed), dropped and parsed in the parse
// worker (read from the File a slice at a time, its requests sent apart from its record): the
// distribution view shows exactly the values computed here from the same fields —
// the count, mean and percentiles of the TTFT and inter-token latency tables, and every point of
// their CDF traces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countWorkerMessages, newPage, screenshot, useApp } from './harness.mjs';
import { servingPartsSource, servingValues } from './serving.mjs';

const app = useApp('dist');

const N = 8000;
const K = 40;

/** numpy's linear percentile of ascending `sorted`, as `analysis::stats::percentile_sorted`. */
function percentile(sorted, p) {
  const last = sorted.length - 1;
  const lo = Math.min(Math.floor((p / 100) * last), last);
  const hi = Math.min(lo + 1, last);
  const t = (p / 100) * last - lo;
  const [a, b] = [sorted[lo], sorted[hi]];
  if (t === 0 || a === b) return a;
  return Math.min(Math.max(a + (b - a) * t, Math.min(a, b)), Math.max(a, b));
}

/** The CDF's points as `analysis::stats::ecdf_thinned` gives them (at most 2,000 steps). */
function cdf(sorted, max = 2000) {
  const n = sorted.length;
  const out = [];
  if (n <= max) {
    sorted.forEach((v, i) => {
      if (out.length && out.at(-1)[0] === v) out.at(-1)[1] = (i + 1) / n;
      else out.push([v, (i + 1) / n]);
    });
    return out;
  }
  const fracAt = (v) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo / n;
  };
  const push = (v) => {
    if (!out.length || out.at(-1)[0] !== v) out.push([v, fracAt(v)]);
  };
  push(sorted[0]);
  for (let k = 1; k <= max; k++) push(sorted[Math.floor((k * n + max - 1) / max) - 1]);
  return out;
}

/** The percentile table's row and the CDF as the page should show them for `values`. */
function expected(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  const row = [String(sorted.length), mean, ...[50, 90, 95, 99].map((p) => percentile(sorted, p))].map((v) =>
    typeof v === 'string' ? v : v.toFixed(2),
  );
  const points = cdf(sorted);
  return { row, x: points.map((p) => p[0]), y: points.map((p) => p[1]) };
}

/** The distribution view's first percentile row (without the series name) and CDF trace. */
async function shown(page) {
  return page.evaluate(() => {
    const row = [...document.querySelectorAll('#percentile-table tbody tr:first-child td')].map((td) => td.textContent);
    const trace = document.getElementById('cdf-chart').data[0];
    return { rows: document.querySelectorAll('#percentile-table tbody tr').length, row: row.slice(1), x: [...trace.x], y: [...trace.y] };
  });
}

test('a serving JSON of 8,000 requests shows exactly its per-request values', async (t) => {
  const page = await newPage(app.browser, t);
  await page.addInitScript(countWorkerMessages);
  await page.goto(app.server.url);
  await page.waitForSelector('#empty-state');
  const size = await page.evaluate(({ src, n, k }) => {
    const file = new File(new Function(src)()(n, k, true), 'vllm-serving-8000.json');
    const dt = new DataTransfer();
    dt.items.add(file);
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    return file.size;
  }, { src: servingPartsSource, n: N, k: K });
  t.diagnostic(`generated ${size} bytes`);
  await page.waitForSelector('#file-list > li.loaded, #file-list > li.failed', { timeout: 60000 });
  assert.equal(await page.textContent('#file-list > li .count'), '1 record');
  const kinds = await page.evaluate(() => window.__workerKinds);
  t.diagnostic(`worker messages: ${JSON.stringify(kinds)}`);
  assert.equal(kinds.done, 1, 'parsed in the worker');
  // The run's record came alone and its requests after it, in a message of their own; their
  // inter-token gaps went ahead while the worker read the file, 262,144 values a message (two
  // bytes each here: three-digit seconds as integers): this file's 263,994 in two.
  assert.equal(kinds.batch, 1);
  assert.equal(kinds.requests, 1);
  assert.equal(kinds.gaps, 2);

  const values = servingValues(N, K, true);
  await page.click('button[data-view="distribution"]');
  await page.waitForFunction(() => (document.getElementById('cdf-chart')?.data?.length ?? 0) >= 1);
  await page.waitForSelector('#percentile-table');
  const ttft = await shown(page);
  const ttftWanted = expected(values.ttft);
  assert.equal(ttft.rows, 1);
  assert.deepEqual(ttft.row, ttftWanted.row);
  assert.deepEqual(ttft.x, ttftWanted.x);
  assert.deepEqual(ttft.y, ttftWanted.y);

  await page.selectOption('#dist-quantity', 'itl_ms');
  await page.waitForFunction(
    (n) => document.querySelector('#percentile-table tbody tr:first-child td:nth-child(2)')?.textContent === String(n),
    values.itl.length,
  );
  const itl = await shown(page);
  const itlWanted = expected(values.itl);
  assert.deepEqual(itl.row, itlWanted.row);
  assert.deepEqual(itl.x, itlWanted.x);
  assert.deepEqual(itl.y, itlWanted.y);
  t.diagnostic(`TTFT row ${ttft.row.join(' | ')}; ITL row ${itl.row.join(' | ')} (${itl.x.length} CDF points)`);
  await screenshot(page, 'serving-8000');
  assert.deepEqual(page.errors, []);
});

// A document the worker's columnar reading gives up on after it sent gaps ahead: a first
// `itls` array of 300,000 values (more than one `gaps` message) and then the run's own (the
// last one counts, as in the in-memory reader). The worker reads the file again as records; the
// page must drop the gaps sent ahead and show the run's own.
test('gaps sent ahead for a reading the worker gave up are dropped', async (t) => {
  const page = await newPage(app.browser, t);
  await page.addInitScript(countWorkerMessages);
  await page.goto(app.server.url);
  await page.waitForSelector('#empty-state');
  const n = 500;
  const k = 10;
  await page.evaluate(({ src, n, k }) => {
    const parts = new Function(src)()(n, k, true);
    const bogus = Array.from({ length: 3000 }, () => `[${Array(100).fill('0.5').join(',')}]`).join(',');
    parts[0] = parts[0].replace('"num_prompts"', `"itls": [${bogus}], "num_prompts"`);
    const file = new File(parts, 'vllm-serving-twice.json');
    const dt = new DataTransfer();
    dt.items.add(file);
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
  }, { src: servingPartsSource, n, k });
  await page.waitForSelector('#file-list > li.loaded, #file-list > li.failed', { timeout: 60000 });
  assert.equal(await page.textContent('#file-list > li .count'), '1 record');
  const kinds = await page.evaluate(() => window.__workerKinds);
  t.diagnostic(`worker messages: ${JSON.stringify(kinds)}`);
  assert.ok(kinds.gaps >= 1, 'gaps went ahead before the worker gave up');
  assert.equal(kinds.requests ?? 0, 0, 'the run came back as a record with its requests');
  await page.click('button[data-view="distribution"]');
  await page.waitForSelector('#percentile-table');
  await page.selectOption('#dist-quantity', 'itl_ms');
  const values = servingValues(n, k, true);
  await page.waitForFunction(
    (count) => document.querySelector('#percentile-table tbody tr:first-child td:nth-child(2)')?.textContent === String(count),
    values.itl.length,
  );
  const itl = await shown(page);
  assert.deepEqual(itl.row, expected(values.itl).row);
  assert.deepEqual(page.errors, []);
});
