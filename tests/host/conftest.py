"""pytest's hooks for tests/host: each skipped test prints a `SKIPPED: ID: REASON` line (ctest's
post-test hook, skipped.py, shows them after the run), and a run in which every test was skipped
exits 77, CTest's skip (gpu.pytest on a machine without a GPU)."""


def pytest_terminal_summary(terminalreporter):
    for r in terminalreporter.stats.get("skipped", []):
        reason = r.longrepr[2].removeprefix("Skipped: ")  # longrepr: (file, line, reason)
        terminalreporter.write_line(f"SKIPPED: {r.nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    stats = session.config.pluginmanager.get_plugin("terminalreporter").stats
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = 77
