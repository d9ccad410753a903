"""A rank that arrives late, through the NCCL library: run under torchrun with LD_PRELOAD=libpeerreduce_nccl.so
(the hardware stage does; tests/python/test_torch_gpu.py too where the library is built).

torch.distributed's "nccl" backend, every rank on its own GPU. Rank 1 sleeps LATE_RANK_SECONDS (default 60)
before a 64 KiB allreduce taken by peerreduce, and 5 s (at most LATE_RANK_SECONDS) before a 64 MiB one
(forwarded to NCCL where the take table says so); the other ranks enqueue theirs at once and wait. Training jobs see this
every day (a slow data loader, a checkpoint on one rank): NCCL waits until the watchdog's timeout, and so
must the library (its deadline follows the process group's timeout; the library's own default is 30
minutes, docs/NCCL.md). Every rank checks the sums and prints "(late rank): ok"."""

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def main() -> int:
    late = float(os.environ.get("LATE_RANK_SECONDS", "60"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", timeout=timedelta(seconds=late * 4 + 60))
    rank, size = dist.get_rank(), dist.get_world_size()
    failures = []
    for elements, wait in ((16 << 10, late), (16 << 20, min(late, 5.0))):  # 64 KiB and 64 MiB of fp32
        t = torch.full((elements,), float(rank + 1), device="cuda")
        dist.all_reduce(t[:16])  # warm: the communicator exists before the wait is timed
        torch.cuda.synchronize()
        dist.barrier()
        if rank == 1:
            time.sleep(wait)
        start = time.monotonic()
        t = torch.full((elements,), float(rank + 1), device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        waited = time.monotonic() - start
        want = size * (size + 1) / 2
        if not bool((t == want).all()):
            failures.append(f"{elements * 4} bytes: sum {t[0].item()} != {want}")
        if rank != 1 and waited < wait * 0.9:
            failures.append(f"{elements * 4} bytes: waited {waited:.1f} s, less than the late rank's {wait} s")
        print(f"rank {rank}: {elements * 4} bytes done after {waited:.1f} s", flush=True)
    dist.destroy_process_group()
    print(f"rank {rank} of {size} (late rank): {'ok' if not failures else 'FAILED ' + '; '.join(failures)}",
          flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
