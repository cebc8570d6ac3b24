"""Controlled ``threading.Event``."""

from __future__ import annotations

from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access
from dnsse.engine.untraced import untraced_method
from dnsse.frameworks.threads.primitive import Primitive, block_until


class Event(Primitive):
    kind = "Event"

    @untraced_method
    def __init__(self) -> None:
        super().__init__()
        self._flag = False

    @untraced_method
    def is_set(self) -> bool:
        agent = current_agent()
        if agent is not None:
            self._point(agent, "event.is_set", Access.READ)
        return self._flag

    @untraced_method
    def set(self) -> None:
        self._change(True)

    @untraced_method
    def clear(self) -> None:
        self._change(False)

    @untraced_method
    def wait(self, timeout: float | None = None) -> bool:
        agent = current_agent()
        if agent is None:
            return self._wait_uncontrolled(lambda: self._flag, timeout)
        if timeout is not None and timeout <= 0:
            self._point(agent, "event.wait", Access.READ)
            return self._flag
        operation = self._operation("event.wait", Access.READ)
        return block_until(agent, operation, lambda: self._flag, self._describe, timeout) or self._flag

    def _change(self, flag: bool) -> None:
        agent = current_agent()
        if agent is not None:
            self._point(agent, "event.set" if flag else "event.clear")
        with self._guard:
            self._flag = flag
            if flag:
                self._wake_uncontrolled()

    def _describe(self) -> str:
        return f"{self._label} to be set"

    def __repr__(self) -> str:
        return f"<{self._label} {'set' if self._flag else 'unset'}>"
