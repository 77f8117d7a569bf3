// The first picture of each seed, of a two-file rate sweep and of real result files from public
// repositories (tests/fixtures/real/README.md): the view that opens, the traces plotly drew
// (names, x order, values, panels), the comparison table, and points that average several
// configurations saying so. Screenshots go to test-artifacts/points-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, waitForTraces, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');

/** The traces plotly drew into a div: name, axes, x, y, text and hover text. */
async function traces(page, id = 'chart') {
  return page.evaluate((id) => {
    const div = document.getElementById(id);
    return (div?.data ?? []).map((t) => ({
      name: t.name,
      type: t.type,
      xaxis: t.xaxis ?? 'x',
      showlegend: t.showlegend ?? true,
      x: [...(t.x ?? [])].map(String),
      y: [...(t.y ?? [])],
      text: [...(t.text ?? [])],
      hover: [...(t.hovertext ?? [])],
    }));
  }, id);
}

async function layout(page) {
  return page.evaluate(() => {
    const l = document.getElementById('chart').layout;
    return {
      title: l.title?.text ?? '',
      xTitle: l.xaxis?.title?.text ?? '',
      categories: l.xaxis?.categoryarray ? [...l.xaxis.categoryarray] : null,
      panels: (l.annotations ?? []).map((a) => a.text),
    };
  });
}

async function activeView(page) {
  return page.getAttribute('nav.tabs button.active', 'data-view');
}

async function comparisonRows(page) {
  return page.$$eval('#comparison-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
}

async function load(page, files, traceCount) {
  await page.goto(app.server.url);
  await pickFiles(page, files);
  await page.waitForFunction(
    (n) => document.querySelectorAll('#file-list > li.loaded').length >= n, files.length, { timeout: 20000 });
  if (traceCount) await waitForTraces(page, traceCount);
}

test('seed 000 opens on the improvement of A100 over Tesla, one bar per model', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/000_258d36619a7af95a.txt']);
  await page.waitForSelector('#improve-table');
  assert.equal(await activeView(page), 'improvement');
  assert.equal(await page.inputValue('#compare-dim'), 'gpu');
  assert.equal(await page.inputValue('#baseline-select'), 'Tesla');
  assert.equal(await page.inputValue('#candidate-select'), 'A100');
  await page.waitForFunction(() => document.getElementById('improve-bars').data?.length === 1);
  const [bars] = await traces(page, 'improve-bars');
  assert.equal(bars.x.length, 20, bars.x.join());
  assert.ok(bars.x.includes('Phi-1_5') && bars.x.includes('Wizardcoder-33b'));
  // Throughput is the file's only measurement; its label says the unit is not given.
  assert.match(await page.textContent('#improve-metric option:checked'), /Throughput \(unit not given/);
  await screenshot(page, 'points-seed-000');
  assert.deepEqual(page.errors, []);
});

test('seed 001 opens on mean TTFT per request rate, vLLM vs SGLang, fastest and faster by', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/001_b815cef7710eda19.txt'], 2);
  assert.equal(await activeView(page), 'latency');
  const tr = await traces(page);
  assert.deepEqual(tr.map((t) => t.name).sort(), ['sgl', 'vllm']);
  const vllm = tr.find((t) => t.name === 'vllm');
  assert.deepEqual(vllm.x, ['1', '10', '20', '30', '35', 'inf']);
  assert.equal(vllm.y[0].toFixed(2), '45.04');
  assert.ok(tr.every((t) => t.text.every((s) => s === '')), 'no point is a mean');
  const l = await layout(page);
  assert.deepEqual(l.categories, ['1', '10', '20', '30', '35', 'inf']);
  assert.match(l.title, /Mean TTFT \(ms\) by request rate/);
  const rows = await comparisonRows(page);
  const headers = await page.$$eval('#comparison-table th', (th) => th.map((h) => h.textContent));
  const fastest = headers.indexOf('Fastest');
  const by = headers.indexOf('Faster by (%)');
  assert.deepEqual(rows.map((r) => [r[0], r[fastest], r[by]]), [
    ['1', 'vllm', '30.58%'], ['10', 'vllm', '17.06%'], ['20', 'vllm', '12.66%'],
    ['30', 'vllm', '51.29%'], ['35', 'vllm', '13.34%'], ['inf', 'sgl', '3.80%'],
  ]);
  await screenshot(page, 'points-seed-001');
  assert.deepEqual(page.errors, []);
});

test('seed 002 opens on vLLM vs TGI per input length, one panel per output length', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/002_44f3a8b9f2336bbb.txt'], 8);
  assert.equal(await activeView(page), 'latency');
  const tr = await traces(page);
  assert.equal(tr.length, 8);
  assert.deepEqual([...new Set(tr.map((t) => t.name))].sort(), ['tgi', 'vllm']);
  assert.deepEqual([...new Set(tr.map((t) => t.xaxis))], ['x', 'x2', 'x3', 'x4']);
  // Each engine is named once in the legend, whatever the number of panels.
  assert.equal(tr.filter((t) => t.showlegend !== false).length, 2);
  const l = await layout(page);
  assert.deepEqual(l.panels, ['output length 128', 'output length 512', 'output length 1024', 'output length 2048']);
  assert.ok(tr.every((t) => t.x.join() === '128,512,1024,2048'), 'input lengths in numeric order');
  assert.ok(tr.every((t) => t.text.every((s) => s === '')), 'no point is a mean');
  // The latency per output token of TGI at input 128, output 128 as the file prints it.
  await page.selectOption('#metric-select', 'extra.average_latency_per_output_token_ms');
  await page.waitForFunction(() => document.getElementById('chart').layout.yaxis.title.text.includes('output token'));
  const tgi128 = (await traces(page)).find((t) => t.name === 'tgi' && t.xaxis === 'x');
  assert.equal(tgi128.y[tgi128.x.indexOf('128')], 16.47);
  assert.equal(await page.evaluate(() => document.getElementById('chart').layout.yaxis.title.text),
    'Average latency per output token (ms)');
  // The comparison table compares engines within each panel.
  const rows = await comparisonRows(page);
  assert.equal(rows.length, 16);
  assert.deepEqual(rows[0].slice(0, 2), ['128', '128']);
  await screenshot(page, 'points-seed-002');
  assert.deepEqual(page.errors, []);
});

test('seed 002 with one series: the merged points say what they average', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/002_44f3a8b9f2336bbb.txt'], 8);
  await page.selectOption('#metric-select', 'extra.average_latency_per_output_token_ms');
  await page.selectOption('#series-select', '');
  // Engines become the panels; output lengths can only be averaged, and the points say so.
  await page.waitForFunction(() => document.getElementById('chart').data.length === 2);
  const tr = await traces(page);
  assert.ok(tr.every((t) => t.text.every((s) => s === 'mean of 4')), JSON.stringify(tr[0].text));
  assert.deepEqual((await layout(page)).panels, ['engine tgi', 'engine vllm']);
  const tgi = tr.find((t) => t.xaxis === 'x');
  const i = tgi.x.indexOf('128');
  assert.equal(tgi.y[i].toFixed(4), ((16.47 + 16.32 + 16.34 + 16.90) / 4).toFixed(4));
  assert.match(tgi.hover[i], /mean of 4: output length 128 – 2048/);
  assert.match((await layout(page)).title, /average records of different output length/);
  await screenshot(page, 'points-seed-002-one-series');
  assert.deepEqual(page.errors, []);
});

test('seed 003 opens on TTFT against prompt count, one line per input length in numeric order', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/003_902df92d1b3a4732.txt'], 6);
  assert.equal(await activeView(page), 'scaling');
  let tr = await traces(page);
  assert.deepEqual(tr.map((t) => t.name), ['80', '10000', '16000', '32000', '64000', '128000']);
  assert.ok(tr.every((t) => t.type === 'scatter'));
  assert.equal(tr[0].x.length, 12);
  assert.equal((await layout(page)).xTitle, 'Number of prompts');
  assert.ok(tr.every((t) => t.text.every((s) => s === '')), 'no point is a mean');
  // Output length is measured (58.43115234375 ...): a range, not 23 one-record checkboxes.
  assert.equal(await page.$$eval('fieldset[data-dim="output_len"] input[type="checkbox"]', (i) => i.length), 0);
  // Six significant digits (58.03125 is exactly half way: rounded away from zero).
  assert.match(await page.textContent('fieldset.range[data-dim="output_len"]'), /58\.0313 – 150 \(22 values, 23 records\)/);
  // Throughput against prompt count, same lines.
  await page.selectOption('#metric-select', 'output_throughput');
  await page.waitForFunction(() => document.getElementById('chart').layout.yaxis.title.text.includes('tok/s'));
  tr = await traces(page);
  assert.deepEqual(tr.map((t) => t.name), ['80', '10000', '16000', '32000', '64000', '128000']);
  await screenshot(page, 'points-seed-003');
  // The latency bars order the prompt counts numerically too.
  await page.click('button[data-view="latency"]');
  await page.waitForFunction(() => document.getElementById('chart').data[0]?.type === 'bar');
  const l = await layout(page);
  assert.deepEqual(l.categories, ['1', '2', '4', '8', '16', '32', '64', '128', '256', '512', '1024', '2048']);
  // The record table sorts input lengths as numbers.
  await page.click('button[data-view="table"]');
  await page.click('#records-table th[data-column="input_len"]');
  const col = await page.$$eval('#records-table th', (th) => th.findIndex((h) => h.dataset.column === 'input_len'));
  const lens = await page.$$eval('#records-table tbody tr', (rows, col) =>
    rows.map((r) => Number(r.querySelectorAll('td')[col].textContent)), col);
  assert.deepEqual(lens, [...lens].sort((a, b) => a - b));
  assert.equal(lens.at(-1), 128000);
  assert.deepEqual(page.errors, []);
});

test('seed 004 is the template: its note, no chart', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['public/samples/004_adfd865e97a7b47c.txt']);
  assert.match(await page.textContent('#file-list > li .note'), /no records: .*template/);
  assert.deepEqual(page.errors, []);
});

test('two files of one rate sweep are one series', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, [
    'tests/fixtures/vllm/sweep/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json',
    'tests/fixtures/vllm/sweep/vllm-16qps-concurrency8-Llama-3.1-8B-Instruct-20250301-103000.json',
  ], 1);
  assert.equal(await activeView(page), 'latency');
  const tr = await traces(page);
  assert.equal(tr.length, 1);
  assert.deepEqual(tr[0].x, ['4', '16']);
  assert.deepEqual(tr[0].y, [60, 100]);
  // Trade-off: one series, so one frontier through both points.
  await page.click('button[data-view="tradeoff"]');
  await page.waitForFunction(() => (document.getElementById('tradeoff-chart')?.data?.length ?? 0) > 0);
  const names = [...new Set((await traces(page, 'tradeoff-chart')).map((t) => t.name))];
  assert.ok(names.length <= 2, names.join());
  assert.ok(!names.some((n) => /qps/.test(n)), `no series per file: ${names.join()}`);
  assert.deepEqual(page.errors, []);
});

test('real files: vLLM deployments per rate (as their author drew), SGLang runs split by length', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['tests/fixtures/real/vllm-bench-automation-results.jsonl'], 3);
  assert.equal(await activeView(page), 'latency');
  const tr = await traces(page);
  assert.deepEqual(tr.map((t) => t.name), ['base', 'kvcache', 'no-features']);
  assert.ok(tr.every((t) => t.x.join() === '10,30,inf'));
  assert.ok(tr.every((t) => t.text.every((s) => s === '')), 'no point is a mean');
  const rows = await comparisonRows(page);
  assert.deepEqual(rows.at(-1).slice(0, 1), ['inf']);
  assert.ok(rows.at(-1).includes('kvcache'));
  await screenshot(page, 'points-real-vllm-deployments');

  const second = await newPage(app.browser, t);
  await second.goto(app.server.url);
  await pickFiles(second, ['tests/fixtures/real/h200-llama-3.3-70b-sglang-offline.jsonl']);
  await waitForTraces(second, 2);
  const sg = await traces(second);
  // All seven runs are at rate Infinity: input length across, one series per output length.
  assert.equal((await layout(second)).xTitle, 'Input length (tokens)');
  // The ShareGPT run's lengths (224.051 / 191.532) are measured means, never a series or an
  // x value: it has no configured length, so it is counted under the chart, not drawn.
  assert.deepEqual(sg.map((t) => t.name), ['512', '1024', '2048']);
  assert.match(await second.textContent('#left-out'), /^1 of 7 filtered records are not drawn/);
  // The configuration run twice is one point that says it is a mean of two runs.
  const marked = sg.flatMap((t) => t.text).filter((s) => s !== '');
  assert.ok(marked.length >= 1 && marked.every((s) => s === 'mean of 2'), marked.join());
  assert.match((await layout(second)).title, /repeated runs of one configuration/);
  await screenshot(second, 'points-real-sglang-offline');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(second.errors, []);
});

test('records the chart cannot draw are counted under it', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['tests/fixtures/tables/rates-one-missing.csv'], 1);
  await page.waitForSelector('#left-out');
  assert.equal(
    await page.textContent('#left-out'),
    '1 of 4 filtered records are not drawn: they have no Request rate (req/s) or no Mean TTFT (ms).');
  assert.deepEqual(page.errors, []);
});

test('repeated runs: error bars of the 95 % interval, and "not distinguishable" where they overlap', async (t) => {
  const page = await newPage(app.browser, t);
  await load(page, ['tests/fixtures/noise/repeats.csv']);
  await page.click('button[data-view="throughput"]');
  await waitForTraces(page, 2);
  const bars = await page.evaluate(() => document.getElementById('chart').data.map((t) => ({
    name: t.name,
    y: [...t.y],
    type: t.error_y?.type,
    array: [...(t.error_y?.array ?? [])],
    hover: [...(t.hovertext ?? [])],
  })));
  const vllm = bars.find((b) => b.name === 'vllm');
  const sglang = bars.find((b) => b.name === 'sglang');
  // Three runs a point, averaged (not a series per run): 100, 104, 96 → 100 ± t(2)·4/√3.
  assert.deepEqual(vllm.y, [100, 1000]);
  assert.equal(vllm.type, 'data');
  const half = (s) => 4.3027 * s / Math.sqrt(3);
  assert.ok(Math.abs(vllm.array[0] - half(4)) < 1e-6, String(vllm.array));
  assert.ok(Math.abs(vllm.array[1] - half(10)) < 1e-6, String(vllm.array));
  assert.ok(Math.abs(sglang.array[0] - half(2)) < 1e-6, String(sglang.array));
  assert.match(vllm.hover[0], /95 % interval 90\.06 – 109\.9 \(mean ± t·s\/√n of 3 repeats, s = 4\)/);
  assert.match((await layout(page)).title, /error bars: 95 % interval of the mean of repeated runs/);
  // The table under the bars: at concurrency 1 the intervals overlap, at 16 they do not.
  const rows = await comparisonRows(page);
  assert.match(rows[0].join('|'), /not distinguishable \((sglang|vllm), (sglang|vllm)\)/);
  assert.ok(rows[1].includes('sglang') && !rows[1].join('|').includes('not distinguishable'), String(rows[1]));
  assert.match(await page.inputValue('#comparison-markdown'), /not distinguishable/);
  await screenshot(page, 'points-noise-error-bars');
  assert.deepEqual(page.errors, []);
});
