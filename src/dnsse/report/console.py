"""What ``dnsse check`` and ``dnsse replay`` print on the terminal.

By default: a header, a live progress line on a terminal, then each bug with
its story (the minimized run per agent, with source lines) and what the
program printed in that run. ``--quiet`` keeps only each bug's line, trace
and replay command; ``--verbose`` adds one line per execution.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TextIO

from dnsse.coverage.arcs import ArcRecorder
from dnsse.engine.bugs import BugKind
from dnsse.engine.launch import is_command
from dnsse.engine.location import short_path
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.report.progress import ProgressLine
from dnsse.report.story import Story, tell
from dnsse.report.story_text import output_lines, story_lines
from dnsse.campaign.config import CampaignResult, FoundBug


class CheckConsole:
    """The terminal side of one ``check``: called back by the campaign, then given its result."""

    def __init__(self, arguments: argparse.Namespace, stream: TextIO | None = None) -> None:
        self.arguments = arguments
        self.stream = stream if stream is not None else sys.stdout
        self.quiet: bool = arguments.quiet
        self.verbose: bool = arguments.verbose
        self.progress: ProgressLine | None = None
        self.bugs_found = 0

    def print(self, text: str = "") -> None:
        if self.progress is not None:
            self.progress.print(text)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def start(self, target: LoadedTarget, framework: Framework) -> None:
        arguments = self.arguments
        if not self.quiet:
            # A launcher's ranks are those it spawns: known only when it does.
            fixed = target.launch is None or target.launch.torchrun is not None
            ranks = f", {arguments.world_size} ranks" if framework.name == "torch" and fixed else ""
            self.print(
                f"dnsse: checking {arguments.target} ({framework.name}{ranks}) with {arguments.strategy}, "
                f"budget {arguments.budget} executions, seed {arguments.seed}"
                + (f", {arguments.workers} worker processes" if arguments.workers > 1 else "")
            )
        self.progress = ProgressLine.on_terminal(arguments.budget, arguments.time_budget, enabled=not self.quiet)

    def phase(self, name: str) -> None:
        """What the campaign does between executions (minimizing, confirming), on the progress line."""
        if self.progress is not None:
            self.progress.show_phase(name)

    def execution(self, number: int, result: ExecutionResult, recorder: ArcRecorder | None) -> None:
        if self.verbose:
            outcome = f"{result.bug.kind}: {result.bug.message}" if result.bug is not None else "passed"
            if result.rejected is not None:
                outcome = f"input rejected ({result.rejected})"
            if result.divergence is not None:
                outcome = f"diverged: {result.divergence}"
            self.print(f"execution {number}: {outcome} ({result.steps} steps, {result.elapsed_s:.3f}s)")
        if self.progress is not None:
            self.progress.update(number, result.bug is not None, recorder)

    def bug(self, found: FoundBug) -> None:
        """A new bug, just recorded: said at once only when the campaign goes on after it."""
        self.bugs_found += 1
        if self.progress is not None:
            self.progress.bugs = self.bugs_found
        if self.arguments.keep_going and not self.quiet:
            self.print(
                f"bug {self.bugs_found} in execution {found.execution}: {found.bug.kind}: {found.bug.message} "
                "(its story follows at the end)"
            )

    def finish(self, result: CampaignResult) -> list[Story | None]:
        """Stop the progress line and tell each bug; the stories (None where one could not be told)."""
        if self.progress is not None:
            self.progress.close()
            self.progress = None
        stories = []
        for found in result.bugs:
            story = self._story_of(found)
            stories.append(story)
            self._tell(found, story)
        return stories

    def _story_of(self, found: FoundBug) -> Story | None:
        if self.quiet and not any(
            getattr(self.arguments, option, None) is not None for option in ("html", "junit", "sarif")
        ):
            return None
        if found.bug.kind == BugKind.CRASH:
            # Telling it would replay it here and kill this process: `dnsse replay` runs it supervised.
            return None
        try:
            return tell(found.trace_path)
        except BadInput as error:
            self.print(f"(the bug's run could not be told step by step: {error})")
            return None

    def _tell(self, found: FoundBug, story: Story | None) -> None:
        if self.quiet:
            self.print(f"{found.bug.kind}: {found.bug.message}")
            self.print(f"trace:  {found.trace_path}")
            self.print(f"replay: dnsse replay {shell_path(found.trace_path)}")
        else:
            self.print()
            self.print("\n".join(bug_block(found, story)))


def bug_block(found: FoundBug, story: Story | None) -> list[str]:
    """A found bug as a person reads it: the bug, its inputs, its story, its output, its trace."""
    # A crash is not replayed in the process that reports it: it would kill that process too.
    confirmed = "" if found.bug.kind == BugKind.CRASH else ", confirmed by replay of its trace"
    # Execution 0: a known failure replayed before the search (dnsse.campaign.known_failures).
    where = f"in execution {found.execution}" if found.execution else "again: a known failure, replayed first"
    lines = [
        f"found a bug {where} ({found.elapsed_s:.2f}s){confirmed}:",
        indent(found.bug.render()),
    ]
    if found.inputs:
        lines.append(f"  inputs: {inputs_line(found.inputs)}")
    if story is not None:
        lines += ["", indent("\n".join(story_lines(story))), "", indent("\n".join(printed_lines(story)))]
    lines.append(f"trace:  {found.trace_path}")
    lines.append(f"replay: dnsse replay {shell_path(found.trace_path)}")
    return lines


def printed_lines(story: Story, limit: int | None = 20) -> list[str]:
    """What the program printed in the story's run, under a title that says so."""
    if not story.output.chunks:
        return ["the program printed nothing in this run"]
    return ["what the program printed in this run:", *output_lines(story.output, limit)]


def tell_replay(trace_path: Path, force: bool = False, root: Path | None = None) -> tuple[Story, str]:
    """Run a trace for ``dnsse replay``: the story, and the text to print about it."""
    story = tell(trace_path, force, root)
    lines = [f"dnsse: replaying {trace_path} ({short_target(story.trace.target)}, {len(story.trace.choices)} choices)"]
    lines.extend(printed_lines(story, limit=None))
    if story.bug is None:
        lines.append("the execution passed: the recorded bug did not happen")
        return story, "\n".join(lines)
    verdict = "reproduced" if story.reproduced else "a different bug than the recorded one happened"
    lines.append(f"{verdict}:")
    lines.append(indent(story.bug.render()))
    if story.trace.inputs:
        lines.append(f"  inputs: {inputs_line(story.trace.inputs)}")
    lines.append("")
    lines.append(indent("\n".join(story_lines(story))))
    return story, "\n".join(lines)


def short_target(target: str) -> str:
    """``FILE.py:FUNC`` with the file relative to where dnsse was started, when below it."""
    if is_command(target):
        return target  # a launch command: as the user wrote it
    path, colon, function = target.rpartition(":")
    return f"{short_path(path)}:{function}" if colon else target


def inputs_line(inputs: dict[str, object]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in inputs.items())


def indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.splitlines())


def shell_path(path: Path) -> str:
    """The path as short as it can be for the user to paste: relative when below the cwd."""
    absolute = path.resolve()
    try:
        text = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        text = str(absolute)
    return shlex.quote(text)
