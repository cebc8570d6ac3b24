"""Programs that rely on what Python keeps per thread: each thread must see its own.

Correct programs: no schedule fails them, whether dnsse runs the threads on
OS threads of their own or as greenlets of one OS thread.
"""

import _thread
import asyncio
import threading

# A thread-local made when the module loads, before any thread starts.
MADE_EARLY = threading.local()


def thread_locals() -> None:
    """threading.local and the C _thread._local keep one value per thread, across switches."""
    late = threading.local()
    raw = _thread._local()
    lock = threading.Lock()
    MADE_EARLY.value = late.value = raw.value = "main"

    def worker(name: str) -> None:
        assert not hasattr(MADE_EARLY, "value") and not hasattr(late, "value"), "a new thread sees no value"
        MADE_EARLY.value = late.value = raw.value = name
        for _ in range(2):
            with lock:  # scheduling points: the other thread may run and set its own values
                pass
            assert (MADE_EARLY.value, late.value, raw.value) == (name, name, name), (name, late.value)

    threads = [threading.Thread(target=worker, args=(f"t{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (MADE_EARLY.value, late.value, raw.value) == ("main", "main", "main")


def rlock_owners() -> None:
    """An RLock belongs to the thread that took it: another thread cannot release it."""
    rlock = threading.RLock()
    refused = []
    taken = threading.Event()
    done = threading.Event()

    def owner() -> None:
        with rlock:
            with rlock:
                taken.set()
                done.wait()

    def intruder() -> None:
        taken.wait()
        try:
            rlock.release()
        except RuntimeError:
            refused.append(True)
        done.set()

    threads = [threading.Thread(target=owner), threading.Thread(target=intruder)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused == [True], "the intruder released a lock it does not own"
    assert rlock.acquire(blocking=False), "the owner released it fully"


def running_loops() -> None:
    """Each thread's asyncio.run has its own running loop; a thread outside any loop has none."""
    lock = threading.Lock()

    async def check(loops: list) -> None:
        loops.append(asyncio.get_running_loop())
        for _ in range(2):
            with lock:
                pass
            await asyncio.sleep(0)
            assert asyncio.get_running_loop() is loops[0]

    def worker() -> None:
        asyncio.run(check([]))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for _ in range(3):
        with lock:
            assert asyncio._get_running_loop() is None, "the main thread runs no loop"
    for thread in threads:
        thread.join()


IDENTS: list = []


def one_os_thread() -> None:
    """Fails when the threads ran on different OS threads: tells how dnsse ran them."""
    # All three alive at once, so OS threads could not reuse an ident.
    barrier = threading.Barrier(3)
    idents = {_thread.get_ident()}

    def worker() -> None:
        idents.add(_thread.get_ident())
        barrier.wait()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    barrier.wait()
    for thread in threads:
        thread.join()
    assert len(idents) == 1, f"{len(idents)} OS threads"


def racy_counter() -> None:
    """A lost update: found through shared-state points, the same way on either kind of thread."""
    state = {"count": 0}

    def bump() -> None:
        value = state["count"]
        state["count"] = value + 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state["count"] == 2, f"count is {state['count']}"
