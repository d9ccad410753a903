#!/usr/bin/env python3
"""Lists the GPU code inside built binaries and checks that the intended architectures are there.

CUDA: every object's .nv_fatbin section (extracted with objcopy, parsed here: the fat binary's header
and each entry's kind and architecture), so no CUDA tool beyond the compiler is needed. An entry is SASS
("sm_90 code": it runs as built on that GPU) or PTX ("compute_90 PTX": the driver compiles it, for that
GPU and newer). HIP: clang-offload-bundler --list on each object names the offload targets (gfx90a, ...).

Usage:
  gpu_code.py list FILE...                   one line per code object found
  gpu_code.py check cuda ARCHS FILE...       fails unless every object with GPU code has SASS for every
                                             arch in ARCHS (e.g. "90" or "80;90") and PTX for the highest
  gpu_code.py check hip ARCHS FILE...        fails unless every object bundles every gfx target in ARCHS
FILE is an object, a static archive or a shared library. Exit: 0 ok, 1 missing code, 2 bad usage or input.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
ENTRY_ARCH_OFFSET = 28  # the entry header's architecture field (e.g. 90 for sm_90)


class BadInput(Exception):
    pass


def objects_of(path, workdir):
    """The object files `path` stands for: itself, or an archive's members (extracted into workdir)."""
    if not os.path.isfile(path):
        raise BadInput(f"{path}: no such file")
    with open(path, "rb") as f:
        head = f.read(8)
    if head == b"!<arch>\n":
        target = os.path.join(workdir, os.path.basename(path) + ".d")
        os.makedirs(target, exist_ok=True)
        subprocess.run(["ar", "x", os.path.abspath(path)], cwd=target, check=True)
        return sorted(os.path.join(target, name) for name in os.listdir(target))
    return [path]


def fatbin_entries(data):
    """(kind, arch) of every entry of every fat binary concatenated in `data`."""
    entries, offset = [], 0
    while offset + 16 <= len(data):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", data, offset)
        if magic != FATBIN_MAGIC:
            break  # padding after the last fat binary
        position, end = offset + header_size, offset + header_size + fat_size
        while position + ENTRY_ARCH_OFFSET + 4 <= end:
            kind, _flags, entry_header, payload = struct.unpack_from("<HHIQ", data, position)
            (arch,) = struct.unpack_from("<I", data, position + ENTRY_ARCH_OFFSET)
            if entry_header == 0:
                raise BadInput("fat binary entry with an empty header")
            entries.append((kind, arch))
            position += entry_header + payload
        offset = (end + 7) // 8 * 8 if end > offset else len(data)
    return entries


def cuda_code(obj, workdir):
    section = os.path.join(workdir, os.path.basename(obj) + ".fatbin")
    done = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", obj, section],
                          capture_output=True, text=True)
    if done.returncode != 0 or not os.path.exists(section) or os.path.getsize(section) == 0:
        return []  # no device code in this object
    with open(section, "rb") as f:
        entries = fatbin_entries(f.read())
    return [("sm_%d code" % arch) if kind == KIND_ELF else ("compute_%d PTX" % arch) for kind, arch in entries
            if kind in (KIND_ELF, KIND_PTX)]


def hip_code(obj):
    bundler = shutil.which("clang-offload-bundler") or next(
        (p for p in ("/usr/lib/llvm-15/bin/clang-offload-bundler", "/usr/lib/llvm-14/bin/clang-offload-bundler")
         if os.path.exists(p)), None)
    if bundler is None:
        raise BadInput("clang-offload-bundler not found (install Debian's clang)")
    # hipcc -c makes a host object whose .hip_fatbin section holds the offload bundle (one code object
    # per --offload-arch); the bundler lists the bundle, not the host object around it.
    with tempfile.TemporaryDirectory() as workdir:
        bundle = os.path.join(workdir, "hip_fatbin.bin")
        extracted = subprocess.run(["objcopy", "-O", "binary", "--only-section=.hip_fatbin", obj, bundle],
                                   capture_output=True, text=True)
        if extracted.returncode != 0 or not os.path.exists(bundle) or os.path.getsize(bundle) == 0:
            return []  # no device code: a host-only object
        done = subprocess.run([bundler, "--list", "--type=o", f"--input={bundle}"], capture_output=True, text=True)
    if done.returncode != 0:
        return []
    return [line.split("--")[-1] + " code" for line in done.stdout.split() if "amdgcn" in line]


def listing(paths):
    with tempfile.TemporaryDirectory() as workdir:
        result = []
        for path in paths:
            for obj in objects_of(path, workdir):
                code = cuda_code(obj, workdir)
                if not code and obj.endswith(".o") and b".hip_fatbin" in open(obj, "rb").read():
                    code = hip_code(obj)
                result.append((os.path.basename(obj), code))
        return result


def check(platform, archs, paths):
    wanted = [a.strip() for a in archs.replace(",", ";").split(";") if a.strip()]
    if not wanted:
        raise BadInput("no architectures to check")
    problems, seen = [], 0
    for name, code in listing(paths):
        if not code:
            continue
        seen += 1
        if platform == "cuda":
            numbers = sorted(int(a) for a in wanted)
            need = [f"sm_{a} code" for a in numbers] + [f"compute_{numbers[-1]} PTX"]
        else:
            need = [f"{a} code" for a in wanted]
        missing = [n for n in need if n not in code]
        print(f"{name}: {', '.join(sorted(set(code)))}")
        if missing:
            problems.append(f"{name} lacks {', '.join(missing)} (it has {', '.join(sorted(set(code)))})")
    if seen == 0:
        problems.append("no GPU code found in " + " ".join(paths))
    for problem in problems:
        print(f"gpu-code: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    try:
        if len(argv) >= 3 and argv[1] == "list":
            for name, code in listing(argv[2:]):
                print(f"{name}: {', '.join(code) if code else 'no GPU code'}")
            return 0
        if len(argv) >= 5 and argv[1] == "check" and argv[2] in ("cuda", "hip"):
            return check(argv[2], argv[3], argv[4:])
    except (BadInput, subprocess.CalledProcessError, struct.error) as e:
        print(f"gpu-code: {e}", file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
