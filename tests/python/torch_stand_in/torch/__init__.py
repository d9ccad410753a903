"""A stand-in for torch with just the surface peerreduce.torch touches, over numpy, so CI (which has no
PyTorch) can drive the torch layer's plumbing on a simulated world: test_torch_layer.py puts this folder
first on the path of a child process only. It proves routing, list forms, Works and refusals, nothing
about PyTorch itself (test_torch_gpu.py does that on GPUs)."""

import numpy as np

from . import distributed, futures  # noqa: F401 - torch's submodules


class _Device:
    index = 0


class Tensor(np.ndarray):
    """A numpy array that calls itself a CUDA tensor (for routing) yet is host memory (for the
    simulator): its module is not torch's, so peerreduce describes it as a numpy array."""

    is_cuda = True
    device = _Device()

    def data_ptr(self):
        return self.ctypes.data

    def numel(self):
        return self.size

    def new_empty(self, count):
        return np.empty(count, self.dtype).view(Tensor)

    def copy_(self, source):
        self[...] = source
        return self

    def mul_(self, factor):
        self[...] *= factor
        return self

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def view(self, *shape):
        if shape and isinstance(shape[0], tuple):
            return self.reshape(shape[0])
        return np.ndarray.view(self, *shape)


class HostTensor(Tensor):
    """A CPU tensor: what the process group hands to gloo."""

    is_cuda = False


Tensor.__module__ = HostTensor.__module__ = "stand_in"


def cat(tensors):
    return np.concatenate(tensors).view(Tensor)


class _C:
    class _distributed_c10d:
        @staticmethod
        def _create_work_from_future(future):
            return future  # the Work's one job here: hand back its future


class library:  # no custom_op: the direct-call path
    pass


class compiler:
    @staticmethod
    def assume_constant_result(function):
        return function


class cuda:
    @staticmethod
    def is_available():
        return False
