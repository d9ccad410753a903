"""peerreduce's collectives as torch.library custom ops (peerreduce::all_reduce, ::reduce_scatter_tensor,
::all_gather_into_tensor, ::broadcast), so torch.compile traces them as ops of the graph instead of
breaking it at a ctypes call. Each mutates its output in place and returns nothing; its fake
implementation (what tracing runs on tensors without data) does nothing, since outputs keep their
shapes. A group travels by name (_torch_groups.name_of). Where this PyTorch has no
torch.library.custom_op (before 2.4), the same functions are called directly."""

# No `from __future__ import annotations`: torch.library reads the functions' annotations as types.
from types import SimpleNamespace

import torch

from ._torch_groups import communicator, named


def _all_reduce(tensor: torch.Tensor, op: str, group: str) -> None:
    communicator(named(group)).all_reduce(tensor, op=op)


def _reduce_scatter_tensor(output: torch.Tensor, input: torch.Tensor, op: str, group: str) -> None:  # noqa: A002
    communicator(named(group)).reduce_scatter(input, out=output, op=op)


def _all_gather_into_tensor(output: torch.Tensor, input: torch.Tensor, group: str) -> None:  # noqa: A002
    communicator(named(group)).all_gather(input, out=output)


def _broadcast(tensor: torch.Tensor, root: int, group: str) -> None:
    communicator(named(group)).broadcast(tensor, root=root)


# Each op: its function and the arguments it writes.
_DEFINITIONS = (
    (_all_reduce, ("tensor",)),
    (_reduce_scatter_tensor, ("output",)),
    (_all_gather_into_tensor, ("output",)),
    (_broadcast, ("tensor",)),
)


def _register(function, mutates: tuple):
    op = torch.library.custom_op(f"peerreduce::{function.__name__.lstrip('_')}", mutates_args=mutates)(function)

    def fake(*args, **kwargs) -> None:  # outputs are written in place and keep their shapes: nothing to describe
        return None

    op.register_fake(fake)
    return op


def _operations() -> SimpleNamespace:
    if not hasattr(torch.library, "custom_op"):
        return SimpleNamespace(**{f.__name__.lstrip("_"): f for f, _ in _DEFINITIONS})
    return SimpleNamespace(**{f.__name__.lstrip("_"): _register(f, mutates) for f, mutates in _DEFINITIONS})


ops = _operations()
