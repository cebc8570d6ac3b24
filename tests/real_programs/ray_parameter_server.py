"""The parameter server of Ray's documentation: workers compute gradients, a server applies them.

``train_sync`` is the documentation's synchronous version: every round, each
worker computes a gradient from the current weights and the server applies
all of them in one call. ``train_async`` lets workers push gradients to a
threaded server (``max_concurrency=2``) whose update reads the weights,
computes, and writes them back without a lock: two updates can interleave
and one is lost.
"""

import ray

LEARNING_RATE = 0.5


@ray.remote
class ParameterServer:
    def __init__(self, size):
        self.weights = [0.0] * size
        self.updates = 0

    def apply_gradients(self, *gradients):
        summed = [sum(values) for values in zip(*gradients)]
        self.weights = [w - LEARNING_RATE * g for w, g in zip(self.weights, summed)]
        self.updates += len(gradients)
        return self.weights

    def apply_gradient(self, gradient):
        weights = list(self.weights)
        updated = [w - LEARNING_RATE * g for w, g in zip(weights, gradient)]
        self.weights = updated
        self.updates += 1
        return self.weights

    def get_weights(self):
        return self.weights

    def get_updates(self):
        return self.updates


@ray.remote
def compute_gradient(weights, worker):
    # The gradient of 0.5 * ||w - target||^2 with a target of -1 for every weight.
    return [w + 1.0 + 0.0 * worker for w in weights]


@ray.remote
def async_worker(server, worker, steps):
    for _ in range(steps):
        weights = ray.get(server.get_weights.remote())
        gradient = ray.get(compute_gradient.remote(weights, worker))
        ray.get(server.apply_gradient.remote(gradient))


def train_sync(workers: int = 2, rounds: int = 2) -> None:
    # The final check below holds for one to three workers (four bring the weights to exactly 0).
    if not 1 <= workers <= 3:
        raise ValueError(f"workers must be 1 to 3, got {workers}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    ray.init()
    server = ParameterServer.remote(2)
    weights = server.get_weights.remote()
    for _ in range(rounds):
        gradients = [compute_gradient.remote(weights, i) for i in range(workers)]
        weights = server.apply_gradients.remote(*gradients)
    assert ray.get(server.get_updates.remote()) == workers * rounds
    final = ray.get(weights)
    assert all(w < 0 for w in final), final


def train_async(workers: int = 2, steps: int = 1) -> None:
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    ray.init()
    server = ParameterServer.options(max_concurrency=2).remote(2)
    ray.get([async_worker.remote(server, i, steps) for i in range(workers)])
    updates = ray.get(server.get_updates.remote())
    assert updates == workers * steps, f"lost update: {updates} updates applied, expected {workers * steps}"
