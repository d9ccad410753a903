"""What the scripts that read peerreduce-bench JSON share (bench/tuning_from_bench.py,
bench/take_table_from_bench.py): one run's file read and checked, with errors naming the file.
Standard library only."""
import json


class BadInput(Exception):
    """Input the scripts refuse (exit status 2); the message names the file and what is wrong."""


def load_run(path, arch_override, arch_field="architecture"):
    """(run, arch, ranks) of one `peerreduce-bench --json` file: the parsed object, the architecture its rows
    are keyed by (arch_override, else the file's arch_field, else its "architecture") and the world size.
    take_table_from_bench.py reads "take_architecture", which names host-staged worlds apart ("sm_90-host");
    tuning tables key by "architecture"."""
    try:
        with open(path) as f:
            run = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(run, dict) or not isinstance(run.get("rows"), list):
        raise BadInput(f"{path}: not a peerreduce-bench --json file (no 'rows' list)")
    arch = arch_override or run.get(arch_field) or run.get("architecture")
    if not arch:
        raise BadInput(f"{path}: names no architecture; give --arch")
    try:
        ranks = int(run["ranks"])
    except (KeyError, TypeError, ValueError):
        raise BadInput(f"{path}: needs a whole number 'ranks'") from None
    return run, arch, ranks
