"""A module beside the targets: its globals must start over in every execution."""

runs = 0
shared: dict[str, int] = {}


def bump() -> int:
    global runs
    runs += 1
    return runs
