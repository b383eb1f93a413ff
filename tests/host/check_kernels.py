#!/usr/bin/env python3
"""Every README kernel compiles alone with only what its `// Needs:` line names.

Usage: check_kernels.py [--nvcc NVCC] [--arch sm_75] [--run] ROOT|DAY_DIR ...

A README snippet block with a `__global__` kernel ends each kernel's comment with `// Needs: a, b,
<header>, ...`: what a learner pastes with it into a notebook cell. One translation unit is built:
<cuda_runtime.h>, <cstdio>, <cstdlib>, each <header>; the top-level definition in the day's .cu of
each name, and what those need in turn (a helper's own Needs line; else the top-level names its
text uses), never what the kernel uses but omits; the block verbatim; a main() launching each
kernel once on n = 4096 (<<<4, 256, 16 KiB>>>, or cudaLaunchCooperativeKernel on 4 blocks when it
calls this_grid()/grid.sync()); a kernel whose arguments are not derived is compiled only. It is
compiled alone (`nvcc -std=c++17 -O3 -arch=ARCH`) and, with --run (a GPU machine), run: exit 0.
Exit 77 when nvcc is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import hostcheck

SNIPPET = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
NEEDS = re.compile(r"^\s*//\s*Needs:(.*)$")
KERNEL = re.compile(r"\b__global__\s+(?:\w+\s+)*?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                    r"(\w+)\s*\(")
TEMPLATE = re.compile(r"template\s*<([^<>]*(?:<[^<>]*>[^<>]*)*)>\s*$")
DECORATION = re.compile(r"__launch_bounds__\s*\([^)]*\)|__attribute__\s*\(\(.*?\)\)"
                        r"|alignas\s*\([^)]*\)")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
N = 4096


def top_level_items(text):
    """[(start, end, names)] of the top-level items of TEXT: declarations, definitions, # lines."""
    code = hostcheck.strip_comments(text)
    items, i, start, depth = [], 0, None, 0
    while i < len(code):
        c = code[i]
        if start is None and c == "#":  # a preprocessor line, with its \ continuations
            j = re.compile(r"(?<!\\)\n|$").search(code, i).start()
            items.append((i, j, item_names(code[i:j])))
            i = j
            continue
        if start is None and not c.isspace():
            start = i
        depth += (c == "{") - (c == "}")
        end = c == ";" and depth == 0 and start is not None
        if c == "}" and depth == 0:  # a body ends: a function's, or `struct X {...};`
            head = code[start:i].split("{", 1)[0]
            semi = re.match(r"\s*;", code[i + 1:])
            end = bool(semi) or not ("=" in head or re.match(
                r"\s*(template\s*<.*?>\s*)?(typedef|struct|class|union|enum)\b", head, re.S))
            i += semi.end() if semi else 0
        if end:
            items.append((start, i + 1, item_names(code[start:i + 1])))
            start = None
        i += 1
    return items


def item_names(code):
    """The names (a tuple) that one top-level item defines."""
    if code.startswith("#"):
        return tuple(re.findall(r"^#\s*define\s+(\w+)", code))
    code = DECORATION.sub(" ", re.sub(r"^\s*template\s*<[^{;]*?>\s*(?=[A-Za-z_])", "", code))
    m = (re.match(r"\s*(?:namespace|using)\s+(\w+)\s*=", code)
         or re.match(r"\s*(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", code)
         or re.match(r"\s*typedef\b[^;]*?(\w+)\s*;", code))
    if m or re.match(r"\s*(static_assert|namespace|using|extern\s+\")", code):
        return (m.group(1),) if m else ()
    head = re.split(r"[={;]", code, 1)[0]
    if "(" in head:  # a function (or function template): the name before its first (
        return tuple(re.findall(r"(\w+)\s*$", head.split("(", 1)[0]))
    return tuple(m.group(1) for part in split_top(code.rstrip(";")) if (m := re.search(
        r"(\w+)\s*(?:\[[^\]]*\]\s*)*$", part.split("=")[0].split("{")[0])))


def split_top(s, sep=","):
    """S split at SEP outside (), <>, [], {}."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "(<[{"
        depth -= ch in ")>]}"
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def comment_above(lines, k):
    """The // lines directly above line index K (0-based), top to bottom."""
    j = k
    while j > 0 and lines[j - 1].lstrip().startswith("//"):
        j -= 1
    return lines[j:k]


def needs_of(comment_lines):
    """The items of the `// Needs:` lines among COMMENT_LINES ([] for `nothing`), or None. A
    Needs line continues on the comment lines after it that are indented past `//` by 2+ spaces."""
    text, cont = [], False
    for line in comment_lines:
        m = NEEDS.match(line) or (cont and re.match(r"^\s*//\s{2,}(\S.*)$", line))
        cont = bool(m)
        text += [m.group(1)] if m else []
    out = [t.group(1) for chunk in text for item in chunk.split(",")
           if (t := re.match(r"\s*(<[^>]+>|\w+)", item))]
    return [x for x in out if x != "nothing"] if out else None


MAIN = r"""
static void kcCheck(cudaError_t e) {
  if (e != cudaSuccess) { std::printf("CUDA error: %s\n", cudaGetErrorString(e)); std::exit(1); }
}
template <class T> static T *kcBuffer(size_t count, T fill = T()) {
  T *p = nullptr, *h = static_cast<T *>(std::calloc(count, sizeof(T)));
  for (size_t i = 0; i < count; ++i) { h[i] = fill; }
  kcCheck(cudaMalloc(&p, count * sizeof(T)));
  kcCheck(cudaMemcpy(p, h, count * sizeof(T), cudaMemcpyHostToDevice));
  std::free(h);
  return p;
}
int main() {"""


def launch_code(name, tparams, params, body, k):
    """C++ lines that launch kernel NAME once, or (None, why) when its arguments are not derived."""
    targs = []
    for t in split_top(tparams) if tparams is not None else []:
        if not (m := re.match(r"\s*(?:int|unsigned(?: int)?|size_t)\s+(\w+)\s*$", t)):
            return None, f"template parameter `{t.strip()}`"
        targs.append("256" if re.search(r"Thread|Block", m.group(1)) else "4")
    fn = name + (f"<{', '.join(targs)}>" if targs else "")
    decls = []
    for j, p in enumerate(x.strip() for x in split_top(params) if x.strip() not in ("", "void")):
        ty, pname = re.match(r"(.*?)\s*(\w+)$", p, re.S).groups()
        base = " ".join(re.sub(r"\b(const|__restrict__|volatile)\b|\*", " ", ty).split())
        if ty.count("*") == 1 and base:
            ones = base == "float" and "const" in ty
            init = f"kcBuffer<float>({N + 64}, 1.0f)" if ones else f"kcBuffer<{base}>(65536)"
        elif ty in ("float", "double"):
            init = "1.0f / 4096" if re.match(r"(h|dx|step)$", pname) else "0.0f"
        elif re.match(r"(unsigned\s+)?(int|long|long long|size_t|unsigned)$", ty) and \
                re.match(r"(n|count|num\w*|size|len\w*|elements)$", pname, re.I):
            init = str(N)
        else:
            return None, f"parameter `{p}`"
        decls.append(f"  {ty.replace('__restrict__', '').strip()} a{k}_{j} = {init};")
    args = [f"a{k}_{j}" for j in range(len(decls))]
    if re.search(r"\bthis_grid\s*\(|\bgrid\.sync\s*\(", body):
        launch = [f"  void *args{k}[] = {{{', '.join('&' + x for x in args) or 'nullptr'}}};",
                  f"  kcCheck(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>({fn}), "
                  f"dim3(4), dim3(256), args{k}, {N} * sizeof(float), 0));"]
    else:
        launch = [f"  {fn}<<<4, 256, {N} * sizeof(float)>>>({', '.join(args)});"]
    return decls + launch + ["  kcCheck(cudaGetLastError());",
                             "  kcCheck(cudaDeviceSynchronize());"], None


def closure(needs, own, src_text, by_name, report, readme, line):
    """The source items that NEEDS pull in (helpers' own Needs lines, names constants use)."""
    todo, chosen, headers = [x for x in needs if x not in own], set(), []
    while todo:
        nm = todo.pop()
        if nm.startswith("<"):
            headers.append(nm)
            continue
        if nm not in by_name:
            report.error(readme, line, f"`// Needs:` names `{nm}`, which the day's .cu does not "
                         "define at top level")
        for it in by_name.get(nm, []):
            if it not in chosen:
                chosen.add(it)
                got = needs_of(comment_above(src_text.splitlines(),
                                             hostcheck.line_of(src_text, it[0]) - 1))
                used = IDENT.findall(hostcheck.strip_comments(src_text[it[0]:it[1]]))
                todo += got if got is not None else [x for x in dict.fromkeys(used)
                                                     if x in by_name and x not in it[2]]
    return sorted(chosen), list(dict.fromkeys(headers))


def assemble(readme, name, lines, a, b, src, items, report):
    """The translation unit for one README block: None when it holds no kernel, False when a
    kernel has no Needs line (reported), else (unit lines, first block line in the unit, kernel
    matches, needs, README line of the first kernel). tools/notebook.py writes the same unit."""
    block = lines[a + 1:b]
    text = "\n".join(block) + "\n"
    code = hostcheck.strip_comments(text)
    kernels = list(KERNEL.finditer(code))
    if not kernels:
        return None
    launches, clines = [], code.splitlines()
    for k, m in enumerate(kernels):
        kl = hostcheck.line_of(code, m.start()) - 1
        first = kl - 1 if kl > 0 and TEMPLATE.search(clines[kl - 1].strip()) else kl
        if needs_of(comment_above(block, first)) is None:
            report.error(readme, a + 2 + kl, f"kernel `{m.group(1)}` (snippet `{name}`) has no "
                         "`// Needs: ...` line ending its comment")
            return False
        tm = TEMPLATE.search(code[:m.start()].rstrip()) if first != kl else None
        depth, j = 1, m.end()
        while depth:
            depth += (code[j] == "(") - (code[j] == ")")
            j += 1
        launch, why = launch_code(m.group(1), tm and tm.group(1), code[m.end():j - 1],
                                  code[j:].split("\n}", 1)[0], k)
        if launch is None:
            print(f"note: {hostcheck.show(readme)}:{a + 2 + kl}: kernel `{m.group(1)}`: "
                  f"compile-only ({why}: no argument derived)")
        launches += launch or []
    needs = needs_of(block) or []  # the block's helpers' Needs lines too
    own = {nm for _, _, names in top_level_items(text) for nm in names}
    by_name = {}
    for it in items:
        for nm in it[2]:
            by_name.setdefault(nm, []).append(it)
    kline = a + 2 + hostcheck.line_of(code, kernels[0].start()) - 1
    chosen, headers = closure(needs, own, src, by_name, report, readme, kline)
    out = ["#include <cuda_runtime.h>", "#include <cstdio>", "#include <cstdlib>"]
    out += [f"#include {h}" for h in headers] + [src[s:e] for s, e, _ in chosen]
    first_block_line = len("\n".join(out).splitlines()) + 1
    out += block + [MAIN] + launches + ['  std::printf("ok\\n");', "  return 0;", "}", ""]
    return out, first_block_line, kernels, needs, kline


def check_block(readme, name, lines, a, b, src, items, opts, report):
    """Compile (and with --run, run) one README kernel block alone. Returns 1 if it has a kernel."""
    unit = assemble(readme, name, lines, a, b, src, items, report)
    if not unit:
        return 0 if unit is None else 1
    out, first_block_line, kernels, needs, kline = unit
    block = lines[a + 1:b]
    tmp = tempfile.mkdtemp(prefix=f"check-kernels-{name}-")
    cu, exe = os.path.join(tmp, "x.cu"), os.path.join(tmp, "x")
    with open(cu, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    p = subprocess.run([opts.nvcc, "-std=c++17", "-O3", f"-arch={opts.arch}", "-o", exe, cu],
                       capture_output=True, text=True)
    kname = ", ".join(f"`{m.group(1)}`" for m in kernels)
    if p.returncode != 0:
        report.error(readme, kline, f"kernel {kname} (snippet `{name}`) does not compile alone "
                     f"with what its Needs line names ({', '.join(needs) or 'nothing'}); "
                     f"generated file {cu}:")
        for ln in (p.stdout + p.stderr).splitlines():
            m = re.match(r".*?x\.cu\((\d+)\): (.*)", ln)
            r = int(m.group(1)) - first_block_line if m else -1
            if "error" in ln:
                print(f"  {hostcheck.show(readme)}:{a + 2 + r}: nvcc: {m.group(2)}"
                      if 0 <= r < len(block) else f"  {ln}")
        return 1
    if opts.run and (r := subprocess.run([exe], capture_output=True, text=True)).returncode:
        report.error(readme, kline, f"kernel {kname} (snippet `{name}`) compiled alone but its "
                     f"run exited {r.returncode}: {(r.stdout + r.stderr).strip()}; "
                     f"generated file {cu}")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 1


def check_day(day_dir, opts, report):
    readme, sources = os.path.join(day_dir, "README.md"), hostcheck.day_sources(day_dir)
    if not os.path.isfile(readme) or len(sources) != 1:
        return 0  # check_snippets.py reports a README with snippets but not one .cu
    lines = hostcheck.read_lines(readme)
    with open(sources[0], encoding="utf-8", errors="replace") as f:
        src = f.read()
    items = top_level_items(src)
    return sum(check_block(readme, m.group(1), lines, *block, src, items, opts, report)
               for i, l in enumerate(lines) if (m := SNIPPET.match(l))
               and (block := hostcheck.fenced_block_after(lines, i)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    ap.add_argument("--arch", default="sm_75")
    ap.add_argument("--run", action="store_true", help="also run each binary (needs a GPU)")
    ap.add_argument("paths", nargs="+")
    opts = ap.parse_args(argv)
    if not shutil.which(opts.nvcc):
        print(f"SKIPPED: kernels: no nvcc ({opts.nvcc})")
        return hostcheck.SKIP
    report = hostcheck.Report("kernels")
    for a in opts.paths:
        if not os.path.isdir(a):
            report.error(a, 1, "not a directory (give the repository root or a day directory)")
    n = sum(check_day(d, opts, report) for a in opts.paths if os.path.isdir(a)
            for d in hostcheck.day_dirs_of(a))
    return report.finish(f"{n} README kernel block(s) compiled alone for {opts.arch}"
                         f"{' and ran' if opts.run else ''} with only what their Needs line names")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
