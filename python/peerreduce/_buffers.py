"""What a tensor or array is to the C library: its address, element count, dtype code and where it lives.

numpy arrays and torch tensors (CPU or CUDA) are accepted; nothing here imports torch, so the package
works without it. Every refusal is an InvalidArgumentError that names the argument and what was wrong.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from . import errors

# prDataType_t values (peerreduce.h), by the dtype's name in numpy and in torch. The 8-bit floats are the OCP
# formats torch calls float8_e4m3fn and float8_e5m2 (torch 2.1 and later; ml_dtypes gives numpy arrays of the
# same names); torch's float8_e4m3fnuz and float8_e5m2fnuz are other formats, which peerreduce does not reduce.
DTYPE_CODES = {
    "int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5,
    "float16": 6, "bfloat16": 7, "float32": 8, "float64": 9,
    "float8_e4m3fn": 10, "float8_e5m2": 11,
}
DTYPE_NAMES = {code: name for name, code in DTYPE_CODES.items()}
# The names above that numpy itself lacks (ml_dtypes adds them).
_NOT_IN_NUMPY = ("bfloat16", "float8_e4m3fn", "float8_e5m2")
# prCollective_t values, by the Communicator's method names.
COLLECTIVE_CODES = {"all_reduce": 0, "reduce_scatter": 1, "all_gather": 2, "broadcast": 3}
# prRedOp_t values.
OP_CODES = {"sum": 0, "prod": 1, "min": 2, "max": 3, "avg": 4}


@dataclass(frozen=True)
class Buffer:
    address: int
    count: int      # elements
    dtype: int      # prDataType_t
    nbytes: int
    device: int     # CUDA device index, or -1 for host memory
    shape: tuple


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def describe(value: Any, what: str) -> Buffer:
    """The buffer behind `value` (a numpy array or a torch tensor); `what` names it in errors."""
    if _is_torch(value):
        name = str(value.dtype).replace("torch.", "")
        if name not in DTYPE_CODES:
            raise errors.InvalidArgumentError(f"{what} has dtype {value.dtype}, which peerreduce does not reduce; "
                                              f"use one of {', '.join(DTYPE_CODES)}")
        if not value.is_contiguous():
            raise errors.InvalidArgumentError(f"{what} is not contiguous; pass tensor.contiguous()")
        device = value.device.index if value.is_cuda else -1
        if value.is_cuda and device is None:
            device = 0
        return Buffer(value.data_ptr(), value.numel(), DTYPE_CODES[name], value.numel() * value.element_size(),
                      device, tuple(value.shape))
    if hasattr(value, "__array_interface__") and hasattr(value, "flags"):
        name = str(value.dtype)
        if name not in DTYPE_CODES:
            known = ", ".join(n for n in DTYPE_CODES if n not in _NOT_IN_NUMPY)
            raise errors.InvalidArgumentError(f"{what} has dtype {value.dtype}, which peerreduce does not reduce; "
                                              f"use one of {known}")
        if not value.flags["C_CONTIGUOUS"]:
            raise errors.InvalidArgumentError(f"{what} is not C-contiguous; pass numpy.ascontiguousarray(...)")
        return Buffer(value.__array_interface__["data"][0], value.size, DTYPE_CODES[name], value.nbytes, -1,
                      tuple(value.shape))
    raise errors.InvalidArgumentError(f"{what} is a {type(value).__name__}; pass a numpy array or a torch tensor")


def writable(value: Any, what: str) -> None:
    """Refuses a read-only numpy array as an output."""
    if not _is_torch(value) and hasattr(value, "flags") and not value.flags["WRITEABLE"]:
        raise errors.InvalidArgumentError(f"{what} is read-only; results need a writable array")


def same_kind(first: Buffer, second: Buffer, first_name: str, second_name: str) -> None:
    """Refuses two buffers of one operation that differ in dtype or device."""
    if first.dtype != second.dtype or first.device != second.device:
        raise errors.InvalidArgumentError(
            f"{second_name} is {DTYPE_NAMES[second.dtype]} on device {second.device}, {first_name} "
            f"{DTYPE_NAMES[first.dtype]} on device {first.device}: they must have the same dtype and device")


def blocks(whole: Buffer, what: str, ranks: int, block_count: int | None = None) -> int:
    """The elements per rank of `whole`, a buffer of one block per rank (`ranks` of them): refuses a count
    that is not `ranks` x `block_count` (or, without it, not a multiple of `ranks`)."""
    if block_count is None:
        if whole.count % ranks != 0:
            raise errors.InvalidArgumentError(f"{what} holds {whole.count} elements, not a multiple of the world "
                                              f"size {ranks}: it holds one equal block per rank")
        return whole.count // ranks
    if whole.count != block_count * ranks:
        raise errors.InvalidArgumentError(f"{what} holds {whole.count} elements; it must hold the world size "
                                          f"{ranks} x {block_count} (one block per rank)")
    return block_count


def rank_list(values: Any, like: Buffer, what: str, like_name: str, ranks: int) -> None:
    """Refuses a list form's list (torch's all_gather tensor_list, reduce_scatter input_list) that is not
    one tensor per rank, each of `like`'s element count, dtype and device."""
    if not isinstance(values, (list, tuple)) or len(values) != ranks:
        held = f"{len(values)} items" if isinstance(values, (list, tuple)) else f"a {type(values).__name__}"
        raise errors.InvalidArgumentError(f"{what} is {held}; it must list one tensor per rank ({ranks})")
    for index, value in enumerate(values):
        item = describe(value, f"{what}[{index}]")
        same_kind(like, item, like_name, f"{what}[{index}]")
        if item.count != like.count:
            raise errors.InvalidArgumentError(f"{what}[{index}] holds {item.count} elements, {like_name} "
                                              f"{like.count}: every rank's block has the same size")


def block_view(value: Any, index: int, count: int) -> Any:
    """Elements index x count .. (index + 1) x count of a contiguous array or tensor, as a view of it (the
    C library recognises NCCL's in-place forms by address)."""
    return value.reshape(-1)[index * count:(index + 1) * count]


def rank_index(value: Any, what: str) -> int:
    """A rank number given as an integer (numpy's too); a bool or a float is refused, not truncated."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise errors.InvalidArgumentError(f"{what} is {value!r}; pass a rank number (an integer)")


def dtype_code(dtype: Any) -> int:
    """The prDataType_t of a dtype given by name or as a numpy or torch dtype."""
    name = str(dtype).replace("torch.", "")
    if name not in DTYPE_CODES:
        raise errors.InvalidArgumentError(f"dtype {dtype!r} is not one of {', '.join(DTYPE_CODES)}")
    return DTYPE_CODES[name]


def collective_code(collective: str) -> int:
    if not isinstance(collective, str) or collective not in COLLECTIVE_CODES:
        raise errors.InvalidArgumentError(f"collective {collective!r} is not one of {', '.join(COLLECTIVE_CODES)}")
    return COLLECTIVE_CODES[collective]


def op_code(op: str) -> int:
    if not isinstance(op, str) or op not in OP_CODES:
        raise errors.InvalidArgumentError(f"op {op!r} is not one of {', '.join(OP_CODES)}")
    return OP_CODES[op]
