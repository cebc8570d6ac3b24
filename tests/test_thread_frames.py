"""Reading where threads stand never lets a garbage collection run inside ``sys._current_frames``.

A collection there can deadlock CPython 3.11 (see dnsse.engine.thread_frames);
the test makes one due at the first allocation and watches for it.
"""

from __future__ import annotations

import gc
import sys
import threading

import pytest

from dnsse.engine import thread_frames


class Tracked:
    pass


@pytest.fixture
def collections_while_reading(monkeypatch: pytest.MonkeyPatch):
    """Collections that started while ``sys._current_frames`` ran, with one due at its first allocation."""
    real = sys._current_frames
    reading = [False]
    started: list[str] = []

    def current_frames():
        reading[0] = True
        try:
            # New objects the collector tracks (no free list), as the frame objects of the real call are.
            garbage = [Tracked() for _ in range(10)]
            del garbage
            return real()
        finally:
            reading[0] = False

    def watch(phase: str, info: dict) -> None:
        if phase == "start" and reading[0]:
            started.append(phase)

    monkeypatch.setattr(sys, "_current_frames", current_frames)
    threshold = gc.get_threshold()
    gc.callbacks.append(watch)
    gc.set_threshold(1)
    try:
        yield started
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(watch)


def test_no_collection_runs_while_frames_are_read(collections_while_reading: list[str]) -> None:
    assert gc.isenabled()
    frame = thread_frames.frame_of_thread(threading.get_ident())
    assert frame is not None
    assert collections_while_reading == []
    assert gc.isenabled()


def test_the_yardstick_sees_a_collection_in_a_plain_read(collections_while_reading: list[str]) -> None:
    sys._current_frames()
    assert collections_while_reading != []


def test_a_collector_the_program_turned_off_stays_off() -> None:
    gc.disable()
    try:
        thread_frames.frame_of_thread(threading.get_ident())
        assert not gc.isenabled()
    finally:
        gc.enable()
