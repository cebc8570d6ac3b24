"""Which opcodes of the program are scheduling points."""

from __future__ import annotations

import textwrap
import types
from pathlib import Path
from typing import Iterator

from dnsse.engine.choices import FirstChooser
from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework
from dnsse.frameworks.threads.shared_state import SharedStatePlan

PROGRAMS = Path(__file__).parent / "programs"


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _codes(constant)


def points_of(source: str, function: str) -> list[tuple[str, tuple[str, ...]]]:
    module = compile(textwrap.dedent(source), "prog.py", "exec")
    plan = SharedStatePlan(module)
    code = next(c for c in _codes(module) if c.co_name == function)
    table = plan.tables.get(id(code), {})
    return [(p.operation.kind, tuple(name for name, _ in p.operation.objects)) for _, p in sorted(table.items())]


def test_an_augmented_attribute_assignment_has_a_load_and_a_store() -> None:
    source = """
        def bump(self):
            self.count += 1
        """
    assert points_of(source, "bump") == [("attr.load", ("attr:count",)), ("attr.store", ("attr:count",))]


def test_globals_no_function_rebinds_are_not_points() -> None:
    source = """
        LIMIT = 3
        def helper():
            pass
        def work(xs):
            helper()
            return len(xs) * LIMIT
        """
    assert points_of(source, "work") == []


def test_a_rebound_global_is_read_and_written_at_points() -> None:
    source = """
        total = 0
        def bump():
            global total
            total += 1
        """
    assert points_of(source, "bump") == [("global.load", ("global:total",)), ("global.store", ("global:total",))]


def test_subscripts_and_method_calls_touch_items() -> None:
    source = """
        def take(pool, taken):
            taken.append(pool["x"])
        """
    assert points_of(source, "take") == [("method.call", ("item",)), ("item.load", ("item",))]


def test_method_call_on_an_attribute_names_the_attribute() -> None:
    source = """
        def push(self, x):
            self.items.append(x)
        """
    assert points_of(source, "push") == [("attr.load", ("attr:items",)), ("method.call", ("attr:items", "item"))]


def test_calls_on_constants_are_not_points() -> None:
    assert points_of('def f(xs):\n    return ", ".join(xs)\n', "f") == []


def test_module_attributes_locks_and_python_methods_are_not_points_at_run_time() -> None:
    framework = ThreadsFramework()
    with framework.activate():
        target = LoadedTarget(TargetSpec.parse(f"{PROGRAMS / 'threads_points.py'}:main"))
        result = run_execution(target, framework, FirstChooser())
    assert result.bug is None
    touched = [(op.kind, op.objects[0][0]) for _, op in result.history if op.objects]
    assert ("attr.load", "attr:value") in touched
    assert ("attr.store", "attr:value") in touched
    loads = {name for kind, name in touched if kind in ("attr.load", "method.call")}
    assert not loads & {"attr:pi", "attr:floor", "attr:lock", "attr:grow"}
