// The capacity view: a `benchlens sweep` file opens on it, with a goodput (or throughput) panel
// and one panel per objective on one load axis, the objectives' limits, the knee and the
// capacity in words; filters narrow it; two deployments' sweeps are two curves.
// Screenshots: test-artifacts/capacity-sample.png, capacity-fixture.png, capacity-overlay.png
// (and capacity-overlay-1000px.png, the narrowest page).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newPage, screenshot, pickFiles, useApp, ROOT } from './harness.mjs';

const app = useApp('dist');

/** The capacity chart's figure as plotly holds it: traces and layout. */
async function capacityFigure(page) {
  return page.evaluate(() => {
    const div = document.getElementById('capacity-chart');
    return {
      data: (div?.data ?? []).map((t) => ({
        name: t.name, x: [...(t.x ?? [])], y: [...(t.y ?? [])], xaxis: t.xaxis, yaxis: t.yaxis,
        symbol: t.marker?.symbol, errorY: t.error_y?.type,
      })),
      layout: JSON.parse(JSON.stringify(div?.layout ?? {})),
    };
  });
}

async function waitForCapacityChart(page, traces = 1) {
  await page.waitForFunction(
    (n) => (document.getElementById('capacity-chart')?.data?.length ?? 0) >= n,
    traces,
    { timeout: 20000 },
  );
}

/** Sweep names and the capacity sentence under the chart, one per sweep. */
async function capacityWords(page) {
  return page.$$eval('#capacity-words .capacity-sweep', (blocks) => blocks.map((b) => ({
    headline: b.querySelector('.capacity-headline').textContent,
    notes: [...b.querySelectorAll('li')].map((li) => li.textContent),
  })));
}

const knees = (layout) => (layout.shapes ?? []).filter((s) => s.type === 'rect');

test('the bundled sweep opens on the capacity view from the start page', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="005_benchlens_sweep.json"]');
  await page.waitForSelector('#file-list > li.loaded');
  await waitForCapacityChart(page, 5);
  assert.ok(await page.isVisible('button[data-view="capacity"].active'), 'the capacity tab is chosen');
  const { data, layout } = await capacityFigure(page);
  // Goodput on top, then one panel per objective (ttft:100 as the share within, p90_e2el:150).
  assert.equal(layout.yaxis.title.text, 'Goodput (req/s)');
  assert.equal(layout.yaxis2.title.text, 'Requests with TTFT ≤ 100 ms (%)');
  assert.equal(layout.yaxis3.title.text, 'P90 E2E latency (ms)');
  assert.equal(layout.xaxis3.title.text, 'Request rate (req/s)');
  assert.equal(layout.xaxis2.matches, 'x');
  const names = data.map((d) => d.name);
  const limit95 = data.find((d) => d.name === 'limit: 95 % with TTFT ≤ 100 ms');
  assert.ok(limit95, JSON.stringify(names));
  assert.deepEqual(limit95.y, [95, 95]);
  assert.equal(limit95.yaxis, 'y2');
  const limitE2el = data.find((d) => d.name === 'limit: P90 E2E latency ≤ 150 ms');
  assert.deepEqual(limitE2el?.y, [150, 150]);
  assert.equal(limitE2el.yaxis, 'y3');
  // The sample as written: its capacity sentence, and the knee drawn where it says.
  const file = JSON.parse(await readFile(join(ROOT, 'public/samples/005_benchlens_sweep.json'), 'utf8'));
  const recorded = file.records[0]['tag.capacity'];
  const [, capacity, failedAt] = recorded.match(/knee lies in \[([\d.]+), ([\d.]+)\)/);
  const star = data.find((d) => d.symbol === 'star');
  assert.deepEqual(star.x, [Number(capacity)]);
  const rects = knees(layout);
  assert.equal(rects.length, 3, 'the knee on each of the three panels');
  assert.deepEqual([rects[0].x0, rects[0].x1], [Number(capacity), Number(failedAt)]);
  // Every probe is a point: passed ones and failed ones, each load's repeats with error bars.
  const probes = data.filter((d) => / probes$/.test(d.name) && d.yaxis === 'y');
  assert.equal(probes.reduce((n, d) => n + d.x.length, 0), file.records.length);
  assert.equal(data[0].errorY, 'data');
  const words = await capacityWords(page);
  assert.equal(words.length, 1);
  assert.equal(words[0].headline, `005_benchlens_sweep.json: ${recorded}`);
  assert.match(words[0].notes.join('\n'), /At the knee: \d of \d probes? at [\d.]+ passed; \d of \d probes? at [\d.]+ passed\./);
  assert.match(words[0].notes.join('\n'), /Goodput at the capacity: [\d.]+ req\/s/);
  await screenshot(page, 'capacity-sample');
  assert.deepEqual(page.errors, []);
});

test('the mock sweep fixture: limit, knee and words; a filter narrows what is judged', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/loadgen/sweep-mock.json']);
  await page.waitForSelector('#file-list > li.loaded');
  await waitForCapacityChart(page, 4);
  assert.ok(await page.isVisible('button[data-view="capacity"].active'));
  const { data, layout } = await capacityFigure(page);
  assert.equal(layout.yaxis.title.text, 'Request throughput (req/s)', 'percentile objectives only');
  assert.equal(layout.yaxis2.title.text, 'P90 TTFT (ms)');
  assert.deepEqual(data.find((d) => d.name === 'limit: P90 TTFT ≤ 100 ms')?.y, [100, 100]);
  assert.deepEqual(knees(layout).map((r) => [r.x0, r.x1]), [[51.88, 54.17], [51.88, 54.17]]);
  const failed = data.find((d) => d.yaxis === 'y2' && / failed probes$/.test(d.name));
  assert.deepEqual(failed.x, [54.17, 54.17, 56.57, 80]);
  let words = await capacityWords(page);
  assert.equal(
    words[0].headline,
    'sweep-mock.json: capacity 51.880 req/s: every probe at 51.880 met the objectives and one at '
      + '54.170 did not, so the knee lies in [51.880, 54.170) (+4.4 %); it rests on probe 8',
  );
  assert.ok(words[0].notes.includes('At the knee: 2 of 2 probes at 51.880 passed; 0 of 2 probes at 54.170 passed.'));
  await screenshot(page, 'capacity-fixture');
  // Only the passed probes: the view says what they alone support.
  await page.click('fieldset[data-dim="tag.verdict"] input[data-value="passed"]');
  await page.waitForFunction(() => /probes shown give/.test(document.getElementById('capacity-words')?.textContent));
  words = await capacityWords(page);
  assert.match(words[0].notes[0], /^The 5 probes shown give: capacity at least 51\.880 req\/s/);
  const after = await capacityFigure(page);
  assert.equal(after.data.filter((d) => / failed probes$/.test(d.name)).length, 0);
  assert.deepEqual(page.errors, []);
});

test('two deployments\' sweeps are two curves, named by what differs', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/loadgen/sweep-mock.json', 'tests/fixtures/loadgen/sweep-mock-small.json']);
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li.loaded').length === 2);
  await page.waitForFunction(() => document.querySelectorAll('#capacity-words .capacity-sweep').length === 2);
  assert.ok(await page.isVisible('button[data-view="capacity"].active'));
  const { data, layout } = await capacityFigure(page);
  // One mean line per sweep on the first panel, in the legend under the model's name.
  const curves = data.filter((d) => d.yaxis === 'y' && d.errorY === 'data');
  assert.deepEqual(curves.map((d) => d.name), ['tiny-mock', 'tiny-mock-small']);
  assert.equal(layout.legend.title.text, 'Model');
  const stars = data.filter((d) => d.symbol === 'star').map((d) => d.x[0]);
  assert.deepEqual(stars, [51.88, 25.93]);
  assert.equal(knees(layout).length, 4, 'two knees on two panels');
  // Both sweeps have the same 100 ms limit: one line.
  assert.equal(data.filter((d) => /^limit/.test(d.name)).length, 1);
  const words = await capacityWords(page);
  assert.match(words[0].headline, /^tiny-mock: capacity 51\.880 req\/s/);
  assert.match(words[1].headline, /^tiny-mock-small: capacity 25\.930 req\/s/);
  await screenshot(page, 'capacity-overlay');
  // The narrowest page the explorer is laid out for: the chart follows the width.
  await page.setViewportSize({ width: 1000, height: 1000 });
  await page.waitForFunction(() => document.querySelector('#capacity-chart .main-svg')?.getAttribute('width') < 900);
  await screenshot(page, 'capacity-overlay-1000px');
  // A filter on the model leaves one curve.
  await page.click('fieldset[data-dim="model"] input[data-value="tiny-mock-small"]');
  await page.waitForFunction(() => document.querySelectorAll('#capacity-words .capacity-sweep').length === 1);
  const one = await capacityFigure(page);
  assert.equal(one.data.filter((d) => d.symbol === 'star').length, 1);
  assert.deepEqual(page.errors, []);
});
