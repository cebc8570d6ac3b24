"""The import graph of dnsse's own modules, and the circles in it.

A circle of imports means no file of it can be read, tested or replaced on its
own: each needs all the others loaded first, and which one Python finishes
first depends on who imported the circle. The graph built here holds the
imports that run when a module loads:

- every import at module level (also inside a module-level ``if``/``try`` or a
  class body), except those under ``if TYPE_CHECKING:``, which never run;
- every import inside a function that has no comment saying why it is there.
  A lazy import with a comment on its line, or on the line just before it (or
  before the run of import lines it belongs to), is a deliberate break of a
  dependency and is left out.

``python tests/import_graph.py`` prints the circles (strongly connected
components of two or more modules) with the imports that make them;
``--with-type-checking`` adds the imports made only for annotations and
``--every-lazy-import`` the commented lazy ones too.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

SOURCE_ROOT = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "dnsse"


@dataclass(frozen=True)
class ImportEdge:
    """One module importing another, and where (for a message a reader can follow)."""

    importer: str
    imported: str
    line: int
    lazy: bool
    # For a lazy import: whether a comment on or just above it says why.
    explained: bool = False
    # Made under ``if TYPE_CHECKING:``: for annotations only, never run.
    for_annotations: bool = False


def module_files(source_root: Path = SOURCE_ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` under ``source_root``, by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for path in sorted((source_root / package).rglob("*.py")):
        parts = list(path.relative_to(source_root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking_test(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _has_reason_comment(lines: list[str], lineno: int, import_lines: set[int]) -> bool:
    """Whether the import on ``lineno`` (1-based) says why it is lazy.

    A comment on its line, or on the line just above it or above the run of
    imports it ends (one comment may explain two lines that load together).
    """
    if "#" in lines[lineno - 1]:
        return True
    above = lineno - 1
    while above in import_lines:
        above -= 1
    return above >= 1 and lines[above - 1].lstrip().startswith("#")


def _absolute_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    # A relative import counts from the importing module's package.
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    base_parts = package_parts[: len(package_parts) - (node.level - 1)]
    if node.module:
        base_parts.append(node.module)
    return ".".join(base_parts)


def _deepest_known(name: str, known: set[str]) -> str | None:
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def _imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    targets: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            found = _deepest_known(alias.name, known)
            if found is not None:
                targets.add(found)
        return targets
    base = _absolute_base(module, is_package, node)
    for alias in node.names:
        # ``from pkg import name`` loads the submodule pkg.name when there is one, else pkg itself.
        submodule = f"{base}.{alias.name}"
        found = submodule if submodule in known else _deepest_known(base, known)
        if found is not None:
            targets.add(found)
    return targets


class _ImportCollector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, lines: list[str], known: set[str]) -> None:
        self.module = module
        self.is_package = is_package
        self.lines = lines
        self.known = known
        self.function_depth = 0
        self.type_checking_depth = 0
        self.edges: list[ImportEdge] = []
        # Every line that belongs to an import statement: a run of them shares the comment above it.
        self.import_lines: set[int] = set()

    def visit_Module(self, node: ast.Module) -> None:
        for statement in ast.walk(node):
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                self.import_lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking_test(node.test):
            self.generic_visit(node)
            return
        self.type_checking_depth += 1
        for statement in node.body:
            self.visit(statement)
        self.type_checking_depth -= 1
        for statement in node.orelse:
            self.visit(statement)

    def _visit_function(self, node: ast.AST) -> None:
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function
    visit_Lambda = _visit_function

    def _visit_import(self, node: ast.Import | ast.ImportFrom) -> None:
        lazy = self.function_depth > 0
        explained = lazy and _has_reason_comment(self.lines, node.lineno, self.import_lines)
        for_annotations = self.type_checking_depth > 0
        for imported in _imported_modules(node, self.module, self.is_package, self.known):
            if imported != self.module:
                self.edges.append(ImportEdge(self.module, imported, node.lineno, lazy, explained, for_annotations))

    visit_Import = _visit_import
    visit_ImportFrom = _visit_import


@functools.lru_cache(maxsize=None)
def _every_import(source_root: Path, package: str) -> tuple[ImportEdge, ...]:
    files = module_files(source_root, package)
    known = set(files)
    edges: list[ImportEdge] = []
    for module, path in files.items():
        text = path.read_text(encoding="utf-8")
        collector = _ImportCollector(module, path.name == "__init__.py", text.splitlines(), known)
        collector.visit(ast.parse(text, filename=str(path)))
        edges.extend(collector.edges)
    return tuple(edges)


def import_edges(
    source_root: Path = SOURCE_ROOT,
    package: str = PACKAGE,
    with_type_checking: bool = False,
    lazy_with_reason: bool = False,
) -> tuple[ImportEdge, ...]:
    """The imports between ``package``'s own modules that run when a module loads (see the module doc).

    ``with_type_checking`` adds the imports made only for annotations: a circle through them
    does not fail at run time, but it still means neither module can be understood alone.
    ``lazy_with_reason`` adds the lazy imports that a comment explains as well: the strictest view.
    """
    return tuple(
        edge
        for edge in _every_import(source_root, package)
        if (with_type_checking or not edge.for_annotations) and (lazy_with_reason or not edge.explained)
    )


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, without recursion (a long chain of imports must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def import_circles(edges: Iterable[ImportEdge]) -> list[list[str]]:
    """The circles of the graph: components of two or more modules, largest first."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.importer, set()).add(edge.imported)
        graph.setdefault(edge.imported, set())
    circles = [component for component in strongly_connected_components(graph) if len(component) > 1]
    return sorted(circles, key=lambda component: (-len(component), component))


def describe_circle(circle: list[str], edges: Iterable[ImportEdge]) -> str:
    """The circle's modules and the imports inside it, each with its line, so a reader sees what to cut."""
    members = set(circle)
    inside = sorted(
        {
            (edge.importer, edge.imported, edge.line, edge.lazy, edge.explained)
            for edge in edges
            if edge.importer in members and edge.imported in members
        }
    )
    lines = [f"{len(circle)} modules: {', '.join(circle)}"]
    for importer, imported, line, lazy, explained in inside:
        how = "" if not lazy else " (in a function, with its reason)" if explained else " (in a function, no comment saying why)"
        lines.append(f"    {importer}:{line} imports {imported}{how}")
    return "\n".join(lines)


def main(arguments: list[str]) -> int:
    edges = import_edges(
        with_type_checking="--with-type-checking" in arguments, lazy_with_reason="--every-lazy-import" in arguments
    )
    circles = import_circles(edges)
    for circle in circles:
        print(describe_circle(circle, edges))
    print(f"{len(circles)} circle(s)")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
