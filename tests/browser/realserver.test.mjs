// A result file that `benchlens run` wrote against a real server (llama-cpp-python with the tiny
// model of scripts/tiny_gguf.py; tests/fixtures/real/README.md) opens in the explorer: both
// stages load, the chart draws one point per concurrency in numeric order, and the per-request
// detail feeds the distribution view. Screenshots: test-artifacts/realserver-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, waitForTraces, pickFiles, chartTraces, useApp } from './harness.mjs';

const app = useApp('dist');

test('a benchlens run against llama.cpp opens with one point per concurrency', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/real/llamacpp/llamacpp-tiny-chat.json']);
  await page.waitForSelector('#file-list > li.loaded');
  assert.match(await page.textContent('#file-list > li.loaded'), /2 records/);
  assert.equal(await page.textContent('#file-list > li.loaded .build'), 'benchlens 0.1.0');
  await waitForTraces(page, 1);
  const traces = await chartTraces(page);
  assert.equal(traces.length, 1, JSON.stringify(traces));
  assert.deepEqual(traces[0].x.map(String), ['1', '4']);
  assert.ok(traces[0].y.every((v) => Number.isFinite(v) && v > 0), JSON.stringify(traces[0].y));
  await screenshot(page, 'realserver-chart');
  await page.click('button[data-view="distribution"]');
  await page.waitForFunction(() => (document.getElementById('cdf-chart')?.data?.length ?? 0) >= 1);
  const cells = await page.$$eval('#percentile-table tbody tr:first-child td', (td) => td.map((x) => x.textContent));
  assert.ok(Number(cells[1]) > 0, cells.join(' | '));
  // The two runs (concurrency 1 and 4) are two curves, never one pooled "all" curve.
  const curves = await page.evaluate(() => document.getElementById('cdf-chart').data.map((t) => t.name));
  assert.deepEqual(curves, ['1', '4']);
  await screenshot(page, 'realserver-distribution');
  assert.deepEqual(page.errors, []);
});
