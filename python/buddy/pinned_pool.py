# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.pinned_pool - host memory for the copies of offloaded tensors:
large slabs, carved into regions and reused from step to step.

Each slab comes from the caller's host_empty() (pinned memory from
PyTorch's caching host allocator on a GPU).  Slabs are powers of two, at
least slab_bytes, so that allocator's power-of-two rounding wastes
nothing, and a step's thousands of tensors cost a handful of pinned
allocations once instead of one each.  Regions are carved first-fit,
aligned to ALIGN bytes, and coalesced with their free neighbours when
freed.  A region freed while a copy still reads or writes it is freed with
that copy's event and reused only once the event has completed.
"""
import bisect
import threading

ALIGN = 512


class Region:
    """@nbytes at @offset of slab @slab; @tensor is that memory (uint8)."""
    __slots__ = ("slab", "offset", "nbytes", "size", "tensor")

    def __init__(self, slab, offset, nbytes, size, tensor):
        self.slab, self.offset, self.nbytes = slab, offset, nbytes
        self.size, self.tensor = size, tensor


def _pow2(n):
    return 1 << max(n - 1, 0).bit_length()


class PinnedPool:
    """Regions of host memory from slabs of at least @slab_bytes (a power
    of two), at most @limit_bytes of slabs in all (None: no limit)."""

    def __init__(self, host_empty, slab_bytes=256 << 20, limit_bytes=None):
        if slab_bytes <= 0 or slab_bytes & (slab_bytes - 1):
            raise ValueError(f"slab_bytes {slab_bytes}: a power of two")
        self._host_empty = host_empty
        self.slab_bytes, self.limit_bytes = slab_bytes, limit_bytes
        self._slabs = []               # uint8 tensors (None once released)
        self._free = []                # per slab: sorted [offset, size]
        self._deferred = []            # (region, event) not yet reusable
        # reentrant: a block freed while the pool works (its last
        # reference dropped in this thread) gives its region back
        self._lock = threading.RLock()
        self.used_bytes = self.peak_used_bytes = 0
        self.waits = 0                 # host waits for a deferred region

    @property
    def reserved_bytes(self):
        return sum(s.numel() for s in self._slabs if s is not None)

    @property
    def slabs(self):
        return sum(s is not None for s in self._slabs)

    def alloc(self, nbytes):
        """A Region of @nbytes, or None when the limit does not allow one."""
        size = max(-(-nbytes // ALIGN) * ALIGN, ALIGN)
        with self._lock:
            self._reap()
            r = self._carve(size, nbytes)
            if r is None and self._grow(size):
                r = self._carve(size, nbytes)
            while r is None and self._deferred:
                # At the limit: wait for the oldest copy that holds a region.
                self.waits += 1
                self._deferred[0][1].synchronize()
                self._reap()
                r = self._carve(size, nbytes)
        return r

    def free(self, region, event=None):
        """Give @region back; with @event, only once it has completed."""
        with self._lock:
            if event is not None and not event.query():
                self._deferred.append((region, event))
                return
            self._give_back(region)

    def reap(self):
        """Take back the regions whose events have completed."""
        with self._lock:
            self._reap()

    def release(self):
        """Return every wholly free slab to the host allocator."""
        with self._lock:
            self._reap()
            for i, s in enumerate(self._slabs):
                if s is not None and self._free[i] == [[0, s.numel()]]:
                    self._slabs[i], self._free[i] = None, []

    # --- under the lock ----------------------------------------------------

    def _reap(self):
        keep = []
        for region, event in self._deferred:
            if event.query():
                self._give_back(region)
            else:
                keep.append((region, event))
        self._deferred = keep

    def _carve(self, size, nbytes):
        for i, free in enumerate(self._free):
            for k, (off, length) in enumerate(free):
                if length < size:
                    continue
                if length == size:
                    del free[k]
                else:
                    free[k] = [off + size, length - size]
                self.used_bytes += size
                self.peak_used_bytes = max(self.peak_used_bytes,
                                           self.used_bytes)
                return Region(i, off, nbytes, size,
                              self._slabs[i][off:off + nbytes])
        return None

    def _grow(self, size):
        n = max(self.slab_bytes, _pow2(size))
        if self.limit_bytes is not None and \
                self.reserved_bytes + n > self.limit_bytes:
            return False
        slab = self._host_empty(n)
        for i, s in enumerate(self._slabs):
            if s is None:
                self._slabs[i], self._free[i] = slab, [[0, n]]
                return True
        self._slabs.append(slab)
        self._free.append([[0, n]])
        return True

    def _give_back(self, region):
        free = self._free[region.slab]
        self.used_bytes -= region.size
        start, end = region.offset, region.offset + region.size
        k = bisect.bisect_left(free, [start, 0])
        if k < len(free) and free[k][0] == end:      # merge the next
            end += free[k][1]
            del free[k]
        if k > 0 and free[k - 1][0] + free[k - 1][1] == start:
            free[k - 1][1] = end - free[k - 1][0]     # into the previous
        else:
            free.insert(k, [start, end - start])
        region.tensor = None
