"""dnsse's modules import each other in layers, never in a circle.

A circle is allowed only as a deliberate lazy import inside a function with a
comment saying why (tests/import_graph.py says exactly what counts).
"""

from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path

from import_graph import ImportEdge, import_circles, import_edges, module_files, strongly_connected_components

# The packages in the order they import each other (DESIGN's layout, the README's map): a file
# imports only from its own package and those before it, never from one after it.
LAYERS = (
    ("dnsse.errors", "dnsse.suggest", "dnsse.exit_codes", "dnsse.validation"),
    ("dnsse.engine",),
    ("dnsse.coverage", "dnsse.symbolic", "dnsse.spec"),
    ("dnsse.frameworks",),
    ("dnsse.advisor",),
    ("dnsse.search",),
    ("dnsse.campaign",),
    ("dnsse.report",),
)

# Packages whose layers hold even for the imports made only for annotations: their lower files
# know the higher ones through small protocols, not through back-references.
STRICTLY_LAYERED = ("dnsse.engine", "dnsse.advisor")
RAY = "dnsse.frameworks.ray"
RAY_MODULE = "dnsse.frameworks.ray.api"
# The one file that may import the ``ray`` module: it installs it in sys.modules as ``ray``.
RAY_MODULE_INSTALLER = "dnsse.frameworks.ray.modules"


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def _edges_among(edges: tuple[ImportEdge, ...], keep: tuple[str, ...]) -> list[ImportEdge]:
    return [edge for edge in edges if _within(edge.importer, keep) and _within(edge.imported, keep)]


def _describe(circles: list[list[str]]) -> str:
    return "\n".join("circle of " + ", ".join(circle) for circle in circles)


def test_no_module_is_in_an_import_circle() -> None:
    circles = import_circles(import_edges())

    assert circles == [], f"import circles (run `python tests/import_graph.py` for the lines):\n{_describe(circles)}"


def test_search_campaign_and_report_import_only_the_packages_below_them() -> None:
    # What to try (search) knows nothing of how executions run (campaign), which knows nothing of how
    # they are shown (report): lazy imports and annotations included.
    every_import = import_edges(with_type_checking=True, lazy_with_reason=True)
    ordered = ("dnsse.search", "dnsse.campaign", "dnsse.report")

    def rank(module: str) -> int | None:
        for position, packages in enumerate(LAYERS):
            if _within(module, packages):
                return position
        return None

    upward = [
        f"{edge.importer} imports {edge.imported}"
        for edge in every_import
        if _within(edge.importer, ordered)
        and rank(edge.imported) is not None
        and rank(edge.importer) is not None
        and rank(edge.imported) > rank(edge.importer)  # type: ignore[operator]
    ]

    assert upward == []


def test_engine_and_advisor_have_no_circle_even_through_annotations() -> None:
    every_import = import_edges(with_type_checking=True)

    for package in STRICTLY_LAYERED:
        circles = import_circles(_edges_among(every_import, keep=(package,)))
        assert circles == [], f"{package} is not layered:\n{_describe(circles)}"


def test_the_ray_module_a_target_imports_is_imported_by_no_part_of_the_ray_runtime() -> None:
    # ``import ray`` in a target gets dnsse.frameworks.ray.api: it sits on top of the runtime,
    # so the runtime never depends on the public surface, not even lazily or for annotations.
    every_import = import_edges(with_type_checking=True, lazy_with_reason=True)

    importers = {edge.importer for edge in every_import if edge.imported == RAY_MODULE}

    assert sorted(module for module in importers if _within(module, (RAY,))) == [RAY_MODULE_INSTALLER]


def test_the_ray_module_a_target_imports_only_gathers_names_from_the_runtime() -> None:
    tree = ast.parse(module_files()[RAY_MODULE].read_text(encoding="utf-8"))

    own_definitions = [
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]

    assert own_definitions == []
    assert all(name in vars(importlib.import_module(RAY_MODULE)) for name in importlib.import_module(RAY_MODULE).__all__)


def test_the_ray_runtime_has_no_circle_but_its_explained_lazy_imports() -> None:
    circles = import_circles(_edges_among(import_edges(), keep=(RAY,)))

    assert circles == [], f"{RAY} is not layered:\n{_describe(circles)}"


def test_every_module_in_a_reported_circle_reaches_every_other_and_none_outside_does() -> None:
    # Checks the component algorithm against plain reachability on the real graph.
    edges = import_edges(with_type_checking=True, lazy_with_reason=True)
    graph: dict[str, set[str]] = {module: set() for module in module_files()}
    for edge in edges:
        graph[edge.importer].add(edge.imported)

    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        frontier = list(graph[start])
        while frontier:
            module = frontier.pop()
            if module not in seen:
                seen.add(module)
                frontier.extend(graph[module])
        return seen

    reach = {module: reachable(module) for module in graph}
    expected = sorted(
        {
            tuple(sorted({module} | {other for other in reach[module] if module in reach[other]}))
            for module in graph
            if any(module in reach[other] for other in reach[module])
        },
        key=lambda circle: (-len(circle), circle),
    )

    assert [tuple(circle) for circle in import_circles(edges)] == expected
    assert sum(len(component) for component in strongly_connected_components(graph)) == len(graph)


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_an_import_at_module_level_makes_a_circle(tmp_path: Path) -> None:
    root = _write_package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "from pkg import high\n",
            "high.py": "from . import low\n",
        },
    )

    assert import_circles(import_edges(root, "pkg")) == [["pkg.high", "pkg.low"]]


def test_an_import_for_annotations_only_makes_no_circle_unless_asked(tmp_path: Path) -> None:
    root = _write_package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import High\n",
            "high.py": "import pkg.low\n",
        },
    )

    assert import_circles(import_edges(root, "pkg")) == []
    assert import_circles(import_edges(root, "pkg", with_type_checking=True)) == [["pkg.high", "pkg.low"]]


def test_a_lazy_import_makes_a_circle_unless_a_comment_says_why(tmp_path: Path) -> None:
    uncommented = "def later():\n    from pkg import high\n"
    commented = "def later():\n    # high is built on low: loaded on first use.\n    from pkg import high\n"
    high = "from pkg.low import later\n"

    without_reason = _write_package(tmp_path / "a", {"__init__.py": "", "low.py": uncommented, "high.py": high})
    with_reason = _write_package(tmp_path / "b", {"__init__.py": "", "low.py": commented, "high.py": high})

    circle = [["pkg.high", "pkg.low"]]
    assert import_circles(import_edges(without_reason, "pkg")) == circle
    assert import_circles(import_edges(with_reason, "pkg")) == []
    assert import_circles(import_edges(with_reason, "pkg", lazy_with_reason=True)) == circle


def test_one_comment_explains_a_run_of_lazy_imports_but_not_one_after_other_code(tmp_path: Path) -> None:
    run = "def later():\n    # a and b are built on low: loaded on first use.\n    from pkg import a\n    from pkg import b\n"
    broken_run = "def later():\n    # a is built on low: loaded on first use.\n    from pkg import a\n    x = 1\n    from pkg import b\n"
    uppers = {"a.py": "import pkg.low\n", "b.py": "import pkg.low\n"}

    explained = _write_package(tmp_path / "a", {"__init__.py": "", "low.py": run, **uppers})
    half_explained = _write_package(tmp_path / "b", {"__init__.py": "", "low.py": broken_run, **uppers})

    assert import_circles(import_edges(explained, "pkg")) == []
    assert import_circles(import_edges(half_explained, "pkg")) == [["pkg.b", "pkg.low"]]
