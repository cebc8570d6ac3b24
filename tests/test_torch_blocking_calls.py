"""Whether a call blocks is decided from torch's API frame, however many of dnsse's frames lie between.

``backend._caller_waits`` finds the program's call by walking up the stack.
Here every backend method that decides runs behind extra frames of the
torch_dist package, as a refactoring that adds a helper would put them:
blocking sends still deadlock with the report's "waits for ...", and
isend, irecv and async_op=True still run apart until wait(). The same holds
for the frames between the program and the wait torch's API makes for it,
which under NCCL orders only the stream (``streams.waits_on_stream``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest
from helpers import run_torch

from dnsse.cli import main
from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch
torch_dist = pytest.importorskip("dnsse.frameworks.torch_dist.backend", reason="torch is not installed")
from dnsse.frameworks.torch_dist import mode_off, rank_mode  # noqa: E402
from dnsse.frameworks.torch_dist.backend import ControlledProcessGroup  # noqa: E402

_WRAPPER = "def wrapped(*args, **kwargs):\n    return inner(*args, **kwargs)\n"


def _behind_package_frames(function: Callable, count: int) -> Callable:
    """``function`` called through ``count`` more frames whose code belongs to the torch_dist package."""
    for _ in range(count):
        namespace = {"inner": function}
        exec(compile(_WRAPPER, mode_off.__file__, "exec"), namespace)
        function = namespace["wrapped"]
    return function


@pytest.fixture(params=[0, 1, 3], ids=lambda count: f"{count} extra frames")
def extra_frames(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    for name in ("send", "recv", "allreduce"):
        method = getattr(ControlledProcessGroup, name)
        monkeypatch.setattr(ControlledProcessGroup, name, _behind_package_frames(method, request.param))
    return request.param


def test_blocking_sends_still_deadlock_and_say_what_they_wait_for(extra_frames: int) -> None:
    for result in run_torch("torch_p2p.py:send_send", seeds=range(5)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.DEADLOCK
        assert "rank 0 waits for send(dst=1, tag=0) on rank 0 to be received" in bug.details[0]
        assert "rank 1 waits for send(dst=0, tag=0) on rank 1 to be received" in bug.details[1]


def test_isend_stays_async(extra_frames: int) -> None:
    for result in run_torch("torch_p2p.py:isend_isend", seeds=range(5)):
        assert result.bug is None, result.bug.render()


def test_irecv_stays_async(extra_frames: int) -> None:
    (result,) = run_torch("torch_p2p.py:irecv_read_early", seeds=[0])
    assert result.bug is not None
    assert result.bug.message.startswith("async irecv buffer read before Work.wait() on rank 1 at ")


def test_a_blocking_all_reduce_blocks_and_an_async_one_runs_apart(extra_frames: int) -> None:
    for result in run_torch("torch_p2p.py:blocking_then_async_all_reduce", seeds=range(5)):
        assert result.bug is None, result.bug.render()
        transfers = sorted(name for name in result.agent_names if "all_reduce" in name)
        assert transfers == ["rank 0 all_reduce #2", "rank 1 all_reduce #2"], result.agent_names


@pytest.mark.parametrize("count", [1, 3])
def test_under_nccl_a_blocking_all_reduce_still_orders_nothing_on_the_host(
    count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between torch's API and its own wait(): the rank's mode taken off by these helpers.
    monkeypatch.setattr(rank_mode, "apart", _behind_package_frames(rank_mode.apart, count))
    program = Path(__file__).parent / "real_programs" / "nccl_vs_gloo.py"
    report = tmp_path / "report.json"
    status = main(
        [
            "check", f"{program}:all_reduce_as_barrier", "--input", "backend=nccl", "--budget", "40",
            "--out", str(tmp_path / "out"), "--json", str(report), "--quiet",
        ], contained=False
    )
    bug = json.loads(report.read_text())["bugs"][0]
    assert status == 1 and bug["kind"] == "exception" and "FileNotFoundError" in bug["message"], bug
