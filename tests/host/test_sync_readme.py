#!/usr/bin/env python3
"""tools/sync_readme.py repairs a stale README, and check_readme_output.py then agrees.

Usage: test_sync_readme.py     (uses tests/fixtures/readme_output/*; writes only to a temp dir)

On a copy of the `differs` fixture: `sync_readme.py --check` must exit 1 (out of date), a plain
run must rewrite the block, then `--check` and check_readme_output.py must pass, and the README
must hold the newest transcript's table. On a copy of `no-transcript`: sync must exit 1 and leave
the README byte for byte as it was. Also: sync inserts a block after a marker that has none, and
repairs a drifted snippet (tests/fixtures/snippets/drift) so that check_snippets.py passes.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SYNC = os.path.join(ROOT, "tools", "sync_readme.py")
CHECK = os.path.join(HERE, "check_readme_output.py")
CHECK_SNIPPETS = os.path.join(HERE, "check_snippets.py")
FIX = os.path.join(ROOT, "tests", "fixtures", "readme_output")
FIX_SNIPPETS = os.path.join(ROOT, "tests", "fixtures", "snippets")


def run(*cmd):
    p = subprocess.run([sys.executable, *cmd], capture_output=True, text=True)
    print(f"$ {' '.join(os.path.basename(c) if c.endswith('.py') else c for c in cmd)}"
          f"  -> exit {p.returncode}\n{p.stdout}{p.stderr}", end="")
    return p.returncode


def main():
    failures = []

    def expect(what, ok):
        if not ok:
            failures.append(what)
            print(f"FAIL: {what}")

    with tempfile.TemporaryDirectory(prefix="sync-readme-") as tmp:
        d = os.path.join(tmp, "differs")
        shutil.copytree(os.path.join(FIX, "differs"), d)
        readme = os.path.join(d, "code", "day90-fixture", "README.md")
        expect("--check reports the stale block (exit 1)", run(SYNC, "--check", d) == 1)
        expect("the checker fails before the sync", run(CHECK, d) == 1)
        expect("sync rewrites the block (exit 0)", run(SYNC, d) == 0)
        expect("--check is clean after the sync", run(SYNC, "--check", d) == 0)
        expect("the checker passes after the sync", run(CHECK, d) == 0)
        newest = os.path.join(d, "evidence", "day90-fixture", "default-2025-01-02-h200.txt")
        with open(newest) as f:
            table = [l for l in f.read().splitlines() if l.startswith("|")]
        with open(readme) as f:
            text = f.read()
        expect("the README holds the newest table", "\n".join(table) in text)

        # a marker with no block after it: sync inserts one
        with open(readme, "w") as f:
            f.write(text.replace("```text\n" + "\n".join(table) + "\n```\n", ""))
        expect("the checker fails on a marker without a block", run(CHECK, d) == 1)
        expect("sync inserts the missing block", run(SYNC, d) == 0)
        expect("the checker passes after the insert", run(CHECK, d) == 0)

        n = os.path.join(tmp, "no-transcript")
        shutil.copytree(os.path.join(FIX, "no-transcript"), n)
        r2 = os.path.join(n, "code", "day90-fixture", "README.md")
        with open(r2, "rb") as f:
            before = f.read()
        expect("sync fails where no transcript exists", run(SYNC, n) == 1)
        with open(r2, "rb") as f:
            expect("sync leaves that README unchanged", f.read() == before)

        s = os.path.join(tmp, "snippet-drift")
        shutil.copytree(os.path.join(FIX_SNIPPETS, "drift"), s)
        expect("check_snippets fails on the drifted snippet", run(CHECK_SNIPPETS, s) == 1)
        expect("sync repairs the snippet (exit 0)", run(SYNC, s) == 0)
        expect("check_snippets passes after the sync", run(CHECK_SNIPPETS, s) == 0)
    if failures:
        print(f"FAILED: sync_readme: {len(failures)} expectation(s) not met")
        return 1
    print("ok: sync_readme: rewrites stale blocks and snippets, inserts missing blocks, refuses "
          "without evidence")
    return 0


if __name__ == "__main__":
    sys.exit(main())
