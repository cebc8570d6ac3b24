"""Groups as dnsse's scheduler sees them: a name and the global ranks in it.

torch gives every rank its own process-group object (see :mod:`.backend`);
what the ranks of one group share in an execution (its collectives and
channels) is keyed by the :class:`Group`'s name, which every rank derives the
same way from torch's own group naming: ``WORLD`` for the default group and
``g1``, ``g2``... for later groups, in creation order, because every rank must
create groups in the same order, as torch requires.
"""

from __future__ import annotations

from typing import Sequence

WORLD_NAME = "WORLD"


class Group:
    """The members of one process group, in group-rank order, and the backend ``new_group`` named."""

    __slots__ = ("name", "ranks", "backend", "_index")

    def __init__(self, name: str, ranks: Sequence[int], backend: str | None = None) -> None:
        self.name = name
        self.ranks = tuple(ranks)
        # "gloo", "nccl"...: whose semantics its operations have; None: the default group's.
        self.backend = backend
        self._index = {rank: index for index, rank in enumerate(self.ranks)}

    def index_of(self, global_rank: int) -> int | None:
        """The group rank of ``global_rank``, ``None`` when it is not a member."""
        return self._index.get(global_rank)

    def size(self) -> int:
        return len(self.ranks)

    def __str__(self) -> str:
        if self.name == WORLD_NAME:
            return WORLD_NAME
        return f"group {self.name} (ranks {', '.join(map(str, self.ranks))})"

    def __repr__(self) -> str:
        return f"<dnsse Group {self}>"


def group_name(torch_name: str, ranks: Sequence[int]) -> str:
    """Our name for a group torch named ``torch_name`` (``"0"``, ``"1"``... or a hash)."""
    if not ranks:
        return WORLD_NAME
    return f"g{torch_name}" if torch_name.isdigit() else torch_name
