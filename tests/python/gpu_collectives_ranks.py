"""One rank of the collectives check of peerreduce.torch's functions, run by torchrun (test_torch_gpu.py
starts it). In order: a CUDA graph captured before any peerreduce collective ran (the communicator made
by peerreduce.torch.communicator(), nothing else), replayed; reduce_scatter_tensor,
all_gather_into_tensor, broadcast, their list forms and barrier against host references in several
dtypes; torch._dynamo.explain finding no graph break in a function that calls them, and torch.compile's
result equal to eager, with the default op, an op by name and an explicit dist.ReduceOp (MAX, MIN);
creation refused inside capture. Exits 0 when every check passed on this rank."""

import os
import sys

import torch
import torch.distributed as dist

import peerreduce
import peerreduce.torch as prt
from peerreduce import _torch_work

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.uint8]


def values(rank, count, dtype, salt=0):
    return ((torch.arange(count, dtype=torch.int64) * 7 + rank * 3 + salt) % 5 + 1).to(dtype)


def check(condition, what, failures):
    if not condition:
        failures.append(what)


def capture_before_any_call(rank, size, failures):
    """Every collective in one graph, captured on a new stream before any of them ever ran."""
    count = 64
    reduced = torch.zeros(count * size, device="cuda")
    mine = torch.zeros(count, device="cuda")
    gathered = torch.zeros(count * size, device="cuda")
    shared = torch.zeros(count, device="cuda")
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        prt.reduce_scatter_tensor(mine, reduced)
        prt.all_gather_into_tensor(gathered, mine)
        prt.broadcast(shared, src=size - 1)
        prt.all_reduce(shared)
    for replay in range(2):
        reduced.copy_(values(rank, count * size, torch.float32, replay))
        shared.fill_(float(rank + replay))
        graph.replay()
        torch.cuda.synchronize()
        total = sum(values(r, count * size, torch.float32, replay) for r in range(size))
        check(torch.equal(gathered.cpu(), total), f"captured reduce-scatter + all-gather, replay {replay}", failures)
        check(bool(torch.all(shared == float(size - 1 + replay) * size)), f"captured broadcast, replay {replay}",
              failures)


def collectives_match_the_host(rank, size, failures):
    for dtype in DTYPES:
        count = 1001
        whole = [values(r, count * size, dtype) for r in range(size)]
        total = sum(w.to(torch.int64) for w in whole).to(dtype)
        out = torch.empty(count, dtype=dtype, device="cuda")
        prt.reduce_scatter_tensor(out, whole[rank].cuda())
        check(torch.equal(out.cpu(), total[rank * count:(rank + 1) * count]), f"reduce_scatter_tensor {dtype}",
              failures)
        gathered = torch.empty(count * size, dtype=dtype, device="cuda")
        prt.all_gather_into_tensor(gathered, values(rank, count, dtype).cuda())
        check(torch.equal(gathered.cpu(), torch.cat([values(r, count, dtype) for r in range(size)])),
              f"all_gather_into_tensor {dtype}", failures)
        tensor = values(rank, count, dtype).cuda()
        prt.broadcast(tensor, src=size - 1)
        check(torch.equal(tensor.cpu(), values(size - 1, count, dtype)), f"broadcast {dtype}", failures)
    # The list forms and the barrier.
    pieces = [torch.empty(5, 3, device="cuda") for _ in range(size)]
    prt.all_gather(pieces, torch.full((5, 3), float(rank), device="cuda"))
    check(all(bool(torch.all(p == r)) for r, p in enumerate(pieces)), "all_gather list", failures)
    out = torch.empty(7, device="cuda")
    prt.reduce_scatter(out, [torch.full((7,), float(r + rank), device="cuda") for r in range(size)],
                       op=dist.ReduceOp.MAX)
    check(bool(torch.all(out == rank + size - 1)), "reduce_scatter list (max)", failures)
    prt.barrier()
    try:
        prt.all_gather([torch.empty(3, device="cuda")], torch.empty(3, device="cuda"))
        check(size == 1, "a list of the wrong length was taken", failures)
    except peerreduce.InvalidArgumentError as e:
        check("one tensor per rank" in str(e), f"wrong list error: {e}", failures)


def compiled_without_graph_breaks(rank, size, failures):
    def step(x, gathered, mine):
        y = x * 2
        prt.all_reduce(y)
        prt.all_gather_into_tensor(gathered, y)
        prt.reduce_scatter_tensor(mine, gathered)
        prt.broadcast(mine, src=0)
        return y + 1, mine * 3

    x = torch.full((8,), float(rank + 1), device="cuda")
    explanation = torch._dynamo.explain(step)(x, torch.empty(8 * size, device="cuda"), torch.empty(8, device="cuda"))
    check(explanation.graph_break_count == 0, f"{explanation.graph_break_count} graph breaks: "
          f"{[str(b.reason)[:200] for b in explanation.break_reasons]}", failures)
    eager = step(x.clone(), torch.empty(8 * size, device="cuda"), torch.empty(8, device="cuda"))
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        compiled = torch.compile(step, backend=backend, fullgraph=True)
        got = compiled(x.clone(), torch.empty(8 * size, device="cuda"), torch.empty(8, device="cuda"))
        check(all(torch.equal(a, b) for a, b in zip(got, eager)), f"torch.compile ({backend}) differs from eager",
              failures)


def compiled_with_reduce_ops(rank, size, failures):
    """An explicit op inside torch.compile(fullgraph=True): no graph break, and the reduced values. By name
    on every PyTorch with custom ops; as a dist.ReduceOp where torch.compile takes one as a constant
    (peerreduce registers RedOpType as a pytree constant: PyTorch 2.7 and later)."""
    def op_by_enum(x, shard):
        y = x * 2
        prt.all_reduce(y, op=dist.ReduceOp.MAX)
        prt.reduce_scatter_tensor(shard, (y + x).repeat(size), op=dist.ReduceOp.MIN)
        return y + 1, shard

    def op_by_name(x, shard):
        y = x * 2
        prt.all_reduce(y, op="max")
        prt.reduce_scatter_tensor(shard, (y + x).repeat(size), op="min")
        return y + 1, shard

    cases = [("op='max'", op_by_name)]
    if _torch_work.REDUCE_OPS_ARE_CONSTANTS:
        cases.append(("op=dist.ReduceOp.MAX", op_by_enum))
    else:
        print(f"rank {rank}: PyTorch {torch.__version__} cannot take a dist.ReduceOp as a constant in torch.compile; "
              "checked ops by name only", flush=True)
    x = torch.full((8,), float(rank + 1), device="cuda")
    # max of 2 (r + 1) is 2 size; the reduce-scatter's min over ranks of 2 size + r + 1 is 2 size + 1.
    want = (torch.full((8,), 2.0 * size + 1), torch.full((8,), 2.0 * size + 1))
    for what, step in cases:
        eager = step(x.clone(), torch.empty(8, device="cuda"))
        check(all(torch.equal(e.cpu(), w) for e, w in zip(eager, want)), f"{what}: eager results", failures)
        # Tracing fails the same way on every rank, so the ranks' collectives stay matched.
        try:
            torch._dynamo.reset()
            explanation = torch._dynamo.explain(step)(x.clone(), torch.empty(8, device="cuda"))
            check(explanation.graph_break_count == 0, f"{what}: {explanation.graph_break_count} graph breaks: "
                  f"{[str(b.reason)[:200] for b in explanation.break_reasons]}", failures)
            for backend in ("aot_eager", "inductor"):
                torch._dynamo.reset()
                got = torch.compile(step, backend=backend, fullgraph=True)(x.clone(), torch.empty(8, device="cuda"))
                check(all(torch.equal(g.cpu(), w) for g, w in zip(got, want)), f"{what}: torch.compile ({backend})",
                      failures)
        except Exception as e:  # this check's failure; the others still run
            failures.append(f"{what}: tracing raised {type(e).__name__}: {str(e)[:300]}")


def creation_inside_capture_is_refused(failures):
    other = dist.new_group(list(range(dist.get_world_size())))
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            prt.all_reduce(torch.zeros(4, device="cuda"), group=other)
        failures.append("creation inside capture was not refused")
    except peerreduce.UnsupportedError as e:
        check("before capturing" in str(e), f"capture refusal does not say what to do: {e}", failures)
    except RuntimeError as e:  # torch may wrap what the custom op raised
        check("before capturing" in str(e), f"capture refusal does not say what to do: {e}", failures)


def tensor_parallel_pair(rank, size, failures):
    """A tensor-parallel subgroup of the last two ranks (2 and 3 of 4) runs on those ranks' own GPUs, the
    caller's current device unchanged; a tensor of another GPU is refused with an error that names both
    devices. Needs a GPU per rank."""
    if size < 4 or torch.cuda.device_count() < size:  # the same answer on every rank
        return
    members = [size - 2, size - 1]
    pair = dist.new_group(members)  # every rank makes the group, as torch.distributed requires
    if rank not in members:
        return
    before = torch.cuda.current_device()
    check(before == rank, f"rank {rank}: current device {before} before the pair's calls", failures)
    tensor = values(rank, 4096, torch.float32).cuda()
    prt.all_reduce(tensor, group=pair)
    gathered = torch.empty(2 * 4096, device="cuda")
    prt.all_gather_into_tensor(gathered, values(rank, 4096, torch.float32).cuda(), group=pair)
    torch.cuda.synchronize()
    check(torch.equal(tensor.cpu(), sum(values(r, 4096, torch.float32) for r in members)),
          f"rank {rank}: the pair's all_reduce", failures)
    check(torch.equal(gathered.cpu(), torch.cat([values(r, 4096, torch.float32) for r in members])),
          f"rank {rank}: the pair's all_gather_into_tensor", failures)
    check(torch.cuda.current_device() == before,
          f"rank {rank}: current device {torch.cuda.current_device()} after the pair's calls, {before} before", failures)
    elsewhere = torch.ones(16, device=f"cuda:{(rank + 1) % torch.cuda.device_count()}")
    try:
        prt.all_reduce(elsewhere, group=pair)
        failures.append(f"rank {rank}: a tensor of another GPU was not refused")
    except peerreduce.InvalidArgumentError as e:
        check(f"device {rank}" in str(e) and f"device {(rank + 1) % torch.cuda.device_count()}" in str(e),
              f"rank {rank}: the refusal does not name both devices: {e}", failures)
    except RuntimeError as e:  # torch may wrap what the custom op raised
        check("device" in str(e), f"rank {rank}: the refusal does not name the device: {e}", failures)
    check(torch.cuda.current_device() == before, f"rank {rank}: current device changed by a refused call", failures)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    one_gpu = torch.cuda.device_count() < int(os.environ["LOCAL_WORLD_SIZE"])
    dist.init_process_group("gloo" if one_gpu else "nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    failures = []
    prt.communicator()  # the only thing before capture: made and prepared, no collective run
    capture_before_any_call(rank, size, failures)
    collectives_match_the_host(rank, size, failures)
    compiled_without_graph_breaks(rank, size, failures)
    compiled_with_reduce_ops(rank, size, failures)
    creation_inside_capture_is_refused(failures)
    tensor_parallel_pair(rank, size, failures)
    prt.close_all()
    dist.destroy_process_group()
    print(f"rank {rank} of {size} (collectives): {'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
