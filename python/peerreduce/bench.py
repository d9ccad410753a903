"""peerreduce against torch.distributed (NCCL) on the same tensors: `python -m peerreduce.bench`.

Run one process per rank (torchrun --nproc-per-node N -m peerreduce.bench). For each size it times
peerreduce's all_reduce and torch.distributed.all_reduce with the NCCL backend, each eagerly (a loop of
calls) and replayed from a CUDA graph, on the same buffers, and prints the times and their ratio (rank 0);
--json writes the table. Skew-free: every timing starts after a barrier (a host barrier over
torch.distributed, then the GPU drained), so no rank's time includes waiting for a late peer; the slowest
rank's time counts (a max over the ranks), as peerreduce-bench and nccl-tests report.

Started with the NCCL library preloaded (LD_PRELOAD=libpeerreduce_nccl.so), the "NCCL" columns are what
torch.distributed reaches through it: the table's header says which (`nccl_path` in the JSON), so the two
runs of the hardware stage give three columns (peerreduce's package, NCCL alone, NCCL through the
library); bench_merge.py puts them side by side. Those two columns come from different processes, whose
PyTorch host paths differ by up to 2 x in eager calls, so the preloaded run also times NCCL's own kernels in
the same process: a second process group whose communicator is made with PEERREDUCE_NCCL_TAKE=none
(the library forwards its every call to NCCL; the library's share of a forwarded call is a table lookup),
timed right after the library's group on the same tensors ("forwarded" columns, `lib/fwd`: the library
against NCCL with every other cost of the process alike).

With every rank on one GPU, NCCL cannot run (it needs a GPU per rank): the table then has peerreduce
alone, plus the host cost of one call through this package against one call of the C function through
ctypes (the Python path's overhead).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from . import _buffers, _native
from . import torch as prt

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20]


_aligner = None


def _barrier() -> None:
    """Every rank's GPU drained and every rank here, then the ranks' streams aligned on the GPU: a host
    barrier over TCP lets ranks leave tens of microseconds apart, which a 20-operation timing would
    spread over its operations; a small allreduce enqueued right before the start event ends within a
    few microseconds on every rank, so the timed work starts together."""
    global _aligner
    torch.cuda.synchronize()
    dist.barrier()
    if _aligner is None:
        _aligner = (prt.communicator(), torch.zeros(256, device="cuda"))
    comm, tensor = _aligner
    comm.all_reduce(tensor)


def _slowest(value: float) -> float:
    """The largest of the ranks' values (each rank times its own stream)."""
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=_cpu_group())
    return float(t.item())


_cpu_group_handle = None


def _cpu_group():
    """A gloo group for the bench's own bookkeeping, so no timing goes through the library measured."""
    global _cpu_group_handle
    if _cpu_group_handle is None:
        _cpu_group_handle = dist.new_group(backend="gloo")
    return _cpu_group_handle


def _median_of_timed(run, iterations: int, repeats: int, host: list | None = None) -> float:
    """Microseconds per operation of `run()` (which enqueues `iterations` operations), timed with CUDA
    events after a barrier: the median over `repeats` of the slowest rank's time. With `host`, the median
    of the slowest rank's host time per operation (the enqueue loop's own) is appended to it: where that
    is about the GPU's time, the calls were host-bound."""
    times, host_times = [], []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        _barrier()
        start.record()
        began = time.perf_counter()
        run()
        enqueued = time.perf_counter()
        stop.record()
        stop.synchronize()
        times.append(_slowest(start.elapsed_time(stop) * 1000.0 / iterations))
        host_times.append(_slowest((enqueued - began) * 1e6 / iterations))
    if host is not None:
        host.append(statistics.median(host_times))
    return statistics.median(times)


def _time_eager(fn, iterations: int, repeats: int = 5, host: list | None = None) -> float:
    """Microseconds per call of `fn` enqueued back to back (after a warm-up); `host` as _median_of_timed's."""
    for _ in range(3):
        fn()

    def loop():
        for _ in range(iterations):
            fn()

    return _median_of_timed(loop, iterations, repeats, host)


_capture_stream = None


def _time_graph(fn, iterations: int, repeats: int = 5) -> float:
    """Microseconds per call of `fn` replayed from a CUDA graph of `iterations` calls."""
    global _capture_stream
    if _capture_stream is None:
        _capture_stream = torch.cuda.Stream()
    stream = _capture_stream
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(iterations):
            fn()
    graph.replay()
    return _median_of_timed(graph.replay, iterations, repeats)


def _host_overhead(comm, tensor, rounds: int = 20, calls: int = 50) -> tuple[float, float]:
    """Host microseconds per enqueue: through Communicator.all_reduce, and through ctypes directly. Each
    round enqueues `calls` operations, far fewer than a stream queues, then waits for them: so no enqueue
    waits for the GPU to make room (with ranks time-sliced on one GPU an operation takes milliseconds),
    and the time is the host's alone. Best round of `rounds`."""
    buffer = _buffers.describe(tensor, "tensor")
    stream = torch.cuda.current_stream().cuda_stream
    lib = _native.library()
    handle = comm._live()

    def best_round(call) -> float:
        best = float("inf")
        for _ in range(rounds):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                call()
            best = min(best, (time.perf_counter() - start) * 1e6 / calls)
        torch.cuda.synchronize()
        return best

    python_us = best_round(lambda: comm.all_reduce(tensor))
    direct_us = best_round(lambda: lib.prAllReduce(buffer.address, buffer.address, buffer.count, buffer.dtype, 0,
                                                   handle, ctypes.c_void_p(stream)))
    return python_us, direct_us


def forwarded_group():
    """A process group of every rank whose NCCL communicator the preloaded library forwards wholly to
    NCCL: the library reads PEERREDUCE_NCCL_TAKE when a communicator is made, so the variable is set to
    "none" around the group's first collective (where torch makes its communicator) and restored after.
    The default group's communicator is made first, under the process's own setting."""
    warm = torch.zeros(1, device="cuda")
    dist.all_reduce(warm)
    torch.cuda.synchronize()
    previous = os.environ.get("PEERREDUCE_NCCL_TAKE")
    os.environ["PEERREDUCE_NCCL_TAKE"] = "none"
    try:
        group = dist.new_group(backend="nccl")
        dist.all_reduce(warm, group=group)
        torch.cuda.synchronize()
    finally:
        if previous is None:
            del os.environ["PEERREDUCE_NCCL_TAKE"]
        else:
            os.environ["PEERREDUCE_NCCL_TAKE"] = previous
    return group


def nccl_library_path() -> str:
    """The NCCL this process reaches: the preloaded NCCL library's path if it is mapped, else ''."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libpeerreduce_nccl" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # The 8-bit floats need a torch that has them (2.1 and later; NCCL's own column, 2.24 and a torch that
    # passes them to it).
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-bytes", type=int, default=256 << 20)
    parser.add_argument("--json", help="write the table here (rank 0)")
    args = parser.parse_args(argv)

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = local_rank % torch.cuda.device_count()
    torch.cuda.set_device(device)
    one_gpu = torch.cuda.device_count() < int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    dist.init_process_group("gloo" if one_gpu else "cpu:gloo,cuda:nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    dtype = getattr(torch, args.dtype)
    comm = prt.communicator()
    preloaded = nccl_library_path()
    forwarded = forwarded_group() if preloaded and not one_gpu else None
    rows = []
    for nbytes in [s for s in SIZES if s <= args.max_bytes]:
        count = nbytes // torch.tensor([], dtype=dtype).element_size()
        tensor = torch.randn(count, device="cuda").to(dtype)
        host = []
        row = {"bytes": nbytes,
               "peerreduce_us": _time_eager(lambda: comm.all_reduce(tensor), args.iterations, args.repeats, host),
               "peerreduce_graph_us": _time_graph(lambda: comm.all_reduce(tensor), args.iterations, args.repeats)}
        row["peerreduce_host_us"] = host[-1]
        if not one_gpu:
            row["nccl_us"] = _time_eager(lambda: dist.all_reduce(tensor), args.iterations, args.repeats, host)
            row["nccl_host_us"] = host[-1]
            row["nccl_graph_us"] = _time_graph(lambda: dist.all_reduce(tensor), args.iterations, args.repeats)
            row["ratio"] = row["peerreduce_us"] / row["nccl_us"]
            row["graph_ratio"] = row["peerreduce_graph_us"] / row["nccl_graph_us"]
        if forwarded is not None:
            def forwarded_call():
                dist.all_reduce(tensor, group=forwarded)
            row["nccl_forwarded_us"] = _time_eager(forwarded_call, args.iterations, args.repeats, host)
            row["nccl_forwarded_host_us"] = host[-1]
            row["nccl_forwarded_graph_us"] = _time_graph(forwarded_call, args.iterations, args.repeats)
        rows.append(row)
    # Made in fp32 and converted: not every torch fills 8-bit float tensors.
    python_us, direct_us = _host_overhead(comm, torch.ones(1024, device="cuda").to(dtype))
    if rank == 0:
        nccl_name = "NCCL library" if preloaded else "NCCL"
        print(f"peerreduce.bench: {size} ranks, {args.dtype}, {'one GPU shared' if one_gpu else 'one GPU each'}, "
              f"slowest rank, median of {args.repeats}; NCCL column: "
              f"{'torch.distributed through ' + preloaded if preloaded else 'torch.distributed, NCCL alone'}")
        header = f"{'bytes':>10} {'peerreduce us':>14} {'(host)':>8} {'graph us':>10}"
        if not one_gpu:
            header += f" {nccl_name + ' us':>16} {'(host)':>8} {'graph us':>10} {'ratio':>7} {'graph ratio':>11}"
        if forwarded is not None:
            header += f" {'forwarded us':>13} {'(host)':>8} {'graph us':>10} {'lib/fwd':>8} {'graph lib/fwd':>13}"
        print(header)
        for row in rows:
            line = (f"{row['bytes']:>10} {row['peerreduce_us']:>14.2f} {row['peerreduce_host_us']:>8.2f}"
                    f" {row['peerreduce_graph_us']:>10.2f}")
            if not one_gpu:
                line += (f" {row['nccl_us']:>16.2f} {row['nccl_host_us']:>8.2f} {row['nccl_graph_us']:>10.2f}"
                         f" {row['ratio']:>7.3f} {row['graph_ratio']:>11.3f}")
            if forwarded is not None:
                line += (f" {row['nccl_forwarded_us']:>13.2f} {row['nccl_forwarded_host_us']:>8.2f}"
                         f" {row['nccl_forwarded_graph_us']:>10.2f}"
                         f" {row['nccl_us'] / row['nccl_forwarded_us']:>8.3f}"
                         f" {row['nccl_graph_us'] / row['nccl_forwarded_graph_us']:>13.3f}")
            print(line)
        print("(host): the slowest rank's host time per eager call, median; about the eager time: host-bound")
        if forwarded is not None:
            print("forwarded: the same process's group whose communicator forwards every call to NCCL "
                  "(PEERREDUCE_NCCL_TAKE=none); lib/fwd: the library's time over NCCL's, same process")
        print(f"host cost of one enqueue: {python_us:.2f} us through peerreduce.Communicator.all_reduce, "
              f"{direct_us:.2f} us calling prAllReduce through ctypes")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": size, "dtype": args.dtype, "one_gpu": one_gpu, "nccl_path": preloaded,
                           "rows": rows, "host_us": {"python": python_us, "ctypes": direct_us}}, f, indent=1)
    prt.close_all()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
