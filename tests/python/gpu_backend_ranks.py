"""One rank of the torch.distributed backend check, run by torchrun (test_torch_gpu.py starts it): with
peerreduce registered as a backend, `init_process_group(backend="cpu:gloo,cuda:peerreduce")` gives, on
CUDA tensors, peerreduce's all_reduce, broadcast, all_gather_into_tensor, reduce_scatter_tensor, their
list forms and barrier (checked against references computed on the host), first inside a CUDA graph
captured before any collective ran; Work objects whose wait() orders the caller's stream after the
collective; AVG and PREMUL_SUM (FSDP2's gradient reductions); the groups' names (what DeviceMesh,
fully_shard, DTensor and the functional collectives find groups by), a subgroup, the functional
collectives and DTensor over a DeviceMesh of the group; every collective on CPU tensors through gloo; and
a NotImplementedError naming any collective peerreduce does not have on CUDA tensors. Exits 0 when every
check passed on this rank."""

import os
import sys

import torch
import torch.distributed as dist

import peerreduce.torch as prt


def values(rank, count):
    return (torch.arange(count, dtype=torch.float64) % 7 + rank + 1).to(torch.float32)


def captured_before_any_call(rank, size, failures):
    """dist's collectives inside a CUDA graph captured before any of them ran: the process group made the
    communicator and built every plan at init_process_group."""
    tensor = torch.zeros(256, device="cuda")
    gathered = torch.zeros(256 * size, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=torch.cuda.Stream()):
        dist.all_reduce(tensor)
        dist.all_gather_into_tensor(gathered, tensor)
        dist.broadcast(tensor, src=0)
    for replay in range(2):
        tensor.fill_(float(rank + replay))
        graph.replay()
        torch.cuda.synchronize()
        total = float(sum(r + replay for r in range(size)))
        if not (bool(torch.all(gathered == total)) and bool(torch.all(tensor == total))):
            failures.append(f"captured collectives, replay {replay}")


def other_collectives(rank, size, failures):
    count = 300
    whole = torch.cat([values(rank, count) + r for r in range(size)]).cuda()
    out = torch.empty(count, device="cuda")
    dist.reduce_scatter_tensor(out, whole)
    want = sum(values(r, count).to(torch.float64) + rank for r in range(size)).to(torch.float32)
    if not torch.equal(out.cpu(), want):
        failures.append("reduce_scatter_tensor")
    gathered = torch.empty(count * size, device="cuda")
    dist.all_gather_into_tensor(gathered, values(rank, count).cuda())
    if not torch.equal(gathered.cpu(), torch.cat([values(r, count) for r in range(size)])):
        failures.append("all_gather_into_tensor")
    pieces = [torch.empty(count, device="cuda") for _ in range(size)]
    dist.all_gather(pieces, values(rank, count).cuda())
    if not all(torch.equal(p.cpu(), values(r, count)) for r, p in enumerate(pieces)):
        failures.append("all_gather list")
    dist.reduce_scatter(out, [values(rank, count).cuda() * (r + 1) for r in range(size)], op=dist.ReduceOp.MAX)
    if not torch.equal(out.cpu(), values(size - 1, count) * (rank + 1)):
        failures.append("reduce_scatter list (max)")
    tensor = values(rank, count).cuda()
    dist.broadcast(tensor, src=size - 1)
    if not torch.equal(tensor.cpu(), values(size - 1, count)):
        failures.append("broadcast")
    # async_op: the work is enqueued on the current stream; wait() orders another stream after it.
    side = torch.cuda.Stream()
    tensor = values(rank, 1 << 20).cuda()
    work = dist.all_reduce(tensor, async_op=True)
    with torch.cuda.stream(side):
        work.wait()
        doubled = tensor * 2
    torch.cuda.synchronize()
    want = sum(values(r, 1 << 20).to(torch.float64) for r in range(size)).to(torch.float32) * 2
    if not torch.equal(doubled.cpu(), want) or work.get_future().wait()[0].data_ptr() != tensor.data_ptr():
        failures.append("async all_reduce's work")
    dist.barrier()


def averages_and_premultiplied_sums(rank, size, failures):
    """FSDP2 reduce-scatters gradients with AVG, or with PREMUL_SUM(1 / factor) when given a divide factor
    (the backend sums, then scales by the factor on the same stream)."""
    count = 300
    whole = torch.cat([values(rank, count) + r for r in range(size)]).cuda()
    total = sum(values(r, count).to(torch.float64) + rank for r in range(size))
    out = torch.empty(count, device="cuda")
    dist.reduce_scatter_tensor(out, whole, op=dist.ReduceOp.AVG)
    if not torch.allclose(out.cpu().to(torch.float64), total / size, rtol=1e-6):
        failures.append("reduce_scatter_tensor (avg)")
    premul = getattr(dist, "_make_nccl_premul_sum", None)
    if premul is None:
        print(f"rank {rank}: this PyTorch has no dist._make_nccl_premul_sum; PREMUL_SUM not checked", flush=True)
        return
    dist.reduce_scatter_tensor(out, whole, op=premul(0.5))
    if not torch.equal(out.cpu(), (total * 0.5).to(torch.float32)):  # sums of small integers, halved: exact
        failures.append("reduce_scatter_tensor (premul_sum 0.5)")
    tensor = values(rank, count).cuda()
    dist.all_reduce(tensor, op=premul(0.25))
    if not torch.equal(tensor.cpu(), (sum(values(r, count).to(torch.float64) for r in range(size)) * 0.25).float()):
        failures.append("all_reduce (premul_sum 0.25)")


def names_and_functional_collectives(rank, size, failures):
    """torch.distributed names every group and finds it by that name: DeviceMesh (so fully_shard and
    DTensor) and the functional collectives, whose C++ side resolves the name and calls the group."""
    import torch.distributed._functional_collectives as funcol
    world = dist.group.WORLD
    resolve = dist.distributed_c10d._resolve_process_group
    if resolve(world.group_name) is not world:
        failures.append(f"the default group does not resolve by its name {world.group_name!r}")
    sub = dist.new_group(list(range(size)))  # the default backend's too: another peerreduce group
    if sub.group_name == world.group_name or resolve(sub.group_name) is not sub:
        failures.append("a subgroup's name")
    tensor = values(rank, 100).cuda()
    prt.all_reduce(tensor, group=sub)  # peerreduce.torch's op carries the subgroup by its name
    if not torch.equal(tensor.cpu(), sum(values(r, 100).to(torch.float64) for r in range(size)).float()):
        failures.append("peerreduce.torch.all_reduce on a subgroup of the backend")
    reduced = funcol.all_reduce(values(rank, 64).cuda(), "sum", world)
    if not torch.equal(reduced.cpu(), sum(values(r, 64).to(torch.float64) for r in range(size)).float()):
        failures.append("functional all_reduce")
    gathered = funcol.all_gather_tensor(values(rank, 64).cuda(), 0, world)
    if not torch.equal(gathered.cpu(), torch.cat([values(r, 64) for r in range(size)])):
        failures.append("functional all_gather_tensor")
    whole = torch.cat([values(rank, 64) + r for r in range(size)]).cuda()
    scattered = funcol.reduce_scatter_tensor(whole, "sum", 0, world)
    if not torch.equal(scattered.cpu(), sum(values(r, 64).to(torch.float64) + rank for r in range(size)).float()):
        failures.append("functional reduce_scatter_tensor")
    try:
        from torch.distributed.tensor import DTensor, Partial, Shard
    except ImportError:  # PyTorch before 2.5
        from torch.distributed._tensor import DTensor, Shard
        from torch.distributed._tensor.placement_types import Partial
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cuda", (size,))
    if mesh.get_group() is not world:
        failures.append("a DeviceMesh of the world is not the default group")
    local = torch.full((2, 3), float(rank), device="cuda")
    full = DTensor.from_local(local, mesh, [Shard(0)], run_check=False).full_tensor()
    if not torch.equal(full.cpu(), torch.cat([torch.full((2, 3), float(r)) for r in range(size)])):
        failures.append("DTensor Shard(0) to full tensor")
    summed = DTensor.from_local(local, mesh, [Partial()], run_check=False).full_tensor()
    if not bool(torch.all(summed == size * (size - 1) / 2)):
        failures.append("DTensor Partial to full tensor")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    failures = []
    if not prt.register_backend():
        print(f"rank {local_rank}: FAILED this PyTorch ({torch.__version__}) cannot register a backend")
        return 1
    dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")
    rank, size = dist.get_rank(), dist.get_world_size()
    captured_before_any_call(rank, size, failures)
    other_collectives(rank, size, failures)
    averages_and_premultiplied_sums(rank, size, failures)
    names_and_functional_collectives(rank, size, failures)
    for count in (1, 1000, 70001):
        tensor = values(rank, count).cuda()
        dist.all_reduce(tensor)
        want = sum(values(r, count).to(torch.float64) for r in range(size)).to(torch.float32)
        if not torch.equal(tensor.cpu(), want):
            failures.append(f"sum of {count}")
    tensor = torch.full((100,), float(rank), device="cuda")
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    if not bool(torch.all(tensor == size - 1)):
        failures.append("max")
    on_host = torch.full((10,), float(rank + 1))
    dist.all_reduce(on_host)  # gloo's
    if not bool(torch.all(on_host == size * (size + 1) / 2)):
        failures.append("a CPU tensor through gloo")
    on_host = torch.full((6,), float(rank + 10))
    dist.broadcast(on_host, src=1)  # gloo's
    if not bool(torch.all(on_host == 11.0)):
        failures.append("a CPU broadcast through gloo")
    try:
        dist.all_to_all_single(torch.zeros(4 * size, device="cuda"), torch.zeros(4 * size, device="cuda"))
        failures.append("all_to_all_single on the peerreduce backend did not raise")
    except (NotImplementedError, RuntimeError) as e:  # torch may wrap the backend's exception
        if "not supported by the peerreduce backend" not in str(e) or "alltoall" not in str(e):
            failures.append(f"all_to_all_single raised without naming itself: {e}")
    dist.destroy_process_group()
    print(f"rank {rank} of {size} (backend): {'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
