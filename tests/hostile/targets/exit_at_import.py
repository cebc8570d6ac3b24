"""A module that exits while it is imported."""

import sys

sys.exit(0)


def main() -> None:
    pass
