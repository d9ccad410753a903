"""One rank of the training check, run by torchrun (test_torch_gpu.py starts it): with
`init_process_group(backend="cpu:gloo,cuda:peerreduce")`, DistributedDataParallel and FSDP train a small
model for a few steps through peerreduce. Checked: DDP's replicas are bitwise identical on every rank and
match DDP over a reference group (NCCL with a GPU per rank, gloo where ranks share a GPU: NCCL refuses
that) within rounding; FSDP (FullyShardedDataParallel, and fully_shard where this PyTorch has it) matches
the same model trained on the whole batch in this process; fully_shard (FSDP2: a DeviceMesh over the
group, found by its name; gradients reduce-scattered with AVG) also matches fully_shard over NCCL where
each rank has a GPU, and with a gradient divide factor (reduce-scattered with PREMUL_SUM) matches the
whole-batch model trained at the learning rate that factor amounts to. Prints one line per check, then a
summary; exits 0 when every check passed on this rank."""

import os
import sys
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import peerreduce.torch as prt

STEPS = 5


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 8)).cuda()


def batch(rank, step):
    generator = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(16, 32, generator=generator).cuda(), torch.randn(16, 8, generator=generator).cuda()


LR = 0.05


def train(module, batches, lr=LR):
    """STEPS steps of SGD with momentum; batches(step) gives (inputs, targets)."""
    optimizer = torch.optim.SGD(module.parameters(), lr=lr, momentum=0.9)
    for step in range(STEPS):
        inputs, targets = batches(step)
        loss = torch.nn.functional.mse_loss(module(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()


def flat(parameters):
    return torch.cat([p.detach().reshape(-1) for p in parameters])


def whole_batch_reference(size, lr=LR):
    """The model every rank's FSDP must hold: trained here on all ranks' batches at once (the mean loss
    over equal batches is what averaged gradients give)."""
    model = make_model(7)

    def batches(step):
        pairs = [batch(r, step) for r in range(size)]
        return torch.cat([p[0] for p in pairs]), torch.cat([p[1] for p in pairs])

    train(model, batches, lr)
    return flat(model.parameters())


def check_ddp(rank, size, reference_group):
    # Different initial weights per rank: DDP's construction broadcasts rank 0's.
    ours = DistributedDataParallel(make_model(1 + rank), bucket_cap_mb=0.01)  # several buckets
    theirs = DistributedDataParallel(make_model(1 + rank), process_group=reference_group, bucket_cap_mb=0.01)
    train(ours, lambda step: batch(rank, step))
    train(theirs, lambda step: batch(rank, step))
    mine = flat(ours.parameters())
    everyone = torch.empty(size * mine.numel(), device="cuda")
    dist.all_gather_into_tensor(everyone, mine)
    torch.cuda.synchronize()
    failures = []
    if not all(torch.equal(everyone[r * mine.numel():(r + 1) * mine.numel()], mine) for r in range(size)):
        failures.append("ddp replicas differ between ranks")
    reference = flat(theirs.parameters())
    if not torch.allclose(mine, reference, rtol=1e-5, atol=1e-6):
        failures.append(f"ddp differs from the reference group by {(mine - reference).abs().max().item():.3g}")
    return failures


def check_fsdp(size, reference):
    from torch.distributed.fsdp import FullyShardedDataParallel
    rank = dist.get_rank()
    model = FullyShardedDataParallel(make_model(7), device_id=torch.cuda.current_device())
    train(model, lambda step: batch(rank, step))
    with FullyShardedDataParallel.summon_full_params(model):
        got = flat(model.parameters())
    if not torch.allclose(got, reference, rtol=1e-4, atol=1e-5):
        return [f"fsdp differs from the whole-batch model by {(got - reference).abs().max().item():.3g}"]
    return []


def fully_sharded(mesh=None, divide_factor=None):
    """The model trained with fully_shard (each Linear, then the whole) over `mesh` (None: the default
    group's), its gradients divided by `divide_factor` where given; its parameters gathered whole (None
    where this PyTorch's fully_shard cannot take a divide factor)."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard
    rank = dist.get_rank()
    model = make_model(7)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    if divide_factor is not None:
        for module in model.modules():
            if hasattr(module, "reshard"):  # every module fully_shard made an FSDPModule
                setter = (getattr(module, "set_gradient_divide_factor", None)
                          or getattr(module, "set_reduce_scatter_divide_factor", None))
                if setter is None:
                    return None
                setter(divide_factor)
    train(model, lambda step: batch(rank, step))
    return torch.cat([p.full_tensor().detach().reshape(-1) for p in model.parameters()])


def check_fully_shard(size, reference):
    got = fully_sharded()
    if not torch.allclose(got, reference, rtol=1e-4, atol=1e-5):
        return [f"fully_shard differs from the whole-batch model by {(got - reference).abs().max().item():.3g}"]
    return []


def check_fully_shard_against_nccl(reference_group, one_gpu):
    """fully_shard through peerreduce against fully_shard over NCCL: the same reductions (AVG), so equal
    within the rounding of a different summation order."""
    from torch.distributed.device_mesh import DeviceMesh
    if one_gpu or not hasattr(DeviceMesh, "from_group"):
        print(f"rank {dist.get_rank()} fully_shard_nccl: skipped ("
              f"{'ranks share a GPU: no NCCL' if one_gpu else 'no DeviceMesh.from_group'})", flush=True)
        return []
    theirs = fully_sharded(DeviceMesh.from_group(reference_group, "cuda"))
    ours = fully_sharded()
    if not torch.allclose(ours, theirs, rtol=1e-5, atol=1e-6):
        return [f"fully_shard differs from fully_shard over NCCL by {(ours - theirs).abs().max().item():.3g}"]
    return []


def check_fully_shard_divide_factor(size):
    """A gradient divide factor of twice the world size: FSDP2 reduce-scatters with PREMUL_SUM(1 / factor),
    gradients half the average, which for SGD with momentum is the whole-batch model at half the rate."""
    got = fully_sharded(divide_factor=2.0 * size)
    if got is None:
        print(f"rank {dist.get_rank()} fully_shard_divide_factor: skipped (this fully_shard takes no divide "
              "factor)", flush=True)
        return []
    reference = whole_batch_reference(size, lr=LR / 2)
    if not torch.allclose(got, reference, rtol=1e-4, atol=1e-5):
        return [f"fully_shard with a divide factor differs from the whole-batch model at half the rate by "
                f"{(got - reference).abs().max().item():.3g}"]
    return []


def run_check(name, check, *args):
    """Runs one check; an exception is that check's failure (the others still run)."""
    try:
        failures = check(*args)
    except Exception as e:  # reported as this check's failure
        traceback.print_exc()
        failures = [f"{name} raised {type(e).__name__}: {str(e)[:300]}"]
    print(f"rank {dist.get_rank()} {name}: {'ok' if not failures else 'FAILED ' + '; '.join(failures)}", flush=True)
    return failures


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    one_gpu = torch.cuda.device_count() < int(os.environ["LOCAL_WORLD_SIZE"])
    if not prt.register_backend():
        print(f"rank {local_rank}: FAILED this PyTorch ({torch.__version__}) cannot register a backend")
        return 1
    dist.init_process_group(backend="cpu:gloo,cuda:peerreduce")
    rank, size = dist.get_rank(), dist.get_world_size()
    reference_group = dist.new_group(backend="gloo" if one_gpu else "nccl")
    reference = whole_batch_reference(size)
    failures = run_check("ddp", check_ddp, rank, size, reference_group)
    failures += run_check("fsdp", check_fsdp, size, reference)
    failures += run_check("fully_shard", check_fully_shard, size, reference)
    failures += run_check("fully_shard_nccl", check_fully_shard_against_nccl, reference_group, one_gpu)
    failures += run_check("fully_shard_divide_factor", check_fully_shard_divide_factor, size)
    dist.destroy_process_group()
    print(f"rank {rank} of {size} (training): {'ok' if not failures else 'FAILED ' + ', '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
