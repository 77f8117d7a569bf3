#!/usr/bin/env python3
"""What each crate adds to the explorer's wasm (the page and the parse worker), and the gzip
sizes of the files `make build` put in dist/. Run by `make bench` after `make build`; plain
Python 3, no packages.

How: the two binaries are built as Trunk builds them (cargo with the Makefile's WASM_ENV size
profile, which the caller exports; a no-op right after `make build`), copied aside, run
through the same wasm-bindgen (`--target web` for the page, `no-modules` for the worker) and
the same wasm-opt `-Oz` as Trunk, but with `-g` so the function names survive. The code
section's function bodies are then summed per crate: the crate is the first segment of the
function's (demangled) path; for a trait impl `<T as Trait>::f` the type's crate, or the
trait's when the type is the standard library's or a bare parameter (serde's `Serialize` for
`String` counts as serde; a primitive type's code, `<str>::to_lowercase`, counts as core); for
drop glue `drop_in_place<T>`, T's crate. wasm-bindgen's wrappers of exported functions are
counted apart (wasm-opt inlines the exported function into them). Generic standard
library code (`Vec<T>::push`) cannot be told apart by caller in the names and stays with
core/alloc/std. Each measured module's code section is checked against the dist/ file's
(same bytes but the names), and the check is printed.

  WASM_ENV... python3 scripts/wasm-sizes.py [--dist dist] [--top 25] [--no-build]
"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

BINS = [("page", "benchlens", "web"), ("worker", "benchlens-worker", "no-modules")]
STD = {"core", "alloc", "std", "compiler_builtins", "dlmalloc", "panic_abort", "hashbrown_std"}


def leb(buf, pos):
    """An unsigned LEB128 at pos: (value, next position)."""
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def parse(path):
    """Sections of a wasm file: {"sections": [(id, name, size incl. header)],
    "bodies": [(function index, bytes)], "names": {index: name}, "code": code section bytes}."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != b"\0asm":
        sys.exit(f"{path}: not a wasm module")
    pos = 8
    sections, bodies, names = [], [], {}
    imported_funcs = 0
    code_size = 0
    while pos < len(buf):
        start = pos
        sid = buf[pos]
        size, body = leb(buf, pos + 1)
        end = body + size
        name = ""
        if sid == 0:
            n, p = leb(buf, body)
            name = buf[p : p + n].decode("utf-8", "replace")
            if name == "name":
                q = p + n
                while q < end:
                    sub = buf[q]
                    sub_size, q = leb(buf, q + 1)
                    if sub == 1:
                        count, r = leb(buf, q)
                        for _ in range(count):
                            idx, r = leb(buf, r)
                            ln, r = leb(buf, r)
                            names[idx] = buf[r : r + ln].decode("utf-8", "replace")
                            r += ln
                    q += sub_size
        elif sid == 2:
            count, p = leb(buf, body)
            for _ in range(count):
                for _ in range(2):  # module and field names
                    ln, p = leb(buf, p)
                    p += ln
                kind = buf[p]
                p += 1
                if kind == 0:  # function: type index
                    _, p = leb(buf, p)
                    imported_funcs += 1
                elif kind == 1:  # table: reftype, limits
                    p += 1
                    flags, p = leb(buf, p + 0)
                    _, p = leb(buf, p)
                    if flags & 1:
                        _, p = leb(buf, p)
                elif kind == 2:  # memory: limits
                    flags, p = leb(buf, p)
                    _, p = leb(buf, p)
                    if flags & 1:
                        _, p = leb(buf, p)
                elif kind == 3:  # global: valtype, mutability
                    p += 2
                elif kind == 4:  # tag: attribute, type index
                    p += 1
                    _, p = leb(buf, p)
                else:
                    sys.exit(f"{path}: unknown import kind {kind}")
        elif sid == 10:
            code_size = end - start
            count, p = leb(buf, body)
            for i in range(count):
                fstart = p
                fsize, p = leb(buf, p)
                p += fsize
                bodies.append((imported_funcs + i, p - fstart))
        sections.append((sid, name, end - start))
        pos = end
    return {"sections": sections, "bodies": bodies, "names": names, "code": code_size,
            "size": len(buf)}


LEGACY_ESCAPES = {"$LT$": "<", "$GT$": ">", "$RF$": "&", "$BP$": "*", "$C$": ",",
                  "$SP$": "@", "$u20$": " ", "$u27$": "'", "$u5b$": "[", "$u5d$": "]",
                  "$u7b$": "{", "$u7d$": "}", "$u7e$": "~", "$u3b$": ";", "$u2b$": "+",
                  "$u22$": '"'}


def demangle(name):
    """Rust's legacy mangling (`_ZN...E`) to a path; other names as they are."""
    m = re.match(r"^_?_ZN(.*)E$", name)
    if not m:
        return name
    rest, parts = m.group(1), []
    while rest and rest[0].isdigit():
        n = re.match(r"\d+", rest).group(0)
        parts.append(rest[len(n) : len(n) + int(n)])
        rest = rest[len(n) + int(n) :]
    out = []
    for part in parts:
        if part.startswith("_$"):
            part = part[1:]
        part = re.sub(r"\$[A-Za-z0-9]+\$", lambda e: LEGACY_ESCAPES.get(e.group(0), e.group(0)), part)
        out.append(part.replace("..", "::"))
    return "::".join(out)


def strip_hash(name):
    return re.sub(r"::h[0-9a-f]{16}$", "", name)


def matching_close(s, i):
    """Index of the `>` closing the `<` at s[i] (a `->` does not close)."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c == "<":
            depth += 1
        elif c == ">" and not (j > 0 and s[j - 1] == "-"):
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(s)


def crate_of_path(s):
    """The crate a path starts with (None for a bare parameter or primitive type)."""
    s = s.strip()
    while True:
        for prefix in ("&", "*const ", "*mut ", "mut ", "dyn ", "impl ", "[", "(", " "):
            if s.startswith(prefix):
                s = s[len(prefix) :]
                break
        else:
            break
    if s.startswith("<"):
        return crate_of(s)
    # The standard library's own paths carry a disambiguator: core[c5930c85a12de822]::fmt.
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[0-9a-f]+\])?::", s)
    return m.group(1) if m else None


def crate_of(name):
    n = strip_hash(demangle(name))
    if n.startswith("<"):
        close = matching_close(n, 0)
        inner = n[1:close]
        depth, split = 0, -1
        for j, c in enumerate(inner):
            if c == "<":
                depth += 1
            elif c == ">" and not (j > 0 and inner[j - 1] == "-"):
                depth -= 1
            elif depth == 0 and inner.startswith(" as ", j):
                split = j
                break
        own = crate_of_path(inner if split < 0 else inner[:split])
        trait = crate_of_path(inner[split + 4 :]) if split >= 0 else None
        if own and (own not in STD or trait is None or trait in STD):
            return own
        # <str>::to_lowercase, <f64 as core::str::FromStr>::from_str: primitive types' code.
        return trait or own or "core"
    m = re.match(r"^core::ptr::drop_in_place<(.*)>$", n)
    if m:
        inner = crate_of_path(m.group(1))
        return inner or "core"
    c = crate_of_path(n)
    if c:
        return c
    if n.endswith(" externref shim"):
        # wasm-bindgen's wrapper of an exported function, which wasm-opt often inlines into.
        return "(wasm-bindgen export wrappers)"
    if n.startswith(("__wbindgen", "__wbg", "__externref")):
        return "wasm_bindgen"
    if n == "main":
        return "(the binary's main)"
    if n in ("memcpy", "memmove", "memset", "memcmp", "bcmp", "round", "fmin", "fmax") or re.match(
            r"^__[a-z0-9]+$", n):
        return "compiler_builtins"
    if n.startswith("intounderlying"):
        return "wasm_streams"
    if n.startswith("__rust"):
        return "std"
    return "(no crate in the name)"


def per_crate(module):
    sizes = {}
    for idx, size in module["bodies"]:
        name = module["names"].get(idx)
        crate = crate_of(name) if name is not None else "(unnamed)"
        sizes[crate] = sizes.get(crate, 0) + size
    other = sum(size for sid, _, size in module["sections"] if sid not in (0, 10, 11))
    sizes["(data: strings, tables)"] = sum(size for sid, _, size in module["sections"] if sid == 11)
    sizes["(other sections: types, imports, exports)"] = other + 8
    return sizes


def gz(path):
    with open(path, "rb") as f:
        return len(gzip.compress(f.read(), compresslevel=9, mtime=0))


def run(cmd, **kw):
    print("  $ " + " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dist", default="dist")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-build", action="store_true", help="measure the wasm cargo last built")
    ap.add_argument("--show", metavar="CRATE", help="also list the largest functions counted for CRATE")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    if not args.no_build:
        cmd = ["cargo", "build", "--release", "--locked", "--target", "wasm32-unknown-unknown"]
        for _, bin_name, _ in BINS:
            cmd += ["--bin", bin_name]
        run(cmd)
    wasm_opt = shutil.which("wasm-opt") or "node_modules/.bin/wasm-opt"
    modules, dist_files = {}, {}
    with tempfile.TemporaryDirectory(prefix="wasm-sizes-") as tmp:
        for face, bin_name, target_kind in BINS:
            raw = os.path.join(tmp, bin_name + ".wasm")
            # Copied at once: the target directory may be shared with other builds.
            shutil.copyfile(os.path.join(target, "wasm32-unknown-unknown", "release", bin_name + ".wasm"), raw)
            out = os.path.join(tmp, face)
            run(["wasm-bindgen", f"--target={target_kind}", f"--out-dir={out}", f"--out-name={bin_name}",
                 "--no-typescript", raw])
            named = os.path.join(tmp, face + "-named.wasm")
            run([wasm_opt, f"--output={named}", "-Oz", "-g", os.path.join(out, bin_name + "_bg.wasm")])
            modules[face] = parse(named)
            dist_wasm = [f for f in os.listdir(args.dist) if f.startswith(bin_name + "-") and f.endswith("_bg.wasm")
                         or f == bin_name + "_bg.wasm"]
            if face == "page":
                dist_wasm = [f for f in dist_wasm if not f.startswith("benchlens-worker")]
            dist_files[face] = sorted(dist_wasm)
    if args.show:
        for face in ("page", "worker"):
            m = modules[face]
            found = [(size, m["names"].get(idx, "?")) for idx, size in m["bodies"]
                     if (crate_of(m["names"][idx]) if idx in m["names"] else "(unnamed)") == args.show]
            print(f"largest functions counted for {args.show} in the {face}:")
            for size, name in sorted(found, reverse=True)[:30]:
                print(f"  {size:>8,}  {name[:160]}")
    page, worker = (per_crate(modules[f]) for f in ("page", "worker"))
    total_page = modules["page"]["size"] - sum(s for sid, _, s in modules["page"]["sections"] if sid == 0)
    total_worker = modules["worker"]["size"] - sum(s for sid, _, s in modules["worker"]["sections"] if sid == 0)
    crates = sorted(set(page) | set(worker), key=lambda c: -(page.get(c, 0) + worker.get(c, 0)))
    print("wasm bytes per crate (function bodies after wasm-opt -Oz; names kept in a measuring copy only)")
    print(f"{'crate':<44} {'page bytes':>11} {'worker bytes':>13} {'share':>7}")
    shown = crates[: args.top]
    for c in shown:
        p, w = page.get(c, 0), worker.get(c, 0)
        print(f"{c:<44} {p:>11,} {w:>13,} {100 * (p + w) / (total_page + total_worker):>6.1f}%")
    rest = crates[args.top :]
    if rest:
        p = sum(page.get(c, 0) for c in rest)
        w = sum(worker.get(c, 0) for c in rest)
        print(f"{f'{len(rest)} more crates':<44} {p:>11,} {w:>13,} {100 * (p + w) / (total_page + total_worker):>6.1f}%")
    print(f"{'total (without the name section)':<44} {total_page:>11,} {total_worker:>13,}")
    print()
    print(f"dist files ({args.dist}/, gzip -9):")
    wasm_gz = 0
    for face, bin_name, _ in BINS:
        for f in dist_files[face]:
            path = os.path.join(args.dist, f)
            d = parse(path)
            same = "same code section" if d["code"] == modules[face]["code"] else (
                f"code section differs: {d['code']:,} in dist, {modules[face]['code']:,} measured")
            g = gz(path)
            wasm_gz += g
            print(f"  {f}: {d['size']:,} bytes, {g:,} gzip ({same})")
        for f in sorted(os.listdir(args.dist)):
            if f.endswith(".js") and f.startswith(bin_name + ("-" if face == "page" else "")) and (
                    face == "worker" or not f.startswith("benchlens-worker")):
                path = os.path.join(args.dist, f)
                print(f"  {f}: {os.path.getsize(path):,} bytes, {gz(path):,} gzip")
    print(f"  page + worker wasm: {wasm_gz:,} bytes gzip ({wasm_gz / 1e6:.3f} MB; issue 31 asks at most 0.85 MB)")


if __name__ == "__main__":
    main()
