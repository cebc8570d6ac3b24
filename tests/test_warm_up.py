"""Executions do not depend on what earlier executions of the process loaded (DESIGN §1).

The first execution of a process imports the modules a program imports
lazily; later ones find them loaded. Either way, the same choices must give
the same run, or a trace recorded late in a campaign would not replay in a
fresh process. Each check runs in a fresh interpreter, so execution 1 really
is the first to import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"
LAZY = f"{PROGRAMS / 'siblings' / 'lazy_imports.py'}:main"

SAME_CHOICES = """
import json, random, sys
from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework

class Seeded:
    def __init__(self, seed):
        self.rng = random.Random(seed)
    def next_agent(self, runnable, current, step):
        return self.rng.randrange(len(runnable))
    def next_value(self, kind, options):
        return self.rng.randrange(options)

target = LoadedTarget(TargetSpec.parse(sys.argv[1]))
framework = ThreadsFramework()
runs = []
with framework.activate():
    for seed in range(int(sys.argv[2])):
        first = run_execution(target, framework, Seeded(seed))
        again = run_execution(target, framework, Seeded(seed))
        runs.append([[c.to_json() for c in run.choices] for run in (first, again)]
                    + [[run.bug.message if run.bug else None for run in (first, again)]])
print(json.dumps(runs))
"""

REPLAYS = """
import json, sys
from pathlib import Path
from dnsse.campaign.replay import replay

runs = [replay(Path(sys.argv[1])).result for _ in range(5)]
print(json.dumps([[[c.to_json() for c in run.choices], run.bug.message if run.bug else None] for run in runs]))
"""


def _python(script: str, *arguments: str, env: dict[str, str] | None = None) -> object:
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments], capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(PROGRAMS / "lazy_lib"), os.environ.get("PYTHONPATH", "")]),
             **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_first_execution_of_a_process_asks_for_the_choices_of_any_later_one() -> None:
    for first, again, bugs in _python(SAME_CHOICES, LAZY, "6"):  # type: ignore[union-attr]
        # Each choice records what it chose: agent, operation and line must match, not only the count.
        assert first == again
        assert bugs[0] == bugs[1]


def test_one_trace_replayed_five_times_in_one_process_gives_the_same_run(tmp_path: Path) -> None:
    found = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", LAZY, "--out", str(tmp_path), "--strategy", "random"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(PROGRAMS / "lazy_lib"), os.environ.get("PYTHONPATH", "")])},
    )
    assert found.returncode == 1, found.stdout + found.stderr
    trace = tmp_path / "bug-1.json"
    recorded = json.loads(trace.read_text())
    runs = _python(REPLAYS, str(trace), env={"PYTHONHASHSEED": str(recorded["hash_seed"])})
    assert all(run == runs[0] for run in runs)  # type: ignore[index, union-attr]
    choices, message = runs[0]  # type: ignore[index, misc]
    assert choices == recorded["choices"]
    assert message == recorded["bug"]["message"] and "a lost update in tally" in message
