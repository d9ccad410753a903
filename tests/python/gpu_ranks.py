"""One rank of the PyTorch GPU checks, run by torchrun (test_torch_gpu.py starts it). Exits 0 when every
check passed on this rank. With fewer GPUs than ranks the ranks share a GPU (correct, slow) and results
are checked against a reference computed on the host; with a GPU each, also against NCCL's."""

import os
import sys

import torch
import torch.distributed as dist

import peerreduce
import peerreduce.torch as prt

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.uint8,
          torch.int8]
OPS = ["sum", "prod", "min", "max", "avg"]


def payload(rank, count, dtype, salt):
    generator = torch.Generator().manual_seed(1000 * salt + rank)
    values = torch.randint(1, 4, (count,), generator=generator)
    return values.to(dtype)


def reference(inputs, op):
    stack = torch.stack([t.to(torch.float64) for t in inputs])
    if op == "sum":
        out = stack.sum(0)
    elif op == "prod":
        out = stack.prod(0)
    elif op == "min":
        out = stack.min(0).values
    elif op == "max":
        out = stack.max(0).values
    else:
        out = stack.sum(0) / len(inputs)
        if not inputs[0].is_floating_point():
            out = stack.sum(0).div(len(inputs), rounding_mode="trunc")
    return out


def check(condition, what, failures):
    if not condition:
        failures.append(what)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    one_gpu = torch.cuda.device_count() < int(os.environ["LOCAL_WORLD_SIZE"])
    dist.init_process_group("gloo" if one_gpu else "nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    failures = []
    comm = prt.communicator()
    salt = 0
    for dtype in DTYPES:
        for op in OPS:
            if op == "prod" and dtype in (torch.uint8, torch.int8):
                continue  # 3^size overflows 8 bits: wrapping is checked elsewhere (the C++ suites)
            salt += 1
            count = 3001
            inputs = [payload(r, count, dtype, salt) for r in range(size)]
            tensor = inputs[rank].cuda()
            out = torch.empty_like(tensor)
            comm.all_reduce(tensor, op=op, out=out)
            torch.cuda.synchronize()
            expected = reference(inputs, op)
            got = out.cpu().to(torch.float64)
            tolerance = 0 if not dtype.is_floating_point else (1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6)
            check(torch.allclose(got, expected, rtol=tolerance, atol=tolerance), f"{dtype} {op} vs host", failures)
            if not one_gpu and op in ("sum", "min", "max") and not dtype.is_floating_point:
                nccl = inputs[rank].cuda()
                dist.all_reduce(nccl, op={"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN,
                                          "max": dist.ReduceOp.MAX}[op])
                check(torch.equal(nccl, out), f"{dtype} {op} vs NCCL", failures)
    # The 8-bit floats (torch 2.1 and later): element i is nonzero on rank i % size alone, so every partial
    # sum is exact in fp8 whatever the fold order, and the results are compared bit for bit.
    for name in ("float8_e4m3fn", "float8_e5m2"):
        dtype = getattr(torch, name, None)
        if dtype is None:
            continue
        count = 3001
        index = torch.arange(count)
        values = [torch.where(index % size == r, (index * 7 + r) % 9 - 4, 0).to(torch.float64) for r in range(size)]
        for op in ("sum", "max"):
            tensor = values[rank].to(dtype).cuda()
            out = torch.empty_like(tensor)
            comm.all_reduce(tensor, op=op, out=out)
            torch.cuda.synchronize()
            stack = torch.stack(values)
            expected = stack.sum(0) if op == "sum" else stack.max(0).values
            check(torch.equal(out.cpu().to(torch.float64), expected), f"{name} {op} vs host", failures)
    # A batch of 64 small tensors, against each tensor's own reduction.
    sizes = [1 + 37 * i for i in range(64)]
    batch = [payload(rank, n, torch.float32, 900 + i).cuda() for i, n in enumerate(sizes)]
    expected = [reference([payload(r, n, torch.float32, 900 + i) for r in range(size)], "sum")
                for i, n in enumerate(sizes)]
    prt.all_reduce_coalesced(batch)
    torch.cuda.synchronize()
    check(all(torch.equal(b.cpu().to(torch.float64), e) for b, e in zip(batch, expected)), "batch of 64", failures)
    # Inside CUDA graph capture: every replay reduces what the static input holds then.
    static = torch.zeros(4096, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        comm.all_reduce(static)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        comm.all_reduce(static)
    for replay in range(3):
        static.fill_(float(rank + replay))
        graph.replay()
        torch.cuda.synchronize()
        want = float(sum(r + replay for r in range(size)))
        check(bool(torch.all(static == want)), f"graph replay {replay}", failures)
    # Inspection as plain data.
    check(comm.memory_stats()["capacity_bytes"] > 0, "memory_stats", failures)
    check(comm.explain(1 << 20, torch.float32)["candidates"] != [], "explain", failures)
    prt.close_all()
    dist.destroy_process_group()
    print(f"rank {rank} of {size} ({'one GPU shared' if one_gpu else 'GPU each'}): "
          f"{'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
