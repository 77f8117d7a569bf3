// The run view: one stage's request timeline over its time series on one time axis, the
// steady-state window shaded on every panel. On the sweep made against the mock
// (tests/fixtures/loadgen/README.md) and on a generated benchlens file of 10^5 requests, which
// must draw (timeline + series) in under a second after the tab click.
// Another tool's per-request export (AIPerf's profile_export.jsonl, a real public file) gets the
// same view. Screenshots: test-artifacts/run-view.png, run-view-100k.png, run-view-aiperf.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newPage, screenshot, pickFiles, useApp } from './harness.mjs';

const app = useApp('dist');

/** The figure plotly drew into #run-chart: trace summaries and the layout parts tested. */
async function runFigure(page) {
  return page.evaluate(() => {
    const div = document.getElementById('run-chart');
    const layout = div.layout;
    const yaxes = Object.keys(layout).filter((k) => /^yaxis\d*$/.test(k)).sort();
    return {
      traces: div.data.map((t) => ({
        name: t.name, type: t.type, mode: t.mode, color: t.line?.color ?? t.marker?.color,
        points: t.x.length, yaxis: t.yaxis ?? 'y', stackgroup: t.stackgroup,
      })),
      yTitles: yaxes.map((k) => layout[k].title?.text ?? ''),
      shapes: (layout.shapes ?? []).map((s) => ({ x0: s.x0, x1: s.x1, yref: s.yref })),
      annotations: (layout.annotations ?? []).map((a) => a.text),
    };
  });
}

/** Clicks the Run tab and resolves with the ms until plotly finished drawing #run-chart. */
async function clickRunAndTime(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const original = window.Plotly.react;
    let t0 = 0;
    window.Plotly.react = function (gd, ...rest) {
      const drawn = original.call(this, gd, ...rest);
      if (gd.id === 'run-chart') {
        let afterplot = null;
        gd.on?.('plotly_afterplot', () => { afterplot ??= performance.now() - t0; });
        Promise.resolve(drawn).then(() => {
          window.Plotly.react = original;
          resolve({ drawnMs: performance.now() - t0, afterplotMs: afterplot });
        }, reject);
      }
      return drawn;
    };
    setTimeout(() => reject(new Error('the run chart was not drawn within 20 s')), 20000);
    t0 = performance.now();
    document.querySelector('button[data-view="run"]').click();
  }));
}

test('a sweep stage shows its request bars, series panels and the shaded window', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/loadgen/sweep-mock.json']);
  await page.waitForSelector('#file-list > li.loaded');
  // The file's row names the benchlens build that wrote it (the fixture predates commits).
  assert.equal(await page.textContent('#file-list > li.loaded .build'), 'benchlens 0.1.0');
  await clickRunAndTime(page);
  const fig = await runFigure(page);
  const names = fig.traces.map((tr) => tr.name);
  for (const phase of ['waiting to be sent', 'waiting for first token', 'decoding']) {
    assert.ok(names.includes(phase), JSON.stringify(names));
  }
  // Bars coloured by phase of a successful request (the mock fails none).
  const decoding = fig.traces.find((tr) => tr.name === 'decoding');
  assert.equal(decoding.color, '#1a73e8');
  // The first stage: 25 requests, 3 points per bar (start, end, gap).
  assert.equal(decoding.points, 25 * 3);
  assert.match(fig.yTitles[0], /25 requests, by send time/);
  // Series panels on their own y axes, under the timeline.
  for (const title of ['output tok/s', 'requests sent/s', 'requests in flight', 'TTFT (ms)', 'ITL (ms)']) {
    assert.ok(fig.yTitles.includes(title), JSON.stringify(fig.yTitles));
  }
  // The steady-state window shaded on every panel.
  assert.equal(fig.shapes.length, fig.yTitles.length, JSON.stringify(fig.shapes));
  assert.ok(fig.shapes.every((s) => s.x1 > s.x0 && /^y\d* domain$/.test(s.yref)));
  assert.match(fig.annotations.join(' '), /steady state/);
  assert.match(await page.textContent('#run-summary'), /25 requests, one bar each.*Steady-state window/);
  await screenshot(page, 'run-view');

  // Nine stages to pick from; the fourth has 71 requests.
  const options = await page.$$eval('#run-stage option', (os) => os.map((o) => o.textContent));
  assert.equal(options.length, 9, JSON.stringify(options));
  await page.selectOption('#run-stage', { index: 3 });
  await page.waitForFunction(() => /71 requests/.test(document.getElementById('run-summary')?.textContent));
  const fourth = await runFigure(page);
  assert.equal(fourth.traces.find((tr) => tr.name === 'decoding').points, 71 * 3);
  assert.deepEqual(page.errors, []);
});

/** A benchlens canonical file of `n` requests at 1,000 req/s, every 50th failing. */
function bigRun(n, failEvery = 50, kinds = ['http_503']) {
  const rate = 1000;
  const requests = [];
  for (let i = 0; i < n; i++) {
    const intended = i / rate;
    const sent = intended + (i % 7) * 1e-4;
    const failed = i % failEvery === 0;
    const kind = kinds[(i / failEvery) % kinds.length];
    requests.push({
      input_len: 128, output_len: failed ? 0 : 64,
      ttft_ms: 40 + (i % 13), itl_ms: [], e2el_ms: failed ? null : 400 + (i % 97),
      error: failed ? `${kind}: busy` : null, intended_s: intended, sent_s: sent,
      ...(failed ? { error_kind: kind } : {}),
    });
  }
  const seconds = Math.ceil(n / rate) + 1;
  const t_s = Array.from({ length: seconds }, (_, s) => s);
  const series = {
    t_s,
    sent: t_s.map(() => rate),
    in_flight: t_s.map((s) => 440 + (s % 5)),
    output_tokens: t_s.map(() => rate * 64),
    ttft_p50_ms: t_s.map(() => 46), ttft_p99_ms: t_s.map(() => 52),
    'server.kv_cache_usage': t_s.map((s) => 0.5 + 0.4 * Math.sin(s / 10)),
  };
  return JSON.stringify({
    schema_version: 1,
    records: [{
      format: 'benchlens', model: 'big-run', request_rate: rate, num_prompts: n,
      'extra.window_start_s': 0.1 * n / rate, 'extra.window_end_s': 0.9 * n / rate, requests, series,
    }],
  });
}

test('10^5 requests: the timeline is binned and the view draws in under a second', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'benchlens-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'big-run.json');
  await writeFile(file, bigRun(100_000));
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, [file]);
  await page.waitForSelector('#file-list > li.loaded', { timeout: 60000 });
  const timing = await clickRunAndTime(page);
  const fig = await runFigure(page);
  console.log(`10^5 requests: drawn ${timing.drawnMs.toFixed(0)} ms after the tab click (plotly_afterplot at ${timing.afterplotMs?.toFixed(0)} ms)`);
  console.log(JSON.stringify(fig, null, 1));
  assert.ok(timing.drawnMs < 1000, `${timing.drawnMs} ms`);
  // Binned: three stacked phases of a bounded number of bins, and the failures per second.
  const phases = fig.traces.filter((tr) => tr.stackgroup === 'phases');
  assert.equal(phases.length, 3);
  assert.ok(phases.every((tr) => tr.points <= 400));
  assert.ok(fig.traces.some((tr) => tr.name === 'failed/s'));
  const points = fig.traces.reduce((s, tr) => s + tr.points, 0);
  assert.ok(points < 5000, `${points} points`);
  assert.ok(fig.yTitles.includes('server.kv_cache_usage'), JSON.stringify(fig.yTitles));
  assert.equal(fig.shapes.length, fig.yTitles.length);
  assert.match(await page.textContent('#run-summary'), /100000 requests, binned/);
  await screenshot(page, 'run-view-100k');
  assert.deepEqual(page.errors, []);
});

test('failed requests are drawn in their failure kind\'s colour, in either theme', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'benchlens-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'failing-run.json');
  await writeFile(file, bigRun(300, 10, ['http_503', 'first_token_timeout']));
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await page.click('#theme-toggle');
  await pickFiles(page, [file]);
  await page.waitForSelector('#file-list > li.loaded');
  await clickRunAndTime(page);
  const fig = await runFigure(page);
  const failedBars = fig.traces.filter((tr) => tr.name.startsWith('failed') && tr.mode === 'lines');
  const byName = Object.fromEntries(failedBars.map((tr) => [tr.name, tr]));
  // 30 failures alternating between two kinds: 15 bars (3 points each) per kind, in two colours.
  assert.deepEqual(Object.keys(byName).sort(), ['failed: first_token_timeout', 'failed: http_503']);
  assert.equal(byName['failed: http_503'].points, 15 * 3);
  assert.notEqual(byName['failed: http_503'].color, byName['failed: first_token_timeout'].color);
  assert.notEqual(byName['failed: http_503'].color, fig.traces.find((tr) => tr.name === 'decoding').color);
  // A cross where each failed request ended.
  const crosses = fig.traces.filter((tr) => tr.name.startsWith('failed') && tr.mode === 'markers');
  assert.deepEqual(crosses.map((tr) => tr.points), [15, 15], JSON.stringify(fig.traces));
  assert.deepEqual(crosses.map((tr) => tr.color), failedBars.map((tr) => tr.color));
  assert.match(await page.textContent('#run-summary'), /300 requests, one bar each/);
  await screenshot(page, 'run-view-failures-dark');
  assert.deepEqual(page.errors, []);
});

test('the Run tab is offered only when a filtered record has timing or a series', async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/vllm/throughput.json']);
  await page.waitForSelector('#file-list > li.loaded');
  await page.waitForSelector('button[data-view="latency"]', { state: 'visible' });
  assert.equal(await page.isVisible('button[data-view="run"]'), false);
  await pickFiles(page, ['tests/fixtures/loadgen/sweep-mock.json']);
  await page.waitForSelector('button[data-view="run"]', { state: 'visible' });
  assert.deepEqual(page.errors, []);
});

test('a vLLM --save-detailed file: bars from its start_times and latencies, series derived', async (t) => {
  const n = 200;
  const run = {
    backend: 'vllm', model_id: 'm', request_rate: 20, max_concurrency: null, completed: n - 4,
    failed: 4, mean_ttft_ms: 30,
    input_lens: Array(n).fill(100), output_lens: Array(n).fill(20),
    ttfts: Array.from({ length: n }, (_, i) => 0.03 + (i % 5) * 0.01),
    itls: Array.from({ length: n }, () => [0.01, 0.01]),
    // perf_counter readings: a clock of vLLM's own.
    start_times: Array.from({ length: n }, (_, i) => 5000 + i / 20),
    latencies: Array.from({ length: n }, (_, i) => (i % 50 === 7 ? 0 : 0.5 + (i % 3) * 0.1)),
    errors: Array.from({ length: n }, (_, i) => (i % 50 === 7 ? 'Bad Gateway' : '')),
  };
  const dir = await mkdtemp(join(tmpdir(), 'benchlens-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'vllm-detailed.json');
  await writeFile(file, JSON.stringify(run));
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, [file]);
  await page.waitForSelector('button[data-view="run"]', { state: 'visible' });
  await clickRunAndTime(page);
  const fig = await runFigure(page);
  const trace = (name) => fig.traces.find((tr) => tr.name === name && tr.mode === 'lines');
  assert.equal(trace('decoding').points, (n - 4) * 3);
  assert.equal(trace('failed: error').points, 4 * 3);
  for (const title of ['requests sent/s', 'requests in flight', 'TTFT (ms)']) {
    assert.ok(fig.yTitles.includes(title), JSON.stringify(fig.yTitles));
  }
  await screenshot(page, 'run-view-vllm');
  assert.deepEqual(page.errors, []);
});

test("another tool's per-request export (AIPerf profile_export.jsonl) opens in the run view", async (t) => {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, ['tests/fixtures/tools/aiperf_qwen_concurrency1_profile_export.jsonl']);
  await page.waitForSelector('#file-list > li.loaded');
  await clickRunAndTime(page);
  const fig = await runFigure(page);
  // Ten requests at concurrency 1, every one completed: one bar each, by send time.
  assert.match(fig.yTitles[0], /10 requests, by send time/);
  const decoding = fig.traces.find((tr) => tr.name === 'decoding');
  assert.ok(decoding, JSON.stringify(fig.traces.map((tr) => tr.name)));
  assert.equal(decoding.points, 10 * 3);
  await screenshot(page, 'run-view-aiperf');
  assert.deepEqual(page.errors, []);
});
