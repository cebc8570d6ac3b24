"""Futures of async operations launched in a backward pass, and what is chained on them.

``Work.get_future()`` asked for during a backward pass (DDP's reducer, a
communication hook, a bucketed reduction in a post-accumulate-grad hook)
returns a :class:`PendingFuture`: the rest of the pass overlaps the
transfer, as on a real backend. A real backend's future completes on the
backend's own thread; here nothing completes it until it is waited for.
torch's own ``wait()`` would block outside any scheduling point, where no
other rank can run to finish the operation, so every future of this module
completes, at a scheduling point, what it depends on before it waits:

* ``PendingFuture.wait()`` waits for its operation;
* ``then()`` returns a :class:`Continuation`, whose ``wait()`` completes the
  future it follows, which runs the callback on the rank (DeepSpeed's
  reduction continuation, waited inside a later hook to bound the buckets
  in flight);
* ``torch.futures.collect_all`` and ``wait_all`` (:data:`REPLACEMENTS`)
  complete the futures of this module they are given.

``done()`` completes an operation that finished, as a real future is done
once its operation is. The end of the backward pass completes the futures
still pending (see ``work._complete_backward_works``); C++ waits (the
reducer's) come only after that.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol

import torch
import torch.futures

_torch_collect_all = torch.futures.collect_all


class _Operation(Protocol):
    """What a pending future needs of its operation's Work."""

    def wait(self, timeout: object = None) -> bool: ...

    def is_completed(self) -> bool: ...

    def result(self) -> list: ...


class ControlledFuture(torch.futures.Future):
    """A future whose ``wait()`` first completes, at a scheduling point, the operation it stands for or follows."""

    def settle(self) -> None:
        """Complete what this future depends on (its callbacks then complete this future)."""
        raise NotImplementedError

    def wait(self) -> Any:
        self.settle()
        return super().wait()

    def then(self, callback: Callable[[torch.futures.Future], object]) -> torch.futures.Future:
        continuation = Continuation([self])

        def run(done: torch.futures.Future) -> None:
            try:
                continuation.set_result(callback(done))
            except Exception as error:  # noqa: BLE001 - torch's then() hands a callback's error to the continuation
                continuation.set_exception(error)

        self.add_done_callback(run)
        return continuation


class PendingFuture(ControlledFuture):
    """The future of an operation launched during a backward pass: complete once waited for, or done."""

    def __init__(self, work: _Operation) -> None:
        super().__init__()
        self._work = work

    def settle(self) -> None:
        self.complete()

    def complete(self) -> None:
        """Wait for the operation (a scheduling point) and complete the future with its outputs."""
        if not super().done():
            self._work.wait()
            self.set_result(self._work.result())

    def done(self) -> bool:
        if not super().done() and self._work.is_completed():
            self.complete()
        return super().done()


class Continuation(ControlledFuture):
    """What ``then()`` or ``collect_all`` returns: complete once the futures it follows are (and its callback ran)."""

    def __init__(self, follows: list[torch.futures.Future]) -> None:
        super().__init__()
        self._follows = follows

    def settle(self) -> None:
        for future in self._follows:
            if isinstance(future, ControlledFuture):
                future.settle()

    def done(self) -> bool:
        for future in self._follows:
            future.done()  # a pending future whose operation finished completes, running its callbacks
        return super().done()


def collect_all(futures: Iterable[torch.futures.Future]) -> torch.futures.Future:
    """torch's ``collect_all``; waiting on it completes the pending futures among ``futures`` first."""
    futures = list(futures)
    collected = _torch_collect_all(futures)
    if not any(isinstance(future, ControlledFuture) for future in futures):
        return collected
    continuation = Continuation(futures)

    def run(done: torch.futures.Future) -> None:
        try:
            continuation.set_result(done.value())
        except Exception as error:  # noqa: BLE001 - collect_all's error is the continuation's
            continuation.set_exception(error)

    collected.add_done_callback(run)
    return continuation


def wait_all(futures: Iterable[torch.futures.Future]) -> list:
    """torch's ``wait_all``, through :func:`collect_all`."""
    return [future.wait() for future in collect_all(futures).wait()]


REPLACEMENTS: tuple[tuple[object, str, Callable[..., Any]], ...] = (
    (torch.futures, "collect_all", collect_all),
    (torch.futures, "wait_all", wait_all),
)
