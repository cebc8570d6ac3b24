"""Controlled ``threading.Semaphore`` and ``threading.BoundedSemaphore``."""

from __future__ import annotations

from dnsse.engine.execution import current_agent
from dnsse.engine.untraced import untraced_method
from dnsse.frameworks.threads.primitive import Primitive


class Semaphore(Primitive):
    kind = "Semaphore"

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("semaphore initial value must be >= 0")
        super().__init__()
        self._value = value

    @untraced_method
    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")

        def try_take() -> bool:
            if self._value <= 0:
                return False
            self._value -= 1
            return True

        return self._acquire("semaphore.acquire", lambda: self._value > 0, try_take, self._describe, blocking, timeout)

    __enter__ = acquire

    @untraced_method
    def release(self, n: int = 1) -> None:
        if n < 1:
            raise ValueError("n must be one or more")
        agent = current_agent()
        if agent is None:
            with self._guard:
                self._add(n)
            return
        self._change_at_point(agent, "semaphore.release", lambda: self._add(n))

    @untraced_method
    def __exit__(self, *exc: object) -> None:
        self.release()

    def _add(self, n: int) -> None:
        self._value += n
        self._wake_uncontrolled()

    def _describe(self) -> str:
        return f"{self._label} to be released (value {self._value})"

    def __repr__(self) -> str:
        return f"<{self._label} value={self._value}>"


class BoundedSemaphore(Semaphore):
    """A semaphore that refuses to be released above its initial value."""

    kind = "BoundedSemaphore"

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._initial_value = value

    def _add(self, n: int) -> None:
        if self._value + n > self._initial_value:
            raise ValueError("Semaphore released too many times")
        super()._add(n)
