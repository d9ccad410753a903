"""Run by test_torch_layer.py in a child process whose `torch` is torch_stand_in/: peerreduce.torch's
process group and functions over a one-rank simulated world. Each check raises on failure; prints "ok"."""

import numpy as np

import peerreduce
import torch
import torch.distributed as dist
from peerreduce import _torch_backend, _torch_groups, _torch_work
import peerreduce.torch as prt

CUDA = torch.Tensor  # the stand-in's "CUDA tensor": host memory the simulator reduces


def cuda(values, dtype=np.float32):
    return np.asarray(values, dtype=dtype).view(CUDA)


def raises(error, text, call):
    try:
        call()
    except error as e:
        assert text in str(e), f"{error.__name__} without {text!r}: {e}"
        return
    raise AssertionError(f"no {error.__name__} ({text})")


class Options:
    def __init__(self, op=dist.ReduceOp.SUM, root=0):
        self.reduceOp, self.rootRank = op, root


def make_group(world, comm=None):
    """The backend's process group, its communicator the simulated world's rank 0 (or `comm`)."""
    comm = comm if comm is not None else world.communicators()[0]
    made = _torch_backend.Communicator
    _torch_backend.Communicator = lambda *args, **kwargs: comm
    try:
        group = _torch_backend.ProcessGroup(store=None, rank=0, size=1)
    finally:
        _torch_backend.Communicator = made
    return group, comm


def check_routing_and_works(world, group):
    tensor = cuda(np.arange(8))
    work = group.allreduce([tensor], Options(dist.ReduceOp.MAX))
    assert work.devices == [tensor.device] and work.result == [tensor], "a CUDA future of the outputs"
    host = np.zeros(4, np.float32).view(torch.HostTensor)
    assert group.allreduce([host]) == ("gloo", "allreduce", ([host],)), "CPU tensors go to gloo"
    assert group.broadcast([host], Options())[1] == "broadcast"
    assert group.alltoall_base(host, host, [], [], None)[1] == "alltoall_base"
    raises(peerreduce.InvalidArgumentError, "mixes CPU and CUDA", lambda: group.allreduce([tensor, host]))
    raises(NotImplementedError, "alltoall_base is not supported by the peerreduce backend",
           lambda: group.alltoall_base(tensor, tensor, [], [], None))
    raises(peerreduce.InvalidArgumentError, "is not one peerreduce has",
           lambda: group.allreduce([tensor], Options(op=object())))  # PREMUL_SUM, say
    raises(peerreduce.InvalidArgumentError, "op 'xor' is not one of",
           lambda: group.allreduce([tensor], Options(op="xor")))


def check_every_collective(world, group):
    source = cuda(np.arange(6) + 1)
    gathered, outs = cuda(np.zeros(6)), [cuda(np.zeros(6))]
    reduced, listed = cuda(np.zeros(6)), cuda(np.zeros(6))
    works = [group.broadcast([source], Options(root=0)), group._allgather_base(gathered, source),
             group.all_gather_single(gathered, source), group.allgather_into_tensor_coalesced([gathered], [source]),
             group.allgather([outs], [source]), group.allgather_coalesced([outs], [source]),
             group._reduce_scatter_base(reduced, source, Options(dist.ReduceOp.AVG)),
             group.reduce_scatter_tensor_coalesced([reduced], [source], Options()),
             group.reduce_scatter([listed], [[source]], Options(dist.ReduceOp.MIN)),
             group.allreduce_coalesced([source, cuda([1, 2])], Options())]
    assert all(w.devices == [source.device] for w in works), "every Work's future is on the outputs' device"
    group.barrier()
    world.run()
    # The list forms copy through buffers in stream order, which the simulator (it runs at world.run())
    # does not keep: their results are checked on GPUs only.
    for result in (gathered, reduced):
        assert result.tolist() == source.tolist(), result
    raises(peerreduce.InvalidArgumentError, "one tensor per rank (1)",
           lambda: group.allgather([[gathered, gathered]], [source]))
    raises(peerreduce.InvalidArgumentError, "input_list[0] holds 2 elements",
           lambda: group.reduce_scatter([listed], [[cuda([1, 2])]], Options()))


def check_names_and_premul(world, group):
    """The group keeps the name torch.distributed gives it (DeviceMesh and fully_shard find it by that);
    PREMUL_SUM (FSDP2's gradient divide factor) runs as a sum scaled by its factor; ops by name."""
    other, _ = make_group(world, group.communicator)  # not the default group: custom ops carry its name
    raises(peerreduce.UnsupportedError, "has no name", lambda: other.group_name)
    raises(RuntimeError, "has no name", lambda: other.getGroupName())  # what torch's C++ side would see
    other._set_group_name("3")
    assert other.group_name == "3" and other.getGroupName() == "3"
    other.setGroupName("4")
    assert other.group_name == "4" and prt.name_of(other) == "4"
    assert prt.name_of(None) == "" and prt.name_of(group) == "", "the default group travels as \"\""
    tensor = cuda([2, 4, 6])
    half = dist._make_nccl_premul_sum(0.5)
    assert _torch_work.premul_factor(half) == 0.5 and _torch_work.premul_factor(dist.ReduceOp.SUM) is None
    group.allreduce([tensor], Options(half))
    world.run()
    assert tensor.tolist() == [1, 2, 3], tensor
    raises(peerreduce.InvalidArgumentError, "PREMUL_SUM on integer tensors",
           lambda: group.allreduce([cuda([2, 4], np.int32)], Options(half)))
    raises(peerreduce.InvalidArgumentError, "PREMUL_SUM is not one the peerreduce.torch functions take",
           lambda: prt.all_reduce(cuda([1, 2]), op=half))
    assert _torch_work.op_argument("max") == "max" and _torch_work.op_argument(dist.ReduceOp.MAX) == "max"
    assert not _torch_work.REDUCE_OPS_ARE_CONSTANTS, "the stand-in has no pytree: nothing registered"
    tensor = cuda([5, 7])
    prt.all_reduce(tensor)
    prt.all_reduce(tensor, op="max")
    world.run()
    assert tensor.tolist() == [5, 7]


def check_functions(world, comm):
    assert prt.communicator() is comm, "a peerreduce group's own communicator"
    tensor, out, pieces = cuda([3, 1, 2]), cuda([0, 0, 0]), [cuda([0, 0, 0])]
    assert prt.all_reduce(tensor, op=dist.ReduceOp.PRODUCT) is tensor
    assert prt.reduce_scatter_tensor(out, tensor) is out
    assert prt.all_gather_into_tensor(out, tensor) is out
    assert prt.broadcast(tensor, src=0) is tensor
    spare = cuda([0, 0, 0])  # the list forms' results are not checked here (see check_every_collective)
    assert prt.reduce_scatter(spare, [tensor]) is spare and prt.all_gather(pieces, tensor) is pieces
    prt.all_reduce_coalesced([tensor, out])
    world.run()
    assert out.tolist() == [3, 1, 2]
    raises(peerreduce.InvalidArgumentError, "tensor_list is 2 items", lambda: prt.all_gather([out, out], tensor))
    raises(peerreduce.InvalidArgumentError, "dtype 'complex64'", lambda: comm.explain(1, "complex64"))


def check_timeouts_follow_the_group():
    """The backend's communicator waits as long as the process group's timeout; the environment's
    PEERREDUCE_TIMEOUT_MS wins; no timeout keeps the library's default; the bounds hold."""
    import datetime
    import os
    saved = os.environ.pop("PEERREDUCE_TIMEOUT_MS", None)
    try:
        config = _torch_backend.timeout_config(datetime.timedelta(minutes=10))
        assert config == {"PEERREDUCE_TIMEOUT_MS": 600_000}, config
        assert _torch_backend.timeout_config(None) is None
        assert _torch_backend.timeout_config(datetime.timedelta(days=30)) == {"PEERREDUCE_TIMEOUT_MS": 86_400_000}
        assert _torch_backend.timeout_config(datetime.timedelta(0)) == {"PEERREDUCE_TIMEOUT_MS": 1}
        os.environ["PEERREDUCE_TIMEOUT_MS"] = "5000"
        assert _torch_backend.timeout_config(datetime.timedelta(minutes=10)) is None, "the environment wins"
    finally:
        os.environ.pop("PEERREDUCE_TIMEOUT_MS", None)
        if saved is not None:
            os.environ["PEERREDUCE_TIMEOUT_MS"] = saved
    # What the group passes to its communicator.
    seen = {}
    made = _torch_backend.Communicator

    class Recorded:
        def __init__(self, rank, size, bootstrap, config=None):
            seen["config"] = config

        def prepare(self):
            pass

    _torch_backend.Communicator = Recorded
    saved_gloo = getattr(dist, "ProcessGroupGloo", None)
    dist.ProcessGroupGloo = lambda *args: ("gloo",) + args
    try:
        _torch_backend.ProcessGroup(store=None, rank=0, size=1, timeout=datetime.timedelta(seconds=90))
    finally:
        _torch_backend.Communicator = made
        if saved_gloo is not None:
            dist.ProcessGroupGloo = saved_gloo
    assert seen["config"] == {"PEERREDUCE_TIMEOUT_MS": 90_000}, seen


def check_creation_rules(group):
    dist.GroupMember.WORLD = None
    raises(peerreduce.InvalidArgumentError, "init_process_group first", lambda: prt.communicator())
    dist.GroupMember.WORLD = object()  # a group of another backend, with no communicator yet
    torch.cuda.is_available = staticmethod(lambda: True)
    torch.cuda.is_current_stream_capturing = staticmethod(lambda: True)
    raises(peerreduce.UnsupportedError, "before capturing", lambda: prt.communicator())
    assert _torch_groups.named("") is None and prt.name_of(None) == ""


def main():
    with peerreduce.SimWorld(1) as world:
        group, comm = make_group(world)
        dist.GroupMember.WORLD = group
        check_routing_and_works(world, group)
        check_every_collective(world, group)
        check_names_and_premul(world, group)
        check_functions(world, comm)
        check_timeouts_follow_the_group()
        check_creation_rules(group)
        comm.close()
    print("ok")


if __name__ == "__main__":
    main()
