"""Paired timings of two sides (peerreduce.paired): ratios step by step, their median and quartiles, the
count of pairs where the first side was faster, and typed refusals of timings that cannot be paired."""

import pytest

from peerreduce.paired import paired_ratios


def test_ratios_step_by_step_with_median_quartiles_and_the_faster_count():
    first = [90.0, 100.0, 110.0, 120.0, 130.0]
    second = [100.0, 100.0, 100.0, 100.0, 100.0]
    result = paired_ratios(first, second)
    assert result["pairs"] == 5
    assert result["median"] == pytest.approx(1.1)
    assert result["lower_quartile"] <= result["median"] <= result["upper_quartile"]
    assert result["first_faster"] == 1


def test_drift_shared_by_a_pair_cancels():
    # The machine slows down threefold over the run; the first side is 10 % faster in every pair.
    second = [100.0 * (1 + i / 4) for i in range(8)]
    first = [0.9 * t for t in second]
    result = paired_ratios(first, second)
    assert result["median"] == pytest.approx(0.9)
    assert result["lower_quartile"] == pytest.approx(0.9) and result["upper_quartile"] == pytest.approx(0.9)
    assert result["first_faster"] == 8


def test_timings_that_cannot_be_paired_are_refused_by_name():
    with pytest.raises(ValueError, match="3 pairs: too few"):
        paired_ratios([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="5 timings against 4"):
        paired_ratios([1.0] * 5, [1.0] * 4)
    with pytest.raises(ValueError, match="not positive"):
        paired_ratios([1.0, 0.0, 1.0, 1.0], [1.0] * 4)
