"""The campaign as a JUnit XML report, the format every CI server reads.

One test suite for the checked target. Each bug is a failing test case whose
text is the bug and its story; a campaign without a bug is one passing test
case. Text from the program (messages, printed output) is escaped by the
XML writer, and characters XML 1.0 cannot hold are replaced.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timezone

from dnsse.report.console import indent, shell_path
from dnsse.report.story import Story
from dnsse.report.story_text import story_lines
from dnsse.campaign.config import CampaignResult

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def junit_report(result: CampaignResult, stories: list[Story | None], seed: int) -> str:
    suites = ElementTree.Element("testsuites", name="dnsse")
    tests = max(1, len(result.bugs))
    failures = len(result.bugs)
    suites.set("tests", str(tests))
    suites.set("failures", str(failures))
    suites.set("errors", "0")
    suites.set("time", f"{result.elapsed_s:.3f}")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name=f"dnsse check {result.target}",
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{result.elapsed_s:.3f}",
        timestamp=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
    )
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in (
        ("framework", result.framework),
        ("strategy", result.strategy),
        ("seed", seed),
        ("executions", result.executions),
        ("coverage", result.coverage.shown if result.coverage is not None else "not measured"),
    ):
        ElementTree.SubElement(properties, "property", name=name, value=xml_text(str(value)))
    classname = f"dnsse.{result.framework}"
    if not result.bugs:
        ElementTree.SubElement(
            suite, "testcase", classname=classname, name=xml_text(result.target), time=f"{result.elapsed_s:.3f}"
        )
    for number, (found, story) in enumerate(zip(result.bugs, stories), start=1):
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=classname,
            name=xml_text(f"{result.target} bug {number}: {found.bug.kind}"),
            time=f"{found.elapsed_s:.3f}",
        )
        failure = ElementTree.SubElement(
            case, "failure", type=found.bug.kind, message=xml_text(found.bug.message)
        )
        body = [found.bug.render(), ""]
        if story is not None:
            body += story_lines(story) + [""]
        body += [f"trace:  {found.trace_path}", f"replay: dnsse replay {shell_path(found.trace_path)}"]
        failure.text = xml_text(indent("\n".join(body)))
        if story is not None and story.output.chunks:
            printed = "".join(f"[{c.agent}] {c.text}" for c in story.output.chunks if c.stream == "stdout")
            errors = "".join(f"[{c.agent}] {c.text}" for c in story.output.chunks if c.stream == "stderr")
            if printed:
                ElementTree.SubElement(case, "system-out").text = xml_text(printed)
            if errors:
                ElementTree.SubElement(case, "system-err").text = xml_text(errors)
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
