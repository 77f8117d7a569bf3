#!/usr/bin/env bash
# Load generator speed: `benchlens run` against `benchlens mock` in a separate process on
# 127.0.0.1. Prints rates, not verdicts (targets: >= 2,000 req/s and >= 250,000 output tok/s
# at concurrency 256 with a zero-delay mock streaming one SSE event per token, 128 tokens).
#
#   1. Zero-delay mock, concurrency 256: sustained req/s and output tok/s, the TTFT the client
#      reports, and the mock's own view of it (from the request's arrival at its socket to its
#      first chunk): the difference is what the client adds.
#   2. Mock at 50 ms TTFT / 5 ms ITL, concurrency 64: TTFT the client reports vs the mock's 50 ms
#      and vs the mock's own view (added TTFT, mean and p99).
# Both sides time with kernel receive stamps (src/loadgen/stamp.rs), so time data spends waiting
# in a socket for a busy process is not counted; the client prints that wait as
# "socket-to-read wait".
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
# "N streamed requests, mean X ms, p99 Y ms" -> X or Y
mock_mean() { sed -n 's/.*mean \([0-9.]*\) ms.*/\1/p' <<<"$1"; }
mock_p99() { sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$1"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "") print "?"; else printf "%+.2f", a-b }'; }
value() { grep -m1 "^$1" "$2" | cut -c41- | tr -d ' '; }

start_mock --ttft-ms 0 --itl-ms 0 --tokens-per-chunk 1
"$BENCHLENS" run --base-url "$url" --request-rate inf --max-concurrency 256 \
  --num-prompts "$PROMPTS" --warmup 512 --input-len 32 --output-len 128 --ignore-eos \
  --no-progress --result-dir "$work" --result-filename zero.json > "$work/zero.txt"
stop_mock
zero_mock="$(mock_side)"
mean="$(value 'Mean TTFT' "$work/zero.txt")"
p99="$(value 'P99 TTFT' "$work/zero.txt")"
echo "zero-delay mock, concurrency 256, 128 tokens/request, $PROMPTS requests:"
echo "  requests/s:          $(value 'Request throughput' "$work/zero.txt")"
echo "  output tokens/s:     $(value 'Output token throughput' "$work/zero.txt")"
echo "  failed requests:     $(value 'Failed requests' "$work/zero.txt")"
echo "  the mock's own TTFT (request at its socket -> first chunk, incl. warm-up): $zero_mock"
echo "  reported TTFT mean:  $mean ms (client adds $(minus "$mean" "$(mock_mean "$zero_mock")") ms to the mock's own)"
echo "  reported TTFT p99:   $p99 ms (client adds $(minus "$p99" "$(mock_p99 "$zero_mock")") ms to the mock's own p99)"
echo "  client socket-to-read wait, left out of TTFT: mean $(value 'Mean socket-to-read' "$work/zero.txt") ms, p99 $(value 'P99 socket-to-read' "$work/zero.txt") ms"
echo "  client send-to-write delay (outside TTFT): mean $(value 'Mean send-to-write' "$work/zero.txt") ms"

start_mock --ttft-ms 50 --itl-ms 5 --tokens-per-chunk 1
"$BENCHLENS" run --base-url "$url" --request-rate inf --max-concurrency 64 \
  --num-prompts 1280 --warmup 64 --input-len 32 --output-len 128 --ignore-eos \
  --no-progress --result-dir "$work" --result-filename paced.json > "$work/paced.txt"
stop_mock
paced_mock="$(mock_side)"
mean="$(value 'Mean TTFT' "$work/paced.txt")"
p99="$(value 'P99 TTFT' "$work/paced.txt")"
echo "mock at 50 ms TTFT / 5 ms ITL, concurrency 64, 1280 requests:"
echo "  the mock's own TTFT (request at its socket -> first chunk, incl. warm-up): $paced_mock"
echo "  reported TTFT mean:  $mean ms (added to the configured 50 ms: $(minus "$mean" 50) ms; to the mock's own: $(minus "$mean" "$(mock_mean "$paced_mock")") ms)"
echo "  reported TTFT p99:   $p99 ms (added to the configured 50 ms: $(minus "$p99" 50) ms; to the mock's own p99: $(minus "$p99" "$(mock_p99 "$paced_mock")") ms)"
echo "  reported ITL mean:   $(value 'Mean ITL' "$work/paced.txt") ms (mock: 5 ms)"
echo "  requests/s:          $(value 'Request throughput' "$work/paced.txt")"
