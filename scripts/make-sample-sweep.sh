#!/usr/bin/env bash
# Makes the bundled sample public/samples/005_benchlens_sweep.json: a `benchlens sweep` against
# the built-in mock (about 20 s), so the start page shows the capacity curve, per-request detail
# and per-second series with the server's telemetry without a server.
#
# The mock batches 4 requests, answers the first token after 20 ms and each next one 4 ms
# later; 8-token replies. Each probe runs 1.2 s; objectives: TTFT within 100 ms for 95 % of
# requests (vLLM's per-request form, so the file has goodput) and p90 E2E latency within 150 ms.
# Every request is kept in the file (per-request detail), `--scrape-metrics` stores the mock's
# /metrics (running, waiting, KV-cache usage) in each probe's series.
#
# Rerunnable: the command line is fixed (a relative result folder under target/), so the file
# differs from one run to the next only in what was timed: latencies, the probes the search
# chose after them, the date and the mock's port.
#
# Environment: BENCHLENS (a built binary; default: `cargo build --locked` of this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${BENCHLENS:-}" ]]; then
  cargo build --locked --quiet --bin benchlens
  BENCHLENS=target/debug/benchlens
fi
out=public/samples/005_benchlens_sweep.json
work=target/sample-sweep
rm -rf "$work"
mkdir -p "$work"

"$BENCHLENS" sweep --mock --mock-ttft-ms 20 --mock-itl-ms 4 --mock-max-batch 4 \
  --model tiny-mock --tokenizer words --input-len 16 --output-len 8 --ignore-eos \
  --burstiness 1000 --duration 1.2 --start 20 \
  --goodput ttft:100 p90_e2el:150 --min-good-pct 95 --seed 3 \
  --scrape-metrics --no-progress \
  --result-dir "$work" --result-filename sample.json | grep -E '^sweep: (probe [0-9]+ at .*: |capacity)'

cp "$work/sample.json" "$out"
bytes=$(wc -c <"$out")
echo "wrote $out ($((bytes / 1024)) KiB)"
if ((bytes > 500 * 1024)); then
  echo "error: $out is over 500 KiB: shorten --duration" >&2
  exit 1
fi
