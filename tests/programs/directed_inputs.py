"""Programs whose bugs hide behind input values (explored inputs, fuzz, symbolic, hybrid)."""

import enum
import threading
from typing import Annotated, Literal

import dnsse


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
    assert steps == 3, "an int without a Range keeps its default"


def pool_race(free_blocks: Annotated[int, dnsse.Range(0, 64)] = 8) -> None:
    """Two requests check, then take, a block: only one free block and the wrong order lose."""
    pool = {"free": free_blocks}

    def request() -> None:
        if pool["free"] > 0:
            taken = pool["free"]
            pool["free"] = taken - 1
            assert pool["free"] >= 0

    def check_then_take() -> None:
        if pool["free"] >= 1:
            value = pool["free"]
            pool["free"] = value - 1
            if pool["free"] < 0:
                raise AssertionError(f"pool overdrawn with {free_blocks} free blocks")

    threads = [threading.Thread(target=check_then_take) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
