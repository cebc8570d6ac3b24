"""torch.distributed under dnsse's control.

Ranks are controlled threads of one process running torch's own
``torch.distributed`` code. :mod:`.backend` is the registered ``dnsse``
process group every caller reaches (the Python API, DDP, FSDP, DeviceMesh,
functional collectives); :mod:`.c10d_world` gives each rank its own torch
process-group state; :mod:`.process_groups` replaces the few setup functions
dnsse owns; :mod:`.patching` installs all of it for a campaign. Collectives
live in :mod:`.collectives` (semantics in :mod:`.ops`), point-to-point in
:mod:`.p2p`, async handles in :mod:`.work`, read checks in :mod:`.guard`,
CUDA-on-CPU in :mod:`.cpu_devices`, the virtual CUDA device of each rank in
:mod:`.virtual_device` (its streams and events in :mod:`.cuda_streams`, its
queries and refusals in :mod:`.cuda_queries`, the kernels' reads and writes
seen by :mod:`.access_mode`, their orderings in :mod:`.happens_before`);
:mod:`.rank_mode` is the torch function
mode each rank runs under; :mod:`.framework` ties them to the engine.
"""
