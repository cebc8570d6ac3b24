"""``@ray.remote`` and ``@ray.method``: what makes a function a task and a class an actor."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from dnsse.frameworks.ray.actors import METHOD_OPTIONS_ATTRIBUTE, ActorClass
from dnsse.frameworks.ray.tasks import RemoteFunction


def remote(*args: Any, **options: Any) -> Any:
    """``@ray.remote``, ``@ray.remote(num_returns=2, ...)`` or ``ray.remote(f)``."""
    if len(args) == 1 and not options and callable(args[0]):
        return _make_remote(args[0], {})
    if args:
        raise TypeError("The @ray.remote decorator must be applied either with no arguments and no parentheses, "
                        "or with keyword arguments only, for example '@ray.remote(num_returns=2)'.")
    return lambda target: _make_remote(target, options)


def _make_remote(target: Any, options: dict[str, Any]) -> Any:
    if inspect.isclass(target):
        return ActorClass(target, options)
    if callable(target):
        return RemoteFunction(target, options)
    raise TypeError("The @ray.remote decorator must be applied to either a function or a class.")


def method(*args: Any, **options: Any) -> Callable[[Callable], Callable]:
    """``@ray.method(num_returns=2)`` on an actor method: that method's default options."""
    if args:
        raise TypeError("@ray.method takes keyword arguments only, for example '@ray.method(num_returns=2)'.")

    def decorate(function: Callable) -> Callable:
        setattr(function, METHOD_OPTIONS_ATTRIBUTE, dict(options))
        return function

    return decorate
