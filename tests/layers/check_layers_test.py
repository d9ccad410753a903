#!/usr/bin/env python3
"""Tests ci/check_layers.py: the tree passes; a planted upward include, an unresolvable include, a file
outside every layer and malformed rules each fail with a message that names them."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CHECKER = os.path.join(ROOT, "ci", "check_layers.py")


def run(root):
    done = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def copy_tree():
    tmp = tempfile.mkdtemp(prefix="layers-")
    for part in ("lib", "kernels", "sim", "nccl", "docs"):
        shutil.copytree(os.path.join(ROOT, part), os.path.join(tmp, part),
                        ignore=shutil.ignore_patterns("perf", "*.o"))
    return tmp


def plant(tmp, path, line):
    full = os.path.join(tmp, path)
    text = open(full).read()
    open(full, "w").write(line + "\n" + text)


def expect(condition, what, output):
    if not condition:
        print(f"FAILED: {what}\n{output}")
        sys.exit(1)
    print(f"ok: {what}")


code, out = run(ROOT)
expect(code == 0 and "every include along an allowed direction" in out, "the tree itself passes", out)

tmp = copy_tree()
try:
    plant(tmp, "lib/core/status.cc", '#include "api/communicator_impl.h"')
    code, out = run(tmp)
    expect(code == 1 and 'lib/core/status.cc:1: layer core includes "api/communicator_impl.h" of layer api' in out,
           "an upward include (core -> api) fails and is named", out)
finally:
    shutil.rmtree(tmp)

tmp = copy_tree()
try:
    plant(tmp, "sim/reference/reference.cc", '#include "reduce_ops.h"')
    code, out = run(tmp)
    expect(code == 1 and "layer reference includes \"reduce_ops.h\" of layer kernels" in out,
           "the reference may not use the kernels' arithmetic it checks", out)
finally:
    shutil.rmtree(tmp)

tmp = copy_tree()
try:
    plant(tmp, "lib/plan/plan.cc", '#include "plan/no_such_header.h"')
    code, out = run(tmp)
    expect(code == 1 and "names no file of the project" in out, "an include of a missing project file fails", out)
finally:
    shutil.rmtree(tmp)

tmp = copy_tree()
try:
    os.makedirs(os.path.join(tmp, "lib", "newroom"))
    open(os.path.join(tmp, "lib", "newroom", "x.cc"), "w").write("int x;\n")
    code, out = run(tmp)
    # lib/newroom is inside no layer but lib/include..., so it must be reported as unmapped.
    expect(code == 1 and "lib/newroom/x.cc: belongs to no layer" in out, "a file outside every layer fails", out)
finally:
    shutil.rmtree(tmp)

tmp = copy_tree()
try:
    doc = os.path.join(tmp, "docs", "ARCHITECTURE.md")
    text = open(doc).read().replace("| core util plan topology verify\n", "| core util plan topology verfy\n", 1)
    open(doc, "w").write(text)
    code, out = run(tmp)
    expect(code == 2 and "verfy, which is not a layer" in out, "a rule naming an unknown layer is refused", out)
finally:
    shutil.rmtree(tmp)
print("check_layers_test: passed")
