"""A user's test module whose program kills its process in one schedule (copied by tests/test_pytest_plugin.py)."""

import os
import threading

import dnsse


@dnsse.test(framework="threads", budget=50, strategy="random", seed=0)
def test_exits_in_one_order():
    order = []

    def worker(name):
        order.append(name)
        if order == ["b", "a"]:
            os._exit(9)

    threads = [threading.Thread(target=worker, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@dnsse.test(framework="threads", budget=10)
def test_after_it_the_session_goes_on():
    done = []
    thread = threading.Thread(target=done.append, args=(1,))
    thread.start()
    thread.join()
    assert done == [1]
