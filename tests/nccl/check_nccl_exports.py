#!/usr/bin/env python3
"""Checks that libpeerreduce_nccl.so exports exactly NCCL's functions of nccl/nccl_functions.h, each under
its name and the p-prefixed one, and no other symbol (the library's own code stays local).

usage: check_nccl_exports.py LIBRARY nccl_functions.h
"""
import re
import subprocess
import sys


def main():
    library, functions_header = sys.argv[1], sys.argv[2]
    names = re.findall(r'\{NcclFunction::k\w+, "(nccl\w+)"', open(functions_header).read())
    if len(names) < 30:
        print(f"{functions_header}: found only {len(names)} functions; the table's format changed")
        return 1
    expected = set(names) | {"p" + name for name in names}
    text = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                          text=True).stdout
    exported = {line.split()[-1] for line in text.splitlines() if line.strip()}
    missing = sorted(expected - exported)
    extra = sorted(exported - expected)
    print(f"{library}: {len(exported)} symbols exported, {len(expected)} expected "
          f"({len(names)} NCCL functions under two names)")
    for name in missing:
        print(f"  missing: {name}")
    for name in extra:
        print(f"  not NCCL's: {name}")
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
