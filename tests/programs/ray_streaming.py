"""Streaming generators: tasks and actor methods that yield their results one at a time."""

import ray


@ray.remote
def count_up(n):
    for i in range(n):
        yield i * 10


@ray.remote(num_returns="streaming")
def fail_after(n):
    for i in range(n):
        yield i
    raise ValueError("the stream broke")


@ray.remote
class Reader:
    def __init__(self):
        self.lines = ["a", "b", "c"]

    def read(self):
        for line in self.lines:
            yield line.upper()


def consume():
    values = [ray.get(ref) for ref in count_up.remote(4)]
    assert values == [0, 10, 20, 30], values
    reader = Reader.remote()
    assert [ray.get(ref) for ref in reader.read.remote()] == ["A", "B", "C"]
    stream = count_up.remote(2)
    ray.get(stream.completed())
    assert [ray.get(ref) for ref in stream] == [0, 10]


def consume_a_failing_stream():
    got = []
    try:
        for ref in fail_after.remote(2):
            got.append(ray.get(ref))
    except ValueError as error:
        assert got == [0, 1] and "the stream broke" in str(error)
        return
    raise AssertionError("the stream's error was not raised")


@ray.remote
class Progress:
    def __init__(self):
        self.done = 0

    def step(self):
        self.done += 1

    def value(self):
        return self.done


@ray.remote
def work_with_progress(progress, n):
    for i in range(n):
        progress.step.remote()
        yield i


def progress_read_too_early():
    """The bug: reading progress when the stream's values arrived, before the progress calls ran."""
    progress = Progress.remote()
    values = [ray.get(ref) for ref in work_with_progress.remote(progress, 3)]
    assert ray.get(progress.value.remote()) == len(values)
