"""A producer and a consumer share a box; the consumer checks it outside the lock, then waits.

If the producer appends and notifies between the consumer's check and its
wait, the notify is lost and the consumer waits forever.
"""

import threading


class Box:
    def __init__(self):
        self.items = []
        self.ready = threading.Condition()

    def put(self, item):
        with self.ready:
            self.items.append(item)
            self.ready.notify()

    def take(self):
        if not self.items:
            with self.ready:
                self.ready.wait()
        return self.items.pop()


def main():
    box = Box()
    consumer = threading.Thread(target=box.take, name="consumer")
    producer = threading.Thread(target=box.put, args=(1,), name="producer")
    consumer.start()
    producer.start()
    consumer.join()
    producer.join()
