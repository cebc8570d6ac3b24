"""pytest integration: a ``@dnsse.test`` failure reads as the bug's story, and kept traces are listed.

Loaded by its ``pytest11`` entry point (or ``-p dnsse.pytest_plugin``).
Tests decorated with ``@dnsse.test`` work without it too; the plugin trims
dnsse's own frames from the failure and names every kept trace at the end
of the run, also from pytest-xdist workers.
"""

from __future__ import annotations

import os
from typing import Generator

import pytest

from dnsse.errors import BadInput
from dnsse.testing import BugFound, Overrides, set_overrides

TRACE_PROPERTY = "dnsse_trace"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dnsse", "dnsse campaigns of @dnsse.test functions")
    group.addoption(
        "--dnsse-budget", type=int, default=None, metavar="N",
        help="executions per @dnsse.test campaign, whatever the decorator says (a nightly run's longer search)",
    )
    group.addoption(
        "--dnsse-seed", type=int, default=None, metavar="N", help="the seed of every @dnsse.test campaign",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dnsse: a test checked by dnsse as a campaign of controlled executions")
    try:
        set_overrides(
            Overrides.from_options(config.getoption("dnsse_budget"), config.getoption("dnsse_seed"), os.environ)
        )
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _is_dnsse_test(item):
            item.add_marker("dnsse")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and isinstance(call.excinfo.value, BugFound):
        bug = call.excinfo.value
        report.longrepr = bug.text
        report.user_properties.append((TRACE_PROPERTY, str(bug.trace)))
    elif call.excinfo is not None and isinstance(call.excinfo.value, BadInput) and _is_dnsse_test(item):
        # What dnsse could not check (an import error of the module, an API it does not control):
        # its one-paragraph message, as `dnsse check` prints it, not dnsse's own frames.
        report.longrepr = f"dnsse: {call.excinfo.value}"


def _is_dnsse_test(item: pytest.Item) -> bool:
    return getattr(getattr(item, "obj", None), "__dnsse_test__", None) is not None


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
