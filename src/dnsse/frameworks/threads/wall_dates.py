"""``datetime.now()`` and ``date.today()`` on the execution's virtual clock.

``datetime.datetime.now`` reads the system clock in C, not through
``time.time``, so the module's two classes are replaced, while a program
runs under control, by subclasses whose ``now``, ``utcnow`` and ``today``
read virtual time (as freezegun does). Every other method is the real
one; an instance check against them accepts real dates and datetimes too,
so values made before the replacement, or by C code, still pass
``isinstance(value, datetime.datetime)``. Outside an execution they read
the real clock: a module that imported the names while they were replaced
(``from datetime import datetime``) keeps the subclasses after the campaign.
"""

from __future__ import annotations

import datetime
from typing import Any

from dnsse.engine.execution import current_agent
from dnsse.frameworks.threads.runtime import WALL_CLOCK_BASE, runtime_for

real_datetime = datetime.datetime
real_date = datetime.date


def _virtual_timestamp() -> float | None:
    """Seconds since the epoch on the calling agent's clock; ``None`` outside an execution."""
    agent = current_agent()
    if agent is None:
        return None
    return WALL_CLOCK_BASE + runtime_for(agent.execution).read_clock(agent)


class _AcceptsRealDates(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, cls.__mro__[1])

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, cls.__mro__[1])


class VirtualDate(real_date, metaclass=_AcceptsRealDates):
    @classmethod
    def today(cls) -> Any:
        timestamp = _virtual_timestamp()
        return super().today() if timestamp is None else cls.fromtimestamp(timestamp)


class VirtualDatetime(real_datetime, metaclass=_AcceptsRealDates):
    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> Any:
        timestamp = _virtual_timestamp()
        return super().now(tz) if timestamp is None else cls.fromtimestamp(timestamp, tz)

    @classmethod
    def utcnow(cls) -> Any:
        timestamp = _virtual_timestamp()
        if timestamp is None:
            return super().utcnow()
        return cls.fromtimestamp(timestamp, datetime.timezone.utc).replace(tzinfo=None)

    @classmethod
    def today(cls) -> Any:
        return cls.now()
