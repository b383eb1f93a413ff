"""The READMEs: what cog writes into them, and what the tools read from them.

Usage: tools/readme.py [--check] [ROOT|DAY_DIR|README.md ...]     (default: the repository)

Runs cog (PyPI `cogapp`) on every code/day*/README.md: a README's blocks are one-line cog
generators calling the three functions below (cog -I tools -p "from reduction.readme import *"):

  <!-- [[[cog output("default") ]]] -->                the transcript's tables
  <!-- [[[cog output("default", grep=r"^best") ]]] -->  every output line REGEX matches
  <!-- [[[cog median("default+repeat-2", "vs CUB", ["best"], sizes=[1024]) ]]] -->  medians
  <!-- [[[cog snippet("v5") ]]] -->                      a `// snippet: NAME` region of the .cu

each followed by the block it writes and `<!-- [[[end]]] -->`. Without --check the blocks are
rewritten in place; with --check nothing changes and a block that differs fails with a diff (cog
--check --diff). A median call with sizes=[n, ...] shows those n only and links the full table,
which it writes beside the transcripts, evidence/DAY/medians.md (with --check: an error where that
file differs). A marker with no transcript or no matching line, an unknown snippet, a snippet
marked twice in the .cu or quoted twice in a README is an error, `README.md:LINE: error: ...`;
so is a marker of the old form (`<!-- snippet: NAME -->`), a snippet call not written as above,
and a `// snippet:` region that no block of its day's README quotes (`FILE.cu:LINE: error:`).
Exit 0; 1 when a block differs or an error stopped cog; 77 (`SKIPPED:`) without cogapp; 2 on bad
usage. The `<!-- build-line -->` block is a source: capture, notebook, mutation run build with it.
"""
import argparse
import glob
import os
import re
import sys

from . import transcript

__all__ = ["output", "median", "snippet"]
CHECK = False  # main's --check: median() verifies evidence/DAY/medians.md instead of writing it
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUOTE = re.compile(r'^<!-- \[\[\[cog snippet\("([^"]+)"\) \]\]\] -->$')
REGION = re.compile(r"^\s*//\s*(?:snippet:\s*(\S+)|end snippet)\s*$")
OLD = re.compile(r"^\s*<!--\s*(?:expected-output|snippet):")  # the markers before cog

def build_block(readme):
    """The non-empty lines of the fenced block after README's `<!-- build-line -->` (blank lines
    between); [] if none."""
    lines = transcript.read_lines(readme)
    i = next((i for i, l in enumerate(lines) if l.strip() == "<!-- build-line -->"), len(lines))
    k = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), len(lines))
    fence = re.match(r"\s*(```+|~~~+)", lines[k]) if k < len(lines) else None
    end = fence and next((j for j in range(k + 1, len(lines)) if lines[j].strip() == fence[1]), 0)
    return [l.strip() for l in lines[k + 1:end] if l.strip()] if end else []

def build_line(day_dir):
    """The first nvcc line of DAY_DIR's build block; SystemExit with the reason if there is none."""
    path = os.path.join(day_dir, "README.md")
    line = next((l for l in build_block(path) if l.startswith("nvcc ")), None)
    return line or sys.exit(f"{path}: no nvcc line in the block after <!-- build-line -->")

def quoted(lines):
    """[(snippet name, first, end)] of the README LINES: lines[first:end] is the block that a
    `snippet(NAME)` generator wrote (its fence opens on the line below the marker)."""
    return [(m.group(1), i + 2, lines.index("```", i + 2)) for i, l in enumerate(lines)
            if (m := QUOTE.match(l)) and "```" in lines[i + 2:]]

def regions(day_dir):
    """(the day's one .cu, {name: (line, lines)} of its snippet regions, [errors])."""
    sources = sorted(glob.glob(os.path.join(day_dir, "*.cu")))
    if len(sources) != 1:
        return None, {}, [f"{transcript.show(day_dir)} has {len(sources)} .cu files, not one"]
    lines, out, errors, name = transcript.read_lines(sources[0]), {}, [], None
    for i, line in enumerate(lines):
        m = REGION.match(line)
        if m and m.group(1) and name is None:
            name, start = m.group(1), i + 1
        elif m and not m.group(1) and name is not None:
            if name in out:
                errors.append(f"{transcript.show(sources[0])}:{start}: error: snippet `{name}` is "
                              f"marked twice (first at line {out[name][0]})")
            out.setdefault(name, (start, lines[start:i]))
            name = None
    return sources[0], out, errors

def _emit(kind, lines):
    import cog  # the module cog provides while it runs a generator
    cog.out("".join(f"{l}\n" for l in [f"```{kind}"] + lines + ["```"]))

def _fail(what):
    import cog
    cog.error(f"{transcript.show(cog.inFile)}:{cog.firstLineNum}: error: {what}")

def _evidence(mode):
    """The transcripts of MODE's `+`-separated modes for this README's day, evidence/DAY/MODE.txt:
    an error where one is missing or records a failed run (a README quotes runs that passed)."""
    import cog
    day = os.path.dirname(os.path.abspath(cog.inFile))
    ev = os.path.join(os.path.dirname(os.path.dirname(day)), "evidence", os.path.basename(day))
    paths = [os.path.join(ev, f"{m}.txt") for m in mode.split("+")]
    for path in paths:
        if not os.path.exists(path):
            _fail(f"expected-output `{mode}`: no transcript {transcript.show(path)}")
        code = transcript.Transcript(path).value("exit code")
        if transcript.failed(path, int(code or 0)):
            _fail(f"expected-output `{mode}`: {transcript.show(path)} records a failed run (exit "
                  f"code {code}): a README quotes a run that passed")
    return paths

def output(mode, grep=None):
    """Writes the MODE transcript's lines from its first `|` line to its last (with GREP,
    a regex: every output line it matches) as a ```text block."""
    path = _evidence(mode)[0]
    t = transcript.Transcript(path)
    if grep is not None:
        want = [l for l in t.lines[t.header_len:] if re.search(grep, l)]
    else:
        idx = [i for i, l in enumerate(t.lines) if l.startswith("|")]
        want = t.lines[idx[0]:idx[-1] + 1] if idx else []
    if not want:
        _fail(f"expected-output `{mode}`: {transcript.show(path)} has no line to copy")
    _emit("text", want)

def median(modes, column, rows, sizes=None):
    """Writes a table: n, then for each (table kind: a caption's first word, row in ROWS) the median
    of COLUMN over the transcripts of the `+`-separated MODES, `median (a / b / c)`. With SIZES (a
    list of n) the block shows those n only and links the full table, evidence/DAY/medians.md,
    which the same call writes (under --check: an error where that file differs)."""
    import cog
    paths, vals = _evidence(modes), {}
    for path in paths:
        for t in transcript.Transcript(path).tables:
            for d in t.dicts():
                if d.get("row") in rows and transcript.number(d.get(column)) is not None:
                    vals.setdefault((int(d["n"]), t.caption.split(":")[0], d["row"]),
                                    []).append(d[column])
    cols = sorted({(k, r) for _, k, r in vals}, key=lambda c: (c[0] != "stream", rows.index(c[1])))
    head = ["| n | " + " | ".join(f"{k}: {r}" for k, r in cols) + " |",
            "|---" * (len(cols) + 1) + "|"]
    table = {}
    for n in sorted({n for n, _, _ in vals}):
        cells = [(sorted(vals.get((n, k, r), []), key=float), vals.get((n, k, r))) for k, r in cols]
        table[n] = f"| {n} | " + " | ".join(f"{c[len(c) // 2]} ({' / '.join(v)})" if
                                            len(c) == len(paths) else "-" for c, v in cells) + " |"
    if sizes is None:
        return _emit("text", head + list(table.values()))
    if [n for n in sizes if n not in table]:
        _fail(f"median: n = {', '.join(str(n) for n in sizes if n not in table)} is in no table "
              f"of `{modes}` (its sizes: {', '.join(map(str, table))})")
    _emit("text", head + [table[n] for n in sizes])
    out = os.path.join(os.path.dirname(paths[0]), "medians.md")
    day = os.path.basename(os.path.dirname(out))
    links = ", ".join(f"[{os.path.basename(p)}]({os.path.basename(p)})" for p in paths)
    page = "\n".join([f"# {day}: the median of `{column}` at every size", "",
                      f"Written by `tools/readme.py` from the `median` call in "
                      f"[code/{day}/README.md](../../code/{day}/README.md), which shows n = "
                      f"{', '.join(map(str, sizes))}. Each cell: the median over {links}, then "
                      "each value.", ""] + head + list(table.values())) + "\n"
    have = open(out, encoding="utf-8").read() if os.path.exists(out) else None
    if CHECK and have != page:
        _fail(f"median: {transcript.show(out)} is {'stale' if have else 'missing'}: run "
              "tools/readme.py to write it")
    elif have != page:
        with open(out, "w", encoding="utf-8") as f:
            f.write(page)
    cog.out(f"\nEvery size: [evidence/{day}/medians.md](../../evidence/{day}/medians.md)\n")

def snippet(name):
    """Writes the lines strictly between `// snippet: NAME` and `// end snippet` in the day's one
    .cu as a ```cuda block; an error if it is not there, marked twice, or quoted twice here."""
    import cog
    src, found, errors = regions(os.path.dirname(os.path.abspath(cog.inFile)))
    errors = [e for e in errors if f"`{name}`" in e]
    lines = transcript.read_lines(cog.inFile)
    twice = [i + 1 for i, l in enumerate(lines) if QUOTE.match(l) and QUOTE.match(l).group(1) ==
             name]
    if len(twice) > 1:
        errors.append(f"{transcript.show(cog.inFile)}:{twice[1]}: error: snippet `{name}` appears "
                      f"twice (first at line {twice[0]})")
    if name not in found:
        errors.append(f"{transcript.show(cog.inFile)}:{cog.firstLineNum}: error: unknown snippet "
                      f"`{name}`: " + (f"no `// snippet: {name}` in {os.path.basename(src)}"
                                       if src else "the day has no one .cu"))
    if errors:
        cog.error("\n".join(errors))
    _emit("cuda", found[name][1])

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; fail where out of date")
    ap.add_argument("paths", nargs="*", default=[ROOT])
    a = ap.parse_args(argv)
    global CHECK
    CHECK = a.check
    readmes = []
    for p in a.paths:
        if os.path.isdir(os.path.join(p, "code")):
            readmes += sorted(glob.glob(os.path.join(p, "code", "day*", "README.md")))
        elif os.path.isfile(p) or os.path.isfile(os.path.join(p, "README.md")):
            readmes.append(p if os.path.isfile(p) else os.path.join(p, "README.md"))
        else:
            ap.error(f"{p}: no such file or directory" if not os.path.exists(p) else
                     f"{p}: not a README.md, a day directory nor a repository root")
    bad, unquoted = [], []  # unquoted: DESIGN section 2, a region is marked only where quoted
    for r in readmes:
        lines = transcript.read_lines(r)
        bad += [f"{transcript.show(r)}:{i}: error: `{l.strip()}`: " + (
            "a marker from before cog: write it as a cog generator (CUDA-CODE-STYLE.md section 7)"
            if OLD.match(l) else 'write it `<!-- [[[cog snippet("NAME") ]]] -->`, the form the '
            "kernel finder reads") for i, l in enumerate(lines, 1)
            if OLD.match(l) or ("[[[cog" in l and "snippet(" in l and not QUOTE.match(l))]
        src, found, _ = regions(os.path.dirname(os.path.abspath(r)))
        unquoted += [f"{transcript.show(src)}:{line}: error: snippet `{n}` is quoted by no block "
                     f"of {transcript.show(r)}: quote it or drop its markers" for n, (line, _) in
                     found.items() if n not in {q for q, _, _ in quoted(lines)}]
    if bad:
        print("\n".join(bad) + f"\nFAILED: readme: {len(bad)} marker(s) cog would not check")
        return 1
    try:
        import cogapp
    except ImportError:
        print("SKIPPED: readme: cogapp is not installed here (python3 -m pip install -r "
              "tools/requirements.txt)")
        return 77
    tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rc = cogapp.Cog().main(["cog", "-I", tools, "-p", "from reduction.readme import *"] +
                           (["--check", "--diff"] if a.check else ["-r"]) +
                           [transcript.show(r) for r in readmes])
    print("\n".join(unquoted + [f"{'FAILED' if rc or unquoted else 'ok'}: readme: {len(readmes)} "
                                "README(s)" + (f", cog exit code {rc}: run tools/readme.py to "
                                               "regenerate" if rc else "") +
                                f", {len(unquoted)} snippet(s) quoted by no README" * bool(unquoted)
                                + ("" if rc or unquoted else ", every generated block current"
                                   if a.check else ", regenerated")]))
    return 1 if rc or unquoted else 0
