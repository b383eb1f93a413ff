"""Helpers shared by the host checks in tests/host/ (Python standard library only).

Every check prints one `FILE:LINE: error: ...` line per fault and exits 1 if there was any, or
prints one `ok: ...` line and exits 0. A check that cannot run here prints `SKIPPED: ...` and
exits 77 (CTest's SKIP_RETURN_CODE).
"""
import glob
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77


class Report:
    """Collects faults; `finish` prints the verdict and returns the exit code."""

    def __init__(self, name):
        self.name = name
        self.faults = 0

    def error(self, path, line, message):
        self.faults += 1
        print(f"{show(path)}:{line}: error: {message}", flush=True)

    def finish(self, ok_message):
        if self.faults:
            print(f"FAILED: {self.name}: {self.faults} fault(s)")
            return 1
        print(f"ok: {self.name}: {ok_message}")
        return 0


def show(path):
    """A path relative to the current directory when that is shorter (for clickable output)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("../..") else os.path.abspath(path)


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def day_dirs_of(arg):
    """Day directories named by ARG: a repo root (has code/), or one code/dayNN-*/ directory."""
    arg = os.path.abspath(arg)
    if os.path.isdir(os.path.join(arg, "code")) and not os.path.basename(arg).startswith("day"):
        return sorted(d for d in glob.glob(os.path.join(arg, "code", "day*")) if os.path.isdir(d))
    return [arg]


def day_sources(day_dir):
    return sorted(glob.glob(os.path.join(day_dir, "*.cu")))


def cu_files_of(args):
    """The .cu files named by ARGS: files as given; a root or day dir expands to its day files."""
    out = []
    for a in args:
        if os.path.isfile(a):
            out.append(os.path.abspath(a))
        else:
            for d in day_dirs_of(a):
                out.extend(day_sources(d))
    return out


def strip_comments(text, blank_strings=True):
    """C++ text with comments (and string/char literal contents) blanked; offsets and lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            # a literal ('1'000' digit separators are not); comment marks inside it are text
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            if blank_strings:
                out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            else:
                out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# The one reading of "the fenced block after a marker", shared with tools/sync_readme.py, which
# writes those blocks: (open_index, close_index) of the fence lines, or None.
sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
from sync_readme import fenced_block_after  # noqa: E402,F401

