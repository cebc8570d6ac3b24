"""Controlled ``threading.Condition``.

A notify wakes only threads already waiting (FIFO, as CPython does), so a
notify sent before the other thread waits is lost, and that thread waits
forever: with no other thread left to run, the engine reports a deadlock
naming the condition. That is the lost wake-up bug this makes findable.
"""

from __future__ import annotations

import _thread
import collections
from typing import Any, Callable, TypeVar

from dnsse.engine.execution import current_agent
from dnsse.frameworks.threads import clock
from dnsse.frameworks.threads.lock import RLock
from dnsse.frameworks.threads.primitive import Primitive, block_until

T = TypeVar("T")


class _Waiter:
    __slots__ = ("notified", "real")

    def __init__(self, real: _thread.LockType | None) -> None:
        self.notified = False
        # Only an uncontrolled waiter really blocks, on this lock.
        self.real = real


class Condition(Primitive):
    kind = "Condition"

    def __init__(self, lock: Any = None) -> None:
        super().__init__()
        if lock is None:
            lock = RLock()
        self._lock = lock
        self.acquire = lock.acquire
        self.release = lock.release
        self._waiters: collections.deque[_Waiter] = collections.deque()
        # What a waiter waits for, in a deadlock report; a Barrier says more.
        self.describe_wait: Callable[[], str] = lambda: f"a notify of {self._label}"

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__(*exc)

    def wait(self, timeout: float | None = None) -> bool:
        if not self._is_owned():
            raise RuntimeError("cannot wait on un-acquired lock")
        agent = current_agent()
        if agent is not None:
            self._point(agent, "condition.wait")
            waiter = _Waiter(None)
        else:
            waiter = _Waiter(_thread.allocate_lock())
            waiter.real.acquire()  # type: ignore[union-attr]
        with self._guard:
            self._waiters.append(waiter)
        saved = self._release_save()
        notified = False
        try:
            if agent is None:
                if timeout is None:
                    notified = waiter.real.acquire()  # type: ignore[union-attr]
                elif timeout > 0:
                    notified = waiter.real.acquire(True, timeout)  # type: ignore[union-attr]
                else:
                    notified = waiter.real.acquire(False)  # type: ignore[union-attr]
            elif timeout is not None and timeout <= 0:
                notified = waiter.notified
            else:
                operation = self._operation("condition.wakeup")
                notified = block_until(agent, operation, lambda: waiter.notified, self.describe_wait, timeout)
        finally:
            if not notified:
                with self._guard:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)
            self._acquire_restore(saved)
        return notified

    def wait_for(self, predicate: Callable[[], T], timeout: float | None = None) -> T:
        """As CPython's, on the virtual clock: an expired wait means the time has passed."""
        endtime = None
        waittime = timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = clock.monotonic() + waittime
                else:
                    waittime = endtime - clock.monotonic()
                    if waittime <= 0:
                        break
            self.wait(waittime)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        self._notify(n)

    def notify_all(self) -> None:
        self._notify(None)

    def _notify(self, n: int | None) -> None:
        if not self._is_owned():
            raise RuntimeError("cannot notify on un-acquired lock")
        agent = current_agent()
        if agent is not None:
            self._point(agent, "condition.notify")
        with self._guard:
            count = len(self._waiters) if n is None else min(n, len(self._waiters))
            for _ in range(count):
                waiter = self._waiters.popleft()
                waiter.notified = True
                if waiter.real is not None:
                    waiter.real.release()

    def _is_owned(self) -> bool:
        owned = getattr(self._lock, "_is_owned", None)
        if owned is not None:
            return owned()
        # A foreign lock: CPython's test, held by anybody counts as owned.
        if self._lock.acquire(False):
            self._lock.release()
            return False
        return True

    def _release_save(self) -> Any:
        save = getattr(self._lock, "_release_save", None)
        if save is not None:
            return save()
        self._lock.release()
        return None

    def _acquire_restore(self, state: Any) -> None:
        restore = getattr(self._lock, "_acquire_restore", None)
        if restore is not None:
            restore(state)
        else:
            self._lock.acquire()

    def __repr__(self) -> str:
        return f"<{self._label} ({self._lock!r}, {len(self._waiters)} waiting)>"
