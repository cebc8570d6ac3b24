"""Ray drivers that use parts of Ray dnsse does not model."""

import ray


def named_actors() -> None:
    ray.init()
    print(ray.util.list_named_actors())
    ray.shutdown()


def serve() -> None:
    ray.init()
    import ray.serve as serve  # noqa: F401


def runtime_context() -> None:
    ray.init()
    print(ray.get_runtime_context().get_accelerator_ids())
