"""Which arc recorder an execution gets: the cheapest this interpreter has."""

from __future__ import annotations

from typing import Iterable

from dnsse.coverage import monitored_arcs
from dnsse.coverage.arcs import ArcRecorder


def arc_recorder(files: Iterable[str]) -> ArcRecorder:
    """``sys.monitoring`` events on CPython 3.12+ (unless ``DNSSE_TRACER=settrace``), ``sys.settrace`` before."""
    return monitored_arcs.MonitoredArcRecorder(files) if monitored_arcs.available() else ArcRecorder(files)
