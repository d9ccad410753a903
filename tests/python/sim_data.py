"""Inputs and host references shared by the simulator tests (numpy only)."""

import numpy as np

NUMPY_DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"]
OPS = ["sum", "prod", "min", "max", "avg"]


def inputs(world_size, count, dtype, seed):
    """Rank r's input: small values, so sums and products stay exact in every dtype."""
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 3, size=count).astype(dtype) for _ in range(world_size)]


def reference(arrays, op):
    """What every rank must hold, computed here in float64 / exact integers."""
    stack = np.stack([a.astype(np.float64) if a.dtype.kind == "f" else a.astype(np.int64) for a in arrays])
    if op == "sum":
        result = stack.sum(axis=0)
    elif op == "prod":
        result = stack.prod(axis=0)
    elif op == "min":
        result = stack.min(axis=0)
    elif op == "max":
        result = stack.max(axis=0)
    else:
        result = stack.sum(axis=0) / len(arrays) if stack.dtype.kind == "f" else stack.sum(axis=0) // len(arrays)
    return result.astype(arrays[0].dtype)
