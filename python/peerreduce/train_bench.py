"""A training step timed: `torchrun --nproc-per-node N -m peerreduce.train_bench [--fsdp] [--json F]`.

A small transformer block (one encoder layer, d_model 1024, 16 heads, feed-forward 4096, fp32) trained
with DistributedDataParallel (or FSDP with --fsdp) on the "nccl" backend of torch.distributed: run it as
it is for NCCL alone and with LD_PRELOAD=libpeerreduce_nccl.so for NCCL through peerreduce's library, and
compare the two JSON files. It reports the median step time (after warm-up, every step started after a
barrier so the ranks start together), the share of the step spent in collective kernels (the profiler's
device time of kernels whose names say nccl or peerreduce, over the steps' time), the loss of every step
(the same seeds in both runs, so the curves must agree within rounding) and whether every rank's replica
ended identical (a checksum of the parameters compared across ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from .bench import nccl_library_path

D_MODEL, HEADS, FEED_FORWARD, TOKENS, BATCH = 1024, 16, 4096, 128, 8


def _model(device) -> torch.nn.Module:
    torch.manual_seed(1234)  # the same initial weights on every rank and in every run
    layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FEED_FORWARD, dropout=0.0, batch_first=True)
    return layer.to(device)


def _batch(rank: int, step: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cpu").manual_seed(1000 * step + rank)
    x = torch.randn(BATCH, TOKENS, D_MODEL, generator=g)
    return x.to(device), (x * 0.5).to(device)


def _wrap(model, fsdp: bool, device):
    if fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel
        return FullyShardedDataParallel(model, device_id=device)
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[device])


def _checksum(model, fsdp: bool) -> float:
    """The sum of every parameter (FSDP: of the full parameters, gathered, so every rank sums the same)."""
    import contextlib
    full = contextlib.nullcontext()
    if fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel
        full = FullyShardedDataParallel.summon_full_params(model)
    with torch.no_grad(), full:
        return float(sum(p.double().sum().item() for p in model.parameters()))


def _collective_share(step, steps: int) -> float:
    """Device time of collective kernels over wall time, for `steps` steps under the profiler."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        wall_us = (time.perf_counter() - start) * 1e6
    names = ("nccl", "peerreduce")
    busy = sum(e.device_time for e in prof.events() if any(n in e.name.lower() for n in names))
    return busy / wall_us if wall_us > 0 else 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fsdp", action="store_true", help="FullyShardedDataParallel instead of DDP")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", help="write the results here (rank 0)")
    args = parser.parse_args(argv)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("cpu:gloo,cuda:nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)
    model = _wrap(_model(device), args.fsdp, local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = []

    def step(index=None):
        x, y = _batch(rank, len(losses) if index is None else index, device)
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for i in range(args.warmup):
        step(10_000 + i)
    times = []
    for _ in range(args.steps):
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
        losses.append(float(loss.item()))
    share = _collective_share(lambda: step(20_000), 5)
    sums = [None] * size
    dist.all_gather_object(sums, _checksum(model, args.fsdp))
    identical = all(s == sums[0] for s in sums)
    result = {"ranks": size, "wrapper": "fsdp" if args.fsdp else "ddp", "nccl_path": nccl_library_path(),
              "step_us": statistics.median(times), "collective_share": share, "losses": losses,
              "replicas_identical": identical, "checksum": sums[0]}
    if rank == 0:
        print(f"train_bench: {size} ranks, {result['wrapper']}, NCCL: {result['nccl_path'] or 'alone'}: "
              f"step {result['step_us']:.0f} us (median of {args.steps}), collectives {100 * share:.1f} % of it, "
              f"final loss {losses[-1]:.6f}, replicas {'identical' if identical else 'DIFFER'}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    dist.destroy_process_group()
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
