"""ObjectRefs and the object store of one execution.

A ref is filled once, by a ``put`` or when its task ends, always at a
scheduling point. Values are copied into the store and out of it again, as
Ray serializes them: a task that mutates its argument, or a driver that
mutates what ``get`` returned, changes nobody else's copy. Refs and actor
handles inside values are passed as they are (they are names, not data).
"""

from __future__ import annotations

from asyncio import events
from typing import Any, Callable, Generator

from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.errors import RayTaskError
from dnsse.frameworks.ray.serialization import copy_value, passed_by_name
from dnsse.frameworks.threads.event_loop import ControlledLoop

_PENDING, _VALUE, _ERROR = 0, 1, 2


@passed_by_name
class ObjectRef:
    """A future value of the object store: ``ray.get(ref)``, ``await ref``, or a task argument."""

    __slots__ = ("number", "source", "object_name", "canceller", "_state", "_value", "__weakref__")

    def __init__(self, number: int, source: str) -> None:
        self.number = number
        # The name of this ref in operations: what a step touches (named at every step that reads it).
        self.object_name = f"ref:{number}"
        # What fills it, for people: "Counter#1.add#4", "f#2", "ray.put".
        self.source = source
        # What ``ray.cancel(ref, force=..., recursive=...)`` does to the work that fills it.
        self.canceller: Callable[[bool, bool], None] | None = None
        self._state = _PENDING
        self._value: Any = None

    @property
    def ready(self) -> bool:
        return self._state != _PENDING

    def label(self) -> str:
        return f"ObjectRef#{self.number} ({self.source})"

    def hex(self) -> str:
        return f"{self.number:056x}"

    def fill(self, value: Any) -> None:
        self._value = copy_value(value)
        self._state = _VALUE

    def fail(self, error: BaseException) -> None:
        self._value = error
        self._state = _ERROR

    def error(self) -> BaseException | None:
        return self._value if self._state == _ERROR else None

    def fetch(self) -> Any:
        """The value as ``get`` returns it: a fresh copy, or the stored error raised."""
        if self._state == _ERROR:
            error = self._value
            raise error.as_instanceof_cause() if isinstance(error, RayTaskError) else error
        return copy_value(self._value)

    def __await__(self) -> Generator[Any, None, Any]:
        loop = events._get_running_loop()
        if not isinstance(loop, ControlledLoop):
            # No controlled loop to wait on (a coroutine run by hand): wait as ``ray.get`` does.
            # ray.get is built on refs (ref_calls imports this module): loaded only on this rare path.
            from dnsse.frameworks.ray.ref_calls import get

            return get(self)
        yield from loop.watch(lambda: self.ready).__await__()
        return self.fetch()

    def read_operation(self, kind: str) -> Operation:
        return Operation(kind, ((self.object_name, Access.READ),), self.label())

    def __repr__(self) -> str:
        return f"ObjectRef({self.hex()})"

    def __copy__(self) -> ObjectRef:
        return self

    def __reduce__(self) -> tuple:
        raise TypeError("an ObjectRef of a dnsse execution cannot be pickled; pass it to tasks and actors instead")



def all_ready(refs: list[ObjectRef]) -> Callable[[], bool]:
    """A test that every ref of ``refs`` is ready, for a wait that the scheduler tests at every step.

    A ref once filled stays filled, so each test looks only at the refs not
    seen ready yet: a get of many refs costs one look per step, not one per ref.
    """
    pending = refs[::-1]

    def ready() -> bool:
        while pending:
            if pending[-1]._state == _PENDING:
                return False
            pending.pop()
        return True

    return ready


def top_level_refs(args: tuple, kwargs: dict) -> list[ObjectRef]:
    """Refs passed directly as arguments: Ray waits for them and passes their values."""
    refs = [value for value in args if isinstance(value, ObjectRef)]
    if kwargs:
        refs.extend(value for value in kwargs.values() if isinstance(value, ObjectRef))
    return refs


def resolve(args: tuple, kwargs: dict, dependencies: list[ObjectRef]) -> tuple[tuple, dict]:
    """Replace the top-level refs (``dependencies``) by their values; a failed dependency raises its error."""
    if not dependencies:
        return args, kwargs
    resolved = tuple([value.fetch() if isinstance(value, ObjectRef) else value for value in args])
    if not kwargs:
        return resolved, kwargs
    resolved_kwargs = {k: v.fetch() if isinstance(v, ObjectRef) else v for k, v in kwargs.items()}
    return resolved, resolved_kwargs


def failed_dependency(dependencies: list[ObjectRef]) -> BaseException | None:
    """The error of the first failed ref among a task's ``dependencies``: the task fails with it, unrun."""
    for ref in dependencies:
        error = ref.error()
        if error is not None:
            return error
    return None


def describe_pending(refs: list[ObjectRef]) -> str:
    pending = [ref.label() for ref in refs if not ref.ready]
    return ", ".join(pending) if pending else "nothing"
