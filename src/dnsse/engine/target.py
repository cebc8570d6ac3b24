"""The program under test: ``FILE.py:FUNC`` or a launch command, its source, its framework and its inputs.

A launch command (``python FILE.py ARGS``, ``torchrun ... FILE.py ARGS``;
see :mod:`.launch`) runs its file as ``__main__``: each copy's code reads
``__name__`` as ``"__main__"``, so ``if __name__ == "__main__":`` runs and
``logging.getLogger(__name__)`` names ``__main__``, while the copy itself keeps
its own module name, as every copy of a target does (its classes pickle
and its helper modules resolve against it).
"""

from __future__ import annotations

import ast
import enum
import hashlib
import shlex
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path

from dnsse.engine.inputs import InputParameter, Range, domain_for
from dnsse.engine.isolation import fresh_working_directory
from dnsse.engine.launch import Launch, is_command, parse_command
from dnsse.engine.siblings import SiblingModules
from dnsse.errors import BadInput, NotUnderControl

__all__ = ["FRAMEWORKS", "InputParameter", "LoadedTarget", "Range", "TargetSpec"]

FRAMEWORKS = ("torch", "ray", "threads")


@dataclass(frozen=True)
class TargetSpec:
    path: Path
    # The entry function; None for a launch command, which runs the file as __main__.
    function: str | None
    launch: Launch | None = None

    @staticmethod
    def parse(text: str, directory: Path | None = None) -> TargetSpec:
        """``FILE.py:FUNC``, or a launch command whose relative paths start in ``directory`` (default: here)."""
        if is_command(text):
            return TargetSpec.of_command(shlex.split(text), directory or Path.cwd())
        path_text, sep, function = text.rpartition(":")
        if not sep or not path_text or not function:
            raise BadInput(f"the target {text!r} is not of the form FILE.py:FUNC (for example examples/ring.py:main)")
        path = Path(path_text)
        if not path.is_file():
            raise BadInput(f"the target file {path_text} does not exist; give the path of a Python file, then :FUNC")
        if not function.isidentifier():
            raise BadInput(f"{function!r} is not a Python function name; the target is FILE.py:FUNC")
        return TargetSpec(path.resolve(), function)

    @staticmethod
    def of_command(command: list[str], directory: Path) -> TargetSpec:
        launch = parse_command(command, directory)
        return TargetSpec(launch.path, None, launch)

    @property
    def directory(self) -> Path | None:
        """Where a launch command's relative paths start (None for FILE.py:FUNC, whose path is absolute)."""
        return self.launch.directory if self.launch is not None else None

    def __str__(self) -> str:
        return str(self.launch) if self.launch is not None else f"{self.path}:{self.function}"


class LoadedTarget:
    """A parsed and compiled target; :meth:`instantiate` gives a fresh module each time."""

    def __init__(self, spec: TargetSpec, framework: str = "auto") -> None:
        self.spec = spec
        try:
            raw = spec.path.read_bytes()
            source = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BadInput(f"cannot read the target file {spec.path}: {error}") from None
        # Recorded in traces: replaying a trace against a changed program says so.
        self.source_sha256 = hashlib.sha256(raw).hexdigest()
        try:
            tree = ast.parse(source, filename=str(spec.path))
            self.code = compile(tree, str(spec.path), "exec")
        except SyntaxError as error:
            raise BadInput(
                f"the target file {spec.path} has a syntax error at line {error.lineno}: {error.msg}"
            ) from None
        self.launch = spec.launch
        if spec.launch is not None:
            self.code = compile(_read_as_main(tree), str(spec.path), "exec")
        elif not any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == spec.function
            for node in tree.body
        ) and not _assigned_at_top_level(tree, spec.function):
            raise BadInput(
                f"{spec.path} has no top-level function {spec.function!r}; "
                f"name one of: {', '.join(_top_level_functions(tree)) or '(none defined)'}"
            )
        # Modules beside the target are the program's too: fresh in every copy, traced, located in reports.
        launch = spec.launch
        self.siblings = (
            SiblingModules(spec.path, tree)
            if launch is None
            else SiblingModules(spec.path, tree, launch.root, launch.package or "")
        )
        torchrun = spec.launch is not None and spec.launch.torchrun is not None
        if torchrun and framework not in ("auto", "torch"):
            raise BadInput(f"the program is launched with torchrun, which runs torch ranks; --framework {framework} "
                           "does not fit it (leave --framework out)")
        if framework == "auto" and torchrun:
            framework = "torch"  # torchrun starts torch ranks, whatever the script imports
        elif framework == "auto":
            framework = detect_framework(tree)
            if framework == "threads":
                framework = _framework_of_files(self.siblings.files)
        elif framework not in FRAMEWORKS:
            raise BadInput(f"unknown framework {framework!r}; use one of auto, {', '.join(FRAMEWORKS)}")
        self.framework = framework
        # torch keeps state per OS thread that agents sharing a thread would share (dnsse.engine.greenlet_host).
        self.imports_torch = "torch" in _imported_roots(tree)
        self.source_files = frozenset({str(spec.path)}) | self.siblings.files
        self._copies = 0
        self._forget: dict[str, typing.Callable[[], None]] = {}
        # The inputs of the entry point, by ``skip``: the same for every execution of this code.
        self._inputs: dict[int, list[InputParameter]] = {}

    def instantiate(self, announce: typing.Callable[[types.ModuleType], None] | None = None) -> types.ModuleType:
        """Execute the target's module afresh: new globals for every execution (and rank).

        ``announce`` is told the new module before its code runs (a launched
        file's code is the whole program).
        """
        self._copies += 1
        name = f"__dnsse_target_{self._copies}__"
        module = types.ModuleType(name)
        module.__file__ = str(self.spec.path)
        if self.launch is not None:
            module.__package__ = self.launch.package
        # `import helper` finds this copy's own helper.py beside the target (see dnsse.engine.siblings).
        module.__builtins__, self._forget[name] = self.siblings.importer(name)  # type: ignore[attr-defined]
        # Classes of the target (dataclasses in particular) look their module
        # up in sys.modules; release() takes it out again after the run.
        sys.modules[name] = module
        try:
            if announce is not None:
                announce(module)
            exec(self.code, module.__dict__)
        except BaseException:
            self.release(module)
            raise
        return module

    def release(self, module: types.ModuleType) -> None:
        sys.modules.pop(module.__name__, None)
        forget = self._forget.pop(module.__name__, None)
        if forget is not None:
            forget()

    def entry_point_inputs(self, check: typing.Callable[[typing.Callable], None], skip: int = 0) -> list[InputParameter]:
        """Run the module once, let ``check`` vet the entry point, and list its inputs.

        An exception while the module runs is bad input: the user must make
        the module import cleanly before anything can be checked. The answer
        is kept: every execution asks, and the code does not change.
        """
        if self.launch is not None:
            # A launch command has no entry point, and its inputs are its arguments, as given.
            return []
        if skip in self._inputs:
            return self._inputs[skip]
        try:
            # Its top-level code may write files: never in the user's directory.
            with fresh_working_directory():
                module = self.instantiate()
        except NotUnderControl as error:
            raise BadInput(f"importing {self.spec.path}: {error.message}") from None
        except SystemExit as error:
            raise BadInput(
                f"importing {self.spec.path} called sys.exit({error.code!r}): a module that exits while it is "
                "imported cannot be checked; move that call under `if __name__ == \"__main__\":`"
            ) from None
        except Exception as error:  # noqa: BLE001 - whatever the module raises, the user must fix it
            raise BadInput(
                f"importing {self.spec.path} raised {type(error).__name__}: {error}; "
                "fix the module so that it imports cleanly (run it with plain Python to see the whole error)"
            ) from None
        try:
            function = self.entry_point(module)
            check(function)
            found = input_parameters(function, skip)
        finally:
            self.release(module)
        self._inputs[skip] = found
        return found

    def localize(self, inputs: dict[str, object], module: types.ModuleType) -> dict[str, object]:
        """``inputs`` with members of enums the target defines taken from ``module``.

        Every execution runs a fresh copy of the module, with its own enum
        classes: a member drawn from another copy would never be ``is`` the
        program's own.
        """
        localized = dict(inputs)
        for name, value in inputs.items():
            cls = type(value)
            if isinstance(value, enum.Enum) and cls.__module__.startswith("__dnsse_target_"):
                own = getattr(module, cls.__qualname__, None)
                if isinstance(own, type) and issubclass(own, enum.Enum):
                    localized[name] = own[value.name]
        return localized

    def entry_point(self, module: types.ModuleType) -> typing.Callable:
        function = getattr(module, self.spec.function, None)
        # A test decorated with @dnsse.test is checked as the function it decorates.
        function = getattr(function, "__dnsse_test__", function)
        if not callable(function):
            raise BadInput(f"{self.spec} is not callable after the module ran")
        return function


class _MainName(ast.NodeTransformer):
    """``__name__`` read anywhere in the file is ``"__main__"``."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "__name__" and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Constant("__main__"), node)
        return node


def _read_as_main(tree: ast.Module) -> ast.Module:
    import copy

    return ast.fix_missing_locations(_MainName().visit(copy.deepcopy(tree)))


def target_file_name(text: str) -> str:
    """The name of the target's file, from its text (``FILE.py:FUNC`` or a launch command); "" if unknown."""
    if not is_command(text):
        return Path(text.rpartition(":")[0]).name
    try:
        return TargetSpec.parse(text).path.name
    except BadInput:
        return ""


def _top_level_functions(tree: ast.Module) -> list[str]:
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _assigned_at_top_level(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
    return False


def _imported_roots(tree: ast.Module) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.partition(".")[0])
    return roots


def detect_framework(tree: ast.Module) -> str:
    """torch when the module uses torch.distributed, ray when it imports ray, else threads."""
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    if any(name == "torch.distributed" or name.startswith("torch.distributed.") for name in imported):
        return "torch"
    if any(name == "ray" or name.startswith("ray.") for name in imported):
        return "ray"
    return "threads"


def _framework_of_files(files: typing.Iterable[str]) -> str:
    """The framework of the program's other files the target imports: a driver whose tasks live in ``tasks.py``.

    Without it, a target that imports ``ray`` only through such a file would be
    checked as plain threads, with the real Ray running uncontrolled.
    """
    found = "threads"
    for file in sorted(files):
        try:
            framework = detect_framework(ast.parse(Path(file).read_bytes(), filename=file))
        except (OSError, SyntaxError, ValueError):
            continue  # the import itself will say what is wrong, when it runs
        if framework == "torch":
            return framework
        if framework == "ray":
            found = framework
    return found


# The types of unannotated defaults that make a parameter an input.
_UNANNOTATED = {bool: bool, int: int, float: float}


def input_parameters(function: typing.Callable, skip: int = 0) -> list[InputParameter]:
    """Keyword parameters with a default and an input annotation (see dnsse.engine.inputs).

    A parameter without an annotation whose default is a ``bool``, ``int``
    or ``float`` is an input of its default's type: ``tokens=32`` is
    ``tokens: int = 32``.
    """
    import inspect

    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable annotations just mean "not an input"
        hints = {}
    parameters = list(inspect.signature(function).parameters.values())[skip:]
    found = []
    for parameter in parameters:
        if parameter.default is inspect.Parameter.empty:
            continue
        hint = hints.get(parameter.name, _UNANNOTATED.get(type(parameter.default)))
        if hint is None:
            continue
        extras: tuple = ()
        if typing.get_origin(hint) is typing.Annotated:
            hint, *rest = typing.get_args(hint)
            extras = tuple(rest)
        described = domain_for(hint, parameter.default, extras)
        if described is not None:
            kind, domain, bounds = described
            found.append(InputParameter(parameter.name, kind, parameter.default, bounds, domain))
    return found


def require_no_positional_parameters(function: typing.Callable, role: str) -> None:
    """Entry points called as ``FUNC(**inputs)`` may not require any parameter."""
    import inspect

    required = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if required:
        raise BadInput(
            f"{role} is called with no positional arguments, but it requires {', '.join(required)}; "
            "give them defaults (inputs are keyword parameters with defaults)"
        )
