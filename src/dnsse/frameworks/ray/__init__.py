"""Ray programs under control: the controlled ``ray`` module and the framework that runs it.

Map: :mod:`.api` is the ``ray`` module a target imports, the top layer that
only gathers the public names from :mod:`.session` (``init``, ``shutdown``),
:mod:`.decorators` (``remote``, ``method``), :mod:`.ref_calls` (``get``,
``wait``, ``put``, ``cancel``) and :mod:`.actor_control` (``kill``,
``get_actor``); :mod:`.refs` the ObjectRefs and object store; :mod:`.tasks` remote functions;
:mod:`.actors` actor classes and handles, :mod:`.actor_state` an actor's
life and start rule, :mod:`.calls` one call's run, :mod:`.coroutines` async
actors, :mod:`.streaming` streaming generators; :mod:`.runtime`
per-execution state and faults, :mod:`.shipping` each worker's own copy of
the globals its code uses, :mod:`.resources` the cluster's CPUs, GPUs and
custom resources; :mod:`.errors` ``ray.exceptions``; :mod:`.actor_pool`
``ray.util.ActorPool``, :mod:`.ray_queue` ``ray.util.queue``;
:mod:`.modules` the ``sys.modules`` swap; :mod:`.framework` the framework.
"""
