"""What torch.distributed needs around peerreduce's collectives: ReduceOp names (constants to
torch.compile), PREMUL_SUM factors, torch.distributed Work objects that complete with the GPU work, and the
list forms of all_gather and reduce_scatter over the tensor forms. Shared by the functions of
peerreduce.torch and its process group."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
import torch.distributed as dist

from . import _buffers, errors

_OPS = {
    dist.ReduceOp.SUM: "sum",
    dist.ReduceOp.PRODUCT: "prod",
    dist.ReduceOp.MIN: "min",
    dist.ReduceOp.MAX: "max",
}
if hasattr(dist.ReduceOp, "AVG"):
    _OPS[dist.ReduceOp.AVG] = "avg"


# torch.compile evaluates a function marked so once while tracing, with its constant arguments, instead of
# tracing its body (comparisons of ReduceOp values, which it may not follow).
constant_result = getattr(getattr(torch, "compiler", None), "assume_constant_result", lambda function: function)


def _reduce_ops_are_constants() -> bool:
    """Whether torch.compile takes dist.ReduceOp values (RedOpType, a pybind11 enum) as constants, so that
    op_name(dist.ReduceOp.MAX) folds while tracing. Dynamo wraps a RedOpType as a user-defined object,
    which is no constant (assume_constant_result then fails with AsPythonConstantNotImplementedError),
    except for classes registered with torch.utils._pytree.register_constant (PyTorch 2.7 and later): their
    values from outside the compiled function are constants, guarded by equality. This registers RedOpType
    so, once per process; it changes nothing eagerly (pytree then flattens a RedOpType into no leaves).
    False where this PyTorch cannot: there, pass the op by name ("max") inside torch.compile."""
    red_op_type = getattr(dist.ReduceOp, "RedOpType", None)
    try:
        import torch.utils._pytree as pytree
    except ImportError:
        return False
    register = getattr(pytree, "register_constant", None)
    is_constant = getattr(pytree, "is_constant_class", None)
    if red_op_type is None or register is None or is_constant is None:
        return False
    if is_constant(red_op_type):
        return True
    if red_op_type in getattr(pytree, "SUPPORTED_NODES", {}):
        return False  # registered as some other pytree node elsewhere: left as it is
    try:
        register(red_op_type)
    except (TypeError, ValueError):
        return False
    return True


REDUCE_OPS_ARE_CONSTANTS = _reduce_ops_are_constants()


@constant_result
def op_name(op: Any) -> str:
    """peerreduce's name of a torch.distributed ReduceOp (or of a name already)."""
    if isinstance(op, str):
        return op
    for known, name in _OPS.items():
        if op == known:
            return name
    if premul_factor(op) is not None:
        raise errors.InvalidArgumentError(
            "reduce op PREMUL_SUM is not one the peerreduce.torch functions take (sum, prod, min, max, avg): "
            "reduce with sum and multiply the result, or use a peerreduce process group (it takes PREMUL_SUM)")
    raise errors.InvalidArgumentError(f"reduce op {op} is not one peerreduce has (sum, prod, min, max, avg)")


def op_argument(op: Any) -> str:
    """The op name the custom ops carry: a name as it is (nothing for torch.compile to fold), a ReduceOp
    through op_name (folded while tracing where REDUCE_OPS_ARE_CONSTANTS)."""
    if isinstance(op, str):
        return op
    return op_name(op)


def premul_factor(op: Any) -> Any:
    """The factor of a PREMUL_SUM ReduceOp (torch.distributed._make_nccl_premul_sum(f), what FSDP2 reduces
    gradients with when given a divide factor): a float or a tensor; None for every other op. torch's
    ReduceOp pickles as (op, factor), the factor None except for PREMUL_SUM."""
    if not isinstance(op, dist.ReduceOp):
        return None
    try:
        state = op.__getstate__()
    except (AttributeError, TypeError):  # a PyTorch whose ReduceOp does not pickle
        return None
    if isinstance(state, tuple) and len(state) == 2:
        return state[1]
    return None


def _create_work(future: torch.futures.Future):
    create = getattr(torch._C._distributed_c10d, "_create_work_from_future", None)
    if create is None:
        raise errors.UnsupportedError("this PyTorch cannot wrap a future as a collective's Work; call the "
                                      "functions of peerreduce.torch instead of the backend")
    return create(future)


def stream_work(result: Any, tensors: Sequence[torch.Tensor]):
    """The Work of collectives just enqueued on the current streams of `tensors`' devices: its future is
    a CUDA one (torch's own mechanism, as NCCL's process group uses), whose completion is recorded as an
    event on each of those streams. wait() and callbacks make the caller's current stream wait for that
    event, so nothing reads the results before the GPU wrote them, without blocking the host; graph
    capture records the event as part of the graph."""
    devices = sorted({t.device for t in tensors if t.is_cuda}, key=lambda d: d.index or 0)
    future = torch.futures.Future(devices=devices) if devices else torch.futures.Future()
    future.set_result(result)
    return _create_work(future)


def completed_work(result: Any):
    """The Work of something already complete on the host (a barrier that waited)."""
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work(future)


def gather_into_list(gather: Callable[[torch.Tensor, torch.Tensor], Any], outputs: Sequence[torch.Tensor],
                     tensor: torch.Tensor, ranks: int) -> None:
    """torch's all_gather(tensor_list, tensor) over a tensor form gather(flat_out, tensor): gathered into
    one buffer, then copied to the list on the same stream (stream order keeps the buffer alive)."""
    _buffers.rank_list(outputs, _buffers.describe(tensor, "tensor"), "tensor_list", "tensor", ranks)
    count = tensor.numel()
    flat = tensor.new_empty(ranks * count)
    gather(flat, tensor)
    for index, out in enumerate(outputs):
        out.copy_(flat[index * count:(index + 1) * count].view(out.shape))


def reduce_from_list(reduce: Callable[[torch.Tensor, torch.Tensor], Any], output: torch.Tensor,
                     inputs: Sequence[torch.Tensor], ranks: int) -> None:
    """torch's reduce_scatter(output, input_list) over a tensor form reduce(output, flat_in): the list is
    copied into one buffer of a block per rank first."""
    _buffers.rank_list(inputs, _buffers.describe(output, "output"), "input_list", "output", ranks)
    reduce(output, torch.cat([t.reshape(-1) for t in inputs]))
