# benchlens: `make serve` to look at the explorer, `make test` for everything CI checks.
# Both install what is missing first (scripts/setup.sh) and skip what is already there.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

# The browser build optimises for size; the native release build (the load generator) stays
# optimised for speed, so the profile is overridden only for Trunk's cargo runs.
WASM_ENV := CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true \
	CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_PANIC=abort
# The sub-path the GitHub Pages build is served under (see .github/workflows/pages.yml).
PAGES_PATH ?= /benchlens/

.PHONY: serve build build-subpath test lint unit browser-test package-test bench setup setup-test clean

setup:
	bash scripts/setup.sh build

setup-test:
	bash scripts/setup.sh test

## Build the explorer and serve it with the bundled samples on http://127.0.0.1:8080
serve: setup
	$(WASM_ENV) trunk serve --release

build: setup
	$(WASM_ENV) trunk build --release

build-subpath: setup
	$(WASM_ENV) trunk build --release --public-url $(PAGES_PATH) --dist dist-subpath

lint: setup
	cargo fmt --check
	cargo clippy --all-targets --locked -- -D warnings
	CLIPPY_CONF_DIR=.cargo/clippy-wasm32 cargo clippy --lib --bin benchlens --bin benchlens-worker --locked --target wasm32-unknown-unknown -- -D warnings

# The real-server tests (tests/loadgen_llamacpp.rs) and the vLLM-scripts test
# (tests/loadgen_vllm_scripts.rs) must run here: they fail, rather than skip, when the llama.cpp
# venv, the native llama-server or vLLM's scripts that `scripts/setup.sh test` puts in place are
# missing.
unit:
	BENCHLENS_LLAMA_PYTHON="$$(bash scripts/setup.sh llama-python)" \
		BENCHLENS_LLAMA_SERVER="$$(bash scripts/setup.sh llama-server-bin)" \
		BENCHLENS_VLLM_SCRIPTS="$$(bash scripts/setup.sh vllm-scripts-dir)" BENCHLENS_REQUIRE_REAL_SERVER=1 \
		cargo test --locked

browser-test: setup-test build build-subpath
	PAGES_PATH=$(PAGES_PATH) node --test --test-concurrency=1 tests/browser/

## What a release ships (scripts/package-test.sh): the static musl binary, the wheel installed
## into a fresh venv, the container image (built and inspected, not run), and the offline
## checks of the workflows (actionlint) and the Kubernetes manifests (kubernetes-validate)
package-test:
	bash scripts/setup.sh package
	bash scripts/package-test.sh

## Everything CI checks
test: setup-test lint unit browser-test package-test

## Speed, printed as rates (no verdicts): store, ingest, browser, wasm size per crate, load generator
bench: setup-test build
	cargo bench --locked --bench store
	cargo bench --locked --bench ingest
	cargo bench --locked --bench wire
	cargo bench --locked --bench timeline
	bash scripts/bench-ingest-cli.sh
	bash scripts/bench-shapes.sh
	bash scripts/bench-ingest-json.sh
	node tests/browser/bench.mjs
	$(WASM_ENV) python3 scripts/wasm-sizes.py
	bash scripts/bench-loadgen.sh

clean:
	cargo clean
	rm -rf dist dist-subpath test-artifacts
