"""peerreduce for PyTorch models.

    import torch.distributed as dist
    import peerreduce.torch as prt
    dist.init_process_group("nccl")              # or gloo: peerreduce only needs it to meet
    prt.all_reduce(tensor)                       # in place, on the current CUDA stream
    prt.all_reduce_coalesced([g1, g2, g3])       # many small tensors in few launches

A communicator is made for each process group the first time it is used (collective: every rank of the
group makes the same first call) and cached until `close()`. The torch.distributed group carries only its
creation; the data goes through peerreduce.

`register_backend()` also makes peerreduce a torch.distributed backend, where the installed PyTorch lets
Python define one: `dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")`. Its all_reduce is
peerreduce's; every other collective raises NotImplementedError naming the call (use an NCCL group for
those).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import torch
import torch.distributed as dist

from . import errors
from .bootstrap import TorchProcessGroupBootstrap, TorchStoreBootstrap
from .communicator import Communicator

_OPS = {
    dist.ReduceOp.SUM: "sum",
    dist.ReduceOp.PRODUCT: "prod",
    dist.ReduceOp.MIN: "min",
    dist.ReduceOp.MAX: "max",
}
if hasattr(dist.ReduceOp, "AVG"):
    _OPS[dist.ReduceOp.AVG] = "avg"

_lock = threading.Lock()
_communicators: dict[Any, Communicator] = {}


def _op_name(op: Any) -> str:
    if isinstance(op, str):
        return op
    for known, name in _OPS.items():
        if op == known:
            return name
    raise errors.InvalidArgumentError(f"reduce op {op} is not one peerreduce has (sum, prod, min, max, avg)")


def _key(group) -> Any:
    return "default" if group is None or group == dist.GroupMember.WORLD else group


def communicator(group=None, config: dict | None = None) -> Communicator:
    """This rank's communicator for `group` (the default group when None), made on first use."""
    key = _key(group)
    with _lock:
        comm = _communicators.get(key)
        if comm is None:
            rank, size = dist.get_rank(group), dist.get_world_size(group)
            comm = Communicator(rank, size, TorchProcessGroupBootstrap(group), config)
            _communicators[key] = comm
        return comm


def all_reduce(tensor: torch.Tensor, op: Any = dist.ReduceOp.SUM, group=None) -> torch.Tensor:
    """Reduces `tensor` in place across `group` on the current CUDA stream; returns it."""
    return communicator(group).all_reduce(tensor, op=_op_name(op))


def all_reduce_coalesced(tensors: Sequence[torch.Tensor], op: Any = dist.ReduceOp.SUM, group=None):
    """Reduces every tensor in place (one dtype) in as few launches as possible; returns them."""
    return communicator(group).all_reduce_batch(list(tensors), op=_op_name(op))


def close(group=None) -> None:
    """Ends the cached communicator of `group` (all ranks, at the same point)."""
    with _lock:
        comm = _communicators.pop(_key(group), None)
    if comm is not None:
        comm.close()


def close_all() -> None:
    with _lock:
        comms = list(_communicators.values())
        _communicators.clear()
    for comm in comms:
        comm.close()


# --- the torch.distributed backend


def _completed_work(tensors):
    future = torch.futures.Future()
    future.set_result(tensors)
    create = getattr(torch._C._distributed_c10d, "_create_work_from_future", None)
    if create is None:
        raise errors.UnsupportedError("this PyTorch cannot wrap a future as a collective's Work; call "
                                      "peerreduce.torch.all_reduce instead of the backend")
    return create(future)


class ProcessGroup(dist.ProcessGroup):
    """A torch.distributed process group whose all_reduce is peerreduce's (made by register_backend's
    creator; any other collective raises NotImplementedError naming it)."""

    def __init__(self, store, rank: int, size: int, timeout=None):
        super().__init__(rank, size)
        self._comm = Communicator(rank, size, TorchStoreBootstrap(store, rank, size, prefix="peerreduce-backend"))

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return "peerreduce"

    def allreduce(self, tensors, opts=None):
        if not isinstance(tensors, (list, tuple)):
            tensors = [tensors]
        op = _op_name(getattr(opts, "reduceOp", dist.ReduceOp.SUM)) if opts is not None else "sum"
        if len(tensors) == 1:
            self._comm.all_reduce(tensors[0], op=op)
        else:
            self._comm.all_reduce_batch(list(tensors), op=op)
        return _completed_work(tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(list(tensors), opts)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def unsupported(*args, **kwargs):
            raise NotImplementedError(f"torch.distributed {name} is not supported by the peerreduce backend (it "
                                      f"takes all_reduce only); use an NCCL group for {name}")

        return unsupported


def register_backend(name: str = "peerreduce") -> bool:
    """Registers the backend under `name` for CUDA devices; False (and nothing registered) where the
    installed PyTorch has no Backend.register_backend."""
    register = getattr(dist.Backend, "register_backend", None)
    if register is None:
        return False
    if name.upper() in getattr(dist.Backend, "_plugins", {}) or hasattr(dist.Backend, name.upper()):
        return True

    def create(store, rank, size, timeout):
        return ProcessGroup(store, rank, size, timeout)

    try:
        register(name, create, devices=["cuda"])
    except TypeError:  # PyTorch before the devices argument
        register(name, create)
    return True
