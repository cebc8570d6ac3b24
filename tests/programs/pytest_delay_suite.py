"""Two @dnsse.test tests of one program whose 2 s timeout only a pause longer than the delay bound expires."""

import math
import queue
import threading

import dnsse


def _get_what_was_put_at_once():
    items = queue.Queue()
    producer = threading.Thread(target=lambda: items.put("job"))
    producer.start()
    assert items.get(timeout=2.0) == "job"
    producer.join()


@dnsse.test(framework="threads", budget=30, contained=False)
def test_under_the_default_delay_bound():
    _get_what_was_put_at_once()


@dnsse.test(framework="threads", budget=100, contained=False, max_delay=math.inf)
def test_with_any_delay():
    _get_what_was_put_at_once()
