// The GitHub Pages build (trunk --public-url <sub-path>) served under that sub-path.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveDist, launch, newPage, screenshot, waitForTraces, chartTraces } from './harness.mjs';

const PREFIX = process.env.PAGES_PATH ?? '/benchlens/';
let server, browser;
before(async () => {
  server = await serveDist('dist-subpath', PREFIX);
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.close();
});

test(`the app loads under ${PREFIX} and draws the sample chart`, async (t) => {
  const page = await newPage(browser, t);
  const failed = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await waitForTraces(page, 2);
  const traces = await chartTraces(page);
  assert.equal(traces.length, 2);
  assert.deepEqual(failed, []);
  await screenshot(page, 'subpath');
  assert.deepEqual(page.errors, []);
});
