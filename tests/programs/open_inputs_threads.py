"""Threaded programs with number inputs that carry no Range: a boundary, argument checking, assume."""

import threading

import dnsse


def bounded_batches(tokens: int = 1500):
    """Fails for every tokens <= 1000: the boundary is the value to report."""
    done = []
    worker = threading.Thread(target=lambda: done.append(tokens))
    worker.start()
    worker.join()
    assert done[0] > 1000, f"{done[0]} tokens fit one batch and the batch never flushes"


def checked_batch(batch: int = 8):
    """Rejects a batch it cannot take before doing anything, and has no bug."""
    if batch <= 0 or batch > 4096:
        raise ValueError(f"batch must be in 1..4096, got {batch}")
    dnsse.assume(batch % 2 == 0)
    lock = threading.Lock()
    worker = threading.Thread(target=lambda: lock.acquire() and lock.release())
    worker.start()
    worker.join()


def rejects_everything(size: int = 3):
    raise ValueError(f"size {size} is not supported on this machine")


def counted_steps(steps: int = 3):
    """A count of work with no bug: a huge count is more work than any run finishes, not a livelock."""
    lock = threading.Lock()
    for _ in range(max(steps, 0)):
        with lock:
            pass


def unannotated_pairs(count=10):
    """No annotation at all: the default's type makes ``count`` an int input. An odd count leaves one unpaired."""
    paired = []
    worker = threading.Thread(target=lambda: paired.extend(range(0, count - 1, 2)))
    worker.start()
    worker.join()
    assert 2 * len(paired) == count, f"{count} items leave one without a pair"
