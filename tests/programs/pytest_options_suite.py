"""@dnsse.test tests for the command-line options and profiles of the pytest plugin."""

import _thread
import threading

import dnsse


@dnsse.test(framework="threads", budget=100, strategy="random", seed=0, contained=False)
def test_lost_update():
    box = [0]

    def bump():
        seen = box[0]
        box[0] = seen + 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert box[0] == 2, f"lost update: {box[0]}"


@dnsse.test(framework="threads", budget=5, contained=False)
def test_starts_a_raw_thread():
    _thread.start_new_thread(print, ("outside",))
