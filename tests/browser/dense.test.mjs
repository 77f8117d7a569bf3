// A 200,000-row file (generated here, not committed): the main chart and the trade-off view
// stay bounded. The main chart has 200,000 distinct request rates, so its lines lose markers
// and per-point hover text; the trade-off view draws each series binned on a grid with the
// exact frontier over it, in steps with no long task. Times are printed; the bounds asserted
// are loose for a shared machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACTS, newPage, screenshot, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');
const ROWS = 200_000;

function denseCsv(rows) {
  const lines = ['model,engine,request_rate,output_throughput,p99_ttft_ms,mean_tpot_ms'];
  for (let i = 0; i < rows; i++) {
    lines.push([
      'llama-8b',
      i % 2 ? 'vllm' : 'sglang',
      (1 + i * 0.001).toFixed(3),
      (100 + ((i * 104729) % 50000) / 10).toFixed(1),
      (50 + ((i * 7919) % 100000) / 100).toFixed(2),
      (5 + (i % 89) * 0.11).toFixed(2),
    ].join(','));
  }
  return lines.join('\n') + '\n';
}

test(`${ROWS} rows: main chart and trade-off view stay bounded`, async (t) => {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, 'dense-200k.csv');
  await writeFile(file, denseCsv(ROWS));
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, [file]);
  await page.waitForSelector('#file-list > li.loaded', { timeout: 120000 });
  await page.waitForFunction(() => (document.getElementById('chart')?.data?.length ?? 0) >= 1, null, { timeout: 120000 });
  const main = await page.evaluate(() => document.getElementById('chart').data.map((tr) => ({
    mode: tr.mode, points: tr.x.length, hover: (tr.hovertext ?? []).length,
  })));
  const mainPoints = main.reduce((n, tr) => n + tr.points, 0);
  if (mainPoints > 10000) {
    for (const tr of main) assert.equal(tr.hover, 0, JSON.stringify(main));
  }

  const timing = await page.evaluate(async () => {
    const longTasks = [];
    const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
    observer.observe({ type: 'longtask' });
    const t0 = performance.now();
    document.querySelector('button[data-view="tradeoff"]').click();
    const drawn = await new Promise((resolve) => {
      const poll = () => {
        const div = document.getElementById('tradeoff-chart');
        if ((div?.data?.length ?? 0) >= 2) resolve(performance.now());
        else setTimeout(poll, 5);
      };
      poll();
    });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    observer.disconnect();
    return { ms: drawn - t0, longest: Math.max(0, ...longTasks) };
  });
  const chart = await page.evaluate(() => {
    const div = document.getElementById('tradeoff-chart');
    return {
      title: div.layout.title.text,
      traces: div.data.map((tr) => ({ name: tr.name, type: tr.type, points: tr.x.length })),
    };
  });
  t.diagnostic(`main chart: ${mainPoints} points in ${main.length} traces (${main.map((tr) => tr.mode).join(', ')})`);
  t.diagnostic(`trade-off view: click to chart ${timing.ms.toFixed(0)} ms, longest task ${timing.longest.toFixed(0)} ms`);
  t.diagnostic(`trade-off traces: ${JSON.stringify(chart.traces)}`);
  // Loose, for a loaded machine: it was 20 s while the comparison table was listed whole, and
  // one task of 735-927 ms until the view worked in steps (issue 33 item 4 asks for 100 ms).
  assert.ok(timing.ms < 5000, `trade-off view took ${timing.ms.toFixed(0)} ms`);
  assert.ok(timing.longest < 300, `longest main-thread task ${timing.longest.toFixed(0)} ms`);
  assert.match(chart.title, new RegExp(`${ROWS} points drawn as \\d+ grid cells`));
  const markers = chart.traces.filter((tr) => !/frontier$/.test(tr.name));
  assert.ok(markers.length >= 1, JSON.stringify(chart.traces));
  for (const tr of markers) assert.ok(tr.points <= 64 * 40, JSON.stringify(tr));
  const frontier = await page.$$eval('#frontier-table tbody tr', (r) => r.length);
  assert.ok(frontier >= 2, `${frontier} frontier rows`);
  await screenshot(page, 'dense-200k-tradeoff');

  // The latency bars' comparison table lists a bounded number of its 100,000 x values (a row
  // each was 1.2 million elements, and every later layout of the page took 20 s).
  await page.evaluate(() => document.querySelector('button[data-view="latency"]').click());
  await page.waitForSelector('#comparison-table tbody tr', { timeout: 60000 });
  const comparison = await page.evaluate(() => ({
    rows: document.querySelectorAll('#comparison-table tbody tr').length,
    more: document.getElementById('comparison-more')?.textContent ?? '',
    elements: document.getElementById('comparison-table').getElementsByTagName('*').length,
  }));
  t.diagnostic(`comparison table: ${JSON.stringify(comparison)}`);
  assert.equal(comparison.rows, 200, JSON.stringify(comparison));
  assert.match(comparison.more, /^and \d+ more rows, not listed here: the Markdown above has them all$/);
  assert.ok(comparison.elements < 2000, `${comparison.elements} elements in the table`);
  assert.deepEqual(page.errors, []);
});
