// A `benchlens sweep` file (made against the mock: tests/fixtures/loadgen/README.md) opens on the
// capacity view (tests/browser/capacity.test.mjs); in the latency view it is one curve: one point
// per probed load in numeric order, the repeated probes at the knee shown as "mean of 2", nothing
// that differs from probe to probe split into series.
// Screenshot: test-artifacts/sweep-chart.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, waitForTraces, pickFiles, chartTraces, useApp } from './harness.mjs';

const app = useApp('dist');

test('a sweep opens as one curve over the probed loads', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/loadgen/sweep-mock.json']);
  await page.waitForSelector('#file-list > li.loaded');
  assert.match(await page.textContent('#file-list > li.loaded'), /9 records/);
  await page.click('button[data-view="latency"]');
  await waitForTraces(page, 1);
  const traces = await chartTraces(page);
  assert.equal(traces.length, 1, JSON.stringify(traces.map((tr) => tr.name)));
  const x = traces[0].x.map(Number);
  assert.deepEqual(x, [...x].sort((a, b) => a - b));
  // Nine probes at seven loads: 51.88 and 54.17 req/s were probed twice.
  assert.equal(x.length, 7, JSON.stringify(x));
  const text = await page.evaluate(() => JSON.stringify(document.getElementById('chart').data));
  assert.match(text, /mean of 2/);
  await screenshot(page, 'sweep-chart');
  assert.deepEqual(page.errors, []);
});
