"""Threads programs that import modules beside them, as `python threads_siblings.py` would."""

import threading

import tally
from tools.ops import add


def runs_once() -> None:
    """Fine in every execution: tally's counter starts over, as in a fresh process."""
    assert tally.bump() == 1, f"tally.runs is {tally.runs}: an earlier execution's state leaked in"


def lost_update() -> None:
    """Two threads read-modify-write one entry of a dict that lives in a sibling module."""
    assert tally.bump() == 1, f"tally.runs is {tally.runs}: an earlier execution's state leaked in"
    threads = [threading.Thread(target=add, args=(tally.shared, "hits")) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.shared["hits"] == 2, f"lost update: hits is {tally.shared['hits']}"
