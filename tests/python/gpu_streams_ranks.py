"""One rank of the many-streams check through the NCCL library (test_torch_gpu.py starts it under torchrun
with libpeerreduce_nccl.so preloaded): torch.distributed's "nccl" backend driven from 16 CUDA streams, each
rank using them in an order of its own, over four process groups of every rank (four communicators, each
with the stream torch gives it); CUDA graphs captured on three of the streams, replayed while eager
collectives run on the others; every result against the host's (small integers, so every sum is exact and
NCCL's equal). Exits 0 when every check passed on this rank."""

import os
import sys

import torch
import torch.distributed as dist

STREAMS = 16
GROUPS = 4
ROUNDS = 3
# 16 KiB and 1 MiB of fp32: the line kernels and the two-shot.
COUNTS = (4096, 1 << 18)


def values(rank, count, salt):
    return ((torch.arange(count, dtype=torch.int64) * 3 + rank * 5 + salt) % 7).to(torch.float32)


def total(size, count, salt):
    return sum(values(r, count, salt) for r in range(size))


def first_use_order(rank):
    """The streams in an order of this rank's own: rotated by the rank, odd ranks backwards."""
    order = [(i + 5 * rank) % STREAMS for i in range(STREAMS)]
    return order[::-1] if rank % 2 else order


def eager_on_every_stream(rank, size, streams, groups, failures):
    """Each operation on its own stream, enqueued without waiting in between; ranks call in the same
    order (operations match by call, never by stream), though each reaches its streams in its own order."""
    results = []
    order = first_use_order(rank)
    for round_ in range(ROUNDS):
        for i in range(STREAMS):
            stream = streams[order[i]]
            count = COUNTS[i % len(COUNTS)]
            salt = round_ * STREAMS + i
            group = groups[i % GROUPS]
            with torch.cuda.stream(stream):
                tensor = values(rank, count, salt).cuda()
                dist.all_reduce(tensor, group=group)
            results.append((tensor, stream, count, salt))
    torch.cuda.synchronize()
    for tensor, _, count, salt in results:
        if not torch.equal(tensor.cpu(), total(size, count, salt)):
            failures.append(f"eager allreduce of {count} floats (salt {salt})")


def graphs_beside_eager(rank, size, streams, groups, failures):
    """Graphs captured on three streams (each with collectives of two groups) replay while eager
    collectives run on other streams; both exact."""
    captured = []
    for g, index in enumerate((1, 7, 12)):
        stream = streams[index]
        inputs = [values(rank, COUNTS[k], 100 + 10 * g + k).cuda() for k in range(2)]
        work = [t.clone() for t in inputs]
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up outside the capture, as torch requires of NCCL
            for k in range(2):
                dist.all_reduce(work[k], group=groups[(g + k) % GROUPS])
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for k in range(2):
                dist.all_reduce(work[k], group=groups[(g + k) % GROUPS])
        captured.append((graph, inputs, work, g))
    order = first_use_order(rank)
    for replay in range(ROUNDS):
        eager = []
        for graph, inputs, work, g in captured:
            for k in range(2):
                work[k].copy_(inputs[k])
            torch.cuda.synchronize()
            graph.replay()
            # An eager collective on another stream right behind the replay, same order on every rank.
            stream = streams[order[(replay * 3 + g) % STREAMS]]
            salt = 200 + replay * 3 + g
            with torch.cuda.stream(stream):
                tensor = values(rank, COUNTS[0], salt).cuda()
                dist.all_reduce(tensor, group=groups[3])
            eager.append((tensor, salt))
            torch.cuda.synchronize()
            for k in range(2):
                if not torch.equal(work[k].cpu(), total(size, COUNTS[k], 100 + 10 * g + k)):
                    failures.append(f"graph {g} replay {replay}: allreduce {k}")
        for tensor, salt in eager:
            if not torch.equal(tensor.cpu(), total(size, COUNTS[0], salt)):
                failures.append(f"eager allreduce beside replay {replay} (salt {salt})")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    groups = [dist.group.WORLD] + [dist.new_group(list(range(size))) for _ in range(GROUPS - 1)]
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]
    failures = []
    eager_on_every_stream(rank, size, streams, groups, failures)
    graphs_beside_eager(rank, size, streams, groups, failures)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    preloaded = "libpeerreduce_nccl" in open("/proc/self/maps").read()
    print(f"rank {rank} of {size} (streams, {'library' if preloaded else 'NCCL alone'}): "
          f"{'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
