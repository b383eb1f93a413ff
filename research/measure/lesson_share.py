#!/usr/bin/env python3
"""Issue 28's share: lines of a day file that are kernels, launchers, the check and timing.

Usage: python3 research/measure/lesson_share.py code/day*/*.cu

A day file in DESIGN.md section 2's order is: header, includes and CUDA_CHECK, constants (with
any compile-time model), then the kernels, their launchers, the exact check and timeKernel, then
`#ifndef REDUCTION_HARNESS` and the runs, tables, options and main. Counted as core: from the
section divider that names the kernels (a `// ----`/`// ====` line, or else the comment
block) after the last constant and above the first `__global__`/`__device__`/`__host__` definition to the `#ifndef REDUCTION_HARNESS` line, plus timeKernel
(from its `constexpr int kTimingBatches` comment to its closing brace) where it still sits above
the kernels. Every other line (header, includes, constants, model, tables, options, main) is not.
"""
import re
import sys

for path in sys.argv[1:]:
    lines = open(path, encoding="utf-8").read().splitlines()
    guard = next(i for i, l in enumerate(lines) if l.startswith("#ifndef REDUCTION_HARNESS"))
    first = next(i for i, l in enumerate(lines)
                 if re.match(r"(template\s*<.*>\s*)?(static\s+)?__(global|device|host)__", l)
                 and "constexpr" not in l)
    start = first
    while start > 0 and lines[start - 1].startswith("//"):
        start -= 1
    divider = next((i for i in range(first, 0, -1) if re.match(r"^// (----|====)", lines[i])),
                   None)
    consts = [i for i in range(first) if re.match(r"(constexpr|static_assert)\b", lines[i])]
    if divider is not None and "ernel" in lines[divider] and divider > max(consts, default=-1):
        start = divider
    tk_top = tk_end = 0
    tb = next((i for i, l in enumerate(lines) if l.startswith("constexpr int kTimingBatches")), None)
    body = next(i for i, l in enumerate(lines) if re.match(r"^\w.*\btimeKernel\(", l))
    if tb is not None and body < start:
        tk_top = tb
        while tk_top > 0 and lines[tk_top - 1].startswith("//"):
            tk_top -= 1
        tk_end = next(i for i in range(body, len(lines)) if lines[i] == "}") + 1
    core = (guard - start) + (tk_end - tk_top)
    print(f"{path}: {core} of {len(lines)} lines core = {100 * core / len(lines):.0f} % "
          f"(kernels from line {start + 1}, harness guard at {guard + 1}"
          f"{f', timeKernel {tk_top + 1}-{tk_end}' if tk_end else ''})")
