"""The orderings of GPU streams as vector clocks, and the races a log of buffer accesses finds."""

from __future__ import annotations

from dnsse.frameworks.torch_dist.happens_before import Access, AccessLog, Timeline


def _access(timeline: Timeline, write: bool, start: int = 0, end: int = 16, site: str = "f.py:1") -> Access:
    return Access(timeline.key, timeline.label, timeline.advance(), write, start, end, "k", site)


def _record(log: AccessLog, timeline: Timeline, write: bool, start: int = 0, end: int = 16):
    return log.record(0, timeline, _access(timeline, write, start, end))


def test_a_read_of_what_another_stream_wrote_races_until_the_reader_waits_for_the_writer() -> None:
    main, side = Timeline("main", "the default stream"), Timeline("side", "stream 1")
    log = AccessLog()
    assert _record(log, side, write=True) is None
    race = _record(log, main, write=False)
    assert race is not None and race.earlier.timeline == "side" and race.later.timeline == "main"
    main.join(side.clock)
    assert _record(log, main, write=False) is None


def test_reads_on_two_streams_never_race() -> None:
    main, side = Timeline("main", "a"), Timeline("side", "b")
    log = AccessLog()
    assert _record(log, main, write=False) is None
    assert _record(log, side, write=False) is None


def test_a_write_after_another_streams_read_races() -> None:
    main, side = Timeline("main", "a"), Timeline("side", "b")
    log = AccessLog()
    assert _record(log, side, write=False) is None
    race = _record(log, main, write=True)
    assert race is not None and not race.earlier.write and race.later.write


def test_disjoint_parts_of_one_buffer_do_not_race() -> None:
    main, side = Timeline("main", "a"), Timeline("side", "b")
    log = AccessLog()
    assert _record(log, side, write=True, start=0, end=8) is None
    assert _record(log, main, write=True, start=8, end=16) is None
    assert _record(log, main, write=False, start=4, end=12) is not None


def test_an_ordering_covers_only_the_work_issued_before_it() -> None:
    main, side = Timeline("main", "a"), Timeline("side", "b")
    log = AccessLog()
    _record(log, side, write=True)
    main.join(side.clock)
    assert _record(log, side, write=True) is None  # a later kernel of the same stream
    assert _record(log, main, write=False) is not None  # not covered by the earlier wait


def test_orderings_are_transitive() -> None:
    a, b, c = Timeline("a", "a"), Timeline("b", "b"), Timeline("c", "c")
    log = AccessLog()
    _record(log, a, write=True)
    b.join(a.clock)
    b.advance()
    c.join(b.clock)
    assert _record(log, c, write=False) is None
