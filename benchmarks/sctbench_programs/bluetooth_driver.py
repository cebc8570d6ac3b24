"""CS.bluetooth_driver_bad: a stopping driver frees its resources while an I/O is still in progress."""

import threading


class Device:
    def __init__(self) -> None:
        self.atomic = threading.Lock()  # __ESBMC_atomic_begin/end
        self.pending_io = 1
        self.stopping_flag = False
        self.stopping_event = False
        self.stopped = False


def io_increment(e: Device) -> int:
    if e.stopping_flag:
        return -1
    with e.atomic:
        e.pending_io = e.pending_io + 1
    return 0


def io_decrement(e: Device) -> None:
    with e.atomic:
        e.pending_io = e.pending_io - 1
        pending_io = e.pending_io
    if pending_io == 0:
        e.stopping_event = True


def pnp_add(e: Device) -> None:
    status = io_increment(e)
    if status == 0:
        assert not e.stopped, "BAD: work on a stopped device"
    io_decrement(e)


def pnp_stop(e: Device) -> None:
    e.stopping_flag = True
    io_decrement(e)
    if e.stopping_event:
        e.stopped = True


def bad() -> None:
    e = Device()
    stopper = threading.Thread(target=pnp_stop, args=(e,))
    stopper.start()
    pnp_add(e)
    stopper.join()
