"""reduce_scatter, all_gather, broadcast and barrier of the Python package on simulated worlds with numpy:
several world sizes and dtypes, in place and out of place, against host references, and every refusal.
No GPU and no PyTorch needed."""

import threading

import numpy as np
import pytest

import peerreduce
from peerreduce import _buffers
from sim_data import NUMPY_DTYPES, inputs, reference

WORLD_SIZES = [1, 2, 3, 4, 5]


def run_world(world_size, enqueue):
    """Makes a simulated world, calls enqueue(rank, comm) for every rank, runs it and closes it."""
    with peerreduce.SimWorld(world_size, seed=world_size) as world:
        comms = world.communicators()
        for rank, comm in enumerate(comms):
            enqueue(rank, comm)
        world.run()
        for c in comms:
            c.close()


def on_threads(world_size, body):
    """Runs body(rank, comm) on a thread per rank of a simulated world (for calls that wait)."""
    failures = []
    with peerreduce.SimWorld(world_size) as world:
        comms = world.communicators()

        def rank_thread(rank):
            try:
                body(rank, comms[rank])
            except BaseException as e:  # reported below
                failures.append(e)

        threads = [threading.Thread(target=rank_thread, args=(r,)) for r in range(world_size)]
        [t.start() for t in threads]
        [t.join(60) for t in threads]
        for c in comms:
            c.close()
    assert not failures, failures


# --- reduce_scatter


@pytest.mark.parametrize("world_size", WORLD_SIZES)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("in_place", [False, True])
def test_reduce_scatter_gives_each_rank_its_reduced_block(world_size, dtype, in_place):
    block = 37
    sends = inputs(world_size, block * world_size, dtype, seed=world_size * 31 + len(dtype))
    expected = reference(sends, "sum")
    outs = [np.zeros(block, dtype=dtype) for _ in range(world_size)]
    results = [None] * world_size

    def enqueue(rank, comm):
        results[rank] = comm.reduce_scatter(sends[rank], out=None if in_place else outs[rank])

    originals = [s.copy() for s in sends]
    run_world(world_size, enqueue)
    for rank in range(world_size):
        own = expected[rank * block:(rank + 1) * block]
        np.testing.assert_array_equal(results[rank], own)
        if in_place:  # the result is this rank's own block of its input, a view of it
            assert np.shares_memory(results[rank], sends[rank])
            np.testing.assert_array_equal(sends[rank][rank * block:(rank + 1) * block], own)
        else:
            assert results[rank] is outs[rank]
            np.testing.assert_array_equal(sends[rank], originals[rank])


@pytest.mark.parametrize("op", ["prod", "min", "max", "avg"])
def test_reduce_scatter_takes_every_op(world4, op):
    world, comms = world4
    sends = inputs(4, 4 * 9, "float32", seed=hash(op) % 100)
    outs = [np.zeros(9, dtype=np.float32) for _ in range(4)]
    for comm, s, o in zip(comms, sends, outs):
        comm.reduce_scatter(s, out=o, op=op)
    world.run()
    expected = reference(sends, op)
    for rank, o in enumerate(outs):
        np.testing.assert_array_equal(o, expected[rank * 9:(rank + 1) * 9])


def test_reduce_scatter_of_a_2d_input_takes_its_rows_as_blocks(world4):
    world, comms = world4
    sends = [np.full((4, 3), r + 1, dtype=np.int32) for r in range(4)]
    sends[0][2, :] = 100
    outs = [np.zeros(3, dtype=np.int32) for _ in range(4)]
    for comm, s, o in zip(comms, sends, outs):
        comm.reduce_scatter(s, out=o)
    world.run()
    assert outs[2].tolist() == [109] * 3 and outs[1].tolist() == [10] * 3


# --- all_gather


@pytest.mark.parametrize("world_size", WORLD_SIZES)
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("in_place", [False, True])
def test_all_gather_gives_every_rank_every_block(world_size, dtype, in_place):
    block = 29
    blocks = inputs(world_size, block, dtype, seed=world_size * 17 + len(dtype))
    expected = np.concatenate(blocks)
    gathered = [np.zeros(block * world_size, dtype=dtype) for _ in range(world_size)]
    results = [None] * world_size

    def enqueue(rank, comm):
        if in_place:  # this rank's block of the result already holds what it contributes
            gathered[rank][rank * block:(rank + 1) * block] = blocks[rank]
            results[rank] = comm.all_gather(gathered[rank])
        else:
            results[rank] = comm.all_gather(blocks[rank], out=gathered[rank])

    run_world(world_size, enqueue)
    for rank in range(world_size):
        assert results[rank] is gathered[rank]
        np.testing.assert_array_equal(gathered[rank], expected)


# --- broadcast


@pytest.mark.parametrize("world_size", WORLD_SIZES)
@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("in_place", [False, True])
def test_broadcast_copies_the_roots_tensor_everywhere(world_size, dtype, in_place):
    count = 1001
    for root in sorted({0, world_size - 1}):
        tensors = inputs(world_size, count, dtype, seed=root * 7 + world_size)
        originals = [t.copy() for t in tensors]
        outs = [np.zeros(count, dtype=dtype) for _ in range(world_size)]

        def enqueue(rank, comm):
            got = comm.broadcast(tensors[rank], root=root, out=None if in_place else outs[rank])
            assert got is (tensors[rank] if in_place else outs[rank])

        run_world(world_size, enqueue)
        for rank in range(world_size):
            np.testing.assert_array_equal(tensors[rank] if in_place else outs[rank], originals[root])
            if not in_place:
                np.testing.assert_array_equal(tensors[rank], originals[rank])


def test_broadcast_takes_numpy_integers_as_root(world4):
    world, comms = world4
    tensors = [np.full(8, r, dtype=np.int64) for r in range(4)]
    for comm, t in zip(comms, tensors):
        comm.broadcast(t, root=np.int64(3))
    world.run()
    assert all(t.tolist() == [3] * 8 for t in tensors)


# --- barrier


@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_barrier_orders_every_ranks_work_and_waits_on_the_host(world_size):
    arrays = [np.full(50, r + 1, dtype=np.float32) for r in range(world_size)]

    def body(rank, comm):
        comm.all_reduce(arrays[rank])
        comm.barrier()  # waits on this thread until every rank's reduction ran
        assert np.all(arrays[rank] == world_size * (world_size + 1) / 2)

    on_threads(world_size, body)


def test_a_barrier_that_does_not_wait_is_only_enqueued(world4):
    world, comms = world4
    for comm in comms:
        comm.barrier(wait=False)
    world.run()
    assert comms[0]._barrier_token().tolist() == [0]


def test_collectives_and_a_barrier_on_threads_in_one_sequence():
    def body(rank, comm):
        send = np.arange(12, dtype=np.float64) + rank
        out = np.zeros(4, dtype=np.float64)
        comm.reduce_scatter(send, out=out)
        whole = np.zeros(12, dtype=np.float64)
        comm.all_gather(out, out=whole)
        comm.broadcast(whole, root=1)
        comm.barrier()
        expected = 3 * np.arange(12, dtype=np.float64) + 3
        np.testing.assert_array_equal(whole, expected)

    on_threads(3, body)


# --- plans built ahead of the first call


@pytest.mark.parametrize("collective", ["all_reduce", "reduce_scatter", "all_gather", "broadcast"])
def test_explain_says_what_every_collective_chooses(world4, collective):
    _, comms = world4
    explained = comms[1].explain(4096, "float16", collective=collective, root=3)
    assert explained["candidates"] and explained["plan"]
    assert explained["chosen"] == explained["candidates"][0]["algorithm"]


def test_prepare_builds_every_plan_and_the_collectives_run_after_it(world4):
    world, comms = world4
    for comm in comms:
        comm.prepare()
    tensors = [np.full(8, r, dtype=np.float32) for r in range(4)]
    for comm, t in zip(comms, tensors):
        comm.broadcast(t, root=2)
    world.run()
    assert all(t.tolist() == [2.0] * 8 for t in tensors)


def test_explain_refuses_unknown_collectives_roots_and_dtypes(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="collective 'gather' is not one of"):
        comms[0].explain(16, "float32", collective="gather")
    with pytest.raises(peerreduce.InvalidArgumentError, match="root 4"):
        comms[0].explain(16, "float32", collective="broadcast", root=4)
    with pytest.raises(peerreduce.InvalidArgumentError, match="root is 0.5"):
        comms[0].explain(16, "float32", collective="broadcast", root=0.5)
    with pytest.raises(peerreduce.InvalidArgumentError, match="dtype 'complex64'"):
        comms[0].explain(16, "complex64", collective="all_gather")


# --- every refusal


def read_only(count, dtype):
    array = np.zeros(count, dtype=dtype)
    array.flags.writeable = False
    return array


def test_reduce_scatter_refuses_sizes_dtypes_and_outputs_that_do_not_fit(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="not a multiple of the world size 4"):
        comms[0].reduce_scatter(np.zeros(10, dtype=np.float32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="must hold the world size 4 x 3"):
        comms[0].reduce_scatter(np.zeros(16, dtype=np.float32), out=np.zeros(3, dtype=np.float32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is float64 .* tensor float32"):
        comms[0].reduce_scatter(np.zeros(16, dtype=np.float32), out=np.zeros(4, dtype=np.float64))
    frozen = read_only(4, np.float32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is read-only"):
        comms[0].reduce_scatter(np.zeros(16, dtype=np.float32), out=frozen)
    frozen = read_only(16, np.float32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="tensor is read-only"):
        comms[0].reduce_scatter(frozen)
    with pytest.raises(peerreduce.InvalidArgumentError, match="op 'xor'"):
        comms[0].reduce_scatter(np.zeros(16, dtype=np.float32), op="xor")
    with pytest.raises(peerreduce.InvalidArgumentError, match="tensor is a list"):
        comms[0].reduce_scatter([1.0] * 16)
    with pytest.raises(peerreduce.InvalidArgumentError, match="complex64"):
        comms[0].reduce_scatter(np.zeros(16, dtype=np.complex64))


def test_all_gather_refuses_sizes_dtypes_and_outputs_that_do_not_fit(world4):
    _, comms = world4
    with pytest.raises(peerreduce.InvalidArgumentError, match="not a multiple of the world size 4"):
        comms[0].all_gather(np.zeros(7, dtype=np.int32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="out holds 12 elements; it must hold the world size 4"):
        comms[0].all_gather(np.zeros(4, dtype=np.int32), out=np.zeros(12, dtype=np.int32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is int64 .* tensor int32"):
        comms[0].all_gather(np.zeros(4, dtype=np.int32), out=np.zeros(16, dtype=np.int64))
    frozen = read_only(16, np.int32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is read-only"):
        comms[0].all_gather(np.zeros(4, dtype=np.int32), out=frozen)
    with pytest.raises(peerreduce.InvalidArgumentError, match="tensor is read-only"):
        comms[0].all_gather(frozen)
    with pytest.raises(peerreduce.InvalidArgumentError, match="contiguous"):
        comms[0].all_gather(np.zeros((4, 4), dtype=np.int32)[:, 0], out=np.zeros(16, dtype=np.int32))


def test_broadcast_refuses_roots_sizes_and_dtypes_that_do_not_fit(world4):
    _, comms = world4
    for bad in (1.0, True, "0", None):
        with pytest.raises(peerreduce.InvalidArgumentError, match="root is .*pass a rank number"):
            comms[0].broadcast(np.zeros(4, dtype=np.float32), root=bad)
    with pytest.raises(peerreduce.InvalidArgumentError, match="root 4"):  # the library's own check
        comms[0].broadcast(np.zeros(4, dtype=np.float32), root=4)
    with pytest.raises(peerreduce.InvalidArgumentError, match="out holds 5 elements, tensor 4"):
        comms[0].broadcast(np.zeros(4, dtype=np.float32), out=np.zeros(5, dtype=np.float32))
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is uint8 .* tensor float32"):
        comms[0].broadcast(np.zeros(4, dtype=np.float32), out=np.zeros(4, dtype=np.uint8))
    frozen = read_only(4, np.float32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="tensor is read-only"):
        comms[0].broadcast(frozen)
    with pytest.raises(peerreduce.InvalidArgumentError, match="out is read-only"):
        comms[0].broadcast(np.zeros(4, dtype=np.float32), out=frozen)


def test_overlapping_buffers_other_than_the_in_place_form_are_the_librarys_refusal(world4):
    _, comms = world4
    whole = np.zeros(16, dtype=np.float32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="overlap"):
        comms[1].reduce_scatter(whole, out=whole[0:4])  # rank 1's in-place block is 4..8, not 0..4
    with pytest.raises(peerreduce.InvalidArgumentError, match="overlap"):
        comms[1].all_gather(whole[0:4], out=whole)


# One valid call of each collective this file covers, for the refusals every one of them shares.
EVERY_COLLECTIVE = (lambda c: c.reduce_scatter(np.zeros(4, dtype=np.float32)),
                    lambda c: c.all_gather(np.zeros(4, dtype=np.float32)),
                    lambda c: c.broadcast(np.zeros(4, dtype=np.float32)),
                    lambda c: c.barrier(wait=False))


def test_a_closed_communicator_refuses_every_collective():
    with peerreduce.SimWorld(2) as world:
        comms = world.communicators()
        comms[0].close()
        for call in EVERY_COLLECTIVE + (lambda c: c.prepare(), lambda c: c.explain(8, collective="broadcast")):
            with pytest.raises(peerreduce.InvalidArgumentError, match="closed"):
                call(comms[0])
        comms[1].close()


def test_an_aborted_communicator_refuses_every_collective():
    with peerreduce.SimWorld(2) as world:
        comms = world.communicators()
        comms[0].abort()
        for call in EVERY_COLLECTIVE:
            with pytest.raises(peerreduce.AbortedError):
                call(comms[0])
        for c in comms:
            c.close()


def test_a_list_forms_list_must_hold_one_matching_tensor_per_rank():
    like = _buffers.describe(np.zeros(6, dtype=np.float32), "tensor")
    _buffers.rank_list([np.zeros(6, dtype=np.float32)] * 3, like, "tensor_list", "tensor", 3)
    _buffers.rank_list((np.zeros((2, 3), dtype=np.float32),) * 2, like, "tensor_list", "tensor", 2)
    with pytest.raises(peerreduce.InvalidArgumentError, match="tensor_list is 2 items; it must list one tensor per"):
        _buffers.rank_list([np.zeros(6, dtype=np.float32)] * 2, like, "tensor_list", "tensor", 3)
    with pytest.raises(peerreduce.InvalidArgumentError, match="input_list is a ndarray"):
        _buffers.rank_list(np.zeros(6, dtype=np.float32), like, "input_list", "output", 3)
    with pytest.raises(peerreduce.InvalidArgumentError, match=r"tensor_list\[1\] holds 5 elements, tensor 6"):
        _buffers.rank_list([np.zeros(6, dtype=np.float32), np.zeros(5, dtype=np.float32)], like, "tensor_list",
                           "tensor", 2)
    with pytest.raises(peerreduce.InvalidArgumentError, match=r"tensor_list\[0\] is int32 .* tensor float32"):
        _buffers.rank_list([np.zeros(6, dtype=np.int32)], like, "tensor_list", "tensor", 1)
    with pytest.raises(peerreduce.InvalidArgumentError, match=r"tensor_list\[0\] is a str"):
        _buffers.rank_list(["x"], like, "tensor_list", "tensor", 1)

