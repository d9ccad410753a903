"""The PyTorch GPU checks under torchrun at 2 and 4 ranks (ranks share GPUs when there are fewer):
- gpu_ranks.py: the Communicator's all_reduce in every dtype and op, batches, a captured graph;
- gpu_collectives_ranks.py: peerreduce.torch's reduce_scatter_tensor, all_gather_into_tensor, broadcast,
  list forms and barrier, a graph captured before any collective ran, torch.compile without graph breaks
  (ops by default, by name and as dist.ReduceOp values);
- gpu_backend_ranks.py: the torch.distributed backend (backend="cpu:gloo,cuda:peerreduce"), AVG and
  PREMUL_SUM, group names, the functional collectives and DTensor over a DeviceMesh of the group;
- gpu_ddp_ranks.py: DistributedDataParallel, FSDP and fully_shard (FSDP2) training through the backend
  against references (the whole-batch model, DDP and fully_shard over NCCL);
- gpu_streams_ranks.py: torch.distributed's "nccl" backend through the NCCL library (preloaded) from 16
  streams and four process groups, graphs captured on three streams replayed beside eager collectives
  (needs a GPU per rank and the NCCL library: PEERREDUCE_NCCL_LIBRARY, or libpeerreduce_nccl.so beside
  PEERREDUCE_LIBRARY).
Skipped, saying why, where PyTorch or a GPU is missing. On a GPU machine, from the repository root, with a
CUDA build's library (cmake -DPEERREDUCE_GPU=cuda, target peerreduce_shared; ci/hardware.sh package
makes one as .hw/libpeerreduce.so):

    PEERREDUCE_LIBRARY=build/gpu/package/libpeerreduce.so PYTHONPATH=python python3 -m pytest -q -rs tests/python/test_torch_gpu.py
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the GPU machines have it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU on this machine (the hardware stage runs these)", allow_module_level=True)


def run_ranks(script: str, ranks: int, env: dict | None = None) -> str:
    """Runs `script` (beside this file) under torchrun with `ranks` ranks (with `env` added to the
    environment); returns its output once it succeeded."""
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}",
                           os.path.join(here, script)], capture_output=True, text=True, timeout=900,
                          env=None if env is None else {**os.environ, **env})
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


def nccl_library_environment(ranks: int) -> dict:
    """What preloads the NCCL library over the NCCL torch loads, or a skip saying what is missing."""
    if torch.cuda.device_count() < ranks:
        pytest.skip(f"NCCL needs a GPU per rank: {torch.cuda.device_count()} GPUs for {ranks} ranks")
    library = os.environ.get("PEERREDUCE_NCCL_LIBRARY") or os.path.join(
        os.path.dirname(os.environ.get("PEERREDUCE_LIBRARY", "")), "libpeerreduce_nccl.so")
    if not os.path.isfile(library):
        pytest.skip(f"no NCCL library at {library} (set PEERREDUCE_NCCL_LIBRARY)")
    try:
        import nvidia.nccl
        real = os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2")
    except ImportError:
        pytest.skip("the NCCL torch loads (nvidia.nccl) is not importable, so the library cannot forward to it")
    return {"LD_PRELOAD": library, "PEERREDUCE_NCCL_LIB": real, "NCCL_NVLS_ENABLE": "0"}


@pytest.mark.parametrize("ranks", [2, 4])
def test_sixteen_streams_and_captures_through_the_nccl_library(ranks):
    output = run_ranks("gpu_streams_ranks.py", ranks, nccl_library_environment(ranks))
    assert output.count("(streams, library): ok") == ranks
