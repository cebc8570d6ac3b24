"""The incremental monitor agrees, position by position, with the direct LTLf semantics."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dnsse.engine.execution import Event
from dnsse.spec.automaton import Automaton
from dnsse.spec.monitor import Monitor, Verdict
from dnsse.spec.parser import parse
from dnsse.spec.reference import holds
from dnsse.spec.syntax import Atom, Binary, Const, Formula, Unary

ATOMS = [Atom("a"), Atom("b"), Atom("c"), Atom("a", (("k", 1),))]

leaves = st.sampled_from(ATOMS + [Const(True), Const(False)])


def _extend(children: st.SearchStrategy[Formula], unary: list[str], binary: list[str]) -> st.SearchStrategy[Formula]:
    return st.one_of(
        st.builds(Unary, st.sampled_from(unary), children),
        st.builds(Binary, st.sampled_from(binary), children, children),
    )


past_formulas = st.recursive(
    leaves, lambda inner: _extend(inner, ["!", "Y", "O", "H"], ["&", "|", "->", "<->", "S"]), max_leaves=5
)
formulas = st.recursive(
    st.one_of(leaves, past_formulas),
    lambda inner: _extend(inner, ["!", "X", "F", "G"], ["&", "|", "->", "<->", "U", "R", "W"]),
    max_leaves=7,
)
events = st.builds(
    lambda name, k: Event(0, "agent", name, {"k": k}), st.sampled_from(["a", "b", "c"]), st.sampled_from([0, 1])
)
traces = st.lists(st.lists(events, max_size=3), max_size=7)


def verdicts(formula: Formula, trace: list[list[Event]]) -> tuple[list[bool], list[Verdict]]:
    """After each prefix (the empty one too): the finished-trace verdict and the bad-prefix verdict."""
    monitor = Monitor(Automaton(formula))
    ended, decided = [monitor.holds_if_ended()], [monitor.verdict]
    for position in trace:
        decided.append(monitor.step(position))
        ended.append(monitor.holds_if_ended())
    return ended, decided


@settings(max_examples=250, deadline=None)
@given(formulas, traces)
def test_finished_trace_verdict_matches_the_semantics_after_every_position(formula: Formula, trace: list) -> None:
    ended, _ = verdicts(formula, trace)
    assert ended == [holds(formula, trace[:k]) for k in range(len(trace) + 1)]


@settings(max_examples=200, deadline=None)
@given(formulas, traces, traces)
def test_a_decided_verdict_holds_for_every_continuation(formula: Formula, trace: list, other: list) -> None:
    _, decided = verdicts(formula, trace)
    for k, verdict in enumerate(decided):
        if verdict is Verdict.PENDING:
            continue
        expected = verdict is Verdict.SATISFIED
        assert all(decided[j] is verdict for j in range(k, len(decided))), "a verdict, once reached, stays"
        for j in range(k, len(trace) + 1):
            assert holds(formula, trace[:j]) is expected
        assert holds(formula, trace[:k] + other) is expected


@settings(max_examples=200, deadline=None)
@given(past_formulas, traces)
def test_an_invariant_is_violated_exactly_at_the_first_bad_position(invariant: Formula, trace: list) -> None:
    formula = Unary("G", invariant)
    _, decided = verdicts(formula, trace)
    first_bad = next((i for i in range(len(trace)) if not holds(invariant, trace, i)), None)
    if first_bad is None:
        assert Verdict.VIOLATED not in decided
    else:
        assert decided.index(Verdict.VIOLATED) == first_bad + 1


@settings(max_examples=150, deadline=None)
@given(formulas)
def test_printing_then_parsing_gives_the_same_formula(formula: Formula) -> None:
    assert parse(str(formula)) == formula


def test_the_automaton_is_shared_and_stays_small_across_runs() -> None:
    automaton = Automaton(parse("G (a -> F b) & G (c -> Y a)"))
    for offset in range(50):
        monitor = Monitor(automaton)
        for i in range(20):
            monitor.step([Event(0, "x", "a" if (i + offset) % 3 else "b", {})])
    assert len(automaton.transitions) < 40


def test_violations_of_a_response_property_are_reported_only_at_the_end() -> None:
    monitor = Monitor(Automaton(parse("G (req -> F ack)")))
    assert monitor.step([Event(0, "x", "req", {})]) is Verdict.PENDING
    assert monitor.step([]) is Verdict.PENDING
    assert not monitor.holds_if_ended()
    assert monitor.unmet() == "F ack"
    monitor.step([Event(0, "x", "ack", {})])
    assert monitor.holds_if_ended()


def test_field_tests_compare_by_equality_and_bools_are_not_numbers() -> None:
    def matches(fields: dict) -> bool:
        monitor = Monitor(Automaton(parse("push(worker=2, name=w, ok=true)")))
        return monitor.step([Event(0, "x", "push", fields)]) is Verdict.SATISFIED

    assert matches({"worker": 2, "name": "w", "ok": True, "other": 5})
    assert not matches({"worker": 2, "name": "w", "ok": 1})
    assert not matches({"worker": 3, "name": "w", "ok": True})
    assert not matches({"name": "w", "ok": True})
