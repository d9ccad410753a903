"""Three columns from two runs of `python -m peerreduce.bench`: `python -m peerreduce.bench_merge A.json B.json`.

One run with NCCL alone and one with the NCCL library preloaded (the JSON's `nccl_path` says which is
which, in either order) give, per size and for eager calls and graph replays: peerreduce's package, NCCL
alone and NCCL through the library (torch.distributed's "nccl" backend with libpeerreduce_nccl.so), each
as a time and as a ratio to NCCL alone. The package's times are the plain run's (the preloaded run
measures them again; both are kept in the JSON written with --json). Where the preloaded run also timed
NCCL's kernels in its own process (a group whose calls the library forwards: `nccl_forwarded_us`), each
mode has `nccl_forwarded` and `library_to_forwarded`, the library against NCCL within one process, and
the table shows it first as `lib/fwd same`: the library's headline. The ratio to NCCL alone of the library
(`library_ratio`, `lib/N cross-proc`) divides times of two processes, whose host cost per eager call
differs by up to 2 x, so it is labelled cross-process; `RATIOS` (kept in the merged JSON as `ratios`) says
of every ratio which times it divides. Where the runs timed their eager calls in interleaved rounds, the
median of the per-round ratios is kept too (`*_per_round`, `per round`).
"""

from __future__ import annotations

import argparse
import json


class MergeError(ValueError):
    """The two tables cannot be merged; says why."""


def _load(path: str) -> dict:
    with open(path) as f:
        table = json.load(f)
    for key in ("ranks", "dtype", "rows", "nccl_path"):
        if key not in table:
            raise MergeError(f"{path}: no '{key}': not a table written by python -m peerreduce.bench --json")
    return table


# What each ratio of a merged row divides, and whether its two times come from one process. The two runs
# are two processes, and the same code's host cost per eager call differs between processes by up to 2 x:
# a cross-process eager ratio is that difference as much as the library's.
RATIOS = {
    "peerreduce_ratio": "same process: the package over NCCL alone, both in the plain run",
    "peerreduce_ratio_per_round": "same process: the median of the plain run's per-round package/NCCL ratios (eager)",
    "library_ratio": "cross-process: NCCL through the library (preloaded run) over NCCL alone (plain run)",
    "library_to_forwarded": ("same process: NCCL through the library over NCCL forwarded by it, both in the "
                             "preloaded run"),
    "library_to_forwarded_per_round": ("same process: the median of the preloaded run's per-round "
                                       "library/forwarded ratios (eager)"),
}


def merge(first: dict, second: dict) -> dict:
    """The merged table of a plain run and a preloaded run (either order)."""
    plain, preloaded = (first, second) if not first["nccl_path"] else (second, first)
    if plain["nccl_path"] or not preloaded["nccl_path"]:
        raise MergeError("need one run with NCCL alone and one with the NCCL library preloaded; got "
                         f"nccl_path {first['nccl_path']!r} and {second['nccl_path']!r}")
    for key in ("ranks", "dtype"):
        if plain[key] != preloaded[key]:
            raise MergeError(f"the runs differ in {key}: {plain[key]} and {preloaded[key]}")
    by_bytes = {row["bytes"]: row for row in preloaded["rows"]}
    rows = []
    for row in plain["rows"]:
        other = by_bytes.get(row["bytes"])
        if other is None or "nccl_us" not in row:
            continue
        merged = {"bytes": row["bytes"]}
        for mode, suffix in (("eager", "_us"), ("graph", "_graph_us")):
            nccl = row["nccl" + suffix]
            merged[mode] = {"peerreduce": row["peerreduce" + suffix], "nccl": nccl,
                            "nccl_library": other["nccl" + suffix],
                            "peerreduce_ratio": row["peerreduce" + suffix] / nccl,
                            "library_ratio": other["nccl" + suffix] / nccl}
            if "nccl_forwarded" + suffix in other:
                forwarded = other["nccl_forwarded" + suffix]
                merged[mode].update(nccl_forwarded=forwarded,
                                    library_to_forwarded=other["nccl" + suffix] / forwarded)
        # The medians of the per-round ratios (tables from before the eager rounds were interleaved have none).
        if "ratio_per_round" in row:
            merged["eager"]["peerreduce_ratio_per_round"] = row["ratio_per_round"]
        if "library_to_forwarded_per_round" in other:
            merged["eager"]["library_to_forwarded_per_round"] = other["library_to_forwarded_per_round"]
        # Host time per eager call (tables from before it was measured have none): where the library's is
        # about its eager time and NCCL's is not, the library's calls are host-bound.
        if "nccl_host_us" in row and "nccl_host_us" in other:
            merged["eager"].update(peerreduce_host=row.get("peerreduce_host_us"), nccl_host=row["nccl_host_us"],
                                   nccl_library_host=other["nccl_host_us"])
            if "nccl_forwarded_host_us" in other:
                merged["eager"]["nccl_forwarded_host"] = other["nccl_forwarded_host_us"]
        rows.append(merged)
    if not rows:
        raise MergeError("the runs have no size in common with NCCL's times")
    return {"ranks": plain["ranks"], "dtype": plain["dtype"], "library": preloaded["nccl_path"],
            "ratios": dict(RATIOS), "rows": rows}


def render(table: dict) -> str:
    """The merged table as text: the library against NCCL in its own process first where the preloaded run
    timed it, then each mode's times and ratios; every ratio's title says same process or cross-process."""
    rows = table["rows"]

    def every(mode: str, key: str) -> bool:
        return all(key in row[mode] for row in rows)

    same_process = every("eager", "library_to_forwarded")
    per_round = every("eager", "peerreduce_ratio_per_round") or (
        same_process and every("eager", "library_to_forwarded_per_round"))
    lines = [f"{table['ranks']} ranks, {table['dtype']}; times in us"]
    if same_process:
        lines.append("lib/fwd same: NCCL through the library over NCCL forwarded by it, same process (the preloaded "
                     "run): the library's own share")
    lines.append("pkg/N same: the package over NCCL alone, same process (the plain run); lib/N cross-proc: NCCL "
                 "through the library (preloaded run) over NCCL alone (plain run), across processes, whose host "
                 "cost per eager call differs by up to 2 x")
    if per_round:
        lines.append("per round: the median of the ratios of the eager rounds, each pair timed back to back")
    # Groups of (title, width, mode, key, digits), "|" between groups.
    groups = []
    if same_process:
        group = [("fwd eager", 9, "eager", "nccl_forwarded", 2),
                 ("lib/fwd same", 12, "eager", "library_to_forwarded", 3)]
        if every("eager", "library_to_forwarded_per_round"):
            group.append(("per round", 9, "eager", "library_to_forwarded_per_round", 3))
        groups.append(group + [("fwd graph", 9, "graph", "nccl_forwarded", 2),
                               ("lib/fwd same", 12, "graph", "library_to_forwarded", 3)])
    for mode in ("eager", "graph"):
        group = [(f"{mode}: package", 15, mode, "peerreduce", 2), ("NCCL", 8, mode, "nccl", 2),
                 ("library", 8, mode, "nccl_library", 2), ("pkg/N same", 10, mode, "peerreduce_ratio", 3)]
        if every(mode, "peerreduce_ratio_per_round"):
            group.append(("per round", 9, mode, "peerreduce_ratio_per_round", 3))
        groups.append(group + [("lib/N cross-proc", 16, mode, "library_ratio", 3)])
    if every("eager", "nccl_host"):
        group = [("eager host: NCCL", 16, "eager", "nccl_host", 2), ("library", 8, "eager", "nccl_library_host", 2)]
        if every("eager", "nccl_forwarded_host"):
            group.append(("forwarded", 9, "eager", "nccl_forwarded_host", 2))
        groups.append(group)
    lines.append(f"{'bytes':>10} | " + " | ".join(" ".join(f"{c[0]:>{c[1]}}" for c in group) for group in groups))
    for row in rows:
        lines.append(f"{row['bytes']:>10} | " + " | ".join(
            " ".join(f"{row[mode][key]:>{width}.{digits}f}" for _, width, mode, key, digits in group)
            for group in groups))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs=2, help="the JSON of each run (python -m peerreduce.bench --json)")
    parser.add_argument("--json", help="write the merged table here")
    args = parser.parse_args(argv)
    table = merge(_load(args.tables[0]), _load(args.tables[1]))
    print(render(table))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
