// A very wide file and the time from its drop to the first chart, for the wide-file test and
// `make bench` (tests/browser/bench.mjs).

/** Two configurations (batch 1 and 2) and `columns` metric columns named metric_<i>. */
export function wideCsv(columns) {
  const head = ['batch'];
  const rows = [['1'], ['2']];
  for (let i = 0; i < columns; i++) {
    head.push(`metric_${i}`);
    rows[0].push(String(i % 1000));
    rows[1].push(String((i % 1000) + 0.5));
  }
  return [head, ...rows].map((r) => r.join(',')).join('\n') + '\n';
}

/** Drops `text` as `name` and resolves with the ms until the chart is drawn and the longest main-thread task. */
export async function dropAndTimeChart(page, name, text) {
  return page.evaluate(async ({ name, text }) => {
    const tasks = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) tasks.push([e.startTime, e.duration]);
    });
    observer.observe({ type: 'longtask' });
    const dt = new DataTransfer();
    dt.items.add(new File([text], name));
    const t0 = performance.now();
    document.querySelector('main').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    while (!(document.getElementById('chart')?.data?.length) && !document.querySelector('#file-list > li.failed')) {
      await new Promise((r) => requestAnimationFrame(r));
      if (performance.now() - t0 > 120000) break;
    }
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
    observer.disconnect();
    const after = tasks.filter(([start]) => start >= t0);
    return { ms, longestMs: Math.max(0, ...after.map(([, d]) => d)) };
  }, { name, text });
}
