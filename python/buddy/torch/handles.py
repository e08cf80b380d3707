# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.handles - what autograd holds for a saved CPU activation:
the tensor itself when kept (_Kept), its buddy allocation when offloaded
(_Saved), and a prefetch of it (_Fetch)."""
import threading
import weakref

import torch


class _Kept:
    """A saved activation left in memory, counted while autograd holds it."""
    __slots__ = ("t", "stats", "nbytes", "__weakref__")

    def __init__(self, t, stats):
        self.t, self.stats = t, stats
        self.nbytes = t.numel() * t.element_size()
        stats.resident(self.nbytes)

    def __del__(self):
        self.stats.resident(-self.nbytes)


class _Saved:
    """A saved activation in a buddy allocation; freed with the handle.
    codec: None (the device's codec) or a buddy.Codec the bytes were
    encoded with; stored: bytes in the allocation; owner: a weak reference
    to the offload, told when the handle goes."""
    __slots__ = ("alloc", "shape", "dtype", "nbytes", "stats", "codec",
                 "stored", "seq", "fetch", "last", "owner", "__weakref__")

    def __init__(self, alloc, t, stats, codec, stored, seq, owner):
        self.alloc, self.shape, self.dtype = alloc, t.shape, t.dtype
        self.nbytes, self.stats = t.numel() * t.element_size(), stats
        self.codec, self.stored, self.seq = codec, stored, seq
        self.fetch = self.last = None
        self.owner = owner
        stats.device(self.nbytes)

    def buffers(self):
        """(out, dst): the tensor to return and where the allocation's
        bytes go (out itself, or a buffer for the encoded bytes)."""
        out = torch.empty(self.shape, dtype=self.dtype)
        return out, (out if self.codec is None else bytearray(self.stored))

    def finish(self, out, dst):
        """@out once @dst holds the allocation's bytes: decoded, and
        counted resident until it is freed."""
        if self.codec is not None:
            self.codec.decode(dst, out)
        self.stats.resident(self.nbytes)
        weakref.finalize(out, self.stats.resident, -self.nbytes)
        return out

    def read(self):
        """The tensor back: read the allocation (and decode)."""
        out, dst = self.buffers()
        self.alloc.read_into(dst)
        return self.finish(out, dst)

    def __del__(self):
        st = self.stats
        try:
            c = self.alloc.stat()["counters"]
            st.device_sector_bytes += 32 * (c["device_sectors_read"] +
                                            c["device_sectors_written"])
            st.buddy_sector_bytes += 32 * (c["buddy_sectors_read"] +
                                           c["buddy_sectors_written"])
        except (AttributeError, KeyError, TypeError, OSError):
            pass                       # a test double without counters
        self.alloc.close()
        st.device(-self.nbytes)
        owner = self.owner()
        if owner is not None:
            owner._handle_gone()


class _Fetch:
    """A prefetch: done when the worker has read the handle."""
    __slots__ = ("event", "tensor", "error")

    def __init__(self):
        self.event, self.tensor, self.error = threading.Event(), None, None
