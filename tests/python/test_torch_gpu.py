"""The PyTorch GPU checks (gpu_ranks.py, and the torch.distributed backend: gpu_backend_ranks.py) under torchrun
at 2 and 4 ranks. Skipped, saying why, where
PyTorch or a GPU is missing; the hardware stage runs them."""

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
def test_torch_distributed_backend_takes_all_reduce(ranks):
    assert run_ranks("gpu_backend_ranks.py", ranks).count("(backend): ok") == ranks
