"""Values of a number input that find bugs in practice, tried right after the default.

A user rarely bounds a number input, and the bugs an input causes sit at
the same few places whatever the program: zero and one, a sign change,
one off the default (an uneven split, an odd count), half and double of it
(a batch halved), powers of two and their neighbours (buffer and bucket
sizes), the type's limits; for floats also the smallest and largest
magnitudes, infinities, NaN, negative zero and the limits of the narrow
dtypes a float is cast to (float16's 65504 and the 65520 from which it
rounds to infinity, bfloat16's and float32's largest values).

The lists are ordered cheapest-first: small values and the default's
neighbours before type limits, which a program often treats as a
count of work and rejects or runs long on.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, TypeVar

T = TypeVar("T", int, float)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

FLOAT16_MAX = 65504.0
FLOAT16_OVERFLOW = 65520.0  # the smallest value float16 rounds to infinity
FLOAT16_TINY = 6.103515625e-05  # the smallest normal float16
FLOAT16_SUBNORMAL = 5.960464477539063e-08
BFLOAT16_MAX = 3.3895313892515355e38
FLOAT32_MAX = 3.4028234663852886e38
FLOAT32_TINY = 1.1754943508222875e-38


def int_probes(default: int, low: int, high: int) -> list[int]:
    """Distinct integers of ``[low, high]`` other than ``default``, most often buggy first."""
    candidates: list[int] = [default + 1, default - 1, 0, 1, -1, 2, default // 2, default * 2, -default]
    candidates += list(range(3, 17))
    candidates += [default + 2, default - 2, default // 2 + 1, default * 2 + 1, -2]
    for bits in range(5, 17):
        candidates += [2**bits, 2**bits - 1, 2**bits + 1]
    # Beyond 2**16 a value is mostly a count no program finishes: a few, the limits of int32 and int64.
    candidates += [2**20, 2**24, 2**31 - 1, -(2**31), 2**32, 2**53 + 1, -(2**53) - 1]
    candidates += [high, low, high - 1, low + 1]
    return _distinct_in(candidates, default, lambda v: low <= v <= high)


def float_probes(default: float, low: float, high: float, nan: bool) -> list[float]:
    """Distinct floats of ``[low, high]`` (and NaN when ``nan``) other than ``default``, most often buggy first."""
    candidates: list[float] = [math.nextafter(default, math.inf), math.nextafter(default, -math.inf)]
    candidates += [0.0, 1.0, -1.0, 0.5, 2.0, default / 2, default * 2, -default, -0.0]
    candidates += [float(v) for v in range(3, 9)] + [0.1, 1e-3, 1e-6]
    candidates += [FLOAT16_MAX, FLOAT16_OVERFLOW, FLOAT16_TINY, FLOAT16_SUBNORMAL, 2.0**15, 2.0**16, 2.0**24 + 1]
    candidates += [math.inf, -math.inf]
    candidates += [BFLOAT16_MAX, FLOAT32_MAX, FLOAT32_TINY, 1e300, sys.float_info.max, sys.float_info.min, 5e-324]
    candidates += [-FLOAT16_MAX, -FLOAT16_OVERFLOW, -FLOAT32_MAX, -sys.float_info.max, sys.float_info.epsilon]
    candidates += [low, high, math.nextafter(low, math.inf), math.nextafter(high, -math.inf)]
    found = _distinct_in(candidates, default, lambda v: low <= v <= high)
    if nan:
        found.append(math.nan)
    return found


def _distinct_in(candidates: list[T], default: T, inside: Callable[[T], bool]) -> list[T]:
    seen = {_key(default)}
    found = []
    for value in candidates:
        key = _key(value)
        if key not in seen and inside(value):
            seen.add(key)
            found.append(value)
    return found


def _key(value: object) -> object:
    # -0.0 == 0.0, but a program can tell them apart (copysign, 1/x): floats are told apart by sign too.
    return (float(value), math.copysign(1.0, float(value))) if isinstance(value, float) else value
