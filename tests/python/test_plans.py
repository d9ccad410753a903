"""The plan builder (peerreduce.plans): every plan it writes for a world of 1..64 ranks is either verified by
`peerreduce-sim plan check` or refused with a named reason, by the builder (PlanRefused) or by the verifier
(REFUSED with its problems), and never malformed (a parse error is exit 2) or a crash. Needs no library and
no GPU: the builder is pure Python, the check is the simulator's command (PEERREDUCE_SIM)."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

from peerreduce import plans

SIM = os.environ.get("PEERREDUCE_SIM", "")
WORLDS = range(1, plans.MAX_WORLD + 1)
CHECK_TIMEOUT_S = 120  # one check of a 64-rank plan takes well under a second; a hang must not stall CI


def variants(world: int):
    """(label, builder call, peerreduce-sim options) for every builder and a few of its parameters."""
    yield "one-shot", lambda: plans.one_shot_allreduce(world), []
    for groups in (1, 2, 4, 8):
        yield f"hierarchical/{groups}", lambda g=groups: plans.hierarchical_allreduce(world, g), []
    yield "relay-all-gather", lambda: plans.relay_all_gather(world), []
    far = (0, world - 1)
    # The link the plan routes around is missing from the topology it is checked on.
    yield "relay-all-gather/missing", lambda: plans.relay_all_gather(world, [far]), ["--mask", f"{far[0]}-{far[1]}"]
    yield "reduce-scatter", lambda: plans.direct_reduce_scatter(world), []
    for root in sorted({0, world - 1}):
        yield f"chain-broadcast/{root}", lambda r=root: plans.chain_broadcast(world, r), []


def check(text: str, options: list[str]) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile("w", suffix=".plan", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return subprocess.run([SIM, "plan", "check", path, *options], capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT_S)
    finally:
        os.unlink(path)


@pytest.fixture(scope="module", autouse=True)
def simulator():
    if not SIM or not os.access(SIM, os.X_OK):
        pytest.fail("PEERREDUCE_SIM must name the peerreduce-sim executable (ctest sets it)")


@pytest.mark.parametrize("world", WORLDS)
def test_every_plan_the_builder_writes_is_verified_or_refused_with_a_reason(world):
    outcomes = []
    for label, build, options in variants(world):
        try:
            text = build()
        except plans.PlanRefused as refused:
            assert str(refused), f"{label} at {world} ranks was refused without a reason"
            outcomes.append("refused by the builder")
            continue
        if options and options[0] == "--mask" and world < 3:
            # Removing the only link between two ranks cuts the world: the builder must have refused.
            pytest.fail(f"{label} at {world} ranks routed around a link no rank can relay")
        result = check(text, options)
        where = f"{label} at {world} ranks:\n{result.stdout}{result.stderr}"
        assert result.returncode in (0, 1), f"malformed or crashed (exit {result.returncode}): {where}"
        if result.returncode == 0:
            assert "verdict:   verified" in result.stdout, where
            outcomes.append("verified")
        else:
            assert "verdict:   REFUSED" in result.stdout, where
            problems = [line for line in result.stdout.splitlines() if line.startswith("    ")]
            assert problems, f"refused without naming a problem: {where}"
            outcomes.append("refused by the verifier")
    # The builders are meant to be right: every world has verified plans, and the verifier refused none.
    assert "verified" in outcomes
    assert "refused by the verifier" not in outcomes, outcomes


def test_the_builder_names_what_it_cannot_do():
    with pytest.raises(plans.PlanRefused, match="7 ranks do not split into 2 equal groups"):
        plans.hierarchical_allreduce(7, 2)
    with pytest.raises(plans.PlanRefused, match="no rank is linked to both 0 and 1"):
        plans.relay_all_gather(2, [(0, 1)])
    with pytest.raises(plans.PlanRefused, match="world size 65 is outside 1..64"):
        plans.one_shot_allreduce(65)
    with pytest.raises(plans.PlanRefused, match="root 4 is not a rank of 4"):
        plans.chain_broadcast(4, 4)
    with pytest.raises(plans.PlanRefused, match="missing link \\[0, 9\\] is not a pair of ranks of 4"):
        plans.relay_all_gather(4, [(0, 9)])
    writer = plans.PlanWriter("allreduce", 2)
    with pytest.raises(plans.PlanRefused, match="never sends"):
        writer.wait_all(0, 1)
    with pytest.raises(plans.PlanRefused, match="done signals are added by text"):
        writer.signal(0, 1, 0)
    with pytest.raises(plans.PlanRefused, match="collective 'gather' is not one of"):
        plans.PlanWriter("gather", 2)
    with pytest.raises(plans.PlanRefused, match="4 flags: a plan has 1..3"):
        plans.PlanWriter("allreduce", 2, flags=4)


def _private_allreduce(peer_reads_private: bool) -> str:
    """Two ranks: each publishes its input in slot 0, copies the peer's slot 0 into its own private slot
    1 and reduces from there; with `peer_reads_private`, rank 1 reads rank 0's private slot instead."""
    writer = plans.PlanWriter("allreduce", 2, name="private slots by hand")
    writer.keep_private_from(1)
    for r in (0, 1):
        writer.copy(r, 0, f"in{r}", f"s{r}.0")
        writer.signal(r, 1 - r)
    for r in (0, 1):
        writer.wait_all(r, 1 - r)
        peer = 1 - r
        source = f"s{peer}.1" if (peer_reads_private and r == 1) else f"s{peer}.0"
        writer.copy(r, 0, source, f"s{r}.1")
        terms = [f"in{r}", f"s{r}.1"] if r == 0 else [f"s{r}.1", f"in{r}"]
        writer.reduce(r, 0, terms, f"out{r}", final=True)
    return writer.text()


def test_private_slots_are_written_and_the_verifier_keeps_peers_out_of_them():
    text = _private_allreduce(False)
    assert "\nslots 2\nprivate 1\n" in text
    done = check(text, [])
    assert done.returncode == 0, done.stdout + done.stderr
    refused = check(_private_allreduce(True), [])
    assert refused.returncode != 0
    assert "private slot 1" in refused.stdout + refused.stderr
    assert "private" not in plans.one_shot_allreduce(2)
    with pytest.raises(plans.PlanRefused, match="private slots from -1"):
        plans.PlanWriter("allreduce", 2).keep_private_from(-1)


def test_the_command_line_writes_a_plan_and_refuses_with_exit_status_2(capsys):
    assert plans.main(["one-shot-allreduce", "--world", "2"]) == 0
    assert capsys.readouterr().out.startswith("peerreduce-plan 1\n")
    assert plans.main(["hierarchical-allreduce", "--world", "6", "--groups", "4"]) == 2
    assert "6 ranks do not split into 4 equal groups" in capsys.readouterr().err
    assert plans.main(["relay-all-gather", "--world", "4", "--missing", "0-3"]) == 0
    assert "relayed around 1 missing link" in capsys.readouterr().out
