"""Programs whose bugs hide behind input values (explored inputs, fuzz, symbolic, hybrid)."""

import enum
import threading
from typing import Annotated, Literal

import dnsse
from hypothesis import strategies


class Mode(enum.Enum):
    EAGER = "eager"
    LAZY = "lazy"


def pair_equal(a: Annotated[int, dnsse.Range(0, 10_000)] = 0, b: Annotated[int, dnsse.Range(0, 10_000)] = 0) -> None:
    """Fails only when a is exactly 3 * b + 1234: one value of b per a."""
    if a == 3 * b + 1234:
        raise AssertionError(f"reached the equality with a={a}, b={b}")


def narrow_band(
    x: Annotated[int, dnsse.Range(-100_000, 100_000)] = 0, y: Annotated[int, dnsse.Range(-100_000, 100_000)] = 0
) -> None:
    """Fails in a band of width 3 of x + y, with x // 7 pinned near y % 11."""
    total = x + y
    if 77_000 < total < 77_004 and x // 7 == y % 11 + 1000:
        raise AssertionError(f"reached the band with x={x}, y={y}")


def choices(mode: Mode = Mode.EAGER, flag: bool = False, kind: Literal["a", "b", "c"] = "a") -> None:
    if mode is Mode.LAZY and flag and kind == "c":
        raise AssertionError("lazy, flagged, kind c")


def unbounded(steps: int = 3) -> None:
    """An int without a Range: explored over every int64, the default first."""


def pool_race(free_blocks: Annotated[int, dnsse.Range(0, 1_000_000)] = 8) -> None:
    """Two requests check for a free block, then take one: with exactly one left, both may take it."""
    pool = {"free": free_blocks}

    def request() -> None:
        if pool["free"] >= 1:
            left = pool["free"]
            pool["free"] = left - 1
            if pool["free"] < 0:
                raise AssertionError(f"pool overdrawn: {free_blocks} free blocks, two requests")

    threads = [threading.Thread(target=request) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def staged() -> None:
    """The consumer fails only when it sees every stage of the producer, in turn: a deep ordering."""
    state = {"flag": 0}

    def producer() -> None:
        for stage in range(1, 9):
            state["flag"] = stage

    def consumer() -> None:
        if state["flag"] == 1:
            if state["flag"] == 2:
                if state["flag"] == 3:
                    if state["flag"] == 4:
                        if state["flag"] == 5:
                            if state["flag"] == 6:
                                if state["flag"] == 7:
                                    raise AssertionError("the consumer saw every stage")

    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def drawn(words: Annotated[list, strategies.lists(strategies.sampled_from(["a", "b"]), max_size=3)] = []) -> None:  # noqa: B006
    """An input drawn from a Hypothesis strategy: one choice seeds the draw."""
    assert words != ["b", "b", "b"], "three b"
