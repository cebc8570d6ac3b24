"""A test suite whose decorator names a framework that does not exist: its collection fails, no test runs."""

import dnsse


@dnsse.test(framework="tourch", budget=5)
def test_never_runs(rank, world_size):
    pass


def test_plain():
    pass
