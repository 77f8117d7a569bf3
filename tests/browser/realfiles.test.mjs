// The first picture of every real result file in tests/fixtures/real/ (where each comes from:
// its README.md), dropped in turn as a new user would, and of three sets dropped together.
// Each must draw a chart (never an empty one), put on the x axis and the y axis what its
// author meant (the table below says it per file), and never average configurations into a
// point without saying so. Screenshots go to test-artifacts/realfiles-*.png.
//
// The app comes from BENCH_DIST (a `trunk build --release --dist <dir>`), else dist/.
//
// A row with `todo` is a first picture known not to be what its author meant yet: it runs,
// and node:test reports it as a todo rather than failing the suite, with the reason. The
// reasons are the work left (issue 32).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { newPage, screenshot, pickFiles, useApp, ROOT } from './harness.mjs';

const app = useApp(process.env.BENCH_DIST ?? 'dist');
const REAL = 'tests/fixtures/real';

// x, metric, series: the values of the x, metric and series menus (series '' = one series);
// xTitle: the x axis when the menu has no value of its own (the source file, the engine);
// repeats: the file holds one configuration run more than once, so a point may be a mean of
// those runs (and the chart must say so); leftOut: the note counting records not drawn;
// failed: the run failed, and the page says so.
const LAT = { metric: 'mean_ttft_ms' };
const EXPECT = {
  'aiperf-example-run1-profile_export.jsonl': { x: 'input_len', ...LAT, series: '' },
  'aiperf-example-run1-profile_export_aiperf.csv': { x: 'input_len', ...LAT, series: '' },
  'aiperf-example-run1-profile_export_aiperf.json': { x: 'max_concurrency', ...LAT, series: '' },
  'guidellm-pd-disaggregation-all-benchmarks.csv': {
    x: 'request_rate', ...LAT, series: 'tag.profile', leftOut: /^6 of 16 filtered records are not drawn/,
  },
  // Its RPS and Requests are what each load profile achieved (measured): the profile names the runs.
  'guidellm-pd-disaggregation-readme-results.md': { xTitle: /profile/, metric: 'median_ttft_ms', series: '' },
  'h200-llama-3.3-70b-sglang-offline.jsonl': {
    x: 'input_len', metric: 'median_ttft_ms', series: 'output_len', repeats: true,
    // The ShareGPT run has no configured length (its means are measurements): not drawn.
    measuredSeries: /^\d+$/, leftOut: /^1 of 7 filtered records are not drawn/,
  },
  'h200-llama-3.3-70b-sglang-online.jsonl': { x: 'request_rate', metric: 'median_ttft_ms', series: 'dataset' },
  'inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json': { x: 'request_rate', metric: 'median_ttft_ms' },
  'inferencex-glm5_fp8_vllm_tp8_isl8192_osl128_conc64.json': { x: 'request_rate', metric: 'median_ttft_ms' },
  'inferencex-minimax_m25_vllm_dep8_isl1024_osl128_conc16.json': { x: 'request_rate', metric: 'median_ttft_ms' },
  'inferencex-minimax_m25_vllm_tep8_isl32768_osl128_conc4.json': { x: 'request_rate', metric: 'median_ttft_ms' },
  'kvcached-sglang-console-overhead.md': {
    view: 'improvement', x: 'request_rate', metric: 'output_throughput', series: 'tag.column',
  },
  'kvcached-vllm-ramp-up-down.json': { x: 'request_rate', ...LAT },
  'llama-bench-powerinfer-rtx4080.csv': { metric: 'extra.tokens_per_s', series: 'tag.test' },
  'llama-bench-powerinfer-rtx4080.jsonl': { metric: 'extra.tokens_per_s', series: 'tag.test' },
  'llama-bench-powerinfer-rtx4080.sql': { metric: 'extra.tokens_per_s', series: 'tag.test' },
  'llama-bench-readme-rtx4080.json': { metric: 'extra.tokens_per_s', series: 'tag.test' },
  'llama-bench-readme-rtx4080.csv': {
    metric: 'extra.tokens_per_s', series: 'tag.test',
  },
  'llama-bench-vulkan-two-gpus.txt': { metric: 'extra.tokens_per_s', series: 'tag.fa' },
  'llm-k8s-cumulative_results.md': { x: 'request_rate', ...LAT, series: 'gpu' },
  'llm-k8s-tp8-benchmark_results.json': { x: 'request_rate', ...LAT, series: '' },
  'llmperf-leaderboard-individual-bedrock_70b.json': { x: 'input_len', ...LAT },
  'llmperf-leaderboard-individual-groq_70b.json': { x: 'input_len', ...LAT },
  // Output throughput and TTFT tables share the sub-heading "70B Models": their bare Median,
  // Mean… columns take the quantity of the heading above, so no point averages the two.
  // The throughput tables' rows (19 of 38) have no TTFT, and the note says so.
  'llmperf-leaderboard-readme.md': {
    metric: 'mean_ttft_ms', series: 'engine', leftOut: /^19 of 38 filtered records are not drawn/,
  },
  'mlperf-cm-example-offline-summary.txt': { metric: 'request_throughput', xTitle: /source file/i },
  'mlperf-singlestream-pysut-summary.txt': { metric: 'mean_e2el_ms', xTitle: /source file/i },
  'mlperf-v4.0-google-h100x8-llama2-70b-offline-summary.txt': { metric: 'output_throughput', xTitle: /source file/i },
  'mlperf-v4.0-google-h100x8-llama2-70b-server-summary.txt': { x: 'request_rate', ...LAT },
  'mlperf-v4.1-amd-mi300x8-llama2-70b-offline-summary.txt': { metric: 'output_throughput', xTitle: /source file/i },
  'mlperf-v4.1-nvidia-h100x8-mixtral-server-detail.txt': { x: 'request_rate', ...LAT },
  'mlperf-v4.1-nvidia-h100x8-mixtral-server-summary.txt': { x: 'request_rate', ...LAT },
  'mlperf-v5.0-amd-mi325x8-llama2-70b-offline-summary.txt': { metric: 'output_throughput', xTitle: /source file/i },
  'mlperf-v5.0-amd-mi325x8-llama2-70b-server-summary.txt': { x: 'request_rate', ...LAT },
  'sglang-dlora-console-results.md': { x: 'request_rate', ...LAT },
  'sglang-dlora-static-rate8.jsonl': { x: 'request_rate', metric: 'median_ttft_ms' },
  'trtllm-bench-docs-pytorch-and-multimodal.md': {
    x: 'num_prompts', metric: 'mean_e2el_ms', leftOut: /^1 of 2 filtered records are not drawn/,
  },
  'trtllm-bench-perf-overview-streaming.txt': { ...LAT, xTitle: /engine/i },
  'vllm-bench-automation-results.jsonl': { x: 'request_rate', ...LAT, series: 'tag.deployment' },
  'vllm-benchmarking-console-commands.md': { x: 'num_prompts', ...LAT, series: 'input_len' },
  'vllm-fork-console-as-comments.sh': { x: 'request_rate', ...LAT, repeats: true },
  'vllmbench-er0080-bench_serve_all_requests_failed_v0.25.1.json': {
    x: 'request_rate', metric: 'output_throughput', failed: true,
  },
  'vllmbench-er0080-bench_serve_v0.25.1.json': { x: 'request_rate', ...LAT },
  'vllmbench-er0080-sweep-max_num_seqs=4-run=0.json': { x: 'request_rate', ...LAT },
  'vllmbench-er0080-sweep-max_num_seqs=4-run=1.json': { x: 'request_rate', ...LAT },
  'vllmbench-er0080-sweep-max_num_seqs=8-run=0.json': { x: 'request_rate', ...LAT },
  'vllmbench-er0080-sweep-max_num_seqs=8-run=1.json': { x: 'request_rate', ...LAT },
  'vllmbench-er0080-sweep-max_num_seqs=4-summary.json': { x: 'request_rate', ...LAT, series: '', repeats: true },
  'vllmbench-er0080-sweep-max_num_seqs=8-summary.json': { x: 'request_rate', ...LAT, series: '', repeats: true },
  'zhjunqin-engines-comparison.md': {
    // Its hardware table's row (GPU 3090, driver 535) measures no latency: counted, not drawn.
    x: 'request_rate', metric: 'p50_ttft_ms', series: 'engine', engines: 4,
    leftOut: /^1 of 14 filtered records are not drawn/,
  },
  // Files nobody here had seen before issue 32's acceptance check (README.md: their sources).
  'cloudai-dynamo-profile_genai_perf.csv': { x: 'input_len', ...LAT, series: '' },
  'dstack-mi300x-Meta-Llama-3.1-405B-Instruct-FP8-KV_throughput_req64_in2048_out2048_.json': {
    x: 'num_prompts', metric: 'total_token_throughput', series: '',
  },
  // benchmark_latency.py's batch (`np64`), as dstack's README says it varied the batch size.
  'dstack-nvidia-latency_test_ip2048_op2048_np64.json': { x: 'batch_size', metric: 'mean_e2el_ms', series: '' },
  'dstack-nvidia-throughput_test_ip2048_op2048_np64.json': {
    x: 'num_prompts', metric: 'total_token_throughput', series: '',
  },
  'dstack-pd-ratio-1p3d_conc32_in2048_out128_20250923_033843.json': { x: 'request_rate', ...LAT, series: '' },
  // The blog's charts: TTFT by QPS per GPU setup; total throughput by batch size per setup.
  'dstack-qps_comparison.csv': { x: 'request_rate', ...LAT, series: 'gpu' },
  'dstack-throughput_comparsion.csv': { x: 'batch_size', metric: 'total_token_throughput', series: 'gpu' },
  // A panel per input length, as the blog draws one chart per length; GPU and count in the series.
  'dstack-throughput_latency_curve.csv': { x: 'batch_size', metric: 'mean_e2el_ms', series: 'gpu' },
  'geerlingguy-issue20-llama-bench-rx580.md': { metric: 'extra.tokens_per_s', series: 'tag.test' },
  'gpustack-gpt-oss-20b-a100.md': {
    x: 'input_len', ...LAT, series: 'engine', leftOut: /^10 of 13 filtered records are not drawn/,
    todo: 'the page compares engines and a baseline against an optimised vLLM by total tokens a second; list lines ("Long Prompt: 4000 input tokens") are read as settings and the mkdocs block titles (baseline / optimised) are not, so two runs pool as repeats',
  },
  // Along the GPU count, engine and precision in the series, as the author plots each GPU and
  // precision; the CPU runs have no GPU count, and the note counts them.
  'h2ogpt-perf-llama2-7b.md': {
    metric: 'extra.generation_speed_tokens_sec', series: 'engine',
    leftOut: /^3 of 50 filtered records are not drawn/,
  },
  // guidellm's console report: the constant rates as configured; synchronous has no rate.
  'ibm-techxchange-guidellm-one-gpu.md': {
    x: 'request_rate', ...LAT, series: '', leftOut: /^1 of 10 filtered records are not drawn/,
  },
  'ibm-techxchange-guidellm-two-gpus.md': {
    x: 'request_rate', ...LAT, series: '', leftOut: /^1 of 10 filtered records are not drawn/,
  },
  // Its PDF compares the two sweeps, with and without InfiniBand.
  'llm-k8s-guidellm-vs-inference-perf.md': {
    x: 'request_rate', metric: 'output_throughput', series: 'tag.section',
    leftOut: /^2 of 20 filtered records are not drawn/,
  },
  // Its pp512 / tg128 columns are llama-bench's tests: a panel per test, the backends side by side.
  'nix-amd-ai-pr129-rocm-vs-vulkan.md': { x: 'engine', metric: 'extra.tokens_per_s', series: 'tag.backend' },
  'optimum-benchmark-llama8b-fbgemm-report.md': {
    todo: 'optimum-benchmark\'s metric | value | unit tables are read a row per metric, not one record per phase',
  },
  'strix-halo-llama-2-7b-q4_0.md': {
    metric: 'extra.tokens_per_s', series: 'tag.backend',
    todo: 'its columns are read as llama-bench\'s tests (pp512, tg128 and the sweeps\' pp1 … tg4096), but 26 tests are too many for the series, so the points average the tests (the title says so); the author draws each sweep against its length',
  },
};

// One provider's summary alone: its one point, at the concurrency the leaderboard ran.
for (const size of ['anyscale_13b', 'anyscale_70b', 'anyscale_7b', 'bedrock_70b', 'fireworks_70b',
  'fireworks_7b', 'groq_70b', 'lepton_70b', 'perplexity_70b', 'replicate_70b', 'together_13b', 'together_70b']) {
  EXPECT[`llmperf-leaderboard-summary-${size}.json`] = { x: 'max_concurrency', ...LAT, series: '' };
}

// Files dropped together: the picture their author drew of them.
const SETS = [
  {
    name: 'the LLMPerf leaderboard 70B summaries: mean TTFT per provider, as its README charts it',
    files: readdirSync(`${ROOT}/${REAL}`).filter((f) => /^llmperf-leaderboard-summary-.*_70b\.json$/.test(f)),
    ...LAT, series: 'engine', traces: 8,
  },
  {
    name: 'the vLLM sweep’s two server settings: one series per max_num_seqs, repeats pooled',
    files: ['vllmbench-er0080-sweep-max_num_seqs=4-summary.json', 'vllmbench-er0080-sweep-max_num_seqs=8-summary.json'],
    x: 'request_rate', ...LAT, series: 'tag.max_num_seqs', repeats: true, panels: false, traces: 2,
  },
  {
    name: 'MLPerf Llama-2-70B summaries of two submitters: their Server runs are not one line',
    files: readdirSync(`${ROOT}/${REAL}`).filter((f) => /^mlperf-v.*llama2-70b.*summary\.txt$/.test(f)),
    x: 'request_rate', ...LAT, leftOut: /^3 of 5 filtered records are not drawn/, distinctSeries: true,
  },
];

async function picture(page) {
  return page.evaluate(() => {
    const div = document.getElementById('chart');
    const l = div?.layout ?? {};
    const value = (id) => document.getElementById(id)?.value ?? null;
    return {
      view: document.querySelector('nav.tabs button.active')?.getAttribute('data-view'),
      x: value('x-select'),
      metric: value('metric-select'),
      series: value('series-select'),
      title: l.title?.text ?? '',
      xTitle: l.xaxis?.title?.text ?? '',
      panels: (l.annotations ?? []).map((a) => a.text),
      traces: (div?.data ?? []).map((t) => ({
        name: String(t.name),
        x: [...(t.x ?? [])].map(String),
        y: [...(t.y ?? [])],
        text: [...(t.text ?? [])].filter((s) => s),
      })),
      leftOut: document.getElementById('left-out')?.textContent ?? null,
      files: [...document.querySelectorAll('#file-list > li')].map((li) => li.textContent),
    };
  });
}

async function open(t, files) {
  const page = await newPage(app.browser, t);
  await page.goto(app.server.url);
  await pickFiles(page, files.map((f) => `${REAL}/${f}`));
  await page.waitForFunction(
    (n) => document.querySelectorAll('#file-list > li.loaded').length >= n, files.length, { timeout: 20000 });
  // The main chart, or the improvement view's bars when the file opens on that view (the
  // main chart is not drawn while another view hides it).
  const drawn = (id) => (document.getElementById(id)?.data?.length ?? 0) > 0;
  await page.waitForFunction(`(${drawn})('chart') || (${drawn})('improve-bars')`, null, { timeout: 20000 });
  return page;
}

/** The first picture; for a file opening on the improvement view, its bars must be drawn,
 * and the main chart is read from the bars view of the expected metric. */
async function firstPicture(page, e) {
  const p = await picture(page);
  if (p.view !== 'improvement') return p;
  const bars = await page.evaluate(() => document.getElementById('improve-bars')?.data?.length ?? 0);
  assert.ok(bars > 0, 'the improvement view drew no bars');
  // The bars of its metric's kind, else the scaling lines (an extra metric has no bars view).
  const kind = /throughput|tok|speed/.test(e.metric ?? '') ? 'throughput' : 'latency';
  for (const tab of [kind, 'scaling']) {
    await page.click(`button[data-view="${tab}"]`);
    const drawn = await page.waitForFunction(() => (document.getElementById('chart')?.data?.length ?? 0) > 0, null, { timeout: 10000 })
      .then(() => true, () => false);
    if (drawn) break;
  }
  return { ...(await picture(page)), view: p.view };
}

function check(p, e, label) {
  // A chart is drawn, with at least one finite value.
  const ys = p.traces.flatMap((t) => t.y).filter((y) => typeof y === 'number' && Number.isFinite(y));
  assert.ok(ys.length > 0, `${label}: an empty chart`);
  if (e.view) assert.equal(p.view, e.view, `${label}: view`);
  if (e.x !== undefined) assert.equal(p.x, e.x, `${label}: x axis (${p.title})`);
  if (e.xTitle) assert.match(p.title, new RegExp(`by ${e.xTitle.source}`, 'i'), `${label}: x axis`);
  if (e.metric) assert.equal(p.metric, e.metric, `${label}: metric (${p.title})`);
  if (e.series !== undefined) assert.equal(p.series, e.series, `${label}: series`);
  if (e.traces) assert.equal(p.traces.length, e.traces, `${label}: one trace per ${e.series}`);
  if (e.engines) assert.equal(new Set(p.traces.map((t) => t.name)).size, e.engines, `${label}: engines`);
  if (e.panels === false) assert.deepEqual(p.panels, [], `${label}: panels ${p.panels}`);
  if (e.distinctSeries) assert.ok(p.traces.length >= 2, `${label}: one line joins different systems`);
  // No point averages configurations: a mean is only of repeated runs, and the chart says so.
  const means = p.traces.flatMap((t) => t.text).filter((s) => /^mean of \d+$/.test(s));
  if (means.length > 0) {
    assert.ok(e.repeats, `${label}: ${means.length} points are means, yet the file repeats no configuration`);
    // "… average repeated runs of one configuration", "… average records of different date".
    assert.match(p.title, /mean of N.{0,3} average \S/, `${label}: the chart does not say what it averaged`);
  }
  if (e.measuredSeries) {
    for (const t of p.traces) assert.match(t.name, e.measuredSeries, `${label}: a measured value as a series`);
  }
  if (e.leftOut) assert.match(p.leftOut ?? '', e.leftOut, `${label}: left-out note`);
  else assert.equal(p.leftOut ?? '', '', `${label}: records left out`);
  if (e.failed) {
    assert.ok(p.files.some((f) => /failed requests/.test(f)), `${label}: the failed run is not said to have failed`);
    assert.ok(!/TTFT|ITL|TPOT|latency/i.test(p.title), `${label}: a failed run drawn as a latency (${p.title})`);
  }
}

const files = readdirSync(`${ROOT}/${REAL}`).filter((f) => f !== 'README.md' && f !== 'llamacpp').sort();

test('every real file has a first picture to check', () => {
  assert.deepEqual(files.filter((f) => !EXPECT[f]), [], 'files without an expectation');
  assert.deepEqual(Object.keys(EXPECT).filter((f) => !files.includes(f)), [], 'expectations without a file');
});

for (const f of files) {
  const e = EXPECT[f] ?? {};
  test(`first picture of ${f}`, { todo: e.todo }, async (t) => {
    const page = await open(t, [f]);
    const p = await firstPicture(page, e);
    await screenshot(page, `realfiles-${f.replace(/[^A-Za-z0-9.-]+/g, '_')}`);
    check(p, e, f);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

for (const s of SETS) {
  test(`dropped together: ${s.name}`, { todo: s.todo }, async (t) => {
    assert.ok(s.files.length >= 2, s.files.join());
    const page = await open(t, s.files);
    const p = await firstPicture(page, s);
    await screenshot(page, `realfiles-set-${s.files[0].split('-').slice(0, 2).join('-')}`);
    check(p, s, s.name);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}
