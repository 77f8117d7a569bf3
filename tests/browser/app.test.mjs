// The built explorer (dist/) in headless Chromium: shell, samples, chart values from the plotly div.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, chartTraces, waitForTraces, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');

test('the shell offers the bundled samples', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.waitForSelector('#empty-state');
  assert.equal(await page.textContent('h1'), 'benchlens');
  assert.ok(await page.isVisible('#drop-zone'));
  const samples = await page.$$eval('button.sample', (b) => b.map((x) => x.dataset.sample));
  assert.equal(samples.length, 6);
  assert.ok(samples.includes('001_b815cef7710eda19.txt'));
  assert.ok(samples.includes('005_benchlens_sweep.json'));
  await screenshot(page, 'empty-state');
  assert.deepEqual(page.errors, []);
});

test('sample 001 charts mean TTFT per request rate, one trace per engine', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  const file = page.locator('#file-list li.loaded');
  assert.match(await file.textContent(), /12 records/);
  const traces = await chartTraces(page);
  assert.deepEqual(traces.map((t) => t.name).sort(), ['sgl', 'vllm']);
  const vllm = traces.find((t) => t.name === 'vllm');
  const sgl = traces.find((t) => t.name === 'sgl');
  assert.equal(vllm.type, 'bar');
  assert.deepEqual(vllm.x, ['1', '10', '20', '30', '35', 'inf']);
  assert.equal(vllm.y[vllm.x.indexOf('10')].toFixed(2), '56.90');
  assert.equal(sgl.y[sgl.x.indexOf('10')].toFixed(2), '68.60');
  assert.equal(sgl.y[sgl.x.indexOf('30')].toFixed(2), '765.79');
  const title = await page.evaluate(() => document.getElementById('chart').layout.yaxis.title.text);
  assert.equal(title, 'Mean TTFT (ms)');
  // The comparison table under the chart, as in the report the seed came from.
  const row = await page.$$eval('#comparison-table tbody tr', (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
  const at10 = row.find((r) => r[0] === '10');
  assert.deepEqual(at10.slice(0, 5), ['10', '68.60', '56.90', 'vllm', '17.06%']);
  // Data-quality notes sit beside the compared values (all requests at once at rate inf).
  const atInf = row.find((r) => r[0] === 'inf');
  assert.match(atInf[5], /inf|infinite/i);
  await page.waitForTimeout(300);
  await screenshot(page, 'sample-001-latency');
  assert.deepEqual(page.errors, []);
});

test('files picked through the file input load beside the others, each with its count', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  // Two more at once through the picker, beside the sample already loaded.
  await pickFiles(page, ['public/samples/000_258d36619a7af95a.txt', 'public/samples/002_44f3a8b9f2336bbb.txt']);
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li.loaded').length === 3, null, { timeout: 30000 });
  const rows = await page.$$eval('#file-list > li', (items) =>
    items.map((li) => [li.dataset.file, li.querySelector('.count')?.textContent]),
  );
  assert.deepEqual(rows, [
    ['001_b815cef7710eda19.txt', '12 records'],
    ['000_258d36619a7af95a.txt', '1402 records'],
    ['002_44f3a8b9f2336bbb.txt', '32 records'],
  ]);
  assert.equal(await page.textContent('#match-count'), '1446 of 1446 records');
  // Files benchlens did not write name no build.
  assert.equal(await page.$$eval('#file-list .build', (b) => b.length), 0);
  assert.deepEqual(page.errors, []);
});
