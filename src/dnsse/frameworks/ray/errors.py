"""The controlled ``ray.exceptions``: errors as Ray raises them.

``ray.get`` of a failed task raises a :class:`RayTaskError` that is also an
instance of the task's own exception class (``except ValueError`` catches a
``ValueError`` raised in a task), as Ray does; ``.cause`` is the original.
Calls to a dead actor raise :class:`ActorDiedError`, a
:class:`RayActorError`; a timed-out ``get`` raises :class:`GetTimeoutError`,
which is also a ``TimeoutError``.
"""

from __future__ import annotations

import functools


class RayError(Exception):
    """Base of every error of the controlled Ray."""


class RayTaskError(RayError):
    """A task or actor method raised ``cause``; ``traceback_str`` is where, in the worker."""

    def __init__(self, function_name: str, traceback_str: str, cause: BaseException, where: str = "") -> None:
        self.function_name = function_name
        self.traceback_str = traceback_str
        self.cause = cause
        # The worker process it ran in, as Ray names the pid: tasks sharing one see each other's globals.
        self.where = where
        super().__init__(function_name, traceback_str, cause)

    def origin(self) -> str:
        """``ray::f() (worker process 2)``: the task, and where it ran."""
        return f"ray::{self.function_name}()" + (f" ({self.where})" if self.where else "")

    def summary(self) -> str:
        """One line: which task failed and with what."""
        return f"ray::{self.function_name}() failed with {type(self.cause).__name__}: {self.cause}"

    def __str__(self) -> str:
        return f"{self.origin()}\n{self.traceback_str}"

    def as_instanceof_cause(self) -> RayTaskError:
        """This error as an instance of both RayTaskError and the cause's class, when it can be."""
        cause_class = type(self.cause)
        if issubclass(RayTaskError, cause_class):
            return self
        try:
            dual = _dual_class(cause_class)
            error = dual.__new__(dual)
        except TypeError:
            return self  # a cause class with a layout that cannot be mixed in
        RayTaskError.__init__(error, self.function_name, self.traceback_str, self.cause, self.where)
        return error


@functools.lru_cache(maxsize=None)
def _dual_class(cause_class: type[BaseException]) -> type[RayTaskError]:
    name = f"RayTaskError({cause_class.__name__})"

    def getattr_from_cause(self: RayTaskError, attribute: str) -> object:
        # Attributes of the user's exception (``error.code``) read through.
        if attribute == "cause":
            raise AttributeError(attribute)
        return getattr(self.cause, attribute)

    namespace = {"__getattr__": getattr_from_cause, "__str__": RayTaskError.__str__, "__module__": "ray.exceptions"}
    return type(name, (RayTaskError, cause_class), namespace)


class RayActorError(RayError):
    """The actor of a call died before the call finished, or was already dead."""


class ActorDiedError(RayActorError):
    """The actor is dead: its constructor failed, it was killed, or it ran out of restarts."""


class ActorUnavailableError(RayActorError):
    """The actor is temporarily unreachable (restarting); kept for programs that catch it."""


class WorkerCrashedError(RayError):
    """The worker running a task died and the task's retries are used up."""


class TaskCancelledError(RayError):
    """The task was cancelled."""


class TaskPlacementGroupRemoved(RayError):
    """The placement group the task was to run in was removed before it started."""


class ActorPlacementGroupRemoved(RayError):
    """The placement group of the actor was removed; kept for programs that catch it."""


class ActorUnschedulableError(RayError):
    """The actor can never be created: its placement group was removed before it was."""


class PendingCallsLimitExceeded(RayError):
    """An actor handle has ``max_pending_calls`` calls unfinished already."""


class GetTimeoutError(RayError, TimeoutError):
    """``ray.get`` or ``ActorPool.get_next`` timed out."""


class ObjectLostError(RayError):
    """The object is lost; kept for programs that catch it."""


class RaySystemError(RayError):
    """An internal error of the runtime."""


class ActorAlreadyExistsError(ValueError, RayError):
    """A named actor with this name already exists in the namespace."""


# Reports and tracebacks name them as users know them: ray.exceptions.RayActorError.
for _error in (RayError, RayTaskError, RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError,
               TaskCancelledError, TaskPlacementGroupRemoved, ActorPlacementGroupRemoved, ActorUnschedulableError,
               PendingCallsLimitExceeded, GetTimeoutError, ObjectLostError, RaySystemError, ActorAlreadyExistsError):
    _error.__module__ = "ray.exceptions"
del _error
