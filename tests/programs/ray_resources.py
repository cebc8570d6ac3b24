"""Resources: what ray.init declares limits how many tasks and actors run at once."""

import ray


@ray.remote
class Signal:
    def __init__(self):
        self.ready = False

    def send(self):
        self.ready = True

    def is_set(self):
        return self.ready


@ray.remote(num_cpus=1)
class Worker:
    def __init__(self, signal):
        self.signal = signal

    def work(self):
        return ray.get(self.signal.is_set.remote())


@ray.remote
def release(signal):
    ray.get(signal.send.remote())


def actors_take_every_cpu(cpus: int = 2):
    """Two CPU-holding actors leave no CPU for the task that would free them."""
    ray.init(num_cpus=cpus)
    signal = Signal.remote()
    workers = [Worker.remote(signal) for _ in range(2)]
    release.remote(signal)
    ray.get([w.work.remote() for w in workers])


def enough_cpus():
    actors_take_every_cpu(cpus=3)


@ray.remote(num_gpus=1)
def train():
    return "trained"


def gpu_task_on_a_cpu_cluster():
    ray.init(num_gpus=0)
    ray.get(train.remote())
