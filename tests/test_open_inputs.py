"""Number inputs without a Range are explored: probes first, then mutation and solving."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.engine.input_probes import INT64_MAX, INT64_MIN, float_probes, int_probes
from dnsse.engine.inputs import OPEN_WIDTH, FloatDomain, IntDomain, is_open
from dnsse.frameworks.threads.framework import ThreadsFramework
from tests.helpers import PROGRAMS, load_program

OPEN = PROGRAMS / "open_inputs.py"


def check(tmp_path: Path, function: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{function}.json"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{OPEN}:{function}", "--out", str(tmp_path / "out"),
         "--json", str(report), *extra],
        capture_output=True, text=True, timeout=600,
    )
    return done, json.loads(report.read_text()) if report.exists() else {}


def test_an_int_without_a_range_is_every_int64_with_the_default_first() -> None:
    (tokens,) = ThreadsFramework().inputs(load_program("open_inputs_threads.py:bounded_batches"))
    assert isinstance(tokens.domain, IntDomain) and tokens.bounds is None
    assert (tokens.domain.low, tokens.domain.high) == (INT64_MIN, INT64_MAX)
    assert tokens.domain.value_of([0]) == 1500
    assert is_open(tokens.domain.widths()[0])


def test_a_float_without_a_range_holds_infinities_and_nan() -> None:
    domain = FloatDomain(1024.0, -math.inf, math.inf, nan=True)
    assert domain.widths() == [OPEN_WIDTH] and domain.value_of([0]) == 1024.0
    for value in (math.inf, -math.inf, 65504.0, 5e-324):
        assert domain.value_of(domain.index_of(value)) == value
    assert math.isnan(domain.value_of(domain.index_of(math.nan)))


def test_int_probes_start_with_the_defaults_neighbours_and_small_values_and_end_at_the_limits() -> None:
    probes = int_probes(32, INT64_MIN, INT64_MAX)
    assert probes[:6] == [33, 31, 0, 1, -1, 2]
    assert {16, 64, 1023, 1024, 1025, 2**31 - 1, INT64_MIN, INT64_MAX} <= set(probes)
    assert 32 not in probes and len(probes) == len(set(probes))
    assert set(int_probes(5, 0, 8)) == {0, 1, 2, 3, 4, 6, 7, 8}


def test_float_probes_hold_the_narrow_dtypes_limits_and_the_specials() -> None:
    probes = float_probes(1024.0, -math.inf, math.inf, nan=True)
    assert probes[:2] == [math.nextafter(1024.0, math.inf), math.nextafter(1024.0, -math.inf)]
    assert {0.0, 1.0, -1.0, 512.0, 2048.0, 65504.0, 65520.0, math.inf, -math.inf, 5e-324} <= set(probes)
    assert math.isnan(probes[-1])
    assert all(0.0 <= p <= 10.0 for p in float_probes(1.0, 0.0, 10.0, nan=False))


@pytest.mark.torch
def test_the_default_strategy_finds_an_uneven_token_split_in_an_unannotated_int(tmp_path: Path) -> None:
    done, report = check(tmp_path, "moe_gradient_sync", "--budget", "200", "--seed", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = report["bugs"]
    assert bug["kind"] in ("collective_mismatch", "deadlock")
    tokens = bug["inputs"]["tokens"]
    # Plain Python: on 2 ranks with 2 experts, a rank whose share is below 2 leaves an expert without tokens.
    shares = [tokens // 2 + (1 if rank < tokens % 2 else 0) for rank in range(2)]
    assert any(0 < share < 2 for share in shares) or shares[0] != shares[1] and min(shares) < 2


@pytest.mark.torch
def test_the_default_strategy_finds_a_float16_overflow_band_in_an_unannotated_float(tmp_path: Path) -> None:
    done, report = check(tmp_path, "scaled_gradient_sync", "--budget", "300", "--seed", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = report["bugs"]
    scale = bug["inputs"]["loss_scale"]
    import torch

    finite = [bool(torch.isfinite(torch.full((1,), 1.0 + rank, dtype=torch.float16) * scale).all()) for rank in range(2)]
    assert finite[0] != finite[1], f"loss_scale={scale} overflows on both ranks or neither"


@pytest.mark.torch
def test_schedule_strategies_keep_an_open_input_at_its_default(tmp_path: Path) -> None:
    done, report = check(tmp_path, "moe_gradient_sync", "--strategy", "random", "--budget", "30", "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["executions"] == 30


@pytest.mark.torch
def test_pinning_an_open_input_reaches_its_bug_with_any_strategy(tmp_path: Path) -> None:
    done, report = check(tmp_path, "moe_gradient_sync", "--strategy", "random", "--budget", "5", "--input", "tokens=3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert report["bugs"][0]["inputs"]["tokens"] == 3


THREADS = PROGRAMS / "open_inputs_threads.py"


def check_threads(tmp_path: Path, function: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{function}.json"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{THREADS}:{function}", "--out", str(tmp_path / "out"),
         "--json", str(report), *extra],
        capture_output=True, text=True, timeout=600,
    )
    return done, json.loads(report.read_text()) if report.exists() else {}


def test_a_rejected_input_is_counted_and_never_reported(tmp_path: Path) -> None:
    done, report = check_threads(tmp_path, "checked_batch", "--budget", "150", "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == [] and report["rejected"] > 0
    assert f"{report['rejected']} inputs rejected by the program" in done.stdout


def test_assume_rejects_an_input_that_passes_argument_checking(tmp_path: Path) -> None:
    done, _ = check_threads(tmp_path, "checked_batch", "--strategy", "random", "--budget", "3", "--input", "batch=7")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rejected every input it was given (3 executions): main: dnsse.assume() rejected the input" in done.stderr


def test_a_program_that_rejects_every_input_says_so_with_exit_2(tmp_path: Path) -> None:
    done, _ = check_threads(tmp_path, "rejects_everything", "--budget", "20", "--seed", "1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "rejected every input" in done.stderr and "size 3 is not supported" in done.stderr
    assert "Traceback" not in done.stderr


def test_assume_outside_a_run_is_an_assertion() -> None:
    import dnsse

    dnsse.assume(True)
    with pytest.raises(AssertionError, match="too small"):
        dnsse.assume(False, "too small")


@pytest.mark.parametrize("strategy, seed", [("hybrid", 1), ("fuzz", 2), ("fuzz", 3)])
def test_a_boundary_bug_is_reported_at_the_boundary_closest_to_the_default(tmp_path: Path, strategy: str, seed: int) -> None:
    done, report = check_threads(tmp_path, "bounded_batches", "--strategy", strategy, "--budget", "300", "--seed", str(seed))
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = report["bugs"]
    # Plain Python: the program fails exactly for tokens <= 1000, and 1000 is the failing value nearest 1500.
    assert bug["inputs"] == {"tokens": 1000}
    assert "inputs: tokens=1000" in done.stdout
    assert "1000 tokens fit one batch" in bug["message"]


def test_a_pinned_value_is_never_shrunk(tmp_path: Path) -> None:
    done, report = check_threads(tmp_path, "bounded_batches", "--strategy", "fuzz", "--budget", "1", "--input", "tokens=573")
    assert done.returncode == 1, done.stdout + done.stderr
    # A pinned input is the user's: it is never shrunk.
    assert report["bugs"][0]["inputs"] == {"tokens": 573}


@pytest.mark.slow
@pytest.mark.torch
def test_a_float_band_is_reported_at_its_integral_edge_nearest_the_default(tmp_path: Path) -> None:
    done, report = check(tmp_path, "scaled_gradient_sync", "--budget", "300", "--seed", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    import torch

    def rank_one_overflows_alone(scale: float) -> bool:
        return [bool(torch.isfinite(torch.full((1,), 1.0 + r, dtype=torch.float16) * scale).all()) for r in range(2)] == [True, False]

    scale = report["bugs"][0]["inputs"]["loss_scale"]
    assert scale.is_integer() and rank_one_overflows_alone(scale) and not rank_one_overflows_alone(scale - 1.0)


def test_simplicity_puts_integers_first_then_closeness_to_the_default_then_fewer_bits() -> None:
    from dnsse.search.shrink_inputs import simplicity

    assert simplicity(1000, 1500) < simplicity(573, 1500) < simplicity(0, 1500)
    assert simplicity(3.0, 1.0) < simplicity(1.5, 1.0) < simplicity(math.inf, 1.0)
    assert simplicity(math.nan, 1.0) == simplicity(math.inf, 1.0)


def test_one_failure_shown_with_other_values_is_the_same_failure() -> None:
    from dnsse.engine.bugs import Bug
    from dnsse.search.shrink_inputs import is_same_failure

    trace = 'Traceback:\n  File "p.py", line 14, in f\nAssertionError: {}'
    a = Bug("exception", "AssertionError: 573 tokens fit", [trace.format(573)])
    b = Bug("exception", "AssertionError: 1000 tokens fit", [trace.format(1000)])
    elsewhere = Bug("exception", "AssertionError: 1000 tokens fit", [trace.format(1000).replace("14", "15")])
    assert is_same_failure(a, b) and not is_same_failure(a, elsewhere)
    assert not is_same_failure(Bug("deadlock", "rank 0 waits"), Bug("collective_mismatch", "rank 0 waits"))


@pytest.mark.slow
def test_a_huge_count_of_work_is_rejected_not_reported_as_a_livelock(tmp_path: Path) -> None:
    done, report = check_threads(tmp_path, "counted_steps", "--strategy", "fuzz", "--budget", "150", "--seed", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == [] and report["inconclusive"] == []
    assert report["rejected"] >= 1


def test_worker_processes_count_rejections_and_say_when_all_were(tmp_path: Path) -> None:
    done, report = check_threads(tmp_path, "checked_batch", "--budget", "100", "--workers", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == [] and report["rejected"] > 0
    done, _ = check_threads(tmp_path, "rejects_everything", "--budget", "20", "--workers", "2")
    assert done.returncode == 2 and "rejected every input it was given (20 executions)" in done.stderr


def test_a_parameter_without_annotation_is_an_input_of_its_defaults_type(tmp_path: Path) -> None:
    (count,) = ThreadsFramework().inputs(load_program("open_inputs_threads.py:unannotated_pairs"))
    assert count.type is int and count.default == 10
    done, report = check_threads(tmp_path, "unannotated_pairs", "--budget", "100", "--seed", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    # Shrunk to an odd count next to the default (plain Python: only odd counts fail).
    assert report["bugs"][0]["inputs"]["count"] in (9, 11)
