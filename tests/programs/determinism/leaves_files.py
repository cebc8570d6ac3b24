"""Writes into its working directory and loosens its mode: the next execution must not see either."""

import os
import stat


def main() -> None:
    assert os.listdir(".") == [], f"a file of an earlier execution is here: {os.listdir('.')}"
    assert stat.S_IMODE(os.stat(".").st_mode) == 0o700, oct(os.stat(".").st_mode)
    with open("left.txt", "w") as handle:
        handle.write("left behind")
    os.mkdir("sub")
    os.chmod(".", 0o755)


def clean() -> None:
    assert os.listdir(".") == [], f"a file of an earlier execution is here: {os.listdir('.')}"
    os.chmod(".", 0o700)  # the same mode: the directory can be kept for the next execution
