"""Each run leaves an asyncio future whose exception nobody retrieved, in a reference cycle, then races.

The future is freed only by the cyclic garbage collector, whose finalizer
logs "Future exception was never retrieved" whenever the collector runs:
here, at the start of the next run, and wherever allocations trigger it.
"""

import asyncio
import gc
import threading


async def leave_garbage():
    future = asyncio.get_running_loop().create_future()
    try:
        raise ValueError("never retrieved")
    except ValueError as error:
        future.set_exception(error)  # the error's traceback holds this frame, which holds the future


class Counter:
    def __init__(self):
        self.n = 0


def main():
    gc.collect()  # the garbage of the runs before this one
    asyncio.run(leave_garbage())
    counter = Counter()

    def bump():
        seen = counter.n
        counter.n = seen + 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.n == 2, f"lost update: n is {counter.n}"
