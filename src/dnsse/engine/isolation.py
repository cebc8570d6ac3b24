"""Every execution starts from the same state, and leaves none behind for the next one.

An execution is a function of (target, choices) only if nothing carries over
from the executions before it. Besides a fresh working directory and seeded
generators (:mod:`.entropy`), the process-wide state a program commonly
changes is put back after every execution: ``os.environ``, ``sys.path``, ``sys.argv`` (a
launch command gives the program its own), the
interpreter's hooks and recursion limit, and torch's global flags (default
dtype and device, grad mode, deterministic algorithms, anomaly detection,
intra-op threads).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import sys
import tempfile
import threading
from typing import Callable, Iterator

from dnsse.engine.entropy import entropy_from_seed, seed_random_generators
from dnsse.engine.flight import supervised_directory


# Empty working directories that finished executions left, reused by the next
# ones: creating and removing a directory costs a few milliseconds on some
# file systems (5 ms here), more than a whole small execution. A directory is
# reused only when it is still empty and as it was made (mode 0700), and only
# by the process that made it: a process forked from this one inherits the
# list, and must neither share nor remove the directories of its parent.
_spare: list[tuple[int, str]] = []


@contextlib.contextmanager
def fresh_working_directory() -> Iterator[str]:
    """Run inside an empty directory of this process's own, removed afterwards or kept empty for reuse."""
    previous = os.getcwd()
    directory = _take_directory()
    os.chdir(directory)
    try:
        yield directory
    finally:
        os.chdir(previous)
        _spare.append((os.getpid(), directory))


def _take_directory() -> str:
    # Under a supervisor, inside its directory: removed with it even when the process dies.
    parent = supervised_directory()
    here = os.getpid()
    while _spare:
        owner, directory = _spare.pop()
        if owner != here:
            continue  # the parent's, seen through a fork
        if _still_fresh(directory, parent):
            return directory
        shutil.rmtree(directory, ignore_errors=True)
    return tempfile.mkdtemp(prefix="dnsse-run-", dir=parent)


def _still_fresh(directory: str, parent: object) -> bool:
    """Whether ``directory`` is as ``mkdtemp`` made it, under the current parent: empty, mode 0700."""
    if parent is not None and os.path.dirname(directory) != str(parent):
        return False
    try:
        if stat.S_IMODE(os.lstat(directory).st_mode) != 0o700 or not os.path.isdir(directory):
            return False
        with os.scandir(directory) as entries:
            return next(entries, None) is None
    except OSError:
        return False


@atexit.register
def remove_spare_directories() -> None:
    """Remove the directories this process kept for reuse: at its exit, and where it ends without exit
    hooks (``os._exit``: a worker process, the command's own end) or may be killed (a Ray task's worker)."""
    here = os.getpid()
    for owner, directory in list(_spare):
        if owner == here:
            _spare.remove((owner, directory))
            shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def isolated_execution(seed: int) -> Iterator[None]:
    """Seed every generator from ``seed``; restore the process-wide state when the block ends."""
    environment = _raw_environment()
    path = list(sys.path)
    argv = sys.argv
    saved_argv = list(argv)
    hooks = _interpreter_hooks()
    restore_torch = _torch_flags()
    seed_random_generators(seed)
    try:
        with entropy_from_seed(seed):
            yield
    finally:
        if _raw_environment() != environment:
            _restore_environment(_decoded(environment))
        if sys.path != path:
            sys.path[:] = path
        if sys.argv is not argv or argv != saved_argv:
            argv[:] = saved_argv
            sys.argv = argv
        if _interpreter_hooks() != hooks:
            _restore_interpreter_hooks(hooks)
        if restore_torch is not None:
            restore_torch()


def _interpreter_hooks() -> tuple:
    # torch's init_process_group wraps sys.excepthook on every call (to prefix
    # "[rankN]"): left in place, each execution would nest two more wrappers,
    # until a long campaign's first uncaught exception overflows the stack.
    return sys.excepthook, threading.excepthook, sys.unraisablehook, sys.getrecursionlimit()


def _restore_interpreter_hooks(hooks: tuple) -> None:
    sys.excepthook, threading.excepthook, sys.unraisablehook, limit = hooks
    if sys.getrecursionlimit() != limit:
        sys.setrecursionlimit(limit)


def _raw_environment() -> dict:
    """A copy of the environment as ``os.environ`` keeps it (encoded): copied and compared without decoding."""
    raw = getattr(os.environ, "_data", None)
    return dict(raw) if isinstance(raw, dict) else dict(os.environ)


def _decoded(raw: dict) -> dict[str, str]:
    decode_key = getattr(os.environ, "decodekey", None)
    decode_value = getattr(os.environ, "decodevalue", None)
    if decode_key is None or decode_value is None or not isinstance(getattr(os.environ, "_data", None), dict):
        return raw
    return {decode_key(name): decode_value(value) for name, value in raw.items()}


def _restore_environment(saved: dict[str, str]) -> None:
    # Through os.environ, so that the C-level environment (putenv) follows.
    for name in [name for name in os.environ if name not in saved]:
        del os.environ[name]
    for name, value in saved.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _torch_flags() -> Callable[[], None] | None:
    """Put torch's global flags back as they are now; ``None`` when torch is not imported."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "get_default_dtype"):
        return None
    dtype = torch.get_default_dtype()
    device = torch.get_default_device() if hasattr(torch, "get_default_device") else None
    grad = torch.is_grad_enabled()
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    anomaly = torch.is_anomaly_enabled()
    threads = torch.get_num_threads()

    def restore() -> None:
        if torch.get_default_dtype() != dtype:
            torch.set_default_dtype(dtype)
        if device is not None and torch.get_default_device() != device:
            torch.set_default_device(device)
        torch.set_grad_enabled(grad)
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != (
            deterministic,
            warn_only,
        ):
            torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
        if torch.is_anomaly_enabled() != anomaly:
            torch.set_anomaly_enabled(anomaly)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    return restore
