"""The PyTorch GPU checks under torchrun at 2 and 4 ranks (ranks share GPUs when there are fewer):
- gpu_ranks.py: the Communicator's all_reduce in every dtype and op, batches, a captured graph;
- gpu_collectives_ranks.py: peerreduce.torch's reduce_scatter_tensor, all_gather_into_tensor, broadcast,
  list forms and barrier, a graph captured before any collective ran, torch.compile without graph breaks
  (ops by default, by name and as dist.ReduceOp values);
- gpu_backend_ranks.py: the torch.distributed backend (backend="cpu:gloo,cuda:peerreduce"), AVG and
  PREMUL_SUM, group names, the functional collectives and DTensor over a DeviceMesh of the group;
- gpu_ddp_ranks.py: DistributedDataParallel, FSDP and fully_shard (FSDP2) training through the backend
  against references (the whole-batch model, DDP and fully_shard over NCCL).
Skipped, saying why, where PyTorch or a GPU is missing. On a GPU machine, from the repository root, with a
CUDA build's library (cmake -DPEERREDUCE_GPU=cuda, target peerreduce_shared; ci/hardware.sh package
makes one as .hw/libpeerreduce.so):

    PEERREDUCE_LIBRARY=build/gpu/package/libpeerreduce.so PYTHONPATH=python python3 -m pytest -q -rs tests/python/test_torch_gpu.py
"""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the GPU machines have it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU on this machine (the hardware stage runs these)", allow_module_level=True)


def run_ranks(script: str, ranks: int) -> str:
    """Runs `script` (beside this file) under torchrun with `ranks` ranks; returns its output once it
    succeeded."""
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}",
                           os.path.join(here, script)], capture_output=True, text=True, timeout=900)
    print(done.stdout[-4000:], done.stderr[-4000:])
    assert done.returncode == 0
    return done.stdout


@pytest.mark.parametrize("ranks", [2, 4])
def test_torch_ranks_reduce_correctly(ranks):
    assert run_ranks("gpu_ranks.py", ranks).count(" ok") == ranks


@pytest.mark.parametrize("ranks", [2, 4])
def test_the_other_collectives_capture_and_compile(ranks):
    assert run_ranks("gpu_collectives_ranks.py", ranks).count("(collectives): ok") == ranks


@pytest.mark.parametrize("ranks", [2, 4])
def test_torch_distributed_backend_takes_every_collective_peerreduce_has(ranks):
    assert run_ranks("gpu_backend_ranks.py", ranks).count("(backend): ok") == ranks


@pytest.mark.parametrize("ranks", [2, 4])
def test_ddp_and_fsdp_train_through_the_backend(ranks):
    assert run_ranks("gpu_ddp_ranks.py", ranks).count("(training): ok") == ranks
