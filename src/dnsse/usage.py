"""What the command says about its own usage: one-line errors with did-you-mean, and ``check --help``."""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn, Sequence

from dnsse.suggest import did_you_mean, nearest

EXIT_BAD_INPUT = 2

_INVALID_CHOICE = re.compile(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)")
_INVALID_INT = re.compile(r"argument (\S+): invalid int value: '([^']*)'")

CHECK_EPILOG = """\
the program to check, in one of three forms:
  -- torchrun --nproc-per-node 2 train.py ARGS
  -- python app.py ARGS          the command you launch it with, after --
  -- python -m MODULE ARGS
  app.py [-- ARGS]               a file, run as __main__
  app.py:main                    an entry function, called once per execution:
      torch:         main(rank, world_size, **inputs), once per rank
                     (--world-size N, default 2)
      ray, threads:  main(**inputs)
  Keyword parameters with a default and an annotation (bool, Literal, Enum,
  Annotated[int, dnsse.Range(lo, hi)]) are inputs the search varies.

examples:
  dnsse check -- torchrun --nproc-per-node 2 train.py --epochs 1
  dnsse check app.py:main --budget 200 --seed 1
  dnsse check app.py --strategy dfs --preemption-bound 2
  dnsse check app.py --junit dnsse.xml --sarif dnsse.sarif --json dnsse.json
  dnsse replay .dnsse/bug-1.json

exit status: 0 no bug, 1 a bug, 2 bad input, 3 an internal error of dnsse,
130 / 143 interrupted (Ctrl-C / SIGTERM). More: docs/reference.md."""


class UsageParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (plus did-you-mean), never a page of usage.

    ``commands`` holds the parsers of the top level's subcommands, so that an
    option nothing took is matched against the options of its own command.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: dict[str, UsageParser] = {}

    def subcommand(self, name: str | None) -> UsageParser:
        """The parser of subcommand ``name`` (this one where there is none)."""
        return self.commands.get(name or "", self)

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        if self._is_top_level() and "required" in message:
            # `dnsse` alone: the one-line usage says what the commands are.
            self.print_usage(sys.stderr)
        self.fail(explain(message))

    def fail(self, message: str) -> NoReturn:
        """Exit 2 with ``message`` and where the options are listed."""
        sys.stderr.write(f"dnsse: error: {message}. Run `dnsse {self._subcommand()}--help` for the options.\n")
        sys.exit(EXIT_BAD_INPUT)

    def unknown(self, words: Sequence[str]) -> NoReturn:
        """Arguments nothing took: name the first option among them and the option it is nearest to."""
        options = [word for word in words if word.startswith("-")]
        if not options:
            self.fail(
                f"unexpected argument{'s' if len(words) != 1 else ''}: {' '.join(words)} "
                f"(the program's own arguments go after `--`: `dnsse check FILE.py -- ARGS`)"
            )
        name = options[0].split("=", 1)[0]
        known = [option for action in self._actions for option in action.option_strings if option.startswith("--")]
        match = nearest(name, known)
        if match is not None:
            self.fail(f"unknown option {name} (did you mean {match}?)")
        self.fail(f"unknown option {name} (the program's own arguments go after `--`: `dnsse check FILE.py -- ARGS`)")

    def _is_top_level(self) -> bool:
        return self.prog == "dnsse"

    def _subcommand(self) -> str:
        name = self.prog.split()[-1]
        return "" if name == "dnsse" else f"{name} "


def explain(message: str) -> str:
    """argparse's message, with the nearest choice to a mistyped one and the number a float-looking int means."""
    choice = _INVALID_CHOICE.search(message)
    if choice is not None:
        argument, given = choice.group(1), choice.group(2)
        offered = re.findall(r"'([^']*)'", choice.group(3))
        what = "command" if argument == "command" else argument
        return f"unknown {what} {given!r}; choose one of {', '.join(offered)}{did_you_mean(given, offered)}"
    number = _INVALID_INT.search(message)
    if number is not None:
        option, text = number.groups()
        return f"{option} takes a whole number, not {text!r}" + _as_whole_number(option, text)
    return message


def _as_whole_number(option: str, text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return ""
    if value.is_integer() and abs(value) < 1e18:
        return f" (write {option} {int(value)})"
    return ""
