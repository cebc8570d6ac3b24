"""The user's own launch command: ``python FILE.py ARGS``, ``python -m MODULE ARGS``, ``torchrun ... FILE.py ARGS``.

dnsse runs the program these commands name as the command would, under
control (DESIGN §2): the file runs as ``__main__`` with the ``sys.argv`` the
command gives it. ``torchrun`` (also ``python -m torch.distributed.run``)
adds how many ranks run it and the environment each gets
(:mod:`.torchrun`). The command is kept as the user wrote it, relative
paths and all, and ``directory`` says where those paths start: the trace
records both, so ``dnsse replay`` runs the same command from anywhere.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dnsse.errors import BadInput

if TYPE_CHECKING:
    from dnsse.engine.torchrun import Torchrun

# python, python3, python3.11, /usr/bin/python3, .venv/bin/python ...
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_TORCHRUN_MODULE = "torch.distributed.run"
# Options of the interpreter that change nothing dnsse models; any other is refused, naming it.
_IGNORED_FLAGS = frozenset({"-u", "-B", "-O", "-OO", "-b", "-bb", "-d", "-q", "-s", "-v"})
_IGNORED_WITH_VALUE = frozenset({"-W", "-X"})


@dataclass(frozen=True)
class Launch:
    """What the command runs, and how."""

    # The command, word by word, as the user wrote it.
    command: tuple[str, ...]
    # Where its relative paths start (the working directory it was given in).
    directory: Path
    # The file that runs as __main__, resolved.
    path: Path
    # The program's sys.argv.
    argv: tuple[str, ...]
    # ``-m``'s module name (dotted), or None for a file.
    module: str | None
    # The directory ``python`` puts first on sys.path: the file's, or the working directory under ``-m``.
    root: Path
    # torchrun's ranks and environment; None for a plain ``python`` command (one process).
    torchrun: Torchrun | None = None

    @property
    def package(self) -> str | None:
        """``__package__`` of the ``__main__`` module: ``pkg`` for ``-m pkg.train``."""
        if self.module is None:
            return None
        return self.module if self.path.name == "__init__.py" else self.module.rpartition(".")[0]

    def __str__(self) -> str:
        return shlex.join(self.command)


def is_command(text: str) -> bool:
    """Whether a target's text is a launch command rather than ``FILE.py:FUNC``."""
    try:
        words = shlex.split(text)
    except ValueError:
        return False
    return bool(words) and (_is_python(words[0]) or _is_torchrun(words[0]))


def parse_command(command: list[str], directory: Path) -> Launch:
    """The launch of ``command`` given in ``directory``; BadInput naming what is wrong or not supported."""
    if not command:
        raise BadInput(
            "no command after `--`; give the command you run, e.g. `-- torchrun --nproc-per-node 2 train.py`"
        )
    program, rest = command[0], list(command[1:])
    if _is_torchrun(program):
        return _torchrun(command, rest, directory)
    if not _is_python(program):
        raise BadInput(
            f"dnsse runs Python programs launched with python or torchrun; {program!r} is neither. Give the command "
            "as `-- python FILE.py ARGS`, `-- python -m MODULE ARGS` or `-- torchrun [OPTIONS] FILE.py ARGS`"
        )
    while rest and rest[0].startswith("-") and rest[0] != "-m":
        flag = rest.pop(0)
        if flag in _IGNORED_WITH_VALUE:
            if not rest:
                raise BadInput(f"python's option {flag} needs a value")
            rest.pop(0)
        elif flag[:2] in _IGNORED_WITH_VALUE or flag in _IGNORED_FLAGS:
            continue
        elif flag == "-c":
            raise BadInput(
                "`python -c CODE` is not supported by dnsse; put the code in a file and give `python FILE.py`"
            )
        else:
            raise BadInput(f"python's option {flag} is not supported by dnsse; leave it out of the command")
    if not rest:
        raise BadInput(
            f"the command {shlex.join(command)!r} names no program: give `python FILE.py` or `python -m MODULE`"
        )
    if rest[0] == "-m":
        if len(rest) < 2:
            raise BadInput("`python -m` needs a module name")
        module = rest[1]
        if module == _TORCHRUN_MODULE:
            return _torchrun(command, rest[2:], directory)
        if module == "torch.distributed.launch":
            raise BadInput(
                "torch.distributed.launch (deprecated by torch) is not supported by dnsse; give the same options to "
                "torchrun (`-- torchrun [OPTIONS] FILE.py ARGS`), which passes LOCAL_RANK in the environment"
            )
        return module_launch(command, module, rest[2:], directory)
    return script_launch(command, rest[0], rest[1:], directory)


def script_launch(command: list[str], script: str, arguments: list[str], directory: Path) -> Launch:
    """``python FILE.py ARGS``: sys.argv is the file as given, then its arguments."""
    path = (directory / script).resolve()
    if not path.is_file():
        raise BadInput(f"the program file {script} does not exist (looked in {directory})")
    if path.suffix != ".py":
        raise BadInput(f"{script} is not a Python file (.py); dnsse runs Python programs")
    return Launch(tuple(command), directory, path, (script, *arguments), None, path.parent)


def module_launch(command: list[str], module: str, arguments: list[str], directory: Path) -> Launch:
    """``python -m MODULE ARGS``: the module is found from the working directory, sys.argv[0] is its file."""
    if not all(part.isidentifier() for part in module.split(".")):
        raise BadInput(f"{module!r} is not a module name (python -m pkg.module)")
    base = directory.joinpath(*module.split("."))
    for path in (base / "__main__.py", base.with_suffix(".py")):
        if path.is_file():
            path = path.resolve()
            name = f"{module}.__main__" if path.name == "__main__.py" else module
            return Launch(tuple(command), directory, path, (str(path), *arguments), name, directory.resolve())
    raise BadInput(
        f"no module {module!r} under {directory}: dnsse runs `python -m MODULE` for modules of the program's own "
        "directory tree (run dnsse from the directory you run the command from)"
    )


def _torchrun(command: list[str], arguments: list[str], directory: Path) -> Launch:
    from dnsse.engine.torchrun import parse_torchrun

    torchrun, script, script_arguments, as_module = parse_torchrun(arguments)
    launch = (
        module_launch(command, script, script_arguments, directory)
        if as_module
        else script_launch(command, script, script_arguments, directory)
    )
    return Launch(launch.command, directory, launch.path, launch.argv, launch.module, launch.root, torchrun)


def _is_python(word: str) -> bool:
    return _PYTHON.fullmatch(Path(word).name) is not None


def _is_torchrun(word: str) -> bool:
    return Path(word).name == "torchrun"
