"""peerreduce for PyTorch models.

    import torch.distributed as dist
    import peerreduce.torch as prt
    dist.init_process_group("nccl")              # or gloo: peerreduce only needs it to meet
    prt.communicator()                           # made now (collective): before any graph capture
    prt.all_reduce(tensor)                       # in place, on the current CUDA stream
    prt.reduce_scatter_tensor(out, tensor)       # torch.distributed's signatures, without async_op
    prt.all_reduce_coalesced([g1, g2, g3])       # many small tensors in few launches

The functions take torch.distributed's arguments and enqueue on the current CUDA stream (as NCCL's
process group's work runs in stream order: no async_op, no Work). `op` is a dist.ReduceOp (SUM, PRODUCT,
MIN, MAX, AVG) or its name ("sum", "prod", "min", "max", "avg"; the default is "sum"). all_reduce,
reduce_scatter_tensor, all_gather_into_tensor and broadcast are torch.library custom ops (peerreduce::*),
so torch.compile traces them without a graph break, with the op by name or, on PyTorch 2.7 and later, as
a dist.ReduceOp (_torch_work.REDUCE_OPS_ARE_CONSTANTS); the list forms and all_reduce_coalesced run eagerly.

`register_backend()` also makes peerreduce a torch.distributed backend, where the installed PyTorch lets
Python define one: `dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")` (or "peerreduce"). Its
collectives on CUDA tensors are peerreduce's (what DistributedDataParallel, FullyShardedDataParallel and
fully_shard use); collectives on CPU tensors go to a gloo group it keeps; all_to_all, gather, scatter,
reduce and point-to-point on CUDA tensors raise NotImplementedError naming the call.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
import torch.distributed as dist

from ._torch_backend import ProcessGroup, register_backend
from ._torch_groups import close, close_all, communicator, name_of
from ._torch_ops import ops
from ._torch_work import gather_into_list, op_argument, op_name, reduce_from_list

__all__ = ["ProcessGroup", "all_gather", "all_gather_into_tensor", "all_reduce", "all_reduce_coalesced", "barrier",
           "broadcast", "close", "close_all", "communicator", "reduce_scatter", "reduce_scatter_tensor",
           "register_backend"]


def all_reduce(tensor: torch.Tensor, op: Any = "sum", group=None) -> torch.Tensor:
    """Reduces `tensor` in place across `group`; returns it."""
    ops.all_reduce(tensor, op_argument(op), name_of(group))
    return tensor


def all_reduce_coalesced(tensors: Sequence[torch.Tensor], op: Any = "sum", group=None):
    """Reduces every tensor in place (one dtype) in as few launches as possible; returns them."""
    return communicator(group).all_reduce_batch(list(tensors), op=op_name(op))


def reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor, op: Any = "sum",  # noqa: A002
                          group=None) -> torch.Tensor:
    """Block r of every rank's `input` (world size x output's elements), reduced, lands in rank r's
    `output`; returns it."""
    ops.reduce_scatter_tensor(output, input, op_argument(op), name_of(group))
    return output


def all_gather_into_tensor(output: torch.Tensor, input: torch.Tensor, group=None) -> torch.Tensor:  # noqa: A002
    """Rank r's `input` lands in block r of every rank's `output` (world size x input's elements)."""
    ops.all_gather_into_tensor(output, input, name_of(group))
    return output


def broadcast(tensor: torch.Tensor, src: int = 0, group=None) -> torch.Tensor:
    """Rank `src`'s `tensor` (a global rank, as torch.distributed's) into every rank's `tensor`."""
    root = src if group is None else dist.get_group_rank(group, src)
    ops.broadcast(tensor, root, name_of(group))
    return tensor


def reduce_scatter(output: torch.Tensor, input_list: Sequence[torch.Tensor], op: Any = "sum",
                   group=None) -> torch.Tensor:
    """input_list[r] of every rank, reduced, lands in rank r's `output` (copied through one buffer)."""
    reduce_from_list(lambda out, flat: reduce_scatter_tensor(out, flat, op, group), output, input_list,
                     communicator(group).world_size)
    return output


def all_gather(tensor_list: Sequence[torch.Tensor], tensor: torch.Tensor, group=None) -> Sequence[torch.Tensor]:
    """Rank r's `tensor` lands in tensor_list[r] of every rank (gathered in one buffer, then copied)."""
    gather_into_list(lambda flat, t: all_gather_into_tensor(flat, t, group), tensor_list, tensor,
                     communicator(group).world_size)
    return tensor_list


def barrier(group=None) -> None:
    """Returns once every rank of `group` reached it, and orders the GPU work around it."""
    communicator(group).barrier(wait=True)
