"""CS.fsbench: 27 threads (bad) or 26 (ok) allocate blocks to inodes; the 27th indexes past the 26 inode locks."""

import threading

NUMBLOCKS = 26
NUMINODE = 32


class FileSystem:
    def __init__(self) -> None:
        self.locki = [threading.Lock() for _ in range(NUMBLOCKS)]
        self.lockb = [threading.Lock() for _ in range(NUMBLOCKS)]
        self.busy = [0] * NUMBLOCKS
        self.inode = [0] * NUMINODE


def allocate(fs: FileSystem, tid: int) -> None:
    i = tid % NUMINODE
    assert 0 <= i < NUMBLOCKS, "BAD: the inode index is past the inode locks"
    with fs.locki[i]:
        if fs.inode[i] == 0:
            b = (i * 2) % NUMBLOCKS
            for _ in range(NUMBLOCKS // 2):
                with fs.lockb[b]:
                    if not fs.busy[b]:
                        fs.busy[b] = 1
                        fs.inode[i] = b + 1
                        break
                b = (b + 1) % NUMBLOCKS


def _run(threads_count: int) -> None:
    fs = FileSystem()
    threads = [threading.Thread(target=allocate, args=(fs, tid)) for tid in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def bad() -> None:
    _run(27)


def ok() -> None:
    _run(26)
