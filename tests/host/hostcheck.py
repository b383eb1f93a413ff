"""Helpers shared by the host checks in tests/host/ (Python standard library only).

Every check prints one `FILE:LINE: error: ...` line per fault and exits 1 if there was any, or
prints one `ok: ...` line and exits 0. A check that cannot run here prints `SKIPPED: ...` and
exits 77 (CTest's SKIP_RETURN_CODE).
"""
import glob
import os
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


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# From tools/: the one reading of "the fenced block after a marker" and the one way a path is
# shown (sync_readme.py, which writes those blocks); the one comment stripper (transcript.py,
# whose fingerprint ignores what it strips).
sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
from sync_readme import fenced_block_after, show  # noqa: E402,F401
from transcript import strip_comments  # noqa: E402,F401
