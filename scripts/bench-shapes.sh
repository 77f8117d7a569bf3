#!/usr/bin/env bash
# Whole-process figures for reading every large shape with the release binary on one core
# (`taskset -c 0`): `benchlens inspect FILE`, /usr/bin/time's wall time, CPU time (user +
# system) and peak resident memory. For each shape (scripts/gen_shapes.py writes them):
#
#   MB/CPU-s   the file's MB read per CPU second (user + system)
#   MB/s       the file's MB read per wall second
#   peak       peak resident memory, and as a multiple of the file
#   bound      2 x the file + 50 MB (the issue's target for peak memory)
#
# median (min-max) over RUNS runs (default 3). The shapes: a tidy CSV under generic headers,
# the same rows under benchlens's canonical header, `convert --to csv` of a serving run (which
# today is one summary row: canonical CSV has no per-request columns, so the shape is reported
# as not measured rather than timed on a tiny file), vLLM serving JSON without and with `itls` (5M and 20M values), a
# genai-perf/AIPerf CSV, SGLang JSON Lines and the same runs as one JSON list, a markdown table
# of 200,000 rows, and a table with a run id and a timestamp on every row (`ids`).
#
#   scripts/bench-shapes.sh [BINARY]
#
# BINARY defaults to target/release/benchlens (built first when missing). SHAPES picks shapes
# (names as in the table below); SHAPES_DIR keeps the generated files between runs (default: a
# temporary folder removed at exit). OLD=path/to/an/older/benchlens runs that binary too,
# alternating run by run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath -m "${1:-target/release/benchlens}")"
runs="${RUNS:-3}"
if [[ ! -x "$bin" ]]; then
    cargo build --release --locked --bin benchlens
fi
if [[ -n "${SHAPES_DIR:-}" ]]; then
    dir="$SHAPES_DIR"
    mkdir -p "$dir"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
else
    dir="$(mktemp -d)"
    tmp="$dir"
    trap 'rm -rf "$dir"' EXIT
fi
shapes="${SHAPES:-tidy canonical ids convert-csv serving serving-itl5 serving-itl20 genai-csv jsonl json-list markdown}"

# The file for one shape, generated once.
file_of() { # shape -> path
    local s="$1" f
    case "$s" in
        convert-csv)
            f="$dir/convert-csv.csv"
            if [[ ! -s "$f" ]]; then
                python3 scripts/gen_shapes.py serving "$dir/convert-src.json" 1000000
                "$bin" convert --to csv "$dir/convert-src.json" -o "$f" 2>/dev/null
            fi
            ;;
        serving-itl5) f="$dir/serving-itl5.json"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py serving-itl "$f" 5000000 ;;
        serving-itl20) f="$dir/serving-itl20.json"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py serving-itl "$f" 20000000 ;;
        serving) f="$dir/serving.json"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py serving "$f" ;;
        jsonl) f="$dir/runs.jsonl"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py jsonl "$f" ;;
        json-list) f="$dir/runs-list.json"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py json-list "$f" ;;
        markdown) f="$dir/table.md"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py markdown "$f" ;;
        ids) f="$dir/ids.tsv"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py ids "$f" ;;
        *) f="$dir/$s.csv"; [[ -s "$f" ]] || python3 scripts/gen_shapes.py "$s" "$f" ;;
    esac
    echo "$f"
}

# One timed run on core 0: "wall cpu peak_kib status".
once() {
    local status=0 t0 t1
    t0="$(date +%s%N)"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" taskset -c 0 "$@" >/dev/null 2>"$tmp/err" || status=$?
    t1="$(date +%s%N)"
    tail -n 1 "$tmp/time" | awk -v s="$status" -v ns="$((t1 - t0))" '{ printf "%.4f %.2f %s %s\n", ns / 1e9, $2 + $3, $4, s }'
}

# median (min-max) of f(column $1) over file $2's successful runs; $3: rate, mib or ratio.
summary() {
    awk -v c="$1" '$4 == 0 { print $c }' "$2" | sort -g | awk -v f="$3" -v mb="$size_mb" '
        function g(x) { return f == "rate" ? (x > 0 ? mb / x : 0) : (f == "mib" ? x / 1024 : x * 1024 / 1e6 / mb) }
        { v[NR] = g($1) }
        END {
            if (NR == 0) { printf "-"; exit }
            lo = v[1]; hi = v[NR]; if (lo > hi) { t = lo; lo = hi; hi = t }
            fmt = f == "ratio" ? "%.2f (%.2f-%.2f)" : "%.0f (%.0f-%.0f)"
            printf fmt, v[int((NR + 1) / 2)], lo, hi
        }'
}

printf '%-14s %8s  %-18s %-18s %-18s %-18s %s\n' shape "MB" "MB/CPU-s" "MB/s (wall)" "peak MiB" "peak / file" "bound MiB"
for s in $shapes; do
    f="$(file_of "$s")"
    size_mb="$(awk -v b="$(stat -L -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')"
    if (($(stat -L -c %s "$f") < 1000000)); then
        printf '%-14s %8s  not measured: the generated file is %s bytes (%s)\n' "$s" "$size_mb" \
            "$(stat -L -c %s "$f")" "$(head -c 80 "$f" | head -n 1)"
        continue
    fi
    for which in new old; do
        [[ "$which" == new || -n "${OLD:-}" ]] || continue
        : >"$tmp/$which"
    done
    for ((i = 0; i < runs; i++)); do
        once "$bin" inspect "$f" >>"$tmp/new"
        [[ -z "${OLD:-}" ]] || once "$OLD" inspect "$f" >>"$tmp/old"
    done
    for which in new old; do
        [[ -s "$tmp/$which" ]] || continue
        label="$s"
        [[ "$which" == old ]] && label="$s (OLD)"
        if ! awk '$4 == 0 { ok = 1 } END { exit !ok }' "$tmp/$which"; then
            printf '%-14s %8s  failed: %s\n' "$label" "$size_mb" "$(head -c 200 "$tmp/err")"
            continue
        fi
        # CPU-s are column 2, wall column 1, peak column 3 (KiB).
        printf '%-14s %8s  %-18s %-18s %-18s %-18s %.0f\n' "$label" "$size_mb" \
            "$(summary 2 "$tmp/$which" rate)" "$(summary 1 "$tmp/$which" rate)" \
            "$(summary 3 "$tmp/$which" mib)" "$(summary 3 "$tmp/$which" ratio)" \
            "$(awk -v mb="$size_mb" 'BEGIN { print (2 * mb + 50) * 1e6 / 1048576 }')"
    done
done
