// A file 100,000 columns wide (issue: width is linear): it loads, its metric menu lists a
// bounded number of metrics with a search box to find the others, and the page's thread is
// never held for seconds. The time from drop to chart is printed; `make bench` prints it too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, waitForTraces, serveDist, launch } from './harness.mjs';
import { wideCsv, dropAndTimeChart } from './wide.mjs';

const app = {};
before(async () => {
  app.server = await serveDist('dist');
  app.browser = await launch();
});
after(async () => {
  await app.browser?.close();
  app.server?.close();
});

test('a 100,000-column CSV loads with a bounded metric menu and a search for the rest', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  const csv = wideCsv(100_000);
  const timing = await dropAndTimeChart(page, 'wide-100k.csv', csv);
  console.log(`100,000 columns (${(csv.length / 1e6).toFixed(1)} MB): drop -> chart ${timing.ms.toFixed(0)} ms, longest main-thread task ${timing.longestMs.toFixed(0)} ms`);
  await waitForTraces(page, 1);
  assert.match(await page.textContent('#file-list > li .count'), /2 records/);
  // The menu lists at most 200 metrics plus the chosen one, and says how many there are.
  const options = await page.$$eval('#metric-select option', (o) => o.length);
  assert.ok(options > 0 && options <= 201, `${options} options`);
  assert.match(await page.textContent('#metric-count'), /100,?000 metrics/);
  // Typing narrows the menu to the matching metrics; picking one redraws the chart with it.
  await page.fill('#metric-search', 'metric_99999');
  await page.press('#metric-search', 'Enter');
  await page.waitForFunction(() => [...document.querySelectorAll('#metric-select option')].some((o) => o.value === 'extra.metric_99999'));
  const names = await page.$$eval('#metric-select option', (o) => o.map((x) => x.value));
  assert.ok(names.length <= 2, names.join(' '));
  await page.selectOption('#metric-select', 'extra.metric_99999');
  await page.waitForFunction(() => (document.getElementById('chart')?.data ?? []).some((tr) => [...tr.y].includes(999.5)));
  const y = await page.evaluate(() => document.getElementById('chart').data.map((tr) => [...tr.y]));
  assert.deepEqual(y.flat().sort((a, b) => a - b), [999, 999.5]);
  assert.deepEqual(page.errors, []);
  await screenshot(page, 'wide-100k-columns');
});
