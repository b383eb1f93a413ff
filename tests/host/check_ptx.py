#!/usr/bin/env python3
"""The PTX shows what each kernel claims, and `volatile` stays inside marked race exhibits.

Usage: check_ptx.py [--nvcc NVCC] [--arch sm_90] ROOT|DAY_DIR|FILE.cu ...

Claims. A kernel declares what its machine code must contain with one comment line in the comment
block directly above it (above its `template <...>` line, if any):

    // ptx: v4-loads shfl

  v4-loads  a 128-bit vector load from global memory: ld.global[.nc...].v4.{f32,b32,u32,s32}
  shfl      a warp shuffle: shfl.sync
  atom      an atomic: atom.* or red.* (an atomicAdd whose result is unused compiles to red)

Each file is compiled once with `nvcc -std=c++17 -O3 -arch=sm_90 -ptx`; each claim must hold in
the body of every `.entry` whose mangled name is that kernel (every instantiation of a template),
including the `.func` bodies it calls. A claim on no kernel, an unknown token or a kernel with no
`.entry` in the PTX is a fault.

Race exhibits (source rule). The keyword `volatile` appears only between a line
`// race exhibit: WHY` and a line `// end race exhibit`; the markers pair up (no nesting, none left
open), and a file with an exhibit mentions `--race-demo` (the only way to reach it). PTX rule: a
kernel whose PTX reads or writes shared memory as volatile (ld/st.volatile.shared) must itself be
declared inside an exhibit region.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import hostcheck

TOKENS = {
    "v4-loads": re.compile(r"\bld\.global(?:\.[\w:]+)*\.v4\.(?:f32|b32|u32|s32)\b"),
    "shfl": re.compile(r"\bshfl\.sync\b"),
    "atom": re.compile(r"\b(?:atom|red)\.[\w.]+"),
}
VOLATILE_SHARED = re.compile(r"\b(?:ld|st)\.volatile\.shared\b")
CLAIM = re.compile(r"^\s*//\s*ptx:(.*)$")
EXHIBIT_OPEN = re.compile(r"^\s*//\s*race exhibit:")
EXHIBIT_CLOSE = re.compile(r"^\s*//\s*end race exhibit\b")
KERNEL = re.compile(
    r"\b__global__\s+(?:(?:static|inline|__launch_bounds__\s*\([^)]*\)|__noinline__)\s+)*"
    r"void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")


def kernels_in(text, code):
    """[(name, line, start_line_of_declaration)] for each __global__ kernel in the source."""
    lines = text.splitlines()
    out = []
    for m in KERNEL.finditer(code):
        line = hostcheck.line_of(code, m.start())
        first = line
        k = line - 2  # a template<...> header on the lines just above belongs to the kernel
        while k >= 0 and lines[k].strip().startswith("template"):
            first = k + 1
            k -= 1
        out.append((m.group(1), line, first))
    return out


def comment_block_above(lines, first_line):
    """1-based line numbers of the // comment lines directly above line FIRST_LINE."""
    nums = []
    k = first_line - 2
    while k >= 0 and lines[k].lstrip().startswith("//"):
        nums.append(k + 1)
        k -= 1
    return nums


def exhibit_regions(path, lines, report):
    """[(open_line, close_line)] of the race-exhibit regions; faults for unbalanced markers."""
    regions, open_at = [], None
    for i, line in enumerate(lines, 1):
        if EXHIBIT_OPEN.match(line):
            if open_at is not None:
                report.error(path, i, f"`// race exhibit:` while the exhibit opened at line "
                             f"{open_at} is still open (close it with `// end race exhibit`)")
            else:
                open_at = i
        elif EXHIBIT_CLOSE.match(line):
            if open_at is None:
                report.error(path, i, "`// end race exhibit` with no open `// race exhibit:`")
            else:
                regions.append((open_at, i))
                open_at = None
    if open_at is not None:
        report.error(path, open_at, "`// race exhibit:` is never closed by `// end race exhibit`")
        regions.append((open_at, len(lines)))
    return regions


def inside(regions, line):
    return any(a < line < b for a, b in regions)


def unqualified_names(entries):
    """{entry: the unqualified function name}: binutils' c++filt demangles (names not mangled stay)."""
    shown = subprocess.run(["c++filt"], input="\n".join(entries), capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return {e: re.search(r"(\w+)\s*(?:<.*>)?\s*\(", d).group(1) if e.startswith("_Z") else e
            for e, d in zip(entries, shown)}


def ptx_functions(ptx):
    """{name: (kind, body)} for every .entry and .func in the PTX text."""
    funcs = {}
    for m in re.finditer(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.(entry|func)\s+"
                         r"(?:\([^)]*\)\s*)?([\w$]+)", ptx, re.M):
        brace = ptx.find("{", m.end())
        semi = ptx.find(";", m.end())
        if brace < 0 or 0 <= semi < brace:
            continue  # a declaration only (an .extern .func ...;)
        depth, j = 0, brace
        while j < len(ptx):
            if ptx[j] == "{":
                depth += 1
            elif ptx[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        funcs[m.group(2)] = (m.group(1), ptx[brace:j + 1])
    return funcs


def body_with_callees(funcs, name):
    seen, todo, parts = set(), [name], []
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.add(f)
        body = funcs[f][1]
        parts.append(body)
        todo.extend(re.findall(r"\bcall(?:\.uni)?\s*(?:\([^)]*\)\s*,\s*)?([\w$]+)", body))
    return "\n".join(parts)


def compile_ptx(nvcc, arch, path, report):
    with tempfile.TemporaryDirectory(prefix="check-ptx-") as tmp:
        out = os.path.join(tmp, "out.ptx")
        cmd = [nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-ptx", "-o", out, path]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            report.error(path, 1, f"cannot run {nvcc}: {e}")
            return None
        if p.returncode != 0:
            report.error(path, 1, f"`{' '.join(cmd)}` failed (exit {p.returncode}):\n"
                         + (p.stdout + p.stderr).strip())
            return None
        with open(out, encoding="utf-8") as f:
            return f.read()


def check_file(path, nvcc, arch, report):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.splitlines()
    code = hostcheck.strip_comments(text)
    regions = exhibit_regions(path, lines, report)

    for m in re.finditer(r"\bvolatile\b", code):
        line = hostcheck.line_of(code, m.start())
        if not inside(regions, line):
            report.error(path, line, "`volatile` outside a race exhibit: no volatile "
                         "warp-synchronous code (use __shfl_down_sync or __syncwarp); the only "
                         "volatile tails sit between `// race exhibit:` and `// end race exhibit` "
                         "(CUDA-CODE-STYLE.md section 8)")
    if regions and "--race-demo" not in text:
        report.error(path, regions[0][0], "a race exhibit, but the file never mentions "
                     "--race-demo (the flag that alone may reach it)")

    kernels = kernels_in(text, code)
    claims = {}  # kernel name -> (line, [tokens])
    used_claim_lines = set()
    for name, line, first in kernels:
        for c in comment_block_above(lines, first):
            m = CLAIM.match(lines[c - 1])
            if m:
                used_claim_lines.add(c)
                tokens = m.group(1).split()
                if not tokens:
                    report.error(path, c, "`// ptx:` with no token (known: "
                                 + ", ".join(TOKENS) + ")")
                for t in tokens:
                    if t not in TOKENS:
                        report.error(path, c, f"unknown ptx claim `{t}` (known: "
                                     + ", ".join(TOKENS) + ")")
                prev = claims.get(name, (c, []))
                claims[name] = (prev[0], prev[1] + [t for t in tokens if t in TOKENS])
    for i, line in enumerate(lines, 1):
        if CLAIM.match(line) and i not in used_claim_lines:
            k = i
            while k < len(lines) and lines[k].lstrip().startswith("//"):
                k += 1
            below = lines[k].strip() if k < len(lines) else ""
            hint = (": it sits above a __device__ function, which has no .entry of its own; put "
                    "the claim on each __global__ kernel that calls it (inlined code shows in "
                    "the caller's PTX)") if "__device__" in below else ""
            report.error(path, i, "`// ptx:` claim not in the comment block directly above a "
                         "__global__ kernel" + hint)

    needs_ptx = claims or regions or "volatile" in text or kernels
    if not needs_ptx:
        return 0
    ptx = compile_ptx(nvcc, arch, path, report)
    if ptx is None:
        return 0
    funcs = ptx_functions(ptx)
    entries = {}
    names = unqualified_names([f for f, (kind, _) in funcs.items() if kind == "entry"])
    for fname, name in names.items():
        entries.setdefault(name, []).append(fname)
    checked = 0
    for name, line, first in kernels:
        mangled = entries.get(name, [])
        if name in claims:
            cline, tokens = claims[name]
            if not mangled:
                report.error(path, line, f"kernel {name} claims `ptx: {' '.join(tokens)}` but "
                             f"the PTX ({arch}) has no .entry for it (never instantiated?)")
            for entry in mangled:
                body = body_with_callees(funcs, entry)
                for t in tokens:
                    checked += 1
                    if not TOKENS[t].search(body):
                        report.error(path, cline, f"kernel {name} claims `{t}` but its PTX "
                                     f"({arch}, .entry {entry}) has no match for "
                                     f"/{TOKENS[t].pattern}/")
        if not inside(regions, line):
            for entry in mangled:
                hit = VOLATILE_SHARED.search(body_with_callees(funcs, entry))
                if hit:
                    report.error(path, line, f"kernel {name} is outside a race exhibit but its "
                                 f"PTX ({arch}, .entry {entry}) has `{hit.group(0)}`: a volatile "
                                 "shared-memory tail; move the kernel inside the exhibit markers "
                                 "or use __shfl_down_sync/__syncwarp")
    return checked


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    report = hostcheck.Report("ptx")
    files = hostcheck.cu_files_of(a.paths)
    for p in a.paths:
        if not os.path.exists(p):
            report.error(p, 1, "no such file or directory")
        elif os.path.isdir(p) and not hostcheck.cu_files_of([p]):
            report.error(p, 1, "no .cu file here")
    claims = 0
    for path in files:
        claims += check_file(path, a.nvcc, a.arch, report)
    return report.finish(f"{len(files)} file(s): {claims} PTX claim(s) hold ({a.arch}); "
                         "volatile only inside race exhibits")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
