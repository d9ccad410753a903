#!/usr/bin/env python3
"""Checks that every #include in lib/, kernels/, sim/ and nccl/ points along an allowed direction.

The rules are not kept here: they are the ```layers block of docs/ARCHITECTURE.md, one line per layer,

    layer-name | the paths it holds (folders or files, comma separated) | the layers it may include

A file belongs to the layer whose path is the longest prefix of its own; a layer may always include
itself. An include is resolved the way the build resolves it (the including file's folder, then the
include folders below); an include of a project file from a layer not listed is a violation, and so is
a quoted include that resolves to no file, or a source file that belongs to no layer.

Usage: check_layers.py [--root DIR]   exit 0 when clean, 1 with one line per violation, 2 on bad rules.
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".h", ".cu", ".cuh")
CHECKED_TREES = ("lib", "kernels", "sim", "nccl")
# Where the build looks for quoted includes, after the including file's own folder.
# The project's root last: the NCCL library's files name each other "nccl/...".
INCLUDE_ROOTS = ("lib", "lib/include", "kernels", "sim", "sim/include", "sim/campaign", ".")
INCLUDE_LINE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


class RulesError(Exception):
    pass


def read_rules(root):
    """The layers block of docs/ARCHITECTURE.md as {name: (paths, allowed names)}."""
    doc = os.path.join(root, "docs", "ARCHITECTURE.md")
    try:
        text = open(doc, encoding="utf-8").read()
    except OSError as e:
        raise RulesError(f"cannot read {doc}: {e}")
    match = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not match:
        raise RulesError(f"{doc} has no ```layers block")
    layers = {}
    for number, line in enumerate(match.group(1).splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("|")]
        if len(fields) != 3 or not fields[0] or not fields[1]:
            raise RulesError(f"layers block line {number}: expected 'name | paths | allowed', got {line!r}")
        name, paths, allowed = fields
        if name in layers:
            raise RulesError(f"layers block line {number}: layer {name} named twice")
        layers[name] = ([p.strip().rstrip("/") for p in paths.split(",") if p.strip()], allowed.split())
    for name, (_, allowed) in layers.items():
        for other in allowed:
            if other not in layers:
                raise RulesError(f"layer {name} may include {other}, which is not a layer")
    return layers


def layer_of(path, layers):
    """The layer holding `path` (longest matching prefix), or None."""
    best, best_len = None, -1
    for name, (paths, _) in layers.items():
        for prefix in paths:
            if (path == prefix or path.startswith(prefix + "/")) and len(prefix) > best_len:
                best, best_len = name, len(prefix)
    return best


def resolve(root, including, target):
    """The project path `target` names from `including`, or None when it names no project file."""
    candidates = [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(r, target) for r in INCLUDE_ROOTS]
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
        # A header generated at configure time (peerreduce/version.h) lives where its template does.
        if os.path.isfile(os.path.join(root, candidate + ".in")):
            return candidate
    return None


def source_files(root):
    for tree in CHECKED_TREES:
        for folder, _, names in os.walk(os.path.join(root, tree)):
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, name), root)


def check(root):
    layers = read_rules(root)
    problems = []
    files = sorted(source_files(root))
    for path in files:
        mine = layer_of(path, layers)
        if mine is None:
            problems.append(f"{path}: belongs to no layer; add its folder to the layers block of docs/ARCHITECTURE.md")
            continue
        allowed = set(layers[mine][1]) | {mine}
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE_LINE.match(line)
                if not match:
                    continue
                target = resolve(root, path, match.group(1))
                if target is None:
                    problems.append(f'{path}:{number}: #include "{match.group(1)}" names no file of the project')
                    continue
                theirs = layer_of(target, layers)
                if theirs is None:
                    continue  # outside the checked trees (none today); nothing to order against
                if theirs not in allowed:
                    problems.append(f'{path}:{number}: layer {mine} includes "{match.group(1)}" of layer {theirs}; '
                                    f"{mine} may include only {' '.join(sorted(allowed))}")
    return files, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    try:
        files, problems = check(os.path.abspath(args.root))
    except RulesError as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} include(s) against the layers of docs/ARCHITECTURE.md", file=sys.stderr)
        return 1
    print(f"check-layers: {len(files)} files, every include along an allowed direction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
