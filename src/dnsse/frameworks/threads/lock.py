"""Controlled ``threading.Lock`` and ``threading.RLock``.

Acquire and release are scheduling points; a blocked acquire is a wait that
names the lock, where it was created and who holds it, so a lock-order
deadlock report reads ``Lock#2 (created at prog.py:10) held by Thread-1``.
"""

from __future__ import annotations

from typing import Any

from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access
from dnsse.engine.untraced import untraced_method
from dnsse.frameworks.threads.primitive import Primitive, holder_name, owner_identity


def lock_timeout(blocking: bool, timeout: float) -> float | None:
    """Python's rules for ``acquire(blocking, timeout)``; ``None`` means wait forever."""
    if not blocking and timeout != -1:
        raise ValueError("can't specify a timeout for a non-blocking call")
    if timeout < 0 and timeout != -1:
        raise ValueError("timeout value must be positive")
    return None if timeout == -1 else float(timeout)


class _HeldLock(Primitive):
    """What Lock and RLock share: the context manager, the wait text, the events."""

    _holder: object

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    @untraced_method
    def __enter__(self) -> bool:
        return self.acquire()

    @untraced_method
    def __exit__(self, *exc: object) -> None:
        self.release()

    def _describe(self) -> str:
        return f"{self._label} held by {self._holder}"

    def _emit(self, name: str) -> None:
        agent = current_agent()
        if agent is not None:
            agent.execution.emit(agent, name, {"lock": self._name, "thread": agent.name})


class Lock(_HeldLock):
    kind = "Lock"

    @untraced_method
    def __init__(self) -> None:
        super().__init__()
        self._locked = False
        self._holder: str | None = None

    @untraced_method
    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        limit = lock_timeout(blocking, timeout)
        me = holder_name()

        def try_take() -> bool:
            if self._locked:
                return False
            self._locked = True
            self._holder = me
            return True

        took = self._acquire("lock.acquire", lambda: not self._locked, try_take, self._describe, blocking, limit)
        if took:
            self._emit("lock.acquire")
        return took

    @untraced_method
    def release(self) -> None:
        agent = current_agent()
        if agent is None:
            with self._guard:
                self._unlock()
            return
        self._change_at_point(agent, "lock.release", self._unlock, Access.RELEASE)
        self._emit("lock.release")

    @untraced_method
    def locked(self) -> bool:
        agent = current_agent()
        if agent is not None:
            self._point(agent, "lock.locked", Access.READ)
        return self._locked

    def _unlock(self) -> None:
        if not self._locked:
            raise RuntimeError("release unlocked lock")
        self._locked = False
        self._holder = None
        self._wake_uncontrolled()

    # Condition's protocol with its lock (as with CPython's locks): a plain lock
    # counts as owned whenever it is held.
    def _is_owned(self) -> bool:
        return self._locked

    def _release_save(self) -> None:
        with self._guard:
            self._unlock()
        self._emit("lock.release")

    def _acquire_restore(self, _state: None) -> None:
        self.acquire()

    def _at_fork_reinit(self) -> None:
        self._locked = False
        self._holder = None
        self._sleepers.clear()

    def __repr__(self) -> str:
        return f"<{'locked' if self._locked else 'unlocked'} {self._label}>"


class RLock(_HeldLock):
    """A reentrant lock: owned by one thread, released as often as acquired.

    Reentrant acquires and inner releases never block and change nothing
    another thread can see, so only the outermost ones are scheduling points.
    """

    kind = "RLock"

    @untraced_method
    def __init__(self) -> None:
        super().__init__()
        self._owner: object = None
        self._count = 0
        self._holder: str | None = None

    @untraced_method
    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        limit = lock_timeout(blocking, timeout)
        me = owner_identity()
        if self._owner == me:
            self._count += 1
            return True
        name = holder_name()

        def try_take() -> bool:
            if self._owner is not None:
                return False
            self._owner = me
            self._count = 1
            self._holder = name
            return True

        took = self._acquire("lock.acquire", lambda: self._owner is None, try_take, self._describe, blocking, limit)
        if took:
            self._emit("lock.acquire")
        return took

    @untraced_method
    def release(self) -> None:
        me = owner_identity()
        if self._owner != me:
            raise RuntimeError("cannot release un-acquired lock")
        if self._count > 1:
            self._count -= 1
            return
        agent = current_agent()
        if agent is None:
            with self._guard:
                self._unlock(me)
            return
        self._change_at_point(agent, "lock.release", lambda: self._unlock(me), Access.RELEASE)
        self._emit("lock.release")

    def _unlock(self, me: object) -> None:
        if self._owner != me:
            raise RuntimeError("cannot release un-acquired lock")
        self._owner = None
        self._count = 0
        self._holder = None
        self._wake_uncontrolled()

    def _is_owned(self) -> bool:
        return self._owner == owner_identity()

    def _recursion_count(self) -> int:
        """How often the caller holds the lock (0 when another does): as CPython's RLock answers it."""
        return self._count if self._owner == owner_identity() else 0

    def _release_save(self) -> tuple[int, Any]:
        me = owner_identity()
        with self._guard:
            count = self._count
            self._unlock(me)
        self._emit("lock.release")
        return (count, me)

    def _acquire_restore(self, state: tuple[int, Any]) -> None:
        count, me = state
        name = holder_name()

        def try_take() -> bool:
            if self._owner is not None:
                return False
            self._owner, self._count, self._holder = me, count, name
            return True

        self._acquire("lock.acquire", lambda: self._owner is None, try_take, self._describe, True, None)
        self._emit("lock.acquire")

    def _at_fork_reinit(self) -> None:
        self._owner = None
        self._count = 0
        self._holder = None
        self._sleepers.clear()

    def __repr__(self) -> str:
        state = f"locked by {self._holder}, count {self._count}" if self._owner is not None else "unlocked"
        return f"<{state} {self._label}>"

