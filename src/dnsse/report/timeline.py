"""A bug's run as an SVG timeline: one lane per agent, a mark per step, arrows between lanes.

Arrows join what the runtime's events pair up: a message's ``send`` and its
``recv``, the ranks' ``collective.issue`` of one collective (one group and
sequence number), a task's or actor call's submission and its start; and,
drawn boldest, the racing pairs of what went wrong (:mod:`dnsse.report.race`):
the read and the write, the notify and the wait, the two ranks' collectives.
Those steps are outlined. The step that broke the run is marked, and so is
every step where the schedule preempted the default agent. Every text from
the program is escaped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from html import escape

from dnsse.engine.execution import Event
from dnsse.report.race import find_race
from dnsse.report.story import Story, StoryStep

# Beyond this many steps only the last ones are drawn: the end is where the bug is.
MAX_STEPS = 800
LANE_HEIGHT = 44
LABEL_WIDTH = 170
TOP = 28


@dataclass(frozen=True)
class Arrow:
    kind: str  # "message", "collective", "call", "race"
    source: tuple[str, int]  # (lane, step)
    target: tuple[str, int]
    label: str


def category(step: StoryStep) -> str:
    """The colour class of a step: what kind of thing it does."""
    operation = step.operation
    if step.is_async:
        return "async"
    if operation in ("send", "recv", "isend", "irecv") or operation.startswith(("send", "recv", "p2p")):
        return "message"
    if operation.startswith(("ray.", "actor.", "task.")):
        return "call"
    if operation.split(".")[0] in ("attr", "item", "global", "cell"):
        return "memory"
    if operation.startswith(("lock", "rlock", "condition", "event", "semaphore", "queue", "barrier", "thread")):
        return "sync"
    if operation in ("start", "wait", "sleep", "await"):
        return "other"
    return "collective"


def arrows(story: Story) -> list[Arrow]:
    """The arrows the run's events pair up, between lanes of the story."""
    lane_of = {step.agent: step.lane for step in story.steps}
    found: list[Arrow] = []
    pending: dict[tuple, list[Event]] = defaultdict(list)
    collectives: dict[tuple, list[Event]] = defaultdict(list)
    for event in story.events:
        fields = event.fields
        if event.name == "send":
            pending[("message", fields.get("src"), fields.get("dst"), fields.get("tag"))].append(event)
        elif event.name == "recv":
            queue = pending[("message", fields.get("src"), fields.get("dst"), fields.get("tag"))]
            if queue:
                sent = queue.pop(0)
                found.append(_arrow("message", sent, event, lane_of, f"tag {fields.get('tag')}"))
        elif event.name == "collective.issue":
            collectives[(fields.get("group"), fields.get("seq"))].append(event)
        elif event.name in ("task.submit", "actor.call.submit"):
            pending[_call_key(event)].append(event)
        elif event.name in ("task.start", "actor.call.start"):
            queue = pending[_call_key(event)]
            if queue:
                submitted = queue.pop(0)
                label = fields.get("task") or f"{fields.get('actor')}.{fields.get('method')}"
                found.append(_arrow("call", submitted, event, lane_of, str(label)))
    for (group, seq), issues in collectives.items():
        first = issues[0]
        for other in issues[1:]:
            found.append(_arrow("collective", first, other, lane_of, f"{first.fields.get('op')} #{seq} of {group}"))
    race = find_race(story)
    if race is not None:
        for before, after in race.pairs:
            found.append(Arrow("race", (before.lane, before.step), (after.lane, after.step), race.sentence))
    return [arrow for arrow in found if arrow.source[0] != arrow.target[0]]


def _call_key(event: Event) -> tuple:
    fields = event.fields
    if event.name.startswith("task"):
        return ("task", fields.get("task"))
    return ("actor", fields.get("actor"), fields.get("method"))


def _arrow(kind: str, source: Event, target: Event, lane_of: dict[str, str], label: str) -> Arrow:
    return Arrow(kind, (lane_of.get(source.agent, source.agent), source.step), (lane_of.get(target.agent, target.agent), target.step), label)


def timeline_svg(story: Story) -> str:
    """The SVG element (as text) of the story's run."""
    steps = story.steps[-MAX_STEPS:]
    lanes = [lane for lane in story.lanes if any(step.lane == lane for step in steps)] or list(story.lanes)
    row = {lane: index for index, lane in enumerate(lanes)}
    width_per_step = max(5, min(22, 940 // max(1, len(steps))))
    column = {step.step: index for index, step in enumerate(steps)}
    width = LABEL_WIDTH + width_per_step * (len(steps) + 1) + 20
    height = TOP + LANE_HEIGHT * len(lanes) + 10
    failing = story.failing_step()
    race = find_race(story)
    decisive = {step.step for step in race.steps} if race is not None else set()

    def x(step: int) -> float | None:
        if step in column:
            return LABEL_WIDTH + width_per_step * (column[step] + 0.5)
        earlier = [number for number in column if number <= step]
        return LABEL_WIDTH + width_per_step * (column[max(earlier)] + 0.5) if earlier else None

    def y(lane: str) -> float:
        return TOP + LANE_HEIGHT * row[lane] + LANE_HEIGHT / 2

    parts = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="timeline of the run, one lane per agent">',
        '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="head"/></marker>'
        '<marker id="race-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="race-head"/></marker></defs>',
        f'<text class="axis" x="{LABEL_WIDTH}" y="16">step {steps[0].step if steps else 0} →</text>',
    ]
    for lane in lanes:
        top = TOP + LANE_HEIGHT * row[lane]
        parts.append(
            f'<g class="lane" data-lane="{escape(lane)}"><rect class="lane-bg" x="0" y="{top}" width="{width}" '
            f'height="{LANE_HEIGHT - 4}"/><text class="lane-label" x="8" y="{top + LANE_HEIGHT / 2 + 4}">'
            f"{escape(_short(lane, 22))}</text></g>"
        )
    for arrow in arrows(story):
        if arrow.source[0] not in row or arrow.target[0] not in row:
            continue
        x1, x2 = x(arrow.source[1]), x(arrow.target[1])
        if x1 is None or x2 is None:
            continue
        head = "race-head" if arrow.kind == "race" else "head"
        parts.append(
            f'<line class="arrow {arrow.kind}" x1="{x1:.1f}" y1="{y(arrow.source[0]):.1f}" x2="{x2:.1f}" '
            f'y2="{y(arrow.target[0]):.1f}" marker-end="url(#{head})" data-from="{arrow.source[1]}" '
            f'data-to="{arrow.target[1]}"><title>{escape(arrow.kind)}: {escape(arrow.label)}</title></line>'
        )
    for step in steps:
        if step.lane not in row:
            continue
        left = LABEL_WIDTH + width_per_step * column[step.step] + 1
        top = TOP + LANE_HEIGHT * row[step.lane] + 8
        classes = f"step {category(step)}" + (" switch" if step.switched_from else "")
        if step is failing:
            classes += " failing"
        # An attribute, not a class: the classes say what a step does, this says what it meant.
        marked = ' data-decisive="true"' if step.step in decisive else ""
        tip = f"step {step.step} · {step.agent}: {step.detail or step.operation}"
        if step.location:
            tip += f" at {step.location}"
        if step.switched_from:
            tip += f" (runs before {step.switched_from})"
        parts.append(
            f'<rect class="{classes}" data-step="{step.step}"{marked} x="{left:.1f}" y="{top}" '
            f'width="{max(2, width_per_step - 2)}" height="{LANE_HEIGHT - 20}"><title>{escape(tip)}</title></rect>'
        )
        if step is failing:
            parts.append(
                f'<text class="failing-mark" x="{left + width_per_step / 2:.1f}" y="{top - 1}" '
                f'text-anchor="middle">✗</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
