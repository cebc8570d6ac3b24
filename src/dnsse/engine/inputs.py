"""Explored inputs: the values of the entry point's keyword parameters as choices.

Each input has a :class:`Domain`, a bijection between its values and the
indices ``range(options)`` of one or more ``input`` choices. Index 0 is
always the parameter's default, and indices grow with distance from it, so
minimization (which prefers index 0) shrinks a value back towards the
default, and a strategy that knows a value it wants (a solver's model, a
harvested constant) asks :meth:`Domain.index_of` for the indices that make it.

Which parameters are inputs (DESIGN §2): keyword parameters with a default
and a ``bool``, ``str`` with ``Literal[...]``, enum, ``int`` or ``float``
annotation. An ``int`` or ``float`` without a ``Range`` is *open*: its
domain is every int64 (every float, with the infinities and NaN), at least
:data:`OPEN_WIDTH` options. Strategies that draw values blindly keep an open
input at its default (a uniformly drawn int64 is a huge count that a
program rejects or runs forever on); the ones that explore inputs on
purpose try its :meth:`Domain.probes` first (``fuzz``), solve for it
(``symbolic``) and mutate it.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from dnsse.engine.input_probes import INT64_MAX, INT64_MIN, float_probes, int_probes
from dnsse.errors import BadInput

# The options of an open input's choice: no ranged input has this many.
OPEN_WIDTH = 2**64


def is_open(options: int) -> bool:
    """Whether an ``input`` choice among ``options`` decides an open input (one without a Range)."""
    return options >= OPEN_WIDTH


@dataclass(frozen=True)
class Range:
    """Bounds of an explored input: ``Annotated[int, dnsse.Range(0, 8)]``."""

    low: float
    high: float


@dataclass(frozen=True)
class TensorSpec:
    """A tensor input: ``Annotated[torch.Tensor, dnsse.TensorSpec(shape=(4,), low=-1, high=1)]``.

    Every element is one float (or int, for integer dtypes) choice in
    ``[low, high]``; the default element is the parameter default's element
    when it is a tensor of this shape, else 0 (clamped into the bounds).
    """

    shape: tuple[int, ...]
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0


class Domain:
    """The values of one input and their choice indices (index 0 is the default)."""

    # How many choices a value takes, and among how many options each.
    def widths(self) -> list[int]:
        raise NotImplementedError

    def value_of(self, indices: Sequence[int]) -> object:
        raise NotImplementedError

    def index_of(self, value: object) -> list[int] | None:
        """The indices that give ``value``; ``None`` when it is not in the domain."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def probes(self) -> list[object]:
        """Values to try right after the default, most often buggy first (see dnsse.engine.input_probes)."""
        return []


def _zigzag_value(index: int, centre: int, low: int, high: int) -> int:
    """The ``index``-th integer of ``[low, high]`` by distance from ``centre`` (up first)."""
    below, above = centre - low, high - centre
    both = min(below, above)
    if index <= 2 * both:
        return centre + (index + 1) // 2 if index % 2 else centre - index // 2
    rest = index - 2 * both
    return centre + both + rest if above > below else centre - both - rest


def _zigzag_index(value: int, centre: int, low: int, high: int) -> int:
    below, above = centre - low, high - centre
    both = min(below, above)
    distance = value - centre
    if abs(distance) <= both:
        return 2 * distance - 1 if distance > 0 else -2 * distance
    return 2 * both + abs(distance) - both


class IntDomain(Domain):
    def __init__(self, default: int, low: int, high: int) -> None:
        self.default, self.low, self.high = default, low, high

    def widths(self) -> list[int]:
        return [self.high - self.low + 1]

    def value_of(self, indices: Sequence[int]) -> int:
        return _zigzag_value(indices[0], self.default, self.low, self.high)

    def index_of(self, value: object) -> list[int] | None:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or not self.low <= value <= self.high:
            return None
        return [_zigzag_index(int(value), self.default, self.low, self.high)]

    def describe(self) -> str:
        if (self.low, self.high) == (INT64_MIN, INT64_MAX):
            return "any int64"
        return f"int in [{self.low}, {self.high}]"

    def probes(self) -> list[object]:
        return list(int_probes(self.default, self.low, self.high))


def float_order(value: float) -> int:
    """A monotone integer for every non-NaN float: neighbours in order are neighbours here."""
    bits = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF)


def float_from_order(order: int) -> float:
    bits = order if order >= 0 else (-order) | -0x8000_0000_0000_0000
    return struct.unpack("<d", struct.pack("<q", bits))[0]


class FloatDomain(Domain):
    """Floats of ``[low, high]``, ordered by how many floats lie between them and the default.

    An open float (``nan=True``) is every float: its choice has
    :data:`OPEN_WIDTH` options, the last ones (past the infinities) NaN.
    """

    def __init__(self, default: float, low: float, high: float, nan: bool = False) -> None:
        self.default, self.low, self.high = float(default), float(low), float(high)
        self.nan = nan
        self._centre = float_order(self.default)
        self._low, self._high = float_order(self.low), float_order(self.high)
        self._numbers = self._high - self._low + 1

    def widths(self) -> list[int]:
        return [max(self._numbers + 1, OPEN_WIDTH) if self.nan else self._numbers]

    def value_of(self, indices: Sequence[int]) -> float:
        if indices[0] >= self._numbers:
            return math.nan
        return float_from_order(_zigzag_value(indices[0], self._centre, self._low, self._high))

    def index_of(self, value: object) -> list[int] | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if math.isnan(value):
            return [self.widths()[0] - 1] if self.nan else None
        order = float_order(float(value))
        if not self._low <= order <= self._high:
            return None
        return [_zigzag_index(order, self._centre, self._low, self._high)]

    def describe(self) -> str:
        if self.nan:
            return "any float"
        return f"float in [{self.low:g}, {self.high:g}]"

    def probes(self) -> list[object]:
        return list(float_probes(self.default, self.low, self.high, self.nan))


class ListDomain(Domain):
    """A finite list of values (bool, Literal, enum): the default first, then declaration order."""

    def __init__(self, default: object, values: Sequence[object], name: str) -> None:
        self.values = [default] + [v for v in values if v != default]
        self.name = name

    def widths(self) -> list[int]:
        return [len(self.values)]

    def value_of(self, indices: Sequence[int]) -> object:
        return self.values[indices[0]]

    def index_of(self, value: object) -> list[int] | None:
        for index, candidate in enumerate(self.values):
            if candidate == value and type(candidate) is type(value):
                return [index]
        return None

    def describe(self) -> str:
        return f"{self.name} in {{{', '.join(repr(v) for v in self.values)}}}"


class TensorDomain(Domain):
    """One choice per element of a tensor of fixed shape and dtype."""

    def __init__(self, spec: TensorSpec, default: object) -> None:
        import torch

        self.spec = spec
        self.dtype = getattr(torch, spec.dtype, None)
        if not isinstance(self.dtype, torch.dtype):
            raise BadInput(f"TensorSpec dtype {spec.dtype!r} is not a torch dtype name (float32, int64, ...)")
        count = math.prod(spec.shape)
        if isinstance(default, torch.Tensor) and tuple(default.shape) == tuple(spec.shape):
            centres = [float(x) for x in default.flatten().tolist()]
        else:
            centres = [min(max(0.0, spec.low), spec.high)] * count
        integral = not self.dtype.is_floating_point
        self.elements: list[Domain] = [
            IntDomain(int(c), int(spec.low), int(spec.high)) if integral else FloatDomain(c, spec.low, spec.high)
            for c in centres
        ]

    def widths(self) -> list[int]:
        return [element.widths()[0] for element in self.elements]

    def value_of(self, indices: Sequence[int]) -> object:
        import torch

        values = [element.value_of([i]) for element, i in zip(self.elements, indices)]
        return torch.tensor(values, dtype=self.dtype).reshape(self.spec.shape)

    def index_of(self, value: object) -> list[int] | None:
        import torch

        if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(self.spec.shape):
            return None
        indices = []
        for element, x in zip(self.elements, value.flatten().tolist()):
            found = element.index_of(x)
            if found is None:
                return None
            indices.extend(found)
        return indices

    def describe(self) -> str:
        return f"tensor {self.spec.dtype}{list(self.spec.shape)} in [{self.spec.low:g}, {self.spec.high:g}]"


class StrategyDomain(Domain):
    """A Hypothesis strategy: one choice seeds its draw; index 0 is the default."""

    SEEDS = 2**32

    def __init__(self, strategy: object, default: object) -> None:
        self.strategy = strategy
        self.default = default

    def widths(self) -> list[int]:
        return [self.SEEDS]

    def value_of(self, indices: Sequence[int]) -> object:
        if indices[0] == 0:
            return self.default
        import random

        from hypothesis.internal.conjecture.data import ConjectureData

        data = ConjectureData(random=random.Random(indices[0]))
        return data.draw(self.strategy)  # type: ignore[arg-type]

    def index_of(self, value: object) -> list[int] | None:
        return [0] if value == self.default else None

    def describe(self) -> str:
        return f"drawn from {self.strategy!r}"


class InputAware(Protocol):
    """A chooser that hands the program a stand-in for each drawn input value.

    Concolic execution gives the program values that record what is
    computed from them; every other chooser leaves the values as drawn.
    """

    def input_value(self, parameter: InputParameter, value: object) -> object: ...


@dataclass(frozen=True)
class InputParameter:
    """A keyword parameter of the entry point that is an input.

    ``bounds`` is ``None`` for an open int or float (no Range); ``--input``
    pins any input.
    """

    name: str
    type: Any
    default: object
    bounds: Range | None = None
    domain: Domain | None = None

    def parse(self, text: str) -> object:
        """The value of ``--input NAME=text``; BadInput when it does not fit."""
        value = _parse_as(self, text)
        if self.domain is not None and self.domain.index_of(value) is None:
            raise BadInput(f"--input {self.name}={text}: the value is outside the input's domain ({self.domain.describe()})")
        return value


def _parse_as(parameter: InputParameter, text: str) -> object:
    kind = parameter.type
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError("expected true or false")
            return lowered in ("true", "1")
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            try:
                return kind[text]
            except KeyError:
                return kind(text)
        if parameter.domain is not None and isinstance(parameter.domain, ListDomain):
            return text
    except (ValueError, TypeError) as error:
        raise BadInput(f"--input {parameter.name}={text}: not a valid {getattr(kind, '__name__', kind)}: {error}") from None
    raise BadInput(f"--input {parameter.name}: values of this input ({kind}) cannot be given on the command line")


def domain_for(hint: Any, default: object, extras: Sequence[object]) -> tuple[Any, Domain | None, Range | None] | None:
    """(type, domain, bounds) of an annotated parameter; ``None`` when it is not an input."""
    import typing

    bounds = next((e for e in extras if isinstance(e, Range)), None)
    tensor = next((e for e in extras if isinstance(e, TensorSpec)), None)
    strategy = next((e for e in extras if _is_hypothesis_strategy(e)), None)
    if tensor is not None:
        return hint, TensorDomain(tensor, default), None
    if strategy is not None:
        return hint, StrategyDomain(strategy, default), None
    if typing.get_origin(hint) is typing.Literal:
        values = list(typing.get_args(hint))
        if default not in values:
            return None
        return str, ListDomain(default, values, "one of"), None
    if hint is bool:
        return bool, ListDomain(default, [False, True], "bool"), None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint, ListDomain(default, list(hint), hint.__name__), None
    if hint is int and isinstance(default, int) and not isinstance(default, bool):
        if bounds is None:
            if not INT64_MIN <= default <= INT64_MAX:
                return int, None, None
            return int, IntDomain(default, INT64_MIN, INT64_MAX), None
        low, high = math.ceil(bounds.low), math.floor(bounds.high)
        _check_bounds(low, high, default)
        return int, IntDomain(default, low, high), bounds
    if hint is float and isinstance(default, (int, float)):
        if bounds is None:
            if math.isnan(default):
                return float, None, None
            return float, FloatDomain(float(default), -math.inf, math.inf, nan=True), None
        _check_bounds(bounds.low, bounds.high, default)
        return float, FloatDomain(float(default), bounds.low, bounds.high), bounds
    return None


def _check_bounds(low: float, high: float, default: object) -> None:
    if not low <= default <= high:  # type: ignore[operator]
        raise BadInput(f"the default {default!r} lies outside its Range({low}, {high}); defaults must be in range")


def _is_hypothesis_strategy(value: object) -> bool:
    return any(cls.__module__.startswith("hypothesis.strategies") and cls.__name__ == "SearchStrategy" for cls in type(value).__mro__)


def draw_inputs(
    parameters: Sequence[InputParameter],
    choose: Callable[[int], int],
    pinned: dict[str, object] | None = None,
) -> dict[str, object]:
    """Every input's value, each explored one from ``choose(options)`` calls in parameter order."""
    pinned = pinned or {}
    # Pinned values of parameters that are no inputs pass through too.
    values: dict[str, object] = dict(pinned)
    for parameter in parameters:
        if parameter.name in pinned:
            continue
        if parameter.domain is None:
            values[parameter.name] = parameter.default
        else:
            values[parameter.name] = parameter.domain.value_of([choose(width) for width in parameter.domain.widths()])
    return values


@dataclass(frozen=True)
class InputSlot:
    """One ``input`` choice of an execution: which input (and tensor element) it decides."""

    parameter: InputParameter
    element: int
    # The domain of this one choice (a tensor's element domain, else the input's own).
    domain: Domain


def input_slots(parameters: Sequence[InputParameter], pinned: dict[str, object] | None = None) -> list[InputSlot]:
    """The input choices :func:`draw_inputs` records, in order (a choice among one option is not recorded)."""
    slots = []
    for parameter in parameters:
        if parameter.domain is None or parameter.name in (pinned or {}):
            continue
        parts = parameter.domain.elements if isinstance(parameter.domain, TensorDomain) else [parameter.domain]
        for element, (part, width) in enumerate(zip(parts, parameter.domain.widths())):
            if width > 1:
                slots.append(InputSlot(parameter, element, part))
    return slots


def show_value(value: object) -> object:
    """An input value as JSON can hold it (tensors as lists, enums by name)."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [show_value(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: show_value(item) for key, item in value.items()}
    return repr(value)
