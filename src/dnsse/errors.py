"""Errors that reach the user as a message and exit status 2."""


class BadInput(Exception):
    """The user asked for something dnsse cannot do; the message says what to do instead."""
