"""A target that allocates without bound where its input says so: dnsse's memory limit must contain it."""

import threading


def hog(greedy: bool = False) -> None:
    chunks = []

    def grab() -> None:
        # Zero-filled blocks: the limit counts them when they are mapped, before any page is touched.
        while greedy:
            chunks.append(bytearray(16 << 20))

    worker = threading.Thread(target=grab)
    worker.start()
    worker.join()
