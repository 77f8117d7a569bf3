// Everyone can use it: axe-core on every view of a loaded file, with no serious or critical
// violation; the view tabs follow the arrow keys; the pickers and the table's scroll area
// take the keyboard; on a 390 px phone the filters fold away and the chart takes the width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { newPage, screenshot, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical violations on the page as it stands: "rule: target" lines. */
async function violations(page) {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} (${v.help})`));
  });
  return found;
}

test('every view of a loaded file passes axe-core without a serious violation', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  assert.deepEqual(await violations(page), [], 'the empty page');
  await pickFiles(page, ['tests/fixtures/economics/deployments.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  const views = await page.$$eval('button[data-view]', (b) => b.filter((x) => x.offsetParent !== null && !x.disabled).map((x) => x.dataset.view));
  assert.ok(views.length >= 10, views.join());
  const all = [];
  for (const view of views) {
    await page.click(`button[data-view="${view}"]`);
    await page.waitForTimeout(300);
    for (const v of await violations(page)) all.push(`${view}: ${v}`);
  }
  assert.deepEqual(all, []);
  assert.deepEqual(page.errors, []);
});

test('the view tabs follow the arrow keys, the table scrolls by keyboard', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/economics/deployments.csv']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="latency"]');
  await page.focus('button[data-view="latency"]');
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('button[data-view="throughput"].active');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.view), 'throughput');
  assert.equal(await page.getAttribute('button[data-view="throughput"]', 'aria-selected'), 'true');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  // Wrapped past the first tab to the last one shown.
  const last = await page.$$eval('button[data-view]', (b) => b.filter((x) => x.offsetParent !== null).at(-1).dataset.view);
  await page.waitForSelector(`button[data-view="${last}"].active`);
  await page.keyboard.press('Home');
  await page.waitForSelector('button[data-view="latency"].active');
  // Only the active tab is in the tab order.
  assert.deepEqual(
    await page.$$eval('button[role="tab"][tabindex="0"]', (b) => b.map((x) => x.dataset.view)),
    ['latency'],
  );
  await page.click('button[data-view="table"]');
  await page.waitForSelector('.table-scroll[tabindex="0"]');
  // The file picker's button takes the keyboard.
  const picker = await page.$$eval('button, input[type=file], label', (els) =>
    els.filter((e) => /Choose files/.test(e.textContent ?? '')).map((e) => e.tagName));
  assert.ok(picker.length >= 1, JSON.stringify(picker));
  assert.deepEqual(page.errors, []);
});

test('on a 390 px phone the filters fold away and the chart takes the width', async (t) => {
  const page = await app.browser.newPage({ viewport: { width: 390, height: 844 } });
  t.after(() => page.close());
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await page.waitForFunction(() => (document.getElementById('chart')?.data?.length ?? 0) >= 1);
  const box = async (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const chart = await box('#chart');
  const filters = await box('#filters');
  assert.ok(chart.w >= 300, `chart ${JSON.stringify(chart)}`);
  // Folded: a short bar above the chart, never over it.
  assert.ok(filters.h < 120 && filters.y + filters.h <= chart.y, `filters ${JSON.stringify(filters)} chart ${JSON.stringify(chart)}`);
  assert.equal(await page.isVisible('#filters .facet'), false);
  await page.click('#filters-toggle');
  await page.waitForSelector('#filters .facet', { state: 'visible' });
  assert.equal(await page.getAttribute('#filters-toggle', 'aria-expanded'), 'true');
  await screenshot(page, 'phone-390-filters-open');
  await page.click('#filters-toggle');
  await page.waitForSelector('#filters .facet', { state: 'hidden' });
  await screenshot(page, 'phone-390');
});
