"""peerreduce for Python: allreduce on torch tensors and numpy arrays through the peerreduce C library.

    import peerreduce
    world = peerreduce.SimWorld(4)                 # or a GPU bootstrap: see peerreduce.bootstrap
    comms = world.communicators()
    for r, comm in enumerate(comms):
        comm.all_reduce(arrays[r])                 # enqueued
    world.run()                                    # the simulator runs what every rank enqueued

For PyTorch models, `peerreduce.torch.all_reduce(tensor, group)` caches a communicator per group. The
library is found through PEERREDUCE_LIBRARY, next to this package, or in the installed prefix.
"""

from .bootstrap import (Bootstrap, CallbackBootstrap, Mpi4pyBootstrap, SimWorld, TorchProcessGroupBootstrap,
                        TorchStoreBootstrap)
from .communicator import SPLIT_NOCOLOR, Communicator, RegisteredBuffer
from .errors import (AbortedError, CorruptError, Error, InternalError, InvalidArgumentError, LinkDownError,
                     MismatchError, OutOfMemoryError, PeerLostError, RemoteError, TimeoutError, UnavailableError,
                     UnsupportedError)
from ._native import LibraryNotFoundError, gpu_platform, library_version
from .machines import MultiMachineCommunicator, MultiMachineSimWorld

__all__ = [
    "AbortedError", "Bootstrap", "CallbackBootstrap", "Communicator", "CorruptError", "Error", "InternalError",
    "InvalidArgumentError", "LibraryNotFoundError", "LinkDownError", "MismatchError", "Mpi4pyBootstrap",
    "MultiMachineCommunicator", "MultiMachineSimWorld",
    "OutOfMemoryError", "PeerLostError", "RegisteredBuffer", "RemoteError", "SPLIT_NOCOLOR", "SimWorld", "TimeoutError",
    "TorchProcessGroupBootstrap", "TorchStoreBootstrap", "UnavailableError", "UnsupportedError", "gpu_platform", "library_version",
]
# The package's version; library_version() gives the loaded library's, which must have the same
# major.minor (the C API may change between minor versions while the major is 0).
__version__ = "0.1.0"
