"""Bug traces on disk: plain JSON, written atomically, read back with validation.

A trace holds everything replay needs: the target (``FILE.py:FUNC``, or
the launch command as the user gave it, with the directory its relative
paths start in), its framework and world size, the input values, the execution limits, the hash seed the process ran
under, and the choice sequence, each choice with what it chose (so replay can
say where a run left the recorded one), and the digest of the target's
source, so that replaying a changed program says so.
Reading applies the caps of :mod:`dnsse.validation`: a trace is input too.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice
from dnsse.engine.clock import Stall
from dnsse.engine.limits import Limits
from dnsse.engine.hash_seed import valid_hash_seed
from dnsse.engine.memory import MIN_MEMORY_LIMIT
from dnsse.errors import BadInput
from dnsse.validation import (
    MAX_EXECUTION_SECONDS,
    MAX_STEPS,
    MAX_TRACE_BYTES,
    MAX_WORLD_SIZE,
    Bounds,
    check_number,
)

# A file being written is named so that no glob for traces (bug-*.json) matches it.
PARTIAL_PREFIX = ".partial-"

FORMAT = "dnsse-trace"
VERSION = 1


@dataclass
class Trace:
    target: str
    framework: str
    world_size: int
    inputs: dict[str, object]
    choices: list[Choice]
    limits: Limits
    bug: Bug
    strategy: str
    execution: int
    steps: int
    # The specifications checked in the run (LTL text or builtin:NAME), so
    # that replay checks them again.
    specs: list[str] = field(default_factory=list)
    # Whether faults were injected: replay must ask the same fault choices.
    faults: bool = True
    # Inputs pinned by --input: replay passes them instead of drawing them
    # from input choices. Every other input is drawn from the choices.
    pinned: list[str] = field(default_factory=list)
    # sha256 of the target file's source when the trace was recorded ("" if unknown).
    source_sha256: str = ""
    # PYTHONHASHSEED of the recording process (None: random); replay runs under it.
    hash_seed: int | None = None
    # The memory limit (bytes) of the recording process (None: none); replay runs under it.
    memory_limit: int | None = None
    # Where the run stalled its runnable agents so that a deadline came first: within limits.max_delay.
    stalls: list[Stall] = field(default_factory=list)
    # Where a launch command's relative paths start ("" for FILE.py:FUNC, whose path is absolute).
    directory: str = ""
    # The root of the project that held the target ("" if unknown): replay elsewhere finds the target
    # at the same place relative to another checkout's root (dnsse.campaign.relocation).
    root: str = ""

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "target": self.target,
            "framework": self.framework,
            "world_size": self.world_size,
            "inputs": self.inputs,
            "limits": limits_json(self.limits),
            "strategy": self.strategy,
            "execution": self.execution,
            "steps": self.steps,
            "specs": list(self.specs),
            "faults": self.faults,
            "pinned": list(self.pinned),
            "source_sha256": self.source_sha256,
            "hash_seed": self.hash_seed,
            "memory_limit": self.memory_limit,
            "stalls": [
                {"step": stall.step, "agent": stall.agent, "seconds": stall.seconds, "until": stall.until}
                for stall in self.stalls
            ],
            "directory": self.directory,
            "root": self.root,
            "bug": self.bug.to_json(),
            "choices": [choice.to_json() for choice in self.choices],
        }


def write_trace(trace: Trace, directory: Path) -> Path:
    """Write ``trace`` as ``bug-N.json`` under ``directory`` with the first free N.

    The file appears complete or not at all (written aside under a name no
    trace glob matches, then linked), never replaces an earlier trace, and is
    readable by others like any file the user writes (mode 0644).
    """
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace.to_json(), indent=1)
    handle, temporary = tempfile.mkstemp(prefix=PARTIAL_PREFIX, suffix=".tmp", dir=directory)
    os.fchmod(handle, 0o644)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    number = 1
    while True:
        path = directory / f"bug-{number}.json"
        try:
            # link() refuses to replace an existing file, unlike rename().
            os.link(temporary, path)
        except FileExistsError:
            number += 1
            continue
        os.unlink(temporary)
        return path


def read_trace(path: Path) -> Trace:
    """Load and validate a trace; every defect is a BadInput with a clear message."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_TRACE_BYTES:
            raise BadInput(
                f"the trace {path} is {size} bytes, more than dnsse reads ({MAX_TRACE_BYTES} at most); "
                "it is not a trace dnsse wrote"
            )
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"the trace {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the trace {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise BadInput(f"the trace {path} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise BadInput(f"the trace {path} is nested too deeply to be a dnsse trace") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadInput(f"{path} is not a dnsse trace (no \"format\": \"{FORMAT}\" field)")
    if raw.get("version") != VERSION:
        raise BadInput(
            f"the trace {path} has format version {raw.get('version')!r}; this dnsse reads version {VERSION}"
        )
    try:
        trace = Trace(
            target=_field(raw, "target", str),
            framework=_field(raw, "framework", str),
            world_size=_field(raw, "world_size", int),
            inputs=_field(raw, "inputs", dict),
            choices=[Choice.from_json(item) for item in _field(raw, "choices", list)],
            limits=_limits(raw),
            bug=Bug.from_json(_field(raw, "bug", dict)),
            strategy=str(raw.get("strategy", "?")),
            execution=int(raw.get("execution", 0)),
            steps=int(raw.get("steps", 0)),
            specs=_specs(raw),
            faults=bool(raw.get("faults", True)),
            pinned=_pinned(raw),
            source_sha256=str(raw.get("source_sha256", "")),
            hash_seed=_hash_seed(raw),
            memory_limit=_memory_limit(raw),
            stalls=_stalls(raw),
            directory=str(raw.get("directory") or ""),
            root=str(raw.get("root") or ""),
        )
        check_number(trace.world_size, Bounds("the field 'world_size'", 1, MAX_WORLD_SIZE))
        if not trace.choices:
            raise ValueError("the field 'choices' is empty; every execution makes at least one choice")
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise BadInput(f"the trace {path} is malformed: {error}") from None
    except BadInput as error:
        raise BadInput(f"the trace {path} is malformed: {error}") from None
    return trace


def _stalls(raw: dict) -> list[Stall]:
    stalls = raw.get("stalls", [])
    if not isinstance(stalls, list):
        raise ValueError("the field 'stalls' must be a list")
    return [
        Stall(int(item["step"]), str(item["agent"]), float(item["seconds"]), float(item["until"])) for item in stalls
    ]


def _pinned(raw: dict) -> list[str]:
    """Traces written before inputs were choices pinned every input they list."""
    pinned = raw.get("pinned", list(raw.get("inputs") or {}))
    if not isinstance(pinned, list) or not all(isinstance(name, str) for name in pinned):
        raise ValueError("the field 'pinned' must be a list of input names")
    return pinned


def _memory_limit(raw: dict) -> int | None:
    limit = raw.get("memory_limit")
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < MIN_MEMORY_LIMIT:
        raise ValueError(f"the field 'memory_limit' must be null or a number of bytes (at least {MIN_MEMORY_LIMIT})")
    return limit


def _limits(raw: dict) -> Limits:
    limits = raw.get("limits", {})
    if not isinstance(limits, dict):
        raise ValueError(f"the field 'limits' must be an object, got {type(limits).__name__}")
    max_steps = limits.get("max_steps", Limits.max_steps)
    max_seconds = limits.get("max_seconds", Limits.max_seconds)
    # A trace of before virtual time's delay bound was recorded with any timed wait free to expire.
    max_delay = limits.get("max_delay", "inf")
    unfair_steps = limits.get("unfair_steps", Limits.unfair_steps)
    if max_delay == "inf":
        max_delay = math.inf
    if not isinstance(max_delay, (int, float)) or isinstance(max_delay, bool) or max_delay < 0:
        raise ValueError('limits.max_delay must be a number of seconds, at least 0, or "inf"')
    if not isinstance(unfair_steps, int) or isinstance(unfair_steps, bool) or unfair_steps < 0:
        raise ValueError("limits.unfair_steps must be an integer, at least 0")
    if not isinstance(max_steps, int) or isinstance(max_steps, bool):
        raise ValueError("limits.max_steps must be an integer")
    if not isinstance(max_seconds, (int, float)) or isinstance(max_seconds, bool):
        raise ValueError("limits.max_seconds must be a number")
    check_number(max_steps, Bounds("limits.max_steps", 1, MAX_STEPS))
    check_number(float(max_seconds), Bounds("limits.max_seconds", 0, MAX_EXECUTION_SECONDS, low_open=True))
    return Limits(
        max_steps=max_steps, max_seconds=float(max_seconds), max_delay=float(max_delay), unfair_steps=unfair_steps
    )


def limits_json(limits: Limits) -> dict:
    """The limits a trace records (an unbounded delay as ``"inf"``: JSON has no infinity)."""
    return {
        "max_steps": limits.max_steps,
        "max_seconds": limits.max_seconds,
        "max_delay": "inf" if math.isinf(limits.max_delay) else limits.max_delay,
        "unfair_steps": limits.unfair_steps,
    }


def recorded_hash_seed(path: Path) -> int | None:
    """The hash seed a trace was recorded under; ``None`` when it names none or cannot be read.

    Read before the trace is validated (to re-execute under it early), so it
    never fails: ``read_trace`` reports what is wrong with the file.
    """
    try:
        if Path(path).stat().st_size > MAX_TRACE_BYTES:
            return None
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return _hash_seed(raw) if isinstance(raw, dict) else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def _hash_seed(raw: dict) -> int | None:
    seed = raw.get("hash_seed")
    if seed is None:
        return None
    if not valid_hash_seed(seed):
        raise ValueError(f"the field 'hash_seed' must be null or an integer from 0 to 4294967295, got {seed!r}")
    return seed


def _specs(raw: dict) -> list[str]:
    specs = raw.get("specs", [])
    if not isinstance(specs, list) or not all(isinstance(text, str) for text in specs):
        raise ValueError("the field 'specs' must be a list of formulas (strings)")
    return specs


def _field(raw: dict, name: str, kind: type) -> object:
    if name not in raw:
        raise ValueError(f"the field {name!r} is missing")
    value = raw[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"the field {name!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value
