"""peerreduce.torch's plumbing without PyTorch: torch_layer_child.py runs in a child process whose `torch`
is the numpy stand-in in torch_stand_in/ (never this process's, so a real PyTorch here is untouched),
over a simulated world. It checks the process group's routing (CUDA tensors to peerreduce, CPU tensors
to gloo, NotImplementedError and typed errors), every collective method and its Work, the functions, and
the creation rules (no default group; creation refused inside graph capture)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_torch_layer_routes_every_collective_on_a_simulated_world():
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "torch_stand_in"),
                                                 environment.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, os.path.join(HERE, "torch_layer_child.py")], capture_output=True,
                          text=True, timeout=120, env=environment)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
