"""A training step timed: `torchrun --nproc-per-node N -m peerreduce.train_bench [--fsdp] [--json F]`.

A small transformer (--layers encoder layers, d_model 1024, 16 heads, feed-forward 4096, fp32 with TF32
matrix products, as training runs them) trained with DistributedDataParallel (or FSDP with --fsdp) on
the "nccl" backend of torch.distributed: run it as it is for NCCL alone and with
LD_PRELOAD=libpeerreduce_nccl.so for NCCL through peerreduce's library. It reports the median step time
(after warm-up, every step started after a barrier so the ranks start together; the batches are made on
the GPU before the timing, so a step is the model's work and its collectives, not the host making data),
the share of the step spent in collective kernels (the profiler's device time of kernels whose names say
nccl or peerreduce, over the steps' time), the loss of every step (the same seeds in every run, so the
curves must agree within rounding) and whether every rank's replica ended identical (a checksum of the
parameters compared across ranks).

Step times of two processes differ by tens of percent whatever their NCCL (the host's Python, clocks),
so with the library preloaded the same process also trains a second, identical replica whose process
group's communicator the library forwards wholly to NCCL (made with PEERREDUCE_NCCL_TAKE=none), the two
replicas' steps alternating on the same batches (which goes first alternates too): the `library` and
`forwarded` sides then differ only in who runs the collectives, and their loss curves must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from .bench import _cpu_group, forwarded_group, nccl_library_path
from .paired import paired_ratios

D_MODEL, HEADS, FEED_FORWARD, TOKENS, BATCH = 1024, 16, 4096, 128, 8
# Loss curves of the two sides in one process: the same model, batches and reductions' inputs, so they
# differ only where the two sum a rank's values in another order (bits alike at two ranks).
LOSS_TOLERANCE = 1e-4


def _model(device, layers: int) -> torch.nn.Module:
    torch.manual_seed(1234)  # the same initial weights on every rank, in every run and on both sides
    stack = [torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FEED_FORWARD, dropout=0.0, batch_first=True)
             for _ in range(layers)]
    return torch.nn.Sequential(*stack).to(device)


def _batch(rank: int, step: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device="cpu").manual_seed(1000 * step + rank)
    x = torch.randn(BATCH, TOKENS, D_MODEL, generator=g)
    return x.to(device), (x * 0.5).to(device)


def _wrap(model, fsdp: bool, device, group):
    if fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel
        return FullyShardedDataParallel(model, device_id=device, process_group=group)
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[device], process_group=group)


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
    """Device time of collective kernels over wall time, for `steps` steps under the profiler.

    A collective kernel's time includes its wait for the other ranks, so this is an upper bound on the
    collectives' share that moves with the ranks' skew (5-82 % for one configuration at 4 ranks): read
    the step times, not this, for what the collectives cost."""
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


class _Side:
    """One replica trained on one process group: its wrapper, optimizer, step times and losses."""

    def __init__(self, name: str, group, args, local_rank: int, device):
        self.name, self.group = name, group
        self.model = _wrap(_model(device, args.layers), args.fsdp, local_rank, group)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=1e-3)
        self.times, self.losses = [], []

    def step(self, batch):
        x, y = batch
        self.optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss

    def timed_step(self, batch) -> None:
        torch.cuda.synchronize()
        dist.barrier(group=_cpu_group())
        start = time.perf_counter()
        loss = self.step(batch)
        torch.cuda.synchronize()
        self.times.append((time.perf_counter() - start) * 1e6)
        self.losses.append(float(loss.item()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fsdp", action="store_true", help="FullyShardedDataParallel instead of DDP")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--json", help="write the results here (rank 0)")
    args = parser.parse_args(argv)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dist.init_process_group("cpu:gloo,cuda:nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)
    preloaded = nccl_library_path()
    sides = [_Side("library" if preloaded else "nccl", None, args, local_rank, device)]
    if preloaded:
        sides.append(_Side("forwarded", forwarded_group(), args, local_rank, device))
    warmup = [_batch(rank, 10_000 + i, device) for i in range(args.warmup)]
    batches = [_batch(rank, i, device) for i in range(args.steps)]
    for batch in warmup:
        for side in sides:
            side.step(batch)
    for index, batch in enumerate(batches):
        order = sides if index % 2 == 0 else sides[::-1]
        for side in order:
            side.timed_step(batch)
    extra = _batch(rank, 20_000, device)
    results = {}
    for side in sides:
        share = _collective_share(lambda: side.step(extra), 5)
        sums = [None] * size
        dist.all_gather_object(sums, _checksum(side.model, args.fsdp), group=_cpu_group())
        results[side.name] = {"step_us": statistics.median(side.times), "collective_share": share,
                              "losses": side.losses, "replicas_identical": all(v == sums[0] for v in sums),
                              "checksum": sums[0]}
    identical = all(r["replicas_identical"] for r in results.values())
    loss_gap = 0.0
    if len(sides) == 2:
        loss_gap = max(abs(a - b) / max(abs(a), abs(b), 1e-30) for a, b in zip(sides[0].losses, sides[1].losses))
    agree = loss_gap <= LOSS_TOLERANCE
    paired = paired_ratios(sides[0].times, sides[1].times) if len(sides) == 2 else None
    first = results[sides[0].name]
    result = {"ranks": size, "wrapper": "fsdp" if args.fsdp else "ddp", "layers": args.layers,
              "nccl_path": preloaded, "sides": results, "loss_gap": loss_gap, "paired_ratios": paired,
              # The first side's figures at the top level, as tables of one side have them.
              "step_us": first["step_us"], "collective_share": first["collective_share"],
              "losses": first["losses"], "replicas_identical": identical, "checksum": first["checksum"]}
    if rank == 0:
        for side in sides:
            r = results[side.name]
            print(f"train_bench: {size} ranks, {result['wrapper']}, {args.layers} layers, NCCL: "
                  f"{preloaded or 'alone'}, side {side.name}: step {r['step_us']:.0f} us (median of {args.steps}), "
                  f"collective kernels (waits for peers included) {100 * r['collective_share']:.1f} % of it, final loss {side.losses[-1]:.6f}, "
                  f"replicas {'identical' if r['replicas_identical'] else 'DIFFER'}")
        if len(sides) == 2:
            ratio = results["library"]["step_us"] / results["forwarded"]["step_us"]
            print(f"train_bench: library/forwarded step {ratio:.3f} (same process, alternating steps); per step "
                  f"pair: median {paired['median']:.3f}, quartiles {paired['lower_quartile']:.3f}-"
                  f"{paired['upper_quartile']:.3f}, library faster in {paired['first_faster']} of "
                  f"{paired['pairs']}; "
                  f"loss curves {'agree' if agree else 'DIFFER'} (largest relative gap {loss_gap:.2e})")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    dist.destroy_process_group()
    return 0 if identical and agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
