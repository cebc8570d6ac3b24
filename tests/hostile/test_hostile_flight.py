"""The flight recorder: what an execution chose, readable from its file after the process is gone."""

from __future__ import annotations

from pathlib import Path

from dnsse.engine.choices import Choice
from dnsse.engine.flight import FlightRecorder, read_flight_record


def test_choices_of_the_running_execution_are_read_back(tmp_path: Path) -> None:
    recorder = FlightRecorder(tmp_path / "flight", capacity=10)
    recorder.begin(4)
    recorder.record("seed", 2**31, 77)
    recorder.record("agent", 3, 2)
    record = read_flight_record(tmp_path / "flight")
    assert record is not None and record.executing and record.execution == 4 and record.complete
    assert record.choices == [Choice("seed", 2**31, 77), Choice("agent", 3, 2)]
    recorder.end()
    assert not read_flight_record(tmp_path / "flight").executing


def test_a_choice_among_more_options_than_the_record_holds_marks_it_incomplete(tmp_path: Path) -> None:
    recorder = FlightRecorder(tmp_path / "flight", capacity=1)
    recorder.begin(1)
    recorder.record("input", 2**70, 5)
    recorder.record("agent", 2, 1)
    recorder.record("agent", 2, 0)
    record = read_flight_record(tmp_path / "flight")
    assert record is not None and not record.complete


def test_no_record_is_none(tmp_path: Path) -> None:
    assert read_flight_record(tmp_path / "missing") is None
