"""Three columns from two runs of `python -m peerreduce.bench`: `python -m peerreduce.bench_merge A.json B.json`.

One run with NCCL alone and one with the NCCL library preloaded (the JSON's `nccl_path` says which is
which, in either order) give, per size and for eager calls and graph replays: peerreduce's package, NCCL
alone and NCCL through the library (torch.distributed's "nccl" backend with libpeerreduce_nccl.so), each
as a time and as a ratio to NCCL alone. The package's times are the plain run's (the preloaded run
measures them again; both are kept in the JSON written with --json). Where the preloaded run also timed
NCCL's kernels in its own process (a group whose calls the library forwards: `nccl_forwarded_us`), each
mode has `nccl_forwarded` and `library_to_forwarded`, the library against NCCL within one process, and
the table shows it as `lib/fwd`.
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
        # Host time per eager call (tables from before it was measured have none): where the library's is
        # about its eager time and NCCL's is not, the library's calls are host-bound.
        if "nccl_host_us" in row and "nccl_host_us" in other:
            merged["eager"].update(peerreduce_host=row.get("peerreduce_host_us"), nccl_host=row["nccl_host_us"],
                                   nccl_library_host=other["nccl_host_us"])
        rows.append(merged)
    if not rows:
        raise MergeError("the runs have no size in common with NCCL's times")
    return {"ranks": plain["ranks"], "dtype": plain["dtype"], "library": preloaded["nccl_path"], "rows": rows}


def render(table: dict) -> str:
    lines = [f"{table['ranks']} ranks, {table['dtype']}; times in us, ratios to NCCL alone",
             f"{'bytes':>10} | {'eager: package':>15} {'NCCL':>8} {'library':>8} {'pkg/N':>6} {'lib/N':>6} |"
             f" {'graph: package':>15} {'NCCL':>8} {'library':>8} {'pkg/N':>6} {'lib/N':>6}"]
    hosts = all("nccl_host" in row["eager"] for row in table["rows"])
    if hosts:
        lines[-1] += f" | {'eager host: NCCL':>16} {'library':>8}"
    same_process = all("library_to_forwarded" in row["eager"] for row in table["rows"])
    if same_process:
        lines[0] += "; lib/fwd: the library over NCCL's kernels forwarded in the same process"
        lines[-1] += f" | {'fwd eager':>9} {'lib/fwd':>7} {'fwd graph':>9} {'lib/fwd':>7}"
    for row in table["rows"]:
        cells = []
        for mode in ("eager", "graph"):
            m = row[mode]
            cells.append(f"{m['peerreduce']:>15.2f} {m['nccl']:>8.2f} {m['nccl_library']:>8.2f} "
                         f"{m['peerreduce_ratio']:>6.3f} {m['library_ratio']:>6.3f}")
        line = f"{row['bytes']:>10} | {cells[0]} | {cells[1]}"
        if hosts:
            line += f" | {row['eager']['nccl_host']:>16.2f} {row['eager']['nccl_library_host']:>8.2f}"
        if same_process:
            line += " |"
            for mode in ("eager", "graph"):
                line += f" {row[mode]['nccl_forwarded']:>9.2f} {row[mode]['library_to_forwarded']:>7.3f}"
        lines.append(line)
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
