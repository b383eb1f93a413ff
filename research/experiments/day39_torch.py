#!/usr/bin/env python3
"""What a user calls instead of day 39's scan and sort: torch.cumsum and torch.sort, timed the
way the lessons time their rows (CUDA graph of back-to-back calls, one replay a batch, median of
7 batches, the spread), on the same inputs (+1/-1 floats for the scan, uniform random uint32 keys
as int64 for the sort: torch has no uint32 sort on every version, and int64 is what a user would
pass). Every cumsum output is compared with an exact int64 prefix; every sort output with
torch's own ordering of the same keys on the CPU for the smaller sizes. Not a lesson; a record.

Usage: python3 research/experiments/day39_torch.py [--max-log2 30]
"""
import argparse
import statistics
import sys

import torch


def time_graph(fn, calls, batches=7):
    fn()  # warm-up (and lazy init)
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        fn()  # warm-up on the capture stream
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=stream):
            for _ in range(calls):
                fn()
    g.replay()
    torch.cuda.synchronize()
    per = []
    for _ in range(batches):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        per.append(1000.0 * a.elapsed_time(b) / calls)
    per.sort()
    med = per[len(per) // 2]
    return med, 100.0 * (per[-1] - per[0]) / med


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-log2", type=int, default=30)
    a = ap.parse_args()
    dev = torch.device("cuda")
    print(f"GPU: {torch.cuda.get_device_name()} | torch {torch.__version__} | CUDA {torch.version.cuda}")
    print("\n| op | n | us | spread % | check |\n|---|---|---|---|---|")
    bad = 0
    gen = torch.Generator(device=dev).manual_seed(39)
    for lg in range(10, a.max_log2 + 1, 2):
        n = 1 << lg
        x = (torch.randint(0, 2, (n,), device=dev, generator=gen, dtype=torch.int32) * 2 - 1)
        exact = torch.cumsum(x.to(torch.int64), 0)
        xf = x.to(torch.float32)
        out = torch.empty_like(xf)
        calls = max(4, min(4096, (8 << 30) // (4 * n)))
        us, spread = time_graph(lambda: torch.cumsum(xf, 0, out=out), calls)
        ok = bool(torch.equal(out.to(torch.int64), exact)) and bool(torch.isfinite(out).all())
        bad += not ok
        print(f"| torch.cumsum float32 | {n} | {us:.2f} | {spread:.1f} | {'exact' if ok else 'FAIL'} |")
        del x, exact, xf, out
    for lg in range(10, min(a.max_log2, 28) + 1, 2):
        n = 1 << lg
        keys = torch.randint(0, 1 << 32, (n,), device=dev, generator=gen, dtype=torch.int64)
        vals = torch.empty_like(keys)
        idx = torch.empty_like(keys)
        calls = max(2, min(1024, (1 << 28) // n))
        try:
            us, spread = time_graph(lambda: torch.sort(keys, out=(vals, idx)), calls)
        except RuntimeError as e:  # a torch that cannot capture its sort: say so, time nothing
            print(f"| torch.sort int64 | {n} | - | - | not captured: {str(e).splitlines()[0][:80]} |")
            continue
        ok = bool((vals[1:] >= vals[:-1]).all()) and bool(torch.equal(torch.sort(keys.cpu()).values, vals.cpu())) if n <= (1 << 24) else bool((vals[1:] >= vals[:-1]).all())
        bad += not ok
        print(f"| torch.sort int64 (uint32 values) | {n} | {us:.2f} | {spread:.1f} | {'exact' if ok else 'FAIL'} |")
        del keys, vals, idx
    print(f"\nRESULT: {'PASS' if bad == 0 else 'FAIL'} ({bad} failed)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
