"""One rank of the torch.distributed backend check, run by torchrun (test_torch_gpu.py starts it): with
peerreduce registered as a backend, `init_process_group(backend="cpu:gloo,cuda:peerreduce")` gives, on
CUDA tensors, peerreduce's all_reduce, broadcast, all_gather_into_tensor, reduce_scatter_tensor, their
list forms and barrier (checked against references computed on the host), first inside a CUDA graph
captured before any collective ran; Work objects whose wait() orders the caller's stream after the
collective; every collective on CPU tensors through gloo; and a NotImplementedError naming any collective
peerreduce does not have on CUDA tensors. Exits 0 when every check passed on this rank."""

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
