"""An agent becomes one of the execution's agents only once it is fully built.

The scheduler's thread reads every agent when an execution runs past its
time limit (where each stood), and it may do so while the running agent's
thread is in the middle of making a new agent; a field set after
registration was read as missing ("'ThreadAgent' object has no attribute
'started'") and the campaign stopped on an error of dnsse's own.
"""

from __future__ import annotations

import pytest

from dnsse.engine.agent import Agent, StepAgent, ThreadAgent, Wait
from dnsse.engine.choices import FirstChooser
from dnsse.engine.execution import Execution, Limits


def _slots(cls: type) -> set[str]:
    return {slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ())}


@pytest.mark.parametrize(
    ("make", "cls"),
    [
        (lambda execution: ThreadAgent(execution, "worker", lambda: None), ThreadAgent),
        (lambda execution: StepAgent(execution, "transfer", lambda: None, Wait(lambda: True, lambda: "x")), StepAgent),
    ],
)
def test_every_field_is_set_when_the_execution_first_sees_the_agent(make, cls) -> None:
    execution = Execution(FirstChooser(), Limits(max_seconds=60))
    missing_at_registration: list[set[str]] = []
    register = execution.register

    def watching(agent: Agent) -> int:
        missing_at_registration.append({slot for slot in _slots(cls) if not hasattr(agent, slot)})
        agent_id = register(agent)
        # What the scheduler's thread reads of it from the moment it is listed.
        assert agent.id == agent_id and execution.agents[agent_id] is agent
        return agent_id

    execution.register = watching  # type: ignore[method-assign]
    agent = make(execution)
    assert missing_at_registration == [{"id"}]
    assert not agent.done and agent.name
