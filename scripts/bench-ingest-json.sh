#!/usr/bin/env bash
# Whole-process figures for large JSON inputs with the release binary, on one core
# (`taskset -c 0`), /usr/bin/time's wall time, CPU time (user + system) and peak memory:
# - serving: a generated vLLM serving JSON on one line (`vllm bench serve --save-result
#   --save-detailed` layout: summary fields, then per-request `input_lens`, `output_lens`,
#   `ttfts`, `itls` (one array per request), `generated_texts`, `errors`, `start_times`,
#   `latencies`), REQUESTS requests of ITLS inter-token gaps each (defaults 100000 and 196:
#   about 20 million per-request values, 124 MB), read by `benchlens inspect` and by
#   `benchlens convert -o FILE` (canonical JSON);
# - requests: a generated `*.requests.jsonl` as `benchlens run` writes it, LINES requests of
#   34 chunks each (default 1000000 lines, about 1 GB), summarised by `benchlens inspect`.
# Each line gives MB/s of the input per wall second and per CPU second and the peak resident
# memory as a multiple of the input's size: median (min-max) over RUNS runs (default 5).
#
#   scripts/bench-ingest-json.sh [BINARY]
#
# BINARY defaults to target/release/benchlens (built first when missing). OLD=path/to/an/older
# benchlens runs that binary too, alternating run by run with BINARY. Runs of the older binary
# are capped at OLD_LIMIT_MB of address space (default 6000) and OLD_TIMEOUT seconds (default
# 120): one that fails is reported as such, with its time and peak memory. PARTS="serving
# requests" (the default) picks parts. The generated files live in a temporary folder and are
# removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/benchlens}"
runs="${RUNS:-5}"
requests="${REQUESTS:-100000}"
itls="${ITLS:-196}"
lines="${LINES:-1000000}"
old_limit_mb="${OLD_LIMIT_MB:-6000}"
old_timeout="${OLD_TIMEOUT:-120}"
parts="${PARTS:-serving requests}"
if [[ ! -x "$bin" ]]; then
    cargo build --release --locked --bin benchlens
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# One timed run on core 0: "wall cpu peak_kib status". A failing run is kept (status is its
# exit code) so a binary that runs out of its limits shows as such.
once() { # limit_kib timeout_s command...
    local limit="$1" t="$2"
    shift 2
    local status=0
    (
        [[ "$limit" == 0 ]] || ulimit -v "$limit"
        exec /usr/bin/time -f '%e %U %S %M' -o "$dir/time" timeout "$t" taskset -c 0 "$@" >/dev/null 2>"$dir/err"
    ) || status=$?
    # A failing command's file starts with "Command exited with non-zero status N".
    tail -n 1 "$dir/time" | awk -v s="$status" '{ printf "%s %.2f %s %s\n", $1, $2 + $3, $4, s }'
}

# median (min-max) of f(column) over the lines of file $2 whose status is 0; f is the awk
# expression $3 of x (the column $1's value).
summary() {
    awk -v c="$1" -v f="$3" '$4 == 0 { print $c }' "$2" | sort -g | awk -v f="$3" -v size="$size_mb" '
        function g(x) { return f == "rate" ? (x > 0 ? size / x : 0) : (f == "ratio" ? x * 1024 / 1e6 / size : x) }
        { v[NR] = g($1) }
        END {
            if (NR == 0) { printf "-"; exit }
            lo = v[1]; hi = v[NR]; if (lo > hi) { t = lo; lo = hi; hi = t }
            printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], lo, hi
        }'
}

report() { # label file
    local label="$1" file="$2" failed
    failed="$(awk '$4 != 0' "$file" | wc -l)"
    printf '  %-34s MB/s wall %s  MB/s cpu %s  peak/size %s' "$label" \
        "$(summary 1 "$file" rate)" "$(summary 2 "$file" rate)" "$(summary 3 "$file" ratio)"
    if ((failed > 0)); then
        printf '  [%d of %d runs failed: %s]' "$failed" "$(wc -l <"$file")" \
            "$(awk '$4 != 0 { printf "exit %s after %ss at %.0f MiB; ", $4, $1, $3 / 1024 }' "$file")"
    fi
    printf '\n'
}

compare() { # name input command-words...
    local name="$1" input="$2"
    shift 2
    : >"$dir/new"
    : >"$dir/old"
    for ((i = 0; i < runs; i++)); do
        once 0 600 "$bin" "$@" "$input" >>"$dir/new"
        [[ -z "${OLD:-}" ]] || once $((old_limit_mb * 1024)) "$old_timeout" "$OLD" "$@" "$input" >>"$dir/old"
    done
    echo "$name"
    report "$bin" "$dir/new"
    [[ -z "${OLD:-}" ]] || report "$OLD" "$dir/old"
}

if [[ " $parts " == *" serving "* ]]; then
    f="$dir/vllm-serving.json"
    awk -v n="$requests" -v k="$itls" 'BEGIN {
        printf "{\"date\": \"20250301-101500\", \"endpoint_type\": \"vllm\", \"backend\": \"vllm\", \"label\": null, \"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"tokenizer_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_prompts\": %d, \"request_rate\": \"inf\", \"burstiness\": 1.0, \"max_concurrency\": 256, \"duration\": 612.5, \"completed\": %d, \"failed\": 0, \"total_input_tokens\": %d, \"total_output_tokens\": %d, \"request_throughput\": 163.2, \"output_throughput\": 32150.4, \"total_token_throughput\": 199300.1, \"mean_ttft_ms\": 51.2, \"median_ttft_ms\": 48.9, \"p99_ttft_ms\": 130.5, \"mean_itl_ms\": 19.1, \"p99_itl_ms\": 34.0", n, n, n * 1024, n * (k + 1)
        printf ", \"input_lens\": ["; for (i = 0; i < n; i++) printf "%s1024", (i ? "," : ""); printf "]"
        printf ", \"output_lens\": ["; for (i = 0; i < n; i++) printf "%s%d", (i ? "," : ""), k + 1; printf "]"
        printf ", \"ttfts\": ["; for (i = 0; i < n; i++) printf "%s%.4f", (i ? "," : ""), 0.03 + (i % 97) / 1000; printf "]"
        printf ", \"itls\": ["
        for (i = 0; i < n; i++) {
            printf "%s[", (i ? "," : "")
            for (j = 0; j < k; j++) printf "%s%.3f", (j ? "," : ""), 0.011 + ((i + j * 7) % 31) / 1000
            printf "]"
        }
        printf "]"
        printf ", \"generated_texts\": ["; for (i = 0; i < n; i++) printf "%s\"tok tok tok\"", (i ? "," : ""); printf "]"
        printf ", \"errors\": ["; for (i = 0; i < n; i++) printf "%s\"\"", (i ? "," : ""); printf "]"
        printf ", \"start_times\": ["; for (i = 0; i < n; i++) printf "%s%.4f", (i ? "," : ""), 1000 + i / 163.2; printf "]"
        printf ", \"latencies\": ["; for (i = 0; i < n; i++) printf "%s%.4f", (i ? "," : ""), 3.9 + (i % 89) / 100; printf "]"
        printf "}\n"
    }' >"$f"
    size_mb="$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')"
    values=$((requests * (itls + 7)))
    echo "vLLM serving JSON, one line: $requests requests, $values per-request values, $size_mb MB; one core, $runs runs: median (min-max)"
    compare "inspect" "$f" inspect
    compare "convert -o FILE (canonical JSON)" "$f" convert -o "$dir/out.json"
fi

if [[ " $parts " == *" requests "* ]]; then
    f="$dir/run.requests.jsonl"
    awk -v n="$lines" 'BEGIN {
        for (i = 0; i < n; i++) {
            fail = (i % 500 == 7)
            ttft = 20 + (i % 113) * 0.731
            printf "{\"stage\":%d,\"index\":%d,\"input_len\":1024,\"input_tokens_server\":1024,\"max_tokens\":34,", int(i / 250000), i % 250000
            printf "\"output_tokens_server\":%s,\"output_chunks_client\":%d,\"output_tokens_client\":%d,", fail ? "null" : "34", fail ? 0 : 34, fail ? 0 : 34
            printf "\"intended_send_s\":%.6f,\"dispatched_s\":%.6f,\"schedule_lag_ms\":0.0123,\"sent_s\":%.6f,", i / 1000, i / 1000 + 0.00001, i / 1000 + 0.00002
            if (fail) printf "\"ttft_ms\":null,\"e2el_ms\":null,"
            else printf "\"ttft_ms\":%.6f,\"e2el_ms\":%.6f,", ttft, ttft + 33 * 9.5
            printf "\"write_delay_ms\":0.195,\"read_delay_ms\":0.186,\"chunks_ms_tokens\":["
            t = ttft
            if (!fail) for (j = 0; j < 34; j++) { printf "%s[%.6f,1]", (j ? "," : ""), t; t += 9 + ((i + j) % 11) * 0.1 }
            printf "],\"coalesced_chunks\":0,\"length_flag\":null,\"finish_reason_missing\":false,"
            if (fail) printf "\"error_kind\":\"http_503\",\"error\":\"HTTP 503: Service Unavailable\"}\n"
            else printf "\"error_kind\":null,\"error\":null}\n"
        }
    }' >"$f"
    size_mb="$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')"
    echo "benchlens run per-request JSON Lines: $lines requests, $size_mb MB; one core, $runs runs: median (min-max)"
    compare "inspect" "$f" inspect
fi
