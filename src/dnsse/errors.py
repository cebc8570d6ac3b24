"""Errors that reach the user as a message: exit status 2 (bad input), or 3 (:class:`EngineFailure`)."""

from __future__ import annotations


class BadInput(Exception):
    """The user asked for something dnsse cannot do; the message says what to do instead."""


class NotDeterministic(BadInput):
    """The program went another way on the same choices: it reads something dnsse does not control.

    Neither a bug nor a pass: what a search found cannot be trusted or
    replayed. The message says at which choice and how the runs differed.
    """


class InconclusiveReplay(BadInput):
    """A replay hit the wall-clock limit in code dnsse does not control: neither the bug nor a pass.

    The message says where each agent stood (see dnsse.engine.inconclusive).
    """


class NotUnderControl(BaseException):
    """The program called ``api``, which dnsse does not control; ``advice`` says what to do instead.

    A ``BaseException``, so that the program's own ``except Exception`` does
    not make a normal outcome of it (see dnsse.engine.uncontrolled). The
    campaign ends with exit 2 and the message; it is never a bug.
    """

    def __init__(self, api: str, advice: str, where: str | None = None) -> None:
        self.api = api
        self.advice = advice
        self.where = where
        super().__init__(self.message)

    @property
    def message(self) -> str:
        at = f" (called at {self.where})" if self.where else ""
        return f"{self.api} is not under control yet{at}: {self.advice}"


class EngineFailure(Exception):
    """dnsse itself failed while it ran an execution: exit status 3, never a pass nor a bug.

    ``traceback`` is where dnsse failed, printed under the message whether or
    not ``--debug`` was given: the failure happened in an agent's thread or a
    worker process, so the campaign's own traceback would not show it.
    """

    def __init__(self, summary: str, traceback: str) -> None:
        self.traceback = traceback
        super().__init__(summary)

    @classmethod
    def in_execution(cls, traceback: str, steps: int) -> EngineFailure:
        """dnsse failed in an agent's thread, after ``steps`` steps of the execution."""
        last = traceback.strip().splitlines()[-1] if traceback.strip() else "unknown error"
        return cls(f"dnsse failed inside an execution after {steps} steps ({last}); the execution was not finished", traceback)
