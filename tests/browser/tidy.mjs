// The tidy CSV of the browser bench and the million-row test: one row per configuration
// (model, engine, gpu, batch, concurrency) with three metrics, generated at run time. Self-contained
// functions, so a page can rebuild the same text from their source (`tidyCsvSource`) instead of
// receiving tens of megabytes through the test driver.

/**
 * The fields of row `i`, as written in the file. `full`: the million-row test's form, with an
 * organisation in the model name and a fourth metric (E2EL), about 67 bytes a row as the
 * issue's ~65 MB file for 10^6 rows; else the 100k bench file's form (47 bytes a row).
 */
export function tidyRow(i, full) {
  const engines = ['vllm', 'sglang', 'tgi', 'trtllm'];
  const gpus = ['A100', 'H100', 'L40S', 'MI300X'];
  const row = [`${full ? 'meta-llama/' : ''}model-${i % 12}`, engines[(i >> 2) % 4], gpus[(i >> 4) % 4], 2 ** (i % 10), 2 ** ((i >> 6) % 9),
    (20 + (i % 997) * 0.37).toFixed(3), (5 + (i % 89) * 0.11).toFixed(3), (500 + (i % 4999) * 1.7).toFixed(2)];
  if (full) row.push((900 + (i % 7919) * 0.53).toFixed(3));
  return row;
}

/**
 * The header of the file (`full` as in `tidyRow`). `canonical`: the same columns under the
 * names benchlens itself writes (`convert --to csv`), which the explorer reads as canonical CSV.
 */
export function tidyHeader(full, canonical = false) {
  if (canonical) {
    return `model,engine,gpu,batch_size,max_concurrency,mean_ttft_ms,mean_tpot_ms,output_throughput${full ? ',mean_e2el_ms' : ''}`;
  }
  return `model,engine,gpu,batch,concurrency,TTFT (ms),TPOT (ms),Throughput (tok/s)${full ? ',E2EL (ms)' : ''}`;
}

/** A tidy CSV of `rows` rows (`full`, `canonical` as in `tidyRow`, `tidyHeader`; self-contained with them: `tidyCsvSource`). */
export function tidyCsv(rows, full = false, canonical = false) {
  const lines = [tidyHeader(full, canonical)];
  for (let i = 0; i < rows; i++) lines.push(tidyRow(i, full).join(','));
  return lines.join('\n') + '\n';
}

/** Source of a function body returning `tidyCsv`, for `new Function` in a page. */
export const tidyCsvSource = `${tidyRow.toString()}\n${tidyHeader.toString()}\nreturn ${tidyCsv.toString()};`;

/**
 * Drops the `rows`-row tidy CSV (`full` form by default, `canonical` header or not, built in the page) as `name` and waits for the chart. Returns
 * the file's size, the ms from the drop to the first chart, the longest main-thread task seen
 * from the drop until the chart (PerformanceObserver 'longtask') and the JS heap afterwards.
 */
export async function dropTidy(page, name, rows, full = true, canonical = false) {
  return page.evaluate(async ({ name, rows, full, canonical, src }) => {
    const text = new Function(src)()(rows, full, canonical);
    const size = text.length;
    const longTasks = [];
    const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => [e.startTime, e.duration])));
    observer.observe({ type: 'longtask' });
    const dt = new DataTransfer();
    dt.items.add(new File([text], name));
    await new Promise((r) => requestAnimationFrame(r));
    const t0 = performance.now();
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      const d = document.getElementById('chart')?.data;
      if (d && d.length && d.some((t) => t.x.length)) break;
      const failed = document.querySelector('#file-list li.failed .error');
      if (failed) throw new Error(failed.textContent);
      if (performance.now() - t0 > 120000) throw new Error('no chart after 120 s');
    }
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 100));
    observer.disconnect();
    // The task that built the text began before t0; it is not the page's.
    const after = longTasks.filter(([start]) => start >= t0).map(([, d]) => d);
    return { size, ms, longest: Math.max(0, ...after), heap: performance.memory?.usedJSHeapSize ?? 0 };
  }, { name, rows, full, canonical, src: tidyCsvSource });
}

/**
 * Clicks the filter checkboxes of `dim` in turn (each on, then off: `rounds` times over the
 * values) and returns the ms from each click to plotly's redraw, sorted.
 */
export async function filterClicks(page, dim, clicks) {
  return page.evaluate(async ({ dim, clicks }) => {
    const box = (value) => document.querySelector(`fieldset[data-dim="${dim}"] input[data-value="${value}"]`);
    const values = [...document.querySelectorAll(`fieldset[data-dim="${dim}"] input`)].map((b) => b.dataset.value);
    const times = [];
    for (let k = 0; k < clicks; k++) {
      const value = values[Math.floor(k / 2) % values.length];
      const drawn = new Promise((r) => document.getElementById('chart').once('plotly_afterplot', r));
      const t0 = performance.now();
      box(value).click();
      await Promise.race([drawn, new Promise((_, fail) => setTimeout(() => fail(new Error('no redraw in 10 s')), 10000))]);
      times.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
    return times.sort((a, b) => a - b);
  }, { dim, clicks });
}

/**
 * Resident memory (bytes) of the largest Chromium renderer process started under this node
 * process (the page's; its parse worker runs inside it), from /proc. Linux only; 0 elsewhere.
 */
export async function rendererRss() {
  const { readdir, readFile } = await import('node:fs/promises');
  const procs = new Map();
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // Chromium rewrites its command line as one string: look for the flag in the text.
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      procs.set(Number(pid), { ppid, rss, renderer: /(^|[\s\0])--type=renderer([\s\0]|$)/.test(cmd) });
    } catch {
      // The process ended meanwhile.
    }
  }
  const mine = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 10; p = procs.get(p)?.ppid ?? 0, hops++) {
      if (p === process.pid) return true;
    }
    return false;
  };
  let most = 0;
  for (const [pid, p] of procs) if (p.renderer && mine(pid)) most = Math.max(most, p.rss);
  return most;
}

/**
 * Opens the trade-off view and then chooses its x axis (`latency`, an option's text), each
 * step timed from the click to the chart drawn (plotly's `afterplot`), with the main thread's
 * long tasks (PerformanceObserver 'longtask', over 50 ms) of each. Returns
 * `{ open: {ms, tasks}, axis: {ms, tasks}, longest }` (tasks: durations in ms, longest first).
 */
export async function tradeoffTasks(page, latency) {
  return page.evaluate(async (latency) => {
    const chart = () => document.getElementById('tradeoff-chart');
    const step = async (act, done) => {
      const tasks = [];
      const observer = new PerformanceObserver((l) => tasks.push(...l.getEntries().map((e) => e.duration)));
      observer.observe({ type: 'longtask' });
      const t0 = performance.now();
      act();
      for (;;) {
        await new Promise((r) => setTimeout(r, 5));
        if (done()) break;
        if (performance.now() - t0 > 120000) throw new Error('no trade-off chart after 120 s');
      }
      const ms = performance.now() - t0;
      // Two frames: the tasks that end with the drawing are reported by then.
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      observer.disconnect();
      return { ms, tasks: tasks.sort((a, b) => b - a) };
    };
    const idle = () => !document.getElementById('tradeoff-busy');
    const open = await step(
      () => document.querySelector('button[data-view="tradeoff"]').click(),
      () => document.getElementById('tradeoff-latency') && idle() && (chart()?.data?.length || document.getElementById('tradeoff-none')),
    );
    const select = document.getElementById('tradeoff-latency');
    const option = [...select.options].find((o) => o.text === latency);
    if (!option) throw new Error(`no x axis ${latency}`);
    const axis = await step(
      () => {
        select.value = option.value;
        select.dispatchEvent(new Event('change', { bubbles: true }));
      },
      () => idle() && chart()?.layout?.xaxis?.title?.text === latency && chart()?.data?.length >= 2,
    );
    return { open, axis, longest: Math.max(0, ...open.tasks, ...axis.tasks) };
  }, latency);
}
