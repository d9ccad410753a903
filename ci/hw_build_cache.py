#!/usr/bin/env python3
"""The hardware stage's built binaries (.hw/) carried from one GPU machine to the next.

A GPU machine that goes back loses its build, and the next one spends minutes building the same tree
again. `save` writes .hw/ as a few compressed parts small enough to come back from the machine (each
under --part-bytes, at most --max-parts of them, and a manifest); `restore` puts them back as .hw/ on the
next machine, after checking every part and every file against the manifest, so a stale or damaged copy
is refused by name instead of run.

Every binary of the stage links the same kernels, so the compressor's window spans the whole archive
(LZMA2 with a dictionary as large as the input, up to 192 MiB): the copies after the first cost little.

    ci/hw_build_cache.py save .hw OUT [--tag TREE] [--part-bytes N] [--max-parts N]
    ci/hw_build_cache.py restore DIR .hw [--expect-tag TREE]
"""
import argparse
import hashlib
import io
import json
import lzma
import os
import shutil
import sys
import tarfile
import tempfile

MANIFEST = "hw-build.manifest.json"
PART_PREFIX = "hw-build.xz."
MAX_DICT_BYTES = 192 << 20


class CacheError(Exception):
    """What is wrong with a cache, named, so the caller builds instead of running a damaged copy."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(root: str) -> list[str]:
    names = []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if os.path.isfile(path) and not os.path.islink(path):
            names.append(entry)
    return names


def save(source: str, out: str, tag: str, part_bytes: int, max_parts: int) -> dict:
    if not os.path.isdir(source):
        raise CacheError(f"no build to save: {source} is not a directory")
    names = _files(source)
    if not names:
        raise CacheError(f"no build to save: {source} holds no files")
    files, total = {}, 0
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name in names:
            path = os.path.join(source, name)
            with open(path, "rb") as f:
                data = f.read()
            files[name] = {"sha256": _sha256(data), "bytes": len(data), "mode": os.stat(path).st_mode & 0o777}
            total += len(data)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), files[name]["mode"]
            tar.addfile(info, io.BytesIO(data))
    dict_bytes = min(MAX_DICT_BYTES, max(1 << 20, total))
    filters = [{"id": lzma.FILTER_LZMA2, "preset": 6, "dict_size": dict_bytes}]
    packed = lzma.compress(archive.getvalue(), format=lzma.FORMAT_XZ, filters=filters)
    count = (len(packed) + part_bytes - 1) // part_bytes
    if count > max_parts:
        raise CacheError(f"the build compresses to {len(packed)} bytes: {count} parts of {part_bytes} bytes, "
                         f"more than the {max_parts} allowed")
    os.makedirs(out, exist_ok=True)
    parts = []
    for index in range(count):
        chunk = packed[index * part_bytes:(index + 1) * part_bytes]
        name = f"{PART_PREFIX}{index:03d}"
        with open(os.path.join(out, name), "wb") as f:
            f.write(chunk)
        parts.append({"name": name, "sha256": _sha256(chunk), "bytes": len(chunk)})
    manifest = {"format": 1, "tag": tag, "files": files, "parts": parts, "unpacked_bytes": total}
    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def restore(source: str, target: str, expect_tag: str | None) -> dict:
    manifest_path = os.path.join(source, MANIFEST)
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as error:
        raise CacheError(f"no readable manifest {manifest_path}: {error}") from error
    if manifest.get("format") != 1:
        raise CacheError(f"{manifest_path}: format {manifest.get('format')!r}, not 1")
    if expect_tag is not None and manifest.get("tag") != expect_tag:
        raise CacheError(f"the cache was built from {manifest.get('tag')!r}, not {expect_tag!r}")
    packed = bytearray()
    for part in manifest["parts"]:
        path = os.path.join(source, part["name"])
        try:
            with open(path, "rb") as f:
                chunk = f.read()
        except OSError as error:
            raise CacheError(f"part {part['name']} is missing: {error}") from error
        if _sha256(chunk) != part["sha256"]:
            raise CacheError(f"part {part['name']} does not match the manifest ({len(chunk)} bytes, "
                             f"{part['bytes']} expected)")
        packed += chunk
    try:
        archive = lzma.decompress(bytes(packed), format=lzma.FORMAT_XZ)
    except lzma.LZMAError as error:
        raise CacheError(f"the parts do not decompress: {error}") from error
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".hw-restore-", dir=parent)
    os.chmod(staging, 0o755)  # as a directory the build makes, not mkdtemp's owner-only mode
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
            members = tar.getmembers()
            names = sorted(m.name for m in members)
            if names != sorted(manifest["files"]):
                raise CacheError(f"the archive holds {names}, the manifest {sorted(manifest['files'])}")
            for member in members:
                if not member.isfile() or os.path.basename(member.name) != member.name:
                    raise CacheError(f"the archive holds {member.name!r}, which is no plain file name")
                data = tar.extractfile(member).read()
                expected = manifest["files"][member.name]
                if _sha256(data) != expected["sha256"]:
                    raise CacheError(f"{member.name} does not match the manifest")
                path = os.path.join(staging, member.name)
                with open(path, "wb") as f:
                    f.write(data)
                os.chmod(path, expected["mode"])
        # Only a whole, checked copy replaces what was there.
        shutil.rmtree(target, ignore_errors=True)
        os.rename(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return manifest


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    saving = verbs.add_parser("save", help="write .hw/ as compressed parts and a manifest")
    saving.add_argument("source")
    saving.add_argument("out")
    saving.add_argument("--tag", default="", help="what the build was made from (a commit)")
    saving.add_argument("--part-bytes", type=int, default=15 << 20)
    saving.add_argument("--max-parts", type=int, default=6)
    restoring = verbs.add_parser("restore", help="put checked parts back as .hw/")
    restoring.add_argument("source")
    restoring.add_argument("target")
    restoring.add_argument("--expect-tag", default=None)
    args = parser.parse_args(argv)
    try:
        if args.verb == "save":
            if args.part_bytes < 1 or args.max_parts < 1:
                raise CacheError("--part-bytes and --max-parts must be positive")
            manifest = save(args.source, args.out, args.tag, args.part_bytes, args.max_parts)
            packed = sum(p["bytes"] for p in manifest["parts"])
            print(f"hw_build_cache: saved {len(manifest['files'])} files, {manifest['unpacked_bytes']} bytes, as "
                  f"{len(manifest['parts'])} parts of {packed} bytes in {args.out}")
        else:
            manifest = restore(args.source, args.target, args.expect_tag)
            print(f"hw_build_cache: restored {len(manifest['files'])} files of {manifest['tag'] or 'an untagged build'} "
                  f"into {args.target}")
    except CacheError as error:
        print(f"hw_build_cache: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
