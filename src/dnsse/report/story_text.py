"""A bug's story as terminal text: what went wrong, then per agent, the steps that matter.

First, where a known pattern fits (see :mod:`dnsse.report.race`), one
sentence says what went wrong and the steps that decide it follow in time
order, each with its agent, what it read or wrote (by the program's names,
with values) and its source line. Then each agent's steps. The run is cut to what a person reads in a minute:

- an agent's first step (``start``, before any line of it ran) is left out;
- consecutive steps of one agent at one source line are one entry (issuing a
  collective and returning from it; the steps of a spin loop), with a count;
- each agent shows its last entries, and always the steps where the schedule
  chose another agent than the default (the preemptions the bug needs) and
  the step that broke the run.
"""

from __future__ import annotations

import linecache
import os
import textwrap

from dnsse.engine.location import LAUNCH_DIRECTORY
from dnsse.engine.output import CapturedOutput
from dnsse.report.race import find_race
from dnsse.report.story import Story, StoryStep

# Entries shown per agent, besides the switches and the failing step.
ENTRIES_PER_AGENT = 8
OUTPUT_LINES = 20
CODE_WIDTH = 56
WHAT_WIDTH = 34


class _Entry:
    """Consecutive steps of one agent at one source line, told as one line."""

    __slots__ = ("first", "count", "descriptions")

    def __init__(self, first: StoryStep) -> None:
        self.first = first
        self.count = 1
        self.descriptions = [first.detail or first.operation]

    def add(self, step: StoryStep) -> None:
        self.count += 1
        if step.operation.startswith(self.first.operation + "."):
            return  # the same call's own bookkeeping (``all_reduce.issued`` after ``all_reduce``)
        description = step.detail or step.operation
        if description not in self.descriptions:
            self.descriptions.append(description)


def story_lines(story: Story, entries_per_agent: int = ENTRIES_PER_AGENT) -> list[str]:
    """The story as lines of text, without a trailing newline."""
    failing = story.failing_step()
    switches = story.switches
    total = len(story.steps)
    if switches == 0:
        how = "no preemption: every agent ran until it blocked or finished"
    else:
        how = f"{switches} step{'s' if switches != 1 else ''} where the schedule preempted the default agent"
    lines = race_lines(story)
    lines.append(f"how it happens ({total} steps, {how}):")
    for lane in story.lanes:
        entries = _entries(_with_preemptions(story.steps, lane), failing)
        if not entries:
            continue
        shown = _kept(entries, failing, entries_per_agent)
        steps_in_lane = sum(entry.count for entry in entries)
        lines.append(f"  {lane} ({steps_in_lane} step{'s' if steps_in_lane != 1 else ''})")
        hidden = 0
        for index, entry in enumerate(entries):
            if index not in shown:
                hidden += entry.count
                continue
            if hidden:
                lines.append(f"      ... {hidden} earlier step{'s' if hidden != 1 else ''}")
                hidden = 0
            lines.append(_entry_line(entry, entry.first is failing))
            if entry.first.time_note is not None:
                lines.append(f"               time: {entry.first.time_note}")
        if lane in story.finished_lanes and (failing is None or failing.lane != lane):
            lines.append("             finished")
    if failing is not None and story.bug is not None:
        lines.append(f"  the run broke at step {failing.step} in {failing.lane}: {story.bug.kind}")
        for source in story.bug_lines[:4]:
            lines.append(f"    {source}  {_code(source.path, source.line)}".rstrip())
    return lines


PREEMPTED = "preempted"
SENTENCE_WIDTH = 100


def race_lines(story: Story) -> list[str]:
    """What went wrong in one sentence, and the steps that decide it in time order; nothing if unknown."""
    race = find_race(story)
    if race is None:
        return []
    lines = textwrap.wrap(f"what went wrong: {race.sentence}", SENTENCE_WIDTH, subsequent_indent="  ")
    width = max(len(step.agent) for step in race.steps)
    for step in race.steps:
        text = f"  step {step.step:>4}  {step.agent:<{width}}  {step.detail}"
        if step.location is not None:
            path, _, line = step.location.rpartition(":")
            text += f"  at {step.location}  {_code(path, int(line))}"
        lines.append(text.rstrip())
    lines.append("")
    return lines



def told_steps(story: Story, lane: str, entries_per_agent: int = ENTRIES_PER_AGENT) -> list[StoryStep]:
    """The steps of ``lane`` that the story tells (the first of each merged entry), in order."""
    entries = _entries(_with_preemptions(story.steps, lane), story.failing_step())
    shown = _kept(entries, story.failing_step(), entries_per_agent)
    return [entry.first for index, entry in enumerate(entries) if index in shown]


def _with_preemptions(steps: list[StoryStep], lane: str) -> list[StoryStep]:
    """The lane's steps, with a mark where the schedule made another agent run instead of it."""
    result = []
    for step in steps:
        if step.lane == lane:
            result.append(step)
        elif step.switched_from == lane:
            result.append(StoryStep(step.step, lane, lane, PREEMPTED, f"preempted: {step.agent} runs", None, False))
    return result


def _entries(steps: list[StoryStep], failing: StoryStep | None) -> list[_Entry]:
    entries: list[_Entry] = []
    for step in steps:
        if step.operation == "start" and step.location is None and step.switched_from is None:
            continue
        last = entries[-1] if entries else None
        mergeable = (
            last is not None
            and step.location is not None
            and step.location == last.first.location
            and not step.is_async
            and step.switched_from is None
            and step.time_note is None
            and last.first.time_note is None
            and last.first.operation != PREEMPTED
            and step is not failing
            and last.first is not failing
        )
        if mergeable:
            last.add(step)  # type: ignore[union-attr]
        else:
            entries.append(_Entry(step))
    return entries


def _kept(entries: list[_Entry], failing: StoryStep | None, limit: int) -> set[int]:
    """Indices of the entries shown: the last ``limit``, every switch and the failing step."""
    kept = set(range(max(0, len(entries) - limit), len(entries)))
    for index, entry in enumerate(entries):
        first = entry.first
        if first.switched_from is not None or first.operation == PREEMPTED or first is failing or first.time_note:
            kept.add(index)
    return kept


def _entry_line(entry: _Entry, failing: bool) -> str:
    step = entry.first
    marker = "✗" if failing else ("⏸" if step.operation == PREEMPTED else " ")
    what = ", ".join(entry.descriptions[:3]) + (", ..." if len(entry.descriptions) > 3 else "")
    if step.is_async:
        what = f"async: {what}"
    if entry.count > len(entry.descriptions):
        what += f" ({entry.count} steps)"
    if step.switched_from is not None:
        what += f"  <- runs before {step.switched_from}"
    text = f"  {marker} step {step.step:>4}  {what:<{WHAT_WIDTH}}"
    if step.location is not None:
        path, _, line = step.location.rpartition(":")
        text += f"  {step.location}  {_code(path, int(line))}"
    return text.rstrip()


def _code(path: str, line: int) -> str:
    """The source text of ``path:line``, stripped and shortened to fit one column."""
    text = linecache.getline(os.path.join(LAUNCH_DIRECTORY, path), line).strip()
    return text if len(text) <= CODE_WIDTH else text[: CODE_WIDTH - 3] + "..."


def output_lines(output: CapturedOutput, limit: int | None = OUTPUT_LINES) -> list[str]:
    """What the program printed, each line prefixed with the agent that printed it."""
    lines = output.lines()
    shown = lines if limit is None else lines[-limit:]
    text = []
    if len(shown) < len(lines):
        text.append(f"  ... {len(lines) - len(shown)} earlier lines (dnsse replay shows them all)")
    for agent, stream, line in shown:
        label = agent if stream == "stdout" else f"{agent}, stderr"
        text.append(f"  [{label}] {line}")
    if output.dropped_chars:
        text.append(f"  ... and {output.dropped_chars} more characters, not kept")
    return text
