#!/usr/bin/env python3
"""Write the module's notebook from the READMEs and sources, check it, or execute it.

Usage: tools/notebook.py [ROOT]                    write ROOT/notebooks/reduction-module.ipynb
       tools/notebook.py --check [ROOT]            the host test host.notebook
       tools/notebook.py --execute DIR [--notebook NB] [--timeout S] [--gpu]

The notebook (for Colab or any Jupyter with a CUDA GPU) needs nothing beside it: "Run all" on a
fresh GPU runtime works with no edit. It checks the GPU and the toolkit; for every code/day*/
directory it carries the day's .cu exactly as committed in a %%writefile cell and runs the day's
README build block (`<!-- build-line -->`) with -arch for this GPU, and the extra runs its README
names; for every README kernel block it carries the unit tests/host/check_sources.py builds (the
block with exactly what its Needs lines name, and a main that launches it as its `// Launch:` line
says and checks it exactly, got/want) and compiles and runs it; it carries tools/capture.py (and
the tools it imports) and records the learner's run of day 25 as a transcript in the evidence
format with capture.write, the one writer of that format. A clone of the repository is made only
in the last cell, and only when the learner sets REPO_URL there. Every code cell stands alone after
a kernel restart: bash cells find -arch themselves, the Python cell imports what it uses; they share
only files (the folders are made by the first code cell). Outputs are empty in the committed file.

--check: the notebook is valid nbformat-4 JSON with no outputs, and every cell equals what the
READMEs and files give now (a drifted build line, source or kernel cell fails, named).

--execute DIR: copies the notebook (NB, default the committed one) ALONE into an empty temporary
directory, runs it there with nbclient (a kernel on this Python, S seconds a cell, default 900),
and writes DIR/reduction-module-DATE-GPU.ipynb (the executed copy, outputs kept) and beside it
DIR/reduction-module-DATE-GPU.txt, a transcript (capture.write: date, GPU, driver, CUDA, build,
the notebook's sha256 and fingerprint, command, exit code) whose body is one line a cell and the
RESULT line. Exit 0 when every cell ran without error, 1 when one failed, 77 when nbclient or
ipykernel is missing, or with --gpu where no GPU is present (with the reason), 2 on bad usage.
"""
import argparse
import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "host"))
import check_sources  # noqa: E402  (the one way a README kernel becomes a unit with its check)
import hostcheck  # noqa: E402

NOTEBOOK = os.path.join("notebooks", "reduction-module.ipynb")
EXTRA_RUNS = {"day25-reduction-2": ["./reduction_2 --sweep", "./reduction_2 --in-flight"]}
ARCH = ("ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | "
        "tr -d .)  # this GPU's architecture, e.g. sm_75 on a T4")

INTRO = """\
# Parallel reduction in CUDA C++ — days 24–28 and 39, on your GPU

This notebook carries everything it runs: choose a GPU runtime (on Colab: Runtime → Change runtime
type → T4 GPU) and **Run all**; nothing needs to be filled in or cloned. For each day it writes the
day's `.cu` exactly as the repository has it and runs the day's README build line for your card,
so the tables are the README's kind, measured on your GPU. Then every kernel the READMEs show gets
a cell of its own: the kernel with exactly what its `// Needs:` line names, and a `main` that
launches it as its `// Launch:` line says, twice, on whole numbers 0..6 and compares what it
leaves with the exact answer, printing got and want. Edit a kernel there and run its two cells: a
kernel that breaks says so (`CHECK FAILED`, and the cell fails). The last cells record your run as
a transcript in the repository's evidence format and, only if you ask, clone the repository.

Cells share files only (no Python variables): after a restart, run any cell again, as long as the
first code cell below and the cell that writes its file have run once in this runtime."""

TOOLKIT = """\
## GPU and toolkit

Every bash cell takes `-arch=sm_XX` from the device (a T4 is `sm_75`). That matters on Colab: a
runtime can ship an `nvcc` newer than its driver. Machine code runs on cards of its own major
version with an equal or higher minor one (`sm_70` code runs on a T4, 7.5); a binary built without
`-arch` (an older default) has no machine code the card can run, only PTX, which the driver must
compile at launch, and an older driver refuses it: every launch fails
with `the provided PTX was compiled with an unsupported toolchain`. Machine code for the card
itself (`-arch=sm_75`) needs no such step."""

KERNELS = """\
## Copy a kernel

Each pair of cells below is one kernel block of a README: the first writes the block with exactly
what its `// Needs:` line names (the day's definitions, copied from its `.cu`) and a check, the
second compiles and runs it. The check's `main` uses the names of the `// Launch:` line: `in` (n
input floats, whole numbers 0..6, so every sum is exact in any order and a wrong element shows),
`n`, `partials` (one float a block, NaN before each launch), `result` (one float, 0 before each
launch), `ticket` (0 before the first launch only), `want` (the exact answer, added on the host);
`cooperative` means `cudaLaunchCooperativeKernel`, grid `resident` as many blocks as the GPU holds
at once. It launches twice and prints got and want for each launch; `RESULT: PASS` or the cell
fails. Paste any of them into your own notebook."""

CAPTURE_MD = """\
## Record your run

The same transcript format as the repository's `evidence/`: a header (date, GPU, driver, CUDA,
build line, the source's sha256 and fingerprint, command, exit code), then the output verbatim,
written by the repository's own `tools/capture.py`, which the next cells carry. A Colab runtime is
recycled: download `my-evidence/` (Files pane) before you leave. A T4 transcript is welcome in the
repository."""

CAPTURE = """\
# Build day 25 with its README line for this GPU, run it, and write the transcript with
# capture.write (tools/capture.py, written by the cells above): the format's one writer.
import datetime, os, subprocess, sys
sys.path.insert(0, "tools")
import capture

cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                     capture_output=True, text=True, check=True).stdout.split()[0]
build = {build!r}.replace("-arch=sm_75", "-arch=sm_" + cap.replace(".", ""))
subprocess.run(build.split(), check=True)
started = datetime.datetime.now(datetime.timezone.utc)
run = subprocess.run([{exe!r}], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
path = capture.write("my-evidence/{day}", "default", started, build, [{src!r}], {exe!r},
                     run.returncode, run.stdout.decode("utf-8", errors="replace"))
print(open(path, encoding="utf-8").read())
print("wrote", path)
if run.returncode:
    raise SystemExit(f"the run exited {{run.returncode}}")"""

CLONE_MD = """\
## The whole repository (optional)

Everything above ran from what this notebook carries. To work in the repository itself (its test
programs, the CMake build and tests, the evidence), set `REPO_URL` in the next cell to its clone
URL and run the cell; left empty, the cell does nothing."""

CLONE = """\
REPO_URL = ""  # the repository's clone URL; empty: nothing is cloned
import os, subprocess
if not REPO_URL:
    print("REPO_URL is empty: nothing cloned (the cells above carry everything they ran)")
elif os.path.isdir("reduction-module"):
    print("reduction-module/ is already here")
else:
    subprocess.run(["git", "clone", "--depth", "1", REPO_URL, "reduction-module"], check=True)"""


def cell(kind, text, meta):
    c = {"cell_type": kind, "metadata": {"reduction": meta} if meta else {},
         "source": text.splitlines(keepends=True)}
    if kind == "code":
        c.update(execution_count=None, outputs=[])
    return c


def build_block(readme_lines):
    for i, line in enumerate(readme_lines):
        if line.strip() == "<!-- build-line -->":
            a, b = hostcheck.fenced_block_after(readme_lines, i)
            return [l for l in readme_lines[a + 1:b] if l.strip()]
    return None


def carried(root, rel):
    """A %%writefile cell holding ROOT/REL exactly (IPython writes the cell's text after the first
    line, adding the final newline when the text lacks one)."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        text = f.read()
    return cell("code", f"%%writefile {rel}\n{text}", {"kind": "file", "path": rel})


def tools_of(root, name, seen=None):
    """tools/NAME.py and, in turn, the tools/*.py it imports."""
    seen = [] if seen is None else seen
    if name in seen or not os.path.isfile(os.path.join(root, "tools", name + ".py")):
        return seen
    seen.append(name)
    text = open(os.path.join(root, "tools", name + ".py"), encoding="utf-8").read()
    for m in re.finditer(r"^(?:from|import)\s+(\w+)", text, re.M):
        tools_of(root, m.group(1), seen)
    return seen


def cells(root):
    day_dirs = sorted(d for d in glob.glob(os.path.join(root, "code", "day*")) if os.path.isdir(d))
    tools = tools_of(root, "capture")
    folders = sorted({f"code/{os.path.basename(d)}" for d in day_dirs} |
                     {"notebook-kernels", "my-evidence"} | ({"tools"} if tools else set()))
    gpu = ("%%bash\n# The GPU, the driver and the toolkit, and the folders the cells below write.\n"
           "set -euo pipefail\nnvidia-smi --query-gpu=name,driver_version,compute_cap "
           f"--format=csv\nnvcc --version | tail -n 2\n{ARCH}\necho \"building for $ARCH\"\n"
           f"mkdir -p {' '.join(folders)}")
    out = [cell("markdown", INTRO, None), cell("markdown", TOOLKIT, None),
           cell("code", gpu, {"kind": "gpu"})]
    kernels, capture_day = [], None
    for day_dir in day_dirs:
        day = os.path.basename(day_dir)
        if not os.path.isfile(os.path.join(day_dir, "README.md")):
            continue
        lines = hostcheck.read_lines(os.path.join(day_dir, "README.md"))
        sources = hostcheck.day_sources(day_dir)
        build = build_block(lines)
        if build and sources:
            run = [l.replace("-arch=sm_75", "-arch=$ARCH") for l in build]
            names = ", ".join(f"`{os.path.relpath(s, root)}`" for s in sources)
            out.append(cell("markdown", f"## {lines[0].lstrip('# ')}\n\nThe day's program "
                            f"exactly as the repository has it ({names}), then the build block "
                            f"of `code/{day}/README.md` for this GPU:", None))
            out += [carried(root, os.path.relpath(s, root)) for s in sources]
            out.append(cell("code", f"%%bash\nset -euo pipefail\n{ARCH}\n" + "\n".join(run),
                            {"kind": "build", "day": day}))
            if day in EXTRA_RUNS:
                out.append(cell("markdown", "The README's exercise and experiment: predict first "
                                "(the README asks), then run.", None))
                out.append(cell("code", "%%bash\nset -euo pipefail\n" + "\n".join(EXTRA_RUNS[day]),
                                {"kind": "extra", "day": day}))
            if day == "day25-reduction-2":
                capture_day = (day, build[0], os.path.relpath(sources[0], root))
        if len(sources) != 1:
            continue
        src = open(sources[0], encoding="utf-8").read()
        items = check_sources.top_level_items(src)
        report = hostcheck.Report("notebook")
        for i, line in enumerate(lines):
            m = check_sources.SNIPPET.match(line)
            block = m and hostcheck.fenced_block_after(lines, i)
            unit = block and check_sources.assemble(os.path.join(day_dir, "README.md"),
                                                    m.group(1), lines, *block, src, items, report)
            if unit:
                kernels.append((day, m.group(1), "\n".join(unit[0])))
    if kernels:
        out.append(cell("markdown", KERNELS, None))
    for day, name, unit in kernels:
        path = f"notebook-kernels/{day}-{name}"
        out.append(cell("code", f"%%writefile {path}.cu\n{unit}",
                        {"kind": "kernel", "day": day, "snippet": name}))
        out.append(cell("code", f"%%bash\nset -euo pipefail\n{ARCH}\nnvcc -std=c++17 -O3 "
                        f"-arch=$ARCH -o {path} {path}.cu\n./{path}",
                        {"kind": "kernel-run", "day": day, "snippet": name}))
    if capture_day and tools:
        day, build, src = capture_day
        exe = "./" + build.split("-o ", 1)[1].split()[0]
        out.append(cell("markdown", CAPTURE_MD, None))
        out += [carried(root, f"tools/{t}.py") for t in sorted(tools)]
        out.append(cell("code", CAPTURE.format(build=build, exe=exe, day=day, src=src),
                        {"kind": "capture", "day": day}))
    out += [cell("markdown", CLONE_MD, None), cell("code", CLONE, {"kind": "clone"})]
    return out


def notebook(root):
    out = cells(root)
    for k, c in enumerate(out):  # nbformat 4.5: every cell has an id
        c["id"] = f"cell-{k:02d}"
    return {"cells": out, "metadata": {
        "accelerator": "GPU", "colab": {"provenance": []},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def check(root, path, want):
    report = hostcheck.Report("notebook")
    try:
        have = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        have = {"cells": []}
        report.error(path, 1, f"not a readable notebook: {e}")
    if {k: v for k, v in have.items() if k != "cells"} != {k: v for k, v in want.items()
                                                           if k != "cells"}:
        report.error(path, 1, "its nbformat version or metadata differ: run tools/notebook.py")
    got, exp = have.get("cells", []), want["cells"]
    for k in range(max(len(got), len(exp))):
        if (got[k] if k < len(got) else None) != (exp[k] if k < len(exp) else None):
            what = describe(exp[k] if k < len(exp) else got[k]) or "text"
            report.error(path, 1, f"cell {k} ({what}) differs from what the READMEs and files "
                         "give now (its source, or outputs left in it): run tools/notebook.py")
    files = sum(1 for c in exp if c["metadata"].get("reduction", {}).get("kind") == "file")
    return report.finish(f"{len(exp)} cells, outputs cleared, every build line, carried file "
                         f"({files}) and kernel cell equal to what the READMEs and files give")


def describe(c):
    m = c.get("metadata", {}).get("reduction", {})
    return " ".join(x for x in (m.get("kind"), m.get("day"), m.get("snippet"), m.get("path"))
                    if x)


def execute(root, nb_path, out_dir, timeout):
    """Runs NB_PATH alone in an empty directory; writes the executed copy and its transcript."""
    try:
        import nbclient
        import nbformat
        import ipykernel  # noqa: F401  (the kernel below runs this Python with ipykernel)
    except ImportError as e:
        print(f"SKIPPED: notebook --execute: {e.name} is not installed here (python3 -m pip "
              "install -r tools/requirements.txt)")
        return hostcheck.SKIP
    sys.path.insert(0, os.path.join(root, "tools"))
    import capture  # the one transcript writer

    work = tempfile.mkdtemp(prefix="notebook-execute-")
    try:
        run_dir, jupyter = os.path.join(work, "run"), os.path.join(work, "jupyter")
        os.makedirs(run_dir)
        shutil.copy(nb_path, run_dir)  # the notebook alone: no checkout beside it
        spec = os.path.join(jupyter, "kernels", "python3")
        os.makedirs(spec)
        with open(os.path.join(spec, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"], "display_name": "Python 3",
                       "language": "python", "env": {"PYTHONPATH": os.environ.get(
                           "PYTHONPATH", "")}}, f)
        os.environ["JUPYTER_PATH"] = jupyter + os.pathsep + os.environ.get("JUPYTER_PATH", "")
        os.environ.setdefault("JUPYTER_RUNTIME_DIR", os.path.join(work, "runtime"))
        os.environ.setdefault("IPYTHONDIR", os.path.join(work, "ipython"))
        nb = nbformat.read(os.path.join(run_dir, os.path.basename(nb_path)), as_version=4)
        started = datetime.datetime.now(datetime.timezone.utc)
        t0 = time.monotonic()
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": run_dir}}).execute()
        seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log, failed, passes = [], 0, 0
    for k, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream")
        errors = [o for o in c.outputs if o.get("output_type") == "error"]
        results = [l for l in text.splitlines() if l.startswith(("RESULT: ", "CHECK FAILED"))]
        failed += bool(errors)
        passes += sum(l.startswith("RESULT: PASS") for l in results)
        verdict = f"FAILED: {errors[0].get('ename')}" if errors else "ran"
        log.append(f"cell {k:2d} ({describe(c)}): {verdict}" +
                   (f"; {results[-1]}" if results else ""))
    arch = capture.query(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]).split()
    build = (f"nvcc -std=c++17 -O3 -arch=sm_{arch[0].replace('.', '') if arch else 'XX'} "
             "(each build and kernel cell's own line)")
    name = os.path.splitext(os.path.basename(nb_path))[0]
    ran = sum(1 for c in nb.cells if c.cell_type == "code")
    body = [f"notebook {os.path.relpath(nb_path, root)}, executed alone in an empty directory by "
            f"nbclient {nbclient.__version__} (Python {sys.version.split()[0]}, {timeout} s a "
            f"cell) in {seconds:.0f} s"] + log
    body.append(f"RESULT: FAIL ({failed} of {ran} code cells failed)" if failed else
                f"RESULT: PASS ({ran} code cells ran, {passes} printed RESULT: PASS)")
    # The executed copy first, under a temporary name: the transcript names its sha256.
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, f".{name}-executing.ipynb")
    nbformat.write(nb, tmp)
    sha = hashlib.sha256(open(tmp, "rb").read()).hexdigest()
    body.insert(1, f"executed copy: the .ipynb beside this file, sha256={sha}")
    path = capture.write(out_dir, name, started, build, [os.path.relpath(nb_path, root)],
                         f"tools/notebook.py --execute DIR --notebook {os.path.relpath(nb_path, root)}",
                         int(bool(failed)), "\n".join(body) + "\n")
    os.replace(tmp, path[:-4] + ".ipynb")
    print("\n".join(body))
    print(f"notebook: wrote {path} and {os.path.basename(path[:-4])}.ipynb")
    return 1 if failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=ROOT)
    ap.add_argument("--check", action="store_true", help="the host test: change nothing")
    ap.add_argument("--execute", metavar="DIR", help="run the notebook alone; results into DIR")
    ap.add_argument("--notebook", help="with --execute: this notebook (default: ROOT's)")
    ap.add_argument("--timeout", type=int, default=900, help="with --execute: seconds a cell")
    ap.add_argument("--gpu", action="store_true", help="with --execute: skip (77) without a GPU")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.root):
        ap.error(f"{a.root}: no such file or directory")
    path = os.path.join(a.root, NOTEBOOK)
    if a.execute:
        nb = a.notebook or path
        if not os.path.isfile(nb):
            ap.error(f"--notebook {nb}: no such file")
        if a.gpu and not check_sources.gpu_present():
            print("SKIPPED: notebook --execute --gpu: no CUDA device on this machine (nvidia-smi "
                  "lists no GPU); this test runs on a GPU runner")
            return hostcheck.SKIP
        return execute(a.root, os.path.abspath(nb), os.path.abspath(a.execute), a.timeout)
    want = notebook(a.root)
    if a.check:
        return check(a.root, path, want)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(want, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"notebook: wrote {os.path.relpath(path, a.root)} ({len(want['cells'])} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
