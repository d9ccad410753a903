"""Bootstraps: how the ranks of a world meet when a communicator is created (never on the data path).

- `SimWorld`: a simulated world of virtual GPUs in host memory (no GPU needed); its bootstraps make
  communicators on it.
- `CallbackBootstrap`: any rendezvous you have, given as a Python all-gather of bytes.
- `TorchStoreBootstrap`, `TorchProcessGroupBootstrap`: over torch.distributed (a Store, or a group).
- `Mpi4pyBootstrap`: over an mpi4py communicator.
A bootstrap other than a simulated world's makes a communicator on a GPU: the device current when it is
made, as NCCL's, unless the configuration names one (PEERREDUCE_DEVICE).

Callbacks run on a peerreduce thread while the creating thread waits in the library, one at a time, and
are bounded by the communicator's timeout (they receive it and should honour it).
"""

from __future__ import annotations

import ctypes
import datetime
import itertools
import traceback
from typing import Callable, Sequence

from . import _native, errors


class Bootstrap:
    """Base of every bootstrap: hands the C library a prBootstrap_t for one rank."""

    # Whether its communicators' buffers are host memory (a simulated world's) rather than a GPU's.
    _host_memory = False

    def _open(self, rank: int, world_size: int) -> int:
        """A new prBootstrap_t for `rank` of `world_size` (the caller destroys it)."""
        raise NotImplementedError

    def _failure(self) -> BaseException | None:
        """The exception a callback raised, if one did (chained to the library's error)."""
        return None


class SimWorld:
    """A simulated world of `world_size` virtual GPUs (1..64) whose scheduler is seeded with `seed`."""

    def __init__(self, world_size: int, seed: int = 1):
        self._lib = _native.library()
        handle = ctypes.c_void_p()
        _native.call("prSimWorldCreate", int(world_size), int(seed), ctypes.byref(handle))
        self._handle = handle
        self.world_size = int(world_size)

    def bootstrap(self) -> "SimBootstrap":
        return SimBootstrap(self)

    def communicators(self, config: dict | None = None) -> list:
        """Every rank's communicator, made at once (no threads needed)."""
        from .communicator import Communicator, _config_buffer
        handles = (ctypes.c_void_p * self.world_size)()
        settings = _config_buffer(config)
        _native.call("prCommInitSimAll", self._live(), settings, handles)
        return [Communicator._adopt(ctypes.c_void_p(h), self) for h in handles]

    def attach(self, bootstrap: "CallbackBootstrap") -> "AttachedBootstrap":
        """`bootstrap`'s rendezvous, making communicators on this world (test your own on the simulator)."""
        return AttachedBootstrap(self, bootstrap)

    def run(self) -> None:
        """Runs everything every rank has enqueued (one thread drives all ranks)."""
        _native.call("prSimWorldRun", self._live())

    def close(self) -> None:
        """Ends the world; close its communicators first."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _native.call("prSimWorldDestroy", handle)

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise errors.InvalidArgumentError("this simulated world was closed")
        return self._handle

    def __enter__(self) -> "SimWorld":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SimBootstrap(Bootstrap):
    _host_memory = True

    def __init__(self, world: SimWorld):
        self.world = world

    def _open(self, rank: int, world_size: int) -> int:
        if world_size != self.world.world_size:
            raise errors.InvalidArgumentError(
                f"a communicator of {world_size} ranks on a simulated world of {self.world.world_size}")
        handle = ctypes.c_void_p()
        _native.call("prSimWorldBootstrap", self.world._live(), int(rank), ctypes.byref(handle))
        return handle


class CallbackBootstrap(Bootstrap):
    """The application's rendezvous: `all_gather(data: bytes, timeout_s: float)` returns every rank's
    `data` in rank order (one bytes object, or a sequence of them); `barrier(timeout_s)` is optional.
    One instance per rank: it keeps that rank's callbacks alive as long as its communicator."""

    def __init__(self, all_gather: Callable[[bytes, float], bytes | Sequence[bytes]],
                 barrier: Callable[[float], None] | None = None, name: str = "Python callbacks"):
        self._all_gather = all_gather
        self._barrier = barrier
        self._name = name.encode()
        self._exception: BaseException | None = None
        # The C function objects must outlive every communicator made with them: kept here.
        self._c_all_gather = _native.ALL_GATHER(self._gather_entry)
        self._c_barrier = _native.BARRIER(self._barrier_entry) if barrier else _native.BARRIER()

    def _gather_entry(self, _context, send, recv, nbytes, gathered, timeout_ms) -> int:
        try:
            data = ctypes.string_at(send, nbytes)
            result = self._all_gather(data, timeout_ms / 1000.0)
            joined = result if isinstance(result, (bytes, bytearray)) else b"".join(bytes(b) for b in result)
            capacity = nbytes * self._world_size
            ctypes.memmove(recv, joined, min(len(joined), capacity))
            gathered[0] = len(joined)
            return 0
        except BaseException as e:  # never let an exception cross into C
            self._exception = e
            self._traceback = traceback.format_exc()
            return 1

    def _barrier_entry(self, _context, timeout_ms) -> int:
        try:
            self._barrier(timeout_ms / 1000.0)
            return 0
        except BaseException as e:
            self._exception = e
            return 1

    def _open(self, rank: int, world_size: int) -> int:
        self._world_size = int(world_size)
        self._callbacks = _native.BootstrapCallbacks(self._c_all_gather, self._c_barrier, None, self._name)
        handle = ctypes.c_void_p()
        _native.call("prBootstrapCreate", int(world_size), int(rank), ctypes.byref(self._callbacks),
                     ctypes.byref(handle))
        return handle

    def _failure(self) -> BaseException | None:
        return self._exception


class AttachedBootstrap(Bootstrap):
    """A callback bootstrap whose communicators run on a simulated world."""

    _host_memory = True

    def __init__(self, world: SimWorld, inner: CallbackBootstrap):
        self.world, self.inner = world, inner

    def _open(self, rank: int, world_size: int) -> int:
        handle = self.inner._open(rank, world_size)
        try:
            _native.call("prSimWorldAttachBootstrap", self.world._live(), handle)
        except errors.Error:
            _native.call("prBootstrapDestroy", handle)
            raise
        return handle

    def _failure(self) -> BaseException | None:
        return self.inner._failure()


class TorchStoreBootstrap(CallbackBootstrap):
    """Over a torch.distributed Store (TCPStore, FileStore, ...): every rank sets its block under a key of
    its own and reads everyone's. `prefix` keeps several communicators' keys apart."""

    _instances = itertools.count()

    def __init__(self, store, rank: int, world_size: int, prefix: str | None = None):
        self._store, self._rank, self._size = store, int(rank), int(world_size)
        self._prefix = prefix if prefix is not None else f"peerreduce/{next(self._instances)}"
        self._sequence = itertools.count()
        super().__init__(self._gather, name="torch.distributed store")

    def _gather(self, data: bytes, timeout_s: float) -> list[bytes]:
        step = next(self._sequence)
        keys = [f"{self._prefix}/{step}/{r}" for r in range(self._size)]
        self._store.set(keys[self._rank], data)
        self._store.wait(keys, datetime.timedelta(seconds=timeout_s))
        return [self._store.get(k) for k in keys]


class TorchProcessGroupBootstrap(CallbackBootstrap):
    """Over a torch.distributed process group (the default group when None)."""

    def __init__(self, group=None):
        import torch
        import torch.distributed as dist
        self._dist, self._group, self._torch = dist, group, torch
        # The callback runs on a peerreduce thread, whose current CUDA device is 0: an NCCL group must see
        # the device of the rank that made this bootstrap.
        self._device = torch.cuda.current_device() if torch.cuda.is_available() else None
        super().__init__(self._gather, name="torch.distributed process group")

    def _gather(self, data: bytes, timeout_s: float) -> list[bytes]:
        if self._device is not None:
            self._torch.cuda.set_device(self._device)
        blocks: list = [None] * self._dist.get_world_size(self._group)
        self._dist.all_gather_object(blocks, data, group=self._group)
        return blocks


class Mpi4pyBootstrap(CallbackBootstrap):
    """Over an mpi4py communicator (MPI.COMM_WORLD when None). The callbacks run on a peerreduce thread, so
    MPI must be initialised with at least MPI_THREAD_SERIALIZED (mpi4py's default is MULTIPLE)."""

    def __init__(self, comm=None):
        from mpi4py import MPI
        self._comm = comm if comm is not None else MPI.COMM_WORLD
        super().__init__(lambda data, timeout_s: self._comm.allgather(data), name="mpi4py")
