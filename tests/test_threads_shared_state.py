"""Which accesses of a threaded program are scheduling points, and what each step names.

Each test runs a small program under control with the first choice always
taken and reads the steps of the execution: every access to shared data is a
step of its own that names the very object it touches.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from dnsse.engine.choices import FirstChooser
from dnsse.engine.operation import Access
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework

PROGRAMS = Path(__file__).parent / "programs"


def run_source(tmp_path: Path, source: str, function: str = "main") -> ExecutionResult:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    framework = ThreadsFramework()
    with framework.activate():
        target = LoadedTarget(TargetSpec.parse(f"{path}:{function}"))
        return run_execution(target, framework, FirstChooser())


def steps_at(result: ExecutionResult, line: int) -> list[tuple[str, dict[str, Access]]]:
    """(kind, {object: access}) of each step announced at ``prog.py:LINE``."""
    return [(op.kind, dict(op.objects)) for _, op in result.history if op.detail == f"prog.py:{line}"]


def test_an_augmented_attribute_assignment_loads_and_stores_one_attribute_of_one_object(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        class Counter:
            def __init__(self):
                self.count = 0
            def bump(self):
                self.count += 1
        def main():
            Counter().bump()
        """,
    )
    (load_kind, load), (store_kind, store) = steps_at(result, 6)
    assert (load_kind, store_kind) == ("attr.load", "attr.store")
    [name] = [n for n in load if n.endswith(".count")]
    assert load[name] is Access.READ and store[name] is Access.WRITE


def test_one_attribute_name_on_two_objects_is_two_objects(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        class Box:
            def __init__(self):
                self.x = 0
        def main():
            a, b = Box(), Box()
            a.x = 1
            b.x = 2
        """,
    )
    [(_, first)], [(_, second)] = steps_at(result, 7), steps_at(result, 8)
    assert not {n for n in first if n.endswith(".x")} & {n for n in second if n.endswith(".x")}


def test_globals_no_function_rebinds_are_not_points(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        LIMIT = 3
        def helper():
            pass
        def main():
            helper()
            return LIMIT * 2
        """,
    )
    assert steps_at(result, 6) == [] and steps_at(result, 7) == []


def test_a_rebound_global_is_read_and_written_at_points(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        total = 0
        def main():
            global total
            total += 1
        """,
    )
    assert steps_at(result, 5) == [
        ("global.load", {"global:total": Access.READ}),
        ("global.store", {"global:total": Access.WRITE}),
    ]


def test_membership_length_get_and_iteration_read_the_dict(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        def main():
            cache = {"a": 1}
            cache["b"] = 2
            found = "model" in cache
            size = len(cache)
            value = cache.get("a")
            for key in cache:
                pass
            ordered = sorted(cache.items())
        """,
    )
    [(_, store)] = steps_at(result, 4)
    [dict_name] = store
    assert store[dict_name] is Access.WRITE
    for line in (5, 6, 7):
        assert [objects for _, objects in steps_at(result, line)] == [{dict_name: Access.READ}], line
    # cache.items(), then sorted() of the view: both read the dict behind it.
    assert [objects for _, objects in steps_at(result, 10)] == [{dict_name: Access.READ}] * 2
    iteration = steps_at(result, 8)
    assert len(iteration) == 4  # GET_ITER, then FOR_ITER once per key and once at the end
    assert all(objects == {dict_name: Access.READ} for _, objects in iteration)


def test_an_append_through_a_local_alias_writes_the_list_the_attribute_holds(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        class Shared:
            def __init__(self):
                self.items = []
        def main():
            shared = Shared()
            items = shared.items
            items.append(1)
            shared.items.append(2)
        """,
    )
    [(_, first)], [(_, second)] = steps_at(result, 8), steps_at(result, 9)
    assert first == second and list(first.values()) == [Access.WRITE]


def test_setattr_writes_the_attribute_that_a_load_reads(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        class Shared:
            def __init__(self):
                self.ready = False
        def main():
            shared = Shared()
            setattr(shared, "ready", True)
            assert shared.ready
        """,
    )
    [(_, written)], [(_, read)] = steps_at(result, 7), steps_at(result, 8)
    [name] = [n for n in written if n.endswith(".ready")]
    assert written[name] is Access.WRITE and read[name] is Access.READ


def test_calls_on_immutable_values_are_not_points(tmp_path: Path) -> None:
    result = run_source(tmp_path, 'def main(xs=("a", "b")):\n    return ", ".join(xs) + str(len(xs))\n')
    assert steps_at(result, 2) == []


def test_passing_a_program_object_to_untraced_library_code_is_reported_as_unseen(tmp_path: Path) -> None:
    result = run_source(
        tmp_path,
        """
        import copy
        class Shared:
            def __init__(self):
                self.items = []
        def main():
            copy.deepcopy(Shared())
        """,
    )
    assert result.untrusted is not None
    assert "prog.py:7" in result.untrusted and "Shared" in result.untrusted and "deepcopy" in result.untrusted


def test_a_program_that_only_uses_builtins_on_its_data_is_trusted(tmp_path: Path) -> None:
    result = run_source(tmp_path, "def main():\n    xs = [3, 1]\n    xs.sort()\n    return sorted(xs)\n")
    assert result.untrusted is None


def test_module_attributes_locks_and_python_methods_are_not_points() -> None:
    framework = ThreadsFramework()
    with framework.activate():
        target = LoadedTarget(TargetSpec.parse(f"{PROGRAMS / 'threads_points.py'}:main"))
        result = run_execution(target, framework, FirstChooser())
    assert result.bug is None
    touched = [(op.kind, name) for _, op in result.history for name, _ in op.objects]
    assert any(kind == "attr.load" and name.endswith(".value") for kind, name in touched)
    assert any(kind == "attr.store" and name.endswith(".value") for kind, name in touched)
    loads = [name for kind, name in touched if kind == "attr.load"]
    assert not [name for name in loads if name.split(".")[-1] in ("pi", "floor", "lock", "grow")]


def test_objects_are_named_in_order_of_first_use_alike_in_every_execution(tmp_path: Path) -> None:
    source = """
        class Box:
            def __init__(self):
                self.x = 0
        def main():
            a, b = Box(), Box()
            b.x = 1
            a.x = 2
        """
    first, second = run_source(tmp_path, source), run_source(tmp_path, source)
    assert [op.objects for _, op in first.history] == [op.objects for _, op in second.history]
    assert {n for _, objects in steps_at(first, 7) for n in objects} == {"o2", "o2.x"}
