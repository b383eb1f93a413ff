"""pytest's hooks for tests/host: each skipped test prints a `SKIPPED: ID: REASON` line (the test
run's summary, cmake/Skipped.cmake, shows each distinct reason once), and a run in which every
test was skipped exits 77, CTest's skip (gpu.pytest on a machine without a GPU)."""
import pytest

SEEN = {}  # the terminal reporter's counts: "passed", "skipped"

def pytest_terminal_summary(terminalreporter):
    for r in terminalreporter.stats.get("skipped", []):
        reason = r.longrepr[2].removeprefix("Skipped: ")  # longrepr: (file, line, reason)
        terminalreporter.write_line(f"SKIPPED: {r.nodeid}: {reason}")
    SEEN.update({k: len(terminalreporter.stats.get(k, [])) for k in ("passed", "skipped")})

@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config):
    code = yield  # the run's exit status
    return 77 if code == 0 and SEEN.get("skipped") and not SEEN.get("passed") else code
