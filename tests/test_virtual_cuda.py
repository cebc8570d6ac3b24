"""The virtual CUDA device: a GPU program's streams and events on a machine without CUDA.

Each pattern of tests/real_programs/cuda_streams.py passes when it orders its
streams, and without the wait is a ``race`` naming both kernels and their
lines, whose trace replays. What the device cannot run is refused (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from dnsse.cli import main
from helpers import run_torch

pytestmark = [
    pytest.mark.torch,
    pytest.mark.skipif(torch.cuda.is_available(), reason="the virtual device stands in only where CUDA is missing"),
]

PROGRAMS = Path(__file__).parent / "real_programs" / "cuda_streams.py"
SOURCE = PROGRAMS.read_text().splitlines()


def _line(marker: str) -> str:
    """``cuda_streams.py:N`` of the line that carries ``# (marker)``."""
    number = next(i for i, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# ({marker})"))
    return f"cuda_streams.py:{number}"


def _check(function: str, tmp_path: Path, budget: int = 6) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    status = main(
        ["check", f"{PROGRAMS}:{function}", "--world-size", "2", "--budget", str(budget), "--no-minimize",
         "--out", str(tmp_path / "out"), "--json", str(report), "--quiet"],
        contained=False,
    )
    return status, json.loads(report.read_text()) if report.exists() else {}


CORRECT = [
    "side_stream_all_reduce", "ddp_overlap", "reduction_stream", "async_all_gather", "pipeline_send", "prefetch", "host_read", "host_reads_after_each_synchronization",
    "poll_until_done", "device_queries",
]


@pytest.mark.parametrize("function", CORRECT)
def test_a_program_that_orders_its_streams_passes(function: str) -> None:
    results = run_torch(f"../real_programs/cuda_streams.py:{function}", seeds=range(8))
    assert [result.bug for result in results if result.bug is not None] == []


@pytest.mark.slow
def test_a_correct_program_passes_the_command_line_check(tmp_path: Path) -> None:
    status, report = _check("ddp_overlap", tmp_path)
    assert status == 0, report["bugs"]
    assert report["bugs"] == [] and report["semantics"] == "nccl"


# (function, the later access: its kernel, stream and line; the earlier one: its kernel, stream and line)
RACES = [
    ("side_stream_all_reduce_without_wait", ("all_reduce", "the NCCL stream", "all-reduce"),
     ("mul", "stream 1", "side compute")),
    ("ddp_overlap_without_wait", ("sum", "the default stream", "read"), ("all_reduce", "NCCL stream", "all_reduce")),
    ("reduction_stream_without_wait", ("mul", "the default stream", "optimizer"), ("copy_", "stream 1", "copy back")),
    ("async_all_gather_without_wait", ("mul", "the default stream", "use"),
     ("all_gather_into_tensor", "NCCL stream", "all_gather")),
    ("host_read_without_synchronize", ("tolist (a read on the host)", "the default stream", "host"),
     ("mul", "stream 1", "side")),
    ("pipeline_send_without_wait", ("send", "the NCCL stream for send/recv between ranks 0 and 1", "send"),
     ("mul", "stream 1", "activation")),
    ("prefetch_without_wait", ("addmm", "the default stream", "train"), ("copy to the device", "stream 1", "prefetch")),
    # Only the schedules where the stream has not finished when the host polls it go wrong.
    ("poll_once", ("sum", "the default stream", "after poll"), ("mul", "stream 1", "polled")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("function", "later", "earlier"), RACES)
def test_the_same_program_without_its_wait_is_a_race_naming_both_sides(
    function: str, later: tuple[str, str, str], earlier: tuple[str, str, str], tmp_path: Path
) -> None:
    status, report = _check(function, tmp_path)
    assert status == 1
    bug = report["bugs"][0]
    assert bug["kind"] == "race", bug
    message = bug["message"]
    second, first = message.split(" that ", 1)
    assert f"{later[0]} on {later[1]}" in second and _line(later[2]) in second, message
    assert f"{earlier[0]} on " in first and earlier[1] in first and _line(earlier[2]) in first, message
    assert main(["replay", bug["trace"]], contained=False) == 1


@pytest.mark.slow
def test_a_new_stream_is_not_ordered_after_the_default_stream(tmp_path: Path) -> None:
    status, report = _check("never_waited_for_the_default_stream", tmp_path)
    assert status == 1
    bug = report["bugs"][0]
    assert bug["kind"] == "race"
    assert "add on stream 1" in bug["message"] and _line("unordered") in bug["message"]
    assert "the default stream" in bug["message"]


@pytest.mark.parametrize(
    ("function", "api"),
    [
        ("cuda_graph", "torch.cuda.CUDAGraph"),
        ("custom_kernel", "torch.utils.cpp_extension.load_inline (CUDA sources)"),
        ("external_stream", "torch.cuda.ExternalStream"),
        ("interprocess_event", "torch.cuda.Event(interprocess=True)"),
    ],
)
def test_what_the_virtual_device_cannot_run_is_refused(function: str, api: str, tmp_path: Path, capsys) -> None:
    status, report = _check(function, tmp_path, budget=3)
    assert status == 2
    assert f"{api} is not under control" in capsys.readouterr().err
    assert not (tmp_path / "out" / "bug-1.json").exists()


@pytest.mark.slow
def test_outside_the_ranks_torch_cuda_is_unchanged(tmp_path: Path) -> None:
    status, _ = _check("ddp_overlap", tmp_path, budget=2)
    assert status == 0
    assert torch.cuda.is_available() is False
    with pytest.raises(RuntimeError, match="requires CUDA support|dummy base class"):
        torch.cuda.Stream()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        torch.cuda.mem_get_info()


def test_polling_once_goes_wrong_only_in_the_schedules_where_the_stream_is_not_done() -> None:
    results = run_torch("../real_programs/cuda_streams.py:poll_once", seeds=range(16))
    outcomes = {result.bug.kind if result.bug is not None else "pass" for result in results}
    assert outcomes == {"pass", "race"}


@pytest.mark.slow
def test_a_race_is_a_rule_of_the_sarif_report_and_a_failure_of_the_junit_report(tmp_path: Path) -> None:
    sarif, junit = tmp_path / "report.sarif", tmp_path / "report.xml"
    status = main(
        ["check", f"{PROGRAMS}:host_read_without_synchronize", "--world-size", "2", "--budget", "3", "--no-minimize",
         "--out", str(tmp_path / "out"), "--sarif", str(sarif), "--junit", str(junit), "--quiet"],
        contained=False,
    )
    assert status == 1
    run = json.loads(sarif.read_text())["runs"][0]
    rules = {rule["id"]: rule["shortDescription"]["text"] for rule in run["tool"]["driver"]["rules"]}
    assert "two CUDA streams" in rules["race"]
    assert run["results"][0]["ruleId"] == "race"
    assert 'type="race"' in junit.read_text()
