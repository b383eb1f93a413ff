#!/usr/bin/env python3
"""Draw the module's figures from the committed transcripts, as deterministic SVG.

Usage:
  tools/plot.py                 regenerate every figure next to its transcript
  tools/plot.py --check         regenerate into a temp dir and compare byte for byte with the
                                committed SVGs; exit 1 on a stale, missing or orphaned figure
  tools/plot.py --well-formed   plot EVERY transcript (not only the newest) into a temp dir and
                                check that each SVG parses and has an <svg> root with width/height
Options: --root DIR (a repository root other than this one), --png DIR (also write a PNG copy
of each figure into DIR, to look at).

Figures (for each day, from the newest transcript of each mode, newest by the date in the file
name, then by the `# date:` header, as tools/sync_readme.py picks them):
  day25  default -> evidence/<day>/default-ladder.svg  % of copy per row, partials vs one float
         sweep   -> evidence/<day>/sweep-blocks.svg    % of copy against blocks, FAIL rows in red
  day26  any mode with a table that has an `n` column and `us` columns over several n (one
         `row` column and a `us` column, or one `NAME us` column per row)
                 -> evidence/<day>/<mode>-us-vs-n.svg  us per call against n (log-log), each
                    atomic row's crossover with the tree marked (the smallest n from which the
                    tree is faster there and at every larger n: the rule the program prints)
  day39  any mode with a table that has `n`, `row` and `GB/s` columns over several n
                 -> evidence/<day>/<mode>-gbps-vs-n.svg GB/s against n, CUB highlighted, the
                    L2 size from the banner marked; one panel per timing mode (a `mode` column,
                    or one panel per table), and under each the GB/s as a multiple of CUB's
A day with no such transcript is skipped with a note. Transcripts follow CUDA-CODE-STYLE.md
section 6 (written by tools/capture.py). Numbers come only from the transcripts.

Determinism: matplotlib's own defaults (no matplotlibrc), the DejaVu Sans that ships inside
matplotlib (glyphs drawn as paths), a fixed svg.hashsalt, no date in the metadata. With the
matplotlib pinned in tools/requirements.txt the bytes are the same on every machine.

Exit codes: 0 done / up to date; 1 stale or malformed figures; 2 bad usage or an unreadable
transcript; 77 matplotlib not installed (SKIPPED).
"""
import argparse
import glob
import math
import os
import re
import shutil
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = re.compile(r"^(?P<mode>[a-z0-9][a-z0-9-]*?)-(?P<date>\d{4}-\d{2}-\d{2})-(?P<gpu>[a-z0-9-]+)\.txt$")
HEADER = re.compile(r"^# ([a-z ]+): (.*)$")
RULE = re.compile(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$")
US_COL = re.compile(r"(^|[\s(/])(us|µs)($|[\s)/,])")
HASHSALT = "cuda-reduction-module"
REGEN = "stale (regenerate with tools/plot.py)"

# Colours (colour-blind safe pairs from the Okabe-Ito palette) and the highlight.
C_PARTIALS, C_ONE, C_FAIL, C_REF = "#0072B2", "#E69F00", "#D00000", "#444444"
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]

plt = None  # matplotlib.pyplot, imported in setup_matplotlib()


# --- transcripts -------------------------------------------------------------------------------
def split_row(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def number(cell):
    """A table cell as a float; None for '-', '' or anything that is not a number."""
    try:
        return float(cell.replace(",", ""))
    except (AttributeError, ValueError):
        return None


class Table:
    def __init__(self, line_no, head, rows, caption):
        self.line_no = line_no  # 1-based line of the header row in the transcript
        self.head = head
        self.rows = [dict(zip(head, cells)) for cells in rows]
        self.caption = caption  # the nearest text line above the table ('' if none)

    def has(self, col):
        return col in self.head

    def find(self, pattern):
        return [h for h in self.head if pattern.search(h)]


class Transcript:
    def __init__(self, path, root):
        self.path = path
        self.rel = os.path.relpath(path, root).replace(os.sep, "/")
        self.day = os.path.basename(os.path.dirname(path))
        m = NAME.match(os.path.basename(path))
        self.mode, self.date = (m.group("mode"), m.group("date")) if m else ("", "")
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        self.header, i = {}, 0
        while i < len(lines) and lines[i].startswith("#"):
            h = HEADER.match(lines[i])
            if h:
                self.header[h.group(1)] = h.group(2).strip()
            i += 1
        self.body = lines[i:]
        self.banner = {}
        for line in self.body:
            if line.startswith("GPU: "):
                parts = [p.strip() for p in line[5:].split("|")]
                self.banner["name"] = parts[0]
                for p in parts[1:]:
                    m = re.fullmatch(r"([\d.]+) MiB L2", p)
                    if m:
                        self.banner["l2_mib"] = float(m.group(1))
                    m = re.fullmatch(r"cc ([\d.]+)", p)
                    if m:
                        self.banner["cc"] = m.group(1)
                    m = re.fullmatch(r"(\d+) SMs", p)
                    if m:
                        self.banner["sms"] = m.group(1)
                break
        self.tables = self._tables()

    def _tables(self):
        out, lines, i = [], self.body, 0
        offset = self._body_start()  # body line k (0-based) is file line offset + k + 1
        while i + 1 < len(lines):
            if lines[i].lstrip().startswith("|") and RULE.match(lines[i + 1]):
                head = split_row(lines[i])
                rows, j = [], i + 2
                while j < len(lines) and lines[j].lstrip().startswith("|"):
                    rows.append(split_row(lines[j]))
                    j += 1
                caption = ""
                for k in range(i - 1, -1, -1):
                    t = lines[k].strip()
                    if t.startswith("|"):
                        break
                    if t and not t.startswith("GPU: ") and not t.startswith("="):
                        caption = t
                        break
                out.append(Table(offset + i + 1, head, rows, caption))
                i = j
            else:
                i += 1
        return out

    def _body_start(self):
        with open(self.path, encoding="utf-8", errors="replace") as f:
            n = 0
            for line in f:
                if not line.startswith("#"):
                    break
                n += 1
        return n

    def gpu(self):
        return self.header.get("gpu") or self.banner.get("name") or "unknown GPU"

    def cuda(self):
        m = re.search(r"cuda_(\d+\.\d+)", self.header.get("cuda", ""))
        return m.group(1) if m else self.header.get("cuda", "?")

    def source_line(self):
        """The caption: which transcript, which GPU, which software."""
        bits = [self.gpu()]
        if "driver" in self.header:
            bits.append(f"driver {self.header['driver']}")
        bits.append(f"CUDA {self.cuda()}")
        hw = []
        if "cc" in self.banner:
            hw.append(f"cc {self.banner['cc']}")
        if "sms" in self.banner:
            hw.append(f"{self.banner['sms']} SMs")
        if "l2_mib" in self.banner:
            hw.append(f"{fmt_num(self.banner['l2_mib'])} MiB L2")
        s = f"Source: {self.rel} — " + ", ".join(bits)
        return s + (f" ({', '.join(hw)})" if hw else "")


def transcripts_in(day_dir, root):
    return [Transcript(p, root) for p in sorted(glob.glob(os.path.join(day_dir, "*.txt")))
            if NAME.match(os.path.basename(p))]


def newest_per_mode(ts):
    best = {}
    for t in ts:
        key = (t.date, t.header.get("date", ""), os.path.basename(t.path))
        if t.mode not in best or key > best[t.mode][0]:
            best[t.mode] = (key, t)
    return [best[m][1] for m in sorted(best)]


# --- formatting helpers ------------------------------------------------------------------------
SUP = str.maketrans("0123456789-.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def pow2(n):
    """'2²⁶' for a power of two, else the number with thin grouping."""
    n = int(n)
    if n > 0 and n & (n - 1) == 0:
        return "2" + str(n.bit_length() - 1).translate(SUP)
    return f"{n:,}"


def fmt_num(x):
    return f"{x:g}"


def wrap(text, width=100):
    """TEXT in lines of at most WIDTH characters, without a last line of one or two words."""
    if not text:
        return ""
    lines = textwrap.wrap(text, width)
    w = width
    while len(lines) > 1 and len(lines[-1]) < 15 and w > width * 0.7:
        w -= 4
        lines = textwrap.wrap(text, w)
    return "\n".join(lines)


def finish(fig, t, title, notes=()):
    """Title (what and on which GPU), then the caption under everything: notes and the source.

    Call last: it lays the figure out, freezes the layout, and hangs the caption under the lowest
    thing drawn (an x label, a legend below the axes), so the two never overlap."""
    fig.suptitle(title, fontsize=12, fontweight="bold", x=0.0, ha="left")
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    for leg in fig.legends:  # pin figure legends: bbox_inches='tight' moves the figure's bbox
        ext = leg.get_window_extent(renderer).transformed(fig.transFigure.inverted())
        leg.set_loc("lower left")
        leg.set_bbox_to_anchor((ext.x0, ext.y0), transform=fig.transFigure)
        leg.borderaxespad = 0.0
    box = fig.get_tightbbox(renderer)  # inches
    width = int(box.width * 17)  # characters of 8 pt DejaVu Sans across the drawing
    foot = [wrap(n, width) for n in notes if n] + [wrap(t.source_line(), width)]
    fig.text(max(0.0, box.x0 / fig.get_figwidth()), box.y0 / fig.get_figheight() - 0.02,
             "\n".join(foot), ha="left", va="top", fontsize=8, color="#333333", linespacing=1.4)


def log2_ticks(ax, values, axis="x"):
    """Power-of-two ticks labelled 2ᵏ over the range of VALUES, at most ~12 of them."""
    lo = math.floor(math.log2(min(values)))
    hi = math.ceil(math.log2(max(values)))
    step = max(1, math.ceil((hi - lo + 1) / 12))
    ks = list(range(lo, hi + 1, step))
    setter = ax.set_xticks if axis == "x" else ax.set_yticks
    setter([2.0**k for k in ks], ["2" + str(k).translate(SUP) for k in ks])
    (ax.xaxis if axis == "x" else ax.yaxis).set_minor_locator(plt.NullLocator())


def is_copy(row):
    return row.get("row", "").lower() == "copy" or row.get("produces", "").lower() == "copy"


def failed(row):
    return row.get("check", "").upper() == "FAIL"


# --- day 25 ------------------------------------------------------------------------------------
def ladder_table(t):
    for tab in t.tables:
        if tab.has("row") and tab.has("% of copy") and any(is_copy(r) for r in tab.rows):
            return tab
    return None


def fig_ladder(t):
    """Day 25 default: horizontal bars of % of copy, partials vs one float, copy = 100 % line."""
    tab = ladder_table(t)
    if tab is None:
        return None
    rows = [r for r in tab.rows if not is_copy(r)]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.6), layout="constrained")
    y = list(range(len(rows)))[::-1]  # first row on top
    seen = set()
    top = 100.0
    for yi, r in zip(y, rows):
        pct = number(r.get("% of copy", ""))
        one = r.get("produces", "") == "one float"
        label = "one float (the finished sum)" if one else "partials (one float a block, still to add)"
        style = dict(color=C_ONE, edgecolor="black", hatch="") if one else \
            dict(color=C_PARTIALS, edgecolor="white", hatch="//")
        if failed(r):
            style = dict(color="white", edgecolor=C_FAIL, hatch="xx")
            label = "check FAIL (not a speed)"
        ax.barh(yi, pct or 0.0, height=0.65, linewidth=0.8,
                label=None if label in seen else label, **style)
        seen.add(label)
        text = "FAIL" if failed(r) else (f"{pct:.1f} %" if pct is not None else "–")
        ax.text((pct or 0.0) + 1.5, yi, text, va="center", fontsize=9,
                color=C_FAIL if failed(r) else "black")
        top = max(top, pct or 0.0)
    ax.axvline(100.0, color=C_REF, linestyle="--", linewidth=1.2,
               label="copy = 100 % (bytes read + written)")
    ax.set_yticks(y, [r.get("row", "?") for r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, math.ceil((top + 14) / 10) * 10)
    ax.set_xlabel("% of copy  (row GB/s ÷ copy GB/s, same run)  [%]")
    ax.set_ylabel("kernel (table row)")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=9, frameon=False)
    n = re.search(r"\bn = (\d+)", tab.caption)
    what = f"n = {pow2(n.group(1))} floats" if n else "default run"
    finish(fig, t, f"Day 25 ladder on {t.gpu()}: % of the copy ceiling per kernel ({what})",
           [tab.caption,
            "Reduction rows count bytes read only, the copy row read + written, so a reduction can "
            "pass 100 %. Partial rows still need a second pass: compare them with each other, "
            "and v8 (one float) with the copy."])
    return fig


def fig_sweep(t):
    """Day 25 sweep: % of copy against blocks (log2), failed checks in red."""
    tab = ladder_table(t)
    if tab is None or not tab.has("blocks"):
        return None
    rows = [r for r in tab.rows if not is_copy(r) and number(r.get("blocks", "")) is not None]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    ok = [(number(r["blocks"]), number(r.get("% of copy", ""))) for r in rows if not failed(r)]
    ok = [(b, p) for b, p in ok if p is not None]
    name = rows[0].get("row", "row")
    if ok:
        ax.plot([b for b, _ in ok], [p for _, p in ok], "-o", color=C_ONE, markeredgecolor="black",
                linewidth=2, markersize=7, label=f"{name}: check exact")
        for b, p in ok:
            ax.annotate(f"{p:.1f} %", (b, p), textcoords="offset points", xytext=(0, -15),
                        ha="center", fontsize=8.5)
    bad = [r for r in rows if failed(r)]
    if bad:
        ys = [number(r.get("% of copy", "")) for r in bad]
        ys = [p if p is not None else 0.0 for p in ys]
        ax.plot([number(r["blocks"]) for r in bad], ys, "X", color=C_FAIL, markersize=11,
                linestyle="none", label=f"{name}: check FAIL (not a speed)")
        for r, p in zip(bad, ys):
            ax.annotate("FAIL", (number(r["blocks"]), p), textcoords="offset points",
                        xytext=(0, 9), ha="center", fontsize=8.5, color=C_FAIL, fontweight="bold")
    ax.axhline(100.0, color=C_REF, linestyle="--", linewidth=1.2,
               label="copy = 100 % (bytes read + written)")
    blocks = [number(r["blocks"]) for r in rows]
    ax.set_xscale("log", base=2)
    ax.set_xticks(blocks, [f"{int(b):,}" for b in blocks])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlim(min(blocks) / 1.6, max(blocks) * 1.6)
    top = max([100.0] + [number(r.get("% of copy", "")) or 0.0 for r in rows])
    ax.set_ylim(0, math.ceil((top + 12) / 10) * 10)
    ax.set_xlabel("blocks in the grid  [count, log₂ scale]")
    ax.set_ylabel("% of copy  [%]")
    ax.grid(color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", fontsize=9, framealpha=0.95)
    finish(fig, t, f"Day 25 sweep on {t.gpu()}: {name} against the block count",
           [tab.caption, "Every block count is checked exactly; a red X is a failed check, "
            "plotted where it fell but not a speed."])
    return fig


# --- day 26 ------------------------------------------------------------------------------------
def n_tables(t, value_cols):
    """Tables with an `n` column, columns picked by VALUE_COLS, and >= 2 distinct n."""
    out = []
    for tab in t.tables:
        if not tab.has("n"):
            continue
        cols = value_cols(tab)
        ns = {number(r.get("n", "")) for r in tab.rows} - {None}
        if cols and len(ns) >= 2:
            out.append((tab, cols))
    return out


def series(rows, col):
    """{row name: [(n, value, failed)]} in table order, skipping '-' cells and copy rows."""
    out = {}
    for r in rows:
        if is_copy(r):
            continue
        n, v = number(r.get("n", "")), number(r.get(col, ""))
        if n is None or v is None or n <= 0 or v <= 0:
            continue
        out.setdefault(r.get("row", "?"), []).append((n, v, failed(r)))
    for k in out:
        out[k].sort()
    return out


def is_tree(name):
    s = name.lower()
    return ("tree" in s or re.search(r"\bv8\b", s) is not None) and "atomic" not in s


def crossover(a, tree):
    """The smallest n from which TREE is faster than A at that n and at every larger n where both
    ran and passed (the rule day 26 prints as `crossover, ROW: the tree is faster from n = ...`);
    None if A is as fast or faster at the largest such n."""
    da = {n: v for n, v, f in a if not f}
    dt = {n: v for n, v, f in tree if not f}
    start = None
    for n in sorted(set(da) & set(dt), reverse=True):
        if dt[n] < da[n]:
            start = n
        else:
            break
    return start


def us_panels(tab):
    """[(title, {series: [(n, us, failed)]})] for a table with `n` and `us` columns. Long format
    (a `row` column): one panel per us column, one series per row name. Wide format (no `row`):
    one panel, one series per `NAME us` column (the copy column left out), a FAIL in the line's
    check failing every value on it."""
    cols = tab.find(US_COL)
    if tab.has("row"):
        return [(col if len(cols) > 1 else "", series(tab.rows, col)) for col in cols]
    ss = {}
    for col in cols:
        name = re.sub(r"(^|\s)(us|µs)(\s|$)|[()]", " ", col).strip() or col
        if name.lower() == "copy":
            continue
        for r in tab.rows:
            n, v = number(r.get("n", "")), number(r.get(col, ""))
            if n is not None and v is not None and n > 0 and v > 0:
                ss.setdefault(name, []).append((n, v, failed(r)))
    for k in ss:
        ss[k].sort()
    return [("", ss)] if ss else []


def shade_l2(ax, tab):
    """Shade the n where an `in L2` column says yes: those times are not DRAM bandwidth."""
    col = next((h for h in tab.head if h.lower() == "in l2"), None)
    if not col:
        return
    ns = sorted(number(r.get("n", "")) for r in tab.rows
                if r.get(col, "").lower() == "yes" and number(r.get("n", "")))
    if ns:
        ax.axvspan(ns[0] / 1.4, ns[-1] * 1.4, color="#e8e8e8", zorder=0,
                   label=f"input fits in L2 (`{col}` = yes)")


def fig_us_vs_n(t):
    """Day 26: us per call against n (log-log), atomic rows and the tree, crossovers marked."""
    found = n_tables(t, lambda tab: tab.find(US_COL))
    panels = [(tab, title, ss) for tab, _ in found for title, ss in us_panels(tab)]
    if not panels:
        return None
    width = 7.8 if len(panels) == 1 else 6.0 * len(panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(width, 5.0),
                             layout="constrained", squeeze=False)
    notes = []
    for ax, (tab, title, ss) in zip(axes[0], panels):
        names = list(ss)
        tree = next((k for k in names if is_tree(k)), None)
        colours = {}
        for k in names:
            if k != tree:
                colours[k] = PALETTE[len(colours) % len(PALETTE)]
        all_n = []
        shade_l2(ax, tab)
        for k in names:
            pts = ss[k]
            all_n += [n for n, _, _ in pts]
            line = [(n, math.nan if f else v) for n, v, f in pts]  # a FAIL breaks the line
            if k == tree:
                style = dict(color="black", linewidth=2.6, marker="s", markersize=5, zorder=5)
            else:
                style = dict(color=colours[k], linewidth=1.6, marker="o", markersize=4, zorder=3)
            ax.plot([n for n, _ in line], [v for _, v in line], label=k, **style)
            bad = [(n, v) for n, v, f in pts if f]
            if bad:
                ax.plot([n for n, _ in bad], [v for _, v in bad], "X", color=C_FAIL, markersize=10,
                        linestyle="none", zorder=6, label="check FAIL (not a speed)")
        for k in names:
            if tree is None or k == tree:
                continue
            start = crossover(ss[k], ss[tree])
            if start is None:
                notes.append(f"{k}: no crossover in range (as fast as the tree or faster at the "
                             f"largest n it ran).")
                continue
            v = next(v for n, v, f in ss[k] if n == start and not f)
            ax.plot([start], [v], "o", markersize=15, markerfacecolor="none",
                    markeredgecolor=colours[k], markeredgewidth=2.2, zorder=7,
                    label=f"{k}: the tree is faster from n = {pow2(start)} on")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        if all_n:
            log2_ticks(ax, all_n)
        ax.set_xlabel("n  [elements, log₂ scale]")
        ax.set_ylabel("time per call  [µs, log scale]")
        ax.grid(which="major", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        legend_fail_last(ax, loc="upper left", fontsize=8.5, framealpha=0.95)
        if tree is None:
            ax.text(0.99, 0.02, "no tree row (a name with `tree` or `v8`): crossovers not marked",
                    transform=ax.transAxes, ha="right", fontsize=8, color=C_FAIL)
        if title:
            ax.set_title(f"column `{title}`", fontsize=9.5)
    captions = list(dict.fromkeys(tab.caption for tab, _, _ in panels if tab.caption))
    finish(fig, t, f"Day 26 on {t.gpu()}: time per call against n, atomics and the tree",
           captions + ["Lower is faster. A circle marks, on each atomic row, the smallest n from "
                       "which the tree is faster there and at every larger n measured: the "
                       "crossover the program prints, known to within one step of n."] + notes)
    return fig


def legend_fail_last(ax, **kw):
    """A legend with the series first, then the FAIL and crossover keys (each once)."""
    h, lab = ax.get_legend_handles_labels()
    seen = {}
    for hh, ll in zip(h, lab):
        seen.setdefault(ll, hh)
    tail = [k for k in seen if k == "check FAIL (not a speed)" or "tree is faster from" in k]
    keys = [k for k in seen if k not in tail] + tail
    ax.legend([seen[k] for k in keys], keys, **kw)


# --- day 39 ------------------------------------------------------------------------------------
MODE_COLS = ("mode", "timing", "timing mode", "launch")


def fig_gbps_vs_n(t):
    """Day 39: GB/s against n, every row, CUB highlighted, one panel per timing mode, L2 marked;
    under each, every row's GB/s as a multiple of CUB's at the same n (1.00 = as fast as CUB)."""
    found = n_tables(t, lambda tab: ["GB/s"] if tab.has("GB/s") and tab.has("row") else [])
    if not found:
        return None
    panels = []  # (title, rows)
    for tab, _ in found:
        mcol = next((c for c in tab.head if c.lower() in MODE_COLS), None)
        if mcol:
            for m in dict.fromkeys(r.get(mcol, "") for r in tab.rows):
                panels.append((f"timing: {m}", [r for r in tab.rows if r.get(mcol, "") == m]))
        else:
            panels.append((tab.caption, tab.rows))
    names = list(dict.fromkeys(r.get("row", "?") for _, rows in panels for r in rows
                               if not is_copy(r)))
    cub = next((k for k in names if "cub" in k.lower()), None)
    colours, styles = {}, {}
    for k in names:
        if k == cub:
            styles[k] = dict(color="black", linewidth=3.0, marker="D", markersize=4.5, zorder=6)
        else:
            colours[k] = PALETTE[len(colours) % len(PALETTE)]
            styles[k] = dict(color=colours[k], linewidth=1.4, marker="o", markersize=3.2,
                             alpha=0.9, zorder=3)
    nrows = 2 if cub else 1
    fig, axes = plt.subplots(nrows, len(panels), figsize=(5.6 * len(panels), 4.4 + 2.6 * (nrows - 1)),
                             layout="constrained", squeeze=False, sharex="col",
                             height_ratios=[1.7, 1.0][:nrows])
    l2 = t.banner.get("l2_mib")
    for col, (title, rows) in enumerate(panels):
        ax = axes[0][col]
        copy = {}
        for r in rows:
            if is_copy(r) and number(r.get("n", "")) and number(r.get("GB/s", "")):
                copy[number(r["n"])] = number(r["GB/s"])
        ss = series(rows, "GB/s")
        all_n = [n for pts in ss.values() for n, _, _ in pts] + list(copy)
        if copy:
            xs = sorted(copy)
            ax.plot(xs, [copy[x] for x in xs], linestyle="--", color="#888888", linewidth=1.3,
                    marker=".", label="copy (bytes read + written)", zorder=2)
        cub_at = {n: v for n, v, f in ss.get(cub, []) if not f}
        for k, pts in ss.items():
            line = [(n, math.nan if f else v) for n, v, f in pts]  # a FAIL breaks the line
            ax.plot([n for n, _ in line], [v for _, v in line], label=k, **styles[k])
            bad = [(n, v) for n, v, f in pts if f]
            if bad:
                ax.plot([n for n, _ in bad], [v for _, v in bad], "X", color=C_FAIL, markersize=10,
                        linestyle="none", zorder=7, label="check FAIL (not a speed)")
            if cub:
                ratio = [(n, math.nan if f or n not in cub_at else v / cub_at[n]) for n, v, f in pts]
                axes[1][col].plot([n for n, _ in ratio], [r for _, r in ratio], **styles[k])
        marks = [ax] + ([axes[1][col]] if cub else [])
        if l2:
            bpe = bytes_per_element(rows)
            n_l2 = l2 * 2**20 / bpe
            unit = {4: "floats", 8: "doubles"}.get(bpe, f"{bpe}-byte elements")
            for i, a in enumerate(marks):
                a.axvline(n_l2, color=C_FAIL, linestyle=":", linewidth=1.6, zorder=1,
                          label=None if i else
                          f"input = L2 size ({fmt_num(l2)} MiB = {n_l2:,.0f} {unit})")
            all_n.append(n_l2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        if all_n:
            log2_ticks(ax, all_n)
        ax.set_ylabel("GB/s  [10⁹ bytes/s, log scale]")
        ax.yaxis.set_tick_params(labelleft=True)
        if title:
            ax.set_title(wrap(title.split(";")[0], 64), fontsize=9)
        if cub:
            r = axes[1][col]
            r.axhline(1.0, color="black", linewidth=1.0, zorder=1)
            r.set_ylabel("GB/s ÷ CUB's GB/s  [×]")
            r.xaxis.set_tick_params(labelbottom=True)
            ax.xaxis.set_tick_params(labelbottom=False)
        for a in marks:
            a.grid(which="major", color="#dddddd", linewidth=0.6)
            a.set_axisbelow(True)
        marks[-1].set_xlabel("n  [elements, log₂ scale]")
    seen = {}
    for ax in axes[0]:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(ll, hh)
    fail = [k for k in seen if "FAIL" in k]
    keys = [k for k in seen if k not in fail] + fail
    fig.legend([seen[k] for k in keys], keys, loc="outside lower center", fontsize=8.5,
               ncol=min(3, len(keys)), frameon=False)
    what = f"GB/s against n, {cub} and the ladder" if cub else "GB/s against n"
    finish(fig, t, f"Day 39 on {t.gpu()}: {what}",
           ["Higher is better. Reduction rows count bytes read, copy read + written. Left of the "
            "dotted line the input fits in L2: see the transcript for how L2 was kept cold."]
           + ([f"Lower panels: each row's GB/s divided by {cub}'s at the same n; above 1.00 the "
               "row is faster than the library."] if cub else []))
    return fig


def bytes_per_element(rows):
    """Bytes counted per element of a reduction row (MB·10⁶/n), 4 (float) if not derivable."""
    for r in rows:
        mb, n = number(r.get("MB", "")), number(r.get("n", ""))
        if not is_copy(r) and mb and n:
            b = round(mb * 1e6 / n)
            if b in (1, 2, 4, 8, 16):
                return b
    return 4


# --- the figure list ---------------------------------------------------------------------------
# day number -> [(mode or None for any mode, figure suffix, function)]
FIGURES = {
    25: [("default", "ladder", fig_ladder), ("sweep", "blocks", fig_sweep)],
    26: [(None, "us-vs-n", fig_us_vs_n)],
    39: [(None, "gbps-vs-n", fig_gbps_vs_n)],
}
WHAT = {26: "a table with an `n` column and a `us` column over several n",
        39: "a table with `n` and `GB/s` columns over several n"}


def day_number(day):
    m = re.match(r"day(\d+)", day)
    return int(m.group(1)) if m else None


def plan(root, every=False):
    """[(transcript, figure file name, function)] and the skip notes."""
    jobs, notes = [], []
    days = {}
    for d in sorted(glob.glob(os.path.join(root, "evidence", "day*"))):
        if os.path.isdir(d) and day_number(os.path.basename(d)) in FIGURES:
            days.setdefault(day_number(os.path.basename(d)), []).append(d)
    for num, figs in sorted(FIGURES.items()):
        ts = [t for d in days.get(num, []) for t in transcripts_in(d, root)]
        pick = ts if every else newest_per_mode(ts)
        for mode, suffix, fn in figs:
            cand = [t for t in pick if mode is None or t.mode == mode]
            made = False
            for t in cand:
                name = f"{t.mode}-{suffix}.svg"
                if every:
                    name = os.path.basename(t.path)[:-4] + f"-{suffix}.svg"
                jobs.append((t, name, fn))
                made = True
            if not made:
                where = f"evidence/day{num}-*/"
                want = f"`{mode}` transcript" if mode else f"transcript with {WHAT[num]}"
                notes.append(f"note: day {num} `{suffix}` figure skipped: found no {want} under {where}")
    return jobs, notes


def setup_matplotlib():
    global plt
    try:
        import matplotlib
    except ImportError:
        print("SKIPPED: matplotlib not installed")
        sys.exit(77)
    matplotlib.use("Agg")
    import matplotlib.font_manager as fm
    import matplotlib.pyplot as pyplot

    plt = pyplot
    matplotlib.rcdefaults()  # ignore any matplotlibrc on this machine
    # Only the DejaVu fonts that ship inside matplotlib: a system DejaVu may be another version.
    data = os.path.join(matplotlib.get_data_path(), "fonts")
    fm.fontManager.ttflist = [f for f in fm.fontManager.ttflist
                              if not f.name.startswith("DejaVu") or f.fname.startswith(data)]
    fm._get_font.cache_clear()
    plt.rcParams.update({
        "svg.hashsalt": HASHSALT,
        "svg.fonttype": "path",
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans"],
        "mathtext.fontset": "dejavusans",
        "axes.unicode_minus": True,
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "path.simplify": True,
    })
    used = fm.findfont(fm.FontProperties(family="DejaVu Sans"), fallback_to_default=False)
    if not used.startswith(data):
        sys.exit(f"plot: DejaVu Sans resolved to {used}, not matplotlib's own copy")


def render(jobs, out_root, png_dir=None):
    """Write each figure; return {relative path: absolute path} of what was written."""
    written = {}
    for t, name, fn in jobs:
        try:
            fig = fn(t)
        except Exception as e:  # a transcript the tool cannot read is an error, not a crash
            print(f"{t.rel}: error: cannot plot `{name}`: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(2)
        if fig is None:
            print(f"note: {t.rel}: no table to draw `{name}` from; skipped")
            continue
        rel = f"evidence/{t.day}/{name}"
        path = os.path.join(out_root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fig.savefig(path, format="svg", bbox_inches="tight", pad_inches=0.15,
                    metadata={"Date": None})
        if png_dir:
            os.makedirs(png_dir, exist_ok=True)
            fig.savefig(os.path.join(png_dir, name[:-4] + ".png"), format="png", dpi=110,
                        bbox_inches="tight", pad_inches=0.15, metadata={"Software": None})
        plt.close(fig)
        written[rel] = path
    return written


def check_svg(path):
    """'' if PATH is an SVG with an <svg> root carrying width and height, else the problem."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return f"not well-formed XML: {e}"
    if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
        return f"root element is <{root.tag}>, not <svg>"
    for attr in ("width", "height"):
        if not re.fullmatch(r"[\d.]+(pt|px)?", root.get(attr, "")):
            return f"<svg> has no usable {attr} ({root.get(attr)!r})"
    return ""


def pinned_matplotlib():
    """The version tools/requirements.txt pins matplotlib to, or None."""
    try:
        with open(os.path.join(ROOT, "tools", "requirements.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"\s*matplotlib\s*==\s*([\w.]+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--well-formed", action="store_true")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--png")
    a = ap.parse_args(argv)
    if a.check and a.well_formed:
        ap.error("--check and --well-formed are separate tests")
    root = os.path.abspath(a.root)
    setup_matplotlib()
    pinned = pinned_matplotlib()
    import matplotlib
    if pinned and matplotlib.__version__ != pinned and not a.well_formed:
        msg = (f"matplotlib {matplotlib.__version__} is installed, but the figures are made with "
               f"matplotlib=={pinned} (tools/requirements.txt): their bytes would differ")
        if a.check:
            print(f"SKIPPED: {msg}")
            return 77
        print(f"plot: {msg}; install the pinned version", file=sys.stderr)
        return 2
    jobs, notes = plan(root, every=a.well_formed)
    for n in notes:
        print(n)

    if a.well_formed:
        tmp = tempfile.mkdtemp(prefix="plot-wf-")
        try:
            written = render(jobs, tmp, a.png)
            bad = 0
            for rel, path in sorted(written.items()):
                problem = check_svg(path)
                if problem:
                    print(f"{rel}: error: {problem}")
                    bad += 1
            print(f"plot: {len(written)} figure(s) from {len(jobs)} transcript(s); "
                  f"{bad} malformed")
            return 1 if bad else 0
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    if a.check:
        tmp = tempfile.mkdtemp(prefix="plot-check-")
        try:
            written = render(jobs, tmp, a.png)
            stale = 0
            for rel, path in sorted(written.items()):
                committed = os.path.join(root, *rel.split("/"))
                if not os.path.isfile(committed):
                    print(f"{rel}: {REGEN}: the figure is missing")
                    stale += 1
                    continue
                with open(committed, "rb") as f1, open(path, "rb") as f2:
                    if f1.read() != f2.read():
                        print(f"{rel}: {REGEN}")
                        stale += 1
            for svg in sorted(glob.glob(os.path.join(root, "evidence", "*", "*.svg"))):
                rel = os.path.relpath(svg, root).replace(os.sep, "/")
                if rel not in written:
                    print(f"{rel}: no transcript makes this figure any more (remove it)")
                    stale += 1
            if stale:
                return 1
            print(f"plot: {len(written)} figure(s) up to date")
            return 0
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    written = render(jobs, root, a.png)
    for rel in sorted(written):
        src = next(t.rel for t, name, _ in jobs if rel.endswith("/" + name) and t.day in rel)
        print(f"plot: wrote {rel} (from {src})")
    for svg in sorted(glob.glob(os.path.join(root, "evidence", "*", "*.svg"))):
        rel = os.path.relpath(svg, root).replace(os.sep, "/")
        if rel not in written:
            print(f"note: {rel} is made from no transcript; remove it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
