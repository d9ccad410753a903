"""One rank of the torch.distributed backend check, run by torchrun (test_torch_gpu.py starts it): with
peerreduce registered as a backend, `init_process_group(backend="cpu:gloo,cuda:peerreduce")` gives
all_reduce on CUDA tensors through peerreduce (checked against a reference computed on the host), every
collective on CPU tensors through gloo, and any other collective on CUDA tensors a NotImplementedError
naming it. Exits 0
when every check passed on this rank."""

import os
import sys

import torch
import torch.distributed as dist

import peerreduce.torch as prt


def values(rank, count):
    return (torch.arange(count, dtype=torch.float64) % 7 + rank + 1).to(torch.float32)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    failures = []
    if not prt.register_backend():
        print(f"rank {local_rank}: FAILED this PyTorch ({torch.__version__}) cannot register a backend")
        return 1
    dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")
    rank, size = dist.get_rank(), dist.get_world_size()
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
        dist.broadcast(torch.zeros(4, device="cuda"), src=0)
        failures.append("broadcast on the peerreduce backend did not raise")
    except (NotImplementedError, RuntimeError) as e:  # torch may wrap the backend's exception
        if "not supported by the peerreduce backend" not in str(e) or "broadcast" not in str(e):
            failures.append(f"broadcast raised without naming itself: {e}")
    dist.destroy_process_group()
    print(f"rank {rank} of {size} (backend): {'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
