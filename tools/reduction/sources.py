"""A day's source keeps the module's rules: read as text and compiled by nvcc (no GPU needed).

Usage: tools/sources.py [--nvcc NVCC] [--rules R,R] [--run] ROOT|DAY_DIR|FILE.cu ...
  ROOT: every code/day*/; DAY_DIR: its .cu, README and runs.txt; FILE.cu: that file. The rules:

self-contained: only C++17 standard and CUDA-toolkit headers (`#include "..."` and C names such as
  <stdio.h> are faults), its own `#define CUDA_CHECK(` and a definition of `timeKernel`
  (CUDA-CODE-STYLE.md sections 1, 3, 5).
masks: the mask of every warp-synchronous call (__shfl*_sync, __reduce_*_sync, __ballot_sync,
  __any/__all/__uni_sync, __match_*_sync, __syncwarp given one) is a name bound to the full warp,
  `constexpr unsigned int NAME = 0xffffffffu;`, or a value __ballot_sync or __activemask computed
  in the same function: no sanitizer sees a mask naming fewer lanes than run the call (section 8).
comments: the header (the comment lines before the code) at most 20 lines; a kernel's comment at
  most 8 besides its Launch, Needs and ptx lines and snippet markers; a day's runs.txt at most 3
  comment lines (DESIGN.md section 2).
ptx: a `// ptx: TOKENS` line in the comment directly above a kernel (above its template line)
  claims what its machine code holds: v4-loads (ld.global...v4 of 32-bit words), shfl (shfl.sync),
  atom (atom.* or red.*), in every .entry of the kernel (each template instance, with the .func
  bodies it calls) of `nvcc -std=c++17 -O3 -arch=sm_90 -ptx`. `volatile` appears only between
  `// race exhibit: WHY` and `// end race exhibit` (paired, not nested, the file mentions
  --race-demo), and a kernel whose PTX has ld/st.volatile.shared is inside one (section 8).
kernels: every README kernel block compiles alone (sm_75) with what its `// Needs: a, b, <header>`
  lines name (continued on `//` lines indented 2+ more), and each Needs line names all that its
  names need in turn: a learner copies exactly what the line says. Each kernel's comment has one
  `// Launch:` line (LAUNCH_FORM, below); the unit's main launches the kernel so, twice, on an
  exact input and compares what it leaves with the exact answer (got/want; exit 1 on a mismatch).
  With --run (a GPU; exit 77 where none) each unit runs too. tools/notebook.py carries the units.
paste: a day README's ```cuda, ```cpp and ```c++ blocks, in order after the standard headers
  (PRELUDE), compile as one file: `nvcc -std=c++17 -arch=sm_75 -x cu -c`, with no output.

Exit 0; 1 on faults (one `FILE:LINE: error:` line each); 77 when nvcc is missing (the rules that
need none are still checked, and their faults still fail).
"""
import argparse
import glob
import os
import re
import shutil
import string
import subprocess
import tempfile

from . import record, transcript
from .readme import quoted as readme_quotes
from .transcript import Report

RULES = ("self-contained", "masks", "comments", "ptx", "kernels", "paste")
KERNEL = re.compile(r"\b__global__\s+(?:(?:__launch_bounds__\s*\([^)]*\)|\w+)\s+)*?void\s+"
                    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")

def line_of(text, offset):
    """The 1-based line of TEXT that character OFFSET is on."""
    return text.count("\n", 0, offset) + 1

def strip_comments(text, blank_strings=True):
    """TEXT with comments (and, if BLANK_STRINGS, the insides of literals) blanked: every offset
    and line number stays where it was."""
    return "".join(re.sub(r"[^\n]", " ", t) if k == "comment" else
                   t[0] + " " * (len(t) - 2) + t[-1] if k == "literal" and blank_strings and
                   len(t) > 1 else t for k, t in record.segments(text))

def day_sources(day_dir):
    """The .cu files of DAY_DIR, sorted."""
    return sorted(glob.glob(os.path.join(day_dir, "*.cu")))

def day_dirs_of(arg):
    """Day directories named by ARG: every code/day*/ of a repository root, or ARG itself."""
    arg = os.path.abspath(arg)
    if os.path.isdir(os.path.join(arg, "code")) and not os.path.basename(arg).startswith("day"):
        return sorted(d for d in glob.glob(os.path.join(arg, "code", "day*")) if os.path.isdir(d))
    return [arg]

def kernels_in(code):
    """[(match, line, first line of its declaration: its template line)] of CODE's kernels."""
    lines, out = code.splitlines(), []
    for m in KERNEL.finditer(code):
        line = first = line_of(code, m.start())
        while first > 1 and lines[first - 2].strip().startswith("template"):
            first -= 1
        out.append((m, line, first))
    return out

def comment_above(lines, first):
    """(index, text) of the // lines directly above 1-based line FIRST, top to bottom."""
    j = first - 1
    while j > 0 and lines[j - 1].lstrip().startswith("//"):
        j -= 1
    return list(enumerate(lines[j:first - 1], j))

# --- self-contained ----------------------------------------------------------------------------
STD_HEADERS = set("""
algorithm any array atomic bitset cassert cctype cerrno cfenv cfloat charconv chrono cinttypes
climits clocale cmath codecvt complex condition_variable csetjmp csignal cstdarg cstddef cstdint
cstdio cstdlib cstring ctime cuchar cwchar cwctype deque exception execution filesystem
forward_list fstream functional future initializer_list iomanip ios iosfwd iostream istream
iterator limits list locale map memory memory_resource mutex new numeric optional ostream queue
random ratio regex scoped_allocator set shared_mutex sstream stack stdexcept streambuf string
string_view system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set
utility valarray variant vector
""".split())
CUDA_HEADERS = set("""
cuda_runtime.h cuda_runtime_api.h cuda.h cuda_fp16.h cuda_bf16.h cuda_fp8.h cuda_pipeline.h
cuda_awbarrier.h cuda_occupancy.h cuda_profiler_api.h device_launch_parameters.h
cooperative_groups.h vector_types.h vector_functions.h driver_types.h curand_kernel.h
""".split())
CUDA_DIRS = ("cuda/", "cub/", "thrust/", "nv/", "cooperative_groups/", "nvtx3/")  # CCCL and co.
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]*)[>"]', re.M)
NOT_A_TYPE = {"return", "else", "do", "case", "throw", "co_return", "sizeof", "decltype"}

def defines_time_kernel(code):
    """True when CODE (comments blanked) defines timeKernel: a lambda bound to the name, or the
    name after a type (not after `return`, `=`, `(`...) whose `(...)` is followed by its body."""
    if re.search(r"\btimeKernel\s*=\s*\[", code):
        return True
    for m in re.finditer(r"(\w+|[>&*\]])\s*\btimeKernel\s*\(", code):
        depth, j = 0, m.end() - 1
        while j < len(code) and (depth := depth + (code[j] == "(") - (code[j] == ")")):
            j += 1
        if m.group(1) not in NOT_A_TYPE and re.match(r"\s*(?:const\b|noexcept\b|->[^{;]*)*\s*\{",
                                                     code[j + 1:]):
            return True
    return False

def self_contained(path, text, code, opts, report):
    for m in INCLUDE.finditer(strip_comments(text, blank_strings=False)):
        line, name = line_of(code, m.start()), m.group(2).strip()
        if m.group(1) == '"':
            report.error(path, line, f'#include "{name}": a day file includes no project header; '
                         "copy what it needs into the file (CUDA-CODE-STYLE.md section 1)")
        elif name.endswith(".h") and "c" + name[:-2] in STD_HEADERS:
            report.error(path, line, f"#include <{name}>: use the C++ header <c{name[:-2]}>")
        elif not (name in STD_HEADERS or name in CUDA_HEADERS or name.startswith(CUDA_DIRS)):
            report.error(path, line, f"#include <{name}>: not a C++17 standard header nor a "
                         "CUDA-toolkit header (tools/reduction/sources.py lists those)")
    if not re.search(r"^[ \t]*#[ \t]*define[ \t]+CUDA_CHECK\(", code, re.M):
        report.error(path, 1, "no `#define CUDA_CHECK(call)`: each day defines its own "
                     "(CUDA-CODE-STYLE.md section 3)")
    if not defines_time_kernel(code):
        use = re.search(r"\btimeKernel\b", code)
        what = "names timeKernel but never defines it" if use else "defines no timeKernel"
        report.error(path, line_of(code, use.start()) if use else 1, f"{what}: each day "
                     "defines its own timeKernel function (CUDA-CODE-STYLE.md section 5)")

# --- masks ---------------------------------------------------------------------------------------
WARP_CALL = re.compile(r"\b(__shfl(?:_up|_down|_xor)?_sync|__reduce_(?:add|min|max|and|or|xor)_sync"
                       r"|__(?:ballot|any|all|uni)_sync|__match_(?:any|all)_sync|__syncwarp)\s*\(")
FULL_MASK = re.compile(r"\bconstexpr\s+(?:unsigned(?:\s+int)?|(?:std::)?uint32_t)\s+(\w+)\s*=\s*"
                       r"0[xX][fF]{8}[uU]?\s*;")
COMPUTED = r"(?:__ballot_sync|__activemask)\s*\("

def masks(path, text, code, opts, report):
    """Faults for each warp-synchronous call whose mask is neither a full-warp constant nor a value
    __ballot_sync/__activemask computed in the same (top-level) function. Returns the calls seen."""
    full, items, calls = set(FULL_MASK.findall(code)), top_level_items(text), 0
    for m in WARP_CALL.finditer(code):
        depth, j = 1, m.end()
        while depth and j < len(code) and not (depth == 1 and code[j] == ","):
            depth += (code[j] == "(") - (code[j] == ")")
            j += 1
        arg, calls = " ".join(code[m.end():j - (depth == 0)].split()), calls + 1
        body = next((code[a:m.start()] for a, b, _ in items if a <= m.start() < b), "")
        if (m.group(1) == "__syncwarp" and not arg) or arg in full or re.match(COMPUTED, arg) or (
                re.fullmatch(r"\w+", arg) and re.search(rf"\b{arg}\s*=\s*{COMPUTED}", body)):
            continue
        report.error(path, line_of(code, m.start()), f"`{m.group(1)}` mask `{arg}`: not "
                     "a named full-warp constant (`constexpr unsigned int kFullMask = 0xffffffffu;`) "
                     "nor a value __ballot_sync or __activemask computed in this function: a mask "
                     "naming fewer lanes than run the call is undefined, and no sanitizer sees it "
                     "(CUDA-CODE-STYLE.md section 8)")
    return calls

# --- comments ----------------------------------------------------------------------------------
HEADER_LINES, KERNEL_LINES, RUNS_LINES = 20, 8, 3
TAGS = re.compile(r"^\s*//\s*(?:Launch:|Needs:|ptx:|snippet:|end snippet)")

def comments(path, text, code, opts, report):
    """The header (comment lines before the code) at most HEADER_LINES; a kernel's comment at
    most KERNEL_LINES but snippet markers and its Launch, Needs, ptx lines and continuations."""
    lines = text.splitlines()
    first = next((i for i, l in enumerate(code.splitlines()) if l.strip()), len(lines))
    header = sum(1 for l in lines[:first] if l.strip())
    if header > HEADER_LINES:
        report.error(path, 1, f"the header is {header} comment lines, over {HEADER_LINES}: it "
                     "says the rows, the one change between neighbours, the exactness discipline "
                     "and the build line; the rest is the README's (DESIGN.md section 2)")
    for m, line, first in kernels_in(code):
        block, tagged_, kept = comment_above(lines, first), False, 0
        for _, c in block:
            tagged_ = bool(TAGS.match(c)) or (tagged_ and re.match(r"^\s*//\s{2,}\S", c))
            kept += not tagged_
        if kept > KERNEL_LINES:
            report.error(path, block[0][0] + 1, f"kernel {m.group(1)}'s comment is {kept} lines "
                         f"besides its Launch, Needs and ptx lines, over {KERNEL_LINES}: say its "
                         "launch assumptions; the why is the README's")

def runs_comments(day_dir, report):
    path = os.path.join(day_dir, "runs.txt")
    lines = transcript.read_lines(path) if os.path.exists(path) else []
    hashes = [i for i, l in enumerate(lines, 1) if l.lstrip().startswith("#")]
    if len(hashes) > RUNS_LINES:
        report.error(path, hashes[0], f"{len(hashes)} comment lines, over {RUNS_LINES}: what the "
                     "sanitizer runs cover belongs in the test program's header")

# --- ptx -----------------------------------------------------------------------------------------
TOKENS = {"v4-loads": re.compile(r"\bld\.global(?:\.[\w:]+)*\.v4\.(?:f32|b32|u32|s32)\b"),
          "shfl": re.compile(r"\bshfl\.sync\b"), "atom": re.compile(r"\b(?:atom|red)\.[\w.]+")}
VOLATILE_SHARED = re.compile(r"\b(?:ld|st)\.volatile\.shared\b")
CLAIM = re.compile(r"^\s*//\s*ptx:(.*)$")

def exhibits(path, lines, report):
    """[(open line, close line)] of the race-exhibit regions; faults for unpaired markers."""
    regions, at = [], None
    for i, line in enumerate(lines, 1):
        if re.match(r"^\s*//\s*race exhibit:", line) and at:
            report.error(path, i, f"`// race exhibit:` while the exhibit opened at line {at} is "
                         "still open (close it with `// end race exhibit`)")
        elif re.match(r"^\s*//\s*race exhibit:", line):
            at = i
        elif re.match(r"^\s*//\s*end race exhibit\b", line):
            if not at:
                report.error(path, i, "`// end race exhibit` with no open `// race exhibit:`")
            regions, at = regions + [(at, i)] * bool(at), None
    if at:
        report.error(path, at, "`// race exhibit:` is never closed by `// end race exhibit`")
        regions.append((at, len(lines)))
    return regions

def ptx_bodies(ptx):
    """{.entry name: its body and the bodies of the .func it calls}, names demangled (binutils'
    c++filt) to the unqualified function name, each with the list of its mangled entries."""
    funcs = {}
    for m in re.finditer(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?"
                         r"([\w$]+)[^;{]*\{", ptx, re.M):
        depth, j = 0, m.end() - 1
        while True:
            depth += (ptx[j] == "{") - (ptx[j] == "}")
            if depth == 0:
                break
            j += 1
        funcs[m.group(2)] = (m.group(1), ptx[m.end():j])
    entries = [f for f, (kind, _) in funcs.items() if kind == "entry"]
    shown = subprocess.run(["c++filt"], input="\n".join(entries), capture_output=True, text=True,
                           check=True).stdout.splitlines()
    out = {}
    for entry, d in zip(entries, shown):
        seen, todo, body = set(), [entry], ""
        while todo:
            f = todo.pop()
            if f in funcs and f not in seen:
                seen.add(f)
                body += funcs[f][1]
                todo += re.findall(r"\bcall(?:\.uni)?\s*(?:\([^)]*\)\s*,\s*)?([\w$]+)", funcs[f][1])
        name = re.search(r"(\w+)\s*(?:<.*>)?\s*\(", d).group(1) if entry.startswith("_Z") else entry
        out.setdefault(name, []).append((entry, body))
    return out

def ptx(path, text, code, opts, report):
    lines = text.splitlines()
    regions = exhibits(path, lines, report)
    inside = lambda line: any(a < line < b for a, b in regions)  # noqa: E731
    for m in re.finditer(r"\bvolatile\b", code):
        if not inside(line := line_of(code, m.start())):
            report.error(path, line, "`volatile` outside a race exhibit: no volatile "
                         "warp-synchronous code (use __shfl_down_sync or __syncwarp); the only "
                         "volatile tails sit between `// race exhibit:` and `// end race exhibit` "
                         "(CUDA-CODE-STYLE.md section 8)")
    if regions and "--race-demo" not in text:
        report.error(path, regions[0][0], "a race exhibit, but the file never mentions "
                     "--race-demo (the flag that alone may reach it)")
    kernels, claimed, known = kernels_in(code), set(), ", ".join(TOKENS)
    claims = {}  # kernel -> (first claim line, [tokens])
    for m, line, first in kernels:
        for i, c in comment_above(lines, first):
            if cm := CLAIM.match(c):
                claimed.add(i + 1)
                for t in cm.group(1).split() or [""]:
                    if t not in TOKENS:
                        report.error(path, i + 1, f"unknown ptx claim `{t}` (known: {known})" if
                                     t else f"`// ptx:` with no token (known: {known})")
                at, have = claims.get(m.group(1), (i + 1, []))
                claims[m.group(1)] = (at, have + [t for t in cm.group(1).split() if t in TOKENS])
    for i, c in enumerate(lines, 1):
        if CLAIM.match(c) and i not in claimed:
            below = next((b for b in lines[i:] if not b.lstrip().startswith("//")), "")
            report.error(path, i, "`// ptx:` claim not in the comment block directly above a "
                         "__global__ kernel" + (
                             ": it sits above a __device__ function, which has no .entry of its "
                             "own; put the claim on each __global__ kernel that calls it (inlined "
                             "code shows in the caller's PTX)" if "__device__" in below else ""))
    if not kernels:
        return 0
    with tempfile.TemporaryDirectory(prefix="check-ptx-") as tmp:
        p = subprocess.run([opts.nvcc, "-std=c++17", "-O3", "-arch=sm_90", "-ptx", "-o",
                            f"{tmp}/out.ptx", path], capture_output=True, text=True)
        if p.returncode:
            report.error(path, 1, f"`nvcc -arch=sm_90 -ptx` failed:\n{p.stdout}{p.stderr}".strip())
            return 0
        bodies = ptx_bodies(open(f"{tmp}/out.ptx", encoding="utf-8").read())
    checked = 0
    for m, line, _ in kernels:
        name, entries = m.group(1), bodies.get(m.group(1), [])
        if name in claims and not entries:
            report.error(path, line, f"kernel {name} claims `ptx: {' '.join(claims[name][1])}` "
                         "but the PTX (sm_90) has no .entry for it (never instantiated?)")
        for entry, body in entries:
            for t in claims.get(name, (0, []))[1]:
                checked += 1
                if not TOKENS[t].search(body):
                    report.error(path, claims[name][0], f"kernel {name} claims `{t}` but its PTX "
                                 f"(sm_90, .entry {entry}) has no match for /{TOKENS[t].pattern}/")
            if not inside(line) and (hit := VOLATILE_SHARED.search(body)):
                report.error(path, line, f"kernel {name} is outside a race exhibit but its PTX "
                             f"(sm_90, .entry {entry}) has `{hit.group(0)}`: a volatile shared-"
                             "memory tail; move the kernel inside the exhibit markers or use "
                             "__shfl_down_sync/__syncwarp")
    return checked

# --- kernels: the unit a README kernel block compiles in alone ------------------------------------
NEEDS = re.compile(r"^\s*//\s*Needs:(.*)$")
DECORATION = re.compile(r"__launch_bounds__\s*\([^)]*\)|__attribute__\s*\(\(.*?\)\)"
                        r"|alignas\s*\([^)]*\)")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")

def top_level_items(text):
    """[(start, end, names)] of the top-level items of TEXT: declarations, definitions, # lines."""
    code = strip_comments(text)
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

def split_top(s, nest="(<[{"):
    """S split at the commas outside the brackets NEST."""
    parts, depth, close = [""], 0, nest.translate(str.maketrans("(<[{", ")>]}"))
    for ch in s:
        depth += (ch in nest) - (ch in close)
        parts[-1:] = [parts[-1], ""] if ch == "," and not depth else [parts[-1] + ch]
    return parts

def tagged(comment_lines, tag):
    """The texts of the `// TAG:` lines among COMMENT_LINES, each with its continuation lines
    (`//` and 2+ spaces) joined to it by a space."""
    out, cont = [], False
    for line in comment_lines:
        m = tag.match(line)
        c = cont and not m and re.match(r"^\s*//\s{2,}(\S.*)$", line)
        if m:
            out.append(m.group(1).strip())
        elif c:
            out[-1] += " " + c.group(1).strip()
        cont = bool(m or c)
    return out

def needs_of(comment_lines):
    """The items of the `// Needs:` lines among COMMENT_LINES ([] for `nothing`), or None."""
    text = tagged(comment_lines, NEEDS)
    out = [t.group(1) for chunk in text for item in chunk.split(",")
           if (t := re.match(r"\s*(<[^>]+>|\w+)", item))]
    return [x for x in out if x != "nothing"] if out else None

# The launch contract: one `// Launch:` line in each README kernel's comment, in LAUNCH_FORM, read by
# unit_main below (so by this check and by the notebook); unit.cuh's header says what each name is.
LAUNCH = re.compile(r"^\s*//\s*Launch:(.*)$")
LAUNCH_FORM = ("[cooperative ]KERNEL[<T, ...>]<<<GRID, BLOCK[, SHARED]>>>(ARG, ...)"
               "[; with NAME = EXPR, ...][; check A == B, ...]")
N = 1000003  # no block or tile divides it, and n % 4 = 3 leaves a scalar tail after the float4s
ROLES = {"partials": "float", "result": "float", "out": "float", "ticket": "unsigned int",
         "status": "unsigned long long", "keys": "uint32_t", "sorted": "uint32_t"}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit.cuh"),
          encoding="utf-8") as f:
    HELPERS = dict(re.findall(r"^//@ (\w+)\n(.*?)\n(?=//@ |\Z)", f.read(), re.S | re.M))
PREAMBLE = HELPERS.pop("preamble")  # the rest: {name: C++ of a helper a check may use}
PARTS = {k[5:]: HELPERS.pop(k) for k in list(HELPERS) if k.startswith("part_")}  # main's

def part(name, **fill):
    """The lines of unit.cuh's `part_NAME`, its $NAMEs filled from FILL."""
    return string.Template(PARTS[name]).substitute(fill).split("\n")

def split_clause(s):
    """S split at commas outside (), [], {} (a clause may hold `i < n`, so <> do not nest here)."""
    return [p.strip() for p in split_top(s, "([{") if p.strip()]

def parse_launch(text):
    """TEXT of a `// Launch:` line as a dict, or ValueError saying why it is not LAUNCH_FORM."""
    m = re.match(r"(cooperative\s+)?(\w+)\s*(<[^<>]*>)?\s*<<<(.*?)>>>\s*\(", text)
    depth, j = 1, m.end() if m else 0
    while m and j < len(text) and depth:
        depth += (text[j] == "(") - (text[j] == ")")
        j += 1
    cfg = split_clause(m.group(4)) if m else []
    if not m or depth or len(cfg) not in (2, 3):
        raise ValueError(f"is not `{LAUNCH_FORM}`")
    out = {"cooperative": bool(m.group(1)), "kernel": m.group(2), "targs": m.group(3) or "",
           "grid": cfg[0], "block": cfg[1], "shared": cfg[2] if len(cfg) == 3 else None,
           "args": split_clause(text[m.end():j - 1]), "with": [], "check": []}
    for part in filter(None, (p.strip() for p in text[j:].split(";"))):
        word, _, body = part.partition(" ")
        if word not in ("with", "check") or not split_clause(body):
            raise ValueError(f"has `{part}` after the call: a clause is `with ...` or `check ...`")
        out[word] += split_clause(body)
    return out

def unit_main(name, params, text):
    """(helper names, C++ lines of `static void launchAndCheckNAME()`) for kernel NAME with PARAMS
    [(type, name)], launched as its Launch line TEXT says; ValueError when TEXT does not fit."""
    L = parse_launch(text)
    if L["kernel"] != name:
        raise ValueError(f"launches `{L['kernel']}`, not this kernel `{name}`")
    if len(L["args"]) != len(params):
        raise ValueError(f"passes {len(L['args'])} argument(s); `{name}` takes {len(params)}")
    n, term, scalars, sets, used = str(N), "host[i]", [], [], set()
    for w in L["with"]:
        lhs, eq, rhs = (x.strip() for x in w.partition("="))
        ref = re.fullmatch(r"sum of (.+) for i < n", rhs)
        if not eq or not re.fullmatch(r"\*?\w+", lhs) or (lhs == "want") != bool(ref):
            raise ValueError(f"has `with {w}`: want `NAME = EXPR`, `*NAME = EXPR` or "
                             "`want = sum of EXPR for i < n`")
        if lhs == "n":
            n = rhs
        elif lhs == "want":
            term = ref.group(1)
        elif lhs.startswith("*"):
            sets.append((lhs[1:], rhs))
        else:
            scalars.append(f"  const auto {lhs} = {rhs};")
    bufs, typed = {}, []  # device buffers: name -> pointee type; the arguments with their types
    for (ty, _), arg in zip(params, L["args"]):
        ty = " ".join(ty.replace("__restrict__", " ").replace("*", " * ").split()).replace(" *", " *")
        pointee = " ".join(re.sub(r"\b(const|volatile)\b|\*", " ", ty).split())
        if arg in ROLES and ROLES[arg] != pointee:
            raise ValueError(f"passes `{arg}` ({ROLES[arg]} *) as `{ty}`")
        if re.fullmatch(r"[A-Za-z_]\w*", arg) and "*" in ty and arg not in ("in", "keys",
                                                                             "nullptr"):
            bufs[arg] = pointee
        typed.append((ty, arg))
    checks = []  # (description, got, want)
    for c in L["check"]:
        a, eq, b = (x.strip() for x in c.partition("=="))
        if not eq or "==" in b:
            raise ValueError(f"has `check {c}`: a check is `A == B`")
        deref = lambda e: re.sub(r"\*(\w+)", lambda m: f"fromDevice({m.group(1)})"
                                 if m.group(1) in bufs else m.group(0), e)
        checks.append((a, deref(a), deref(b)))
    if not L["check"]:
        if "result" in bufs:
            checks.append(("*result (the sum)", "fromDevice(result)", "want"))
        elif "partials" in bufs:
            checks.append(("the partials, added up", "sumOf(partials, grid)", "want"))
        elif "out" in bufs:
            checks.append(("elements of out that differ from in", "mismatches(out, host)", "0"))
        elif "sorted" in bufs:
            checks.append(("keys of sorted that differ from the keys sorted on the host",
                           "sortErrors(sorted, hostKeys)", "0"))
        if "ticket" in bufs:
            checks.append(("*ticket (back at 0)", "fromDevice(ticket)", "0"))
    if not checks:
        raise ValueError("passes nothing this check reads (result, partials, out, sorted) and "
                         "has no `check ...` clause")
    used |= {"deviceArray"} | {h for h in ("fromDevice", "sumOf", "mismatches", "prefixErrors",
                                           "sortErrors")
                               if any(re.search(r"\b" + h + r"\(", g) for _, g, _ in checks)}
    used |= {"toDevice"} if sets else set()
    fn = name + L["targs"]
    body = [f"static void launchAndCheck{name[0].upper() + name[1:]}() {{",
            f"  size_t n = {n};", *scalars,
            "  double want = 0.0; // the exact answer, added on the host"]
    body += part("input" if "host" in term or {"in", "out"} & set(L["args"]) else "want",
                 term=term)
    body += part("in") * ("in" in L["args"]) + part("keys") * ("keys" in L["args"])
    body += part("resident", fn=fn, block=L["block"], shared=L["shared"] or 0) if \
        L["grid"] == "resident" else [f"  const unsigned int grid = {L['grid']};"]
    count = {"partials": "grid", "out": "n", "status": "grid", "sorted": "n"}
    body += [f"  {ty} *{b} = deviceArray<{ty}>({count.get(b, '1')});" for b, ty in bufs.items()]
    if "ticket" in bufs:
        body += ["  cudaCheck(cudaMemset(ticket, 0, sizeof *ticket)); // once: a launch leaves it 0"]
    body += ["  for (int launch = 1; launch <= 2; ++launch) {"]
    why = {"partials": "NaN: an unwritten partial fails", "out": "NaN: an unwritten element "
           "fails", "result": "0: atomics add into it", "status": "0: no tile has published",
           "sorted": "0xA5A5A5A5: an unwritten key fails"}
    for b in bufs:
        if b != "ticket":
            size = f"{count[b]} * sizeof *{b}" if b in count else f"sizeof *{b}"
            fill = "0xff" if b in ("partials", "out") else "0xa5" if b == "sorted" else "0"
            body += [f"    cudaCheck(cudaMemset({b}, {fill}, {size})); // {why.get(b, '0')}"]
    body += [f"    toDevice({b}, {bufs[b]}({e}));" for b, e in sets]
    body += [f"    // Launch: {text.split(';')[0]}"]
    if L["cooperative"]:
        body += [f"    {ty}{'' if ty.endswith('*') else ' '}arg{k} = {a};"
                 for k, (ty, a) in enumerate(typed)]
        body += [f"    void *args[] = {{{', '.join(f'&arg{k}' for k in range(len(typed)))}}};",
                 f"    cudaCheck(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>({fn}), "
                 f"grid, {L['block']}, args, {L['shared'] or 0}, 0));"]
    else:
        shared = f", {L['shared']}" if L["shared"] else ""
        body += [f"    {fn}<<<grid, {L['block']}{shared}>>>({', '.join(L['args'])});"]
    body += ["    cudaCheck(cudaGetLastError());", "    cudaCheck(cudaDeviceSynchronize());"]
    body += [f'    expect(launch, "{name}: {d}", {g}, {w});' for d, g, w in checks]
    return used, body + ["  }", "}"]

def main_of(kernels):
    """The check's C++ for KERNELS [(used helpers, function lines, name)], after the block."""
    used = set().union(*(u for u, _, _ in kernels))
    out = [PREAMBLE] + ["\n" + HELPERS[h] for h in HELPERS if h in used]
    for _, fn, _ in kernels:
        out += [""] + fn
    out += ["", "int main() {"] + [f"  launchAndCheck{k[0].upper() + k[1:]}();" for _, _, k in kernels]
    return out + part("end") + [""]

def closure(needs, own, src, by_name, report, readme, line):
    """The source items that NEEDS pull in (helpers' own Needs lines, names constants use)."""
    todo, chosen, headers = [x for x in needs if x not in own], set(), []
    src_lines = src.splitlines()
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
                got = needs_of(c for _, c in comment_above(src_lines,
                                                           line_of(src, it[0])))
                used = IDENT.findall(strip_comments(src[it[0]:it[1]]))
                todo += got if got is not None else [x for x in dict.fromkeys(used)
                                                     if x in by_name and x not in it[2]]
    return sorted(chosen), list(dict.fromkeys(headers))

def assemble(readme, name, lines, a, b, src, items, report):
    """The unit for one README block (lines A..B are its fences): None when it holds no kernel,
    False when a kernel's comment lacks a Needs or a Launch line (reported), else (unit lines,
    first block line in the unit, kernel names, needs, README line of the first kernel). The unit
    is what the README tells a learner to copy, no more: the headers and the day's definitions of
    what the block's Needs lines name, the block verbatim, then the check (unit_main). Each Needs
    line must name everything its names need in turn (a helper's own Needs line, the names a
    constant uses): a learner copies exactly what the line says."""
    block = lines[a + 1:b]
    text = "\n".join(block) + "\n"
    code = strip_comments(text)
    own = {nm for _, _, names in top_level_items(text) for nm in names}
    by_name = {nm: [it for it in items if nm in it[2]] for names in items for nm in names[2]}
    for k, line in enumerate(block):  # each Needs line names its whole closure
        end = k + 1
        while end < len(block) and re.match(r"^\s*//\s{2,}\S", block[end]):
            end += 1
        if not NEEDS.match(line):
            continue
        named = needs_of(block[k:end])
        chosen, headers = closure(named, own, src, by_name, report, readme, a + 2 + k)
        missing = [it[2][0] for it in chosen if not set(it[2]) & (set(named) | own)]
        missing += [h for h in headers if h not in named]
        if missing:
            report.error(readme, a + 2 + k, f"`// Needs:` leaves out {', '.join(missing)}, which "
                         "what it names needs in turn (their own Needs lines, the names a constant "
                         "uses): a learner copies exactly what the line names, so it must name all")
    kernels, mains = kernels_in(code), []
    for m, kl, first in kernels:
        comment = [c for _, c in comment_above(block, first)]
        what = f"kernel `{m.group(1)}` (snippet `{name}`)"
        launch = tagged(comment, LAUNCH)
        if needs_of(comment) is None or len(launch) != 1:
            report.error(readme, a + 1 + kl, f"{what} has no `// Needs: ...` line ending its "
                         "comment" if needs_of(comment) is None else f"{what} needs one `// "
                         f"Launch: {LAUNCH_FORM}` line in its comment (found {len(launch)})")
            return False
        depth, j = 1, m.end()
        while depth:
            depth += (code[j] == "(") - (code[j] == ")")
            j += 1
        params = [re.match(r"(.*?)\s*(\w+)$", p.strip(), re.S).groups()
                  for p in split_top(code[m.end():j - 1]) if p.strip() not in ("", "void")]
        try:
            used, fn = unit_main(m.group(1), params, launch[0])
        except ValueError as e:
            report.error(readme, a + 1 + kl, f"{what}: its `// Launch: {launch[0]}` line {e}")
            return False
        mains.append((used, fn, m.group(1)))
    if not kernels:
        return None
    needs = needs_of(block) or []  # every Needs line of the block, exactly as written
    chosen = sorted({it for nm in needs if nm not in own for it in by_name.get(nm, [])})
    headers = list(dict.fromkeys(x for x in needs if x.startswith("<")))
    out = [f"// {os.path.basename(os.path.dirname(readme))}, README snippet `{name}`: the block "
           "with exactly what its", "// Needs lines name, then a check that runs it."]
    out += [f"#include {h}" for h in headers]
    out += [f"// From the day's .cu, what the Needs lines name:"] * bool(chosen)
    out += [src[s:e] for s, e, _ in chosen] + [""]
    first_block_line = len("\n".join(out).splitlines()) + 1
    out += block + [""] + main_of(mains)
    return out, first_block_line, [m.group(1) for m, _, _ in kernels], needs, a + 1 + kernels[0][1]

def readme_kernels(day_dir, src, opts, report):
    """Compiles (and with --run runs) each README kernel block's unit; returns how many."""
    readme = os.path.join(day_dir, "README.md")
    lines = transcript.read_lines(readme) if os.path.isfile(readme) else []
    items, count = top_level_items(src), 0
    for name, first, end in readme_quotes(lines):
        unit = assemble(readme, name, lines, first - 1, end, src, items, report)
        count += unit is not None
        if not unit:
            continue
        out, first_block_line, names, needs, kline = unit
        what = f"kernel {', '.join(f'`{k}`' for k in names)} (snippet `{name}`)"
        tmp = tempfile.mkdtemp(prefix=f"check-kernels-{name}-", dir=opts.keep_units)
        cu, exe = os.path.join(tmp, "x.cu"), os.path.join(tmp, "x")
        shown = cu if opts.keep_units else "removed; --keep-units DIR keeps it"
        with open(cu, "w", encoding="utf-8") as f:
            f.write("\n".join(out))
        p = subprocess.run([opts.nvcc, "-std=c++17", "-O3", "-arch=sm_75", "-o", exe, cu],
                           capture_output=True, text=True)
        if p.returncode:
            report.error(readme, kline, f"{what} does not compile alone with what its Needs line "
                         f"names ({', '.join(needs) or 'nothing'}); generated file {shown}:")
            for ln in (l for l in (p.stdout + p.stderr).splitlines() if "error" in l):
                e = re.match(r".*?x\.cu\((\d+)\): (.*)", ln)
                r = int(e.group(1)) - first_block_line if e else -1
                print(f"  {transcript.show(readme)}:{first + 1 + r}: nvcc: {e.group(2)}"
                      if 0 <= r < end - first else f"  {ln}")
        elif opts.run:
            try:
                r = subprocess.run([exe], capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                r = subprocess.CompletedProcess([exe], 124, "", "no answer after 600 s (a hang?)")
            if r.returncode:
                report.error(readme, kline, f"{what}: its check exited {r.returncode} (generated "
                             f"file {shown}):\n" + (r.stdout + r.stderr).strip())
            else:
                print(f"{transcript.show(readme)}:{kline}: {what}: "
                      f"{r.stdout.strip().splitlines()[-1]}")
        if not opts.keep_units:
            shutil.rmtree(tmp, ignore_errors=True)
    return count

# --- paste: the README's code blocks, pasted in order, build ------------------------------------
PRELUDE = [f"#include <{h}>" for h in ("cstdio", "cstdlib", "cstdint", "cstddef", "cstring",
                                       "cmath", "vector", "algorithm", "cuda_runtime.h")]

def paste(day_dir, opts, report):
    """The README's ```cuda, ```cpp and ```c++ blocks, in order after PRELUDE, compile for sm_75
    with no output (a learner pastes them into one file); returns how many blocks."""
    readme = os.path.join(day_dir, "README.md")
    lines = transcript.read_lines(readme) if os.path.isfile(readme) else []
    unit, where, fence, keep, blocks = list(PRELUDE), [0] * len(PRELUDE), None, False, 0
    for i, line in enumerate(lines, 1):
        m = re.match(r"^\s*(`{3,}|~{3,})\s*([^\s`]*)", line)
        if fence is None and m:
            fence, keep = m.group(1), m.group(2) in ("cuda", "cpp", "c++")
            blocks += keep
        elif fence and re.fullmatch(re.escape(fence[0]) + f"{{{len(fence)},}}", line.strip()):
            fence = None
        elif fence and keep:
            unit.append(line)
            where.append(i)
    p = subprocess.run([opts.nvcc, "-std=c++17", "-arch=sm_75", "-x", "cu", "-c", "-o",
                        os.devnull, "-"], input="\n".join(unit) + "\n", capture_output=True,
                       text=True) if blocks else None
    out = (p.stdout + p.stderr).strip().splitlines() if p else []
    if p and (p.returncode or out):
        report.error(readme, 1, f"its {blocks} cuda/cpp/c++ block(s), pasted in order after the "
                     "standard headers, do not build for sm_75 (`nvcc -std=c++17 -arch=sm_75 -x "
                     "cu -c`): show what a block needs in an earlier block, or show less:")
        for ln in [l for l in out if re.search(r"stdin\(\d+\): (error|warning)", l)][:6] or out[:6]:
            e = re.match(r".*?stdin\((\d+)\): (.*)", ln)
            at = where[int(e.group(1)) - 1] if e and int(e.group(1)) <= len(where) else 0
            print(f"  {transcript.show(readme)}:{at}: nvcc: {e.group(2)}" if at else f"  {ln}")
    return blocks

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    ap.add_argument("--rules", default=",".join(RULES), help="comma-separated, default all")
    ap.add_argument("--run", action="store_true", help="kernels: also run each unit (a GPU)")
    ap.add_argument("--keep-units", metavar="DIR", help="kernels: keep each generated unit in DIR")
    ap.add_argument("paths", nargs="*")  # `*`, so that an unknown flag is named first
    opts = ap.parse_args(argv)
    if not opts.paths:
        ap.error("want ROOT, DAY_DIR or FILE.cu: what to check (--help says more)")
    rules = opts.rules.split(",")
    if set(rules) - set(RULES):
        ap.error(f"--rules: known rules are {', '.join(RULES)}")
    for a in opts.paths:
        if not os.path.exists(a):
            ap.error(f"{a}: no such file or directory")
    if opts.run and "kernels" in rules and not record.gpu_present():
        print("SKIPPED: sources --run: no CUDA device on this machine (nvidia-smi lists no GPU); "
              "the kernel units run on a GPU runner")
        return 77
    skipped = [r for r in rules if r in ("ptx", "kernels", "paste") and not shutil.which(opts.nvcc)]
    rules = [r for r in rules if r not in skipped]
    report, n = Report("sources"), dict.fromkeys(("files", "masks", "ptx", "kernels", "paste"), 0)
    for a in opts.paths:  # (day directory or None, its .cu files)
        days = [(d, day_sources(d)) for d in day_dirs_of(a)] if \
            os.path.isdir(a) else [(None, [a])] if os.path.isfile(a) else []
        if not any(srcs for _, srcs in days):
            report.error(a, 1, "no .cu file here (a day directory holds its program, NAME.cu)")
        elif "kernels" in rules and not os.path.isdir(a):
            report.error(a, 1, "the kernels rule reads a day's README: give its directory")
        for day, srcs in days:
            if day and "comments" in rules:
                runs_comments(day, report)
            n["paste"] += paste(day, opts, report) if day and "paste" in rules else 0
            for path in srcs:
                text = open(path, encoding="utf-8", errors="replace").read()
                code, n["files"] = strip_comments(text), n["files"] + 1
                for rule, check in (("self-contained", self_contained), ("masks", masks),
                                    ("comments", comments), ("ptx", ptx)):
                    if rule in rules:
                        n[rule] = n.get(rule, 0) + (check(path, text, code, opts, report) or 0)
                if "kernels" in rules and day and len(srcs) == 1:
                    n["kernels"] += readme_kernels(day, text, opts, report)
    if skipped and not report.faults:
        print(f"SKIPPED: sources: no nvcc ({opts.nvcc}) for the {', '.join(skipped)} rule(s); "
              f"{', '.join(rules) or 'no other rule'} checked, {n['files']} file(s)")
        return 77
    return report.finish(f"{n['files']} file(s): {', '.join(rules)}; {n['masks']} warp mask(s) "
                         f"named; {n['ptx']} PTX claim(s) hold; {n['kernels']} README kernel "
                         f"block(s) compiled alone for sm_75{' and ran' if opts.run else ''}; "
                         f"{n['paste']} README block(s) build pasted in order")
