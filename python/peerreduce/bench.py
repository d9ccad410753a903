"""peerreduce against torch.distributed (NCCL) on the same tensors: `python -m peerreduce.bench`.

Run one process per rank (torchrun --nproc-per-node N -m peerreduce.bench). For each size it times
peerreduce's all_reduce and torch.distributed.all_reduce with the NCCL backend, each eagerly (a loop of
calls) and replayed from a CUDA graph, on the same buffers, and prints the times and their ratio (rank 0);
--json writes the table. Skew-free: every timing starts after a barrier (a host barrier over
torch.distributed, then the GPU drained), so no rank's time includes waiting for a late peer; the slowest
rank's time counts (a max over the ranks), as peerreduce-bench and nccl-tests report.

Eager calls are host-bound (a few microseconds of GPU work against tens of the host's), and the host's cost
drifts within a process and differs between processes. So the eager columns of one process are timed in
interleaved rounds: each round times every column once (--iterations calls after a barrier), in an order
rotated from round to round so that no column always goes first; a column's time is the median over the
--repeats rounds, and a ratio is also given as the median of its per-round ratios (the two times of a
round were taken a few milliseconds apart, so drift between rounds cancels). Graph replays are timed
column after column (--graph-iterations calls captured, the median of --graph-repeats replays).

Started with the NCCL library preloaded (LD_PRELOAD=libpeerreduce_nccl.so), the "NCCL" columns are what
torch.distributed reaches through it: the table's header says which (`nccl_path` in the JSON), so the two
runs of the hardware stage give three columns (peerreduce's package, NCCL alone, NCCL through the
library); bench_merge.py puts them side by side. Those two columns come from different processes, whose
PyTorch host paths differ by up to 2 x in eager calls, so the preloaded run also times NCCL's own kernels in
the same process: a second process group whose communicator is made with PEERREDUCE_NCCL_TAKE=none
(the library forwards its every call to NCCL; the library's share of a forwarded call is a table lookup),
timed in the same rounds as the library's group on the same tensors ("forwarded" columns, `lib/fwd`: the
library against NCCL with every other cost of the process alike). That same-process ratio is the
library's headline; the ratio to NCCL alone is a cross-process one.

--pin-cpus auto pins each local rank's process, before torch.distributed starts its threads, to its own
few physical cores (whole SMT sibling groups), those local to its GPU where sysfs says which: the host's
cost per call then depends less on where the scheduler put the process. Pinning never fails the run: what
could not be done is printed instead (rank 0 prints every rank's outcome).

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
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

from . import _buffers, _native

try:
    import torch
    import torch.distributed as dist

    from . import torch as prt
except ImportError as missing:  # The pure parts below (round order, ratios, the CPU choice) need no PyTorch.
    torch = dist = prt = None
    _torch_missing = missing

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20]

# Calls of each column before its first round: the first calls of a communicator connect and load kernels.
WARMUP_CALLS = 3

# Physical cores per local rank under --pin-cpus auto: room for the threads that work during a timing (the
# main thread, NCCL's proxy thread, gloo's and the CUDA runtime's) without sharing a core, while 8 ranks
# take 32 cores, fewer than a GPU host has.
CORES_PER_RANK = 4


# ---------------------------------------------------------------------------------------------------
# The eager rounds and their ratios (pure: tested without a GPU).


def round_orders(columns: int, rounds: int) -> list[list[int]]:
    """The order of the columns (their indices) in each of `rounds` rounds: the order rotated by one each
    round (A B C, B C A, C A B, ...), so every column goes first, and follows every other, equally often."""
    return [[(first + k) % columns for k in range(columns)] for first in range(rounds)]


def interleaved_rounds(names: Sequence[str], rounds: int, time_one: Callable[[str], tuple]) -> dict[str, list]:
    """Every column's samples, `time_one(name)` called once per column per round in round_orders' order."""
    samples = {name: [] for name in names}
    for order in round_orders(len(names), rounds):
        for index in order:
            samples[names[index]].append(time_one(names[index]))
    return samples


def median_of_round_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median over rounds of numerator / denominator, the two taken in the same round: where the host
    speeds up or slows down between rounds, both times of a round move together and the ratio holds,
    where the ratio of the two medians can pair a fast round with a slow one."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError(f"need as many rounds of each column, at least one: {len(numerators)} and "
                         f"{len(denominators)}")
    return statistics.median(n / d for n, d in zip(numerators, denominators))


def eager_fields(device_us: dict[str, list[float]], host_us: dict[str, list[float]]) -> dict:
    """A row's eager fields from every column's per-round times (the slowest rank's, microseconds per
    call): `<column>_us` and `<column>_host_us` (medians over the rounds), the rounds themselves
    (`eager_rounds_us`), and the ratios of the columns timed in the same process: `ratio` and
    `ratio_per_round` (the package over NCCL), `library_to_forwarded` and `library_to_forwarded_per_round`
    (NCCL through the library over NCCL forwarded by it)."""
    row = {}
    for name, rounds in device_us.items():
        row[f"{name}_us"] = statistics.median(rounds)
        row[f"{name}_host_us"] = statistics.median(host_us[name])
    row["eager_rounds_us"] = {name: list(rounds) for name, rounds in device_us.items()}
    for key, numerator, denominator in (("ratio", "peerreduce", "nccl"),
                                        ("library_to_forwarded", "nccl", "nccl_forwarded")):
        if numerator in device_us and denominator in device_us:
            row[key] = row[f"{numerator}_us"] / row[f"{denominator}_us"]
            row[f"{key}_per_round"] = median_of_round_ratios(device_us[numerator], device_us[denominator])
    return row


# ---------------------------------------------------------------------------------------------------
# Pinning to CPUs (the choice is pure: tested on topologies given as data).


def parse_cpulist(text: str) -> set[int]:
    """The CPUs of a sysfs list such as "0-3,48-51"."""
    cpus = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def format_cpulist(cpus: Iterable[int]) -> str:
    """The sysfs form of `cpus` ("0-3,48-51")."""
    ranges = []
    for cpu in sorted(cpus):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def pci_address(bus, domain: int = 0, device: int = 0) -> str:
    """A GPU's PCI address as sysfs names it ("0000:19:00.0", lower case) from torch's device properties:
    `pci_bus_id` is the bus number (with `pci_domain_id` and `pci_device_id` beside it) in the PyTorch
    releases that have it, or a whole address string (whose domain may have 8 digits, as NVML writes it)."""
    if isinstance(bus, str):
        parts = bus.strip().lower().split(":")
        if len(parts) == 2:
            parts.insert(0, "0")
        if len(parts) != 3:
            raise ValueError(f"not a PCI address: {bus!r}")
        return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    return f"{domain:04x}:{bus:02x}:{device:02x}.0"


@dataclass(frozen=True)
class CpuChoice:
    """The CPUs chosen for one local rank: `cores` (SMT sibling groups), of which `local` are local to
    its GPU."""
    cores: tuple[tuple[int, ...], ...]
    local: int

    @property
    def cpus(self) -> tuple[int, ...]:
        return tuple(sorted(cpu for core in self.cores for cpu in core))


def choose_cpus(cores: Sequence[Collection[int]], gpu_local: Sequence[Collection[int] | None],
                cores_per_rank: int = CORES_PER_RANK) -> list[CpuChoice]:
    """Disjoint physical cores for each local rank: `cores` are the host's SMT sibling groups, `gpu_local`
    the CPUs local to each local rank's GPU (None where unknown). Each rank gets the same number of whole
    cores, at most `cores_per_rank`, first those wholly local to its GPU (every rank in turn), then any left.
    The core of CPU 0 goes last (the kernel's housekeeping and many interrupts land there). Every process of
    the host computes the same answer from the same data and takes its own rank's. Ranks get no cores
    where there are fewer cores than ranks."""
    ranks = len(gpu_local)
    if ranks == 0:
        return []
    per_rank = min(cores_per_rank, len(cores) // ranks)
    free = sorted((tuple(sorted(core)) for core in cores), key=lambda core: (0 in core, core))
    taken = [[] for _ in range(ranks)]
    if per_rank == 0:
        return [CpuChoice((), 0) for _ in range(ranks)]
    for rank, local in enumerate(gpu_local):
        if not local:
            continue
        for core in [core for core in free if set(core) <= set(local)][:per_rank]:
            taken[rank].append(core)
            free.remove(core)
    local_counts = [len(cores_taken) for cores_taken in taken]
    for rank in range(ranks):
        while len(taken[rank]) < per_rank:
            taken[rank].append(free.pop(0))
    return [CpuChoice(tuple(taken[rank]), local_counts[rank]) for rank in range(ranks)]


def read_cores(allowed: Collection[int], sys_root: str = "/sys") -> tuple[list[tuple[int, ...]], int]:
    """The SMT sibling groups of the `allowed` CPUs from sysfs, and how many CPUs had no sibling list (each
    of those is taken as a core of its own)."""
    allowed = set(allowed)
    cores, unknown = {}, 0
    for cpu in sorted(allowed):
        try:
            with open(f"{sys_root}/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
                siblings = parse_cpulist(f.read())
        except (OSError, ValueError):
            siblings, unknown = set(), unknown + 1
        cores.setdefault(tuple(sorted((siblings | {cpu}) & allowed)), None)
    # A CPU listed with siblings outside its own list (an inconsistent sysfs) would be in two groups.
    seen, disjoint = set(), []
    for core in cores:
        if seen.isdisjoint(core):
            disjoint.append(core)
            seen.update(core)
    return disjoint, unknown


def read_gpu_local_cpus(address: str | None, sys_root: str = "/sys") -> set[int] | None:
    """The CPUs local to the PCI device at `address` (sysfs' local_cpulist), None where unknown."""
    if not address:
        return None
    try:
        with open(f"{sys_root}/bus/pci/devices/{address}/local_cpulist") as f:
            return parse_cpulist(f.read()) or None
    except (OSError, ValueError):
        return None


def _gpu_address(device: int) -> str | None:
    """The PCI address of CUDA device `device`, None where this PyTorch does not say."""
    properties = torch.cuda.get_device_properties(device)
    bus = getattr(properties, "pci_bus_id", None)
    if bus is None:
        return None
    return pci_address(bus, getattr(properties, "pci_domain_id", 0), getattr(properties, "pci_device_id", 0))


def _set_affinity(cpus: Collection[int]) -> None:
    """This process's threads, those there are and (through the calling thread) those made later, on
    `cpus`: the CUDA runtime has made threads of its own by now."""
    os.sched_setaffinity(0, cpus)
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return
    for task in tasks:
        try:
            os.sched_setaffinity(int(task), cpus)
        except (OSError, ValueError):
            pass  # A thread that has ended since the listing.


def pin_cpus(mode: str, local_rank: int, local_world: int, device_count: int, sys_root: str = "/sys") -> str:
    """Pins this process as --pin-cpus says and tells what was done, or why not; never raises."""
    if mode == "none":
        return "not pinned (--pin-cpus none)"
    try:
        before = os.sched_getaffinity(0)
        cores, unknown = read_cores(before, sys_root)
        addresses = [_gpu_address(rank % device_count) for rank in range(local_world)]
        gpu_local = [read_gpu_local_cpus(address, sys_root) for address in addresses]
        choice = choose_cpus(cores, gpu_local)[local_rank]
        notes = []
        if unknown:
            notes.append(f"{unknown} CPUs without a sibling list taken as cores of their own")
        if addresses[local_rank] is None:
            notes.append("this PyTorch gives no GPU PCI address: GPU-local cores unknown")
        elif gpu_local[local_rank] is None:
            notes.append(f"no local_cpulist for GPU {addresses[local_rank]}: GPU-local cores unknown")
        if not choice.cores:
            return (f"not pinned: {len(cores)} cores allowed ({format_cpulist(before)}) for {local_world} "
                    f"local ranks" + "".join(f"; {note}" for note in notes))
        _set_affinity(choice.cpus)
        return (f"CPUs {format_cpulist(choice.cpus)} ({len(choice.cores)} cores, {choice.local} local to GPU "
                f"{addresses[local_rank] or '?'})" + "".join(f"; {note}" for note in notes))
    except Exception as error:  # Pinning is an aid to the measurement: it never stops it.
        return f"not pinned: {type(error).__name__}: {error}"


# ---------------------------------------------------------------------------------------------------
# Timing on the GPUs.

_aligner = None


def _barrier() -> None:
    """Every rank's GPU drained and every rank here, then the ranks' streams aligned on the GPU: a host
    barrier over TCP lets ranks leave tens of microseconds apart, which a timing of a few dozen operations
    would spread over its operations; a small allreduce enqueued right before the start event ends within a
    few microseconds on every rank, so the timed work starts together."""
    global _aligner
    torch.cuda.synchronize()
    dist.barrier()
    if _aligner is None:
        _aligner = (prt.communicator(), torch.zeros(256, device="cuda"))
    comm, tensor = _aligner
    comm.all_reduce(tensor)


def _slowest_each(values: Sequence[float]) -> list[float]:
    """Each of `values` the largest over the ranks (each rank times its own stream), in one exchange."""
    t = torch.tensor(list(values), dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=_cpu_group())
    return t.tolist()


_cpu_group_handle = None


def _cpu_group():
    """A gloo group for the bench's own bookkeeping, so no timing goes through the library measured."""
    global _cpu_group_handle
    if _cpu_group_handle is None:
        _cpu_group_handle = dist.new_group(backend="gloo")
    return _cpu_group_handle


def _timed(run, iterations: int) -> tuple[float, float]:
    """This rank's microseconds per operation of `run()` (which enqueues `iterations` operations) after a
    barrier: on the GPU (CUDA events) and on the host (the enqueue loop's own; where it is about the GPU's
    time, the calls were host-bound)."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    _barrier()
    start.record()
    began = time.perf_counter()
    run()
    enqueued = time.perf_counter()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1000.0 / iterations, (enqueued - began) * 1e6 / iterations


def _time_eager(columns: dict[str, Callable[[], None]], calls: int, rounds: int) -> dict:
    """eager_fields of `columns` (name: one call) timed in interleaved rounds of `calls` calls each; the
    slowest rank's time of each round, exchanged once all rounds are done (no bookkeeping between them)."""
    for fn in columns.values():
        for _ in range(WARMUP_CALLS):
            fn()

    def time_one(name: str) -> tuple[float, float]:
        fn = columns[name]

        def loop():
            for _ in range(calls):
                fn()

        return _timed(loop, calls)

    names = list(columns)
    samples = interleaved_rounds(names, rounds, time_one)
    slowest = iter(_slowest_each([value for name in names for sample in samples[name] for value in sample]))
    device_us, host_us = {}, {}
    for name in names:
        device_us[name], host_us[name] = [], []
        for _ in range(rounds):
            device_us[name].append(next(slowest))
            host_us[name].append(next(slowest))
    return eager_fields(device_us, host_us)


_capture_stream = None


def _time_graph(fn, iterations: int, repeats: int) -> float:
    """Microseconds per call of `fn` replayed from a CUDA graph of `iterations` calls: the median over
    `repeats` replays of the slowest rank's time."""
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
    return statistics.median(_slowest_each([_timed(graph.replay, iterations)[0]])[0] for _ in range(repeats))


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


def _print_table(rows: list[dict], one_gpu: bool, forwarded: bool, nccl_name: str) -> None:
    header = f"{'bytes':>10} {'peerreduce us':>14} {'(host)':>8} {'graph us':>10}"
    if not one_gpu:
        header += (f" {nccl_name + ' us':>16} {'(host)':>8} {'graph us':>10} {'ratio':>7} {'per round':>9}"
                   f" {'graph ratio':>11}")
    if forwarded:
        header += (f" {'forwarded us':>13} {'(host)':>8} {'graph us':>10} {'lib/fwd':>8} {'per round':>9}"
                   f" {'graph lib/fwd':>13}")
    print(header)
    for row in rows:
        line = (f"{row['bytes']:>10} {row['peerreduce_us']:>14.2f} {row['peerreduce_host_us']:>8.2f}"
                f" {row['peerreduce_graph_us']:>10.2f}")
        if not one_gpu:
            line += (f" {row['nccl_us']:>16.2f} {row['nccl_host_us']:>8.2f} {row['nccl_graph_us']:>10.2f}"
                     f" {row['ratio']:>7.3f} {row['ratio_per_round']:>9.3f} {row['graph_ratio']:>11.3f}")
        if forwarded:
            line += (f" {row['nccl_forwarded_us']:>13.2f} {row['nccl_forwarded_host_us']:>8.2f}"
                     f" {row['nccl_forwarded_graph_us']:>10.2f} {row['library_to_forwarded']:>8.3f}"
                     f" {row['library_to_forwarded_per_round']:>9.3f} {row['library_to_forwarded_graph']:>13.3f}")
        print(line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # The 8-bit floats need a torch that has them (2.1 and later; NCCL's own column, 2.24 and a torch that
    # passes them to it).
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"])
    parser.add_argument("--iterations", type=int, default=50, help="eager calls per round (default 50)")
    parser.add_argument("--repeats", type=int, default=15,
                        help="eager rounds, every column timed once in each; a time is their median (default 15)")
    parser.add_argument("--graph-iterations", type=int, default=20, help="calls captured per graph (default 20)")
    parser.add_argument("--graph-repeats", type=int, default=5,
                        help="graph replays timed; a time is their median (default 5)")
    parser.add_argument("--pin-cpus", choices=["auto", "none"], default="none",
                        help="auto: each local rank on its own physical cores, near its GPU where known (default none)")
    parser.add_argument("--max-bytes", type=int, default=256 << 20)
    parser.add_argument("--json", help="write the table here (rank 0)")
    args = parser.parse_args(argv)
    if torch is None:
        raise SystemExit(f"peerreduce.bench needs PyTorch: {_torch_missing}")
    for name in ("iterations", "repeats", "graph_iterations", "graph_repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    device_count = torch.cuda.device_count()
    device = local_rank % device_count
    torch.cuda.set_device(device)
    one_gpu = device_count < local_world
    # Before torch.distributed starts its threads, which inherit the affinity.
    pinned = pin_cpus(args.pin_cpus, local_rank, local_world, device_count)
    dist.init_process_group("gloo" if one_gpu else "cpu:gloo,cuda:nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    pinning = [None] * size
    dist.all_gather_object(pinning, pinned, group=_cpu_group())
    dtype = getattr(torch, args.dtype)
    comm = prt.communicator()
    preloaded = nccl_library_path()
    forwarded = forwarded_group() if preloaded and not one_gpu else None
    rows = []
    for nbytes in [s for s in SIZES if s <= args.max_bytes]:
        count = nbytes // torch.tensor([], dtype=dtype).element_size()
        tensor = torch.randn(count, device="cuda").to(dtype)
        columns = {"peerreduce": lambda: comm.all_reduce(tensor)}
        if not one_gpu:
            columns["nccl"] = lambda: dist.all_reduce(tensor)
        if forwarded is not None:
            columns["nccl_forwarded"] = lambda: dist.all_reduce(tensor, group=forwarded)
        row = {"bytes": nbytes, **_time_eager(columns, args.iterations, args.repeats)}
        for name, fn in columns.items():
            row[f"{name}_graph_us"] = _time_graph(fn, args.graph_iterations, args.graph_repeats)
        if not one_gpu:
            row["graph_ratio"] = row["peerreduce_graph_us"] / row["nccl_graph_us"]
        if forwarded is not None:
            row["library_to_forwarded_graph"] = row["nccl_graph_us"] / row["nccl_forwarded_graph_us"]
        rows.append(row)
    # Made in fp32 and converted: not every torch fills 8-bit float tensors.
    python_us, direct_us = _host_overhead(comm, torch.ones(1024, device="cuda").to(dtype))
    if rank == 0:
        print(f"peerreduce.bench: {size} ranks, {args.dtype}, {'one GPU shared' if one_gpu else 'one GPU each'}, "
              f"slowest rank; eager: median of {args.repeats} interleaved rounds of {args.iterations} calls; "
              f"graph: median of {args.graph_repeats} replays of {args.graph_iterations} calls; NCCL column: "
              f"{'torch.distributed through ' + preloaded if preloaded else 'torch.distributed, NCCL alone'}")
        for index, note in enumerate(pinning):
            print(f"rank {index}: {note}")
        _print_table(rows, one_gpu, forwarded is not None, "NCCL library" if preloaded else "NCCL")
        print("(host): the slowest rank's host time per eager call, median; about the eager time: host-bound")
        if not one_gpu:
            print("ratio: peerreduce over NCCL, same process (of the medians; per round: the median of the "
                  "rounds' ratios)")
        if forwarded is not None:
            print("forwarded: the same process's group whose communicator forwards every call to NCCL "
                  "(PEERREDUCE_NCCL_TAKE=none); lib/fwd: the library's time over NCCL's, same process")
        print(f"host cost of one enqueue: {python_us:.2f} us through peerreduce.Communicator.all_reduce, "
              f"{direct_us:.2f} us calling prAllReduce through ctypes")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": size, "dtype": args.dtype, "one_gpu": one_gpu, "nccl_path": preloaded,
                           "eager": {"calls": args.iterations, "rounds": args.repeats, "interleaved": True},
                           "graph": {"calls": args.graph_iterations, "replays": args.graph_repeats},
                           "pinning": {"mode": args.pin_cpus, "ranks": pinning},
                           "rows": rows, "host_us": {"python": python_us, "ctypes": direct_us}}, f, indent=1)
    prt.close_all()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
