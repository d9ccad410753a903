"""Paired timings of two sides run alternately in one process (the training step's two replicas): step i
of one side over step i of the other, taken one right after the other on the same batch, so the
machine's drift falls on both terms of a pair; the pairs' median and quartiles say more than the ratio of
two medians. Free of torch, so it is tested without a GPU."""

from __future__ import annotations

import statistics

MIN_PAIRS = 4


def paired_ratios(first: list, second: list) -> dict:
    """first[i] / second[i] over the pairs: their count, median, quartiles, and how many are below 1
    (the first side faster). ValueError, naming the count, when there are fewer than MIN_PAIRS pairs or a
    time is not positive."""
    if len(first) != len(second):
        raise ValueError(f"{len(first)} timings against {len(second)}: the sides must have a timing per step")
    if any(t <= 0 for t in list(first) + list(second)):
        raise ValueError("a timing is not positive")
    ratios = sorted(a / b for a, b in zip(first, second))
    if len(ratios) < MIN_PAIRS:
        raise ValueError(f"{len(ratios)} pairs: too few to compare the sides (at least {MIN_PAIRS})")
    quartiles = statistics.quantiles(ratios, n=4)
    return {"pairs": len(ratios), "median": statistics.median(ratios), "lower_quartile": quartiles[0],
            "upper_quartile": quartiles[2], "first_faster": sum(1 for r in ratios if r < 1.0)}
