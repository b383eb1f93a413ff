"""Write the module's notebook from the READMEs and sources, check it, or execute it.

Usage: tools/notebook.py [ROOT]                    write ROOT/notebooks/reduction-module.ipynb
       tools/notebook.py --check [ROOT]            the host test host.notebook
       tools/notebook.py --execute DIR [--notebook NB] [--timeout S] [--gpu]

The notebook (for Colab or any Jupyter with a CUDA GPU) needs nothing beside it: "Run all" on a
fresh GPU runtime works with no edit. It checks the GPU and the toolkit; for every code/day*/
directory it carries the day's .cu exactly as committed in a %%writefile cell and runs the day's
README build block (`<!-- build-line -->`) with -arch for this GPU, and the extra runs its README
names; for every README kernel block it carries the unit sources.py builds (the block with exactly
what its Needs lines name, and a main that launches it as its `// Launch:` line says and checks it
exactly, got/want) and compiles and runs it; it carries tools/reduction/record.py (as record.py)
and records the learner's run of day 25 as a transcript with record.write, the one writer of the
evidence format. The fixed cells' text is notebook.md beside this file. The last cell clones the
repository, only when the learner sets REPO_URL there. Every code cell stands alone after a kernel
restart: bash cells find -arch themselves, the Python cell imports what it uses; they share only
files (the first code cell makes the folders). Outputs are empty in the committed file.

The cells are nbformat's (PyPI `nbformat`), validated and written by it. --check: the notebook
reads as nbformat 4 with no outputs, and every cell equals what the READMEs and files give now (a
drifted build line, source or kernel cell fails, named). Both exit 77 (`SKIPPED:`) without it.

--execute DIR: copies the notebook (NB, default the committed one) ALONE into an empty temporary
directory, runs it there with nbclient (a kernel on this Python, S seconds a cell, default 900),
and writes DIR/reduction-module.ipynb (the executed copy, outputs kept) and beside it
DIR/reduction-module.txt, a transcript (record.write) whose body is one line a cell and the
RESULT line. Exit 0 when every cell ran without error, 1 when one failed, 77 when nbclient or
ipykernel is missing, or with --gpu where no GPU is present (with the reason), 2 on bad usage.
"""
import argparse
import datetime
import glob
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time

from . import readme, record, sources, transcript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join("notebooks", "reduction-module.ipynb")
EXTRA_RUNS = {"day25-reduction-2": ["./reduction_2 --sweep", "./reduction_2 --in-flight"]}
ARCH = ("ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | "
        "tr -d .)  # this GPU's architecture, e.g. sm_75 on a T4")

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "notebook.md"),
          encoding="utf-8") as f:  # {name: the text of a fixed cell}
    TEXT = dict(re.findall(r"^<!-- cell: (\w+) -->\n(.*?)\n(?=<!-- cell: |\Z)", f.read(),
                           re.S | re.M))

def cell(kind, text, meta):
    from nbformat import v4
    new = v4.new_code_cell if kind == "code" else v4.new_markdown_cell
    return new(text, metadata={"reduction": meta} if meta else {})

def carried(root, rel, target=None):
    """A %%writefile cell holding ROOT/REL exactly, written to TARGET (default REL; IPython writes
    the cell's text after the first line, adding the final newline when the text lacks one)."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        text = f.read()
    return cell("code", f"%%writefile {target or rel}\n{text}", {"kind": "file", "path": rel})

def cells(root):
    day_dirs = sorted(d for d in glob.glob(os.path.join(root, "code", "day*")) if os.path.isdir(d))
    folders = sorted({f"code/{os.path.basename(d)}" for d in day_dirs} |
                     {"notebook-kernels", "my-evidence"})
    gpu = ("%%bash\n# The GPU, the driver and the toolkit, and the folders the cells below write.\n"
           "set -euo pipefail\nnvidia-smi --query-gpu=name,driver_version,compute_cap "
           f"--format=csv\nnvcc --version | tail -n 2\n{ARCH}\necho \"building for $ARCH\"\n"
           f"mkdir -p {' '.join(folders)}")
    out = [cell("markdown", TEXT["intro"], None), cell("markdown", TEXT["toolkit"], None),
           cell("code", gpu, {"kind": "gpu"})]
    kernels, capture_day = [], None
    for day_dir in day_dirs:
        day = os.path.basename(day_dir)
        if not os.path.isfile(os.path.join(day_dir, "README.md")):
            continue
        lines = transcript.read_lines(os.path.join(day_dir, "README.md"))
        srcs = sources.day_sources(day_dir)
        build = readme.build_block(os.path.join(day_dir, "README.md"))
        if build and srcs:
            run = [l.replace("-arch=sm_75", "-arch=$ARCH") for l in build]
            names = ", ".join(f"`{os.path.relpath(s, root)}`" for s in srcs)
            out.append(cell("markdown", f"## {lines[0].lstrip('# ')}\n\nThe day's program "
                            f"exactly as the repository has it ({names}), then the build block "
                            f"of `code/{day}/README.md` for this GPU:", None))
            out += [carried(root, os.path.relpath(s, root)) for s in srcs]
            out.append(cell("code", f"%%bash\nset -euo pipefail\n{ARCH}\n" + "\n".join(run),
                            {"kind": "build", "day": day}))
            if day in EXTRA_RUNS:
                out.append(cell("markdown", "The README's exercise and experiment: predict first "
                                "(the README asks), then run.", None))
                out.append(cell("code", "%%bash\nset -euo pipefail\n" + "\n".join(EXTRA_RUNS[day]),
                                {"kind": "extra", "day": day}))
            if day == "day25-reduction-2":
                capture_day = (day, build[0], os.path.relpath(srcs[0], root))
        if len(srcs) != 1:
            continue
        src = open(srcs[0], encoding="utf-8").read()
        items, report = sources.top_level_items(src), transcript.Report("notebook")
        for name, first, end in readme.quoted(lines):
            unit = sources.assemble(os.path.join(day_dir, "README.md"), name, lines, first - 1, end,
                                    src, items, report)
            if unit:
                kernels.append((day, name, "\n".join(unit[0])))
    if kernels:
        out.append(cell("markdown", TEXT["kernels"], None))
    for day, name, unit in kernels:
        path = f"notebook-kernels/{day}-{name}"
        out.append(cell("code", f"%%writefile {path}.cu\n{unit}",
                        {"kind": "kernel", "day": day, "snippet": name}))
        out.append(cell("code", f"%%bash\nset -euo pipefail\n{ARCH}\nnvcc -std=c++17 -O3 "
                        f"-arch=$ARCH -o {path} {path}.cu\n./{path}",
                        {"kind": "kernel-run", "day": day, "snippet": name}))
    if capture_day:
        day, build, src = capture_day
        exe = "./" + build.split("-o ", 1)[1].split()[0]
        out.append(cell("markdown", TEXT["capture_md"], None))
        out.append(carried(root, "tools/reduction/record.py", "record.py"))
        out.append(cell("code", TEXT["capture"].format(build=build, exe=exe, day=day, src=src),
                        {"kind": "capture", "day": day}))
    out += [cell("markdown", TEXT["clone_md"], None),
            cell("code", TEXT["clone"], {"kind": "clone"})]
    code = [c.source for c in out if c.cell_type == "code"]
    made = set(folders) | {m for t in code for m in re.findall(r"^%%writefile (\S+)", t, re.M)}
    for exe in {m for t in code for m in re.findall(r"-o (\S+)", t)}:
        if any(p == exe or p.startswith(exe + "/") for p in made):  # ld: "Is a directory"
            sys.exit(f"notebook: the build output {exe} is also a file or folder a cell writes")
    return out

def notebook(root):
    import nbformat
    nb = nbformat.v4.new_notebook(cells=cells(root), metadata={
        "accelerator": "GPU", "colab": {"provenance": []},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    for k, c in enumerate(nb.cells):  # ids that stay put (nbformat would draw random ones)
        c.id = f"cell-{k:02d}"
    nbformat.validate(nb)
    return nb

def check(root, path, want):
    import nbformat
    report = transcript.Report("notebook")
    try:
        have = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    except (OSError, ValueError) as e:  # nbformat's NotJSONError is a ValueError
        have = {"cells": []}
        report.error(path, 1, f"not a readable notebook: {e}")
    if dict(have, cells=None) != dict(want, cells=None):
        report.error(path, 1, "its nbformat version or metadata differ: run tools/notebook.py")
    for k, (got, exp) in enumerate(itertools.zip_longest(have.get("cells", []), want.cells)):
        if got != exp:
            report.error(path, 1, f"cell {k} ({describe(exp or got) or 'text'}) differs from what "
                         "the READMEs and files give now (its source, or outputs left in it): run "
                         "tools/notebook.py")
    files = sum(1 for c in want.cells if describe(c).startswith("file "))
    return report.finish(f"{len(want.cells)} cells, outputs cleared, every build line, carried file "
                         f"({files}) and kernel cell equal to what the READMEs and files give")

def describe(c):
    m = c.get("metadata", {}).get("reduction", {})
    return " ".join(filter(None, (m.get(k) for k in ("kind", "day", "snippet", "path"))))

def execute(root, nb_path, out_dir, timeout):
    """Runs NB_PATH alone in an empty directory; writes the executed copy and its transcript."""
    try:
        import nbclient
        import nbformat
        import ipykernel  # noqa: F401  (the kernel below runs this Python with ipykernel)
    except ImportError as e:
        print(f"SKIPPED: notebook --execute: {e.name} is not installed here (python3 -m pip "
              "install -r tools/requirements.txt)")
        return 77
    with tempfile.TemporaryDirectory(prefix="notebook-execute-") as work:
        run_dir, jupyter = os.path.join(work, "run"), os.path.join(work, "jupyter")
        spec = os.path.join(jupyter, "kernels", "python3")
        os.makedirs(run_dir), os.makedirs(spec)
        shutil.copy(nb_path, run_dir)  # the notebook alone: no checkout beside it
        with open(os.path.join(spec, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"], "display_name": "Python 3",
                       "language": "python", "env": {"PYTHONPATH": os.environ.get(
                           "PYTHONPATH", "")}}, f)
        os.environ["JUPYTER_PATH"] = jupyter + os.pathsep + os.environ.get("JUPYTER_PATH", "")
        os.environ.setdefault("JUPYTER_RUNTIME_DIR", os.path.join(work, "runtime"))
        os.environ.setdefault("IPYTHONDIR", os.path.join(work, "ipython"))
        nb = nbformat.read(os.path.join(run_dir, os.path.basename(nb_path)), as_version=4)
        started, t0 = datetime.datetime.now(datetime.timezone.utc), time.monotonic()
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": run_dir}}).execute()
        seconds = time.monotonic() - t0
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
    arch = record.query(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]).split()
    build = (f"nvcc -std=c++17 -O3 -arch=sm_{arch[0].replace('.', '') if arch else 'XX'} "
             "(each build and kernel cell's own line)")
    name = os.path.splitext(os.path.basename(nb_path))[0]
    ran = sum(1 for c in nb.cells if c.cell_type == "code")
    body = [f"notebook {os.path.relpath(nb_path, root)}, executed in an empty directory of its "
            f"own by nbclient {nbclient.__version__} (Python {sys.version.split()[0]}, {timeout} s a "
            f"cell) in {seconds:.0f} s"] + log
    body.append(f"RESULT: FAIL ({failed} of {ran} code cells failed)" if failed else
                f"RESULT: PASS ({ran} code cells ran, {passes} printed RESULT: PASS)")
    # The executed copy first, under a temporary name: the transcript names its sha256.
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, f".{name}-executing.ipynb")
    nbformat.write(nb, tmp)
    sha = hashlib.sha256(open(tmp, "rb").read()).hexdigest()
    body.insert(1, f"executed copy: the .ipynb beside this file, sha256={sha}")
    path = record.write(out_dir, name, started, build, [os.path.relpath(nb_path, root)],
                        f"tools/notebook.py --execute DIR --notebook {os.path.relpath(nb_path, root)}",
                        int(bool(failed)), "\n".join(body) + "\n", root=root)
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
        if a.gpu and not record.gpu_present():
            print("SKIPPED: notebook --execute --gpu: no CUDA device on this machine (nvidia-smi "
                  "lists no GPU); this test runs on a GPU runner")
            return 77
        return execute(a.root, os.path.abspath(nb), os.path.abspath(a.execute), a.timeout)
    try:
        import nbformat
    except ImportError:
        print("SKIPPED: notebook: nbformat is not installed here (python3 -m pip install -r "
              "tools/requirements.txt)")
        return 77
    want = notebook(a.root)
    if a.check:
        return check(a.root, path, want)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    nbformat.write(want, path)
    print(f"notebook: wrote {os.path.relpath(path, a.root)} ({len(want.cells)} cells)")
    return 0
