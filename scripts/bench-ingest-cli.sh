#!/usr/bin/env bash
# Whole-process figures for reading large tables with the release binary:
# - rows: `benchlens inspect` and `benchlens convert` of a generated 1,000,000-row file (the rows
#   of benches/ingest.rs's tidy CSV), on both cores and on one (`taskset -c 0`), five runs each,
#   with /usr/bin/time's wall time, CPU time (user + system), peak memory and the file's MB
#   read per second of wall time at the median;
# - wide: `benchlens inspect` of two-row tables 25,000, 50,000 and 100,000 columns wide (a CSV of
#   `c0,c1,...`, a tidy CSV of three dimensions and metric columns, a markdown table), with the
#   columns read per second and each time as a multiple of the 25,000-column one (2 and 4 when
#   the time grows in proportion to the width).
#
#   scripts/bench-ingest-cli.sh [BINARY] [ROWS]
#
# BINARY defaults to target/release/benchlens (built first when missing); ROWS to 1000000.
# OLD=path/to/an/older/benchlens runs that binary too, alternating run by run with BINARY, so
# the two are compared on the same machine state. PARTS="rows wide" (the default) picks parts.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/benchlens}"
rows="${2:-1000000}"
runs="${RUNS:-5}"
if [[ ! -x "$bin" ]]; then
    cargo build --release --locked --bin benchlens
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
parts="${PARTS:-rows wide}"

# One timed run: "wall cpu peak_kib". The wall time is read from the clock in nanoseconds
# around the whole process (/usr/bin/time's own is in hundredths: 0.13 against 0.14 s is 8 %
# of a 55 MB read); CPU time and peak memory are /usr/bin/time's.
once() {
    local t0 t1
    t0="$(date +%s%N)"
    /usr/bin/time -f '%e %U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || {
        cat "$dir/err" >&2
        exit 1
    }
    t1="$(date +%s%N)"
    awk -v ns="$((t1 - t0))" '{ printf "%.4f %.2f %s\n", ns / 1e9, $2 + $3, $4 }' "$dir/time"
}

# median (min-max) of column $1 of the lines in file $2, scaled by $3.
summary() {
    sort -g -k"$1","$1" "$2" | awk -v c="$1" -v s="$3" '{ v[NR] = $c * s }
        END { printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

if [[ " $parts " == *" rows "* ]]; then
    csv="$dir/tidy-$rows.csv"
    awk -v rows="$rows" 'BEGIN {
        print "model,gpu,batch_size,concurrency,input_len,output_len,TTFT (ms),TPOT (ms),p99 ITL (ms),Throughput (tok/s)"
        for (i = 0; i < rows; i++)
            printf "llama-%d,H100,%d,%d,1024,128,%.3f,%.3f,%.3f,%.2f\n", i % 7, 2 ^ (i % 8), 2 ^ (i % 6),
                40.0 + (i % 100) * 0.37, 8.0 + (i % 50) * 0.11, 20.0 + (i % 40) * 0.5, 1500.0 + (i % 1000)
    }' >"$csv"
    size_mb="$(awk -v b="$(stat -c %s "$csv")" 'BEGIN { printf "%.1f", b / 1e6 }')"
    echo "tidy CSV, $rows rows, $size_mb MB; $runs runs per line; wall s / CPU s / peak MiB: median (min-max)"

    # Every core the process may use, then one (the rows are then mapped on one thread).
    for cores in all 0; do
        pin=()
        [[ "$cores" == all ]] || pin=(taskset -c "$cores")
        for cmd in inspect "convert --to csv"; do
            : >"$dir/new"
            : >"$dir/old"
            for ((i = 0; i < runs; i++)); do
                # shellcheck disable=SC2086 # $cmd is two words on purpose
                once "${pin[@]}" "$bin" $cmd "$csv" >>"$dir/new"
                if [[ -n "${OLD:-}" ]]; then
                    # shellcheck disable=SC2086
                    once "${pin[@]}" "$OLD" $cmd "$csv" >>"$dir/old"
                fi
            done
            for which in new old; do
                [[ -s "$dir/$which" ]] || continue
                label="$bin"
                [[ "$which" == old ]] && label="$OLD"
                printf '%-16s cores %-3s %-30s wall %s  cpu %s  peak %s MiB  %s MB/s (wall, median)\n' "$cmd" "$cores" "$label" \
                    "$(summary 1 "$dir/$which" 1)" "$(summary 2 "$dir/$which" 1)" \
                    "$(summary 3 "$dir/$which" 0.0009765625)" \
                    "$(sort -g "$dir/$which" | awk -v mb="$size_mb" '{ v[NR] = $1 } END { t = v[int((NR + 1) / 2)]; if (t > 0) printf "%.0f", mb / t; else print "inf" }')"
            done
        done
    done
fi

[[ " $parts " == *" wide "* ]] || exit 0
# Two-row tables of N columns: plain CSV, tidy CSV (model, gpu, concurrency, then metrics) and
# a markdown table. Values are i.r (column i, row r).
wide_file() { # kind columns path
    awk -v kind="$1" -v n="$2" 'BEGIN {
        if (kind == "md") {
            printf "|"; for (i = 0; i < n; i++) printf " c%d |", i; print ""
            printf "|"; for (i = 0; i < n; i++) printf "---|"; print ""
            for (r = 0; r < 2; r++) { printf "|"; for (i = 0; i < n; i++) printf " %d.%d |", i, r; print "" }
        } else if (kind == "tidy") {
            printf "model,gpu,concurrency"; for (i = 3; i < n; i++) printf ",m%d_ms", i; print ""
            for (r = 0; r < 2; r++) {
                printf "llama-%d,H100,%d", r, 2 ^ r; for (i = 3; i < n; i++) printf ",%d.%d", i, r; print ""
            }
        } else {
            for (i = 0; i < n; i++) printf "%sc%d", (i ? "," : ""), i; print ""
            for (r = 0; r < 2; r++) { for (i = 0; i < n; i++) printf "%s%d.%d", (i ? "," : ""), i, r; print "" }
        }
    }' >"$3"
}
echo "wide tables, two rows, \`inspect\` on all cores; $runs runs per line; wall s: median (min-max), columns/s at the median, median / median at 25,000 columns"
for kind in csv tidy md; do
    base_new=""
    base_old=""
    for cols in 25000 50000 100000; do
        ext=csv
        [[ "$kind" == md ]] && ext=md
        f="$dir/wide-$kind-$cols.$ext"
        wide_file "$kind" "$cols" "$f"
        size_mb="$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1e6 }')"
        : >"$dir/new"
        : >"$dir/old"
        for ((i = 0; i < runs; i++)); do
            once "$bin" inspect "$f" >>"$dir/new"
            [[ -z "${OLD:-}" ]] || once "$OLD" inspect "$f" >>"$dir/old"
        done
        for which in new old; do
            [[ -s "$dir/$which" ]] || continue
            label="$bin"
            [[ "$which" == old ]] && label="$OLD"
            med="$(sort -g "$dir/$which" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
            if [[ "$which" == new ]]; then
                [[ -n "$base_new" ]] || base_new="$med"
                base="$base_new"
            else
                [[ -n "$base_old" ]] || base_old="$med"
                base="$base_old"
            fi
            printf '%-5s %6d columns (%4s MB) %-30s wall %s  %s columns/s  x%s of 25,000\n' "$kind" "$cols" \
                "$size_mb" "$label" "$(summary 1 "$dir/$which" 1)" \
                "$(awk -v c="$cols" -v t="$med" 'BEGIN { if (t > 0) printf "%.0f", c / t; else print "inf" }')" \
                "$(awk -v t="$med" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", t / b; else print "-" }')"
        done
    done
done
