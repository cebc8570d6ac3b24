"""A threads program that uses torch: its threads keep OS threads, since torch keeps grad mode per thread."""

import threading

import torch


def torch_grad_mode() -> None:
    """torch's grad mode is per thread: a thread that turns it off leaves the others' on."""
    lock = threading.Lock()

    def quiet() -> None:
        torch.set_grad_enabled(False)
        with lock:
            pass
        assert not torch.is_grad_enabled()

    def loud() -> None:
        with lock:
            pass
        assert torch.is_grad_enabled(), "grad mode leaked from another thread"

    threads = [threading.Thread(target=quiet), threading.Thread(target=loud)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
