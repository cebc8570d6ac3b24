"""``python -m dnsse check FILE.py:FUNC``: the same command line as the ``dnsse`` script."""

from dnsse.cli import run

run()
