"""The offline advisor's predictions, the hint gate, and the guided chooser that carries hints out."""

from __future__ import annotations

from dnsse.advisor.hints import OperationRef, OrderingHint, parse_hints
from dnsse.advisor.ledger import Ledger
from dnsse.advisor.offline import OfflineAdvisor
from dnsse.advisor.summary import RunSummary, Step
from dnsse.engine.choices import Chosen
from dnsse.engine.operation import Access, Operation
from dnsse.search.guided import GuidedChooser

LOAD = Step("reader", "attr.load", (("w.phase", "read"),), "app.py:30")
STORE_1 = Step("trainer", "attr.store", (("w.phase", "write"),), "app.py:20")
STORE_2 = Step("trainer", "attr.store", (("w.phase", "write"),), "app.py:21")


def _summary_of_one_run() -> RunSummary:
    summary = RunSummary()
    summary.observe([STORE_1, STORE_2, LOAD])
    return summary


def test_the_window_between_two_writes_is_predicted_first():
    hints = OfflineAdvisor().advise(_summary_of_one_run())
    assert hints[0].describe() == (
        "trainer's attr.store at app.py:20 before reader's attr.load at app.py:30 before trainer's attr.store at app.py:21"
    )


def test_an_order_seen_only_one_way_is_reversed():
    described = [hint.describe() for hint in OfflineAdvisor().advise(_summary_of_one_run())]
    assert "reader's attr.load at app.py:30 before trainer's attr.store at app.py:21" in described


def test_each_hint_is_proposed_once():
    advisor = OfflineAdvisor()
    summary = _summary_of_one_run()
    assert advisor.advise(summary)
    summary.observe([STORE_1, STORE_2, LOAD])
    assert advisor.advise(summary) == []


def test_independent_steps_give_no_ordering_hints():
    summary = RunSummary()
    summary.observe(
        [
            Step("a", "attr.store", (("x", "write"),), "app.py:1"),
            Step("b", "attr.store", (("y", "write"),), "app.py:2"),
            Step("a", "attr.load", (("y", "read"),), "app.py:3"),
        ]
    )
    summary.observe(
        [
            Step("b", "attr.store", (("y", "write"),), "app.py:2"),
            Step("a", "attr.store", (("x", "write"),), "app.py:1"),
            Step("a", "attr.load", (("y", "read"),), "app.py:3"),
        ]
    )
    # The only cross-agent dependency (b's write of y, a's read of y) was not
    # seen both ways yet: that one is worth reversing, nothing else is.
    described = [hint.describe() for hint in OfflineAdvisor().advise(summary)]
    assert described == ["a's attr.load at app.py:3 before b's attr.store at app.py:2"]


def test_hints_are_validated_against_what_ran():
    parsed = parse_hints(
        {
            "hints": [
                {"type": "ordering", "sequence": [{"agent": "reader"}, {"agent": "trainer", "operation": "rm"}]},
                {"type": "ordering", "sequence": [{"agent": "trainer"}, {"agent": "trainer"}]},
                {"type": "input", "name": "batch", "value": 3},
                {"type": "ordering", "sequence": [{"agent": "reader", "occurrence": 0}, {"agent": "trainer"}]},
                "not an object",
            ]
        },
        _summary_of_one_run(),
        "model",
    )
    assert parsed.hints == []
    assert len(parsed.discarded) == 5


def test_a_ledger_puts_shapes_that_paid_off_first():
    ledger = Ledger()
    window = OrderingHint((OperationRef("a"), OperationRef("b")), 0.5, reason="window: x")
    reverse = OrderingHint((OperationRef("b"), OperationRef("a")), 0.5, reason="reverse: x")
    ledger.record(window, useful=False)
    ledger.record(reverse, useful=True)
    assert ledger.priority(reverse) > ledger.priority(window)


def _offer(chooser: GuidedChooser, options: list[Chosen]) -> int:
    operations = [Operation(option.operation, (("w.phase", Access.WRITE),)) for option in options]
    return chooser.next_agent_seeing(list(range(len(options))), None, 0, operations, [], lambda i: options[i])


def test_the_guided_chooser_holds_back_later_operations_until_the_earlier_ran():
    hint = OrderingHint(
        (
            OperationRef("trainer", "attr.store", "app.py:20"),
            OperationRef("reader", "attr.load", "app.py:30"),
            OperationRef("trainer", "attr.store", "app.py:21"),
        ),
        0.9,
    )
    for seed in range(20):
        chooser = GuidedChooser(seed, ordering=hint)
        reader_waits = Chosen("reader", "attr.load", "app.py:30")
        # The reader is about to read, which the hint wants only after the first store.
        assert _offer(chooser, [reader_waits, Chosen("trainer", "attr.store", "app.py:20")]) == 1
        # Now the second store must wait for the reader.
        assert _offer(chooser, [Chosen("trainer", "attr.store", "app.py:21"), reader_waits]) == 1
        assert _offer(chooser, [Chosen("trainer", "attr.store", "app.py:21")]) == 0
        assert chooser.hint_held


def test_the_guided_chooser_follows_a_solved_schedule_while_the_run_fits_it():
    offered = [Chosen("reader", "attr.load", "app.py:30"), Chosen("trainer", "attr.store", "app.py:20")]
    operations = [Operation("attr.load", ()), Operation("attr.store", ())]
    free_picks = set()
    for seed in range(20):
        chooser = GuidedChooser(seed, schedule=[1, 0, 1, 1])
        assert chooser.next_agent_seeing([0, 1], None, 0, operations, [], offered.__getitem__) == 1
        history = [(1, operations[1])]
        assert chooser.next_agent_seeing([0, 1], None, 1, operations, history, offered.__getitem__) == 0
        # Agent 0 ran twice where the schedule planned once: from here on the choice is free
        # (its second step is another operation: repeating one read would be a spin, which yields).
        history += [(0, operations[0]), (0, operations[1])]
        free_picks.add(chooser.next_agent_seeing([0, 1], None, 3, operations, history, offered.__getitem__))
    assert free_picks == {0, 1}


def _busy_summary(agents: int = 6, steps: int = 12) -> RunSummary:
    """Agents that each write one object many times: windows and races by the thousand."""
    summary = RunSummary()
    run = [
        Step(f"worker {agent}", "attr.store", (("pool.state", "write"),), f"app.py:{10 * agent + step}")
        for step in range(steps)
        for agent in range(agents)
    ]
    summary.observe(run)
    return summary


def test_windows_stop_at_the_most_worth_listing(monkeypatch):
    from dnsse.advisor import offline

    compared = []
    real = Step.conflicts_with
    monkeypatch.setattr(Step, "conflicts_with", lambda self, other: compared.append(1) or real(self, other))
    windows = offline._windows(_busy_summary())
    assert len(windows) == offline.MAX_WINDOWS
    # The search ends with the last window listed, not after every one of the program's windows.
    assert len(compared) <= 2 * offline.MAX_WINDOWS


def test_a_race_already_reversed_is_not_made_into_a_hint_again(monkeypatch):
    from dnsse.advisor import offline

    advisor = OfflineAdvisor()
    summary = _busy_summary()
    first = advisor.advise(summary)
    assert any(hint.reason.startswith("reverse") for hint in first)
    made = []
    real = offline._ref
    monkeypatch.setattr(offline, "_ref", lambda step: made.append(step) or real(step))
    summary.observe([Step("worker 0", "attr.store", (("pool.state", "write"),), "app.py:0")])
    again = advisor.advise(summary)
    assert not any(hint.reason.startswith("reverse") for hint in again)
    # Only the windows are built anew (their search is bounded); no race's hint is.
    assert len(made) <= 3 * offline.MAX_WINDOWS
