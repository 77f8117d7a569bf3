// A million rows (issue 14, item 4): a 1,000,000-row tidy CSV of about 67 MB, generated at test
// time in the page (tests/browser/tidy.mjs), is dropped, shows every record, charts, and a
// filter click redraws the chart with exactly the means the generator implies, and the
// trade-off view of the million points draws every frontier point with no long main-thread task
// (issue 33 item 4). Timings are printed here and by `make bench` (tests/browser/bench.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, chartTraces, useApp } from './harness.mjs';
import { dropTidy, tidyRow, tradeoffTasks } from './tidy.mjs';

const app = useApp('dist');
const ROWS = 1_000_000;

/**
 * Mean TTFT per (GPU, max concurrency) over the generator's rows of `engine`, summed in row
 * order as the explorer sums them, so the doubles are equal, not just close.
 */
function expectedMeans(engine) {
  const sums = new Map();
  for (let i = 0; i < ROWS; i++) {
    const [, e, gpu, , concurrency, ttft] = tidyRow(i, true);
    if (e !== engine) continue;
    const key = `${gpu} ${concurrency}`;
    const s = sums.get(key) ?? [0, 0];
    s[0] += Number(ttft);
    s[1] += 1;
    sums.set(key, s);
  }
  return sums;
}

test('a 1,000,000-row tidy CSV loads, charts and filters with exact values', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.waitForSelector('#empty-state');
  const load = await dropTidy(page, 'tidy-1m.csv', ROWS);
  t.diagnostic(`${(load.size / 1e6).toFixed(1)} MB: drop -> first chart ${load.ms.toFixed(0)} ms, longest main-thread task ${load.longest.toFixed(0)} ms`);
  await page.waitForSelector('#file-list > li.loaded');
  assert.equal(await page.textContent('#file-list > li .count'), `${ROWS} records`);
  assert.equal(await page.textContent('#match-count'), `${ROWS} of ${ROWS} records`);

  // The default chart: mean TTFT by max concurrency, a line per engine, a panel per GPU.
  const layout = await page.evaluate(() => {
    const l = document.getElementById('chart').layout;
    return { y: l.yaxis.title.text, x: l.xaxis.title.text, panels: l.annotations.map((a) => a.text).filter((a) => a.startsWith('GPU')) };
  });
  assert.deepEqual(layout, { y: 'Mean TTFT (ms)', x: 'Max concurrency', panels: ['GPU A100', 'GPU H100', 'GPU L40S', 'GPU MI300X'] });
  const all = await chartTraces(page);
  assert.equal(all.length, 16);
  assert.deepEqual([...new Set(all.map((tr) => tr.name))], ['sglang', 'tgi', 'trtllm', 'vllm']);
  for (const tr of all) assert.deepEqual(tr.x, [1, 2, 4, 8, 16, 32, 64, 128, 256]);

  // One filter click: only vLLM's quarter of the rows, its lines redrawn with their means.
  await page.click('fieldset[data-dim="engine"] input[data-value="vllm"]');
  await page.waitForFunction(() => {
    const d = document.getElementById('chart').data;
    return d.length === 4 && d.every((tr) => tr.name === 'vllm');
  });
  assert.equal(await page.textContent('#match-count'), `${ROWS / 4} of ${ROWS} records`);
  const sums = expectedMeans('vllm');
  const gpus = ['A100', 'H100', 'L40S', 'MI300X'];
  const traces = await page.evaluate(() => document.getElementById('chart').data.map((tr) => ({ axis: tr.xaxis, x: [...tr.x], y: [...tr.y] })));
  assert.deepEqual(traces.map((tr) => tr.axis), ['x', 'x2', 'x3', 'x4']);
  traces.forEach((tr, p) => {
    const want = tr.x.map((c) => {
      const [sum, n] = sums.get(`${gpus[p]} ${c}`);
      return sum / n;
    });
    assert.deepEqual(tr.y, want, `panel ${gpus[p]}`);
  });
  // A known group, spelled out: vLLM on H100 at concurrency 8, 6,944 rows.
  assert.equal(sums.get('H100 8')[1], 6944);
  assert.equal(traces[1].y[3], sums.get('H100 8')[0] / 6944);
  await screenshot(page, 'million-rows-vllm');
  assert.deepEqual(page.errors, []);
});

test('the trade-off view of 1,000,000 points: every frontier point drawn, no long task', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.waitForSelector('#empty-state');
  await dropTidy(page, 'tidy-1m.csv', ROWS);
  await page.waitForSelector('#file-list > li.loaded');
  const latency = 'Tokens per second per user (tok/s, 1000 / mean TPOT)';
  const steps = await tradeoffTasks(page, latency);
  const list = (s) => `${s.ms.toFixed(0)} ms, tasks over 50 ms: ${s.tasks.map((d) => d.toFixed(0)).join(', ') || 'none'}`;
  t.diagnostic(`view opened -> drawn ${list(steps.open)}; x axis chosen -> chart ${list(steps.axis)}`);
  // Issue 33 asks for no task over 100 ms on a quiet machine (`make bench` prints it); the bound
  // here is loose for a busy one. Before the view worked in steps it was one task of 616 ms.
  assert.ok(steps.longest < 300, `longest main-thread task ${steps.longest.toFixed(0)} ms`);

  const chart = await page.evaluate(() => {
    const div = document.getElementById('tradeoff-chart');
    return {
      title: div.layout.title.text,
      traces: div.data.map((tr) => ({ name: tr.name, type: tr.type ?? 'scatter', x: [...tr.x], y: [...tr.y], hover: (tr.hovertext ?? []).length })),
    };
  });
  const grids = chart.traces.filter((tr) => tr.type === 'heatmap');
  const fronts = chart.traces.filter((tr) => / frontier$/.test(tr.name));
  assert.equal(grids.length, 16);
  assert.equal(fronts.length, 16);
  // The table lists each distinct frontier point with its record count: the chart draws each
  // of those records' points, with its own hover text.
  assert.equal(await page.$('#frontier-more'), null);
  const rows = await page.$$eval('#frontier-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const records = rows.reduce((n, r) => n + Number(r[3]), 0);
  const drawn = fronts.reduce((n, tr) => n + tr.x.length, 0);
  assert.equal(drawn, records);
  for (const tr of fronts) assert.equal(tr.hover, tr.x.length, tr.name);
  for (const [series, x, y] of rows) {
    const tr = fronts.find((f) => f.name === `${series} frontier`);
    assert.ok(tr, series);
    const near = (a, b) => Math.abs(a - Number(b.replace(/,/g, ''))) <= Math.abs(a) * 0.01 + 0.01;
    assert.ok(tr.x.some((px, i) => near(px, x) && near(tr.y[i], y)), `${series}: (${x}, ${y}) not drawn`);
  }
  assert.match(chart.title, new RegExp(`<sub>${ROWS} points drawn as \\d+ grid cells \\(shade: points in the cell\\); all ${records} frontier points drawn</sub>`));
  await screenshot(page, 'million-rows-tradeoff');
  assert.deepEqual(page.errors, []);
});
