// Trade-off, SLO and distribution views on real files, values read from the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');

async function loadSample001(page) {
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await page.waitForFunction(() => document.getElementById('chart')?.data?.length === 2);
}

test('trade-off: output throughput against p99 TTFT with Pareto frontiers', async (t) => {
  const page = await newPage(app.browser, t);
  await loadSample001(page);
  await page.click('button[data-view="tradeoff"]');
  await page.waitForFunction(() => (document.getElementById('tradeoff-chart')?.data?.length ?? 0) >= 2);
  const names = await page.evaluate(() => document.getElementById('tradeoff-chart').data.map((t) => t.name));
  assert.ok(names.some((n) => /vllm/.test(n)) && names.some((n) => /sgl/.test(n)), names.join());
  const frontier = await page.$$eval('#frontier-table tbody tr', (r) => r.length);
  assert.ok(frontier >= 2);
  // "chart SVG" exports the chart on show (this view's), not the hidden main chart.
  const xTitle = await page.evaluate(() => document.getElementById('tradeoff-chart').layout.xaxis.title.text);
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  const svgText = await (await svg.createReadStream()).toArray().then((b) => Buffer.concat(b).toString());
  assert.ok(svgText.includes(`>${xTitle}<`), `the trade-off's x axis title ${xTitle} is not in the SVG`);
  assert.ok(!/class="trace bars"/.test(svgText), 'the SVG holds the main chart\'s bars');
  await screenshot(page, 'seed-001-tradeoff');
  assert.deepEqual(page.errors, []);
});

test('SLO: the highest request rate meeting p99 TTFT and mean TPOT limits', async (t) => {
  const page = await newPage(app.browser, t);
  await loadSample001(page);
  await page.click('button[data-view="slo"]');
  await page.waitForSelector('#slo-table');
  const rows = await page.$$eval('#slo-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
  const headers = await page.$$eval('#slo-table th', (th) => th.map((h) => h.textContent));
  assert.equal(rows.length, 2, headers.join(' | '));
  const vllm = rows.find((r) => r[0] === 'vllm');
  assert.ok(vllm.includes('20'), `vllm meets the limits up to rate 20: ${vllm.join(' | ')}`);
  // A malformed limit is explained, not thrown.
  await page.fill('#slo-limits', 'p99_ttft_ms<=fast');
  await page.press('#slo-limits', 'Enter');
  await page.waitForSelector('#slo-error');
  await screenshot(page, 'seed-001-slo');
  assert.deepEqual(page.errors, []);
});

test('distributions from per-request detail', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/vllm/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="distribution"]');
  await page.waitForFunction(() => (document.getElementById('cdf-chart')?.data?.length ?? 0) >= 1);
  await page.waitForSelector('#percentile-table');
  const cells = await page.$$eval('#percentile-table tbody tr:first-child td', (td) => td.map((x) => x.textContent));
  assert.ok(Number(cells[1]) > 0, cells.join(' | '));
  await page.selectOption('#dist-quantity', 'itl_ms');
  await page.waitForFunction(() => document.getElementById('hist-chart')?.data?.length >= 1);
  await screenshot(page, 'distribution');
  assert.deepEqual(page.errors, []);
});

test('regression check between an old and a new run', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/analysis/old.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  await pickFiles(page, ['tests/fixtures/analysis/new.csv']);
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li.loaded').length === 2);
  await page.click('button[data-view="regression"]');
  await page.waitForSelector('#regression-table');
  assert.match(await page.textContent('#regression-summary'), /3 matched configurations.*1 worse/);
  let rows = await page.$$eval('#regression-table tbody tr', (r) => r.map((x) => [...x.querySelectorAll('td')].map((td) => td.textContent)));
  assert.equal(rows.length, 1);
  assert.ok(rows[0].includes('p99_ttft_ms') && rows[0].includes('worse'), rows[0].join(' | '));
  // A lower threshold reports the smaller changes too (-4.17 % output throughput at rate 16).
  await page.fill('#regression-threshold', '1');
  await page.press('#regression-threshold', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#regression-table tbody tr').length > 1);
  rows = await page.$$eval('#regression-table tbody tr', (r) => r.map((x) => x.textContent));
  assert.ok(rows.some((r) => r.includes('output_throughput')), rows.join('\n'));
  await screenshot(page, 'regression');
  assert.deepEqual(page.errors, []);
});

test('analysis settings travel in the address', async (t) => {
  const page = await newPage(app.browser, t);
  const data = `${app.server.url}samples/001_b815cef7710eda19.txt`;
  const q = new URLSearchParams([['view', 'slo'], ['v.slo', 'p99_ttft_ms<=100'], ['data', data]]);
  await page.goto(`${app.server.url}?${q}`);
  await page.waitForSelector('#slo-table');
  assert.equal(await page.inputValue('#slo-limits'), 'p99_ttft_ms<=100');
  // Changing a setting updates the address.
  await page.fill('#slo-limits', 'p99_ttft_ms<=250');
  await page.press('#slo-limits', 'Enter');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('v.slo') === 'p99_ttft_ms<=250');
  assert.deepEqual(page.errors, []);
});

test('trade-off: cost per million tokens against interactivity, read at a target', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/economics/deployments.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="tradeoff"]');
  await page.selectOption('#tradeoff-throughput', 'Cost per million output tokens ($)');
  await page.selectOption('#tradeoff-latency', 'Tokens per second per user (tok/s, 1000 / mean TPOT)');
  await page.fill('#tradeoff-at', '20');
  await page.press('#tradeoff-at', 'Enter');
  await page.waitForSelector('#tradeoff-at-table');
  // The prices used are named, with their source, under the chart and on it.
  const assumed = await page.$$eval('#tradeoff-assumed li', (li) => li.map((x) => x.textContent));
  assert.ok(assumed.some((a) => /H100.*\$2\.95\/GPU-hour \(AIMultiple/.test(a)), assumed.join(' | '));
  const title = await page.evaluate(() => document.getElementById('tradeoff-chart').layout.title.text);
  assert.match(title, /assuming .*H100/);
  const cells = async () => page.$$eval('#tradeoff-at-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  const before = await cells();
  assert.ok(before.length >= 1 && before.every((r) => Number(r[1]) > 0), JSON.stringify(before));
  // Halving the price halves every cost; the address keeps the price.
  await page.fill('#tradeoff-price', 'H100=1.475');
  await page.press('#tradeoff-price', 'Enter');
  await page.waitForFunction((first) => {
    const td = document.querySelector('#tradeoff-at-table tbody tr td:nth-child(2)');
    return td && td.textContent !== first;
  }, before[0][1]);
  const after = await cells();
  for (let i = 0; i < before.length; i++) {
    assert.ok(Math.abs(Number(after[i][1]) * 2 - Number(before[i][1])) < 0.02, `${before[i]} → ${after[i]}`);
  }
  assert.match(decodeURIComponent(page.url()), /price=H100=1\.475/);
  // A bad price is explained, not thrown.
  await page.fill('#tradeoff-price', 'H100');
  await page.press('#tradeoff-price', 'Enter');
  await page.waitForSelector('#tradeoff-error');
  assert.match(await page.textContent('#tradeoff-error'), /expected GPU=number/);
  await page.fill('#tradeoff-price', '');
  await page.press('#tradeoff-price', 'Enter');
  await page.waitForSelector('#tradeoff-at-table');
  // The overview: one row per curve, against a baseline as ratios, sortable.
  await page.waitForSelector('#overview-table tbody tr');
  await page.selectOption('#overview-baseline', 'vllm');
  await page.waitForFunction(() => /\(1\.00×\)/.test(document.querySelector('#overview-table')?.textContent ?? ''));
  const overview = async () => page.$$eval('#overview-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  const rows = await overview();
  assert.equal(rows.length, 2, JSON.stringify(rows));
  const vllm = rows.find((r) => r[0] === 'vllm');
  assert.ok(vllm.slice(1).every((c) => /\(1\.00×\)|not reached/.test(c)), JSON.stringify(vllm));
  // Cost: cheapest first when sorted by the first level.
  await page.click('#overview-table thead th:nth-child(2) button');
  await page.waitForFunction(() => document.querySelector('#overview-table tbody tr td') !== null);
  const sorted = (await overview()).map((r) => Number.parseFloat(r[1])).filter(Number.isFinite);
  assert.deepEqual(sorted, [...sorted].sort((a, b) => a - b), JSON.stringify(sorted));
  assert.match(decodeURIComponent(page.url()), /baseline=vllm/);
  await screenshot(page, 'economics-cost-at-target');
  assert.deepEqual(page.errors, []);
});

test('a file row lists its data notes: unknown GPU names, repeated configurations', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/real/zhjunqin-engines-comparison.md']);
  await page.waitForSelector('#file-list > li.loaded');
  const notes = await page.$$eval('#file-list > li.loaded .quality li', (li) => li.map((x) => x.textContent));
  assert.ok(notes.some((n) => /GPU name without a default price or power: 3090/.test(n)), JSON.stringify(notes));
  assert.match(await page.textContent('#file-list > li.loaded .quality summary'), /^\d+ data notes?$/);
  assert.deepEqual(page.errors, []);
});

test('repeated runs: error bars on the trade-off, "not distinguishable" in its overview and the SLO', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/noise/tradeoff-repeats.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="tradeoff"]');
  await page.selectOption('#tradeoff-latency', 'Tokens per second per user (tok/s, 1000 / mean TPOT)');
  await page.waitForFunction(() => /error bars/.test(document.getElementById('tradeoff-chart')?.layout?.title?.text ?? ''));
  const chart = await page.evaluate(() => {
    const el = document.getElementById('tradeoff-chart');
    return { data: el.data.map((d) => ({ name: d.name, x: d.x, bars: d.error_y?.array, hover: d.hovertext })), title: el.layout.title.text };
  });
  // Three runs of each of three loads per engine: three points, each with its bar.
  const vllm = chart.data.find((d) => d.name === 'vllm');
  assert.equal(vllm.x.length, 3, JSON.stringify(vllm));
  assert.ok(vllm.bars.every((b) => b > 0), JSON.stringify(vllm.bars));
  assert.match(vllm.hover[0], /95 % interval .* of 3 repeats/);
  assert.match(chart.title, /error bars: 95 % interval of the mean of repeated runs/);
  // The overview against vllm: at 100 tok/s per user sglang's reading is within the noise.
  await page.fill('#overview-levels', '40, 100');
  await page.press('#overview-levels', 'Enter');
  await page.selectOption('#overview-baseline', 'vllm');
  await page.waitForFunction(() => /not distinguishable/.test(document.querySelector('#overview-table')?.textContent ?? ''));
  const rows = await page.$$eval('#overview-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
  const sglang = rows.find((r) => r[0] === 'sglang');
  assert.doesNotMatch(sglang[1], /not distinguishable/, sglang.join(' | '));
  assert.match(sglang[2], /×, not distinguishable\)$/, sglang.join(' | '));
  await screenshot(page, 'tradeoff-noise');
  // The SLO: vllm passes at concurrency 8 on its mean, but its runs' interval holds the limit.
  await page.click('button[data-view="slo"]');
  await page.fill('#slo-limits', 'p99_ttft_ms<=500');
  await page.press('#slo-limits', 'Enter');
  await page.waitForSelector('#slo-table');
  const headers = await page.$$eval('#slo-table th', (th) => th.map((h) => h.textContent));
  const slo = await page.$$eval('#slo-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
  const noise = headers.indexOf('Noise');
  assert.ok(noise > 0, headers.join(' | '));
  const v = slo.find((r) => r[0] === 'vllm');
  assert.equal(v[1], '8');
  assert.match(v[noise], /^not distinguishable at 8: p99_ttft_ms 95 % interval .* holds 500$/);
  assert.equal(slo.find((r) => r[0] === 'sglang')[noise], '');
  // The table scrolls in its panel: show its Noise column.
  await page.$eval('#slo-table', (t) => { t.parentElement.scrollLeft = t.scrollWidth; });
  await screenshot(page, 'slo-noise');
  assert.deepEqual(page.errors, []);
});
