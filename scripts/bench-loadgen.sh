#!/usr/bin/env bash
# Load generator speed: `benchlens run` against `benchlens mock` in a separate process on
# 127.0.0.1. Prints rates, not verdicts (targets: >= 2,000 req/s and >= 250,000 output tok/s
# at concurrency 256 with a zero-delay mock streaming one SSE event per token, 128 tokens).
#
#   1. Zero-delay mock, concurrency 256: sustained req/s and output tok/s, and the TTFT the
#      client reports (the mock's own TTFT is 0, so all of it is client + server overhead).
#   2. Mock at 50 ms TTFT / 5 ms ITL, concurrency 64: TTFT the client reports vs the mock's 50 ms
#      (added TTFT, mean and p99).
#
# Environment: PROMPTS (requests in the zero-delay run, default 30000), BENCHLENS (a built
# binary; default: cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${BENCHLENS:-}" ]]; then
  cargo build --release --quiet --bin benchlens
  BENCHLENS=target/release/benchlens
fi
PROMPTS="${PROMPTS:-30000}"
work="$(mktemp -d)"
mock_pid=""
cleanup() {
  if [[ -n "$mock_pid" ]]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

start_mock() {
  "$BENCHLENS" mock --port 0 "$@" > "$work/mock.out" 2>&1 &
  mock_pid=$!
  for _ in $(seq 100); do
    url="$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -n1 || true)"
    [[ -n "$url" ]] && return 0
    sleep 0.05
  done
  echo "mock did not start:"; cat "$work/mock.out"; exit 1
}
# SIGINT, so the mock prints its own first-chunk latency before it exits.
stop_mock() { kill -INT "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""; }
mock_side() { grep -m1 'first-chunk latency' "$work/mock.out" | sed 's/.*latency: //' || true; }
value() { grep -m1 "^$1" "$2" | cut -c41- | tr -d ' '; }

start_mock --ttft-ms 0 --itl-ms 0 --tokens-per-chunk 1
"$BENCHLENS" run --base-url "$url" --request-rate inf --max-concurrency 256 \
  --num-prompts "$PROMPTS" --warmup 512 --input-len 32 --output-len 128 --ignore-eos \
  --no-progress --result-dir "$work" --result-filename zero.json > "$work/zero.txt"
stop_mock
zero_mock="$(mock_side)"
echo "zero-delay mock, concurrency 256, 128 tokens/request, $PROMPTS requests:"
echo "  requests/s:          $(value 'Request throughput' "$work/zero.txt")"
echo "  output tokens/s:     $(value 'Output token throughput' "$work/zero.txt")"
echo "  failed requests:     $(value 'Failed requests' "$work/zero.txt")"
echo "  reported TTFT mean:  $(value 'Mean TTFT' "$work/zero.txt") ms (mock: 0 ms)"
echo "  reported TTFT p99:   $(value 'P99 TTFT' "$work/zero.txt") ms"
echo "  the mock's own first-chunk latency (incl. warm-up): $zero_mock"

start_mock --ttft-ms 50 --itl-ms 5 --tokens-per-chunk 1
"$BENCHLENS" run --base-url "$url" --request-rate inf --max-concurrency 64 \
  --num-prompts 1280 --warmup 64 --input-len 32 --output-len 128 --ignore-eos \
  --no-progress --result-dir "$work" --result-filename paced.json > "$work/paced.txt"
stop_mock
paced_mock="$(mock_side)"
mean="$(value 'Mean TTFT' "$work/paced.txt")"
p99="$(value 'P99 TTFT' "$work/paced.txt")"
echo "mock at 50 ms TTFT / 5 ms ITL, concurrency 64, 1280 requests:"
echo "  reported TTFT mean:  $mean ms (added: $(awk -v v="$mean" 'BEGIN{printf "%.2f", v-50}') ms)"
echo "  reported TTFT p99:   $p99 ms (added: $(awk -v v="$p99" 'BEGIN{printf "%.2f", v-50}') ms)"
echo "  the mock's own first-chunk latency (incl. warm-up): $paced_mock"
echo "  reported ITL mean:   $(value 'Mean ITL' "$work/paced.txt") ms (mock: 5 ms)"
echo "  requests/s:          $(value 'Request throughput' "$work/paced.txt")"
