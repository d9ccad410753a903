"""Communicator: one rank's handle on a world of ranks that reduce together (the C library's prComm_t).

Operations enqueue on a stream and return, as NCCL's do: on GPUs the current CUDA stream of the tensor's
device (or `stream`); on the simulator the work runs at `synchronize()` (collective there: every rank's
thread calls it) or at `SimWorld.run()`. Results are bitwise identical on every rank and every rerun.

Errors are `peerreduce.Error` subclasses carrying the library's code and message; a failed call changes
nothing and leaves nothing behind.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

from . import _buffers, _native, errors
from .bootstrap import Bootstrap

# The color of a rank that takes part in split() but joins no new communicator (PR_SPLIT_NOCOLOR).
SPLIT_NOCOLOR = -1


def _config_buffer(config: dict | None):
    """NULL for the defaults (with the PEERREDUCE_* environment), else a prConfig_t the library filled."""
    if not config:
        return None
    size = _native.library().prConfigSize()
    buffer = ctypes.create_string_buffer(size)
    _native.call("prConfigInitSized", buffer, size)
    for name, value in config.items():
        text = ("1" if value else "0") if isinstance(value, bool) else str(value)
        _native.call("prConfigSet", buffer, str(name).encode(), text.encode())
    return buffer


class RegisteredBuffer:
    """A buffer registered with every peer (Communicator.register); deregister() is collective."""

    def __init__(self, comm: "Communicator", handle: ctypes.c_void_p, keep: Any):
        self._comm, self._handle, self._keep = comm, handle, keep

    def deregister(self) -> None:
        if self._handle is not None:
            _native.call("prCommDeregisterBuffer", self._comm._live(), self._handle)
            self._handle = None

    def __enter__(self) -> "RegisteredBuffer":
        return self

    def __exit__(self, *exc) -> None:
        self.deregister()


class Communicator:
    """Rank `rank` of `world_size` (1..64), created collectively: every rank calls this with the same
    world size and configuration and its own bootstrap (see peerreduce.bootstrap)."""

    def __init__(self, rank: int, world_size: int, bootstrap: Bootstrap, config: dict | None = None):
        if not isinstance(bootstrap, Bootstrap):
            raise errors.InvalidArgumentError(f"bootstrap is a {type(bootstrap).__name__}; pass a peerreduce "
                                              "bootstrap (SimWorld.bootstrap(), CallbackBootstrap, ...)")
        self._handle: ctypes.c_void_p | None = None
        settings = _config_buffer(config)
        opened = bootstrap._open(int(rank), int(world_size))
        try:
            handle = ctypes.c_void_p()
            try:
                _native.call("prCommInitRank", ctypes.byref(handle), int(world_size), int(rank), opened, settings)
            except errors.Error as e:
                cause = bootstrap._failure()
                if cause is not None:
                    raise e from cause
                raise
        finally:
            _native.call("prBootstrapDestroy", opened)  # the communicator keeps what it needs
        self._handle = handle
        self._owner = bootstrap  # keeps the bootstrap's callbacks (and a simulated world) alive
        self._on_host, self._token = bootstrap._host_memory, None

    @classmethod
    def _adopt(cls, handle: ctypes.c_void_p, owner: Any) -> "Communicator":
        comm = cls.__new__(cls)
        comm._handle, comm._owner = handle, owner
        comm._on_host, comm._token = True, None  # only simulated worlds hand out handles made at once
        return comm

    # --- identity and lifetime

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise errors.InvalidArgumentError("this communicator was closed; make a new one")
        return self._handle

    @property
    def rank(self) -> int:
        value = ctypes.c_int()
        _native.call("prCommRank", self._live(), ctypes.byref(value))
        return value.value

    @property
    def world_size(self) -> int:
        value = ctypes.c_int()
        _native.call("prCommSize", self._live(), ctypes.byref(value))
        return value.value

    @property
    def device(self) -> int:
        """The GPU this communicator uses (by default the device current when it was made, as NCCL's);
        -1 on the simulator."""
        value = ctypes.c_int()
        _native.call("prCommDevice", self._live(), ctypes.byref(value))
        return value.value

    def split(self, color: int | None, key: int = 0, config: dict | None = None) -> "Communicator | None":
        """NCCL's ncclCommSplit (prCommSplit). Collective: every rank of this communicator calls it, each on a
        thread of its own. The ranks passing the same color (0 or more) form a new communicator, ranked by
        `key` (equal keys: by rank here); color None takes part but joins none and gets None. The new one runs
        where this one does (a simulated one on a world of its own: complete its work with synchronize() on
        every rank's thread) and needs nothing of this one afterwards. config None: this communicator's."""
        settings = _config_buffer(config)
        handle = ctypes.c_void_p()
        _native.call("prCommSplit", self._live(), SPLIT_NOCOLOR if color is None else int(color), int(key),
                     ctypes.byref(handle), settings)
        if not handle.value:
            return None
        child = Communicator._adopt(handle, None)  # the library's child holds all it needs
        child._on_host = self._on_host
        return child

    def close(self) -> None:
        """Ends the communicator (complete its operations first). Safe to call twice."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _native.call("prCommDestroy", handle)

    def abort(self) -> None:
        """Ends every wait promptly; every later call raises AbortedError. Safe from any thread."""
        _native.call("prCommAbort", self._live())

    def __enter__(self) -> "Communicator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    # --- operations

    def _stream(self, buffer: _buffers.Buffer, stream: Any) -> int | None:
        """The stream handle an operation on `buffer` is enqueued on: `stream` (a torch stream or a handle),
        else the current CUDA stream of the buffer's device; none for host memory (the simulator)."""
        if stream is not None:
            return int(getattr(stream, "cuda_stream", stream))
        if buffer.device >= 0:
            import torch
            return torch.cuda.current_stream(buffer.device).cuda_stream
        return None

    def all_reduce(self, tensor: Any, op: str = "sum", out: Any = None, stream: Any = None) -> Any:
        """Reduces `tensor` across ranks with `op` (sum, prod, min, max, avg) into `out` (in place when
        None) and returns the result's tensor. Enqueued on `stream` (default: the current CUDA stream)."""
        send = _buffers.describe(tensor, "tensor")
        target = tensor if out is None else out
        recv = send if out is None else _buffers.describe(out, "out")
        _buffers.writable(target, "out" if out is not None else "tensor")
        if recv.dtype != send.dtype or recv.count != send.count or recv.device != send.device:
            raise errors.InvalidArgumentError(
                f"out holds {recv.count} {_buffers.DTYPE_NAMES[recv.dtype]} on device {recv.device}; tensor holds "
                f"{send.count} {_buffers.DTYPE_NAMES[send.dtype]} on device {send.device}: they must match")
        _native.call("prAllReduce", send.address, recv.address, send.count, send.dtype, _buffers.op_code(op),
                     self._live(), self._stream(send, stream))
        return target

    def all_reduce_batch(self, tensors: Sequence[Any], op: str = "sum", stream: Any = None) -> Sequence[Any]:
        """Reduces every tensor in place, as all_reduce would each, in as few operations as possible (on
        GPUs one launch per group of small tensors). All must share one dtype and device."""
        if len(tensors) == 0:
            return tensors
        described = [_buffers.describe(t, f"tensors[{i}]") for i, t in enumerate(tensors)]
        first = described[0]
        for i, b in enumerate(described):
            _buffers.writable(tensors[i], f"tensors[{i}]")
            if b.dtype != first.dtype or b.device != first.device:
                raise errors.InvalidArgumentError(f"tensors[{i}] is {_buffers.DTYPE_NAMES[b.dtype]} on device "
                                                  f"{b.device}, tensors[0] {_buffers.DTYPE_NAMES[first.dtype]} on "
                                                  f"device {first.device}: a batch shares one dtype and device")
        items = (_native.BatchItem * len(described))(*[(b.address, b.address, b.count) for b in described])
        _native.call("prAllReduceBatch", items, len(described), first.dtype, _buffers.op_code(op), self._live(),
                     self._stream(first, stream))
        return tensors

    def reduce_scatter(self, tensor: Any, out: Any = None, op: str = "sum", stream: Any = None) -> Any:
        """Block b of every rank's `tensor` (world size x n elements), reduced with `op`, lands in rank b's
        `out` (n elements); returns it. In place when `out` is None: the result is this rank's own block of
        `tensor`, returned as a view of it (torch's reduce_scatter_tensor, NCCL's ncclReduceScatter)."""
        send = _buffers.describe(tensor, "tensor")
        ranks, rank = self.world_size, self.rank
        if out is None:
            count = _buffers.blocks(send, "tensor", ranks)
            _buffers.writable(tensor, "tensor")
            out = _buffers.block_view(tensor, rank, count)
        recv = _buffers.describe(out, "out")
        _buffers.writable(out, "out")
        _buffers.same_kind(send, recv, "tensor", "out")
        _buffers.blocks(send, "tensor", ranks, recv.count)
        _native.call("prReduceScatter", send.address, recv.address, recv.count, send.dtype, _buffers.op_code(op),
                     self._live(), self._stream(send, stream))
        return out

    def all_gather(self, tensor: Any, out: Any = None, stream: Any = None) -> Any:
        """Rank b's `tensor` (n elements) lands in block b of every rank's `out` (world size x n elements);
        returns `out`. In place when `out` is None: `tensor` is then the whole result (world size x n
        elements) and this rank's block of it is what it contributes (torch's all_gather_into_tensor)."""
        ranks, rank = self.world_size, self.rank
        if out is None:
            whole = _buffers.describe(tensor, "tensor")
            count = _buffers.blocks(whole, "tensor", ranks)
            out, tensor = tensor, _buffers.block_view(tensor, rank, count)
            target_name = "tensor"
        else:
            target_name = "out"
        send = _buffers.describe(tensor, "tensor")
        recv = _buffers.describe(out, target_name)
        _buffers.writable(out, target_name)
        _buffers.same_kind(send, recv, "tensor", target_name)
        _buffers.blocks(recv, target_name, ranks, send.count)
        _native.call("prAllGather", send.address, recv.address, send.count, send.dtype, self._live(),
                     self._stream(send, stream))
        return out

    def broadcast(self, tensor: Any, root: int = 0, out: Any = None, stream: Any = None) -> Any:
        """The root's `tensor` lands in every rank's `out` (in place, in `tensor`, when None); returns the
        result's tensor. Every rank passes the same root; only the root's `tensor` is read."""
        send = _buffers.describe(tensor, "tensor")
        target = tensor if out is None else out
        recv = send if out is None else _buffers.describe(out, "out")
        _buffers.writable(target, "tensor" if out is None else "out")
        _buffers.same_kind(send, recv, "tensor", "out")
        if recv.count != send.count:
            raise errors.InvalidArgumentError(f"out holds {recv.count} elements, tensor {send.count}: a broadcast "
                                              "receives as many elements as the root sends")
        _native.call("prBroadcast", send.address, recv.address, send.count, send.dtype,
                     _buffers.rank_index(root, "root"), self._live(), self._stream(send, stream))
        return target

    def barrier(self, stream: Any = None, wait: bool = True) -> None:
        """Every rank's work enqueued before it completes before any rank's work after it: an allreduce of
        one element the communicator keeps. With `wait`, also waits for it on the host (as
        torch.distributed.barrier does; collective on the simulator, where every rank's thread calls it)."""
        token = self._barrier_token()
        handle = self._stream(_buffers.describe(token, "token"), stream)
        self.all_reduce(token, stream=handle)
        if wait:
            self.synchronize(handle)

    def _barrier_token(self) -> Any:
        """One int32 element in the memory the communicator's collectives take: host memory on a simulated
        world, the current CUDA device otherwise."""
        if self._token is None:
            if self._on_host:
                import numpy
                self._token = numpy.zeros(1, dtype=numpy.int32)
            else:
                import torch
                self._token = torch.zeros(1, dtype=torch.int32, device=torch.cuda.current_device())
        return self._token

    def synchronize(self, stream: Any = None) -> None:
        """Waits (bounded by the configured timeout) for the work enqueued on `stream`; raises its error.
        Collective on the simulator."""
        _native.call("prCommSynchronize", self._live(),
                     None if stream is None else int(getattr(stream, "cuda_stream", stream)))

    def async_error(self) -> errors.Error | None:
        """The error an enqueued operation ended with, or None. Does not block."""
        try:
            _native.call("prCommGetAsyncError", self._live())
        except errors.Error as e:
            return e
        return None

    def register(self, tensor: Any) -> RegisteredBuffer:
        """Collective: makes `tensor`'s memory reachable by every peer until deregistered."""
        buffer = _buffers.describe(tensor, "tensor")
        handle = ctypes.c_void_p()
        _native.call("prCommRegisterBuffer", self._live(), buffer.address, buffer.nbytes, ctypes.byref(handle))
        return RegisteredBuffer(self, handle, tensor)

    # --- inspection, as plain Python data

    def enable_profiling(self, capacity: int = 1024) -> None:
        _native.call("prCommEnableProfiling", self._live(), int(capacity))

    def disable_profiling(self) -> None:
        _native.call("prCommDisableProfiling", self._live())

    def profile(self) -> dict:
        """Summary of the operations profiled so far (enable_profiling first): counts, times in us, busbw."""
        summary = _native.ProfileSummary()
        _native.call("prCommProfileSummary", self._live(), ctypes.byref(summary))
        return {name: getattr(summary, name) for name, _ in summary._fields_}

    def memory_stats(self) -> dict:
        stats = _native.MemoryStats()
        _native.call("prCommMemoryStats", self._live(), ctypes.byref(stats))
        return {name: getattr(stats, name) for name, _ in stats._fields_}

    def pinned_stats(self) -> dict:
        stats = _native.PinnedStats()
        _native.call("prCommPinnedStats", self._live(), ctypes.byref(stats))
        return {name: getattr(stats, name) for name, _ in stats._fields_}

    def explain(self, count: int, dtype: Any = "float32", collective: str = "all_reduce", root: int = 0) -> dict:
        """What `collective` (all_reduce, reduce_scatter, all_gather, broadcast) would choose for `count`
        elements per rank's block of `dtype` (broadcast from `root`), with every candidate's prediction.
        Builds the collective's plans if no call did yet (locally: nothing is exchanged)."""
        selection = _native.Selection()
        _native.call("prCommExplainCollective", self._live(), _buffers.collective_code(collective), int(count),
                     _buffers.dtype_code(dtype), _buffers.rank_index(root, "root"), ctypes.byref(selection))
        algorithms = ["auto", "one-shot", "two-shot", "ring", "recursive-doubling", "rabenseifner", "tree",
                      "copy-engine-two-shot", "user"]
        return {
            "chosen": algorithms[selection.chosen],
            "forced": bool(selection.forced),
            "tuned": bool(selection.tuned),
            "plan": selection.plan.decode(),
            "candidates": [{"algorithm": algorithms[c.algorithm], "predicted_us": c.predicted_us,
                            "segments": c.segments, "plan": c.plan.decode()}
                           for c in selection.candidates[:selection.ncandidates]],
        }

    def prepare(self) -> None:
        """Builds every collective's plans now (broadcast's for every root), as their first calls would, so
        that no later call does setup (device memory for its plans, copies to it): a first call inside CUDA
        graph capture then captures only the collective. Local: nothing is exchanged."""
        for collective in _buffers.COLLECTIVE_CODES:
            roots = range(self.world_size) if collective == "broadcast" else (0,)
            for root in roots:
                self.explain(1, "float32", collective, root)
