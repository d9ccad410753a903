"""peerreduce as a torch.distributed backend: a ProcessGroup whose collectives on CUDA tensors are
peerreduce's (register_backend makes it). DistributedDataParallel and FSDP (FullyShardedDataParallel and
fully_shard) call allreduce, broadcast, allgather, _allgather_base, reduce_scatter, _reduce_scatter_base,
their coalesced forms and barrier, with SUM, AVG or (FSDP2 given a gradient divide factor) PREMUL_SUM;
each enqueues on the current CUDA stream and returns a Work that completes with the GPU work
(_torch_work.stream_work). Collectives on CPU tensors go to a gloo group the process group keeps. The
group keeps the name torch.distributed gives it, which DeviceMesh (so fully_shard and DTensor) and the
functional collectives find it by."""

from __future__ import annotations

import os
from typing import Any

import torch.distributed as dist

from . import errors
from ._torch_work import completed_work, gather_into_list, op_name, premul_factor, reduce_from_list, stream_work
from .bootstrap import TorchStoreBootstrap
from .communicator import Communicator

# The collectives peerreduce does not have (torch's names for them): CPU tensors go to gloo, CUDA
# tensors get a NotImplementedError naming the call.
_OTHER_COLLECTIVES = ("alltoall", "alltoall_base", "all_to_all_single", "gather", "reduce", "scatter", "send",
                      "recv", "recv_anysource", "monitored_barrier")


def _tensors_in(args) -> list:
    """Every tensor among a collective's arguments (tensors, lists of them, lists of lists)."""
    found = []
    for a in args:
        if hasattr(a, "is_cuda") and hasattr(a, "data_ptr"):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(_tensors_in(a))
    return found


def _reduce_op(opts, outputs) -> tuple:
    """peerreduce's op for a collective's options, and the factor of a PREMUL_SUM (None for the others).
    PREMUL_SUM(f) (NCCL's: every input multiplied by f, then summed) runs as a sum whose outputs are then
    multiplied by f on the same stream: the same result within rounding, for floating outputs only."""
    op = getattr(opts, "reduceOp", dist.ReduceOp.SUM) if opts is not None else dist.ReduceOp.SUM
    factor = premul_factor(op)
    if factor is None:
        return op_name(op), None
    if not all(t.is_floating_point() for t in outputs):
        raise errors.InvalidArgumentError("reduce op PREMUL_SUM on integer tensors: the peerreduce backend "
                                          "scales a sum by the factor, which needs floating outputs")
    return "sum", factor


def _scaled(outputs, factor) -> None:
    """A PREMUL_SUM's factor applied to its sums (enqueued after them on the current stream)."""
    if factor is not None:
        for out in outputs:
            out.mul_(factor)


# The longest wait peerreduce accepts (PEERREDUCE_TIMEOUT_MS's upper bound: one day).
_MAX_TIMEOUT_MS = 86_400_000


def timeout_config(timeout) -> dict | None:
    """The communicator's settings for a process group made with `timeout` (a datetime.timedelta, as
    init_process_group and new_group pass it): every wait of its operations bounded by the group's timeout,
    as the process group's own watchdog bounds NCCL's, so a rank that is minutes late (a checkpoint, a slow
    data loader) is waited for as long as torch.distributed would. None (the library's default,
    PEERREDUCE_TIMEOUT_MS or 30 s) where no timeout is given, and where PEERREDUCE_TIMEOUT_MS is set in the
    environment: an explicit setting wins. Clamped to 1 ms .. one day."""
    if timeout is None or os.environ.get("PEERREDUCE_TIMEOUT_MS"):
        return None
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    return {"PEERREDUCE_TIMEOUT_MS": max(1, min(_MAX_TIMEOUT_MS, int(seconds * 1000)))}


class ProcessGroup(dist.ProcessGroup):
    """A torch.distributed process group whose collectives on CUDA tensors are peerreduce's (made by
    register_backend's creator). PyTorch lets a process group defined in Python stand only for the whole
    group (with backend="cpu:gloo,cuda:peerreduce" it replaces gloo's too), so this one carries a gloo
    group of its own: every collective on CPU tensors goes there. The communicator is made here, at
    init_process_group / new_group, and every collective's plans are built (Communicator.prepare), so the
    first collective may be inside CUDA graph capture."""

    def __init__(self, store, rank: int, size: int, timeout=None):
        super().__init__(rank, size)
        self._group_name = None
        self._comm = Communicator(rank, size, TorchStoreBootstrap(store, rank, size, prefix="peerreduce-backend"),
                                  timeout_config(timeout))
        self._comm.prepare()
        gloo_store = dist.PrefixStore("peerreduce-gloo", store)
        self._gloo = (dist.ProcessGroupGloo(gloo_store, rank, size, timeout) if timeout is not None
                      else dist.ProcessGroupGloo(gloo_store, rank, size))

    @property
    def communicator(self) -> Communicator:
        return self._comm

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return "peerreduce"

    # The group's name. torch.distributed names every group it makes (_new_process_group_helper calls
    # pg._set_group_name(name), then registers the group under it), and DeviceMesh, fully_shard, DTensor
    # and the functional collectives find the group by that name (pg.group_name). torch's ProcessGroup
    # keeps the name in its registered backends, and a process group defined in Python has none: there
    # the name was never kept ("ProcessGroup name not set"). So this group keeps it; getGroupName and
    # setGroupName are the same for PyTorch's C++ side, where its Python process groups forward them.

    @property
    def group_name(self) -> str:
        if self._group_name is None:
            raise errors.UnsupportedError("this peerreduce process group has no name: torch.distributed names "
                                          "the groups that init_process_group and new_group make")
        return self._group_name

    def _set_group_name(self, name: str) -> None:
        self._group_name = name

    def getGroupName(self) -> str:  # noqa: N802 - torch's name
        return self.group_name

    def setGroupName(self, name: str) -> None:  # noqa: N802 - torch's name
        self._set_group_name(name)

    def _on_gloo(self, name: str, *args) -> bool:
        """True when every tensor of the call is on the CPU (gloo's); refuses CPU and CUDA mixed."""
        cuda = [t.is_cuda for t in _tensors_in(args)]
        if cuda and all(cuda):
            return False
        if any(cuda):
            raise errors.InvalidArgumentError(f"one {name} mixes CPU and CUDA tensors; pass each kind in a call "
                                              "of its own")
        return True

    def _gloo_call(self, name: str, *args):
        """gloo's collective `name`, without a trailing opts of None (gloo's bindings take none then)."""
        if args and args[-1] is None:
            args = args[:-1]
        return getattr(self._gloo, name)(*args)

    # --- the collectives peerreduce has

    def allreduce(self, tensors, opts=None):
        listed = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
        if self._on_gloo("all_reduce", listed):
            return self._gloo_call("allreduce", listed, opts)
        op, factor = _reduce_op(opts, listed)
        if len(listed) == 1:
            self._comm.all_reduce(listed[0], op=op)
        else:
            self._comm.all_reduce_batch(listed, op=op)
        _scaled(listed, factor)
        return stream_work(listed, listed)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(list(tensors), opts)

    def broadcast(self, tensors, opts=None):
        if self._on_gloo("broadcast", tensors):
            return self._gloo_call("broadcast", tensors, opts)
        root = opts.rootRank if opts is not None else 0
        for tensor in tensors:
            self._comm.broadcast(tensor, root=root)
        return stream_work(list(tensors), tensors)

    def _allgather_base(self, output, input, opts=None):  # noqa: A002 - torch's names
        if self._on_gloo("all_gather_into_tensor", output, input):
            return self._gloo_call("_allgather_base", output, input, opts)
        self._comm.all_gather(input, out=output)
        return stream_work([output], [output])

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        if self._on_gloo("all_gather_into_tensor", outputs, inputs):
            return self._gloo_call("allgather_into_tensor_coalesced", outputs, inputs, opts)
        for output, tensor in zip(outputs, inputs):
            self._comm.all_gather(tensor, out=output)
        return stream_work(list(outputs), outputs)

    def allgather(self, output_lists, inputs, opts=None):
        if self._on_gloo("all_gather", output_lists, inputs):
            return self._gloo_call("allgather", output_lists, inputs, opts)
        for outputs, tensor in zip(output_lists, inputs):
            gather_into_list(lambda flat, t: self._comm.all_gather(t, out=flat), outputs, tensor, self.size())
        return stream_work(list(output_lists), inputs)

    def allgather_coalesced(self, output_lists, inputs, opts=None):
        return self.allgather(output_lists, inputs, opts)

    def _reduce_scatter_base(self, output, input, opts=None):  # noqa: A002 - torch's names
        if self._on_gloo("reduce_scatter_tensor", output, input):
            return self._gloo_call("_reduce_scatter_base", output, input, opts)
        op, factor = _reduce_op(opts, [output])
        self._comm.reduce_scatter(input, out=output, op=op)
        _scaled([output], factor)
        return stream_work([output], [output])

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        if self._on_gloo("reduce_scatter_tensor", outputs, inputs):
            return self._gloo_call("reduce_scatter_tensor_coalesced", outputs, inputs, opts)
        op, factor = _reduce_op(opts, outputs)
        for output, tensor in zip(outputs, inputs):
            self._comm.reduce_scatter(tensor, out=output, op=op)
        _scaled(outputs, factor)
        return stream_work(list(outputs), outputs)

    def reduce_scatter(self, outputs, input_lists, opts=None):
        if self._on_gloo("reduce_scatter", outputs, input_lists):
            return self._gloo_call("reduce_scatter", outputs, input_lists, opts)
        op, factor = _reduce_op(opts, outputs)
        for output, inputs in zip(outputs, input_lists):
            reduce_from_list(lambda out, flat: self._comm.reduce_scatter(flat, out=out, op=op), output, inputs,
                             self.size())
        _scaled(outputs, factor)
        return stream_work(list(outputs), outputs)

    def barrier(self, opts=None):
        """torch's barrier blocks the host until every rank reached it: a peerreduce barrier that waits."""
        self._comm.barrier(wait=True)
        return completed_work([])

    # torch's newer names for the same overrides.
    all_gather_single = _allgather_base
    all_gather_single_coalesced = allgather_into_tensor_coalesced
    reduce_scatter_single = _reduce_scatter_base
    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced


def _other_collective(name: str):
    def collective(self, *args, **kwargs):
        if self._on_gloo(name, *args) and hasattr(self._gloo, name):
            return getattr(self._gloo, name)(*args, **kwargs)
        raise NotImplementedError(f"torch.distributed {name} is not supported by the peerreduce backend on CUDA "
                                  f"tensors; use an NCCL group for {name}")

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


def peerreduce_communicator(group: Any) -> Communicator | None:
    """The communicator a peerreduce process group made at its creation; None for other groups."""
    return group.communicator if isinstance(group, ProcessGroup) else None
