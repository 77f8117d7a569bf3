#!/usr/bin/env bash
# Load generator speed: `benchlens run` against `benchlens mock` in a separate process on
# 127.0.0.1. Prints rates, not verdicts (targets: >= 2,000 req/s and >= 250,000 output tok/s
# at concurrency 256 with a zero-delay mock streaming one SSE event per token, 128 tokens).
#
#   1. Zero-delay mock, concurrency 256: sustained req/s and output tok/s, the client's CPU time
#      a request, the TTFT the client reports, and the mock's own view of it (from the request's
#      arrival at its socket to its first chunk): the difference is what the client adds.
#   2. Mock at 50 ms TTFT / 5 ms ITL, concurrency 64: TTFT the client reports vs the mock's 50 ms
#      and vs the mock's own view (added TTFT, mean and p99).
#   3. At scale: `benchlens run` at SCALE requests (default 20000 and 50000) against the
#      zero-delay mock (or one SCALE_ITL_MS apart between tokens), concurrency 256,
#      128 tokens/request: peak resident memory per request
#      (/usr/bin/time's maximum RSS minus that of a 100-request run, over the request count; and
#      minus that of a 2,560-request run, every connection opened, over the requests beyond it) and
#      the seconds from the load's end (the run's own stage_start_unix_s + duration_s) to the
#      process's exit, when its files are final. With OLD=<another build's benchlens> the two
#      builds alternate, REPS times (default 2), and each figure is given as a range per build.
#   4. What each open connection holds: a 2,560-request run's peak at concurrency 256 minus at
#      concurrency 1, over the 255 extra connections, for replies of CONN_OUT tokens (default
#      "8 128 512").
#      RUN_FLAGS adds flags to these runs (e.g. RUN_FLAGS="--vllm-compatible --save-detailed" or
#      "--steady-window"); with --steady-window the record's duration_s is the window's, so the
#      load's end is the last request's end in the per-request file (sent_s + e2el_ms).
# Both sides time with kernel receive stamps (src/loadgen/stamp.rs), so time data spends waiting
# in a socket for a busy process is not counted; the client prints that wait as
# "socket-to-read wait".
#
# Environment: PROMPTS (requests in the zero-delay run, default 30000), BENCHLENS (a built
# binary; default: cargo build --release), PARTS (which parts to run, default "1 2 3 4"), SCALE,
# SCALE_ITL_MS (default 0), OLD, REPS, RUN_FLAGS (part 3).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${BENCHLENS:-}" ]]; then
  cargo build --release --quiet --bin benchlens
  BENCHLENS=target/release/benchlens
fi
PROMPTS="${PROMPTS:-30000}"
PARTS="${PARTS:-1 2 3 4}"
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
    url="$(grep -so 'http://[0-9.:]*' "$work/mock.out" | head -n1 || true)"
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

part() { [[ " $PARTS " == *" $1 "* ]]; }

if part 1; then
start_mock --ttft-ms 0 --itl-ms 0 --tokens-per-chunk 1
/usr/bin/time -f '%U %S' -o "$work/cpu.txt" "$BENCHLENS" run --base-url "$url" --request-rate inf --max-concurrency 256 \
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
# User + system CPU of the client process over every request it sent (warm-up included): what
# a request costs the client, steadier on a shared machine than the rates, which the mock's
# share of the cores also sets.
echo "  client CPU:          $(awk -v n="$PROMPTS" '{ printf "%.1f", ($1 + $2) * 1e6 / (n + 512) }' "$work/cpu.txt") us a request"
echo "  the mock's own TTFT (request at its socket -> first chunk, incl. warm-up): $zero_mock"
echo "  reported TTFT mean:  $mean ms (client adds $(minus "$mean" "$(mock_mean "$zero_mock")") ms to the mock's own)"
echo "  reported TTFT p99:   $p99 ms (client adds $(minus "$p99" "$(mock_p99 "$zero_mock")") ms to the mock's own p99)"
echo "  client socket-to-read wait, left out of TTFT: mean $(value 'Mean socket-to-read' "$work/zero.txt") ms, p99 $(value 'P99 socket-to-read' "$work/zero.txt") ms"
echo "  client send-to-write delay (outside TTFT): mean $(value 'Mean send-to-write' "$work/zero.txt") ms"
fi

if part 2; then

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
fi

# A canonical file's metric (the pretty-printed `"key": value` line; the metrics come before
# the per-request detail, so grep stops early in a big file).
metric() { grep -m1 "^      \"$1\": " "$2" | sed 's/.*: //; s/,$//'; }
# Runs BIN for N requests against the mock at $url, with RUN_FLAGS; prints "peak_kb tail_s".
scale_run() {
  local bin="$1" n="$2" dir="$work/scale"
  rm -rf "$dir"; mkdir -p "$dir"
  # shellcheck disable=SC2086 # RUN_FLAGS is a list of flags
  /usr/bin/time -f %M -o "$work/rss.txt" "$bin" run --base-url "$url" --request-rate inf \
    --max-concurrency 256 --num-prompts "$n" --input-len 32 --output-len 128 --ignore-eos \
    --no-progress --result-dir "$dir" --result-filename scale.json ${RUN_FLAGS:-} > "$work/scale.txt"
  local exited start dur canon
  exited="$(date +%s.%N)"
  # With --vllm-compatible, --result-filename names vLLM's file and the canonical one keeps its
  # own name.
  canon="$(ls "$dir"/benchlens-*.json 2>/dev/null | head -n1 || true)"
  [[ -n "$canon" ]] || canon="$dir/scale.json"
  start="$(metric extra.stage_start_unix_s "$canon")"
  if [[ -n "$(metric extra.window_end_s "$canon")" ]]; then
    dur="$(jq -r 'select(.e2el_ms != null) | .sent_s + .e2el_ms / 1000' "${canon%.json}.requests.jsonl" | sort -g | tail -n1)"
  else
    dur="$(metric duration_s "$canon")"
  fi
  awk -v e="$exited" -v s="$start" -v d="$dur" -v kb="$(tail -n1 "$work/rss.txt")" \
    'BEGIN { printf "%d %.2f\n", kb, e - (s + d) }'
}
# "min-max" of the numbers on stdin, with a printf format.
range() { sort -g | awk -v f="$1" 'NR == 1 { lo = $1 } { hi = $1 } END { printf f "-" f, lo, hi }'; }

if part 3; then
SCALE="${SCALE-20000 50000}"
REPS="${REPS:-2}"
SCALE_ITL_MS="${SCALE_ITL_MS:-0}"
builds=("new=$BENCHLENS")
[[ -n "${OLD:-}" ]] && builds=("old=$OLD" "${builds[@]}")
start_mock --ttft-ms 0 --itl-ms "$SCALE_ITL_MS" --tokens-per-chunk 1
: > "$work/scale.rows"
for rep in $(seq "$REPS"); do
  for b in "${builds[@]}"; do
    read -r base _ <<<"$(scale_run "${b#*=}" 100)"
    # Every one of the 256 connections opened and used ten times: what a run holds whatever
    # its length (connections, their buffers and tasks), for the growth per request beyond it.
    read -r warm _ <<<"$(scale_run "${b#*=}" 2560)"
    for n in $SCALE; do
      read -r kb tail_s <<<"$(scale_run "${b#*=}" "$n")"
      per="$(awk -v k="$kb" -v b="$base" -v n="$n" 'BEGIN { printf "%.0f", (k - b) * 1024 / n }')"
      grow="$(awk -v k="$kb" -v b="$warm" -v n="$n" 'BEGIN { printf "%.0f", (k - b) * 1024 / (n - 2560) }')"
      echo "  run $rep, ${b%%=*}, $n requests: peak $kb KB (100 requests: $base KB; 2,560: $warm KB), $per bytes/request over the 100-request run, $grow bytes/request beyond 2,560, files final ${tail_s} s after the load" >&2
      echo "${b%%=*} $n $per $tail_s $grow" >> "$work/scale.rows"
    done
  done
done
stop_mock
echo "at scale: mock at 0 ms TTFT / $SCALE_ITL_MS ms ITL, concurrency 256, 128 tokens/request, flags: ${RUN_FLAGS:-none}, $REPS run(s) per build:"
for b in "${builds[@]}"; do
  for n in $SCALE; do
    rows="$(awk -v b="${b%%=*}" -v n="$n" '$1 == b && $2 == n' "$work/scale.rows")"
    echo "  ${b%%=*}, $n requests: $(cut -d' ' -f3 <<<"$rows" | range %s) bytes/request held at peak over a 100-request run's, $(cut -d' ' -f5 <<<"$rows" | range %s) over a 2,560-request run's (growth per request beyond it), files final $(cut -d' ' -f4 <<<"$rows" | range %s) s after the load's end"
  done
done
fi

if part 4; then
# What the concurrency costs whatever the run's length: a 2,560-request run's peak at
# concurrency 256 minus the same run's at concurrency 1, per extra connection, for replies of
# CONN_OUT tokens (default 8, 128 and 512; zero-delay mock, so a reply is all there at once).
start_mock --ttft-ms 0 --itl-ms 0 --tokens-per-chunk 1
echo "per connection: 2,560 requests, zero-delay mock, peak at concurrency 256 minus at 1, over 255:"
for out in ${CONN_OUT:-8 128 512}; do
  peaks=()
  for c in 1 256; do
    /usr/bin/time -f %M -o "$work/rss.txt" "$BENCHLENS" run --base-url "$url" --request-rate inf \
      --max-concurrency "$c" --num-prompts 2560 --input-len 32 --output-len "$out" --ignore-eos \
      --no-progress --result-dir "$work" --result-filename conn.json > /dev/null
    peaks+=("$(tail -n1 "$work/rss.txt")")
  done
  awk -v o="$out" -v a="${peaks[0]}" -v b="${peaks[1]}" \
    'BEGIN { printf "  %d tokens a reply: %d KB at concurrency 1, %d KB at 256: %.0f KB a connection\n", o, a, b, (b - a) / 255 }'
done
stop_mock
fi
