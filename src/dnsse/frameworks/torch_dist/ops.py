"""What each collective computes, as gloo computes it.

A :class:`CollectiveCall` is one rank's arguments to one collective. Its
``signature`` is what every member must agree on (compared across ranks to
find mismatches); ``read`` takes the inputs (clones, so later writes cannot
alias them); ``compute`` turns every member's inputs, in group order, into
the values each member's outputs receive; ``write`` stores them in place in
the user's tensors. Reductions fold in rank order with torch ops. The object
collectives follow the same protocol in :mod:`.object_ops`.
"""

from __future__ import annotations

from typing import Callable, ClassVar, Sequence

import torch
from torch.distributed import ReduceOp

RedOpType = type(ReduceOp.SUM)

_FOLDS: dict[object, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    RedOpType.SUM: torch.add,
    RedOpType.PRODUCT: torch.mul,
    RedOpType.MIN: torch.minimum,
    RedOpType.MAX: torch.maximum,
    RedOpType.BAND: torch.bitwise_and,
    RedOpType.BOR: torch.bitwise_or,
    RedOpType.BXOR: torch.bitwise_xor,
}


# pybind11 looks an enum member's name up at every ``.name``: read once per reduction. Keyed by
# identity (the members live as long as their class), as hashing a pybind11 enum calls into C++.
_OP_NAMES: dict[int, str] = {id(op): op.name for op in (*_FOLDS, RedOpType.AVG)}  # type: ignore[attr-defined]


def op_type(op: object) -> object:
    """``ReduceOp.SUM`` and ``ReduceOp(ReduceOp.SUM)`` both name one reduction."""
    # The usual argument, checked first: getattr with a default raises and catches an AttributeError on it.
    kind = op if type(op) is RedOpType else getattr(op, "op", op)
    if id(kind) in _OP_NAMES:  # a member of the enum itself: known, without hashing it
        return kind
    if kind not in _FOLDS and kind != RedOpType.AVG:
        raise ValueError(f"dnsse supports the reductions SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR; got {op!r}")
    return kind




def op_name(op: object) -> str:
    name = _OP_NAMES.get(id(op))
    return name if name is not None else getattr(op, "name", str(op))


def reduce_tensors(values: Sequence[torch.Tensor], op: object) -> torch.Tensor:
    if op == RedOpType.AVG:
        total = values[0]
        for value in values[1:]:
            total = torch.add(total, value)
        return total / len(values)
    fold = _FOLDS[op]
    result = values[0]
    for value in values[1:]:
        result = fold(result, value)
    return result


# Every collective describes its tensors (its signature); a program uses few shapes, so each text is made once.
_DESCRIBED: dict[tuple[torch.dtype, torch.Size], str] = {}


def describe(tensor: torch.Tensor) -> str:
    """``float32[2, 3]``: what a mismatch report shows of a tensor."""
    key = (tensor.dtype, tensor.shape)
    text = _DESCRIBED.get(key)
    if text is None:
        if len(_DESCRIBED) >= 4096:
            _DESCRIBED.clear()
        text = _DESCRIBED[key] = f"{str(key[0]).removeprefix('torch.')}[{', '.join(map(str, key[1]))}]"
    return text


def check_tensor(api: str, name: str, value: object) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{api}: {name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def check_tensor_list(api: str, name: str, value: object, length: int | None = None) -> list[torch.Tensor]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in value):
        raise TypeError(f"{api}: {name} must be a list of torch.Tensor, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise ValueError(f"{api}: {name} has {len(value)} tensors but the group has {length} ranks")
    return list(value)


def store(tensor: torch.Tensor, value: torch.Tensor) -> None:
    """Write ``value`` into ``tensor`` as a real backend does: behind autograd's back.

    gloo and NCCL write the memory directly, so autograd records nothing: a
    received parameter stays a leaf, a received tensor is not attached to the
    sender's graph, and gradients flow as if the op were not there. Writing
    through ``.data`` is that, also leaving the version counter alone, as the
    real backends do: ``.data`` is a tensor of its own that autograd does not
    track, and ``value`` is detached, so the copy records nothing (no
    ``no_grad`` needed, whose Python context manager cost more than the copy).
    """
    if value.requires_grad:
        value = value.detach()
    if value.shape != tensor.shape:
        value = value.reshape(tensor.shape)
    tensor.data.copy_(value)


def _clone(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [t.detach().clone() for t in tensors]


class CollectiveCall:
    """One rank's part of a collective: its arguments and the op's semantics."""

    name: ClassVar[str]

    def signature(self) -> str:
        raise NotImplementedError

    def inputs(self) -> list:
        return []

    def outputs(self) -> list:
        return []

    def read(self) -> list:
        return _clone(self.inputs())

    def read_blocked(self) -> list:
        """The inputs of a member blocked in the collective, read just before ``compute``.

        They cannot change before the results are written, so an op whose
        ``compute`` makes new tensors from them, read in full before any
        write, may take them as they are; every other op takes copies.
        """
        return self.read()

    @staticmethod
    def disagreement(calls: Sequence[CollectiveCall], ranks: Sequence[int]) -> str | None:
        """What the members' calls (of the global ``ranks``), of one signature, disagree on (None: nothing)."""
        return None

    @staticmethod
    def compute(calls: Sequence[CollectiveCall], inputs: Sequence[list]) -> list[list]:
        raise NotImplementedError

    def write(self, values: list) -> None:
        for tensor, value in zip(self.outputs(), values):
            store(tensor, value)


def _describe_all(tensors: Sequence[torch.Tensor]) -> str:
    if len(tensors) == 1:  # the usual case, without a generator
        return describe(tensors[0])
    return ", ".join(describe(t) for t in tensors)


class AllReduce(CollectiveCall):
    name = "all_reduce"

    def __init__(self, tensors: list[torch.Tensor], op: object) -> None:
        self.tensors, self.op = tensors, op_type(op)

    def signature(self) -> str:
        return f"all_reduce({_describe_all(self.tensors)}, op={op_name(self.op)})"

    def inputs(self) -> list:
        return self.tensors

    def outputs(self) -> list:
        return self.tensors

    def read_blocked(self) -> list:
        # compute folds them into new tensors (one member's own tensor is written back onto itself).
        return self.tensors

    @staticmethod
    def compute(calls: Sequence[AllReduce], inputs: Sequence[list]) -> list[list]:
        op = calls[0].op
        results = [reduce_tensors([values[i] for values in inputs], op) for i in range(len(inputs[0]))]
        return [results] * len(calls)


class Broadcast(CollectiveCall):
    name = "broadcast"

    def __init__(self, tensors: list[torch.Tensor], root: int, src: int) -> None:
        self.tensors, self.root, self.src = tensors, root, src

    def signature(self) -> str:
        return f"broadcast({_describe_all(self.tensors)}, src={self.src})"

    def inputs(self) -> list:
        return self.tensors

    def outputs(self) -> list:
        return self.tensors

    @staticmethod
    def compute(calls: Sequence[Broadcast], inputs: Sequence[list]) -> list[list]:
        return [inputs[calls[0].root]] * len(calls)


class Coalesced(CollectiveCall):
    """Several collectives of one kind issued as one (``*_coalesced``, FSDP's batched ops).

    They match, move and complete together, as one operation of the backend.
    """

    def __init__(self, name: str, calls: list[CollectiveCall]) -> None:
        self.name = name  # type: ignore[misc]
        self.calls = calls

    def signature(self) -> str:
        return f"{self.name}({'; '.join(call.signature() for call in self.calls)})"

    def inputs(self) -> list:
        return [t for call in self.calls for t in call.inputs()]

    def outputs(self) -> list:
        return [t for call in self.calls for t in call.outputs()]

    @staticmethod
    def compute(calls: Sequence[Coalesced], inputs: Sequence[list]) -> list[list]:
        results: list[list] = [[] for _ in calls]
        offsets = [0] * len(calls)
        for position, first in enumerate(calls[0].calls):
            parts = [member.calls[position] for member in calls]
            pieces = []
            for index, part in enumerate(parts):
                count = len(part.inputs())
                pieces.append(inputs[index][offsets[index] : offsets[index] + count])
                offsets[index] += count
            for index, values in enumerate(type(first).compute(parts, pieces)):
                results[index].extend(values)
        return results


class Reduce(CollectiveCall):
    name = "reduce"

    def __init__(self, tensor: torch.Tensor, root: int, dst: int, op: object, is_root: bool) -> None:
        self.tensor, self.root, self.dst, self.op, self.is_root = tensor, root, dst, op_type(op), is_root

    def signature(self) -> str:
        return f"reduce({describe(self.tensor)}, dst={self.dst}, op={op_name(self.op)})"

    def inputs(self) -> list:
        return [self.tensor]

    def outputs(self) -> list:
        return [self.tensor] if self.is_root else []

    @staticmethod
    def compute(calls: Sequence[Reduce], inputs: Sequence[list]) -> list[list]:
        result = reduce_tensors([values[0] for values in inputs], calls[0].op)
        return [[result] if call.is_root else [] for call in calls]


class AllGather(CollectiveCall):
    name = "all_gather"

    def __init__(self, tensor_list: list[torch.Tensor], tensor: torch.Tensor) -> None:
        self.tensor_list, self.tensor = tensor_list, tensor

    def signature(self) -> str:
        return f"all_gather({describe(self.tensor)})"

    def inputs(self) -> list:
        return [self.tensor]

    def outputs(self) -> list:
        return self.tensor_list

    @staticmethod
    def compute(calls: Sequence[AllGather], inputs: Sequence[list]) -> list[list]:
        gathered = [values[0] for values in inputs]
        return [gathered] * len(calls)


class AllGatherIntoTensor(CollectiveCall):
    name = "all_gather_into_tensor"

    def __init__(self, output: torch.Tensor, input: torch.Tensor) -> None:
        self.output, self.input = output, input

    def signature(self) -> str:
        return f"all_gather_into_tensor({describe(self.input)})"

    def inputs(self) -> list:
        return [self.input]

    def outputs(self) -> list:
        return [self.output]

    @staticmethod
    def compute(calls: Sequence[AllGatherIntoTensor], inputs: Sequence[list]) -> list[list]:
        # Concatenated and stacked outputs share one memory order.
        stacked = torch.stack([values[0] for values in inputs])
        return [[stacked.reshape(call.output.shape)] for call in calls]


class Gather(CollectiveCall):
    name = "gather"

    def __init__(self, tensor: torch.Tensor, gather_list: list[torch.Tensor], root: int, dst: int) -> None:
        self.tensor, self.gather_list, self.root, self.dst = tensor, gather_list, root, dst

    def signature(self) -> str:
        return f"gather({describe(self.tensor)}, dst={self.dst})"

    def inputs(self) -> list:
        return [self.tensor]

    def outputs(self) -> list:
        return self.gather_list

    @staticmethod
    def compute(calls: Sequence[Gather], inputs: Sequence[list]) -> list[list]:
        gathered = [values[0] for values in inputs]
        return [gathered if call.gather_list else [] for call in calls]


class Scatter(CollectiveCall):
    name = "scatter"

    def __init__(self, tensor: torch.Tensor, scatter_list: list[torch.Tensor], root: int, src: int) -> None:
        self.tensor, self.scatter_list, self.root, self.src = tensor, scatter_list, root, src

    def signature(self) -> str:
        return f"scatter({describe(self.tensor)}, src={self.src})"

    def inputs(self) -> list:
        return self.scatter_list

    def outputs(self) -> list:
        return [self.tensor]

    @staticmethod
    def compute(calls: Sequence[Scatter], inputs: Sequence[list]) -> list[list]:
        pieces = inputs[calls[0].root]
        return [[pieces[index]] for index in range(len(calls))]


class ReduceScatter(CollectiveCall):
    name = "reduce_scatter"

    def __init__(self, output: torch.Tensor, input_list: list[torch.Tensor], op: object) -> None:
        self.output, self.input_list, self.op = output, input_list, op_type(op)

    def signature(self) -> str:
        return f"reduce_scatter({describe(self.output)}, op={op_name(self.op)})"

    def inputs(self) -> list:
        return self.input_list

    def outputs(self) -> list:
        return [self.output]

    @staticmethod
    def compute(calls: Sequence[ReduceScatter], inputs: Sequence[list]) -> list[list]:
        op = calls[0].op
        return [[reduce_tensors([values[index] for values in inputs], op)] for index in range(len(calls))]


class ReduceScatterTensor(CollectiveCall):
    name = "reduce_scatter_tensor"

    def __init__(self, output: torch.Tensor, input: torch.Tensor, op: object) -> None:
        self.output, self.input, self.op = output, input, op_type(op)

    def signature(self) -> str:
        return f"reduce_scatter_tensor({describe(self.output)}, {describe(self.input)}, op={op_name(self.op)})"

    def inputs(self) -> list:
        return [self.input]

    def outputs(self) -> list:
        return [self.output]

    @staticmethod
    def compute(calls: Sequence[ReduceScatterTensor], inputs: Sequence[list]) -> list[list]:
        size = len(calls)
        total = reduce_tensors([values[0].reshape(size, -1) for values in inputs], calls[0].op)
        return [[total[index].reshape(call.output.shape)] for index, call in enumerate(calls)]


class AllToAll(CollectiveCall):
    name = "all_to_all"

    def __init__(self, output_list: list[torch.Tensor], input_list: list[torch.Tensor]) -> None:
        self.output_list, self.input_list = output_list, input_list

    def signature(self) -> str:
        dtype = str(self.input_list[0].dtype).removeprefix("torch.") if self.input_list else "-"
        return f"all_to_all({len(self.input_list)} x {dtype})"

    def inputs(self) -> list:
        return self.input_list

    def outputs(self) -> list:
        return self.output_list

    @staticmethod
    def compute(calls: Sequence[AllToAll], inputs: Sequence[list]) -> list[list]:
        return [[values[index] for values in inputs] for index in range(len(calls))]


class AllToAllSingle(CollectiveCall):
    name = "all_to_all_single"

    def __init__(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int] | None,
        input_split_sizes: list[int] | None,
    ) -> None:
        self.output, self.input = output, input
        self.output_split_sizes, self.input_split_sizes = output_split_sizes, input_split_sizes

    def signature(self) -> str:
        if self.output_split_sizes or self.input_split_sizes:
            return f"all_to_all_single({str(self.input.dtype).removeprefix('torch.')}, uneven splits)"
        return f"all_to_all_single({describe(self.input)})"

    def inputs(self) -> list:
        return [self.input]

    def outputs(self) -> list:
        return [self.output]

    @staticmethod
    def disagreement(calls: Sequence[AllToAllSingle], ranks: Sequence[int]) -> str | None:
        """Split sizes must pair up: what member i sends member j is what j expects from i.

        gloo runs a mismatch to the end with whatever lands in the buffers,
        NCCL hangs or corrupts them; either way the program's data is wrong.
        """
        size = len(calls)
        sent = [call.input_split_sizes or [call.input.shape[0] // size] * size for call in calls]
        expected = [call.output_split_sizes or [call.output.shape[0] // size] * size for call in calls]
        for source in range(size):
            for dest in range(size):
                if sent[source][dest] != expected[dest][source]:
                    return (
                        f"split sizes: rank {ranks[source]} sends {sent[source][dest]} rows to rank {ranks[dest]}, "
                        f"which expects {expected[dest][source]}"
                    )
        return None

    @staticmethod
    def compute(calls: Sequence[AllToAllSingle], inputs: Sequence[list]) -> list[list]:
        size = len(calls)
        pieces = []
        for call, values in zip(calls, inputs):
            tensor = values[0]
            splits = call.input_split_sizes or [tensor.shape[0] // size] * size
            pieces.append(torch.split(tensor, list(splits), dim=0))
        return [
            [torch.cat([rows[index] for rows in pieces]).reshape(call.output.shape)] for index, call in enumerate(calls)
        ]


class Barrier(CollectiveCall):
    name = "barrier"

    def signature(self) -> str:
        return "barrier()"

    @staticmethod
    def compute(calls: Sequence[Barrier], inputs: Sequence[list]) -> list[list]:
        return [[] for _ in calls]


class MonitoredBarrier(Barrier):
    name = "monitored_barrier"

    def signature(self) -> str:
        return "monitored_barrier()"
