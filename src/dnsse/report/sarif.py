"""The campaign as SARIF 2.1.0, the format code-scanning services show next to the code.

Each bug is a result of the rule named by its kind. Its locations are the
source lines of the failing steps (the raising line of an exception, the
call of a mismatched collective, ...); its code flow has one thread flow per
agent with the steps the story tells, so a viewer can walk the schedule.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import dnsse
from dnsse.engine.bugs import BugKind
from dnsse.engine.location import LAUNCH_DIRECTORY
from dnsse.report.console import shell_path
from dnsse.report.race import Race, find_race
from dnsse.report.story import SourceLine, Story, StoryStep
from dnsse.report.story_text import told_steps
from dnsse.campaign.config import CampaignResult, FoundBug

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"

RULES = {
    BugKind.DEADLOCK: "every live agent is blocked: a rank, thread, task or actor waits for something that never comes",
    BugKind.EXCEPTION: "an uncaught exception or failed assert in a rank, thread, task or actor",
    BugKind.COLLECTIVE_MISMATCH: "ranks issued different collectives (or shapes, dtypes, roots) at one position of a group",
    BugKind.SPEC_VIOLATION: "an execution violates a temporal-logic property of the program",
    BugKind.TIMEOUT: "an execution hit the step limit under fair scheduling: a livelock",
    BugKind.CRASH: "the program killed or aborted its process: a signal, os._exit, memory exhausted",
    BugKind.HANG: "an agent stayed blocked in a call outside control (a read nobody answers) past the wall-clock limit",
    BugKind.RACE: "a buffer read or written by two CUDA streams, or a stream and the host, with no ordering between them",
}
# Where a rule's kind of bug is explained.
HELP_URI = f"{dnsse.PROJECT_URI}#bug-kinds"


def sarif_report(result: CampaignResult, stories: list[Story | None]) -> dict:
    # Every kind is a rule, found or not, so that a code-scanning view knows them all.
    kinds = list(BugKind.ALL)
    extra = sorted({found.bug.kind for found in result.bugs} - set(kinds))
    kinds += extra
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dnsse",
                        "version": dnsse.__version__,
                        "informationUri": dnsse.PROJECT_URI,
                        "rules": [_rule(kind) for kind in kinds],
                    }
                },
                "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path(LAUNCH_DIRECTORY).as_uri() + "/"}},
                "invocations": [{"executionSuccessful": True}],
                "properties": {
                    "target": result.target,
                    "framework": result.framework,
                    "strategy": result.strategy,
                    "executions": result.executions,
                },
                "results": [
                    _result(found, story, kinds.index(found.bug.kind)) for found, story in zip(result.bugs, stories)
                ],
            }
        ],
    }


def _rule(kind: str) -> dict:
    return {
        "id": kind,
        "name": "".join(part.capitalize() for part in kind.split("_")),
        "shortDescription": {"text": RULES.get(kind, kind)},
        "helpUri": HELP_URI,
        "defaultConfiguration": {"level": "error"},
    }


def _result(found: FoundBug, story: Story | None, rule_index: int) -> dict:
    lines = story.failing_lines() if story is not None else []
    message = f"{found.bug.kind}: {found.bug.message}. Replay it: dnsse replay {shell_path(found.trace_path)}"
    result: dict = {
        "ruleId": found.bug.kind,
        "ruleIndex": rule_index,
        "level": "error",
        "message": {"text": message},
        "locations": [_location(lines[0], found.bug.message)] if lines else [],
        "partialFingerprints": {
            "dnsseBug/v1": hashlib.sha256("\0".join(found.bug.signature()).encode()).hexdigest()[:32]
        },
        "properties": {"trace": str(found.trace_path), "execution": found.execution},
    }
    if len(lines) > 1:
        result["relatedLocations"] = [
            {"id": index, **_location(line, "also named by the bug")} for index, line in enumerate(lines[1:], 1)
        ]
    if story is not None:
        code_flows = []
        race = find_race(story)
        if race is not None:
            result["message"]["text"] = (
                f"{found.bug.kind}: {found.bug.message}. What went wrong: {race.sentence}. "
                f"Replay it: dnsse replay {shell_path(found.trace_path)}"
            )
            code_flows.append(_race_flow(race))
        flows = [_thread_flow(story, lane) for lane in story.lanes]
        flows = [flow for flow in flows if flow["locations"]]
        if flows:
            code_flows.append({"message": {"text": "the minimized schedule, per agent"}, "threadFlows": flows})
        if code_flows:
            result["codeFlows"] = code_flows
    return result


def _race_flow(race: Race) -> dict:
    """What went wrong as a code flow: one thread flow per agent of the decisive steps, all of them essential."""
    lanes: list[str] = []
    for step in race.steps:
        if step.lane not in lanes:
            lanes.append(step.lane)
    flows = []
    for lane in lanes:
        mine = [step for step in race.steps if step.lane == lane and step.location is not None]
        flows.append({
            "id": lane,
            "locations": [
                {
                    "location": _location(_source(step), f"step {step.step}: {step.detail or step.operation}"),
                    "executionOrder": step.step,
                    "importance": "essential",
                }
                for step in mine
            ],
        })
    return {"message": {"text": race.sentence}, "threadFlows": [flow for flow in flows if flow["locations"]]}


def _location(line: SourceLine, text: str) -> dict:
    return {
        "physicalLocation": {
            "artifactLocation": _artifact(line.path),
            "region": {"startLine": max(1, line.line)},
        },
        "message": {"text": text},
    }


def _artifact(path: str) -> dict:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": Path(path).as_posix(), "uriBaseId": SOURCE_ROOT}


def _thread_flow(story: Story, lane: str) -> dict:
    steps: list[StoryStep] = [step for step in told_steps(story, lane) if step.location is not None]
    return {
        "id": lane,
        "locations": [
            {
                "location": _location(_source(step), f"step {step.step}: {step.detail or step.operation}"),
                "executionOrder": step.step,
            }
            for step in steps
        ],
    }


def _source(step: StoryStep) -> SourceLine:
    assert step.location is not None
    path, _, line = step.location.rpartition(":")
    return SourceLine(path, int(line))
