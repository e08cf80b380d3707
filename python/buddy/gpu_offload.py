# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.gpu_offload - saved activations of accelerator tensors out to host
memory on a side stream, encoded on the device, and back, prefetched, for
backward.  buddy.torch.offload() hands CUDA tensors to it; tests hand it
CPU tensors with buddy.torch_streams.HostStreams or a fake.

What moves, and when:
  pack      the tensor's bytes (its span in its storage) are encoded on the
            copy-out stream (buddy.torch_codecs), after that stream has
            waited for the caller's, and copied into a region of the
            pinned pool; the source's memory goes back to the caching
            allocator when the copy is done (record_stream).  A codec
            whose output size depends on the data (ZVC, CSR, or a choice
            between codecs made on the zero count) first counts the
            non-zero words and copies the counts out; the stream is made
            when the counts have arrived, seen without waiting at a later
            pack or unpack (poll()), so pack never stops the host.  At
            most deferred_bytes of tensors wait for their counts: beyond
            that pack waits for the oldest (host_syncs counts it).
  unpack    a restored tensor comes back with the exact size, strides and
            storage offset it had, from a buffer the copy-in stream filled
            and decoded; the caller's stream waits for that work's event
            only.  Blocks are prefetched in reverse pack order on the
            copy-in stream, at most prefetch_bytes of them fetched and not
            yet unpacked.
  views     a dense tensor of any strides is its own span; a view that is
            not dense (GPT-2's q, k and v split from one projection) takes
            its whole storage (when that is at most STORAGE_SLACK times
            the view); later views of the same storage at the same version
            share the block: nothing is freed until the storage goes.
  versions  every tensor's _version is recorded at pack, checked when its
            copy completes and at unpack: a tensor modified in place after
            it was saved raises as autograd would without the hooks,
            instead of giving back torn bytes.
"""
import collections
import errno
import threading
import weakref

import torch

from . import torch_codecs as tc

STORAGE_SLACK = 4           # a non-dense view takes a storage up to 4x it
# A full buddy device: what was to go there stays where it is.
FULL_ERRNOS = (errno.ENOSPC, errno.E2BIG, errno.ENOMEM)
COUNTED = ("zvc", "csr", "auto")


def storage_of(t):
    """(data pointer, bytes) of @t's storage, on torch 1.13 and 2.x."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def is_dense(t):
    """True when @t's elements fill a contiguous range of memory, each once,
    in any order of dimensions (channels_last, transposed)."""
    expect = 1
    for stride, size in sorted((st, sz) for sz, st in
                               zip(t.shape, t.stride()) if sz != 1):
        if stride != expect:
            return False
        expect *= size
    return True


def span_of(t):
    """(first byte, bytes) of the part of @t's storage that is taken out
    for @t, or a reason (str) why none is."""
    esize = t.element_size()
    nbytes = t.numel() * esize
    if nbytes == 0:
        return "empty"
    if is_dense(t):
        return t.storage_offset() * esize, nbytes
    _, snb = storage_of(t)
    if snb <= STORAGE_SLACK * nbytes and snb % esize == 0:
        return 0, snb
    last = t.storage_offset() + sum((n - 1) * s for n, s in
                                    zip(t.shape, t.stride()))
    extent = (last - t.storage_offset() + 1) * esize
    if extent <= STORAGE_SLACK * nbytes:
        return t.storage_offset() * esize, extent
    return "sparse_view"


class Block:
    """One span of a storage, taken out: where its bytes are and in which
    state.  state: "counting" (the source is held until its counts
    arrive), "copying" (the copy out is in flight), "stored", or "device"
    (it stays where it is: no room in the pool)."""
    __slots__ = ("seq", "start", "nbytes", "dtype", "codec", "state",
                 "source", "event", "counts", "count_host", "stream_len",
                 "index_len", "region", "alloc", "version", "refs",
                 "modified", "fetch", "restored", "held", "uses", "layer",
                 "read_event",
                 "engine", "__weakref__")

    def __init__(self, engine, seq, start, nbytes, dtype, codec, version):
        self.engine, self.seq, self.start = engine, seq, start
        self.nbytes, self.dtype, self.codec = nbytes, dtype, codec
        self.version, self.state = version, "new"
        self.source = self.event = self.counts = self.count_host = None
        self.region = self.alloc = self.fetch = self.restored = None
        self.stream_len = self.index_len = 0
        self.refs, self.modified = [], False
        self.held, self.uses, self.layer = None, 1, None
        self.read_event = None         # the last copy that read the region

    def alive(self):
        """A tensor packed into it is alive, so its storage is."""
        return any(r() is not None for r in self.refs)

    def restored_buffer(self):
        return self.restored() if self.restored is not None else None

    def __del__(self):
        eng = self.engine
        if eng is not None:
            eng._block_gone(self)


class View:
    """What autograd keeps for a saved tensor taken out: its block and how
    to see it (dtype, size, strides, offset in bytes from the storage)."""
    __slots__ = ("block", "dtype", "size", "stride", "byte_offset",
                 "version", "ref", "__weakref__")

    def __init__(self, block, t):
        self.block, self.dtype = block, t.dtype
        self.size, self.stride = tuple(t.shape), tuple(t.stride())
        self.byte_offset = t.storage_offset() * t.element_size()
        self.version = t._version
        self.ref = weakref.ref(t)


class _Fetch:
    __slots__ = ("buf", "event")

    def __init__(self, buf, event):
        self.buf, self.event = buf, event


class VersionError(RuntimeError):
    pass


class GpuOffload:
    """The offload of one offload() context's tensors on one device.

    streams: buddy.torch_streams's interface; pool: a PinnedPool on its
    host memory; stats: the OffloadStats to count into; choose(block,
    source, nnz, nwords): the codec for a block packed with codec "auto"
    once its zero count is known ("raw" for none); prefetch_bytes: the
    budget of fetched blocks not yet unpacked (0: no prefetch);
    deferred_bytes: tensors waiting for their counts before pack waits;
    store: None for the pinned pool, else a callable giving a buddy
    allocation of n bytes (the pool is then the staging)."""

    def __init__(self, streams, pool, stats, choose=None, prefetch_bytes=0,
                 deferred_bytes=256 << 20, store=None):
        self.streams, self.pool, self.stats = streams, pool, stats
        self.choose = choose
        self.prefetch_bytes, self.deferred_bytes = prefetch_bytes, \
            deferred_bytes
        self.store = store
        self._lock = threading.RLock()
        self._order = []               # weak refs to blocks, pack order
        self._shared = {}              # (storage, version, dtype): blocks
        self._counting = collections.deque()
        self._copying = collections.deque()
        self._counting_bytes = 0
        self._fetched = []             # weak refs: fetched, not unpacked
        self._next = None

    def new_step(self):
        """A new forward: pack order and sharing start again."""
        with self._lock:
            self.poll()
            self._order, self._shared, self._fetched = [], {}, []
            self._next = None

    # --- pack --------------------------------------------------------------

    def pack(self, t, codec, layer=None):
        """A View of @t, taken out with @codec ("raw", a torch_codecs name
        or "auto"), or a reason (str) why @t stays; @layer names it in
        stats.by_layer."""
        span = span_of(t)
        if isinstance(span, str):
            return span
        start, nbytes = span
        esize = t.element_size()
        sptr, _ = storage_of(t)
        key = (sptr, t._version, t.dtype)
        with self._lock:
            self.poll()
            blk = self._find(key, t, start, nbytes)
            if blk is not None:
                self.stats.views_shared += 1
                blk.refs.append(weakref.ref(t))
                blk.uses += 1
                return View(blk, t)
            d = t.detach()
            src = d.as_strided((nbytes // esize,), (1,),
                               start // esize).view(torch.uint8)
            blk = Block(self, len(self._order), start, nbytes, t.dtype,
                        codec, t._version)
            blk.refs.append(weakref.ref(t))
            blk.layer = layer
            self._order.append(weakref.ref(blk))
            self._shared.setdefault(key, []).append(weakref.ref(blk))
            st = self.streams
            st.wait_stream(st.copy_out, st.current())
            if codec in COUNTED:
                with st.use(st.copy_out):
                    counts = tc.count("zvc", src)
                    host = st.host_empty(8 * counts.numel()).view(torch.int64)
                    host.copy_(counts, non_blocking=True)
                    blk.event = st.record(st.copy_out)
                blk.count_host, blk.source, blk.state = host, src, "counting"
                self._counting.append(blk)
                self._counting_bytes += nbytes
                while self._counting_bytes > self.deferred_bytes and \
                        self._counting:
                    self.stats.host_syncs += 1
                    self._counting[0].event.synchronize()
                    self.poll()
            else:
                self._send_out(blk, src, codec, None)
            return View(blk, t)

    @staticmethod
    def reuse(view):
        """@view serves one more pack (a duplicate of the same tensor)."""
        view.block.uses += 1

    def _find(self, key, t, start, nbytes):
        live = []
        found = None
        for r in self._shared.get(key, ()):
            b = r()
            if b is None or not b.alive():
                continue
            live.append(r)
            if found is None and b.start <= start and \
                    start + nbytes <= b.start + b.nbytes and \
                    b.state != "gone":
                found = b
        if key in self._shared:
            if live:
                self._shared[key] = live
            else:
                del self._shared[key]
        return found

    def _send_out(self, blk, src, codec, counts):
        """Encode @src with @codec and copy it out (the caller holds the
        lock; the copy-out stream has waited for the caller's)."""
        st, stats = self.streams, self.stats
        nnz = sum(counts) if counts is not None else 0
        esize = torch.empty(0, dtype=blk.dtype).element_size()
        if codec == "raw":
            n, index_len = blk.nbytes, 0
        else:
            n = tc.stream_len(codec, blk.nbytes, nnz, esize)
            index_len = -(-blk.nbytes // 128) if codec == "zvc" else 0
        region = self.pool.alloc(n + index_len)
        if region is None:
            blk.state, blk.source = "device", src
            stats.count_kept("pinned_full", blk.nbytes)
            return
        with st.use(st.copy_out):
            if codec == "raw":
                region.tensor.copy_(src, non_blocking=True)
            else:
                enc, index = tc.encode(codec, src, counts, dtype=blk.dtype)
                region.tensor[:n].copy_(enc, non_blocking=True)
                if index_len:
                    region.tensor[n:].copy_(index, non_blocking=True)
            blk.event = st.record(st.copy_out)
        st.hand_over(src, st.copy_out)
        blk.codec, blk.counts, blk.region = codec, counts, region
        blk.stream_len, blk.index_len = n, index_len
        blk.source, blk.state = None, "copying"
        self._copying.append(blk)
        stats.offloaded += 1
        stats.offloaded_bytes += blk.nbytes
        stats.stored_bytes += n
        stats.pcie_out_bytes += n + index_len
        stats.count_codec(codec if codec != "raw" else "none",
                          blk.nbytes, n, blk.layer)

    # --- completions -------------------------------------------------------

    def poll(self):
        """Act on what has completed, without waiting: counts that arrived
        get their stream made, copies out that finished are checked."""
        with self._lock:
            while self._counting and self._counting[0].event.query():
                self._counted(self._counting.popleft())
            while self._copying and self._copying[0].event.query():
                self._copied(self._copying.popleft())

    def _counted(self, blk):
        self._counting_bytes -= blk.nbytes
        if blk.state != "counting":
            return                     # unpacked before its counts came
        counts = [int(c) for c in blk.count_host.tolist()]
        blk.count_host = None
        src = blk.source
        if src._version != blk.version:
            blk.modified = True
        codec = blk.codec
        if codec == "auto":
            codec = self.choose(blk, src, sum(counts), blk.nbytes // 4)
        self._send_out(blk, src, codec, counts if codec in COUNTED else None)

    def _copied(self, blk):
        if blk.state != "copying":
            return
        blk.state = "stored"
        for r in blk.refs:
            t = r()
            if t is not None and t._version != blk.version:
                blk.modified = True
        if self.store is not None and blk.region is not None:
            total = blk.stream_len + blk.index_len
            a = None
            try:
                a = self.store(total)
                a.write(blk.region.tensor)
            except OSError as e:
                if a is not None:
                    a.close()
                if e.errno not in FULL_ERRNOS:
                    raise
                self.stats.pinned_fallbacks += 1
                return                 # stays in the pinned pool
            self.pool.free(blk.region)
            blk.region, blk.alloc = None, a

    def flush(self):
        """End of forward: the tensors still waiting for their counts stay
        where they are (backward needs the last ones first)."""
        with self._lock:
            self.poll()
            for blk in self._counting:
                if blk.state == "counting":
                    blk.state = "device"
                    self.stats.count_kept("late", blk.nbytes)
            self._counting.clear()
            self._counting_bytes = 0

    # --- unpack ------------------------------------------------------------

    def unpack(self, view):
        """The tensor of @view, with its exact strides."""
        blk, stats = view.block, self.stats
        with self._lock:
            self.poll()
            t = view.ref()
            if blk.modified or (t is not None and t._version != view.version):
                raise VersionError(
                    "one of the variables needed for gradient computation "
                    "has been modified by an inplace operation: a "
                    f"{list(view.size)} {view.dtype} tensor saved at "
                    f"version {view.version} (buddy.torch offload)")
            stats.unpacks += 1
            if blk.source is not None:          # never left
                if blk.state == "counting":
                    blk.state = "device"
                    stats.count_kept("late", blk.nbytes)
                out = self._view(blk.source, view)
                self._prefetch_from(blk.seq)
                return out
            buf = blk.restored_buffer()
            if buf is not None:
                stats.unpacks_shared += 1
            else:
                cur = self.streams.current()
                f = blk.fetch
                stats.count_read(None if f is None else f.event.query(),
                                 blk.restored is not None,
                                 self.prefetch_bytes)
                blk.fetch = None
                if f is None:
                    f = self._fetch(blk)
                self.streams.wait_event(cur, f.event)
                self.streams.hand_over(f.buf, cur)
                buf = f.buf
                blk.restored = weakref.ref(buf)
                stats.unpacked_bytes += blk.nbytes
            # Hold the bytes while other packs of the block wait for their
            # unpack (a ReLU's result, read by max-pool's backward and then
            # by its own): they are needed again soon.
            blk.uses -= 1
            blk.held = buf if blk.uses > 0 else None
            out = self._view(buf, view)
            self._prefetch_from(blk.seq)
            return out

    @staticmethod
    def _view(buf, view):
        """@view's tensor in @buf, the bytes of its block (uint8)."""
        blk = view.block
        esize = torch.empty(0, dtype=view.dtype).element_size()
        base = buf.view(view.dtype)
        return base.as_strided(view.size, view.stride,
                               base.storage_offset() +
                               (view.byte_offset - blk.start) // esize)

    def _fetch(self, blk):
        """Bring @blk's bytes back on the copy-in stream (the caller holds
        the lock): the buffer and the event that completes it."""
        st, stats = self.streams, self.stats
        total = blk.stream_len + blk.index_len
        region, staged = blk.region, None
        if region is None:              # in a buddy allocation
            staged = region = self.pool.alloc(total)
            if region is None:
                raise MemoryError("buddy.torch: no pinned memory to stage "
                                  f"{total} bytes (pinned pool full)")
            blk.alloc.read_into(region.tensor)
        with st.use(st.copy_in):
            if blk.state == "copying":
                st.wait_event(st.copy_in, blk.event)
            buf = torch.empty(blk.nbytes, dtype=torch.uint8,
                              device=st.device)
            if blk.codec == "raw":
                buf.copy_(region.tensor, non_blocking=True)
            else:
                enc = torch.empty(total, dtype=torch.uint8, device=st.device)
                enc.copy_(region.tensor, non_blocking=True)
                n = blk.stream_len
                tc.decode(blk.codec, enc[:n], buf,
                          index=enc[n:] if blk.index_len else None,
                          counts=blk.counts, dtype=blk.dtype)
            event = st.record(st.copy_in)
        stats.pcie_in_bytes += total
        if staged is not None:
            self.pool.free(staged, event)
        else:
            blk.read_event = event      # the region is read until then
        return _Fetch(buf, event)

    # --- prefetch ----------------------------------------------------------

    def start_backward(self):
        """End of forward: prefetch from the last block saved."""
        with self._lock:
            self.flush()
            if self.prefetch_bytes and self._order:
                self._next = len(self._order) - 1
                self._prefetch_more()

    def _prefetch_from(self, seq):
        if not self.prefetch_bytes:
            return
        if self._next is None or seq - 1 < self._next:
            self._next = seq - 1
        self._prefetch_more()

    def _prefetch_more(self):
        """Fetch blocks in reverse pack order while the fetched and not yet
        unpacked ones stay within prefetch_bytes (one at least)."""
        live = []
        for r in self._fetched:
            b = r()
            if b is not None and b.fetch is not None:
                live.append(r)
        self._fetched = live
        held = sum(r().nbytes for r in live)
        while self._next is not None and self._next >= 0:
            blk = self._order[self._next]()
            if blk is None or blk.fetch is not None or \
                    blk.state not in ("copying", "stored") or \
                    blk.restored_buffer() is not None:
                self._next -= 1
                continue
            if held and held + blk.nbytes > self.prefetch_bytes:
                break
            blk.fetch = self._fetch(blk)
            held += blk.nbytes
            self._fetched.append(weakref.ref(blk))
            self._next -= 1

    # --- lifetime ----------------------------------------------------------

    def _block_gone(self, blk):
        """@blk is no longer referenced: its host copy goes back."""
        if blk.region is not None and blk.region.tensor is not None:
            # the copy in, if any, waited for the copy out
            self.pool.free(blk.region, blk.read_event or blk.event)
        if blk.alloc is not None:
            blk.alloc.close()
