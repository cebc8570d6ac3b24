"""Ray drivers that use parts of Ray dnsse does not model."""

import ray


def placement_group() -> None:
    ray.init()
    group = ray.util.placement_group([{"CPU": 1}])
    ray.get(group.ready())


def serve() -> None:
    ray.init()
    import ray.serve as serve  # noqa: F401


def runtime_context() -> None:
    ray.init()
    print(ray.get_runtime_context().get_job_id())
