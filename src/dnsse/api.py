"""What a program under test may call: events for specifications, input bounds, and ``@dnsse.test``."""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Sequence

from dnsse.engine.execution import current_agent
from dnsse.engine.input_rejected import InputRejected
from dnsse.engine.inputs import Range, TensorSpec
from dnsse.engine.operation import Access, Operation

__all__ = ["emit", "Range", "TensorSpec", "test"]

# Every user event writes this one object: the order of any two events can
# decide a specification, so a search reorders every pair that can be reordered.
_EVENTS = (("events", Access.WRITE),)


def assume(condition: object, why: str = "") -> None:
    """Reject the run's input unless ``condition`` holds, as Hypothesis's ``assume`` does.

    A rejected input is counted in the summary and never reported as a bug;
    the search goes on with other inputs. Outside a controlled run (the
    program run as plain Python) a false condition raises ``AssertionError``.
    """
    if condition:
        return
    message = why or "dnsse.assume() rejected the input"
    if current_agent() is None:
        raise AssertionError(message)
    raise InputRejected(message)


def emit(name: str, **fields: object) -> None:
    """Record event ``name`` with ``fields`` at the current step of the run.

    An event is a scheduling point: another agent may run just before it, so
    every order of the events of different agents that a real run can show
    is explored. Outside a dnsse execution (the program run with plain
    Python) this does nothing, so programs can keep their ``emit`` calls in
    production.
    """
    agent = current_agent()
    if agent is not None:
        agent.execution.yield_point(agent, Operation("emit", _EVENTS, name))
        agent.execution.emit(agent, name, fields)


def test(
    framework: str = "auto",
    world_size: int = 2,
    budget: int = 200,
    strategy: str | None = None,
    seed: int = 0,
    spec: str | Sequence[str] = (),
    time_budget: float | None = None,
    contained: bool = True,
    max_delay: float = 0.1,
) -> Callable[[Callable], Callable]:
    """Make a test function a dnsse campaign: pytest calls it, dnsse searches its schedules.

    The function is written as a ``dnsse check`` entry point of its
    ``framework`` (``rank, world_size`` first for torch). When pytest calls
    the test, up to ``budget`` executions run under control with ``strategy``
    and ``seed``, checking the LTL formulas of ``spec``; the first bug fails
    the test with its minimized story and the ``dnsse replay`` command, and
    its trace stays under ``.dnsse/pytest/``.

    ``contained`` (the default) runs the executions in a worker process, so
    that a program that kills its process (``os._exit``, a segfault, a fatal
    signal) fails the test with a ``crash`` bug instead of ending the pytest
    session; it costs one process start (a few seconds) per test. With
    ``contained=False`` they run in the pytest process.

    ``max_delay`` is the ``--max-delay`` of ``dnsse check``: the virtual
    seconds for which the scheduler may stall the agents that could run, in
    all, in one execution (``math.inf``: any agent may be descheduled for any
    time; see docs/time.md).
    """
    # The search runs programs that call this API (dnsse.emit): loaded only where a test is declared.
    from dnsse.search.registry import DEFAULT
    from dnsse.testing import TestSettings, check_test, checked_settings

    settings = checked_settings(TestSettings(
        framework=framework,
        world_size=world_size,
        budget=budget,
        strategy=strategy or DEFAULT,
        seed=seed,
        spec=(spec,) if isinstance(spec, str) else tuple(spec),
        time_budget=time_budget,
        contained=contained,
        max_delay=max_delay,
    ))

    def decorate(function: Callable) -> Callable:
        fixtures = [
            parameter.name
            for parameter in inspect.signature(function).parameters.values()
            if parameter.default is inspect.Parameter.empty
            and parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            and parameter.name not in ("rank", "world_size")
        ]
        if fixtures:
            # pytest makes a function-scoped fixture once per test, and a campaign runs the body hundreds of
            # times from fresh module globals (and a replay runs it with no pytest at all): one fixture value
            # shared by every execution would carry state from one to the next and make traces unreplayable.
            raise ValueError(
                f"@dnsse.test: {function.__name__} takes {', '.join(fixtures)}, which pytest would pass as "
                "fixtures; a campaign runs the body once per execution, from fresh module globals, and "
                "cannot share one fixture value among them. Make what the body needs inside it (for "
                "tmp_path: tempfile.mkdtemp()), or give the parameter a default to make it an input dnsse explores"
            )

        @functools.wraps(function)
        def campaign() -> None:
            check_test(function, settings)

        # pytest must see a test without parameters (no fixtures named rank or world_size),
        # and dnsse the function itself as the entry point.
        del campaign.__wrapped__
        campaign.__signature__ = inspect.Signature()  # type: ignore[attr-defined]
        campaign.__dnsse_test__ = function  # type: ignore[attr-defined]
        return campaign

    return decorate
