"""The threads framework: ``FUNC(**inputs)`` of a plain threaded program, under control."""

from __future__ import annotations

import inspect
import types
from typing import ContextManager

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.execution import Execution
from dnsse.engine.target import InputParameter, LoadedTarget, input_parameters
from dnsse.errors import BadInput
from dnsse.frameworks.threads.patching import controlled_threading
from dnsse.frameworks.threads.runtime import runtime_for
from dnsse.frameworks.threads.shared_state import SharedStatePlan, traced
from dnsse.frameworks.threads.thread import adopt


class ThreadsFramework:
    name = "threads"

    def __init__(self) -> None:
        # By the id of the module's code; the code object is kept alongside so
        # that the id cannot be reused by another target's code.
        self._plans: dict[int, tuple[types.CodeType, SharedStatePlan]] = {}

    def activate(self) -> ContextManager[None]:
        return controlled_threading()

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        try:
            module = target.instantiate()
        except Exception as error:  # noqa: BLE001 - any import failure is bad input
            raise BadInput(
                f"importing {target.spec.path} raised {type(error).__name__}: {error}; "
                "fix the module so that it imports cleanly"
            ) from None
        try:
            function = target.entry_point(module)
            _check_signature(target, function)
            return input_parameters(function)
        finally:
            target.release(module)

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        runtime = runtime_for(execution)
        runtime.plan = self._plan(target)

        def body() -> None:
            with traced(main, runtime.plan):
                # The module itself runs under control: its top-level code may
                # create locks and start threads.
                module = target.instantiate()
                try:
                    target.entry_point(module)(**inputs)
                finally:
                    target.release(module)

        main = ThreadAgent(execution, "main", body)
        runtime.attach(main, adopt(main, runtime, "MainThread"))

    def finish(self, execution: Execution) -> Bug | None:
        return None

    def _plan(self, target: LoadedTarget) -> SharedStatePlan:
        entry = self._plans.get(id(target.code))
        if entry is None:
            entry = (target.code, SharedStatePlan(target.code))
            self._plans[id(target.code)] = entry
        return entry[1]


def _check_signature(target: LoadedTarget, function: types.FunctionType) -> None:
    required = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if required:
        raise BadInput(
            f"{target.spec} is called with no positional arguments under the threads framework, "
            f"but it requires {', '.join(required)}; give them defaults (inputs are keyword parameters with defaults)"
        )
