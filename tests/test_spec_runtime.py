"""Specifications checked during real torch and threads executions."""

from __future__ import annotations

from helpers import SeededChooser, load_program

from dnsse.engine.bugs import BugKind
from dnsse.engine.execution import Limits
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.frameworks.base import framework_named
from dnsse.spec import load_suite


def run(spec: str, specs: list[str], seeds=range(20), limits: Limits = Limits()) -> list[ExecutionResult]:
    target = load_program(spec)
    framework = framework_named(target.framework, 2)
    suite = load_suite(specs)
    with framework.activate():
        return [run_execution(target, framework, SeededChooser(s), limits, monitors=[suite]) for s in seeds]


def test_a_schedule_dependent_violation_is_found_in_some_runs_only():
    results = run("spec_threads.py:serve_and_train", ["G (serve -> O train)"], seeds=range(30))
    violations = [r for r in results if r.bug is not None]
    assert violations and len(violations) < len(results)
    bug = violations[0].bug
    assert bug.kind == BugKind.SPEC_VIOLATION
    assert bug.message == "G (serve -> O train) is violated"
    serve = next(e for e in violations[0].events if e.name == "serve")
    assert bug.step == serve.step
    assert any(line.endswith(": serve(version=0)") for line in bug.details)


def test_a_violated_safety_property_stops_the_execution_at_the_bad_step():
    (result,) = run("spec_threads.py:serve_and_train", ["G !lock.acquire"], seeds=[0])
    first_acquire = next(e for e in result.events if e.name == "lock.acquire")
    assert result.bug.step == first_acquire.step
    assert result.steps == first_acquire.step + 1  # no agent moved after the deciding step
    assert max(event.step for event in result.events) == first_acquire.step


def test_a_property_that_holds_in_every_schedule_reports_nothing():
    results = run("spec_threads.py:serve_and_train", ["G (serve(version=1) -> O train(version=1))"])
    assert all(r.bug is None for r in results)


def test_a_response_property_is_judged_at_the_end_of_a_finished_run():
    holds = run("spec_threads.py:requests_answered", ["G (req -> F ack)"], seeds=range(10))
    assert all(r.bug is None for r in holds)
    (fails,) = run("spec_threads.py:requests_answered", ["G (req -> F nack)"], seeds=[0])
    assert fails.bug.message == "G (req -> F nack) is violated when the run ended"
    assert "the run ended while the formula still required: F nack" in fails.bug.details


def test_a_run_cut_off_by_a_limit_reports_only_a_decided_violation():
    limits = Limits(max_steps=300)
    (undecided,) = run("spec_threads.py:spins", ["F done"], seeds=[0], limits=limits)
    assert undecided.bug.kind == BugKind.TIMEOUT
    (decided,) = run("spec_threads.py:spins", ["G !tick(n=20)"], seeds=[0], limits=limits)
    assert decided.bug.kind == BugKind.SPEC_VIOLATION
    assert decided.bug.details[-1].endswith("tick(n=20)")


def test_torch_runtime_events_carry_their_fields():
    specs = [
        # A collective completes on a rank only after every rank issued it.
        "G (collective.done(rank=0, seq=1) -> O collective.issue(rank=1, seq=1))",
        "G (recv(src=0, dst=1) -> O send(src=0, dst=1))",
        "F (wait(op=all_reduce, rank=0) & O collective.done(op=all_reduce, rank=0, seq=2))",
    ]
    results = run("spec_torch.py:exchange", specs, seeds=range(10))
    assert all(r.bug is None for r in results), [r.bug.render() for r in results if r.bug]


def test_a_torch_spec_violated_under_some_schedules():
    results = run("spec_torch.py:exchange", ["!collective.issue(rank=1) U collective.issue(rank=0)"], seeds=range(20))
    kinds = {r.bug.kind if r.bug else None for r in results}
    assert kinds == {None, BugKind.SPEC_VIOLATION}


def test_replicas_equal_passes_when_replicas_agree_and_names_the_diverging_one():
    spec = "builtin:replicas_equal(after=step_done, field=checksum)"
    assert all(r.bug is None for r in run("spec_torch.py:replicas_agree", [spec], seeds=range(5)))
    for result in run("spec_torch.py:replicas_diverge", [spec], seeds=range(5)):
        assert result.bug.kind == BugKind.SPEC_VIOLATION
        assert any("3rd step_done of rank" in line and "checksum=" in line for line in result.bug.details)


def test_replicas_equal_can_match_replicas_by_a_key_field():
    spec = "builtin:replicas_equal(after=step_done, field=checksum, key=step)"
    (result,) = run("spec_torch.py:replicas_diverge", [spec], seeds=[0])
    assert any("step_done with step=2" in line for line in result.bug.details)


def test_engine_checked_builtins_add_no_monitor():
    (result,) = run("spec_threads.py:serve_and_train", ["builtin:deadlock_free", "builtin:terminates"], seeds=[0])
    assert result.bug is None


def test_ray_task_and_actor_events_carry_their_fields():
    specs = [
        "G (task.end(task=square) -> O task.start(task=square))",
        'G (actor.call.end(actor="Counter#1", method=add) -> O actor.call.start(actor="Counter#1", method=add))',
        'F actor.call.end(actor="Counter#1") & F ray.get(refs=2)',
    ]
    results = run("spec_ray.py:main", specs, seeds=range(10))
    assert all(r.bug is None for r in results), [r.bug.render() for r in results if r.bug]


def test_a_ray_spec_violated_under_some_schedules():
    both_squares_first = "!actor.call.start U (task.end & X (!actor.call.start U task.end))"
    results = run("spec_ray.py:main", [both_squares_first], seeds=range(20))
    assert {r.bug.kind if r.bug else None for r in results} == {None, BugKind.SPEC_VIOLATION}
