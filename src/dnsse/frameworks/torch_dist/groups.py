"""Process groups as dnsse sees them: a name and the global ranks in it.

A group object holds no per-execution state, so the one ``WORLD`` object can
stand for the default group through a whole campaign; what happens on a group
in one execution lives in that execution's :class:`~.world.World`, keyed by
the group's name. Every rank builds its own object for a ``new_group`` call,
and the objects of one call share a name because ranks must call
``new_group`` in the same order, as torch requires.
"""

from __future__ import annotations

from typing import Callable, Sequence

# torch's own sentinel value, so ``group == GroupMember.NON_GROUP_MEMBER`` tests in user code work.
NON_GROUP_MEMBER = -100

WORLD_NAME = "WORLD"


class ProcessGroup:
    """A controlled process group; usable wherever torch takes ``group=``."""

    __slots__ = ("name", "ranks", "_index", "_caller_rank")

    def __init__(self, name: str, ranks: Sequence[int], caller_rank: Callable[[], int]) -> None:
        self.name = name
        self.ranks = tuple(ranks)
        self._index = {rank: index for index, rank in enumerate(self.ranks)}
        # How rank() learns who asks: the world group is shared by all ranks.
        self._caller_rank = caller_rank

    def index_of(self, global_rank: int) -> int | None:
        """The group rank of ``global_rank``, ``None`` when it is not a member."""
        return self._index.get(global_rank)

    def rank(self) -> int:
        index = self._index.get(self._caller_rank())
        return -1 if index is None else index

    def size(self) -> int:
        return len(self.ranks)

    def __str__(self) -> str:
        if self.name == WORLD_NAME:
            return WORLD_NAME
        return f"group {self.name} (ranks {', '.join(map(str, self.ranks))})"

    def __repr__(self) -> str:
        return f"<dnsse ProcessGroup {self}>"


def namespace_class(class_name: str, world: ProcessGroup) -> type:
    """Stand-ins for ``dist.group`` and ``dist.GroupMember``."""
    return type(class_name, (), {"WORLD": world, "NON_GROUP_MEMBER": NON_GROUP_MEMBER, "__module__": __name__})
