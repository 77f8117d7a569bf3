// Links that carry their data, links that ask for the files they could not carry, and a chart
// layout that holds at 1,000 and 1,400 px: each opened in a fresh browser context (a new
// profile: no storage, no cache) and checked against the traces plotly drew.
import { test, before } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { mkdir, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ARTIFACTS, screenshot, chartTraces, waitForTraces, pickFiles, useApp,
} from './harness.mjs';

const app = useApp('dist');
const DIR = join(ARTIFACTS, 'links');

/** A deterministic generator, so the files are the same on every run. */
function rng(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** A tidy CSV sweep: engine × request rate × input length × output length, ten metrics. */
function sweepCsv(seed, outputLens) {
  const r = rng(seed);
  const rows = ['engine,request_rate,input_len,output_len,mean_ttft_ms,median_ttft_ms,p99_ttft_ms,mean_tpot_ms,median_tpot_ms,p99_tpot_ms,mean_itl_ms,mean_e2el_ms,request_throughput,output_throughput'];
  for (const engine of ['vllm', 'sgl']) {
    for (const rate of ['1', '2', '4', '8', '16', '32', 'inf']) {
      for (const inLen of [128, 256, 512, 1024, 2048, 4096]) {
        for (const outLen of outputLens) {
          const v = (scale) => (r() * scale).toFixed(2);
          rows.push([engine, rate, inLen, outLen, v(500), v(450), v(2000), v(40), v(41), v(90), v(38), v(9000), v(30), v(6000)].join(','));
        }
      }
    }
  }
  return rows.join('\n') + '\n';
}

const files = {};
before(async () => {
  await mkdir(DIR, { recursive: true });
  files.small = join(DIR, 'sweep-50k.csv');
  await writeFile(files.small, sweepCsv(7, [64, 128, 256, 512, 1024, 2048, 4096]));
  files.big = join(DIR, 'sweep-big.csv');
  await writeFile(files.big, sweepCsv(11, Array.from({ length: 200 }, (_, i) => 16 * (i + 1))));
});

async function freshPage(width = 1400) {
  const context = await app.browser.newContext({ viewport: { width, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(m.text());
  });
  page.closeContext = () => context.close();
  return page;
}

async function copyLink(page) {
  await page.click('#copy-link');
  await page.waitForSelector('#copy-link-note');
  return {
    href: await page.getAttribute('#copy-link', 'data-href'),
    note: await page.textContent('#copy-link-note'),
  };
}

async function fileRows(page) {
  return page.$$eval('#file-list > li', (items) =>
    items.map((li) => `${li.querySelector('.name')?.textContent}: ${li.querySelector('.count')?.textContent ?? li.querySelector('.error')?.textContent}`),
  );
}

test('a link copied after loading a ~50 KB file carries its data into a fresh profile', async () => {
  const size = (await stat(files.small)).size;
  assert.ok(size > 45_000 && size < 60_000, `file is ${size} bytes`);
  const page = await freshPage();
  await page.goto(app.server.url);
  await pickFiles(page, [files.small]);
  // It opens on the improvement view (two engines); the main chart is drawn once shown.
  await page.waitForSelector('#file-list > li.loaded');
  await page.click('button[data-view="throughput"]');
  await waitForTraces(page, 2);
  await page.waitForFunction(() => /throughput/i.test(document.getElementById('chart')?.layout?.yaxis?.title?.text ?? ''));
  const before = await chartTraces(page);
  const { href, note } = await copyLink(page);
  assert.match(note, /with the data of sweep-50k\.csv inside/);
  assert.match(href, /#data=1\./);
  assert.match(href, /view=throughput/);
  assert.ok(href.length <= 32_000, `link is ${href.length} characters`);
  console.log(`# 50 KB file (${size} B): link ${href.length} characters`);
  const rows = await fileRows(page);
  await page.closeContext();

  const other = await freshPage();
  await other.goto(href);
  await waitForTraces(other, before.length);
  assert.deepEqual(await fileRows(other), rows);
  assert.equal(await other.getAttribute('button[data-view="throughput"]', 'class'), 'active');
  assert.deepEqual(await chartTraces(other), before);
  // The address bar keeps the view; the data stays out of it until the next copy.
  assert.ok(!other.url().includes('#data='));
  await screenshot(other, 'link-with-data-opened');
  assert.deepEqual(other.errors, []);
  await other.closeContext();
});

test('a link whose data does not fit names the files and restores the view when they arrive', async () => {
  const page = await freshPage();
  await page.goto(app.server.url);
  await page.click('button[data-sample="001_b815cef7710eda19.txt"]');
  await pickFiles(page, [files.big]);
  await page.waitForFunction(() => document.querySelectorAll('#file-list > li.loaded').length === 2, null, { timeout: 30000 });
  await page.click('button[data-view="throughput"]');
  await page.click('fieldset[data-dim="engine"] input[data-value="vllm"]');
  await page.waitForTimeout(300);
  const before = await chartTraces(page);
  assert.ok(before.length > 0);
  const { href, note } = await copyLink(page);
  assert.match(note, /without the data/);
  assert.match(note, /must drop: sweep-big\.csv/);
  assert.ok(!href.includes('#'), href);
  assert.match(href, /need=sweep-big\.csv/);
  assert.match(href, /sample=001_b815cef7710eda19\.txt/);
  await page.closeContext();

  const other = await freshPage();
  await other.goto(href);
  await other.waitForSelector('#needs');
  assert.equal(await other.textContent('#needs-list'), 'sweep-big.csv');
  assert.match(await other.textContent('#needs'), /This view needs: sweep-big\.csv — drop them here/);
  // The view is already the linked one while it waits.
  assert.equal(await other.getAttribute('button[data-view="throughput"]', 'class'), 'active');
  await screenshot(other, 'link-needs-files');
  await other.setInputFiles('#needs-input', files.big);
  await other.waitForSelector('#needs', { state: 'detached', timeout: 30000 });
  await waitForTraces(other, before.length);
  await other.waitForTimeout(300);
  assert.deepEqual(await chartTraces(other), before);
  assert.ok(await other.isChecked('fieldset[data-dim="engine"] input[data-value="vllm"]'));
  await screenshot(other, 'link-needs-files-restored');
  assert.deepEqual(other.errors, []);
  await other.closeContext();
});

test('a link an earlier build wrote (deflated by miniz_oxide, not the browser) still opens', async () => {
  // The same data as src/share/link_data.rs's EARLIER_LINK.
  const data = '1.ZcvNCoJAFIbhW4mzPomjSea2SwjaZMiURx2Yn5o5I4R47027qN3H9_AuMChNAZrLAlYaggZIeq3IZ_cwA8LgvJGcblb9a3M8ndP3kQaM60kj2VFZQk_PSIE7L5nQkLQd88CdCegiPyJ3PHkXxynN1motjdzWN5y1NiiwEFmFpch_ZYdllRUVClF_Wxi1tGPqxAHLvPqX1Ilsn7oi37UW1uv6Bg';
  const page = await freshPage();
  await page.goto(`${app.server.url}?view=throughput#data=${data}`);
  await waitForTraces(page, 2);
  assert.deepEqual(await fileRows(page), ['earlier.csv: 4 records']);
  const ys = (await chartTraces(page)).map((t) => t.y);
  assert.deepEqual(ys.flat().sort((a, b) => a - b), [305, 310, 1180, 1204]);
  assert.deepEqual(page.errors, []);
  await page.closeContext();
});

test('a link whose data would inflate past 32 MiB is refused without inflating it all', async () => {
  // 64 MiB of spaces deflate to about 64 KB: a short link that would inflate hugely.
  const data = `1.${deflateRawSync(Buffer.alloc(64 << 20, 32), { level: 9 }).toString('base64url')}`;
  const page = await freshPage();
  await page.goto(`${app.server.url}?view=latency#data=${data}`);
  await page.waitForSelector('#file-list li.failed');
  assert.match(await page.textContent('#file-list li.failed'), /would decompress to more than 33554432 bytes/);
  assert.deepEqual(page.errors, []);
  await page.closeContext();
});

test('a damaged link says so and still opens its view', async () => {
  const page = await freshPage();
  await page.goto(`${app.server.url}?view=latency#data=1.AAAAAAAAAAAA`);
  await page.waitForSelector('#file-list li.failed');
  assert.match(await page.textContent('#file-list li.failed'), /damaged .* may have been cut/);
  assert.deepEqual(page.errors, []);
  await page.closeContext();
});

/** Bounding boxes of the drawn chart's parts, in page pixels. */
async function chartBoxes(page) {
  return page.evaluate(() => {
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
    };
    const chart = document.getElementById('chart');
    const q = (s) => [...chart.querySelectorAll(s)].map(box);
    return {
      chart: box(chart),
      // Small multiples have one drag area per panel: the plot is their span.
      plot: (() => {
        const areas = q('.nsewdrag');
        if (areas.length === 0) return undefined;
        const left = Math.min(...areas.map((a) => a.left));
        const right = Math.max(...areas.map((a) => a.right));
        return { left, right, width: right - left };
      })(),
      xticks: q('.xtick text'),
      xtitle: q('.g-xtitle text')[0],
      yticks: q('.ytick text'),
      ytitle: q('.g-ytitle text')[0],
      legend: q('.legend .bg')[0] ?? null,
    };
  });
}

const overlap = (a, b) => a && b && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
const inside = (a, outer) => a.left >= outer.left - 1 && a.right <= outer.right + 1 && a.top >= outer.top - 1 && a.bottom <= outer.bottom + 1;

function checkLayout(b, what) {
  assert.ok(b.xticks.length > 0 && b.xtitle && b.plot, `${what}: chart drawn`);
  for (const t of b.xticks) {
    assert.ok(!overlap(t, b.xtitle), `${what}: x tick label ${JSON.stringify(t)} overlaps the axis title ${JSON.stringify(b.xtitle)}`);
    assert.ok(inside(t, b.chart), `${what}: x tick label cut off: ${JSON.stringify(t)} outside ${JSON.stringify(b.chart)}`);
    assert.ok(!overlap(t, b.legend), `${what}: x tick label under the legend`);
  }
  for (const t of b.yticks) {
    assert.ok(!overlap(t, b.ytitle), `${what}: y tick label overlaps the y axis title`);
  }
  assert.ok(!overlap(b.xtitle, b.legend), `${what}: legend over the x axis title`);
  assert.ok(inside(b.xtitle, b.chart), `${what}: x axis title cut off`);
  const share = b.plot.width / b.chart.width;
  assert.ok(share >= 0.6, `${what}: the plot keeps ${(share * 100).toFixed(0)}% of the chart width`);
  return share;
}

for (const width of [1000, 1400]) {
  test(`layout at ${width} px: crowded model names and long file-name legends`, async () => {
    // Seed 000 by model: twenty long names on the x axis.
    const page = await freshPage(width);
    await page.goto(`${app.server.url}?view=scaling&x=model&sample=000_258d36619a7af95a.txt`);
    await waitForTraces(page, 1);
    await page.waitForTimeout(500);
    const models = checkLayout(await chartBoxes(page), `seed 000 by model at ${width}`);
    await screenshot(page, `layout-${width}-models`);

    // Two files with long names as the series: the legend goes below, shortened.
    const long = [
      join(DIR, 'benchmark-serving-llama-3.1-8b-instruct-h100-tp1-2025-01-14T10-00.csv'),
      join(DIR, 'benchmark-serving-llama-3.1-8b-instruct-h100-tp1-2025-01-15T10-00.csv'),
    ];
    await writeFile(long[0], sweepCsv(3, [128]));
    await writeFile(long[1], sweepCsv(4, [128]));
    await page.goto(`${app.server.url}?view=scaling&x=request_rate&series=source&f.engine=vllm&f.input_len=1024`);
    await pickFiles(page, long);
    await waitForTraces(page, 2);
    await page.waitForTimeout(500);
    const names = (await chartTraces(page)).map((t) => t.name);
    assert.ok(names.every((n) => n.length <= 40 && n.includes('…')), names.join(' | '));
    const legend = await page.evaluate(() => document.getElementById('chart').layout.legend);
    assert.equal(legend.orientation, 'h');
    const files = checkLayout(await chartBoxes(page), `file legend at ${width}`);
    console.log(`# ${width} px: plot width share ${(models * 100).toFixed(0)}% (models), ${(files * 100).toFixed(0)}% (file legend)`);
    await screenshot(page, `layout-${width}-file-legend`);

    // Improvement and SLO tables stay inside their panel.
    await page.goto(`${app.server.url}?view=improvement&sample=000_258d36619a7af95a.txt`);
    await page.waitForSelector('#improve-table', { timeout: 20000 });
    const fits = await page.evaluate(() => {
      const panel = document.querySelector('.chart-panel').getBoundingClientRect();
      const scroll = document.querySelector('#improve-table').closest('.table-scroll').getBoundingClientRect();
      return { panel: panel.right, table: scroll.right, page: document.documentElement.scrollWidth <= window.innerWidth };
    });
    assert.ok(fits.table <= fits.panel + 1, `improvement table ends at ${fits.table}, panel at ${fits.panel}`);
    assert.ok(fits.page, 'the page does not scroll sideways');
    await screenshot(page, `layout-${width}-improvement`);
    assert.deepEqual(page.errors, []);
    await page.closeContext();
  });
}

test('the SLO view names limits it cannot check and offers the metrics that exist', async () => {
  const page = await freshPage(1000);
  // Seed 002 (markdown tables) has only its own latency columns.
  await page.goto(`${app.server.url}?view=slo&v.slo=p99_ttft_ms%3C%3D500&sample=002_44f3a8b9f2336bbb.txt`);
  await page.waitForSelector('#file-list li.loaded', { timeout: 20000 });
  await page.waitForSelector('#slo-unchecked', { timeout: 20000 });
  assert.match(
    await page.textContent('#slo-unchecked'),
    /Not checked, no selected record has the metric: p99_ttft_ms<=500\. Latency metrics present: .*extra\.average_latency_per_output_token_ms/,
  );
  assert.ok(await page.$('#slo-none'));
  await screenshot(page, 'slo-unchecked-002');

  // Seed 003 (console summaries) has p99 but not p95 TTFT: the closest is offered.
  await page.goto(`${app.server.url}?view=slo&v.slo=p95_ttft_ms%3C%3D500%2C%20mean_tpot_ms%3C%3D50&sample=003_902df92d1b3a4732.txt`);
  await page.waitForSelector('#file-list li.loaded', { timeout: 20000 });
  await page.waitForSelector('#slo-unchecked', { timeout: 20000 });
  const text = await page.textContent('#slo-unchecked');
  assert.match(text, /no selected record has the metric: p95_ttft_ms<=500\. Latency metrics present: .*p99_ttft_ms/);
  assert.match(await page.textContent('#slo-use-present'), /Check p99_ttft_ms<=500, mean_tpot_ms<=50 instead/);
  assert.ok(await page.$('#slo-table'), 'the limits that can be checked still are');
  await page.click('#slo-use-present');
  await page.waitForSelector('#slo-unchecked', { state: 'detached', timeout: 10000 });
  assert.equal(await page.inputValue('#slo-limits'), 'p99_ttft_ms<=500, mean_tpot_ms<=50');
  await screenshot(page, 'slo-use-present-003');
  assert.deepEqual(page.errors, []);
  await page.closeContext();
});
