"""CI formats: JUnit XML and SARIF 2.1.0 written next to --json, checked against their schemas' essentials."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest

PROGRAMS = Path(__file__).parent / "programs"

# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that viewers rely on.
_LOCATION = {
    "type": "object",
    "required": ["physicalLocation"],
    "properties": {
        "physicalLocation": {
            "type": "object",
            "required": ["artifactLocation", "region"],
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": {"type": "string", "format": "uri-reference"}, "uriBaseId": {"type": "string"}},
                },
                "region": {
                    "type": "object",
                    "required": ["startLine"],
                    "properties": {"startLine": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "message": {"$ref": "#/$defs/message"},
    },
}
SARIF_ESSENTIALS = {
    "$defs": {
        "message": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        "location": _LOCATION,
    },
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {"id": {"type": "string"}},
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message", "ruleId", "locations"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"$ref": "#/$defs/message"},
                                "locations": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/location"}},
                                "relatedLocations": {"type": "array", "items": {"$ref": "#/$defs/location"}},
                                "codeFlows": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["threadFlows"],
                                        "properties": {
                                            "threadFlows": {
                                                "type": "array",
                                                "minItems": 1,
                                                "items": {
                                                    "type": "object",
                                                    "required": ["locations"],
                                                    "properties": {
                                                        "locations": {
                                                            "type": "array",
                                                            "minItems": 1,
                                                            "items": {
                                                                "type": "object",
                                                                "required": ["location"],
                                                                "properties": {
                                                                    "location": {"$ref": "#/$defs/location"},
                                                                    "executionOrder": {"type": "integer"},
                                                                },
                                                            },
                                                        }
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def check(target: str, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable, "-m", "dnsse.cli", "check", target, "--out", str(tmp_path / "traces"),
            "--junit", str(tmp_path / "report.xml"), "--sarif", str(tmp_path / "report.sarif"),
            "--json", str(tmp_path / "report.json"), *options,
        ],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )


@pytest.fixture(scope="module")
def lost_update(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("lost_update")
    found = check(f"{PROGRAMS}/report_prints.py:main", directory, "--strategy", "random", "--quiet")
    assert found.returncode == 1, found.stdout + found.stderr
    return directory


def sarif_of(directory: Path) -> dict:
    report = json.loads((directory / "report.sarif").read_text())
    jsonschema.validate(report, SARIF_ESSENTIALS, format_checker=jsonschema.FormatChecker())
    return report


def line_of(location: dict, base: Path) -> str:
    physical = location["physicalLocation"]
    uri = physical["artifactLocation"]["uri"]
    path = Path(uri.removeprefix("file://")) if uri.startswith("file://") else base / uri
    return path.read_text().splitlines()[physical["region"]["startLine"] - 1]


def test_sarif_result_points_at_the_failing_assert(lost_update: Path) -> None:
    report = sarif_of(lost_update)
    run = report["runs"][0]
    (result,) = run["results"]
    assert result["ruleId"] == "exception" and result["level"] == "error"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "exception"
    assert "lost update: count is 1" in result["message"]["text"]
    assert "dnsse replay" in result["message"]["text"]
    assert "assert counter.count == 2" in line_of(result["locations"][0], lost_update)


def test_sarif_code_flow_walks_the_schedule_per_thread(lost_update: Path) -> None:
    (result,) = sarif_of(lost_update)["runs"][0]["results"]
    (schedule,) = [flow for flow in result["codeFlows"] if flow["message"]["text"].startswith("the minimized schedule")]
    flows = {flow["id"]: flow["locations"] for flow in schedule["threadFlows"]}
    assert set(flows) == {"main", "Thread-1 (worker)", "Thread-2 (worker)"}
    worker = [line_of(step["location"], lost_update).strip() for step in flows["Thread-1 (worker)"]]
    assert worker == ["seen = counter.count", "counter.count = seen + 1"]
    orders = [step["executionOrder"] for flow in flows.values() for step in flow]
    assert len(orders) == len(set(orders))  # one global order of steps


def test_sarif_of_a_mismatch_points_at_both_collectives(tmp_path: Path) -> None:
    # Rank 1 broadcasts at line 16 where rank 0 all-reduces at line 18.
    found = check(f"{PROGRAMS / 'torch_mismatch.py'}:op_mismatch", tmp_path, "--quiet")
    assert found.returncode == 1, found.stdout + found.stderr
    (result,) = sarif_of(tmp_path)["runs"][0]["results"]
    assert result["ruleId"] == "collective_mismatch"
    primary = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    related = [location["physicalLocation"]["region"]["startLine"] for location in result["relatedLocations"]]
    assert {primary, *related} >= {16, 18}


def test_junit_has_one_failing_case_per_bug_with_its_story(lost_update: Path) -> None:
    root = ElementTree.parse(lost_update / "report.xml").getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    for element in (root, suite):
        assert int(element.get("tests")) == 1 and int(element.get("failures")) == 1
        assert int(element.get("errors")) == 0 and float(element.get("time")) >= 0
    (case,) = suite.findall("testcase")
    assert case.get("classname") == "dnsse.threads" and case.get("name").endswith("bug 1: exception")
    failure = case.find("failure")
    assert failure.get("type") == "exception"
    assert failure.get("message") == "AssertionError: lost update: count is 1"
    assert "how it happens" in failure.text and "dnsse replay" in failure.text
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["strategy"] == "random" and properties["seed"] == "0"


def test_junit_keeps_the_programs_output_escaped_and_well_formed(lost_update: Path) -> None:
    text = (lost_update / "report.xml").read_text()
    assert "\x1b" not in text and "\x07" not in text  # forbidden in XML 1.0
    case = ElementTree.fromstring(text).find("testsuite/testcase")
    out = case.find("system-out").text
    assert "[main] <b>final count</b> 1" in out and "</script><script>" in out
    assert "[Thread-2 (worker)] worker-1 wrote 1" in case.find("system-err").text


def test_a_clean_campaign_is_one_passing_case_and_no_sarif_result(tmp_path: Path) -> None:
    passed = check(f"{PROGRAMS}/report_prints.py:correct", tmp_path, "--budget", "5", "--quiet")
    assert passed.returncode == 0
    suite = ElementTree.parse(tmp_path / "report.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and len(suite.findall("testcase")) == 1
    assert suite.find("testcase/failure") is None
    assert sarif_of(tmp_path)["runs"][0]["results"] == []
