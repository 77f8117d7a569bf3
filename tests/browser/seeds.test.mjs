// Every bundled seed through the real loading paths (file picker, drag-and-drop, paste), with
// detected formats and counts, filters, every view, and chart data read from the plotly div.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  ROOT, newPage, screenshot, chartTraces, waitForTraces, pickFiles, useApp,
} from './harness.mjs';

const SEEDS = {
  '000_258d36619a7af95a.txt': { format: 'pandas text table', records: 1402 },
  '001_b815cef7710eda19.txt': { format: 'vLLM serving JSON', records: 12 },
  '002_44f3a8b9f2336bbb.txt': { format: 'markdown tables', records: 32 },
  '003_902df92d1b3a4732.txt': { format: 'vLLM serving console output', records: 23 },
  '004_adfd865e97a7b47c.txt': { format: 'vLLM performance suite', records: 0 },
};

const app = useApp('dist');

async function fileRows(page) {
  return page.$$eval('#file-list > li', (items) =>
    items.map((li) => ({
      name: li.querySelector('.name')?.textContent,
      cls: li.className,
      format: li.querySelector('.format')?.textContent ?? null,
      count: li.querySelector('.count')?.textContent ?? null,
      note: li.querySelector('.note')?.textContent ?? null,
      error: li.querySelector('.error')?.textContent ?? null,
    })),
  );
}

async function waitLoaded(page, n) {
  await page.waitForFunction(
    (n) => document.querySelectorAll('#file-list > li.loaded, #file-list > li.failed').length >= n,
    n,
    { timeout: 20000 },
  );
}

async function dropFile(page, name, text) {
  await page.evaluate(
    ({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/plain' }));
      const target = document.querySelector('main');
      for (const type of ['dragover', 'drop']) {
        target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }));
      }
    },
    { name, text },
  );
}

async function clickFacet(page, dim, value) {
  await page.click(`fieldset[data-dim="${dim}"] input[data-value="${value}"]`);
}

test('all five seeds through the file picker: formats and counts', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, Object.keys(SEEDS).map((f) => `public/samples/${f}`));
  await waitLoaded(page, 5);
  const rows = await fileRows(page);
  for (const [name, want] of Object.entries(SEEDS)) {
    const row = rows.find((r) => r.name === name);
    assert.ok(row, `${name} listed`);
    assert.equal(row.format, want.format, name);
    assert.equal(row.count, `${want.records} records`, name);
  }
  assert.match(rows.find((r) => r.name.startsWith('004')).note, /no records: .*template/);
  assert.equal(await page.textContent('#match-count'), `${1402 + 12 + 32 + 23} of ${1402 + 12 + 32 + 23} records`);
  await screenshot(page, 'all-seeds-loaded');
  assert.deepEqual(page.errors, []);
});

test('seed 001 by drag-and-drop: filters, views and the address', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  const text = await readFile(resolve(ROOT, 'public/samples/001_b815cef7710eda19.txt'), 'utf8');
  await dropFile(page, '001_b815cef7710eda19.txt', text);
  await waitForTraces(page, 2);

  // Throughput view: output tok/s per rate, one bar per engine.
  await page.click('button[data-view="throughput"]');
  await page.waitForFunction(() => document.getElementById('chart').layout.yaxis.title.text.includes('tok/s'));
  let traces = await chartTraces(page);
  const vllm = traces.find((t) => t.name === 'vllm');
  assert.equal(vllm.x.length, 6);
  assert.ok(vllm.y.every((v) => v > 0));
  await screenshot(page, 'seed-001-throughput');

  // Filtering to one engine leaves one trace; counts of the other facets follow.
  await clickFacet(page, 'engine', 'vllm');
  await page.waitForFunction(() => document.getElementById('chart').data.length === 1);
  assert.equal(await page.textContent('#match-count'), '6 of 12 records');
  assert.match(page.url(), /f\.engine=vllm/);
  assert.match(page.url(), /view=throughput/);

  // Reloading the address restores the view and the filter. The dropped file is local, so
  // the address names it as needed: the page asks for it, and dropped again, it opens
  // filtered, on the throughput view.
  assert.match(page.url(), /need=001_b815cef7710eda19\.txt/);
  await page.reload();
  await page.waitForSelector('#needs-list');
  assert.equal(await page.textContent('#needs-list'), '001_b815cef7710eda19.txt');
  assert.match(page.url(), /f\.engine=vllm/);
  await dropFile(page, '001_b815cef7710eda19.txt', text);
  await waitForTraces(page, 1);
  assert.equal(await page.textContent('#match-count'), '6 of 12 records');
  assert.equal(await page.getAttribute('button[data-view="throughput"]', 'class'), 'active');
  assert.deepEqual((await chartTraces(page)).map((t) => t.name), ['vllm']);
  assert.ok(await page.isChecked('fieldset[data-dim="engine"] input[data-value="vllm"]'));
  await page.click('#clear-filters');
  await page.waitForFunction(() => document.getElementById('chart').data.length === 2);

  // Scaling view: lines over request rate (inf keeps the axis categorical).
  await page.click('button[data-view="scaling"]');
  await page.waitForFunction(() => document.getElementById('chart').data[0]?.type === 'scatter');
  traces = await chartTraces(page);
  assert.equal(traces.length, 2);
  await screenshot(page, 'seed-001-scaling');

  // Table view, sorted by mean TTFT descending.
  await page.click('button[data-view="table"]');
  await page.waitForSelector('#records-table');
  await page.click('#records-table th[data-column="mean_ttft_ms"]');
  await page.click('#records-table th[data-column="mean_ttft_ms"]');
  const firstRow = await page.$$eval('#records-table tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
  assert.ok(firstRow.includes('18107.32'), firstRow.join(' | '));
  await screenshot(page, 'seed-001-table');

  // Dark theme.
  await page.click('button[data-view="latency"]');
  await page.click('#theme-toggle');
  await page.waitForFunction(() => document.getElementById('chart').layout.paper_bgcolor !== '#ffffff');
  await page.waitForTimeout(200);
  await screenshot(page, 'seed-001-latency-dark');
  assert.deepEqual(page.errors, []);
});

test('a shared address reopens the view: data URL, view, filters', async (t) => {
  const page = await newPage(app.browser, t);
  const data = `${app.server.url}samples/001_b815cef7710eda19.txt`;
  const q = new URLSearchParams([['view', 'latency'], ['metric', 'p99_ttft_ms'], ['f.engine', 'sgl'], ['data', data]]);
  await page.goto(`${app.server.url}?${q}`);
  await waitForTraces(page, 1);
  const traces = await chartTraces(page);
  assert.deepEqual(traces.map((t) => t.name), ['sgl']);
  const title = await page.evaluate(() => document.getElementById('chart').layout.yaxis.title.text);
  assert.equal(title, 'P99 TTFT (ms)');
  const sgl = traces[0];
  assert.equal(sgl.y[sgl.x.indexOf('1')].toFixed(2), '628.93');
  assert.deepEqual(page.errors, []);
});

test('seed 000: throughput per batch size, A100 vs Tesla, filtered to one model', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['public/samples/000_258d36619a7af95a.txt']);
  await waitLoaded(page, 1);
  await page.click('button[data-view="throughput"]');
  await clickFacet(page, 'model', 'Codellama-13b-hf');
  await clickFacet(page, 'gpu_count', '1');
  await page.waitForFunction(() => {
    const d = document.getElementById('chart').data;
    return d.length === 2 && d[0].x.length > 0;
  });
  const traces = await chartTraces(page);
  const a100 = traces.find((t) => t.name === 'A100');
  const tesla = traces.find((t) => t.name === 'Tesla');
  assert.equal(a100.y[a100.x.indexOf('512')].toFixed(6), '126.342806');
  assert.equal(tesla.y[tesla.x.indexOf('512')].toFixed(6), '30.718344');
  await screenshot(page, 'seed-000-throughput');
  assert.deepEqual(page.errors, []);
});

test('seed 002 pasted as text: vllm vs tgi by input length', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  const text = await readFile(resolve(ROOT, 'public/samples/002_44f3a8b9f2336bbb.txt'), 'utf8');
  await page.click('text=Paste text');
  await page.fill('#paste-input', text);
  await page.click('#paste-load');
  await waitLoaded(page, 1);
  const rows = await fileRows(page);
  assert.equal(rows[0].format, 'markdown tables');
  assert.equal(rows[0].count, '32 records');
  await page.click('button[data-view="throughput"]');
  await page.selectOption('#metric-select', 'request_throughput');
  await clickFacet(page, 'output_len', '1024');
  await page.waitForFunction(() => document.getElementById('chart').data.every((t) => t.x.length === 4));
  const traces = await chartTraces(page);
  const tgi = traces.find((t) => t.name === 'tgi');
  assert.equal(tgi.y[tgi.x.indexOf('512')], 2.82);
  await screenshot(page, 'seed-002-throughput');
  assert.deepEqual(page.errors, []);
});

test('seed 003 console output: latency per number of prompts', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['public/samples/003_902df92d1b3a4732.txt']);
  await waitForTraces(page, 1);
  const x = await page.evaluate(() => document.getElementById('chart').layout.xaxis.title.text);
  assert.equal(x, 'Number of prompts');
  await screenshot(page, 'seed-003-latency');
  assert.deepEqual(page.errors, []);
});

test('a broken file shows its error and leaves the others loaded', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  await dropFile(page, 'broken.json', '{"backend": "vllm", "mean_ttft_ms": [1, 2');
  await dropFile(page, 'binary.bin', '\u0000\u0001\u0002\u0003\u00ff'.repeat(50));
  await waitLoaded(page, 3);
  const rows = await fileRows(page);
  const failed = rows.filter((r) => r.cls.includes('failed'));
  assert.equal(failed.length, 2);
  assert.ok(failed.every((r) => r.error.length > 10));
  assert.match(failed.find((r) => r.name === 'broken.json').error, /broken\.json/);
  assert.equal((await chartTraces(page)).length, 2);
  // A bad URL is explained, not thrown.
  await page.fill('#url-input', 'http://127.0.0.1:9/nothing-here.json');
  await page.click('.url-row button');
  await waitLoaded(page, 4);
  const last = (await fileRows(page)).at(-1);
  assert.match(last.error, /before any answer|CORS/);
  await page.click('#file-list > li.failed >> nth=0 >> button.remove');
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li').length === 3);
  await screenshot(page, 'errors');
  const unexpected = page.errors.filter((e) => !e.includes('Failed to load resource') && !e.includes('ERR_CONNECTION_REFUSED'));
  assert.deepEqual(unexpected, []);
});

test('a missing dimension set by the user for a whole file', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  assert.match(await page.textContent('fieldset[data-dim="gpu"]'), /not in the data/);
  await page.click('#file-list > li .annotate summary');
  await page.selectOption('#file-list > li .annotate select', 'gpu');
  await page.fill('#file-list > li .annotate input', 'H100');
  await page.click('#file-list > li .annotate button[type="submit"]');
  await page.waitForSelector('fieldset[data-dim="gpu"] input[data-value="H100"]');
  const label = await page.textContent('fieldset[data-dim="gpu"] label');
  assert.match(label, /H100\s*12/);
  // The value is marked as set by the user: the record table flags it.
  await page.click('button[data-view="table"]');
  assert.match(await page.textContent('#records-table tbody tr:first-child'), /gpu/);
  assert.deepEqual(page.errors, []);
});
