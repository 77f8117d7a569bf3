// Trends: 30 nightly result files (generated here, two configurations each, output throughput of
// request rate 4 down 15 % from night 20) loaded at once — picked, picked as a folder, dropped as
// a folder — open on the trends view with the regression flagged at night 20 and listed in the
// latest-regressions table. Then `benchlens site` publishes the same folder and the site opens
// on the same picture, at the site's root and over the sub-path build (GitHub Pages) under its
// sub-path. Screenshots: test-artifacts/trends-files.png, trends-site.png, trends-site-subpath.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newPage, screenshot, serveDist, useApp, ROOT } from './harness.mjs';

const app = useApp('dist');
const NIGHTS = 30;
const DROP_FROM = 20;
let dir;
let files;

/** Deterministic noise in [-1, 1). */
function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchlens-trends-'));
  const noise = lcg(11);
  files = [];
  for (let night = 0; night < NIGHTS; night++) {
    const day = String(night + 1).padStart(2, '0');
    const records = [1, 4].map((rate) => {
      const level = rate === 4 && night >= DROP_FROM ? 0.85 : 1;
      return {
        model: 'Llama-3.1-8B', engine: 'vllm', gpu: 'H100', request_rate: rate,
        date: `2026-11-${day}T02:00:00Z`,
        engine_version: `0.11.${night}`,
        'tag.commit': `c${String(night).padStart(2, '0')}`,
        output_throughput: 250 * rate * level * (1 + 0.015 * noise()),
        mean_ttft_ms: 60 + 10 * rate * (1 + 0.02 * noise()),
      };
    });
    const sub = join(dir, `2026-11-${day}`);
    await mkdir(sub, { recursive: true });
    const path = join(sub, 'result.json');
    await writeFile(path, JSON.stringify({ schema_version: 1, records }));
    files.push(path);
  }
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Waits for the trends chart and returns its traces: [{name, x, y}]. */
async function trendTraces(page) {
  await page.waitForFunction(
    () => (document.getElementById('trends-chart')?.data?.length ?? 0) >= 3,
    null,
    { timeout: 30000 },
  );
  return page.evaluate(() =>
    document.getElementById('trends-chart').data.map((t) => ({ name: t.name, x: [...t.x], y: [...t.y] })),
  );
}

/** The planted regression is flagged, and only it. */
async function assertFlagged(page) {
  const traces = await trendTraces(page);
  const names = traces.map((t) => t.name);
  assert.deepEqual(names, ['request_rate=1', 'request_rate=4', 'change: worse'], JSON.stringify(names));
  assert.equal(traces[0].x.length, NIGHTS);
  assert.deepEqual(traces[2].x, ['2026-11-21 02:00:00']);
  await page.waitForSelector('#trends-table tbody tr');
  const rows = await page.$$eval('#trends-table tbody tr', (trs) => trs.map((tr) => tr.textContent));
  assert.equal(rows.length, 1, JSON.stringify(rows));
  assert.match(rows[0], /request_rate=4/);
  assert.match(rows[0], /Output token throughput \(tok\/s\)/);
  assert.match(rows[0], /-1[456]\.\d\d/);
  assert.match(rows[0], /2026-11-21 02:00 UTC/);
  assert.match(rows[0], /c20/);
  assert.match(await page.textContent('#trends-summary'), /2 series over 30 dates; 1 change point beyond 5\.00 noise units; 1 series ends at a regressed level/);
  assert.match(await page.textContent('#trends-run-dims'), /engine_version, tag\.commit/);
  assert.equal(await page.getAttribute('button[data-view="trends"]', 'class'), 'active');
}

test('30 dated files picked at once open on the trends with the regression flagged', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction((n) => document.querySelectorAll('#file-list > li.loaded').length === n, NIGHTS, {
    timeout: 30000,
  });
  await assertFlagged(page);
  assert.match(page.url(), /view=trends/);
  await screenshot(page, 'trends-files');
  assert.deepEqual(page.errors, []);
});

test('a picked folder loads every result file under it', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await writeFile(join(dir, 'README.md'), '# not a result\n');
  await page.setInputFiles('#folder-input', dir);
  await page.waitForFunction((n) => document.querySelectorAll('#file-list > li.loaded').length === n, NIGHTS, {
    timeout: 30000,
  });
  await assertFlagged(page);
  assert.equal(await page.locator('#file-list > li').count(), NIGHTS);
  // Rows are named by the path inside the folder, in path order.
  assert.match(await page.getAttribute('#file-list > li:first-child', 'data-file'), /benchlens-trends-\w+\/2026-11-01\/result\.json$/);
  assert.deepEqual(page.errors, []);
});

test('a dropped folder is walked', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  // Chromium's own drag and drop (CDP) with a folder: real file-system entries, as from a desktop.
  const cdp = await page.context().newCDPSession(page);
  const data = { items: [], files: [dir], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop']) {
    await cdp.send('Input.dispatchDragEvent', { type, x: 400, y: 300, data });
  }
  await page.waitForFunction((n) => document.querySelectorAll('#file-list > li.loaded').length === n, NIGHTS, {
    timeout: 30000,
  });
  await assertFlagged(page);
  assert.match(await page.getAttribute('#file-list > li:last-child', 'data-file'), /benchlens-trends-\w+\/2026-11-30\/result\.json$/);
  assert.deepEqual(page.errors, []);
});

/** Publishes the folder with `benchlens site` over the explorer build in `explorer`, serves it
 * under `prefix` (a GitHub Pages project site lives under `/<repo>/`) and checks that it opens
 * on the trends with the regression flagged. */
async function checkSite(t, explorer, prefix, shot) {
  // The current command-line tool (a no-op when `cargo test` built it already).
  execFileSync('cargo', ['build', '--locked', '--quiet', '--bin', 'benchlens'], { cwd: ROOT, stdio: 'inherit' });
  const benchlens = join(ROOT, 'target', 'debug', 'benchlens');
  const out = join(dir, '..', `${dir.split('/').pop()}-${shot}`);
  await rm(out, { recursive: true, force: true });
  execFileSync(benchlens, ['site', dir, '-o', out, '--explorer', join(ROOT, explorer)], { stdio: 'pipe' });
  const site = await serveDist(out, prefix);
  try {
    const page = await newPage(app.browser, t);
    const failed = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(site.url);
    // The index's own row and one per listed file.
    await page.waitForFunction((n) => document.querySelectorAll('#file-list > li.loaded').length === n, NIGHTS + 1, {
      timeout: 30000,
    });
    await assertFlagged(page);
    // The address names the index, not 30 files, so a copied link reopens the same site.
    const url = new URL(page.url());
    assert.equal(url.pathname, prefix);
    assert.deepEqual(url.searchParams.getAll('data'), ['results/index.json']);
    assert.equal(url.searchParams.get('view'), 'trends');
    assert.match(await page.textContent('#file-list'), /lists 30 files/);
    assert.deepEqual(failed, []);
    await screenshot(page, shot);
    assert.deepEqual(page.errors, []);
  } finally {
    site.close();
    await rm(out, { recursive: true, force: true });
  }
}

test('benchlens site publishes the folder and opens on the trends', async (t) => {
  await checkSite(t, 'dist', '/', 'trends-site');
});

const PREFIX = process.env.PAGES_PATH ?? '/benchlens/';

test(`the site over the sub-path build opens on the trends under ${PREFIX}`, async (t) => {
  await checkSite(t, 'dist-subpath', PREFIX, 'trends-site-subpath');
});
