"""What went wrong in a bug's run, in one sentence, and the steps that decide it, in time order.

A story lists what every agent did; the bug lies in a few of those steps, in
the order they took: the read and the write that came between it, the notify
that came before its wait, the two ranks' different collectives, the actor
calls of two callers interleaved. :func:`find_race` looks for these patterns
in the recorded steps, the most telling first:

1. ``collective_mismatch``: the two ranks' collectives the bug names;
2. a lost notify: an agent blocked in a condition's wait that another agent
   notified earlier, with the read that made it wait, if one was seen;
3. two sends racing for one receive from any source: the receive took one
   while the other was already there;
4. a stale read: an agent read an object, another wrote it, and the first
   wrote it back (a lost update) or went on to break;
5. interleaved actor calls: a caller's calls to an actor with another
   caller's call to it between them.

The sentence is built from the steps found, so it is true of this run
whatever the program; where no pattern fits, there is no sentence and the
story tells the run alone.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from dnsse.engine.execution import Event
from dnsse.report.story import Story, StoryStep, Touch


@dataclass(frozen=True)
class Race:
    """The decisive steps of a run (in time order), the pairs that conflict, and what went wrong."""

    sentence: str
    steps: tuple[StoryStep, ...]
    # Pairs of steps of different agents whose order made the bug: joined by an arrow in the timeline.
    pairs: tuple[tuple[StoryStep, StoryStep], ...]


def find_race(story: Story) -> Race | None:
    """The decisive steps of ``story``'s bug, or ``None`` where no known pattern fits."""
    if story.bug is None:
        return None
    for finder in (_collective_mismatch, _lost_notify, _any_source_receive, _stale_read, _interleaved_calls):
        found = finder(story)
        if found is not None:
            return found
    return None


def _collective_mismatch(story: Story) -> Race | None:
    bug = story.bug
    if bug is None or bug.kind != "collective_mismatch":
        return None
    sides: list[StoryStep] = []
    for line in story.bug_lines:
        mine = [step for step in story.steps if step.location is not None and step.location.endswith(
            f"{line.path.rpartition('/')[2]}:{line.line}") and not step.is_async and step.operation != "start"]
        lanes = {step.lane for step in sides}
        mine = [step for step in mine if step.lane not in lanes]
        if mine:
            sides.append(mine[-1] if mine[-1].lane == (bug.agent or "") else mine[0])
    if len(sides) < 2:
        return None
    first, second = sorted(sides[:2], key=lambda step: step.step)
    if _position(first.detail) == _position(second.detail):
        sentence = (
            f"{first.lane} issued {first.detail} at {first.location}, and {second.lane} issued {second.detail} "
            f"at {_short(second.location, first.location)}: the ranks disagree on that collective"
        )
    else:
        late, early = (first, second) if _position(first.detail) > _position(second.detail) else (second, first)
        sentence = (
            f"{late.lane} issued {late.detail} at {late.location}, but {early.lane}'s last collective there was "
            f"{early.detail} at {_short(early.location, late.location)}: {early.lane} never joins it"
        )
    return Race(sentence, (first, second), ((first, second),))


def _position(detail: str) -> str:
    """``#2 of WORLD`` of ``barrier #2 of WORLD``: a collective's place in its group."""
    return detail.partition(" ")[2]


def _lost_notify(story: Story) -> Race | None:
    steps = story.steps
    last_of_lane = {step.lane: step for step in steps}
    steps_of_lane: dict[str, list[int]] = {}
    for step in steps:
        steps_of_lane.setdefault(step.lane, []).append(step.step)
    # Waits that never returned: the last step of their agent.
    waits = [step for step in steps if step.operation == "condition.wait" and last_of_lane[step.lane] is step]
    for wait in reversed(waits):
        notifies = [
            step for step in steps
            if step.operation.startswith("condition.notify") and step.lane != wait.lane and step.step < wait.step
            and set(step.objects) & set(wait.objects)
        ]
        if not notifies:
            continue
        notify = notifies[-1]
        earlier_waits = [
            step for step in steps
            if step.operation == "condition.wait" and notify.step > step.step and set(step.objects) & set(wait.objects)
            and _waits_past(steps_of_lane[step.lane], step, notify)
        ]
        if earlier_waits:
            continue  # someone waited when it came: that notify was not lost
        condition = notify.detail.partition(":")[2].strip().partition(" (")[0] or "the condition"
        stale = _read_then_written(steps, wait.lane, before=notify.step)
        if stale is not None:
            read, write, touch = stale
            sentence = (
                f"{read.lane} read {_value_of(touch)} at {read.location}, then {write.lane} wrote it"
                f"{_now(write, touch.name)} at {_short(write.location, read.location)} and notified {condition} at "
                f"{_short(notify.location, read.location)} before {wait.lane} waited at "
                f"{_short(wait.location, read.location)}: the notify was lost"
            )
            return Race(sentence, (read, write, notify, wait), ((read, write), (notify, wait)))
        sentence = (
            f"{notify.lane} notified {condition} at {notify.location} before {wait.lane} waited at "
            f"{_short(wait.location, notify.location)}: nobody waited yet, so the notify was lost"
        )
        return Race(sentence, (notify, wait), ((notify, wait),))
    return None


def _any_source_receive(story: Story) -> Race | None:
    """The last receive from any source that took one message while another sender's was waiting too."""
    by_agent: dict[str, list[StoryStep]] = {}
    for step in story.steps:
        by_agent.setdefault(step.agent, []).append(step)

    def step_of(agent: str, number: int) -> StoryStep | None:
        mine = by_agent.get(agent, [])
        at = bisect.bisect_right([step.step for step in mine], number)
        return mine[at - 1] if at else None

    sent: dict[tuple, list[Event]] = {}  # (dst, tag) -> sends not yet received, in order
    found: Race | None = None
    for event in story.events:
        fields = event.fields
        if event.name == "send":
            sent.setdefault((fields.get("dst"), fields.get("tag")), []).append(event)
        elif event.name == "recv":
            waiting = sent.get((fields.get("dst"), fields.get("tag")), [])
            taken = next((send for send in waiting if send.fields.get("src") == fields.get("src")), None)
            if taken is None:
                continue
            waiting.remove(taken)
            other = next((send for send in waiting if send.fields.get("src") != fields.get("src")), None)
            matched = receive = step_of(event.agent, event.step)
            while receive is not None and receive.detail.startswith("recv.") and receive.step > 0:
                receive = step_of(event.agent, receive.step - 1)  # the receive's own call, not its match
            if other is None or receive is None or matched is None or not receive.detail.startswith("recv from any"):
                continue
            took, left = step_of(taken.agent, taken.step), step_of(other.agent, other.step)
            if took is None or left is None:
                continue
            sentence = (
                f"{receive.lane}'s receive from any source at {receive.location} took {took.lane}'s message, sent at "
                f"{_short(took.location, receive.location)}, while {left.lane}'s, sent at "
                f"{_short(left.location, receive.location)}, was there too: which one it takes depends on timing"
            )
            ordered = tuple(sorted({step.step: step for step in (receive, took, left, matched)}.values(),
                                   key=lambda step: step.step))
            found = Race(sentence, ordered, ((took, matched), (left, matched)))
    return found


def _waits_past(lane_steps: list[int], wait: StoryStep, moment: StoryStep) -> bool:
    """Whether the agent of ``wait`` (whose step numbers are ``lane_steps``) still waited there at ``moment``."""
    after = bisect.bisect_right(lane_steps, wait.step)
    return after == len(lane_steps) or lane_steps[after] > moment.step


def _read_then_written(
    steps: list[StoryStep], reader: str, before: int
) -> tuple[StoryStep, StoryStep, Touch] | None:
    """The last read by ``reader`` of an object that another agent then wrote, before step ``before``."""
    first_write_after: dict[str, StoryStep] = {}
    # Walking back from ``before``: the earliest write by another agent seen so far, per object.
    for step in reversed([step for step in steps if step.step < before]):
        if step.lane == reader:
            for touch in step.touches:
                write = first_write_after.get(touch.name)
                if touch.access == "read" and write is not None:
                    return step, write, touch
        else:
            for touch in step.touches:
                if touch.access == "write":
                    first_write_after[touch.name] = step
    return None


@dataclass
class _Window:
    """A read whose value may go stale: open until its agent touches the object again."""

    read: StoryStep
    touch: Touch
    overwritten_by: StoryStep | None = None


def _stale_read(story: Story) -> Race | None:
    """An agent read X, another wrote X, and the first wrote X back or broke: a lost update first, else the latest."""
    failing = story.failing_step()
    best: tuple[int, int, Race] | None = None  # (kind of finding, its step, the finding)

    def consider(score: int, race: Race) -> None:
        nonlocal best
        at = race.steps[-1].step
        if best is None or (score, at) >= best[:2]:
            best = (score, at, race)

    open_windows: dict[str, dict[str, _Window]] = {}  # object -> agent -> its open read
    for step in story.steps:
        for touch in step.touches:
            windows = open_windows.setdefault(touch.name, {})
            mine = windows.pop(step.lane, None)
            if mine is not None and mine.overwritten_by is not None and touch.access == "write":
                consider(2, _lost_update(mine, step))
            if touch.access == "write":
                for window in windows.values():
                    if window.overwritten_by is None:
                        window.overwritten_by = step
            else:
                windows[step.lane] = _Window(step, touch)
    if failing is not None:
        for windows in open_windows.values():
            window = windows.get(failing.lane)
            if window is not None and window.overwritten_by is not None and window.overwritten_by.step < failing.step:
                consider(1, _went_on(window, failing))
    return best[2] if best is not None else None


def _lost_update(window: _Window, again: StoryStep) -> Race:
    read, write, touch = window.read, window.overwritten_by, window.touch
    assert write is not None
    sentence = (
        f"{read.lane} read {_value_of(touch)} at {read.location}; {write.lane} wrote it"
        f"{_now(write, touch.name)} at {_short(write.location, read.location)} before {read.lane} wrote "
        f"it back{_now(again, touch.name)} at {_short(again.location, read.location)}: "
        f"{write.lane}'s write was lost"
    )
    return Race(sentence, (read, write, again), ((read, write), (write, again)))


def _went_on(window: _Window, failing: StoryStep) -> Race:
    read, write, touch = window.read, window.overwritten_by, window.touch
    assert write is not None
    sentence = (
        f"{read.lane} read {_value_of(touch)} at {read.location}, then {write.lane} wrote it"
        f"{_now(write, touch.name)} at {_short(write.location, read.location)} before {read.lane} "
        f"went on at {_short(failing.location, read.location)} with what it had read"
    )
    return Race(sentence, (read, write, failing), ((read, write),))


def _interleaved_calls(story: Story) -> Race | None:
    """Two calls of one caller to an actor with another caller's call to that actor between them: the first such."""
    # actor -> caller -> (its last call, the first call of another caller since)
    last: dict[str, dict[str, tuple[StoryStep, StoryStep | None]]] = {}
    for call in (step for step in story.steps if step.operation == "actor.call" and step.call is not None):
        actor, caller = _actor(call), _caller(call)
        callers = last.setdefault(actor, {})
        previous = callers.get(caller)
        if previous is not None and previous[1] is not None:
            first, other = previous
            sentence = (
                f"{caller} called {_call(first)} at {first.location}, then {_caller(other)} called "
                f"{_call(other)} at {_short(other.location, first.location)} before {caller} called "
                f"{_call(call)} at {_short(call.location, first.location)}: their calls to {actor} interleaved"
            )
            return Race(sentence, (first, other, call), ((first, other), (other, call)))
        for name, (mine, since) in list(callers.items()):
            if name != caller and since is None:
                callers[name] = (mine, call)
        callers[caller] = (call, None)
    return None


def _caller(step: StoryStep) -> str:
    return step.detail.rpartition("(called by ")[2].rstrip(")") or step.agent


def _actor(step: StoryStep) -> str:
    return (step.call or "").partition(".")[0]


def _call(step: StoryStep) -> str:
    text = step.detail.rpartition(" runs (called by")[0] or step.detail
    return text.rpartition(" (call #")[0] or text


def _value_of(touch: Touch) -> str:
    return touch.label + (f" ({touch.value})" if touch.value is not None else "")


def _now(step: StoryStep, name: str) -> str:
    value = next((touch.value for touch in step.touches if touch.name == name), None)
    return f" (to {value})" if value is not None else ""


def _short(location: str | None, reference: str | None) -> str:
    """``:17`` for a line of the file just named, the whole ``file.py:17`` otherwise."""
    if location is None:
        return "an unknown line"
    path, _, line = location.rpartition(":")
    if reference is not None and reference.rpartition(":")[0] == path:
        return f":{line}"
    return location
