// Shared by the browser tests: a static file server for a built dist/ (optionally under a
// sub-path, as GitHub Pages serves it) and a headless Debian Chromium driven by playwright-core.
// Everything stays on 127.0.0.1; no browser is downloaded.
import { createServer } from 'node:http';
import { readFile, stat, mkdir } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const ARTIFACTS = join(ROOT, 'test-artifacts');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
};

/** Serves `dir` under `prefix` (e.g. '/benchlens/') on an ephemeral loopback port. */
export async function serveDist(dir, prefix = '/', extraRoutes = {}) {
  const root = resolve(ROOT, dir);
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (extraRoutes[url.pathname]) {
      return extraRoutes[url.pathname](req, res);
    }
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404).end('outside the public path');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(prefix.length)) || 'index.html';
    const file = normalize(join(root, rel));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const s = await stat(file);
      const path = s.isDirectory() ? join(file, 'index.html') : file;
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}${prefix}`, origin: `http://127.0.0.1:${port}`, close: () => server.close() };
}

/** Debian's Chromium, headless, with the flags this machine needs. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page that fails the test on uncaught errors, with console errors collected. */
export async function newPage(browser, t) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(m.text());
  });
  return page;
}

export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The traces plotly drew into #chart: [{name, type, x, y}]. */
export async function chartTraces(page) {
  return page.evaluate(() => {
    const div = document.getElementById('chart');
    return (div?.data ?? []).map((t) => ({ name: t.name, type: t.type, x: [...t.x], y: [...t.y] }));
  });
}

/** Waits until #chart holds `n` traces. */
export async function waitForTraces(page, n = 1) {
  await page.waitForFunction(
    (n) => (document.getElementById('chart')?.data?.length ?? 0) >= n,
    n,
    { timeout: 20000 },
  );
}

/** Loads repo files through the real file picker. */
export async function pickFiles(page, paths) {
  await page.setInputFiles('#file-input', paths.map((p) => resolve(ROOT, p)));
}

/** Serves `dir` under `prefix` and opens Chromium for the tests of one file; closes both after. */
export function useApp(dir = 'dist', prefix = '/') {
  const app = {};
  before(async () => {
    app.server = await serveDist(dir, prefix);
    app.browser = await launch();
  });
  after(async () => {
    await app.browser?.close();
    app.server?.close();
  });
  return app;
}

/** Counts the messages each worker sends the page, by kind (before the app's handler runs). */
export function countWorkerMessages() {
  const Real = window.Worker;
  window.__workerKinds = {};
  window.Worker = class extends Real {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        const kind = ev.data?.kind ?? '?';
        window.__workerKinds[kind] = (window.__workerKinds[kind] ?? 0) + 1;
      });
    }
  };
}
