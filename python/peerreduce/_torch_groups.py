"""Which peerreduce communicator serves a torch.distributed process group: the one a peerreduce process
group made at its creation, else one made for the group by `communicator()` and cached until close().
Groups travel through torch.library ops by name ("" for the default group)."""

from __future__ import annotations

import threading
from typing import Any

import torch
import torch.distributed as dist

from . import errors
from ._torch_backend import peerreduce_communicator
from ._torch_work import constant_result
from .bootstrap import TorchProcessGroupBootstrap
from .communicator import Communicator

_lock = threading.Lock()
_communicators: dict[Any, Communicator] = {}


def _resolved(group) -> Any:
    """The group object (the default group for None)."""
    if group is None:
        group = dist.GroupMember.WORLD
        if group is None:
            raise errors.InvalidArgumentError("torch.distributed has no default process group; call "
                                              "torch.distributed.init_process_group first")
    return group


def _capturing() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def communicator(group=None, config: dict | None = None) -> Communicator:
    """This rank's communicator for `group` (the default group when None). For a peerreduce process
    group, the one it made at creation; for any other group made now (collective over the group: every
    rank makes the same call) with every collective's plans built, and cached. Call it before capturing a
    CUDA graph that uses a group of another backend: creation talks over the group, which capture forbids."""
    group = _resolved(group)
    own = peerreduce_communicator(group)
    if own is not None:
        return own
    with _lock:
        comm = _communicators.get(group)
        if comm is None:
            if _capturing():
                raise errors.UnsupportedError(
                    "peerreduce has no communicator for this process group yet, and a CUDA graph is being captured: "
                    "creation talks over the group, which capture forbids. Call peerreduce.torch.communicator(group) "
                    "before capturing, or use the peerreduce backend (made with the group)")
            comm = Communicator(dist.get_rank(group), dist.get_world_size(group), TorchProcessGroupBootstrap(group),
                                config)
            comm.prepare()
            _communicators[group] = comm
        return comm


@constant_result
def name_of(group) -> str:
    """The name torch.library ops carry for `group`: "" for the default group."""
    if group is None or group is dist.GroupMember.WORLD:
        return ""
    return group.group_name


def named(name: str) -> Any:
    """The process group of a name from name_of (None: the default group)."""
    if name == "":
        return None
    resolve = getattr(dist.distributed_c10d, "_resolve_process_group", None)
    if resolve is not None:
        return resolve(name)
    for group, group_name in dist.distributed_c10d._world.pg_names.items():
        if group_name == name:
            return group
    raise errors.InvalidArgumentError(f"no torch.distributed process group is named {name!r}")


def close(group=None) -> None:
    """Ends the cached communicator of `group` (all ranks, at the same point). A peerreduce process
    group's own communicator ends with the group (destroy_process_group)."""
    with _lock:
        comm = _communicators.pop(dist.GroupMember.WORLD if group is None else group, None)
    if comm is not None:
        comm.close()


def close_all() -> None:
    with _lock:
        comms = list(_communicators.values())
        _communicators.clear()
    for comm in comms:
        comm.close()
