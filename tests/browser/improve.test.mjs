// The improvement view and exports on the seeds, with values checked against the seed files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');

async function improveRows(page) {
  return page.$$eval('#improve-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
}

test('seed 000: A100 over Tesla recomputes the Improvement column and shows the file\'s', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['public/samples/000_258d36619a7af95a.txt']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="improvement"]');
  await page.waitForSelector('#improve-table');
  assert.equal(await page.inputValue('#compare-dim'), 'gpu');
  assert.equal(await page.inputValue('#baseline-select'), 'Tesla');
  assert.equal(await page.inputValue('#candidate-select'), 'A100');
  assert.match(await page.textContent('#improve-rule'), /candidate \/ baseline − 1/);
  assert.match(await page.textContent('#improve-summary'), /^701 matched configurations/);
  const headers = await page.$$eval('#improve-table th', (th) => th.map((h) => h.textContent));
  const row = (await improveRows(page)).find((r) => r[headers.indexOf('Model')] === 'Codellama-13b-hf'
    && r[headers.indexOf('GPU count')] === '1' && r[headers.indexOf('Batch size')] === '512');
  assert.ok(row, 'Codellama-13b-hf, 1 GPU, batch 512 is matched');
  // From the printed (rounded) throughputs 126.342806 / 30.718344; the seed prints 311.294330.
  const imp = headers.indexOf('Improvement (%)');
  assert.equal(row[imp], '311.294326');
  // ... and beside it the file's own figure, as printed.
  assert.equal(row[headers.indexOf('Improvement in the file (%)')], '311.294330');
  assert.match(await page.textContent('#improve-reported'), /for 701 of 701 rows/);
  // Bars and heatmap are drawn.
  await page.waitForFunction(() => document.getElementById('improve-bars').data?.length === 1);
  await page.waitForFunction(() => document.getElementById('improve-heatmap').data?.[0]?.type === 'heatmap');
  // Sorting by improvement, descending: the largest first.
  await page.click('#improve-table th:has-text("Improvement (%)")');
  const sorted = (await improveRows(page)).map((r) => Number(r[imp]));
  assert.ok(sorted[0] >= sorted[1] && sorted[1] >= sorted[2]);
  assert.match(await page.inputValue('#improve-markdown'), /^\| .*Improvement/m);
  await screenshot(page, 'seed-000-improvement');
  // The address carries the comparison; opening it elsewhere restores it.
  await page.selectOption('#baseline-select', 'A100');
  await page.selectOption('#candidate-select', 'Tesla');
  await page.waitForFunction(() => location.search.includes('base=A100'));
  // The reverse comparison is not the one the file printed: its figure is not shown.
  await page.waitForFunction(() => !document.getElementById('improve-reported'));
  const revHeaders = await page.$$eval('#improve-table th', (th) => th.map((h) => h.textContent));
  assert.ok(!revHeaders.includes('Improvement in the file (%)'));
  assert.match(page.url(), /view=improvement/);
  assert.match(page.url(), /cmp=gpu/);
  assert.match(page.url(), /cand=Tesla/);
  assert.deepEqual(page.errors, []);
});

test('seed 002: vllm over tgi output throughput at 128/128 is 8.15 %', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['public/samples/002_44f3a8b9f2336bbb.txt']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="improvement"]');
  await page.waitForSelector('#compare-dim');
  await page.selectOption('#compare-dim', 'engine');
  await page.selectOption('#baseline-select', 'tgi');
  await page.selectOption('#candidate-select', 'vllm');
  await page.selectOption('#improve-metric', 'output_throughput');
  await page.waitForSelector('#improve-table');
  assert.match(await page.textContent('#improve-summary'), /16 matched/);
  assert.match(await page.textContent('#improve-summary'), /engine_version/);
  const headers = await page.$$eval('#improve-table th', (th) => th.map((h) => h.textContent));
  const row = (await improveRows(page)).find((r) => r[headers.indexOf('Input length (tokens)')] === '128'
    && r[headers.indexOf('Output length (tokens)')] === '128');
  assert.equal(Number(row[headers.indexOf('Improvement (%)')]).toFixed(2), '8.15');
  await screenshot(page, 'seed-002-improvement');
  assert.deepEqual(page.errors, []);
});

/** The text of a download. */
async function downloaded(download) {
  return (await download.createReadStream()).toArray().then((b) => Buffer.concat(b).toString());
}

test('exports: comparison as Markdown, chart as SVG, records as canonical CSV and JSON', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await page.waitForFunction(() => document.getElementById('chart')?.data?.length === 2);
  // The comparison table's Markdown: mean TTFT per request rate as the seed file gives it
  // (vllm 45.037437…, sgl 64.875195… at rate 1; better by (64.88 − 45.04) / 64.88), with the
  // flags of the records behind each point (at rate inf both engines' records completed fewer
  // prompts than their num_prompts).
  assert.equal(await page.inputValue('#comparison-markdown'), [
    '| Request rate (req/s) | sgl (ms) | vllm (ms) | Fastest | Better by (%) | Data quality |',
    '| ---: | ---: | ---: | --- | ---: | --- |',
    '| 1 | 64.88 | 45.04 | vllm | 30.58 |  |',
    '| 10 | 68.60 | 56.90 | vllm | 17.06 |  |',
    '| 20 | 100.92 | 88.14 | vllm | 12.66 |  |',
    '| 30 | 765.79 | 373.01 | vllm | 51.29 |  |',
    '| 35 | 9696.13 | 8402.26 | vllm | 13.34 |  |',
    '| inf | 17419.66 | 18107.32 | sgl | 3.80 | sgl: the record completed fewer prompts than asked; vllm: the record completed fewer prompts than asked |',
    '',
  ].join('\n'));
  // The chart as an SVG file: plotly's own drawing of both engines' bars.
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  assert.equal(svg.suggestedFilename(), 'benchlens-mean_ttft_ms-by-request_rate.svg');
  const svgText = await downloaded(svg);
  assert.match(svgText, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*width="1200" height="600"/);
  assert.ok(svgText.trimEnd().endsWith('</svg>'));
  assert.equal((svgText.match(/class="trace bars"/g) ?? []).length, 2);
  const legend = [...svgText.matchAll(/class="legendtext"[^>]*>([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(legend, ['sgl', 'vllm']);
  assert.ok(svgText.includes('>Mean TTFT (ms)<'), 'the y axis title is in the file');
  // Records of one engine.
  await page.click('fieldset[data-dim="engine"] input[data-value="sgl"]');
  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const lines = (await downloaded(csv)).trim().split('\n');
  assert.equal(lines.length, 7, 'header + 6 sgl records');
  assert.match(lines[0], /^source,format,model,engine,/);
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const doc = JSON.parse(await downloaded(json));
  assert.equal(doc.schema_version, 1);
  assert.equal(doc.records.length, 6);
  assert.ok(doc.records.every((r) => r.engine === 'sgl'));
  // One engine left: no comparison, so no comparison Markdown either.
  assert.equal(await page.locator('#comparison-markdown').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('without plotly.js every chart view says so instead of drawing nothing', async (t) => {
  const page = await newPage(app.browser, t);
  // The page without its plotly.js: the views' charts cannot be drawn.
  await page.route('**/plotly-cartesian*.js', (route) => route.abort());
  await page.goto(app.server.url);
  await page.click('button[data-sample="000_258d36619a7af95a.txt"]');
  await page.waitForSelector('#file-list > li.loaded');
  const message = 'plotly.js did not load; charts cannot be drawn';
  const shows = async (view) => {
    await page.click(`button[data-view="${view}"]`);
    const note = page.locator('.chart-panel .chart-error:visible');
    await note.first().waitFor({ timeout: 20000 });
    assert.deepEqual(await note.allTextContents(), [message], view);
  };
  // Seed 000 has throughput and a GPU comparison; seed 001 latencies for the trade-off.
  await shows('throughput');
  await shows('improvement');
  await pickFiles(page, ['public/samples/001_b815cef7710eda19.txt']);
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li.loaded').length === 2);
  await shows('tradeoff');
});

test('repeated runs: each side is a mean ± its interval, overlap says "not distinguishable"', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/noise/repeats.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="improvement"]');
  await page.waitForSelector('#compare-dim');
  await page.selectOption('#compare-dim', 'engine');
  await page.selectOption('#baseline-select', 'vllm');
  await page.selectOption('#candidate-select', 'sglang');
  await page.selectOption('#improve-metric', 'output_throughput');
  await page.waitForSelector('#improve-table');
  // Runs are repeats, not a key: two matched configurations, nothing ambiguous.
  assert.match(await page.textContent('#improve-summary'), /^2 matched configurations/);
  assert.doesNotMatch(await page.textContent('#improve-summary'), /duplicate/);
  const headers = await page.$$eval('#improve-table th', (th) => th.map((h) => h.textContent));
  const rows = await improveRows(page);
  const at = (c) => rows.find((r) => r[headers.indexOf('Max concurrency')] === c);
  const noise = headers.indexOf('Noise');
  assert.ok(noise >= 0, String(headers));
  assert.equal(at('1')[noise], 'not distinguishable');
  assert.equal(at('16')[noise], 'distinguishable');
  assert.match(at('1')[headers.indexOf('vllm (baseline)')], /^100(\.00)? ± 9\.94$/);
  assert.match(await page.inputValue('#improve-markdown'), /\| not distinguishable \|/);
  await screenshot(page, 'improve-noise');
  assert.deepEqual(page.errors, []);
});
