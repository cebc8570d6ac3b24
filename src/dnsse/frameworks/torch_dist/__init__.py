"""torch.distributed under dnsse's control.

Ranks are controlled threads of one process; :mod:`.patching` swaps the
Python-level API of ``torch.distributed`` for the controlled one in
:mod:`.api`, so a program written for gloo or NCCL runs unchanged. Collectives
live in :mod:`.collectives` (semantics in :mod:`.ops`), point-to-point in
:mod:`.p2p`, async handles in :mod:`.work`; :mod:`.framework` ties them to the
engine.
"""
