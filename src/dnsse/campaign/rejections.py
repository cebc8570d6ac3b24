"""Counting the inputs a program rejected, and saying so when it rejected them all."""

from __future__ import annotations

from dnsse.errors import BadInput

# Distinct rejection messages kept to show the user.
SHOWN = 5


class Rejections:
    """The runs whose input the program rejected (see dnsse.engine.rejection), and why."""

    def __init__(self) -> None:
        self.runs = 0
        self.reasons: list[str] = []

    def count(self, why: str) -> None:
        self.runs += 1
        if why not in self.reasons and len(self.reasons) < SHOWN:
            self.reasons.append(why)

    def check_some_accepted(self, executions: int, found_bugs: bool) -> None:
        """BadInput when the program rejected every input it was given: the campaign tested nothing."""
        if executions == 0 or self.runs < executions or found_bugs:
            return
        raise BadInput(
            f"the program rejected every input it was given ({executions} execution"
            f"{'s' if executions != 1 else ''}): " + "; ".join(self.reasons)
            + ". An exception before the entry function's first controlled step, or dnsse.assume(False), "
            "rejects an input; give defaults the program accepts, or pin one with --input NAME=VALUE"
        )
