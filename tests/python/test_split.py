"""Communicator.split (prCommSplit) on simulated worlds: children by color ranked by key, collectives over
exactly their ranks, color None, and refusals as typed errors on every rank."""

import threading

import numpy as np

import peerreduce


def on_every_rank(n, body):
    """Runs body(rank) on a thread per rank (the split is collective) and returns (results, failures)."""
    results, failures = [None] * n, [None] * n

    def run(r):
        try:
            results[r] = body(r)
        except BaseException as e:  # reported by the caller
            failures[r] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    [t.start() for t in threads]
    [t.join(120) for t in threads]
    return results, failures


def test_odd_and_even_ranks_with_reversed_keys_reduce_over_their_own_ranks():
    with peerreduce.SimWorld(6, seed=4) as world:
        comms = world.communicators()
        arrays = [np.full(100, r, dtype=np.int64) for r in range(6)]

        def rank(r):
            child = comms[r].split(r % 2, key=-r)
            identity = (child.rank, child.world_size)
            child.all_reduce(arrays[r])
            child.synchronize()
            child.close()
            return identity

        identities, failures = on_every_rank(6, rank)
        assert failures == [None] * 6, failures
        # Keys reversed: the highest parent rank of each color is rank 0.
        assert identities == [(2, 3), (2, 3), (1, 3), (1, 3), (0, 3), (0, 3)]
        assert all(np.all(arrays[r] == (6 if r % 2 == 0 else 9)) for r in range(6))
        for c in comms:
            c.close()


def test_color_none_gets_no_communicator():
    with peerreduce.SimWorld(3) as world:
        comms = world.communicators()
        children, failures = on_every_rank(3, lambda r: comms[r].split(None if r == 1 else 0, key=r))
        assert failures == [None] * 3, failures
        assert children[1] is None
        assert [children[r].world_size for r in (0, 2)] == [2, 2]
        for c in children[0:1] + children[2:] + comms:
            c.close()


def test_a_negative_color_is_refused_and_the_other_ranks_are_told():
    with peerreduce.SimWorld(2) as world:
        comms = world.communicators()
        _, failures = on_every_rank(2, lambda r: comms[r].split(-3 if r == 0 else 0))
        assert isinstance(failures[0], peerreduce.InvalidArgumentError) and "color -3" in str(failures[0])
        assert isinstance(failures[1], peerreduce.RemoteError) and "rank 0 refused" in str(failures[1])
        for c in comms:
            c.close()
