// The GitHub Pages build (trunk --public-url <sub-path>) served under that sub-path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, waitForTraces, chartTraces, useApp } from './harness.mjs';

const PREFIX = process.env.PAGES_PATH ?? '/benchlens/';
const app = useApp('dist-subpath', PREFIX);

test(`the app loads under ${PREFIX} and draws the sample chart`, async (t) => {
  const page = await newPage(app.browser, t);
  const failed = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  const traces = await chartTraces(page);
  assert.equal(traces.length, 2);
  assert.deepEqual(failed, []);
  // The sample was parsed by the parse worker, whose script is under the sub-path too; the
  // spare one for the next file is running.
  const workers = page.workers().map((w) => new URL(w.url()).pathname);
  assert.ok(workers.includes(`${PREFIX}parse-worker.js`), workers.join(', '));
  await screenshot(page, 'subpath');
  assert.deepEqual(page.errors, []);
});
