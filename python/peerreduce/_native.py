"""The C library (libpeerreduce) through ctypes: where it is found, and the signatures of its functions.

The library is searched, in order, at:
  1. the path in PEERREDUCE_LIBRARY (a file), or the folder it names;
  2. next to this package (peerreduce/lib/ and the package's parent folder), where a bundled copy lives;
  3. the installed prefixes: sys.prefix/lib and /usr/local/lib, /usr/lib;
  4. the system's library search (ctypes.util.find_library).
The first that loads is used; if none does, LibraryNotFoundError lists every place tried and why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from typing import Callable

from . import errors

LIBRARY_FILE = "libpeerreduce.so"
LIBRARY_ENV = "PEERREDUCE_LIBRARY"


class LibraryNotFoundError(errors.UnavailableError):
    """libpeerreduce could not be loaded from any of the places searched."""


def _candidates() -> list[str]:
    places: list[str] = []
    named = os.environ.get(LIBRARY_ENV, "")
    if named:
        places.append(os.path.join(named, LIBRARY_FILE) if os.path.isdir(named) else named)
    here = os.path.dirname(os.path.abspath(__file__))
    places += [os.path.join(here, "lib", LIBRARY_FILE), os.path.join(os.path.dirname(here), LIBRARY_FILE)]
    for prefix in (sys.prefix, "/usr/local", "/usr"):
        places.append(os.path.join(prefix, "lib", LIBRARY_FILE))
    found = ctypes.util.find_library("peerreduce")
    if found:
        places.append(found)
    return places


_lock = threading.Lock()
_library: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """The loaded library with every signature declared (loaded once per process)."""
    global _library
    with _lock:
        if _library is None:
            tried = []
            for place in _candidates():
                if os.sep in place and not os.path.exists(place):
                    tried.append(f"{place}: no such file")
                    continue
                try:
                    loaded = ctypes.CDLL(place)
                except OSError as e:
                    tried.append(f"{place}: {e}")
                    continue
                _declare(loaded)
                _library = loaded
                break
            if _library is None:
                raise LibraryNotFoundError(
                    "cannot load libpeerreduce; set PEERREDUCE_LIBRARY to the library's path or install it. "
                    "Tried:\n  " + "\n  ".join(tried))
        return _library


c_int, c_size_t, c_uint64, c_int64, c_double, c_void_p, c_char_p = (ctypes.c_int, ctypes.c_size_t, ctypes.c_uint64,
                                                                     ctypes.c_int64, ctypes.c_double, ctypes.c_void_p,
                                                                     ctypes.c_char_p)
MAX_RANKS = 64
MAX_CANDIDATES = 16


class MemoryStats(ctypes.Structure):
    _fields_ = [(name, c_uint64) for name in (
        "capacity_bytes", "quota_bytes", "bytes_in_use", "peak_bytes_in_use", "live_blocks", "allocations",
        "failed_allocations", "free_blocks", "largest_free_block_bytes")] + [
        ("fragmentation", c_double), ("defragmentations", c_uint64), ("blocks_moved", c_uint64),
        ("bytes_moved", c_uint64)]


class ProfileSummary(ctypes.Structure):
    _fields_ = [("operations", c_uint64), ("timed", c_uint64), ("dropped", c_uint64), ("bytes", c_uint64),
                ("total_us", c_double), ("min_us", c_double), ("median_us", c_double), ("max_us", c_double),
                ("busbw_gbps", c_double)]


class PinnedStats(ctypes.Structure):
    _fields_ = [(name, c_uint64) for name in (
        "limit_bytes", "bytes_pinned", "peak_bytes_pinned", "bytes_in_use", "bytes_idle", "blocks_in_use",
        "blocks_idle", "acquisitions", "reuses", "system_allocations", "evictions", "bytes_evicted", "failures",
        "bytes_staged")]


class Candidate(ctypes.Structure):
    _fields_ = [("algorithm", c_int), ("predicted_us", c_double), ("segments", c_int), ("plan", ctypes.c_char * 96)]


class Selection(ctypes.Structure):
    _fields_ = [("chosen", c_int), ("forced", c_int), ("tuned", c_int), ("plan", ctypes.c_char * 96),
                ("ncandidates", c_int), ("candidates", Candidate * MAX_CANDIDATES)]


class BatchItem(ctypes.Structure):
    _fields_ = [("sendbuff", c_void_p), ("recvbuff", c_void_p), ("count", c_size_t)]


class MachineLayout(ctypes.Structure):
    _fields_ = [(name, c_int) for name in ("rank", "size", "machines", "ranks_per_machine", "machine", "local_rank")]


ALL_GATHER = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_size_t, ctypes.POINTER(c_size_t), c_int64)
BARRIER = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64)


class BootstrapCallbacks(ctypes.Structure):
    _fields_ = [("all_gather", ALL_GATHER), ("barrier", BARRIER), ("context", c_void_p), ("name", c_char_p)]


# prConfig_t is filled and read only by the library (prConfigInitSized, prConfigSet): Python holds it as
# bytes of the size the library reports (prConfigSize), so its layout can change without this package.

_P = ctypes.POINTER
_SIGNATURES: dict[str, tuple] = {
    "prGetLastError": (c_char_p, []),
    "prGetErrorString": (c_char_p, [c_int]),
    "prConfigSize": (c_size_t, []),
    "prGetVersion": (c_int, [_P(c_int)]),
    "prGetGpuPlatform": (c_int, [_P(c_char_p)]),
    "prConfigInitSized": (c_int, [c_void_p, c_size_t]),
    "prConfigSet": (c_int, [c_void_p, c_char_p, c_char_p]),
    "prBootstrapCreate": (c_int, [c_int, c_int, _P(BootstrapCallbacks), _P(c_void_p)]),
    "prBootstrapDestroy": (c_int, [c_void_p]),
    "prCommInitRank": (c_int, [_P(c_void_p), c_int, c_int, c_void_p, c_void_p]),
    "prAllReduce": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "prAllReduceBatch": (c_int, [_P(BatchItem), c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "prReduceScatter": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "prAllGather": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_void_p, c_void_p]),
    "prBroadcast": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "prCommSynchronize": (c_int, [c_void_p, c_void_p]),
    "prCommGetAsyncError": (c_int, [c_void_p]),
    "prCommAbort": (c_int, [c_void_p]),
    "prCommDestroy": (c_int, [c_void_p]),
    "prCommSplit": (c_int, [c_void_p, c_int, c_int, _P(c_void_p), c_void_p]),
    "prCommRank": (c_int, [c_void_p, _P(c_int)]),
    "prCommSize": (c_int, [c_void_p, _P(c_int)]),
    "prCommDevice": (c_int, [c_void_p, _P(c_int)]),
    "prCommMemoryStats": (c_int, [c_void_p, _P(MemoryStats)]),
    "prCommEnableProfiling": (c_int, [c_void_p, c_size_t]),
    "prCommDisableProfiling": (c_int, [c_void_p]),
    "prCommProfileSummary": (c_int, [c_void_p, _P(ProfileSummary)]),
    "prCommExplainSelection": (c_int, [c_void_p, c_size_t, c_int, _P(Selection)]),
    "prCommExplainCollective": (c_int, [c_void_p, c_int, c_size_t, c_int, c_int, _P(Selection)]),
    "prCommPinnedStats": (c_int, [c_void_p, _P(PinnedStats)]),
    "prCommRegisterBuffer": (c_int, [c_void_p, c_void_p, c_size_t, _P(c_void_p)]),
    "prCommDeregisterBuffer": (c_int, [c_void_p, c_void_p]),
    "prSimWorldCreate": (c_int, [c_int, c_uint64, _P(c_void_p)]),
    "prSimWorldDestroy": (c_int, [c_void_p]),
    "prSimWorldRun": (c_int, [c_void_p]),
    "prCommInitSimAll": (c_int, [c_void_p, c_void_p, _P(c_void_p)]),
    "prSimWorldBootstrap": (c_int, [c_void_p, c_int, _P(c_void_p)]),
    "prSimWorldAttachBootstrap": (c_int, [c_void_p, c_void_p]),
    "prMultiSimWorldCreate": (c_int, [c_int, c_int, c_uint64, _P(c_void_p)]),
    "prMultiSimWorldDestroy": (c_int, [c_void_p]),
    "prMultiCommInitSimAll": (c_int, [c_void_p, c_void_p, _P(c_void_p)]),
    "prMultiAllReduce": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_int, c_void_p, c_void_p]),
    "prMultiReduceScatter": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_int, c_void_p, c_void_p]),
    "prMultiAllGather": (c_int, [c_void_p, c_void_p, c_size_t, c_int, c_int, c_void_p, c_void_p]),
    "prMultiCommSynchronize": (c_int, [c_void_p, c_void_p]),
    "prMultiCommDestroy": (c_int, [c_void_p]),
    "prMultiCommLayout": (c_int, [c_void_p, _P(MachineLayout)]),
}
# Optional functions: present in builds that have them (checked with has()).
_OPTIONAL: dict[str, tuple] = {}


def _declare(lib: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(lib, name)  # a missing function is an AttributeError naming it: a wrong library
        function.restype, function.argtypes = restype, argtypes
    for name, (restype, argtypes) in _OPTIONAL.items():
        if hasattr(lib, name):
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes


def has(name: str) -> bool:
    return hasattr(library(), name)


def check(result: int) -> None:
    """Raises the error of a failed call (with this thread's last-error message)."""
    if result != 0:
        message = library().prGetLastError()
        raise errors.from_code(result, message.decode("utf-8", "replace") if message else "")


def call(name: str, *args) -> None:
    """Calls the C function `name` and raises its error if it failed."""
    function: Callable[..., int] = getattr(library(), name)
    check(function(*args))


def gpu_platform() -> str:
    """The GPU platform the loaded library was built for: "cuda", "hip", or "none" (a build for the
    simulator and CPU-only use: communicators on GPUs need a release-cuda or release-hip build)."""
    name = c_char_p()
    call("prGetGpuPlatform", ctypes.byref(name))
    return name.value.decode()


def library_version() -> tuple[int, int, int]:
    """(major, minor, patch) of the loaded library (prGetVersion)."""
    code = c_int(0)
    call("prGetVersion", ctypes.byref(code))
    return code.value // 10000, code.value // 100 % 100, code.value % 100
