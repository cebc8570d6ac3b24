"""Randomness a program asks the operating system for, drawn from the execution's seed instead.

The global generators are seeded from the choice sequence before each
execution (:func:`seed_random_generators`). What would still differ between
two runs of one schedule is entropy from the OS: ``random.Random()`` and
``random.seed()`` without an argument, ``os.urandom``, ``uuid.uuid4``,
``secrets``, ``random.SystemRandom``, ``numpy.random.default_rng()``,
``numpy.random.seed()`` and ``torch.seed()``. While an execution runs, those
read a stream seeded from the execution's seed, in the order the controlled
agents ask (one agent runs at a time, so the order is the schedule's). Code
outside the agents (dnsse itself) keeps the real sources.

Left out, because they cannot be replaced from Python: reading
``/dev/urandom`` as a file, ``torch.Generator().seed()``, and entropy that
C extensions draw themselves. A program that reads them is caught by the
determinism check when a replay goes another way.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
from typing import Any, Callable, Iterator

from dnsse.engine.execution import current_agent

_real_urandom = os.urandom
_real_random_urandom = random._urandom  # type: ignore[attr-defined]
_real_getrandom = getattr(os, "getrandom", None)
_real_random_seed = random.Random.seed
_real_module_seed = random.seed


def seed_random_generators(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators (those already imported)."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (2**32))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        if _only_cpu(torch):
            # torch.manual_seed also queues a lazy seeding of every accelerator,
            # each capturing a stack (1.4 ms here); with none present, only
            # the CPU generator exists to be seeded.
            torch.default_generator.manual_seed(seed)
        else:
            torch.manual_seed(seed)


_cpu_only: list[bool] = []


def _only_cpu(torch: Any) -> bool:
    """Whether this process's torch has no accelerator (CUDA, MPS, XPU, MTIA, a custom device) to seed."""
    if not _cpu_only:
        try:
            _cpu_only.append(
                not torch.cuda.is_available()
                and not torch.backends.mps.is_available()
                and not torch.xpu.is_available()
                and not torch.mtia.is_available()
                and torch._C._get_privateuse1_backend_name() == "privateuseone"
            )
        except Exception:  # noqa: BLE001 - a torch without one of these: seed the way torch does
            _cpu_only.append(False)
    return _cpu_only[0]


class _Stream:
    """The execution's source of would-be OS entropy."""

    def __init__(self, seed: int) -> None:
        # A generator of its own, so that drawing entropy does not move the
        # program's global ``random`` state.
        self.generator = random.Random(seed ^ 0x5EED_E17A)

    def bytes(self, count: int) -> bytes:
        return self.generator.randbytes(count)

    def seed(self) -> int:
        return self.generator.getrandbits(63)


_stream: _Stream | None = None


def _controlled() -> _Stream | None:
    """The stream when a controlled agent is asking, else None (real entropy)."""
    stream = _stream
    if stream is None or current_agent() is None:
        return None
    return stream


def _urandom(size: int) -> bytes:
    stream = _controlled()
    return _real_urandom(size) if stream is None else stream.bytes(size)


def _random_urandom(size: int) -> bytes:
    stream = _controlled()
    return _real_random_urandom(size) if stream is None else stream.bytes(size)


def _getrandom(size: int, flags: int = 0) -> bytes:
    stream = _controlled()
    return _real_getrandom(size, flags) if stream is None else stream.bytes(size)  # type: ignore[misc]


def _random_seed(self: random.Random, a: object = None, version: int = 2) -> None:
    stream = _controlled()
    if a is None and stream is not None:
        a = stream.seed()
    _real_random_seed(self, a, version)


def _module_seed(a: object = None, version: int = 2) -> None:
    stream = _controlled()
    if a is None and stream is not None:
        a = stream.seed()
    _real_module_seed(a, version)


def _torch_seed(real: Callable[[], int]) -> Callable[[], int]:
    def seed() -> int:
        stream = _controlled()
        if stream is None:
            return real()
        value = stream.seed()
        sys.modules["torch"].manual_seed(value)
        return value

    return seed


@contextlib.contextmanager
def entropy_from_seed(seed: int) -> Iterator[None]:
    """While the block runs, controlled agents draw OS entropy from a stream seeded by ``seed``."""
    global _stream
    replaced: list[tuple[object, str, object]] = [
        (os, "urandom", _urandom),
        (random, "_urandom", _random_urandom),
        (random.Random, "seed", _random_seed),
        (random, "seed", _module_seed),
    ]
    if _real_getrandom is not None:
        replaced.append((os, "getrandom", _getrandom))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "seed"):
        replaced.append((torch, "seed", _torch_seed(torch.seed)))
        if hasattr(torch, "random"):
            replaced.append((torch.random, "seed", _torch_seed(torch.random.seed)))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in replaced]
    _stream = _Stream(seed)
    for owner, name, value in replaced:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)
        _stream = None
