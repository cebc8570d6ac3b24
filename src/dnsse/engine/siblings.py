"""The target's own modules: files next to it, importable as with ``python FILE.py``.

``python train.py`` puts the script's directory first on ``sys.path``, so
``import helper`` finds ``helper.py`` beside it. Under dnsse those modules are
part of the program under test, like the target itself:

- Fresh in every copy of the target: each copy (one per execution, one per
  rank of a torch program) imports its own ``helper``, whose globals start
  over, so no execution inherits what another one left in them. The source is
  compiled once per campaign.
- Found before anything installed, as the script's directory is on
  ``sys.path[0]``, and without touching ``sys.path``: every copy gets an
  ``__import__`` of its own (through its ``__builtins__``), which knows its
  copies of the sibling modules and hands every other import on.
- A ``builtins`` of its own: ``import builtins`` in a copy's code gives a
  module whose namespace is that copy's ``__builtins__``. A program that
  replaces a builtin (torchvision's ``setup_for_distributed`` silences
  ``print`` on every rank but the first) changes it for its own copy, as
  each process of a real job has its own, and neither for the other ranks,
  nor for the next execution, nor for dnsse's own report.
- Traced like the target: their code is the program's (see
  :mod:`dnsse.frameworks.threads.shared_state`), and the files the target
  imports are among its source files, where reports locate agents.

A sibling module's ``__name__`` is ``<copy>.helper`` (registered in
``sys.modules`` while its copy lives), so classes defined there pickle and
resolve their annotations as the target's own classes do. Only the import
statement (and ``__import__``) sees siblings; ``importlib.import_module``
does not.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Callable

ImportFunction = Callable[..., types.ModuleType]


class SiblingModules:
    """The modules that live in the target's directory, and the code of each, compiled once."""

    def __init__(self, target: Path, tree: ast.Module, directory: Path | None = None, package: str = "") -> None:
        """``directory``: where the program's own modules are found, when not beside ``target``; ``package``:
        the package ``target`` runs in (both for ``python -m pkg.module``)."""
        self.directory = directory if directory is not None else target.parent
        self._codes: dict[Path, types.CodeType] = {}
        # Top-level names importable from the directory (modules and packages).
        self.names = frozenset(_entries(self.directory))
        self.files = frozenset(str(path) for path in self._imported_files(tree, package))

    def importer(self, copy_name: str) -> tuple[dict[str, Any], Callable[[], None]]:
        """The ``__builtins__`` of one copy of the target, and how to forget that copy's modules."""
        loaded: dict[str, types.ModuleType] = {}
        own_builtins = types.ModuleType("builtins")
        copy_builtins = own_builtins.__dict__
        copy_builtins.update(builtins.__dict__)

        def find(dotted: str) -> types.ModuleType:
            parts = dotted.split(".")
            for end in range(1, len(parts) + 1):
                name = ".".join(parts[:end])
                if name in loaded:
                    continue
                parent = loaded.get(".".join(parts[: end - 1])) if end > 1 else None
                if end > 1 and parent is None:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                directory = Path(parent.__path__[0]) if parent is not None else self.directory  # type: ignore[union-attr]
                loaded[name] = self._load(name, parts[end - 1], directory, copy_name, copy_builtins)
                if parent is not None:
                    setattr(parent, parts[end - 1], loaded[name])
            return loaded[dotted]

        def sibling_import(
            name: str, globals: dict | None = None, locals: dict | None = None, fromlist: Any = (), level: int = 0
        ) -> types.ModuleType:
            if level > 0:
                package = (globals or {}).get("__package__")
                if package is None:
                    return builtins.__import__(name, globals, locals, fromlist, level)
                name = importlib.util.resolve_name("." * level + name, package).rstrip(".")
            if name == "builtins":
                return own_builtins
            top = name.partition(".")[0]
            if not top or top not in self.names:
                # Looked up at each call: whatever import is installed then hands it on.
                return builtins.__import__(name, globals, locals, fromlist, 0)
            module = find(name)
            if not fromlist:
                return loaded[top]
            if hasattr(module, "__path__"):
                for item in fromlist:
                    if item != "*" and not hasattr(module, item) and _entry(Path(module.__path__[0]), item):
                        find(f"{name}.{item}")
            return module

        def forget() -> None:
            for name in loaded:
                sys.modules.pop(f"{copy_name}.{name}", None)
            loaded.clear()

        copy_builtins["__import__"] = sibling_import
        return copy_builtins, forget

    def _load(
        self, name: str, leaf: str, directory: Path, copy_name: str, copy_builtins: dict[str, Any]
    ) -> types.ModuleType:
        path = _entry(directory, leaf)
        if path is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        module = types.ModuleType(f"{copy_name}.{name}")
        module.__file__ = str(path)
        module.__builtins__ = copy_builtins  # type: ignore[attr-defined]
        is_package = path.name == "__init__.py"
        if is_package:
            module.__path__ = [str(path.parent)]  # type: ignore[attr-defined]
        # Relative imports inside a sibling resolve against its name as the user wrote it.
        module.__package__ = name if is_package else name.rpartition(".")[0]
        sys.modules[module.__name__] = module
        exec(self._code(path), module.__dict__)
        return module

    def _code(self, path: Path) -> types.CodeType:
        code = self._codes.get(path)
        if code is None:
            code = self._codes[path] = compile(path.read_bytes(), str(path), "exec")
        return code

    def _imported_files(self, tree: ast.Module, package: str) -> set[Path]:
        """The sibling files that ``tree`` imports, directly or through each other (what the source says)."""
        found: set[Path] = set()
        pending = [(tree, self.directory, package)]
        while pending:
            node, directory, package = pending.pop()
            for name in _imported_names(node, package):
                path = self._file_of(name)
                if path is None or path in found:
                    continue
                found.add(path)
                try:
                    parsed = ast.parse(path.read_bytes(), filename=str(path))
                except (OSError, SyntaxError, ValueError):
                    continue  # the import itself will say what is wrong, when it runs
                inner = name if path.name == "__init__.py" else name.rpartition(".")[0]
                pending.append((parsed, path.parent, inner))
        return found

    def _file_of(self, dotted: str) -> Path | None:
        directory = self.directory
        path = None
        for part in dotted.split("."):
            path = _entry(directory, part)
            if path is None:
                return None
            directory = path.parent
        return path


def _imported_names(tree: ast.AST, package: str) -> list[str]:
    """Dotted names an AST imports (relative ones resolved against ``package``), with parents."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if not package:
                    continue
                try:
                    base = importlib.util.resolve_name("." * node.level + base, package).rstrip(".")
                except ImportError:
                    continue
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    every = []
    for name in names:
        parts = name.split(".")
        every.extend(".".join(parts[:end]) for end in range(1, len(parts) + 1) if parts[0])
    return every


def _entries(directory: Path) -> list[str]:
    try:
        children = list(directory.iterdir())
    except OSError:
        return []
    names = []
    for child in children:
        if child.suffix == ".py" and child.stem.isidentifier():
            names.append(child.stem)
        elif child.is_dir() and child.name.isidentifier() and (child / "__init__.py").is_file():
            names.append(child.name)
    return names


def _entry(directory: Path, name: str) -> Path | None:
    """The file that makes ``name`` importable from ``directory``: a package's ``__init__.py`` first."""
    package = directory / name / "__init__.py"
    if package.is_file():
        return package
    module = directory / f"{name}.py"
    return module if module.is_file() else None
