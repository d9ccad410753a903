"""Communicators that span machines (docs/MULTI_MACHINE.md), on simulated machines: the C library's
prMultiSimWorld_t and prMultiComm_t.

    world = peerreduce.MultiMachineSimWorld(machines=2, ranks_per_machine=4)
    comms = world.communicators()
    # each rank on a thread of its own (calls wait on the host between their steps):
    comms[r].reduce_scatter(send[r], recv[r]); comms[r].synchronize()

Strategies: "auto" (the cost model's choice per size), "hierarchical" or "flat". Errors are
peerreduce.Error subclasses, as everywhere in the package.
"""

from __future__ import annotations

import ctypes
from typing import Any

from . import _buffers, _native, errors
from .communicator import _config_buffer

STRATEGY_CODES = {"auto": 0, "hierarchical": 1, "flat": 2}


def _strategy(strategy: str) -> int:
    if not isinstance(strategy, str) or strategy not in STRATEGY_CODES:
        raise errors.InvalidArgumentError(f"strategy {strategy!r} is not one of {', '.join(STRATEGY_CODES)}")
    return STRATEGY_CODES[strategy]


class MultiMachineSimWorld:
    """`machines` simulated machines of `ranks_per_machine` virtual GPUs each (at most 64 ranks), rank r on
    machine r // ranks_per_machine, and a network between them (400 Gb/s per NIC, 5 us)."""

    def __init__(self, machines: int, ranks_per_machine: int, seed: int = 1):
        handle = ctypes.c_void_p()
        _native.call("prMultiSimWorldCreate", int(machines), int(ranks_per_machine), int(seed), ctypes.byref(handle))
        self._handle: ctypes.c_void_p | None = handle
        self.world_size = int(machines) * int(ranks_per_machine)

    def communicators(self, config: dict | None = None) -> list["MultiMachineCommunicator"]:
        """Every rank's communicator, made at once."""
        handles = (ctypes.c_void_p * self.world_size)()
        _native.call("prMultiCommInitSimAll", self._live(), _config_buffer(config), handles)
        return [MultiMachineCommunicator(ctypes.c_void_p(h), self) for h in handles]

    def close(self) -> None:
        """Ends the world; close its communicators first."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _native.call("prMultiSimWorldDestroy", handle)

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise errors.InvalidArgumentError("this simulated multi-machine world was closed")
        return self._handle

    def __enter__(self) -> "MultiMachineSimWorld":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MultiMachineCommunicator:
    """One rank's handle on a world that spans machines. Host arrays (numpy) only: the simulator's."""

    def __init__(self, handle: ctypes.c_void_p, owner: Any):
        self._handle: ctypes.c_void_p | None = handle
        self._owner = owner  # the world outlives its communicators

    def _live(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise errors.InvalidArgumentError("this communicator was closed; make a new one")
        return self._handle

    @property
    def layout(self) -> dict:
        """rank, size, machines, ranks_per_machine, machine, local_rank."""
        value = _native.MachineLayout()
        _native.call("prMultiCommLayout", self._live(), ctypes.byref(value))
        return {name: getattr(value, name) for name, _ in _native.MachineLayout._fields_}

    def all_reduce(self, send: Any, recv: Any, op: str = "sum", strategy: str = "auto") -> Any:
        s, r = _buffers.describe(send, "send"), _buffers.describe(recv, "recv")
        _buffers.writable(recv, "recv")
        _native.call("prMultiAllReduce", s.address, r.address, s.count, s.dtype, _buffers.op_code(op),
                     _strategy(strategy), self._live(), None)
        return recv

    def reduce_scatter(self, send: Any, recv: Any, op: str = "sum", strategy: str = "auto") -> Any:
        """Block b of every rank's `send` (world size x recv's count), reduced, lands in rank b's `recv`."""
        s, r = _buffers.describe(send, "send"), _buffers.describe(recv, "recv")
        _buffers.writable(recv, "recv")
        if s.count != r.count * self.layout["size"] or s.dtype != r.dtype:
            raise errors.InvalidArgumentError(f"send holds {s.count} elements and recv {r.count}: send must hold "
                                              "world size x recv's count elements of recv's dtype")
        _native.call("prMultiReduceScatter", s.address, r.address, r.count, s.dtype, _buffers.op_code(op),
                     _strategy(strategy), self._live(), None)
        return recv

    def all_gather(self, send: Any, recv: Any, strategy: str = "auto") -> Any:
        """Rank b's `send` lands in block b of every rank's `recv` (world size x send's count)."""
        s, r = _buffers.describe(send, "send"), _buffers.describe(recv, "recv")
        _buffers.writable(recv, "recv")
        if r.count != s.count * self.layout["size"] or s.dtype != r.dtype:
            raise errors.InvalidArgumentError(f"send holds {s.count} elements and recv {r.count}: recv must hold "
                                              "world size x send's count elements of send's dtype")
        _native.call("prMultiAllGather", s.address, r.address, s.count, s.dtype, _strategy(strategy), self._live(),
                     None)
        return recv

    def synchronize(self) -> None:
        """Completes what the last call left enqueued (collective on the simulator)."""
        _native.call("prMultiCommSynchronize", self._live(), None)

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            _native.call("prMultiCommDestroy", handle)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
