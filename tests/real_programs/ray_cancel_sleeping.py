"""``ray.cancel`` as Ray's documentation shows it: a task blocked in ``time.sleep`` is interrupted.

Ray raises KeyboardInterrupt in the task's main thread with
``_thread.interrupt_main()``: Python runs its SIGINT handler at the next
bytecode, but no signal wakes a blocked call. A task that sleeps in a loop
(``run``) gets ``TaskCancelledError`` once its current sleep ends; a task
that waits on an event nobody sets (``run_lock``) is cancelled only if the
cancel reaches it before it starts: once it waits, it waits forever, and so
does the driver's ``ray.get`` (a real hang, which real Ray shows too).
``run_quick_task`` cancels a task that may already have finished and still
expects ``TaskCancelledError``: when the task wins the race, ``ray.get``
returns its value.
"""

import threading
import time

import ray


@ray.remote
def sleep_loop():
    while True:
        time.sleep(0.1)


@ray.remote
def wait_forever():
    threading.Event().wait()


@ray.remote
def quick():
    return 1


def _cancelled(task) -> bool:
    ray.init(ignore_reinit_error=True)
    ref = task.remote()
    ray.cancel(ref)
    try:
        ray.get(ref)
    except ray.exceptions.TaskCancelledError:
        return True
    return False


def run() -> bool:
    assert _cancelled(sleep_loop)
    return True


def run_lock() -> bool:
    assert _cancelled(wait_forever)
    return True


def run_quick_task() -> bool:
    assert _cancelled(quick), "the task finished before ray.cancel reached it"
    return True
