"""Object collectives: ``all_gather_object`` and friends.

torch pickles objects into tensors; under control the objects never leave the
process, so ``copy.deepcopy`` gives each receiver its own copy, as unpickling
would, without touching the disk or the wire.
"""

from __future__ import annotations

import copy
from typing import Sequence

from dnsse.frameworks.torch_dist.ops import CollectiveCall


class ObjectCall(CollectiveCall):
    """A collective on Python objects: read by reference, written by slot."""

    def read(self) -> list:
        return self.inputs()

    def write(self, values: list) -> None:
        target = self.outputs()
        for index, value in enumerate(values):
            target[index] = value


class AllGatherObject(ObjectCall):
    name = "all_gather_object"

    def __init__(self, object_list: list, obj: object) -> None:
        self.object_list, self.obj = object_list, obj

    def signature(self) -> str:
        return "all_gather_object()"

    def inputs(self) -> list:
        return [self.obj]

    def outputs(self) -> list:
        return self.object_list

    @staticmethod
    def compute(calls: Sequence[AllGatherObject], inputs: Sequence[list]) -> list[list]:
        return [[copy.deepcopy(values[0]) for values in inputs] for _ in calls]


class BroadcastObjectList(ObjectCall):
    name = "broadcast_object_list"

    def __init__(self, object_list: list, root: int, src: int, is_root: bool) -> None:
        self.object_list, self.root, self.src, self.is_root = object_list, root, src, is_root

    def signature(self) -> str:
        return f"broadcast_object_list({len(self.object_list)} objects, src={self.src})"

    def inputs(self) -> list:
        return list(self.object_list) if self.is_root else []

    def outputs(self) -> list:
        return self.object_list

    @staticmethod
    def compute(calls: Sequence[BroadcastObjectList], inputs: Sequence[list]) -> list[list]:
        source = inputs[calls[0].root]
        return [[] if call.is_root else copy.deepcopy(source) for call in calls]


class GatherObject(ObjectCall):
    name = "gather_object"

    def __init__(self, obj: object, object_gather_list: list | None, root: int, dst: int) -> None:
        self.obj, self.object_gather_list, self.root, self.dst = obj, object_gather_list, root, dst

    def signature(self) -> str:
        return f"gather_object(dst={self.dst})"

    def inputs(self) -> list:
        return [self.obj]

    def outputs(self) -> list:
        return self.object_gather_list if self.object_gather_list is not None else []

    @staticmethod
    def compute(calls: Sequence[GatherObject], inputs: Sequence[list]) -> list[list]:
        root = calls[0].root
        gathered = [copy.deepcopy(values[0]) for values in inputs]
        return [gathered if index == root else [] for index in range(len(calls))]


class ScatterObjectList(ObjectCall):
    name = "scatter_object_list"

    def __init__(self, output_list: list, input_list: list | None, root: int, src: int) -> None:
        self.output_list, self.input_list, self.root, self.src = output_list, input_list, root, src

    def signature(self) -> str:
        return f"scatter_object_list(src={self.src})"

    def inputs(self) -> list:
        return list(self.input_list or [])

    def outputs(self) -> list:
        return self.output_list

    @staticmethod
    def compute(calls: Sequence[ScatterObjectList], inputs: Sequence[list]) -> list[list]:
        source = inputs[calls[0].root]
        return [[copy.deepcopy(source[index])] for index in range(len(calls))]
