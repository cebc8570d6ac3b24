"""The ``dnsse`` command: ``check`` a program, ``replay`` a trace (DESIGN §3).

Exit status: 0 nothing found (or the replayed run passes), 1 a bug, 2 bad
input with a one-paragraph message and no traceback unless ``--debug``, 3 an
internal error of dnsse, 130 interrupted by Ctrl-C (143 by SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import os
import shlex
import signal
import threading
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from dnsse import ISSUES_URI, __version__
from dnsse.advisor.options import add_advisor_options, model_settings
from dnsse.engine.limits import Limits
from dnsse.engine.flight import install_recorder, recorder_capacity, supervised_directory
from dnsse.engine.memory import default_memory_limit, parse_memory_limit
from dnsse.errors import BadInput, NotUnderControl
from dnsse.report.options import add_output_options, add_report_command
from dnsse.campaign.resume import load_state
from dnsse import exit_codes
from dnsse.campaign.supervisor import FAULT_FILE, RestartNeeded, mark_ended
from dnsse.search.registry import BUILT, DEFAULT, PLANNED
from dnsse.usage import CHECK_EPILOG, UsageParser
from dnsse.validation import (
    MAX_BUDGET,
    MAX_EXECUTION_SECONDS,
    MAX_PCT_DEPTH,
    MAX_PREEMPTION_BOUND,
    MAX_SEED,
    MAX_STEPS,
    MAX_TIME_BUDGET_SECONDS,
    MAX_WORKERS,
    MAX_WORLD_SIZE,
    Bounds,
    check_number,
    parse_max_delay,
    writable_directory,
    writable_file,
)

if TYPE_CHECKING:
    from dnsse.campaign.control import CampaignControl

REPORT_BUGS_AT = ISSUES_URI


def _parser() -> UsageParser:
    parser = UsageParser(prog="dnsse", description="Find concurrency bugs by controlled, searched execution.")
    parser.add_argument("--version", action="version", version=f"dnsse {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks of dnsse's own errors")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=UsageParser)

    check = commands.add_parser(
        "check", help="search the schedules of a program for bugs", epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "target", metavar="FILE.py:FUNC | FILE.py", nargs="?", default=None,
        help="the entry point to check, or a file to run as __main__ (`FILE.py -- ARGS` gives it arguments); "
        "or, after `--`, the command you launch the program with: `-- torchrun --nproc-per-node 4 train.py ARGS`, "
        "`-- python FILE.py ARGS`, `-- python -m MODULE ARGS` (see docs/launching.md)",
    )
    check.add_argument(
        "--world-size", type=int, default=None,
        help="ranks of a torch entry function (default 2; under torchrun, its --nnodes × --nproc-per-node)",
    )
    check.add_argument("--framework", default="auto", choices=["auto", "torch", "ray", "threads"])
    check.add_argument(
        "--strategy",
        default=DEFAULT,
        choices=BUILT + PLANNED,
        metavar="NAME",
        help=f"search strategy: {', '.join(BUILT)} (default {DEFAULT})"
        + (f"; planned: {', '.join(PLANNED)}" if PLANNED else ""),
    )
    check.add_argument("--budget", type=int, default=1000, help="executions to run at most (default 1000)")
    check.add_argument("--time-budget", type=float, default=None, metavar="SECONDS", help="stop after this long")
    check.add_argument("--seed", type=int, default=0, help="seed of the whole campaign (default 0)")
    check.add_argument(
        "--spec", action="append", default=[], metavar="LTL",
        help="an LTL property every execution must satisfy, or builtin:NAME (repeatable; see docs/events.md)",
    )
    check.add_argument(
        "--spec-file", action="append", default=[], type=Path, metavar="PATH",
        help="a file of LTL properties, one a line (# comments)",
    )
    check.add_argument("--keep-going", action="store_true", help="go on after the first bug")
    check.add_argument("--out", type=Path, default=Path(".dnsse"), help="where traces go (default .dnsse/)")
    check.add_argument("--json", type=Path, default=None, metavar="PATH", help="write a JSON report here")
    check.add_argument(
        "--workers", type=int, default=1,
        help="run executions in N parallel processes on this machine (default 1; dfs divides its tree among them)",
    )
    check.add_argument(
        "--input", action="append", default=[], metavar="NAME=VALUE",
        help="pin an input of the entry point to one value (repeatable); the others are explored",
    )
    check.add_argument(
        "--ray-address", default=None, metavar="ADDR",
        help="run the executions as tasks on the Ray cluster at ADDR (HOST:PORT, or auto); "
        "--workers N keeps N of them busy (default: one per CPU of the cluster)",
    )
    check.add_argument("--pct-depth", type=int, default=3, help="bug depth PCT aims at (default 3)")
    check.add_argument(
        "--preemption-bound", type=int, default=None, metavar="N",
        help="dfs only: run every schedule with at most N preemptions (exact, no reduction); without it, dfs "
        "runs one schedule per equivalence class of all schedules (partial-order reduction). When dfs "
        "finishes without a bug, the last line (and the JSON 'verified' field) says what was covered",
    )
    check.add_argument(
        "--faults", choices=["on", "off"], default="on",
        help="inject the faults a program declares: Ray actor crashes and task retries (default on)",
    )
    check.add_argument(
        "--no-minimize", action="store_true", help="keep each bug's schedule as found, without shrinking it"
    )
    check.add_argument(
        "--no-db", action="store_true",
        help="do not replay the bugs earlier checks of this target found (kept under OUT/known/) before exploring, "
        "nor keep this check's",
    )
    check.add_argument(
        "--coverage", action="store_true", help="measure branch coverage of the target (slower; shown in --json)"
    )
    check.add_argument("--max-steps", type=int, default=Limits.max_steps, help="step limit of one execution")
    check.add_argument(
        "--execution-timeout", type=float, default=Limits.max_seconds, metavar="SECONDS",
        help="wall-clock limit of one execution: an agent blocked outside control past it is a hang bug; "
        "one still computing makes the execution inconclusive",
    )
    check.add_argument(
        "--max-delay", default=str(Limits.max_delay), metavar="SECONDS",
        help="virtual seconds for which the scheduler may stall runnable agents in one execution, in total "
        f"(default {Limits.max_delay:g}): a timeout or sleep that ends within it is explored both ways, "
        "one beyond it only when time gets there; inf: any agent may be descheduled for any time",
    )
    check.add_argument(
        "--memory-limit", default=None, metavar="SIZE",
        help="memory each process running executions may use (e.g. 512M, 4G); past it an execution is a crash "
        "bug (memory exhausted) and the campaign goes on (default: half of this machine's memory, shared by "
        "the --workers processes)",
    )
    check.add_argument(
        "--resume", type=Path, default=None, metavar="DIR",
        help="continue the interrupted campaign whose --out directory is DIR (its traces go on there)",
    )
    # Given by the supervising process to the fresh process that continues its campaign: no second header.
    check.add_argument("--continues", action="store_true", help=argparse.SUPPRESS)
    add_advisor_options(check)
    add_output_options(check)
    check.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    replay = commands.add_parser("replay", help="re-run a recorded bug trace")
    replay.add_argument("trace", metavar="TRACE.json", type=Path)
    replay.add_argument(
        "--force", action="store_true",
        help="replay the trace even though the program changed since it was recorded (its source digest differs)",
    )
    replay.add_argument(
        "--root", metavar="DIR", type=Path,
        help="the checkout of the project the trace was recorded in (a trace from CI replayed on a laptop): its "
        "target is found at the same place relative to DIR; by default the project of the current directory "
        "or of the trace is tried when the recorded path does not exist",
    )
    replay.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    report = add_report_command(commands)
    report.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.commands = {"check": check, "replay": replay, "report": report}
    return parser


def main(argv: Sequence[str] | None = None, contained: bool = True) -> int:
    """Run a dnsse command; its exit status.

    ``contained`` (always, as a command): ``check`` and ``replay`` run the
    program in a child process, which this one watches, so a program that
    kills its process is a ``crash`` bug (dnsse.campaign.supervisor). Called
    from Python with ``contained=False`` they run it in this process instead:
    no process start and no second import of the program's frameworks, and as
    fragile as the program (``--workers`` still starts worker processes).
    """
    as_command = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    head, command = _split_command(argv)
    parser = _parser()
    arguments, unknown = parser.parse_known_args(head)
    if unknown:
        parser.subcommand(arguments.command).unknown(unknown)
    if arguments.command == "check":
        try:
            arguments.target = target_text(arguments.target, command)
        except BadInput as error:
            sys.stderr.write(f"dnsse: {error}\n")
            return exit_codes.BAD_INPUT
    supervising = (
        (contained or as_command) and supervised_directory() is None and arguments.command in ("check", "replay")
    )
    if as_command:
        # Run as a command (not called from Python): a fixed hash seed before any work; the
        # process that only supervises hands it down to the child that runs the program.
        _run_under_fixed_hash_seed(arguments, hand_down=supervising)
    try:
        if supervising:
            # This process only watches: the target runs in a child that may die (dnsse.campaign.supervisor).
            from dnsse.supervised import supervise_check, supervise_replay

            if arguments.command == "check":
                _validate(arguments)
                return supervise_check(arguments, argv)
            return supervise_replay(arguments, argv)
        if arguments.command == "check":
            return _check(arguments)
        if arguments.command == "report":
            return _report(arguments)
        return _replay(arguments)
    except RestartNeeded:
        return exit_codes.RESTART
    except BadInput as error:
        if arguments.debug:
            traceback.print_exc()
        sys.stderr.write(f"dnsse: {error}\n")
        return exit_codes.BAD_INPUT
    except NotUnderControl as error:
        # Raised outside any execution (where it is a refusal already): the same exit 2.
        sys.stderr.write(f"dnsse: {error.message}\n")
        return exit_codes.BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("dnsse: interrupted\n")
        return exit_codes.INTERRUPTED
    except BrokenPipeError:
        # The reader of our output went away (`dnsse check ... | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exit_codes.CLEAN
    except Exception as error:  # noqa: BLE001 - anything else is our failure, and must not read as "bug found"
        if arguments.debug:
            traceback.print_exc()
        sys.stderr.write(internal_error_message(error, arguments.debug))
        return exit_codes.INTERNAL


def _split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """dnsse's own words, and what follows ``--`` (the program's arguments, or its launch command)."""
    if "--" not in argv:
        return argv, None
    index = argv.index("--")
    return argv[:index], argv[index + 1 :]


def target_text(target: str | None, command: list[str] | None) -> str:
    """The target as campaigns and traces name it: ``FILE.py:FUNC``, or a launch command (DESIGN §2)."""
    from dnsse.engine.launch import is_command

    if target is None:
        if not command:
            raise BadInput(
                "give the program to check: FILE.py:FUNC, FILE.py [-- ARGS], or `-- ` and the command you launch it "
                "with (e.g. `dnsse check -- torchrun --nproc-per-node 2 train.py`)"
            )
        text = shlex.join(command)
        if not is_command(text):
            raise BadInput(
                f"after `--` comes the command that launches the program, starting with python or torchrun; "
                f"{command[0]!r} is neither (for a file with arguments, write `dnsse check FILE.py -- ARGS`)"
            )
        return text
    if target.endswith(".py"):
        return shlex.join(["python", target, *(command or [])])
    if command is not None:
        raise BadInput(
            f"{target} is an entry function, which takes no command-line arguments; to run a file with arguments "
            "give `FILE.py -- ARGS`, or its launch command after `--`"
        )
    return target


def _world_size(arguments: argparse.Namespace) -> int:
    """--world-size, or the ranks torchrun starts; both given and different is bad input."""
    from dnsse.engine.target import TargetSpec

    launch = TargetSpec.parse(arguments.target).launch
    torchrun = launch.torchrun if launch is not None else None
    if torchrun is None:
        return 2 if arguments.world_size is None else arguments.world_size
    if arguments.world_size not in (None, torchrun.world_size):
        raise BadInput(
            f"--world-size {arguments.world_size} disagrees with the torchrun command, which starts "
            f"{torchrun.world_size} ranks (--nnodes {torchrun.nnodes} × --nproc-per-node {torchrun.nproc_per_node}); "
            "leave --world-size out"
        )
    return torchrun.world_size


def internal_error_message(error: BaseException, debug: bool) -> str:
    """What the user reads when dnsse itself failed (exit 3): not their program's fault."""
    from dnsse.errors import EngineFailure

    if isinstance(error, EngineFailure):
        return (
            f"dnsse: internal error: {error}\n"
            f"This is a dnsse bug, not a bug of the program under test. Please report it at {REPORT_BUGS_AT} "
            f"with the command you ran and this traceback:\n{error.traceback}\n"
        )
    where = "the traceback is above" if debug else "run the same command with --debug to see the traceback"
    return (
        f"dnsse: internal error: {type(error).__name__}: {error}\n"
        f"This is a dnsse bug, not a bug of the program under test. Please report it at {REPORT_BUGS_AT} "
        f"with the command you ran ({where}).\n"
    )


def _run_under_fixed_hash_seed(arguments: argparse.Namespace, hand_down: bool = False) -> None:
    """Re-execute under the campaign's hash seed, or the one the replayed trace was recorded under.

    ``hand_down``: set it for the child processes instead, without re-executing this one.
    """
    from dnsse.engine.hash_seed import campaign_hash_seed, hand_down_hash_seed, run_under_hash_seed

    seed: int | None = campaign_hash_seed()
    if arguments.command == "replay":
        from dnsse.campaign.trace import recorded_hash_seed

        seed = recorded_hash_seed(arguments.trace)
    if seed is not None:
        (hand_down_hash_seed if hand_down else run_under_hash_seed)(seed)


def _validate(arguments: argparse.Namespace) -> None:
    """Every option checked before any work starts (see dnsse.validation)."""
    if arguments.world_size is not None:
        check_number(arguments.world_size, Bounds("--world-size", 1, MAX_WORLD_SIZE))
    for value, bounds in (
        (arguments.budget, Bounds("--budget", 1, MAX_BUDGET)),
        (arguments.time_budget, Bounds("--time-budget", 0, MAX_TIME_BUDGET_SECONDS, low_open=True)),
        (arguments.seed, Bounds("--seed", -MAX_SEED, MAX_SEED)),
        (arguments.workers, Bounds("--workers", 1, MAX_WORKERS)),
        (arguments.pct_depth, Bounds("--pct-depth", 1, MAX_PCT_DEPTH)),
        (arguments.preemption_bound, Bounds("--preemption-bound", 0, MAX_PREEMPTION_BOUND)),
        (arguments.max_steps, Bounds("--max-steps", 1, MAX_STEPS)),
        (arguments.execution_timeout, Bounds("--execution-timeout", 0, MAX_EXECUTION_SECONDS, low_open=True)),
    ):
        check_number(value, bounds)
    arguments.max_delay = parse_max_delay(arguments.max_delay)
    model_settings(arguments)
    arguments.memory_bytes = (
        default_memory_limit(arguments.workers)
        if arguments.memory_limit is None
        else parse_memory_limit(arguments.memory_limit)
    )
    if arguments.resume is not None:
        # The campaign goes on where it was: its traces and its state are there.
        arguments.out = arguments.resume
        load_state(arguments.resume)
    writable_directory(arguments.out, "--out")
    for option in ("json", "html", "junit", "sarif"):
        path = getattr(arguments, option, None)
        if path is not None:
            writable_file(path, f"--{option}")


def _check(arguments: argparse.Namespace) -> int:
    from dnsse.report.check_summary import finish_check
    from dnsse.report.console import CheckConsole
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign
    from dnsse.campaign.control import CampaignControl
    from dnsse.campaign.fork_server import fork_this_process

    _validate(arguments)
    arguments.world_size = _world_size(arguments)
    config = CampaignConfig(
        target=arguments.target,
        framework=arguments.framework,
        world_size=arguments.world_size,
        strategy=arguments.strategy,
        budget=arguments.budget,
        time_budget=arguments.time_budget,
        seed=arguments.seed,
        keep_going=arguments.keep_going,
        out=arguments.out,
        limits=Limits(
            max_steps=arguments.max_steps, max_seconds=arguments.execution_timeout, max_delay=arguments.max_delay
        ),
        pct_depth=arguments.pct_depth,
        preemption_bound=arguments.preemption_bound,
        minimize=not arguments.no_minimize,
        coverage=arguments.coverage,
        faults=arguments.faults == "on",
        specs=arguments.spec,
        spec_files=arguments.spec_file,
        workers=arguments.workers,
        inputs=_pinned_inputs(arguments.input),
        show_output=arguments.show_output,
        ray_address=arguments.ray_address,
        advisor=model_settings(arguments),
        known_failures=not arguments.no_db,
    )

    console = CheckConsole(arguments)
    on_start = None if arguments.continues else console.start
    control = CampaignControl(
        arguments.out,
        recorder=install_recorder(capacity=recorder_capacity(arguments.max_steps)),
        resume=load_state(arguments.resume) if arguments.resume is not None else None,
        restartable=supervised_directory() is not None,
        on_phase=console.phase,
    )
    _record_faults()
    if supervised_directory() is not None:
        # This process has run nothing of the target: worker processes start from a fork of it (see the module).
        fork_this_process()
    # Until the summary is written: under supervision a Ctrl-C reaches this process twice (from
    # the terminal and passed on by the supervisor), and the second copy may come after the
    # campaign stopped; with Python's own handler back by then, it would cut the summary off.
    with _stop_on_signals(control):
        result = run_campaign(
            config, on_bug=console.bug, on_start=on_start, on_execution=console.execution, control=control
        )
        stories = console.finish(result)
        return finish_check(arguments, result, stories)


@contextlib.contextmanager
def _stop_on_signals(control: CampaignControl) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the campaign at the end of its current execution (see dnsse.campaign.control).

    One that comes while the summary is written changes nothing: the campaign
    has stopped already, and a second Ctrl-C at the terminal makes the
    supervisor kill this process.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        if control.stop_signal is None:
            control.stop_signal = signum

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _record_faults() -> None:
    """In a supervised process, a fatal signal leaves the Python stacks for the supervisor to report."""
    directory = supervised_directory()
    if directory is not None and not faulthandler.is_enabled():
        global _fault_log
        _fault_log = open(directory / FAULT_FILE, "w")  # noqa: SIM115 - open until the process dies
        faulthandler.enable(file=_fault_log, all_threads=True)


_fault_log: object = None


def _replay(arguments: argparse.Namespace) -> int:
    from dnsse.report.console import tell_replay

    story, text = tell_replay(arguments.trace, arguments.force, arguments.root)
    print(text)
    return exit_codes.CLEAN if story.bug is None else exit_codes.BUG


def _pinned_inputs(given: list[str]) -> dict[str, str]:
    pinned = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--input {item!r} is not of the form NAME=VALUE (for example --input batch=7)")
        pinned[name.strip()] = value
    return pinned


def _report(arguments: argparse.Namespace) -> int:
    from dnsse.report.files import report_directory

    print(f"dnsse: HTML report written to {report_directory(arguments.directory, arguments.html)}")
    return exit_codes.CLEAN


def exit_now(status: int) -> None:
    """End the process without exit hooks: one that joins a thread of the program would never return."""
    from dnsse.engine.isolation import remove_spare_directories

    remove_spare_directories()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def run() -> None:
    """The ``dnsse`` command: main(), then an exit that no thread of a program can hold up."""
    try:
        status = main()
    except SystemExit as error:  # argparse's --help and usage errors
        status = 0 if error.code is None else error.code if isinstance(error.code, int) else exit_codes.BAD_INPUT
    mark_ended(status)
    exit_now(status)


if __name__ == "__main__":
    run()
