"""pytest integration: a ``@dnsse.test`` failure reads as the bug's story, and kept traces are listed.

Loaded by its ``pytest11`` entry point (or ``-p dnsse.pytest_plugin``).
Tests decorated with ``@dnsse.test`` work without it too; the plugin trims
dnsse's own frames from the failure and names every kept trace at the end
of the run, also from pytest-xdist workers.
"""

from __future__ import annotations

from typing import Generator

import pytest

from dnsse.testing import BugFound

TRACE_PROPERTY = "dnsse_trace"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dnsse: a test checked by dnsse as a campaign of controlled executions")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if getattr(getattr(item, "obj", None), "__dnsse_test__", None) is not None:
            item.add_marker("dnsse")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and isinstance(call.excinfo.value, BugFound):
        bug = call.excinfo.value
        report.longrepr = bug.text
        report.user_properties.append((TRACE_PROPERTY, str(bug.trace)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    kept = [
        (report.nodeid, value)
        for report in terminalreporter.stats.get("failed", [])
        for name, value in report.user_properties
        if name == TRACE_PROPERTY
    ]
    if not kept:
        return
    terminalreporter.section("dnsse traces")
    for nodeid, trace in kept:
        terminalreporter.write_line(f"{nodeid}: dnsse replay {trace}")
