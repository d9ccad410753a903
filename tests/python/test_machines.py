"""Communicators that span machines from Python, on simulated machines with numpy: reduce-scatter,
all-gather and allreduce across 2 machines x 2 ranks (exact integers, both strategies), the layout, and
the refusals (an unknown strategy, mismatched buffers, integer avg, a closed communicator)."""

import threading

import numpy as np
import pytest

import peerreduce

MACHINES, RANKS_PER_MACHINE = 2, 2
WORLD = MACHINES * RANKS_PER_MACHINE


def on_every_rank(body):
    """Runs body(rank) on a thread per rank (calls across machines wait on the host) and returns each
    rank's exception, or None."""
    raised = [None] * WORLD

    def run(rank):
        try:
            body(rank)
        except Exception as e:  # reported to the test, which fails on it
            raised[rank] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(WORLD)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return raised


@pytest.fixture
def machines():
    world = peerreduce.MultiMachineSimWorld(MACHINES, RANKS_PER_MACHINE, seed=5)
    comms = world.communicators()
    yield comms
    for comm in comms:
        comm.close()
    world.close()


@pytest.mark.parametrize("strategy", ["hierarchical", "flat"])
def test_reduce_scatter_and_all_gather_are_exact(machines, strategy):
    count = 33
    send = [np.arange(WORLD * count, dtype=np.int32) + 1000 * r for r in range(WORLD)]
    block = [np.zeros(count, dtype=np.int32) for _ in range(WORLD)]
    gathered = [np.zeros(WORLD * count, dtype=np.int32) for _ in range(WORLD)]

    def body(r):
        machines[r].reduce_scatter(send[r], block[r], strategy=strategy)
        machines[r].all_gather(block[r], gathered[r], strategy=strategy)
        machines[r].synchronize()

    assert on_every_rank(body) == [None] * WORLD
    expected = WORLD * np.arange(WORLD * count, dtype=np.int64) + 1000 * sum(range(WORLD))
    for r in range(WORLD):
        np.testing.assert_array_equal(gathered[r], expected.astype(np.int32))


def test_all_reduce_and_layout(machines):
    data = [np.full(10, r + 1, dtype=np.float64) for r in range(WORLD)]

    def body(r):
        machines[r].all_reduce(data[r], data[r])
        machines[r].synchronize()

    assert on_every_rank(body) == [None] * WORLD
    for r in range(WORLD):
        np.testing.assert_array_equal(data[r], np.full(10, 10.0))
    assert machines[3].layout == {"rank": 3, "size": 4, "machines": 2, "ranks_per_machine": 2, "machine": 1,
                                  "local_rank": 1}


def test_bad_input_is_refused_saying_why(machines):
    data = np.zeros(WORLD * 4, dtype=np.int32)
    with pytest.raises(peerreduce.InvalidArgumentError, match="strategy 'ring' is not one of"):
        machines[0].reduce_scatter(data, data[:4], strategy="ring")
    with pytest.raises(peerreduce.InvalidArgumentError, match="world size x recv's count"):
        machines[0].reduce_scatter(data[:5], data[:4])
    with pytest.raises(peerreduce.InvalidArgumentError, match="world size x send's count"):
        machines[0].all_gather(data[:4], data[:5])
    with pytest.raises(peerreduce.UnsupportedError, match="avg of int32"):
        machines[0].reduce_scatter(data, np.zeros(4, dtype=np.int32), op="avg")
    machines[0].close()
    with pytest.raises(peerreduce.InvalidArgumentError, match="closed"):
        machines[0].synchronize()


def test_bad_worlds_are_refused():
    with pytest.raises(peerreduce.InvalidArgumentError, match="machines"):
        peerreduce.MultiMachineSimWorld(0, 2)
