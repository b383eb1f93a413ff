"""Draw the figures the READMEs show, from the transcript of each mode (evidence/DAY/MODE.txt).

Usage: tools/plot.py [--check] [ROOT]          (ROOT: the repository, by default)

  (no flag)  draws every figure below into evidence/<day>/ (needs matplotlib:
             tools/requirements.txt); each SVG records the points it was drawn from, as JSON, in its
             <metadata> description.
  --check    draws nothing and needs no matplotlib: recomputes each figure's points from the
             transcript (transcript.py reads it) and compares them with the points the
             committed SVG records. A missing figure or different points fail (exit 1, `stale`).

Bad usage (an unknown flag, a ROOT without evidence/) is one line on stderr and exit 2. The
figures (the transcript evidence/DAY/MODE.txt -> the figure beside it):
"""
import argparse
import html
import json
import os
import re

from . import transcript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
num = transcript.number

def rows(t, *cols):
    """The rows (as dicts) of every table of t that has all of cols."""
    return [r for tab in t.tables if all(c in tab.head for c in cols) for r in tab.dicts()]

def ladder(t):
    return [[r["row"], num(r["% of copy"]), r["produces"]] for r in rows(t, "row", "% of copy")]

def sweep(t):
    return [[num(r["blocks"]), num(r["% of copy"]), r["check"]]
            for r in rows(t, "row", "blocks", "% of copy") if r["row"] == "v8"]

def in_flight(t):
    copy = next(float(m.group(1)) for l in t.lines for m in [re.search(r"copy row ([\d.]+) GB/s", l)]
                if m)
    return [["copy", copy]] + [[num(r["bytes"]), num(r["loads"]), num(r["KiB in flight"]),
                                num(r["GB/s"])] for r in rows(t, "bytes", "KiB in flight", "GB/s")]

def us_vs_n(t):
    return [[num(r["n"]), c[:-3], num(r[c])] for tab in t.tables if "n" in tab.head
            for r in tab.dicts() for c in tab.head if c.endswith(" us") and num(r[c]) is not None]

def per_n(col):
    """The points [mode, n, row, value of col] of every table with n, row and col."""
    def points(t):
        out = []
        for tab in t.tables:
            if {"n", "row", col} <= set(tab.head):
                mode = tab.caption.split(":")[0]
                out += [[mode, num(r["n"]), r["row"], num(r[col])] for r in tab.dicts()
                        if num(r[col]) is not None]  # a row checked but not timed has none
        return out
    return points

def draw_ladder(plt, pts, title):
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(pts) + 1.2))
    names = [p[0] for p in pts][::-1]
    ax.barh(names, [p[1] for p in pts][::-1], color=["#999" if p[2] == "copy" else "#2a6" if
                                                     p[2] == "one float" else "#8cd" for p in
                                                     pts][::-1])
    ax.axvline(100, color="k", lw=0.8)
    ax.set_xlabel("% of copy (row GB/s / copy GB/s, same run)")
    ax.set_title(title + "\n(green: one float; blue: partials; grey: the copy)", fontsize=10)
    return fig

def draw_sweep(plt, pts, title):
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color="#2a6")
    for p in pts:
        if p[2] != "exact":
            ax.plot(p[0], p[1], "rx", ms=10)
    ax.set_xscale("log", base=2)
    ax.axhline(100, color="k", lw=0.8)
    ax.set(xlabel="blocks in the grid (log2)", ylabel="% of copy")
    ax.set_title(title, fontsize=10)
    return fig

def draw_in_flight(plt, pts, title):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    copy = pts[0][1]
    for width, color in ((4, "#d62"), (16, "#26a")):
        mine = sorted((p[2], p[3]) for p in pts[1:] if p[0] == width)
        ax.plot([m[0] for m in mine], [m[1] for m in mine], "o", color=color,
                label=f"{width}-byte loads")
    ax.axhline(copy, color="k", lw=0.8, label="copy row")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="KiB in flight (resident threads x loads a thread x bytes a load, log2)",
           ylabel="GB/s (bytes read)")
    ax.legend()
    ax.set_title(title, fontsize=10)
    return fig

def draw_lines(plt, pts, title, ylabel, panels):
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        mine = [p[1:] for p in pts if p[0] == panel]
        for name in dict.fromkeys(p[1] for p in mine):
            xy = sorted((p[0], p[2]) for p in mine if p[1] == name)
            ax.plot([q[0] for q in xy], [q[1] for q in xy], "o-", ms=3, label=name,
                    lw=2.5 if name in ("best", "CUB Sum", "CUB", "tree") else 1)
        ax.set_xscale("log", base=2)
        ax.set(yscale="log", xlabel="n (elements, log2)", ylabel=ylabel)
        ax.set_title(f"{title}{': ' + panel if panel else ''}", fontsize=10)
        ax.legend(fontsize=8)
    return fig

FIGURES = [  # day, mode, file, points, draw
    ("day25-reduction-2", "default", "default-ladder.svg", ladder, draw_ladder),
    ("day25-reduction-2", "sweep", "sweep-blocks.svg", sweep, draw_sweep),
    ("day25-reduction-2", "in-flight", "in-flight-gbps-vs-bytes.svg", in_flight, draw_in_flight),
    ("day26-atomics", "sweep", "sweep-us-vs-n.svg", us_vs_n,
     lambda plt, pts, title: draw_lines(plt, [[None] + p for p in pts], title,
                                        "us per call (log)", [None])),
    ("day39-cub", "default", "default-gbps-vs-n.svg", per_n("GB/s"),
     lambda plt, pts, title: draw_lines(plt, pts, title, "GB/s (log)", ["stream", "graph"])),
    ("day39-scan", "default", "default-gbps-vs-n.svg", per_n("GB/s"),
     lambda plt, pts, title: draw_lines(plt, pts, title, "GB/s, 8 bytes a float (log)",
                                        ["stream", "graph"])),
    ("day39-sort", "default", "default-gkeys-vs-n.svg", per_n("G keys/s"),
     lambda plt, pts, title: draw_lines(plt, pts, title, "G keys/s (log)", ["stream", "graph"])),
]

def recorded(svg):
    """The points an SVG records, or None."""
    m = re.search(r"<dc:description>(.*?)</dc:description>", open(svg, encoding="utf-8").read(),
                  flags=re.S)
    return json.loads(html.unescape(m.group(1))) if m else None

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__ + "\n".join(
        f"  {d}/{m}.txt -> {f}" for d, m, f, _, _ in FIGURES), usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="draw nothing; fail where a figure is stale")
    ap.add_argument("root", nargs="?", default=ROOT)
    a = ap.parse_args(argv)
    check, root = a.check, a.root
    if not os.path.isdir(os.path.join(root, "evidence")):  # (matplotlib only to draw)
        ap.error(f"{root}: " + ("no such file or directory" if not os.path.exists(root) else
                                "not a repository root (no evidence/ in it)"))
    if not check:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    bad = 0
    for day, mode, name, points, draw in FIGURES:
        ev = os.path.join(root, "evidence", day)
        src, svg = os.path.join(ev, f"{mode}.txt"), os.path.join(ev, name)
        if not os.path.exists(src):
            if os.path.exists(svg):
                print(f"{svg}:1: error: no {mode} transcript in {ev} to draw it from")
                bad += 1
            continue
        t = transcript.Transcript(src)
        pts = json.loads(json.dumps(points(t)))
        if check:
            if not os.path.exists(svg) or recorded(svg) != pts:
                print(f"{svg}:1: error: stale: its points are not those of "
                      f"{os.path.basename(src)} (regenerate with tools/plot.py)")
                bad += 1
            continue
        title = f"{day} {mode}: {t.value('gpu')}, {t.value('date')}"
        fig = draw(plt, pts, title)
        fig.savefig(svg, format="svg", bbox_inches="tight",
                    metadata={"Description": json.dumps(pts), "Date": None})
        plt.close(fig)
        print(f"plot: wrote {os.path.relpath(svg, root)} ({len(pts)} points)")
    if check:
        print(f"{'FAILED' if bad else 'ok'}: plots: {bad} stale figure(s); every other figure "
              "records the points of its transcript")
    return 1 if bad else 0
