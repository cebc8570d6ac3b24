"""What went wrong in a bug's run, in one sentence, and the steps that decide it, in time order.

A story lists what every agent did; the bug lies in a few of those steps, in
the order they took: the read and the write that came between it, the notify
that came before its wait, the two ranks' different collectives, the actor
calls of two callers interleaved. :func:`find_race` looks for these patterns
in the recorded steps, the most telling first:

1. ``collective_mismatch``: the two ranks' collectives the bug names;
2. a lost notify: an agent blocked in a condition's wait that another agent
   notified earlier, with the read that made it wait, if one was seen;
3. a stale read: an agent read an object, another wrote it, and the first
   wrote it back (a lost update) or went on to break;
4. interleaved actor calls: a caller's calls to an actor with another
   caller's call to it between them.

The sentence is built from the steps found, so it is true of this run
whatever the program; where no pattern fits, there is no sentence and the
story tells the run alone.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    for finder in (_collective_mismatch, _lost_notify, _stale_read, _interleaved_calls):
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
            and _waits_past(story, step, notify)
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


def _waits_past(story: Story, wait: StoryStep, moment: StoryStep) -> bool:
    """Whether the agent of ``wait`` was still waiting there when ``moment`` came."""
    later = [step for step in story.steps if step.lane == wait.lane and wait.step < step.step]
    return not later or later[0].step > moment.step


def _read_then_written(
    steps: list[StoryStep], reader: str, before: int
) -> tuple[StoryStep, StoryStep, Touch] | None:
    """The last read by ``reader`` of an object that another agent then wrote, before step ``before``."""
    for read in reversed([step for step in steps if step.lane == reader and step.step < before]):
        for touch in read.touches:
            if touch.access != "read":
                continue
            for write in steps:
                if read.step < write.step < before and write.lane != reader and _writes(write, touch.name):
                    return read, write, touch
    return None


def _stale_read(story: Story) -> Race | None:
    """An agent read X, another wrote X, and the first wrote X back or broke: the latest such."""
    steps = story.steps
    failing = story.failing_step()
    best: tuple[int, Race] | None = None
    for index, read in enumerate(steps):
        for touch in read.touches:
            if touch.access != "read":
                continue
            mine_later = [step for step in steps[index + 1:] if step.lane == read.lane]
            # The reader's next access of the same object ends the window in which its value could go stale.
            again = next((step for step in mine_later if _touches(step, touch.name)), None)
            end = again.step if again is not None else (failing.step if failing is not None else steps[-1].step)
            writes = [
                step for step in steps[index + 1:]
                if step.step < end and step.lane != read.lane and _writes(step, touch.name)
            ]
            if not writes:
                continue
            write = writes[0]
            if again is not None and _writes(again, touch.name):
                sentence = (
                    f"{read.lane} read {_value_of(touch)} at {read.location}; {write.lane} wrote it"
                    f"{_now(write, touch.name)} at {_short(write.location, read.location)} before {read.lane} wrote "
                    f"it back{_now(again, touch.name)} at {_short(again.location, read.location)}: "
                    f"{write.lane}'s write was lost"
                )
                race = Race(sentence, (read, write, again), ((read, write), (write, again)))
                score = 2
            elif failing is not None and failing.lane == read.lane and again is None:
                sentence = (
                    f"{read.lane} read {_value_of(touch)} at {read.location}, then {write.lane} wrote it"
                    f"{_now(write, touch.name)} at {_short(write.location, read.location)} before {read.lane} "
                    f"went on at {_short(failing.location, read.location)} with what it had read"
                )
                race = Race(sentence, (read, write, failing), ((read, write),))
                score = 1
            else:
                continue
            if best is None or score >= best[0]:
                best = (score, race)
    return best[1] if best is not None else None


def _interleaved_calls(story: Story) -> Race | None:
    """Two calls of one caller to an actor with another caller's call to that actor between them."""
    runs = [step for step in story.steps if step.operation == "actor.call" and step.call is not None]
    caller_of = {step.call: _caller(step) for step in runs}
    for index, first in enumerate(runs):
        actor = _actor(first)
        later = [step for step in runs[index + 1:] if _actor(step) == actor]
        mine = [step for step in later if caller_of[step.call] == caller_of[first.call]]
        if not mine:
            continue
        again = mine[0]
        between = [
            step for step in later
            if step.step < again.step and caller_of[step.call] != caller_of[first.call]
        ]
        if not between:
            continue
        other = between[0]
        sentence = (
            f"{caller_of[first.call]} called {_call(first)} at {first.location}, then {caller_of[other.call]} called "
            f"{_call(other)} at {_short(other.location, first.location)} before {caller_of[first.call]} called "
            f"{_call(again)} at {_short(again.location, first.location)}: their calls to {actor} interleaved"
        )
        return Race(sentence, (first, other, again), ((first, other), (other, again)))
    return None


def _caller(step: StoryStep) -> str:
    return step.detail.rpartition("(called by ")[2].rstrip(")") or step.agent


def _actor(step: StoryStep) -> str:
    return (step.call or "").partition(".")[0]


def _call(step: StoryStep) -> str:
    text = step.detail.rpartition(" runs (called by")[0] or step.detail
    return text.rpartition(" (call #")[0] or text


def _touches(step: StoryStep, name: str) -> bool:
    return any(touch.name == name for touch in step.touches)


def _writes(step: StoryStep, name: str) -> bool:
    return any(touch.name == name and touch.access == "write" for touch in step.touches)


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
