"""ray.cancel of actor calls as Ray 2.60 does it, and recursive cancellation through actor calls."""

import asyncio

import ray
from ray.exceptions import TaskCancelledError


@ray.remote
class Signal:
    def __init__(self):
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def arrive(self):
        self.arrived.set()

    async def wait_arrival(self):
        await self.arrived.wait()

    async def release(self):
        self.released.set()

    async def wait_release(self):
        await self.released.wait()


@ray.remote
class Poller:
    """Ray's docs: a synchronous actor's call is not interrupted; it polls is_canceled()."""

    def long_running(self):
        context = ray.get_runtime_context()
        for _ in range(5):
            if context.is_canceled():
                return "saw the cancel"
        return "finished"


def cancel_a_sync_call_that_polls():
    poller = Poller.remote()
    ref = poller.long_running.remote()
    ray.cancel(ref)
    try:
        assert ray.get(ref) == "finished"  # it had finished before the cancel
    except TaskCancelledError:
        pass  # queued, or running: its result is cancelled, whatever it returned


@ray.remote
class Account:
    def __init__(self):
        self.balance = 100

    def withdraw(self, amount):
        self.balance -= amount

    def get_balance(self):
        return self.balance


def cancel_does_not_undo_a_sync_call():
    """The bug: a TaskCancelledError is taken to mean that the call did not run."""
    account = Account.remote()
    ref = account.withdraw.remote(30)
    ray.cancel(ref)
    try:
        ray.get(ref)
    except TaskCancelledError:
        assert ray.get(account.get_balance.remote()) == 100, "the cancelled withdrawal happened"


@ray.remote
def blocked_child(signal):
    ray.get(signal.arrive.remote())
    ray.get(signal.wait_release.remote())
    return 1


@ray.remote
class Parent:
    def run(self, signal):
        return ray.get(blocked_child.remote(signal))


@ray.remote
class AsyncParent:
    async def run(self, signal):
        return await blocked_child.remote(signal)


def _cancel_a_call_of(parent_class, recursive):
    signal = Signal.remote()
    parent = parent_class.remote()
    ref = parent.run.remote(signal)
    # Ray cancels the children a call has when the cancel comes: wait until the child exists.
    ray.get(signal.wait_arrival.remote())
    ray.cancel(ref, recursive=recursive)
    try:
        ray.get(ref)
    except TaskCancelledError:
        return
    raise AssertionError("the cancelled call returned")


def recursive_cancel_of_a_sync_call_reaches_its_task():
    _cancel_a_call_of(Parent, recursive=True)


def recursive_cancel_of_an_async_call_reaches_its_task():
    _cancel_a_call_of(AsyncParent, recursive=True)


def cancel_of_a_sync_call_leaves_its_task():
    """Not recursive: the call is not interrupted and its child waits for ever, as under Ray."""
    _cancel_a_call_of(Parent, recursive=False)


@ray.remote
class Log:
    def __init__(self):
        self.entries = []

    def hold(self, signal):
        ray.get(signal.wait_release.remote())

    def append(self, entry):
        self.entries.append(entry)

    def read(self):
        return self.entries


@ray.remote
def writer(log):
    ray.get(log.append.remote("x"))


def _cancel_a_task_that_called_an_actor(recursive):
    """The log is busy, so the task's append waits in its queue when the task is cancelled."""
    signal = Signal.remote()
    log = Log.remote()
    held = log.hold.remote(signal)
    ref = writer.remote(log)
    ray.cancel(ref, recursive=recursive)
    ray.get(signal.release.remote())
    ray.get(held)
    assert ray.get(log.read.remote()) == [], "the cancelled task's append ran"


def recursive_cancel_of_a_task_reaches_its_actor_call():
    _cancel_a_task_that_called_an_actor(recursive=True)


def cancel_of_a_task_leaves_its_actor_call():
    _cancel_a_task_that_called_an_actor(recursive=False)


@ray.remote
class Context:
    def describe(self):
        context = ray.get_runtime_context()
        return (context.get_actor_name(), context.get_actor_id() is not None, context.get_task_id() is not None,
                context.is_canceled(), context.current_actor is not None)


@ray.remote
class AsyncContext:
    async def is_canceled(self):
        try:
            ray.get_runtime_context().is_canceled()
        except RuntimeError as error:
            return str(error)


@ray.remote
def task_context():
    context = ray.get_runtime_context()
    return context.get_task_id() is not None, context.get_actor_id(), context.is_canceled()


def runtime_context_answers_as_ray_does():
    context = ray.get_runtime_context()
    assert context.get_job_id() == "01000000" and context.get_task_id() is None and context.get_actor_id() is None
    try:
        context.is_canceled()
        raise AssertionError("is_canceled answered in the driver")
    except RuntimeError:
        pass
    assert ray.get(task_context.remote()) == (True, None, False)
    named = Context.options(name="ctx").remote()
    assert ray.get(named.describe.remote()) == ("ctx", True, True, False, True)
    assert ray.get(AsyncContext.remote().is_canceled.remote()) == "This method is not supported in an async actor."
