#!/usr/bin/env python3
"""Each day program is self-contained: standard C++ and CUDA-toolkit headers only, its own
CUDA_CHECK macro and its own timeKernel function (CUDA-CODE-STYLE.md section 1 and 3).

Usage: check_self_contained.py ROOT|DAY_DIR|FILE.cu ...

  ROOT     a repository root: every code/day*/*.cu
  DAY_DIR  one day directory: its *.cu
  FILE.cu  that file

Faults: an `#include "..."` (a project header), an `#include <...>` that is neither a C++17
standard header nor a CUDA-toolkit header (a C header such as <stdio.h> is refused with the C++
name to use instead), no `#define CUDA_CHECK(`, no definition of `timeKernel` (a call is not one).
"""
import os
import re
import sys

import hostcheck

# The C++17 standard library headers (C++ names of the C headers included).
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

# Single CUDA-toolkit headers, and toolkit directories (CCCL: cuda/, cub/, thrust/, nv/).
CUDA_HEADERS = set("""
cuda_runtime.h cuda_runtime_api.h cuda.h cuda_fp16.h cuda_bf16.h cuda_fp8.h cuda_pipeline.h
cuda_awbarrier.h cuda_occupancy.h cuda_profiler_api.h device_launch_parameters.h
cooperative_groups.h vector_types.h vector_functions.h driver_types.h curand_kernel.h
""".split())
CUDA_PREFIXES = ("cuda/", "cub/", "thrust/", "nv/", "cooperative_groups/", "nvtx3/")

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]*)[>"]', re.M)
CUDA_CHECK_DEF = re.compile(r"^[ \t]*#[ \t]*define[ \t]+CUDA_CHECK\(", re.M)
NOT_A_TYPE = {"return", "else", "do", "case", "throw", "co_return", "sizeof", "decltype"}


def balanced_close(text, i):
    """Index just past the ')' that closes the '(' at text[i], or -1."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def defines_time_kernel(code):
    """True when CODE (comments stripped) defines timeKernel: a function or a named lambda."""
    if re.search(r"\btimeKernel\s*=\s*\[", code):
        return True
    for m in re.finditer(r"\btimeKernel\s*\(", code):
        before = code[: m.start()].rstrip()
        prev = re.search(r"(\w+|[>&*])$", before)
        if not prev or prev.group(1) in NOT_A_TYPE:
            continue  # a call: after '=', '(', ',', 'return', ...
        end = balanced_close(code, m.end() - 1)
        if end < 0:
            continue
        rest = code[end:].lstrip()
        # const/noexcept/trailing return type, then the body
        rest = re.sub(r"^(?:const\b|noexcept\b|->\s*[\w:<>,\s*&]+?(?=\{))\s*", "", rest)
        if rest.startswith("{"):
            return True
    return False


def check_file(path, report):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = hostcheck.strip_comments(text, blank_strings=False)
    for m in INCLUDE.finditer(code):
        line = hostcheck.line_of(code, m.start())
        kind, name = m.group(1), m.group(2).strip()
        if kind == '"':
            report.error(path, line, f'#include "{name}": a day file includes no project header; '
                         "copy what it needs into the file (CUDA-CODE-STYLE.md section 1)")
        elif name in STD_HEADERS or name in CUDA_HEADERS or name.startswith(CUDA_PREFIXES):
            continue
        elif name.endswith(".h") and "c" + name[:-2] in STD_HEADERS:
            report.error(path, line, f"#include <{name}>: use the C++ header <c{name[:-2]}>")
        else:
            report.error(path, line, f"#include <{name}>: not a C++17 standard header nor a "
                         "CUDA-toolkit header (tests/host/check_self_contained.py lists those)")
    if not CUDA_CHECK_DEF.search(code):
        report.error(path, 1, "no `#define CUDA_CHECK(call)`: each day defines its own "
                     "(CUDA-CODE-STYLE.md section 3)")
    bare = hostcheck.strip_comments(text)
    if not defines_time_kernel(bare):
        use = re.search(r"\btimeKernel\b", bare)
        what = "names timeKernel but never defines it" if use else "defines no timeKernel"
        report.error(path, hostcheck.line_of(bare, use.start()) if use else 1,
                     f"{what}: each day defines its own timeKernel function "
                     "(CUDA-CODE-STYLE.md section 5)")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    report = hostcheck.Report("self-contained")
    files = hostcheck.cu_files_of(argv)
    for a in argv:
        if not os.path.exists(a):
            report.error(a, 1, "no such file or directory")
        elif os.path.isdir(a) and not hostcheck.cu_files_of([a]):
            report.error(a, 1, "no .cu file here (a day directory holds its program, NAME.cu)")
    for path in files:
        check_file(path, report)
    return report.finish(f"{len(files)} file(s) include only standard and CUDA headers and "
                         "define CUDA_CHECK and timeKernel")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
