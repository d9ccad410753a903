"""Fixtures the simulator tests share."""

import pytest

import peerreduce


@pytest.fixture
def world4():
    """A simulated world of 4 ranks and every rank's communicator, closed afterwards."""
    with peerreduce.SimWorld(4, seed=3) as world:
        comms = world.communicators()
        yield world, comms
        for c in comms:
            c.close()
