"""The threads framework: ``FUNC(**inputs)`` of a plain threaded program, under control."""

from __future__ import annotations

import contextlib
from typing import Callable, ContextManager, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.execution import Execution
from dnsse.engine.main_module import run_as_main
from dnsse.engine.target import InputParameter, LoadedTarget, require_no_positional_parameters
from dnsse.frameworks.threads.socket_module import controlled_sockets
from dnsse.frameworks.threads.patching import controlled_threading
from dnsse.frameworks.threads.process_exit import controlled_process_exit, end_of_process, fresh_executor_registry
from dnsse.frameworks.threads.runtime import runtime_for
from dnsse.frameworks.threads.shared_state import plan_for, traced
from dnsse.frameworks.threads.thread import adopt


class ThreadsFramework:
    name = "threads"
    agents_share_a_thread = True

    def activate(self) -> ContextManager[None]:
        return _all(controlled_threading(), controlled_sockets(), controlled_process_exit())

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        role = f"{target.spec} (a threads program's entry point)"
        return target.entry_point_inputs(lambda function: require_no_positional_parameters(function, role))

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        runtime = runtime_for(execution)
        runtime.plan = plan_for(target)
        fresh_executor_registry(execution)

        def body() -> None:
            with traced(main, runtime.plan):
                if target.launch is not None:
                    # `python FILE.py`: the file's __main__ block is the main thread's work.
                    run_as_main(target)
                    end_of_process(execution)
                    return
                # The module itself runs under control: its top-level code may
                # create locks and start threads.
                module = target.instantiate()
                try:
                    _run_to_the_end(lambda: target.entry_point(module)(**target.localize(inputs, module)))
                    end_of_process(execution)
                finally:
                    target.release(module)

        main = ThreadAgent(execution, "main", body)
        runtime.attach(main, adopt(main, runtime, "MainThread"))

    def finish(self, execution: Execution) -> Bug | None:
        return None


def _run_to_the_end(entry_point: Callable[[], object]) -> None:
    """The entry point; ``sys.exit()`` with status 0 (or None) is a normal end of the process, as in a script."""
    try:
        entry_point()
    except SystemExit as exit:
        if exit.code not in (0, None):
            raise


@contextlib.contextmanager
def _all(*managers: ContextManager[None]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for manager in managers:
            stack.enter_context(manager)
        yield
