"""Controlled ``threading.Barrier``: CPython's algorithm on a controlled condition.

Keeping CPython's state machine (filling, draining, resetting, broken) keeps
its exact semantics: the index each party gets, the action run by the last
party, ``BrokenBarrierError`` on abort, reset, timeout or a failing action.
"""

from __future__ import annotations

from threading import BrokenBarrierError
from typing import Callable

from dnsse.frameworks.threads.condition import Condition
from dnsse.frameworks.threads.lock import Lock
from dnsse.frameworks.threads.primitive import Primitive

_FILLING, _DRAINING, _RESETTING, _BROKEN = 0, 1, -1, -2


class Barrier(Primitive):
    kind = "Barrier"

    def __init__(self, parties: int, action: Callable[[], object] | None = None, timeout: float | None = None) -> None:
        super().__init__()
        self._cond = Condition(Lock())
        self._cond.describe_wait = self._describe
        self._action = action
        self._timeout = timeout
        self._parties = parties
        self._state = _FILLING
        self._count = 0

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            timeout = self._timeout
        with self._cond:
            self._enter()
            index = self._count
            self._count += 1
            try:
                if index + 1 == self._parties:
                    self._release()
                else:
                    self._wait(timeout)
                return index
            finally:
                self._count -= 1
                self._exit()

    def _enter(self) -> None:
        while self._state in (_RESETTING, _DRAINING):
            self._cond.wait()
        if self._state < 0:
            raise BrokenBarrierError

    def _release(self) -> None:
        try:
            if self._action:
                self._action()
            self._state = _DRAINING
            self._cond.notify_all()
        except BaseException:
            self._break()
            raise

    def _wait(self, timeout: float | None) -> None:
        if not self._cond.wait_for(lambda: self._state != _FILLING, timeout):
            self._break()
            raise BrokenBarrierError
        if self._state < 0:
            raise BrokenBarrierError

    def _exit(self) -> None:
        if self._count == 0 and self._state in (_RESETTING, _DRAINING):
            self._state = _FILLING
            self._cond.notify_all()

    def reset(self) -> None:
        with self._cond:
            if self._count > 0:
                if self._state in (_FILLING, _BROKEN):
                    self._state = _RESETTING
            else:
                self._state = _FILLING
            self._cond.notify_all()

    def abort(self) -> None:
        with self._cond:
            self._break()

    def _break(self) -> None:
        self._state = _BROKEN
        self._cond.notify_all()

    @property
    def parties(self) -> int:
        return self._parties

    @property
    def n_waiting(self) -> int:
        return self._count if self._state == _FILLING else 0

    @property
    def broken(self) -> bool:
        return self._state == _BROKEN

    def _describe(self) -> str:
        if self._state == _FILLING:
            return f"{self._label} ({self._count} of {self._parties} parties arrived)"
        return f"{self._label} to drain"

    def __repr__(self) -> str:
        if self.broken:
            return f"<{self._label}: broken>"
        return f"<{self._label}: waiters={self.n_waiting}/{self.parties}>"
