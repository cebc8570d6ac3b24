"""The exception ``dnsse.assume(False)`` raises: the program rejects the input it was given.

Below the scheduler, which ends a run with it as a rejection and not a bug;
what else counts as a rejection is judged after the run (:mod:`dnsse.engine.rejection`).
"""


class InputRejected(BaseException):
    """Raised by ``dnsse.assume(False)``: not an ``Exception``, so the program's ``except Exception`` lets it through."""
