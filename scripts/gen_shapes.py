#!/usr/bin/env python3
"""Writes large result files of the shapes benchlens must read on its fast path.

    scripts/gen_shapes.py SHAPE PATH [N]

SHAPE (N: rows, records or per-request values; defaults in brackets):
  tidy        a tidy CSV under generic headers (`TTFT (ms)`, ...)             [1,000,000 rows]
  canonical   the same rows under benchlens's canonical header
              (model,engine,gpu,batch_size,request_rate,mean_ttft_ms,...)       [1,000,000 rows]
  serving     vLLM serving JSON, one document: N requests' input_lens,
              output_lens and ttfts, and no itls                                [5,000,000 requests]
  serving-itl vLLM serving JSON with `itls`: N values of gaps in all,
              100 a request                                                   [20,000,000 values]
  genai-csv   a genai-perf/AIPerf profile_export CSV: blocks of
              `Metric,avg,...` statistics, N rows in all                        [1,000,000 rows]
  ids         the tidy rows with a run id and a timestamp of their own each
              (tab-separated, CRLF), as exports of many runs carry              [1,000,000 rows]
  jsonl       SGLang bench_serving JSON Lines, one run summary a line          [1,000,000 lines]
  json-list   the same run summaries as one JSON list (`[{...}, ...]`)          [1,000,000 items]
  markdown    a markdown table                                                  [200,000 rows]

The values follow a fixed pattern (row i), so every run writes the same bytes.
"""

import json
import sys

MODELS = [f"llama-{i}" for i in range(7)]
ENGINES = ["vllm", "sglang", "trt-llm"]


def ttft(i):
    return 40.0 + (i % 100) * 0.37


def tidy(out, n):
    out.write("model,gpu,batch_size,concurrency,input_len,output_len,"
              "TTFT (ms),TPOT (ms),p99 ITL (ms),Throughput (tok/s)\n")
    for i in range(n):
        out.write(f"{MODELS[i % 7]},H100,{2 ** (i % 8)},{2 ** (i % 6)},1024,128,"
                  f"{ttft(i):.3f},{8.0 + (i % 50) * 0.11:.3f},{20.0 + (i % 40) * 0.5:.3f},"
                  f"{1500.0 + (i % 1000):.2f}\n")


def ids(out, n):
    out.write("run_id\ttimestamp\tmodel\tgpu\tbatch_size\tconcurrency\t"
              "TTFT (ms)\tTPOT (ms)\tThroughput (tok/s)\r\n")
    for i in range(n):
        out.write(f"r{i:07d}\t2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i // 60 % 60:02d}Z\t"
                  f"{MODELS[i % 7]}\tH100\t{2 ** (i % 8)}\t{2 ** (i % 6)}\t"
                  f"{ttft(i):.3f}\t{8.0 + (i % 50) * 0.11:.3f}\t{1500.0 + (i % 1000):.2f}\r\n")


def canonical(out, n):
    out.write("model,engine,gpu,batch_size,request_rate,mean_ttft_ms,p99_ttft_ms,"
              "mean_itl_ms,output_throughput\n")
    for i in range(n):
        rate = "inf" if i % 9 == 8 else str(i % 9 + 1)
        out.write(f"{MODELS[i % 7]},{ENGINES[i % 3]},H100,{2 ** (i % 8)},{rate},"
                  f"{ttft(i):.3f},{ttft(i) * 2.5:.3f},{8.0 + (i % 50) * 0.11:.3f},"
                  f"{1500.0 + (i % 1000):.2f}\n")


def numbers(out, key, values):
    out.write(f'"{key}": [')
    out.write(", ".join(values))
    out.write("]")


def serving_head(out, n):
    out.write('{"date": "20250301-101500", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B", '
              '"tokenizer_id": "meta-llama/Llama-3.1-8B", "num_prompts": %d, "request_rate": 16.0, '
              '"max_concurrency": 64, "duration": 600.5, "completed": %d, "total_input_tokens": %d, '
              '"total_output_tokens": %d, "request_throughput": 16.65, "output_throughput": 2131.2, '
              '"mean_ttft_ms": 58.1, "median_ttft_ms": 55.0, "p99_ttft_ms": 120.4, '
              '"mean_tpot_ms": 9.1, "median_tpot_ms": 9.0, "p99_tpot_ms": 12.3, '
              '"mean_itl_ms": 9.1, "median_itl_ms": 8.9, "p99_itl_ms": 20.5, ' % (n, n, n * 1024, n * 128))


def serving(out, n):
    serving_head(out, n)
    numbers(out, "input_lens", ("1024" for _ in range(n)))
    out.write(", ")
    numbers(out, "output_lens", (str(100 + i % 29) for i in range(n)))
    out.write(", ")
    numbers(out, "ttfts", (f"{0.04 + (i % 997) * 1e-5:.6f}" for i in range(n)))
    out.write("}\n")


def serving_itl(out, values):
    per = 100
    n = max(1, values // per)
    serving_head(out, n)
    numbers(out, "input_lens", ("1024" for _ in range(n)))
    out.write(", ")
    numbers(out, "output_lens", (str(per + 1) for _ in range(n)))
    out.write(", ")
    numbers(out, "ttfts", (f"{0.04 + (i % 997) * 1e-5:.6f}" for i in range(n)))
    out.write(', "itls": [')
    gaps = [f"{0.008 + (j % 13) * 1e-4:.5f}" for j in range(per)]
    row = "[" + ", ".join(gaps) + "]"
    out.write(", ".join(row for _ in range(n)))
    out.write("]")
    out.write(', "errors": [')
    out.write(", ".join('""' for _ in range(n)))
    out.write("]}\n")


GENAI_ROWS = [
    "Time To First Token (ms)", "Inter Token Latency (ms)", "Request Latency (ms)",
    "Output Sequence Length (tokens)", "Input Sequence Length (tokens)",
]


def genai_csv(out, n):
    rows = 0
    block = 0
    while rows < n:
        out.write("Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n")
        for name in GENAI_ROWS:
            b = block % 1000
            out.write(f"{name},{45.6 + b:.2f},{30.0 + b:.2f},{90.0 + b:.2f},{80.3 + b:.2f},"
                      f"{70.1 + b:.2f},{60.1 + b:.2f},{50.2 + b:.2f},{44.0 + b:.2f},{40.0 + b:.2f}\n")
        out.write("\nMetric,Value\n")
        out.write(f"Output Token Throughput (tokens/sec),{1580.3 + block % 1000:.2f}\n")
        out.write(f"Request Throughput (per sec),{12.5 + block % 100:.2f}\n\n")
        rows += 10
        block += 1


def run(i):
    return {
        "backend": ENGINES[i % 2], "dataset_name": "random",
        "request_rate": i % 9 + 1, "max_concurrency": 2 ** (i % 7),
        "random_input_len": 1024, "random_output_len": 128, "duration": 60.0 + i % 11,
        "completed": 500, "request_throughput": round(7.5 + (i % 13) * 0.25, 2),
        "output_throughput": 4258.1 + i % 1000, "mean_ttft_ms": round(ttft(i), 3),
        "p99_ttft_ms": round(ttft(i) * 2.5, 3), "mean_itl_ms": 14.28,
    }


def jsonl(out, n):
    for i in range(n):
        out.write(json.dumps(run(i), separators=(", ", ": ")))
        out.write("\n")


def json_list(out, n):
    out.write("[\n")
    for i in range(n):
        out.write("  " + json.dumps(run(i), separators=(", ", ": ")))
        out.write(",\n" if i + 1 < n else "\n")
    out.write("]\n")


def markdown(out, n):
    out.write("| Model | GPU | Concurrency | TTFT (ms) | TPOT (ms) | Throughput (tok/s) |\n")
    out.write("|---|---|---:|---:|---:|---:|\n")
    for i in range(n):
        out.write(f"| {MODELS[i % 7]} | H100 | {2 ** (i % 8)} | {ttft(i):.3f} | "
                  f"{8.0 + (i % 50) * 0.11:.3f} | {1500.0 + (i % 1000):.2f} |\n")


SHAPES = {
    "tidy": (tidy, 1_000_000),
    "canonical": (canonical, 1_000_000),
    "ids": (ids, 1_000_000),
    "serving": (serving, 5_000_000),
    "serving-itl": (serving_itl, 20_000_000),
    "genai-csv": (genai_csv, 1_000_000),
    "jsonl": (jsonl, 1_000_000),
    "json-list": (json_list, 1_000_000),
    "markdown": (markdown, 200_000),
}


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in SHAPES:
        sys.exit(__doc__)
    write, default = SHAPES[sys.argv[1]]
    n = int(sys.argv[3]) if len(sys.argv) == 4 else default
    with open(sys.argv[2], "w", buffering=1 << 20) as out:
        write(out, n)


if __name__ == "__main__":
    main()
