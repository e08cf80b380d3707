# SPDX-License-Identifier: GPL-2.0
"""Tests of the buddy package: layouts against the C headers and buffer
handling always; allocations, reads, writes and stats when a device is
there (/dev/buddy with buddy.ko, or $BUDDY_DEVICE such as the in-process
backend, inproc:device_mb=N,max_ratio=R), else SKIP saying so."""
import ctypes
import errno
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import buddy
from buddy import _lib

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))

try:
    import numpy as np
except ImportError:
    np = None
try:
    import torch
except ImportError:
    torch = None


def _device_or_reason():
    try:
        buddy.Device().close()
        return None
    except ImportError as e:
        return f"no libbuddy: {e}"
    except buddy.BuddyError as e:
        return (f"no device: {e} (load buddy.ko, or set "
                f"BUDDY_DEVICE=inproc:device_mb=N,max_ratio=R)")


NO_DEVICE = _device_or_reason()


class Layout(unittest.TestCase):
    """The ctypes structs have the C structs' size and field offsets."""

    def test_structs_match_the_uapi_header(self):
        cc = shutil.which(os.environ.get("CC", "cc"))
        if not cc:
            self.skipTest("no C compiler to read the header's layout")
        structs = {"buddy_info": _lib.BuddyInfo,
                   "buddy_counters": _lib.BuddyCounters,
                   "buddy_alloc_stat": _lib.BuddyAllocStat}
        lines = ["#include <stdio.h>", "#include <stddef.h>",
                 '#include "uapi/linux/buddy.h"', "int main(void) {"]
        for cname, py in structs.items():
            lines.append(f'printf("{cname} %zu\\n", sizeof(struct {cname}));')
            for f, _ in py._fields_:
                lines.append(f'printf("{cname}.{f} %zu\\n", '
                             f'offsetof(struct {cname}, {f}));')
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as d:
            src, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
            with open(src, "w") as f:
                f.write("\n".join(lines))
            subprocess.run([cc, "-I", ROOT, "-o", exe, src], check=True)
            out = subprocess.run([exe], check=True, capture_output=True,
                                 text=True).stdout
        want = dict(line.split() for line in out.splitlines())
        for cname, py in structs.items():
            self.assertEqual(int(want[cname]), ctypes.sizeof(py), cname)
            for f, _ in py._fields_:
                self.assertEqual(int(want[f"{cname}.{f}"]),
                                 getattr(py, f).offset, f"{cname}.{f}")


class Buffers(unittest.TestCase):
    """buffer_pointer() gives the object's own memory, never a copy."""

    @unittest.skipIf(np is None, "no numpy for /usr/bin/python3 (python3-numpy)")
    def test_numpy_in_place(self):
        a = np.arange(100, dtype=np.float32)
        ptr, n, _ = buddy.buffer_pointer(a, writable=True)
        self.assertEqual((a.ctypes.data, 400), (ptr, n))
        ctypes.memmove(ptr, b"\x00\x00\x80\x3f", 4)   # 1.0f at element 0
        self.assertEqual(1.0, a[0])

    @unittest.skipIf(np is None, "no numpy for /usr/bin/python3 (python3-numpy)")
    def test_numpy_refusals(self):
        a = np.zeros((10, 10), dtype=np.float32)
        with self.assertRaisesRegex(ValueError, "not C-contiguous"):
            buddy.buffer_pointer(a.T, writable=False)
        a.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            buddy.buffer_pointer(a, writable=True)
        self.assertEqual(a.ctypes.data,
                         buddy.buffer_pointer(a, writable=False)[0])

    @unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
    def test_torch_in_place_and_refusals(self):
        t = torch.zeros(4, 8)
        ptr, n, _ = buddy.buffer_pointer(t, writable=True)
        self.assertEqual((t.data_ptr(), 128), (ptr, n))
        ctypes.memmove(ptr + 4, b"\x00\x00\x00\x40", 4)   # 2.0f at [0, 1]
        self.assertEqual(2.0, t[0, 1].item())
        with self.assertRaisesRegex(ValueError, "not contiguous"):
            buddy.buffer_pointer(t.t(), writable=False)

    def test_plain_buffers(self):
        b = bytearray(b"abcd")
        ptr, n, keep = buddy.buffer_pointer(b, writable=True)
        self.assertEqual(4, n)
        ctypes.memmove(ptr, b"xy", 2)
        self.assertEqual(b"xycd", b)      # the bytearray itself changed
        del keep
        ptr, n, _ = buddy.buffer_pointer(b"hello", writable=False)
        self.assertEqual(b"hello", ctypes.string_at(ptr, n))
        with self.assertRaisesRegex(ValueError, "read-only"):
            buddy.buffer_pointer(b"hello", writable=True)
        with self.assertRaisesRegex(TypeError, "int has no buffer"):
            buddy.buffer_pointer(5, writable=False)


class Errors(unittest.TestCase):
    def test_open_names_the_path_and_errno(self):
        with self.assertRaises(buddy.BuddyError) as cm:
            buddy.Device("/nonexistent/buddy")
        self.assertEqual(errno.ENOENT, cm.exception.errno)
        self.assertIn("/nonexistent/buddy", str(cm.exception))

    @staticmethod
    def without_libbuddy(code):
        env = dict(os.environ, BUDDY_LIBBUDDY="/nonexistent/libbuddy.so.1",
                   PYTHONPATH=os.path.join(ROOT, "python"))
        return subprocess.run([sys.executable, "-c", code], env=env,
                              capture_output=True, text=True)

    def test_missing_library_is_named(self):
        r = self.without_libbuddy("import buddy; buddy.Device('inproc:')")
        self.assertNotEqual(0, r.returncode)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("/nonexistent/libbuddy.so.1", r.stderr)

    def test_codec_only_modules_import_without_libbuddy(self):
        # a GPU node has no liburing: the sizing library alone must do
        r = self.without_libbuddy(
            "import buddy._codec as c; print(c.Sizer(1).threads)")
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertEqual("1", r.stdout.strip())

    def test_library_from_the_tree(self):
        if os.environ.get("BUDDY_LIBBUDDY"):
            self.skipTest("BUDDY_LIBBUDDY set")
        self.assertEqual(os.path.join(ROOT, "build", "lib", "libbuddy.so.1"),
                         _lib.path)


@unittest.skipIf(NO_DEVICE, NO_DEVICE)
class OnDevice(unittest.TestCase):
    def setUp(self):
        self.dev = buddy.Device()

    def tearDown(self):
        self.dev.close()

    @unittest.skipIf(np is None, "no numpy for /usr/bin/python3 (python3-numpy)")
    def test_numpy_roundtrip_and_stats(self):
        x = np.random.default_rng(1).standard_normal(1 << 16).astype(np.float32)
        x[x < 0] = 0                       # a ReLU output
        before = self.dev.info()
        with self.dev.alloc(x.nbytes, target="2x", codec="zvc",
                            label="py-relu") as a:
            self.assertEqual(x.nbytes, a.write(x))
            y = np.empty_like(x)
            self.assertEqual(x.nbytes, a.read_into(y))
            self.assertTrue(np.array_equal(x, y))
            st = a.stat()
            self.assertEqual(a.id, st["id"])
            self.assertEqual(x.nbytes, st["size"])
            self.assertEqual("py-relu", st["label"])
            self.assertEqual(st["nr_entries"], sum(st["codes"].values()))
            self.assertEqual(x.nbytes // 128, st["counters"]["entry_writes"])
            info = self.dev.info()
            self.assertEqual(before["nr_allocs"] + 1, info["nr_allocs"])
            # a part, at an offset
            part = np.empty(1000, dtype=np.float32)
            a.read_into(part, offset=4 * 5000)
            self.assertTrue(np.array_equal(x[5000:6000], part))
        self.assertEqual(before["nr_allocs"], self.dev.info()["nr_allocs"])

    @unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
    def test_torch_roundtrip(self):
        g = torch.Generator().manual_seed(2)
        t = torch.relu(torch.randn(64, 256, generator=g))
        with self.dev.alloc(t.numel() * 4, codec="bpc") as a:
            a.write(t)
            u = torch.empty_like(t)
            a.read_into(u)
            self.assertTrue(torch.equal(t, u))

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "unknown target '3x'"):
            self.dev.alloc(4096, target="3x")
        with self.assertRaisesRegex(ValueError, "unknown codec 'lzma'"):
            self.dev.alloc(4096, codec="lzma")
        with self.dev.alloc(4096) as a:
            with self.assertRaisesRegex(ValueError, "pass its end"):
                a.write(bytes(4096), offset=1)
            with self.assertRaisesRegex(ValueError, "pass its end"):
                a.read_into(bytearray(8), offset=4092)


class Codecs(unittest.TestCase):
    """buddy.Codec is libbuddy's buddy_tcodec_*: the tcodec/gist codecs,
    not a Python copy of them."""

    def data(self, n=3000):
        import random
        rnd = random.Random(14)
        vals = [0.0 if rnd.random() < 0.6 else rnd.uniform(-3, 3)
                for _ in range(n)]
        import array
        return array.array("f", vals)

    def test_lossless_codecs_round_trip(self):
        x = self.data()
        for name in ("zvc", "rle", "csr", "lz4", "zlib", "entry-bpc"):
            with self.subTest(codec=name):
                c = buddy.Codec(name)
                self.assertTrue(c.lossless)
                enc = c.encode(x)
                self.assertLessEqual(len(enc), c.bound(len(x) * 4))
                y = type(x)("f", bytes(len(x) * 4))
                c.decode(enc, y)
                self.assertEqual(x.tobytes(), y.tobytes())

    def test_names_come_from_the_library(self):
        names = buddy.codec_names()
        self.assertEqual(_lib.buddy_tcodec_count(), len(names))
        for n in ("zvc", "rle", "zlib", "lz4", "csr", "binarize", "dpr8"):
            self.assertIn(n, names)

    def test_lossy_and_mask_codecs_are_opt_in(self):
        for name, kw in (("dpr16", "allow_lossy"), ("binarize", "allow_mask")):
            with self.subTest(codec=name):
                with self.assertRaisesRegex(ValueError, "not allowed"):
                    buddy.Codec(name)
                c = buddy.Codec(name, **{kw: True})
                self.assertFalse(c.lossless)
        with self.assertRaisesRegex(ValueError, "'nope': no such codec"):
            buddy.Codec("nope")

    def test_binarize_keeps_the_sign_test(self):
        x = self.data(100)
        c = buddy.Codec("binarize", allow_mask=True)
        enc = c.encode(x)
        self.assertEqual(13, len(enc))
        y = type(x)("f", bytes(400))
        c.decode(enc, y)
        self.assertEqual([1.0 if v > 0 else 0.0 for v in x], list(y))

    def test_bad_streams_are_refused(self):
        x = self.data()
        c = buddy.Codec("zvc")
        enc = bytes(c.encode(x))
        y = type(x)("f", bytes(len(x) * 4))
        for bad in (enc[:-1], enc + b"\0"):
            with self.assertRaises(OSError) as cm:
                c.decode(bad, y)
            self.assertEqual(errno.EINVAL, cm.exception.errno)
            self.assertIn("codec zvc", str(cm.exception))
        with self.assertRaises(OSError):
            buddy.Codec("csr").encode(b"abc")      # not whole words
        self.assertIsNone(_lib.buddy_tcodec_name(-1))
        self.assertEqual(-errno.EINVAL, _lib.buddy_tcodec_flags(99))
        self.assertEqual(-errno.EINVAL,
                         _lib.buddy_tcodec_find(b"zvc", 1 << 7))


if __name__ == "__main__":
    unittest.main()
