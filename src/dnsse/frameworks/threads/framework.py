"""The threads framework: ``FUNC(**inputs)`` of a plain threaded program, under control."""

from __future__ import annotations

import contextlib
from typing import ContextManager, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.execution import Execution
from dnsse.engine.target import InputParameter, LoadedTarget, require_no_positional_parameters
from dnsse.frameworks.threads.socket_module import controlled_sockets
from dnsse.frameworks.threads.patching import controlled_threading
from dnsse.frameworks.threads.runtime import runtime_for
from dnsse.frameworks.threads.shared_state import plan_for, traced
from dnsse.frameworks.threads.thread import adopt


class ThreadsFramework:
    name = "threads"
    agents_share_a_thread = True

    def activate(self) -> ContextManager[None]:
        return _both(controlled_threading(), controlled_sockets())

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        role = f"{target.spec} (a threads program's entry point)"
        return target.entry_point_inputs(lambda function: require_no_positional_parameters(function, role))

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        runtime = runtime_for(execution)
        runtime.plan = plan_for(target)

        def body() -> None:
            with traced(main, runtime.plan):
                # The module itself runs under control: its top-level code may
                # create locks and start threads.
                module = target.instantiate()
                try:
                    target.entry_point(module)(**target.localize(inputs, module))
                finally:
                    target.release(module)

        main = ThreadAgent(execution, "main", body)
        runtime.attach(main, adopt(main, runtime, "MainThread"))

    def finish(self, execution: Execution) -> Bug | None:
        return None


@contextlib.contextmanager
def _both(first: ContextManager[None], second: ContextManager[None]) -> Iterator[None]:
    with first, second:
        yield
