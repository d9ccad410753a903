#!/usr/bin/env python3
"""Checks libpeerreduce_nccl.so's exports against NCCL 2.28's API list (tests/nccl/nccl_2_28_api.txt):

- the library exports exactly the list's "wrapped" functions, each under its name and the p-prefixed one,
  and no other symbol (the library's own code stays local);
- nccl/nccl_functions.h's table holds the same functions;
- docs/NCCL.md names every function left to the real NCCL ("real" rows), so its reasons stay documented;
- with --real LIBRARY (an NCCL of release 2.28): the list holds exactly the nccl names that library exports.

usage: check_nccl_exports.py LIBRARY nccl_functions.h nccl_2_28_api.txt NCCL.md [--real LIBNCCL]
"""
import re
import subprocess
import sys


def exported_symbols(library):
    text = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                          text=True).stdout
    return {line.split()[-1] for line in text.splitlines() if line.strip()}


def read_api_list(path):
    wrapped, real = [], []
    for number, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(None, 2)
        if len(fields) < 2 or fields[1] not in ("wrapped", "real") or (fields[1] == "real" and len(fields) < 3):
            raise ValueError(f"{path}:{number}: expected 'NAME wrapped' or 'NAME real REASON', got {line!r}")
        (wrapped if fields[1] == "wrapped" else real).append(fields[0])
    return wrapped, real


def report(title, names):
    for name in sorted(names):
        print(f"  {title}: {name}")
    return bool(names)


def main():
    args = sys.argv[1:]
    real_library = None
    if "--real" in args:
        index = args.index("--real")
        real_library = args[index + 1]
        del args[index:index + 2]
    library, functions_header, api_list, doc = args
    wrapped, real = read_api_list(api_list)
    table = re.findall(r'\{NcclFunction::k\w+, "(nccl\w+)"', open(functions_header).read())
    if len(table) < 30:
        print(f"{functions_header}: found only {len(table)} functions; the table's format changed")
        return 1
    failed = report("in nccl_functions.h, not wrapped in the list", set(table) - set(wrapped))
    failed |= report("wrapped in the list, not in nccl_functions.h", set(wrapped) - set(table))

    expected = set(wrapped) | {"p" + name for name in wrapped}
    exported = exported_symbols(library)
    print(f"{library}: {len(exported)} symbols exported, {len(expected)} expected "
          f"({len(wrapped)} of NCCL 2.28's {len(wrapped) + len(real)} functions under two names)")
    failed |= report("missing", expected - exported)
    failed |= report("not a wrapped NCCL function", exported - expected)

    documented = open(doc).read()
    failed |= report(f"left to the real NCCL but not named in {doc}",
                     {name for name in real if f"`{name}`" not in documented})

    if real_library:
        theirs = {name[1:] if name.startswith("pnccl") else name
                  for name in exported_symbols(real_library) if name.startswith(("nccl", "pnccl"))}
        print(f"{real_library}: {len(theirs)} nccl functions")
        failed |= report("exported by the real NCCL, not in the list", theirs - set(wrapped) - set(real))
        failed |= report("in the list, not exported by the real NCCL", (set(wrapped) | set(real)) - theirs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
