"""What torch.distributed needs around peerreduce's collectives: ReduceOp names, PREMUL_SUM factors, torch.distributed Work objects that complete with the GPU work, and the
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
