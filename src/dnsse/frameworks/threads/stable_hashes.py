"""An order of ``concurrent.futures`` futures that is the same in every execution of a schedule.

``concurrent.futures.as_completed`` and ``wait`` take the lock of every
future they are given in the order of the futures' addresses (``id``), put
the futures in a ``set``, register their waiter and yield the futures
already finished in the set's order, which an object's default hash (its
address) decides too. Addresses change from one execution to the next, so
the steps did: a trace of a lost update among pool workers did not replay
("not deterministic under control"), and the campaign stopped. While a
program runs under control, each future made by one of its agents is
numbered in the execution (the first made is 1), hashes to its number, and
the locks are taken in the order of the numbers (one total order still, so
no two callers take them in opposite orders). A future made outside any
execution keeps the default hash and its place by address.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable

from dnsse.engine.execution import current_agent
from dnsse.frameworks.threads.runtime import runtime_for

_Future = concurrent.futures.Future
_future_init = _Future.__init__


def _numbered_init(self: concurrent.futures.Future, *args: Any, **kwargs: Any) -> None:
    _future_init(self, *args, **kwargs)
    agent = current_agent()
    if agent is not None:
        self._dnsse_number = runtime_for(agent.execution).number("concurrent.futures.Future")


def _stable_hash(self: concurrent.futures.Future) -> int:
    number = self.__dict__.get("_dnsse_number")
    return number if number is not None else object.__hash__(self)


def _acquire_in_order(self: Any, futures: Any) -> None:
    # concurrent.futures sorts by id() for one global order of the locks; the stable hash is one too.
    self.futures = sorted(futures, key=_stable_hash)


REPLACEMENTS: tuple[tuple[object, str, Callable[..., Any]], ...] = (
    (_Future, "__init__", _numbered_init),
    (_Future, "__hash__", _stable_hash),
    (concurrent.futures._base._AcquireFutures, "__init__", _acquire_in_order),
)
