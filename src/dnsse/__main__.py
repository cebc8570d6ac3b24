"""``python -m dnsse`` is the ``dnsse`` command, for an environment whose scripts are not on PATH."""

from dnsse.cli import run

run()
