"""Edits of a corpus entry's choice sequence: new input values and new schedules.

Input mutations act on the ``input`` choices through each input's domain,
so a mutated value is always a legal one: boundary values of the range,
sign flips, small and huge magnitudes, ±Inf/−0.0 and values near dtype
limits for floats, bit flips and ±1 for ints, and the dictionary (constants
of the code that compared an input and operands it was compared with, as
AFL dictionaries and CmpLog give them).

Schedule mutations: splice two entries, reverse an observed race (the
schedule solver orders its two steps the other way and keeps the rest),
swap two adjacent dependent steps (a race whose steps are neighbours),
move a preemption (a PCT change point) to another scheduling choice (a
timed wait expiring is one of those), and change a message match or a
fault decision.
"""

from __future__ import annotations

import itertools
import math
import random
import struct
from dataclasses import dataclass
from typing import Sequence

from dnsse.engine.choices import Choice, ChoiceKind
from dnsse.engine.inputs import FloatDomain, InputSlot, IntDomain, is_open
from dnsse.search.corpus import CorpusEntry
from dnsse.search.schedules import Constraint, Schedule, schedule_for

FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 65504.0, -65504.0, 6.1e-5, 3.4028234663852886e38,
                  -3.4028234663852886e38, 1.1754943508222875e-38, 2.0**24, 2.0**31)
# Random edits of an int without a Range stay within this many bits of it: a huge value is mostly a
# count no run finishes (the probes and specials still try the type's limits).
OPEN_BITS = 20
INT_SPECIALS = (0, 1, -1, 2, 7, 8, 16, 255, 256, 1023, 1024, 65535, 65536, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63))


@dataclass
class Mutant:
    """A plan for one execution: choices to follow, optionally an order of agents, and what was edited."""

    plan: list[Choice]
    order: list[int] | None
    operator: str


def input_positions(choices: Sequence[Choice]) -> list[int]:
    return [i for i, choice in enumerate(choices) if choice.kind == ChoiceKind.INPUT]


def mutate_input(
    entry: CorpusEntry, slots: Sequence[InputSlot], dictionary: Sequence[float], rng: random.Random
) -> Mutant | None:
    positions = input_positions(entry.choices)
    if not positions or len(positions) != len(slots):
        return None
    k = rng.randrange(len(positions))
    position, slot = positions[k], slots[k]
    current = slot.domain.value_of([entry.choices[position].index])
    for _ in range(8):
        operator, value = _new_value(current, slot, dictionary, rng)
        found = slot.domain.index_of(value)
        if found is not None and found[0] != entry.choices[position].index:
            plan = list(entry.choices)
            plan[position] = Choice(ChoiceKind.INPUT, plan[position].options, found[0])
            return Mutant(plan, None, f"input {slot.parameter.name}: {operator}")
    return None


def probe_mutants(entry: CorpusEntry, slots: Sequence[InputSlot]) -> list[Mutant]:
    """AFL's deterministic stage: each number input at its range's ends and at its probes.

    The probes (:meth:`~dnsse.engine.inputs.Domain.probes`) are the values
    that find bugs in practice, most often buggy first; the inputs take
    turns, so every input's best probes run before any input's type limits.
    """
    positions = input_positions(entry.choices)
    if len(positions) != len(slots):
        return []
    per_input: list[list[Mutant]] = []
    for position, slot in zip(positions, slots):
        domain = slot.domain
        values: list[object] = []
        if isinstance(domain, IntDomain) and slot.parameter.bounds is not None:
            values = [domain.low, domain.high, domain.low + 1, domain.high - 1]
        elif isinstance(domain, FloatDomain) and slot.parameter.bounds is not None:
            values = [domain.low, domain.high]
        if isinstance(domain, (IntDomain, FloatDomain)):
            values += domain.probes()
        per_input.append(_mutants_at(entry, position, slot, values, "probe", keep_schedule=False))
    return [mutant for turn in itertools.zip_longest(*per_input) for mutant in turn if mutant is not None]


def constant_mutants(entry: CorpusEntry, slots: Sequence[InputSlot], constants: Sequence[float]) -> list[Mutant]:
    """Each number input at each constant the program compared it with, and next to it (CmpLog)."""
    positions = input_positions(entry.choices)
    if len(positions) != len(slots):
        return []
    mutants = []
    for position, slot in zip(positions, slots):
        values: list[object] = []
        if isinstance(slot.domain, IntDomain):
            values = [int(c) + d for c in constants if math.isfinite(c) for d in (0, 1, -1)]
        elif isinstance(slot.domain, FloatDomain):
            values = list(constants)
        mutants += _mutants_at(entry, position, slot, values, "boundary")
    return mutants


def _mutants_at(
    entry: CorpusEntry, position: int, slot: InputSlot, values: Sequence[object], operator: str, keep_schedule: bool = True
) -> list[Mutant]:
    """``entry`` with its input choice at ``position`` set to each value of the input's domain, once each.

    Without ``keep_schedule`` the plan ends with the inputs (they come first), the other inputs
    at their defaults, so each value is tried on its own and gets a fresh schedule: a probe's
    value may need another schedule than the entry's to fail.
    """
    seen = {entry.choices[position].index} if keep_schedule else {0}
    positions = input_positions(entry.choices)
    end = len(entry.choices) if keep_schedule else positions[-1] + 1
    mutants = []
    for value in values:
        found = slot.domain.index_of(value)
        if found is None or found[0] in seen:
            continue
        seen.add(found[0])
        plan = list(entry.choices[:end])
        if not keep_schedule:
            for other in positions:
                plan[other] = Choice(ChoiceKind.INPUT, plan[other].options, 0)
        plan[position] = Choice(ChoiceKind.INPUT, plan[position].options, found[0])
        mutants.append(Mutant(plan, None, f"input {slot.parameter.name}: {operator}"))
    return mutants


def _new_value(current: object, slot: InputSlot, dictionary: Sequence[float], rng: random.Random) -> tuple[str, object]:
    domain = slot.domain
    if isinstance(domain, IntDomain):
        assert isinstance(current, int)
        pick = rng.randrange(8)
        if pick == 0:
            return "boundary", rng.choice((domain.low, domain.high, domain.low + 1, domain.high - 1))
        if pick == 1:
            return "sign flip", -current
        if pick == 2:
            return "±1", current + rng.choice((-1, 1))
        if pick == 3:
            width = OPEN_BITS if slot.parameter.bounds is None else abs(domain.high - domain.low).bit_length()
            return "bit flip", current ^ (1 << rng.randrange(max(1, min(63, width))))
        if pick == 4 and dictionary:
            constant = rng.choice(dictionary)
            return "dictionary", int(constant) + rng.choice((0, 0, -1, 1)) if math.isfinite(constant) else current
        if pick == 5:
            return "special", rng.choice(INT_SPECIALS)
        if pick == 6:
            return "small", rng.randint(-16, 16)
        if slot.parameter.bounds is None:
            # An open int: a log-uniform distance, so that most values are moderate.
            return "random", current + rng.choice((-1, 1)) * rng.getrandbits(rng.randrange(1, OPEN_BITS))
        return "random", rng.randint(domain.low, domain.high)
    if isinstance(domain, FloatDomain):
        assert isinstance(current, float)
        pick = rng.randrange(8)
        if pick == 0:
            return "boundary", rng.choice((domain.low, domain.high))
        if pick == 1:
            return "sign flip", -current
        if pick == 2:
            return "special", rng.choice(FLOAT_SPECIALS)
        if pick == 3 and dictionary:
            constant = rng.choice(dictionary)
            return "dictionary", constant * rng.choice((1.0, 1.0, 1.0000001, 0.9999999, 2.0, 0.5))
        if pick == 4:
            return "magnitude", current * 10.0 ** rng.randint(-6, 6)
        if pick == 5:
            bits = struct.unpack("<q", struct.pack("<d", current))[0] ^ (1 << rng.randrange(64))
            return "bit flip", struct.unpack("<d", struct.pack("<q", bits))[0]
        if pick == 6:
            return "near", math.nextafter(current, rng.choice((math.inf, -math.inf)))
        if slot.parameter.bounds is None:
            # An open float: a log-uniform magnitude, as for ints.
            return "random", rng.choice((-1.0, 1.0)) * 2.0 ** rng.uniform(-40.0, 40.0)
        return "random", rng.uniform(max(domain.low, -1e300), min(domain.high, 1e300))
    options = domain.widths()[0]
    return "another value", domain.value_of([rng.randrange(options)])


def splice(entry: CorpusEntry, other: CorpusEntry, rng: random.Random) -> Mutant | None:
    if len(entry.choices) < 2 or len(other.choices) < 2:
        return None
    cut = rng.randrange(1, min(len(entry.choices), len(other.choices)))
    return Mutant(list(entry.choices[:cut]) + list(other.choices[cut:]), None, "splice")


def reverse_race(entry: CorpusEntry, rng: random.Random, adjacent: bool = False) -> Mutant | None:
    candidates = [race for race in entry.races if not adjacent or race.second == race.first + 1]
    rng.shuffle(candidates)
    for race in candidates[:4]:
        solution = schedule_for(entry.history, entry.created_at, [Constraint(race.second, race.first)])
        if isinstance(solution, Schedule):
            name = "swap adjacent dependent steps" if adjacent else "reverse race"
            return Mutant(list(entry.choices), solution.agents, f"{name} on {race.pair[4]}")
    return None


def move_preemption(entry: CorpusEntry, rng: random.Random) -> Mutant | None:
    """Keep the schedule up to one scheduling choice, answer it differently, then run without preempting."""
    positions = [i for i, c in enumerate(entry.choices) if c.kind == ChoiceKind.AGENT]
    if not positions:
        return None
    position = rng.choice(positions)
    choice = entry.choices[position]
    other = (choice.index + rng.randrange(1, choice.options)) % choice.options
    return Mutant(list(entry.choices[:position]) + [Choice(choice.kind, choice.options, other)], None, "move preemption")


def flip_value(entry: CorpusEntry, kind: str, rng: random.Random) -> Mutant | None:
    """Another answer to one message-match or fault choice."""
    positions = [i for i, c in enumerate(entry.choices) if c.kind == kind]
    if not positions:
        return None
    position = rng.choice(positions)
    choice = entry.choices[position]
    plan = list(entry.choices)
    plan[position] = Choice(kind, choice.options, (choice.index + rng.randrange(1, choice.options)) % choice.options)
    return Mutant(plan, None, f"flip {kind}")


def havoc(entry: CorpusEntry, rng: random.Random) -> Mutant | None:
    """A few random answers changed anywhere but the seed."""
    positions = [i for i, c in enumerate(entry.choices) if c.kind != ChoiceKind.SEED and c.options > 1]
    if not positions:
        return None
    plan = list(entry.choices)
    for position in rng.sample(positions, min(len(positions), rng.randint(1, 4))):
        options = plan[position].options
        # An open input's index is its distance from the default: log-uniform, mostly moderate values.
        index = rng.getrandbits(rng.randrange(1, OPEN_BITS)) if is_open(options) else rng.randrange(options)
        plan[position] = Choice(plan[position].kind, options, min(index, options - 1))
    return Mutant(plan, None, "havoc")
