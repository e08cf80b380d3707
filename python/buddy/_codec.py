# SPDX-License-Identifier: GPL-2.0 OR MIT
"""ctypes bindings of libbuddycodec (tools/codeclib/buddycodec.h): core's
codecs sizing buffers on all cores, with no dependency beyond glibc.

The library is found, in order, at $BUDDY_LIBBUDDYCODEC, in the source
tree's build/lib/ (make codeclib), and by the dynamic loader as
libbuddycodec.so.1.  It does not need libbuddy: this module imports on a
machine that has neither liburing nor liblz4 (a GPU node).
"""
import ctypes
import os

from . import _lib_path

c_u64 = ctypes.c_uint64

ABI = 1                      # BUDDY_SIZING_ABI
NC = 4                       # BUDDY_SIZING_NC
CODE_NR = 6                  # BUDDY_CODE_NR
ALL = (1 << NC) - 1          # BUDDY_SIZING_ALL
CODECS = ("bpc", "zvc", "bdi", "fpc")
ENTRY = 128


class SizeStat(ctypes.Structure):
    """struct buddy_size_stat"""
    _fields_ = [
        ("entries", c_u64),
        ("hist", (c_u64 * CODE_NR) * NC),
        ("fig3_bytes", c_u64 * NC),
    ]


def _load():
    lib, path = _lib_path.load("BUDDY_LIBBUDDYCODEC", "libbuddycodec.so.1",
                               "libbuddycodec", "make codeclib")
    for name, res, args in (
            ("buddy_sizing_abi", ctypes.c_uint, []),
            ("buddy_sizing_codec_name", ctypes.c_char_p, [ctypes.c_uint]),
            ("buddy_sizing_new", ctypes.c_void_p, [ctypes.c_uint]),
            ("buddy_sizing_free", None, [ctypes.c_void_p]),
            ("buddy_sizing_threads", ctypes.c_uint, [ctypes.c_void_p]),
            ("buddy_sizing_ranges", ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(c_u64),
              ctypes.c_size_t, ctypes.c_uint32, ctypes.POINTER(SizeStat)]),
            ("buddy_sizing_entries", ctypes.c_int,
             [ctypes.c_void_p, ctypes.c_void_p, c_u64, ctypes.c_uint,
              ctypes.c_void_p, ctypes.c_void_p])):
        f = getattr(lib, name, None)
        if f is None:
            raise ImportError(f"buddy: {path} lacks {name}")
        f.restype = res
        f.argtypes = args
    if lib.buddy_sizing_abi() != ABI:
        raise ImportError(f"buddy: {path} has sizing ABI "
                          f"{lib.buddy_sizing_abi()}, this module {ABI}")
    return lib, path


lib, path = _load()


class Sizer:
    """A libbuddycodec context: @threads threads (0: one per CPU this
    process may run on).  Not usable in a child after fork(): make one
    per process.  ctypes releases the GIL during each call, so Python
    threads (a copy in flight) run while it sizes."""

    def __init__(self, threads=0):
        self._s = lib.buddy_sizing_new(threads)
        if not self._s:
            err = ctypes.get_errno() or 12
            raise OSError(err, f"buddy_sizing_new({threads}): "
                          f"{os.strerror(err)}")
        self.pid = os.getpid()
        self.threads = lib.buddy_sizing_threads(self._s)

    def close(self):
        if self._s and self.pid == os.getpid():
            lib.buddy_sizing_free(self._s)
        self._s = None

    def __del__(self):
        self.close()

    def ranges(self, address, lens, codecs=ALL):
        """Size the consecutive ranges of @lens bytes (multiples of 128)
        starting at the raw @address: a list of SizeStat, one per range."""
        n = len(lens)
        arr = (c_u64 * max(n, 1))(*lens)
        out = (SizeStat * max(n, 1))()
        ret = lib.buddy_sizing_ranges(self._s, address or None, arr, n,
                                      codecs, out)
        if ret:
            raise OSError(-ret, f"buddy_sizing_ranges: {os.strerror(-ret)}")
        return list(out)[:n]

    def entries(self, address, length, codec=0):
        """(codes, bits) of every entry of @length bytes at @address, by
        codec index @codec: two lists of ints."""
        n = length // ENTRY
        codes = (ctypes.c_uint8 * max(n, 1))()
        bits = (ctypes.c_uint16 * max(n, 1))()
        self.entries_into(address, length, codec, ctypes.addressof(codes),
                          ctypes.addressof(bits))
        return list(codes)[:n], list(bits)[:n]

    def entries_into(self, address, length, codec, codes, bits):
        """entries() into the caller's memory: @codes (length / 128
        bytes) and @bits (length / 128 uint16), raw addresses or 0."""
        ret = lib.buddy_sizing_entries(self._s, address or None, length,
                                       codec, codes or None, bits or None)
        if ret:
            raise OSError(-ret, f"buddy_sizing_entries: {os.strerror(-ret)}")


def stat_dict(st):
    """A SizeStat as plain numbers: entries, hist (NC rows of CODE_NR),
    fig3 (NC)."""
    return {"entries": st.entries,
            "hist": [list(st.hist[c]) for c in range(NC)],
            "fig3": list(st.fig3_bytes)}
