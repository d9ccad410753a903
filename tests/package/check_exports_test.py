#!/usr/bin/env python3
"""check_exports.py passes on this build's libpeerreduce.so and fails on planted violations: an internal
C++ symbol, a C symbol no header declares, and a public C function that is missing."""
import pathlib
import subprocess
import sys
import tempfile

checker, library, *header_dirs = sys.argv[1:]
headers = ["--headers", *header_dirs]
c_headers = ["--c-functions-of"] + [str(p) for d in header_dirs for p in pathlib.Path(d).glob("peerreduce*.h")
                                    if p.name != "peerreduce_mpi.h"]


def run(*extra):
    done = subprocess.run([sys.executable, checker, library, *headers, *c_headers, *extra], capture_output=True,
                          text=True)
    return done.returncode, done.stdout + done.stderr


code, out = run()
print(out)
assert code == 0, "the library's exports must pass"

symbols = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout.splitlines()
planted = [line for line in symbols if not line.endswith(" prAllReduce")]
planted += ["0000000000001000 T _ZN10peerreduce13SymmetricPool8allocateEm",  # SymmetricPool::allocate
            "0000000000001010 T prInternalHelper"]
with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
    f.write("\n".join(planted) + "\n")
    f.flush()
    code, out = run("--symbols", f.name)
print(out)
assert code == 1, "planted violations must fail"
for expected in ["SymmetricPool is not declared in the public headers",
                 "exported C symbol prInternalHelper is not a function of the public headers",
                 "prAllReduce is declared in the public headers but not exported"]:
    assert expected in out, f"missing: {expected}"
print("planted violations found")
