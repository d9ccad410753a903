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
Python define one: `dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")` (or "peerreduce"). Its
all_reduce of CUDA tensors is peerreduce's; every collective on CPU tensors goes to a gloo group it keeps;
any other collective on CUDA tensors raises NotImplementedError naming the call (use an NCCL group for
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


# The process group's collectives other than all_reduce (torch's names for them).
_OTHER_COLLECTIVES = (
    "allgather", "allgather_coalesced", "allgather_into_tensor_coalesced", "_allgather_base", "alltoall",
    "alltoall_base", "barrier", "broadcast", "gather", "reduce", "reduce_scatter", "_reduce_scatter_base",
    "reduce_scatter_tensor_coalesced", "scatter", "send", "recv", "recv_anysource", "monitored_barrier")


def _tensors_in(args) -> list:
    """Every tensor among a collective's arguments (tensors, lists of them, lists of lists)."""
    found = []
    for a in args:
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(_tensors_in(a))
    return found


class ProcessGroup(dist.ProcessGroup):
    """A torch.distributed process group whose all_reduce of CUDA tensors is peerreduce's (made by
    register_backend's creator). PyTorch lets a process group defined in Python stand only for the whole
    group (with backend="cpu:gloo,cuda:peerreduce" it replaces gloo's too), so this one carries a gloo
    group of its own for CPU tensors: every collective on CPU tensors goes to gloo; any other collective
    on CUDA tensors raises NotImplementedError naming it (use an NCCL group for those)."""

    def __init__(self, store, rank: int, size: int, timeout=None):
        super().__init__(rank, size)
        self._comm = Communicator(rank, size, TorchStoreBootstrap(store, rank, size, prefix="peerreduce-backend"))
        gloo_store = dist.PrefixStore("peerreduce-gloo", store)
        self._gloo = (dist.ProcessGroupGloo(gloo_store, rank, size, timeout) if timeout is not None
                      else dist.ProcessGroupGloo(gloo_store, rank, size))

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return "peerreduce"

    def allreduce(self, tensors, opts=None):
        listed = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
        if all(not t.is_cuda for t in listed):
            return self._gloo.allreduce(listed, opts) if opts is not None else self._gloo.allreduce(listed)
        if not all(t.is_cuda for t in listed):
            raise errors.InvalidArgumentError("one all_reduce mixes CPU and CUDA tensors; reduce each kind "
                                              "in a call of its own")
        op = _op_name(getattr(opts, "reduceOp", dist.ReduceOp.SUM)) if opts is not None else "sum"
        if len(listed) == 1:
            self._comm.all_reduce(listed[0], op=op)
        else:
            self._comm.all_reduce_batch(listed, op=op)
        return _completed_work(listed)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(list(tensors), opts)


def _other_collective(name: str):
    def collective(self, *args, **kwargs):
        tensors = _tensors_in(args)
        if tensors and all(not t.is_cuda for t in tensors) and hasattr(self._gloo, name):
            return getattr(self._gloo, name)(*args, **kwargs)
        raise NotImplementedError(f"torch.distributed {name} is not supported by the peerreduce backend on CUDA "
                                  f"tensors (it takes all_reduce only); use an NCCL group for {name}")

    collective.__name__ = name
    return collective


# Real methods, so torch's C++ process group finds them as the Python overrides of its collectives.
for _name in _OTHER_COLLECTIVES:
    setattr(ProcessGroup, _name, _other_collective(_name))


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
