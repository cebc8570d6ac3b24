"""Asynchronous SGD with a staleness bound: a bug only a starved worker shows.

Two workers pull the version from a parameter server and push four
gradients each, each based on the version the previous push returned. The
server applies a gradient at most ``MAX_LAG`` versions stale. A worker whose
calls wait while the other worker pushes all four of its gradients pushes one
four versions stale: in ``main`` the server asserts the bound and fails; in
``drop_stale`` it drops such a gradient, as it should.
"""

import ray

MAX_LAG = 3
STEPS = 4


@ray.remote
class ParameterServer:
    def __init__(self, drop_stale):
        self.version = 0
        self.drop_stale = drop_stale

    def pull(self):
        return self.version

    def push(self, based_on):
        lag = self.version - based_on
        if self.drop_stale and lag > MAX_LAG:
            return self.version
        assert lag <= MAX_LAG, f"a gradient {lag} versions stale was applied (at most {MAX_LAG} allowed)"
        self.version += 1
        return self.version


@ray.remote
def worker(server):
    version = ray.get(server.pull.remote())
    for _ in range(STEPS):
        version = ray.get(server.push.remote(version))


def _train(drop_stale):
    ray.init()
    server = ParameterServer.remote(drop_stale)
    ray.get([worker.remote(server), worker.remote(server)])


def main():
    _train(drop_stale=False)


def drop_stale():
    _train(drop_stale=True)
