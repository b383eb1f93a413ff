#!/usr/bin/env python3
"""Write the module's notebook from the READMEs, or check that it still says what they say.

Usage: tools/notebook.py [--check] [ROOT]     (ROOT: the repository, by default)

notebooks/reduction-module.ipynb (for Colab or any Jupyter with a CUDA GPU): checks the GPU and
the toolkit and picks -arch=sm_XX from the device; gets the code (this checkout, or a clone);
for each day runs its README build block (the `<!-- build-line -->` block, with -arch=$ARCH) and
the extra runs its README names; copies every README kernel block into a %%writefile cell with
exactly what its `// Needs:` line names and a tiny main (the unit tests/host/check_sources.py
compiles) and compiles and runs it alone; and captures the learner's own run as a transcript in
the evidence format (tools/capture.py). Outputs are empty in the committed notebook.

--check (the host test host.notebook): the notebook is valid nbformat-4 JSON with no outputs, and
every cell equals what the READMEs give now (a drifted build line or kernel cell fails, named).
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "host"))
import check_sources  # noqa: E402  (the one way a README kernel becomes a unit that compiles alone)
import hostcheck  # noqa: E402

EXTRA_RUNS = {"day25-reduction-2": ["./reduction_2 --sweep", "./reduction_2 --in-flight"]}

SETUP = """\
# Where the code is: this notebook's own checkout if it runs inside one, else a clone of REPO_URL.
REPO_URL = "https://github.com/YOUR-ACCOUNT/reduction-module.git"  # set this on Colab
import os, pathlib, subprocess
here = pathlib.Path.cwd()
root = next((p for p in [here, *here.parents, here / "reduction-module"]
             if (p / "code" / "day25-reduction-2").is_dir()), None)
if root is None:  # not inside a checkout, and no clone from an earlier run of this cell
    subprocess.run(["git", "clone", "--depth", "1", REPO_URL, "reduction-module"], check=True)
    root = here / "reduction-module"
os.chdir(root)
os.makedirs("notebook-kernels", exist_ok=True)
print("repository:", root)"""

GPU = """\
# The GPU, the driver and the toolkit; -arch=sm_XX from the device's compute capability.
!nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
!nvcc --version | tail -n 2
cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                     capture_output=True, text=True, check=True).stdout.split()[0]
os.environ["ARCH"] = "sm_" + cap.replace(".", "")
print("building for", os.environ["ARCH"])"""

INTRO = """\
# Parallel reduction in CUDA C++ — days 24–28 and 39, on your GPU

Run the cells top to bottom (on Colab: Runtime → Change runtime type → a GPU, e.g. T4). Outside a
checkout of the repository, first set `REPO_URL` in the next cell to the repository to clone. Each
day's cell is its README's build line and run; the tables are the same kind as the README's, measured on
your card. Then every kernel the READMEs show is copied into a cell of its own, with exactly what
its `// Needs:` line names, and compiled alone. The last cell records your run as a transcript."""

TOOLKIT = """\
## GPU and toolkit

`-arch=sm_XX` is taken from the device (a T4 is `sm_75`). That matters on Colab: a runtime can
ship an `nvcc` newer than its driver. A binary built without `-arch`, or for another
architecture, carries only PTX for the card, which the driver must compile at launch, and an
older driver refuses it: every launch fails with `the provided PTX was compiled with an
unsupported toolchain`. Machine code for the card itself (`-arch=sm_75`) needs no such step."""


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


def cells(root):
    out = [cell("markdown", INTRO, None), cell("code", SETUP, {"kind": "setup"}),
           cell("markdown", TOOLKIT, None), cell("code", GPU, {"kind": "gpu"})]
    kernels = []
    for day_dir in sorted(glob.glob(os.path.join(root, "code", "day*"))):
        day = os.path.basename(day_dir)
        lines = hostcheck.read_lines(os.path.join(day_dir, "README.md"))
        build = build_block(lines)
        if not build:
            continue
        run = [l.replace("-arch=sm_75", "-arch=$ARCH") for l in build]
        out.append(cell("markdown", f"## {lines[0].lstrip('# ')}\n\nThe build block of "
                        f"`code/{day}/README.md`, for this GPU:", None))
        out.append(cell("code", "%%bash\nset -euo pipefail\n" + "\n".join(run),
                        {"kind": "build", "day": day}))
        if day in EXTRA_RUNS:
            out.append(cell("markdown", "The README's exercise and experiment: predict first (the "
                            "README asks), then run.", None))
            out.append(cell("code", "%%bash\nset -euo pipefail\n" + "\n".join(EXTRA_RUNS[day]),
                            {"kind": "extra", "day": day}))
        src = open(glob.glob(os.path.join(day_dir, "*.cu"))[0], encoding="utf-8").read()
        items = check_sources.top_level_items(src)
        report = hostcheck.Report("notebook")
        for i, line in enumerate(lines):
            m = check_sources.SNIPPET.match(line)
            block = m and hostcheck.fenced_block_after(lines, i)
            unit = block and check_sources.assemble(os.path.join(day_dir, "README.md"),
                                                    m.group(1), lines, *block, src, items, report)
            if unit:
                kernels.append((day, m.group(1), "\n".join(unit[0])))
    out.append(cell("markdown", "## Copy a kernel\n\nEach cell below is one kernel block of a "
                    "README with exactly what its `// Needs:` line names, and a tiny `main` that "
                    "launches it once on 4096 ones: paste any of them into your own notebook.",
                    None))
    for day, name, unit in kernels:
        path = f"notebook-kernels/{day}-{name}.cu"
        out.append(cell("code", f"%%writefile {path}\n{unit}",
                        {"kind": "kernel", "day": day, "snippet": name}))
        out.append(cell("code", f"%%bash\nnvcc -std=c++17 -O3 -arch=$ARCH -o {path[:-3]} {path} "
                        f"&& ./{path[:-3]}", {"kind": "kernel-run", "day": day, "snippet": name}))
    out.append(cell("markdown", "## Record your run\n\nThe same transcript format as "
                    "`evidence/`: the header (date, GPU, driver, CUDA, build line, sources, "
                    "command, exit code) and the output verbatim. A Colab runtime is recycled: download "
                    "`my-evidence/` (Files pane) before you leave. Contributions of a T4 run are "
                    "welcome; `tools/capture.py --help` lists the other modes.", None))
    out.append(cell("code", "%%bash\nset -euo pipefail\npython3 tools/capture.py --arch $ARCH "
                    "--out-dir my-evidence/day25-reduction-2 code/day25-reduction-2 default\n"
                    "cat my-evidence/day25-reduction-2/default-*.txt", {"kind": "capture"}))
    return out


def notebook(root):
    return {"cells": cells(root), "metadata": {
        "accelerator": "GPU", "colab": {"provenance": []},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def main(argv):
    root = next((a for a in argv if not a.startswith("--")), ROOT)
    path = os.path.join(root, "notebooks", "reduction-module.ipynb")
    want = notebook(root)
    if "--check" not in argv:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(want, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"notebook: wrote {os.path.relpath(path, root)} ({len(want['cells'])} cells)")
        return 0
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
            what = (exp[k] if k < len(exp) else got[k])["metadata"].get("reduction", {})
            report.error(path, 1, f"cell {k} ({what.get('kind', 'text')} {what.get('day', '')} "
                         f"{what.get('snippet', '')}".rstrip() + ") differs from what the READMEs "
                         "give now (its source, or outputs left in it): run tools/notebook.py")
    return report.finish(f"{len(exp)} cells, outputs cleared, every build line and kernel block "
                         "equal to the READMEs'")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
