"""Running the real ``dnsse`` command on the hostile targets, as a CI job would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TARGETS = Path(__file__).parent / "targets"


def target(name: str) -> str:
    """``FILE.py:FUNC`` of a target of this corpus."""
    return str(TARGETS / name)


def run_cli(
    *arguments: str, cwd: Path | None = None, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The real command, in a child process; a hang fails the test instead of stalling it."""
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env=env,
    )


def output(result: subprocess.CompletedProcess) -> str:
    return result.stdout + result.stderr


def edit_trace(source: Path, destination: Path, **fields: object) -> Path:
    """A copy of the trace at ``source`` with ``fields`` replaced."""
    data = json.loads(source.read_text())
    data.update(fields)
    destination.write_text(json.dumps(data))
    return destination
