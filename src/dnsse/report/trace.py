"""Bug traces on disk: plain JSON, written atomically, read back with validation.

A trace holds everything replay needs: the target, its framework and world
size, the input values, the execution limits and the choice sequence.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice
from dnsse.engine.execution import Limits
from dnsse.errors import BadInput

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

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "target": self.target,
            "framework": self.framework,
            "world_size": self.world_size,
            "inputs": self.inputs,
            "limits": {"max_steps": self.limits.max_steps, "max_seconds": self.limits.max_seconds},
            "strategy": self.strategy,
            "execution": self.execution,
            "steps": self.steps,
            "specs": list(self.specs),
            "faults": self.faults,
            "pinned": list(self.pinned),
            "bug": self.bug.to_json(),
            "choices": [choice.to_json() for choice in self.choices],
        }


def write_trace(trace: Trace, directory: Path) -> Path:
    """Write ``trace`` as ``bug-N.json`` under ``directory`` with the first free N.

    The file appears complete or not at all (written aside, then renamed), and
    never replaces an earlier trace.
    """
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace.to_json(), indent=1)
    handle, temporary = tempfile.mkstemp(prefix=".bug-", suffix=".tmp", dir=directory)
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
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"the trace {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the trace {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise BadInput(f"the trace {path} is not valid JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise BadInput(f"{path} is not a dnsse trace (no \"format\": \"{FORMAT}\" field)")
    if raw.get("version") != VERSION:
        raise BadInput(
            f"the trace {path} has format version {raw.get('version')!r}; this dnsse reads version {VERSION}"
        )
    try:
        limits = raw.get("limits") or {}
        trace = Trace(
            target=_field(raw, "target", str),
            framework=_field(raw, "framework", str),
            world_size=_field(raw, "world_size", int),
            inputs=_field(raw, "inputs", dict),
            choices=[Choice.from_json(item) for item in _field(raw, "choices", list)],
            limits=Limits(
                max_steps=int(limits.get("max_steps", Limits.max_steps)),
                max_seconds=float(limits.get("max_seconds", Limits.max_seconds)),
            ),
            bug=Bug.from_json(_field(raw, "bug", dict)),
            strategy=str(raw.get("strategy", "?")),
            execution=int(raw.get("execution", 0)),
            steps=int(raw.get("steps", 0)),
            specs=_specs(raw),
            faults=bool(raw.get("faults", True)),
            pinned=_pinned(raw),
        )
    except (ValueError, TypeError, KeyError) as error:
        raise BadInput(f"the trace {path} is malformed: {error}") from None
    return trace


def _pinned(raw: dict) -> list[str]:
    """Traces written before inputs were choices pinned every input they list."""
    pinned = raw.get("pinned", list(raw.get("inputs") or {}))
    if not isinstance(pinned, list) or not all(isinstance(name, str) for name in pinned):
        raise ValueError("the field 'pinned' must be a list of input names")
    return pinned


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
