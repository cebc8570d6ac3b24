"""Errors that reach the user as a message and exit status 2."""


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
