"""ci/hw_build_cache.py: a saved build comes back whole, or is refused by name."""
import importlib.util
import os
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
spec = importlib.util.spec_from_file_location("hw_build_cache", os.path.join(ROOT, "ci", "hw_build_cache.py"))
cache = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cache)


class HwBuildCache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.hw = os.path.join(self.dir.name, "hw")
        self.out = os.path.join(self.dir.name, "out")
        os.makedirs(self.hw)
        # Two "binaries" sharing a large random block, as the stage's binaries share their kernels.
        shared = os.urandom(3 << 20)
        self.contents = {"bench": b"A" * 100 + shared + os.urandom(1000), "tests": shared + b"B" * 5000,
                         "build-id": b"abc\n"}
        for name, data in self.contents.items():
            with open(os.path.join(self.hw, name), "wb") as f:
                f.write(data)
        os.chmod(os.path.join(self.hw, "bench"), 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def restored(self):
        target = os.path.join(self.dir.name, "restored")
        cache.restore(self.out, target, "tree1")
        return target

    def test_round_trip_keeps_every_file_and_its_mode(self):
        manifest = cache.save(self.hw, self.out, "tree1", 1 << 20, 8)
        target = self.restored()
        for name, data in self.contents.items():
            with open(os.path.join(target, name), "rb") as f:
                self.assertEqual(f.read(), data, name)
        self.assertEqual(os.stat(os.path.join(target, "bench")).st_mode & 0o777, 0o755)
        self.assertTrue(all(p["bytes"] <= 1 << 20 for p in manifest["parts"]))

    def test_the_shared_block_is_stored_once(self):
        manifest = cache.save(self.hw, self.out, "tree1", 16 << 20, 8)
        packed = sum(p["bytes"] for p in manifest["parts"])
        self.assertLess(packed, (3 << 20) + (1 << 20), "the second copy of the shared block was not deduplicated")

    def test_too_many_parts_is_refused(self):
        with self.assertRaisesRegex(cache.CacheError, "more than the 2 allowed"):
            cache.save(self.hw, self.out, "tree1", 1 << 20, 2)

    def test_missing_or_empty_build_is_refused(self):
        with self.assertRaisesRegex(cache.CacheError, "not a directory"):
            cache.save(os.path.join(self.dir.name, "none"), self.out, "", 1 << 20, 8)
        empty = os.path.join(self.dir.name, "empty")
        os.makedirs(empty)
        with self.assertRaisesRegex(cache.CacheError, "holds no files"):
            cache.save(empty, self.out, "", 1 << 20, 8)

    def test_damaged_part_is_refused_and_the_old_build_stays(self):
        manifest = cache.save(self.hw, self.out, "tree1", 1 << 20, 8)
        target = os.path.join(self.dir.name, "restored")
        os.makedirs(target)
        with open(os.path.join(target, "old"), "w") as f:
            f.write("kept")
        part = os.path.join(self.out, manifest["parts"][1]["name"])
        with open(part, "r+b") as f:
            f.write(b"\0\0\0\0")
        with self.assertRaisesRegex(cache.CacheError, manifest["parts"][1]["name"] + " does not match"):
            cache.restore(self.out, target, None)
        self.assertTrue(os.path.exists(os.path.join(target, "old")))

    def test_missing_part_is_refused_by_name(self):
        manifest = cache.save(self.hw, self.out, "tree1", 1 << 20, 8)
        os.remove(os.path.join(self.out, manifest["parts"][0]["name"]))
        with self.assertRaisesRegex(cache.CacheError, "part hw-build.xz.000 is missing"):
            cache.restore(self.out, os.path.join(self.dir.name, "restored"), None)

    def test_another_tree_is_refused(self):
        cache.save(self.hw, self.out, "tree1", 1 << 20, 8)
        with self.assertRaisesRegex(cache.CacheError, "built from 'tree1', not 'tree2'"):
            cache.restore(self.out, os.path.join(self.dir.name, "restored"), "tree2")

    def test_no_manifest_is_refused(self):
        with self.assertRaisesRegex(cache.CacheError, "no readable manifest"):
            cache.restore(self.out, os.path.join(self.dir.name, "restored"), None)

    def test_command_line_exit_codes(self):
        self.assertEqual(cache.main(["save", self.hw, self.out, "--tag", "t", "--part-bytes", str(1 << 20)]), 0)
        self.assertEqual(cache.main(["restore", self.out, os.path.join(self.dir.name, "r"), "--expect-tag", "t"]), 0)
        self.assertEqual(cache.main(["restore", self.out, os.path.join(self.dir.name, "r"), "--expect-tag", "u"]), 2)
        self.assertEqual(cache.main(["save", self.hw, self.out, "--part-bytes", "0"]), 2)


if __name__ == "__main__":
    unittest.main()
