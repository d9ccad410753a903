"""Writing plan files (docs/PLANS.md) from Python: pure Python, no GPU and no library needed.

A plan is every rank's list of steps over chunks: copy, reduce, signal, wait. `PlanWriter` keeps the
bookkeeping a person gets wrong (the wait values, the done signals every plan owes its peers, the scratch
slot count) and writes the text format, which `peerreduce-sim plan check FILE` verifies and
`peerreduce-sim plan run FILE` simulates and times against the built-in algorithms. The algorithms below
take the world size, so one script gives the plan for any n:

    from peerreduce import plans
    text = plans.hierarchical_allreduce(8, groups=2)     # a str in the plan text format
    open("hierarchical8.plan", "w").write(text)

A builder refuses a world it cannot serve with `PlanRefused`, whose message names the reason (seven ranks
do not split into two equal groups); everything else is the verifier's to judge.

From the shell: python3 -m peerreduce.plans hierarchical-allreduce --world 8 --groups 2 > h8.plan
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Iterable, Optional, Sequence

FORMAT_VERSION = 1
MAX_WORLD = 64  # peerreduce's largest world (kMaxWorldSize)
MAX_FLAGS = 3  # flag ids a plan may use: 0 (done) and two of its own (the GPU kernels hold three)
COLLECTIVES = ("allreduce", "reduce-scatter", "all-gather", "broadcast")
DONE_FLAG = 0


class PlanRefused(ValueError):
    """A builder cannot write a plan for this world; the message says why."""


def send(rank: int) -> str:
    """The send buffer of `rank` (a step may touch only its own rank's user buffers)."""
    return f"in{rank}"


def recv(rank: int) -> str:
    """The receive buffer of `rank`."""
    return f"out{rank}"


def scratch(rank: int, slot: int) -> str:
    """Scratch slot `slot` of `rank`: one chunk, readable by peers once `rank` signalled it is written."""
    return f"s{rank}.{slot}"


def _owner(ref: str) -> int:
    body = ref[1:] if ref.startswith("s") else ref.lstrip("inout")
    return int(body.split(".")[0])


def _slot(ref: str) -> int | None:
    return int(ref.split(".")[1]) if ref.startswith("s") else None


class PlanWriter:
    """Every rank's steps for one collective, written out as a plan file by `text()`.

    Steps are added in an order where every signal is added before the waits that consume it;
    `wait_all` then waits for exactly the signals added so far. `text()` appends the done signals (to each
    peer whose memory a rank touched, after the run of copies and reductions holding its last access there)
    and sizes the scratch.
    """

    def __init__(self, collective: str, world: int, chunks: int = 1, flags: int = 2, root: int = 0,
                 name: str = "", in_place: bool = False) -> None:
        if collective not in COLLECTIVES:
            raise PlanRefused(f"collective {collective!r} is not one of {', '.join(COLLECTIVES)}")
        if not 1 <= world <= MAX_WORLD:
            raise PlanRefused(f"world size {world} is outside 1..{MAX_WORLD}")
        if not 1 <= flags <= MAX_FLAGS:
            raise PlanRefused(f"{flags} flags: a plan has 1..{MAX_FLAGS}")
        if collective == "broadcast" and not 0 <= root < world:
            raise PlanRefused(f"root {root} is not a rank of {world}")
        self.collective = collective
        self.world = world
        self.chunks = chunks
        self.flags = flags
        self.root = root
        self.name = name
        self.in_place = in_place
        self.blocks = world if collective in ("reduce-scatter", "all-gather") else 1
        self._steps: list[list[tuple]] = [[] for _ in range(world)]
        self._sent: dict[tuple[int, int, int], int] = {}
        self._first_private: Optional[int] = None

    def chunk(self, block: int, chunk: int = 0) -> int:
        """The index a step names for chunk `chunk` of block `block`."""
        return block * self.chunks + chunk

    def keep_private_from(self, slot: int) -> None:
        """Scratch slots from `slot` on are each rank's own ("private N" in the file): no peer may name
        them, and a GPU keeps them in device memory where the rest of a rank's scratch is pinned host
        memory (host-staged links), so a plan can copy its peers' data down into them and reduce there."""
        if slot < 0:
            raise PlanRefused(f"private slots from {slot}: slots are numbered from 0")
        self._first_private = slot

    def copy(self, rank: int, chunk: int, src: str, dst: str, copy_engine: bool = False) -> None:
        self._steps[rank].append(("ce-copy" if copy_engine else "copy", chunk, [src], dst, False))

    def reduce(self, rank: int, chunk: int, sources: Sequence[str], dst: str, final: bool = False) -> None:
        """dst <- the sources folded left to right; `final` on the last reduction of a chunk."""
        self._steps[rank].append(("reduce", chunk, list(sources), dst, final))

    def signal(self, frm: int, to: int, flag: int = 1) -> None:
        if not 0 < flag < self.flags:
            raise PlanRefused(f"flag {flag}: plans signal on 1..{self.flags - 1}; done signals are added by text()")
        self._steps[frm].append(("signal", to, flag))
        self._sent[(to, frm, flag)] = self._sent.get((to, frm, flag), 0) + 1

    def wait_all(self, rank: int, writer: int, flag: int = 1) -> None:
        """`rank` waits for every signal `writer` has sent it on `flag` so far."""
        count = self._sent.get((rank, writer, flag), 0)
        if count == 0:
            raise PlanRefused(f"rank {rank} would wait for a signal rank {writer} never sends on flag {flag}")
        self._steps[rank].append(("wait", writer, flag, count))

    def _with_done_signals(self, rank: int) -> list[tuple]:
        steps = self._steps[rank]
        last = {}  # peer -> index of the last data step touching its memory
        for i, step in enumerate(steps):
            if step[0] in ("copy", "ce-copy", "reduce"):
                for ref in step[2] + [step[3]]:
                    if _owner(ref) != rank:
                        last[_owner(ref)] = i
        # After the run of data steps holding the last access: a GPU runs such a run at once.
        data = [s[0] in ("copy", "ce-copy", "reduce") for s in steps]
        for peer, i in last.items():
            while i + 1 < len(steps) and data[i + 1]:
                i += 1
            last[peer] = i
        out = []
        for i, step in enumerate(steps):
            out.append(step)
            out.extend(("signal", peer, DONE_FLAG) for peer in sorted(last) if last[peer] == i)
        return out

    def text(self) -> str:
        slots = 0
        for steps in self._steps:
            for step in steps:
                if step[0] in ("copy", "ce-copy", "reduce"):
                    for ref in step[2] + [step[3]]:
                        if _slot(ref) is not None:
                            slots = max(slots, _slot(ref) + 1)
        lines = [f"peerreduce-plan {FORMAT_VERSION}"]
        if self.name:
            lines.append(f"name {self.name}")
        lines += [f"collective {self.collective}", f"world {self.world}"]
        if self.collective == "broadcast":
            lines.append(f"root {self.root}")
        lines += [f"chunks {self.chunks}", f"slots {slots}"]
        if self._first_private is not None and slots > self._first_private:
            lines.append(f"private {slots - self._first_private}")
        lines += [f"flags {self.flags}", f"in-place {'yes' if self.in_place else 'no'}"]
        for rank in range(self.world):
            lines.append(f"rank {rank}")
            for step in self._with_done_signals(rank):
                lines.append("  " + _step_text(step))
        lines.append("end")
        return "\n".join(lines) + "\n"


def _step_text(step: tuple) -> str:
    kind = step[0]
    if kind in ("copy", "ce-copy", "reduce"):
        _, chunk, sources, dst, final = step
        return f"{kind} c{chunk} [{' '.join(sources)}] -> {dst}" + (" final" if final else "")
    if kind == "signal":
        return f"signal r{step[1]} flag {step[2]}"
    return f"wait r{step[1]} flag {step[2]} >= {step[3]}"


# ---- algorithms, each parameterised by the world size ---------------------------------------------------

def _everyone_tells_everyone(w: PlanWriter, flag: int = 1) -> None:
    """One synchronisation round: every rank signals every other, then waits for all of them."""
    for r in range(w.world):
        for q in range(w.world):
            if q != r:
                w.signal(r, q, flag)
    for r in range(w.world):
        for q in range(w.world):
            if q != r:
                w.wait_all(r, q, flag)


def one_shot_allreduce(world: int) -> str:
    """Every rank publishes its input and folds all of them in rank order (one synchronisation round)."""
    w = PlanWriter("allreduce", world, name=f"one-shot allreduce over {world} ranks")
    if world == 1:
        w.reduce(0, 0, [send(0)], recv(0), final=True)
        return w.text()
    for r in range(world):
        w.copy(r, 0, send(r), scratch(r, 0))
    _everyone_tells_everyone(w)
    for r in range(world):
        w.reduce(r, 0, [scratch(q, 0) for q in range(world)], recv(r), final=True)
    return w.text()


def hierarchical_allreduce(world: int, groups: int = 2) -> str:
    """Two levels: inside each group a reduce-scatter, across groups an allreduce of each share between the
    ranks holding it (rank i of every group: one link per rank between groups), inside each group an
    all-gather. Chunk k of every group is reduced by the group's k-th rank; every rank folds the groups'
    partials in group order, so every output is the same expression and the bits agree.
    Flags: 1 inside a group, 2 across groups."""
    if groups < 1 or world % groups != 0:
        raise PlanRefused(f"{world} ranks do not split into {groups} equal groups")
    size = world // groups
    group_of = [r // size for r in range(world)]
    members = [list(range(g * size, (g + 1) * size)) for g in range(groups)]
    w = PlanWriter("allreduce", world, chunks=size, flags=3,
                   name=f"hierarchical allreduce, {groups} groups of {size}")
    partial, total = size, size + 1  # scratch slots after the published input chunks 0..size-1
    # 1. Inside the group: publish every chunk, and rank k of the group folds chunk k of its members.
    for r in range(world):
        for k in range(size):
            w.copy(r, k, send(r), scratch(r, k))
        for q in members[group_of[r]]:
            if q != r:
                w.signal(r, q, 1)
    for r in range(world):
        k = r % size
        for q in members[group_of[r]]:
            if q != r:
                w.wait_all(r, q, 1)
        w.reduce(r, k, [scratch(q, k) for q in members[group_of[r]]], scratch(r, partial))
    # 2. Across groups: the holders of chunk k fold the groups' partials in group order.
    for r in range(world):
        for g in range(groups):
            q = members[g][r % size]
            if q != r:
                w.signal(r, q, 2)
    for r in range(world):
        k = r % size
        holders = [members[g][k] for g in range(groups)]
        for q in holders:
            if q != r:
                w.wait_all(r, q, 2)
        w.reduce(r, k, [scratch(q, partial) for q in holders], scratch(r, total), final=True)
        w.copy(r, k, scratch(r, total), recv(r))
    # 3. Inside the group again: every rank copies the other chunks from their holders.
    for r in range(world):
        for q in members[group_of[r]]:
            if q != r:
                w.signal(r, q, 1)
    for r in range(world):
        for q in members[group_of[r]]:
            if q != r:
                w.wait_all(r, q, 1)
                w.copy(r, q % size, scratch(q, total), recv(r))
    return w.text()


def relay_all_gather(world: int, missing: Iterable[tuple[int, int]] = ()) -> str:
    """An all-gather in one round where every pair is linked; the blocks of a pair whose link is missing go
    through a relay (the lowest rank linked to both), in a second round. Flags: 1 direct, 2 relayed."""
    cut = {frozenset(p) for p in missing}
    for pair in cut:
        if len(pair) != 2 or not all(0 <= r < world for r in pair):
            raise PlanRefused(f"missing link {sorted(pair)} is not a pair of ranks of {world}")
    linked = lambda a, b: a == b or frozenset((a, b)) not in cut  # noqa: E731
    relay = {}
    for pair in sorted(cut, key=sorted):
        a, b = sorted(pair)
        middle = [m for m in range(world) if m not in pair and linked(m, a) and linked(m, b)]
        if not middle:
            raise PlanRefused(f"no rank is linked to both {a} and {b}: their blocks cannot be relayed")
        relay[(a, b)] = relay[(b, a)] = middle[0]
    links = "link" if len(cut) == 1 else "links"
    w = PlanWriter("all-gather", world, flags=3 if cut else 2,
                   name=f"all-gather over {world} ranks" + (f", relayed around {len(cut)} missing {links}"
                                                             if cut else ""))
    for r in range(world):
        w.copy(r, w.chunk(r), send(r), scratch(r, 0))
        w.copy(r, w.chunk(r), send(r), recv(r))
        for q in range(world):
            if q != r and linked(r, q):
                w.signal(r, q, 1)
    for r in range(world):
        for q in range(world):
            if q != r and linked(r, q):
                w.wait_all(r, q, 1)
                w.copy(r, w.chunk(q), scratch(q, 0), recv(r))
    # The relays: rank m keeps a's block for b in a slot of its own (one per block it relays), then tells b.
    held: dict[tuple[int, int], int] = {}  # (relay, source) -> slot
    for (a, b), m in sorted(relay.items()):
        if (m, a) not in held:
            held[(m, a)] = 1 + sum(1 for (relay_rank, _) in held if relay_rank == m)
            w.copy(m, w.chunk(a), scratch(a, 0), scratch(m, held[(m, a)]))
        w.signal(m, b, 2)
    for (a, b), m in sorted(relay.items()):
        w.wait_all(b, m, 2)
        w.copy(b, w.chunk(a), scratch(m, held[(m, a)]), recv(b))
    return w.text()


def direct_reduce_scatter(world: int) -> str:
    """Every rank publishes its input's blocks; rank b folds block b of every rank in rank order."""
    w = PlanWriter("reduce-scatter", world, name=f"direct reduce-scatter over {world} ranks")
    for r in range(world):
        for b in range(world):
            w.copy(r, w.chunk(b), send(r), scratch(r, b))
    _everyone_tells_everyone(w)
    for r in range(world):
        w.reduce(r, w.chunk(r), [scratch(q, r) for q in range(world)], recv(r), final=True)
    return w.text()


def chain_broadcast(world: int, root: int = 0, chunks: int = 4) -> str:
    """The root's buffer passed along the chain root, root+1, ... in `chunks` pipelined pieces."""
    if not 0 <= root < world:
        raise PlanRefused(f"root {root} is not a rank of {world}")
    w = PlanWriter("broadcast", world, chunks=chunks, root=root, name=f"chain broadcast from {root} over {world}")
    order = [(root + i) % world for i in range(world)]
    for c in range(chunks):
        for i, r in enumerate(order):
            if i == 0:
                w.copy(r, c, send(r), scratch(r, c))
                w.copy(r, c, send(r), recv(r))
            else:
                w.wait_all(r, order[i - 1])
                w.copy(r, c, scratch(order[i - 1], c), scratch(r, c))
                w.copy(r, c, scratch(r, c), recv(r))
            if i + 1 < world:
                w.signal(r, order[i + 1])
    return w.text()


BUILDERS: dict[str, Callable[..., str]] = {
    "one-shot-allreduce": one_shot_allreduce,
    "hierarchical-allreduce": hierarchical_allreduce,
    "relay-all-gather": relay_all_gather,
    "direct-reduce-scatter": direct_reduce_scatter,
    "chain-broadcast": chain_broadcast,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m peerreduce.plans", description="Writes a plan file.")
    parser.add_argument("plan", choices=sorted(BUILDERS))
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--groups", type=int, default=2, help="hierarchical-allreduce: equal groups")
    parser.add_argument("--missing", default="", help="relay-all-gather: missing links A-B,C-D")
    parser.add_argument("--root", type=int, default=0, help="chain-broadcast: the root")
    args = parser.parse_args(argv)
    try:
        if args.plan == "hierarchical-allreduce":
            text = hierarchical_allreduce(args.world, args.groups)
        elif args.plan == "relay-all-gather":
            pairs = [tuple(int(x) for x in p.split("-")) for p in args.missing.split(",") if p]
            text = relay_all_gather(args.world, pairs)
        elif args.plan == "chain-broadcast":
            text = chain_broadcast(args.world, args.root)
        else:
            text = BUILDERS[args.plan](args.world)
    except (PlanRefused, ValueError) as refused:
        print(f"{parser.prog}: {refused}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
