# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.stats - what an offload() context counts (OffloadStats),
why it keeps a tensor (KEEP_REASONS) and the warnings, once a process,
about the reasons a user may not expect."""
import threading
import warnings

import buddy


class OffloadStats:
    """Counters of one offload() context (bytes are tensor bytes unless
    said otherwise).

    packs, params, duplicates: pack() calls, parameters kept (autocast's
    bfloat16/float16 copies of weights included), packs served by an
    earlier handle; kept, kept_bytes: activations left where they are;
    kept_reasons: {reason: [tensors, bytes]} for each of KEEP_REASONS;
    kept_full, kept_full_bytes: those kept because the device was full;
    offloaded, offloaded_bytes: handles stored (the logical bytes
    offloaded); views_shared: saved views served by the block of another
    view of the same storage (GPU path); unpacks, unpacked_bytes: read back
    (the logical bytes prefetched or fetched; a duplicate is read again
    when the tensor its first unpack made is gone); unpacks_shared: unpacks
    served by that tensor; stored_bytes: what the allocations hold (a
    userspace codec's output, or 32 x the sectors the device wrote for a
    device-compressed tensor); device_sector_bytes, buddy_sector_bytes:
    32-byte sectors the device moved for them (reads and writes), buddy's
    being Buddy's link; pcie_out_bytes, pcie_in_bytes: bytes copied from a
    GPU to host memory and back (encoded streams and ZVC's index);
    host_syncs: times pack waited for the device (deferred_bytes reached);
    pinned_fallbacks: streams left in the pinned pool because the buddy
    device was full (destination="buddy");
    resident_bytes, peak_resident_bytes: saved activations in process
    memory (kept ones, prefetched and unpacked ones still alive);
    device_live_bytes, peak_device_bytes: logical bytes in live
    allocations; process_bytes, peak_process_bytes: the whole process's
    live bytes as the profiler's interposer tracks them (buddy.live_bytes();
    None when the process does not run under it), sampled at every pack and
    unpack; timeline: (event, resident_bytes, device_live_bytes,
    process_bytes) at every pack and unpack; by_codec, by_layer: {name:
    [tensors, logical bytes, stored bytes]}; prefetch_hits (ready at
    unpack), prefetch_late (in flight), prefetch_misses (first reads not
    prefetched); prefetch_uring: prefetches read through io_uring; rereads:
    reads of a duplicate whose first unpacked tensor was already freed;
    cswap_decisions, cswap_correct: decisions measured against the choice
    that turned out best, and how many agreed; cswap_best: {choice: times
    it was the best}, whose largest is what the best constant choice would
    have got right.
    """

    def __init__(self):
        self.packs = self.params = self.duplicates = 0
        self.kept = self.kept_bytes = 0
        self.kept_full = self.kept_full_bytes = 0
        self.kept_reasons = {}
        self.offloaded = self.offloaded_bytes = self.stored_bytes = 0
        self.views_shared = 0
        self.unpacks = self.unpacks_shared = self.unpacked_bytes = 0
        self.device_sector_bytes = self.buddy_sector_bytes = 0
        self.pcie_out_bytes = self.pcie_in_bytes = self.host_syncs = 0
        self.pinned_fallbacks = 0
        self.resident_bytes = self.peak_resident_bytes = 0
        self.device_live_bytes = self.peak_device_bytes = 0
        self.process_bytes = self.peak_process_bytes = None
        self.prefetch_hits = self.prefetch_late = self.prefetch_misses = 0
        self.prefetch_uring = 0
        self.rereads = 0
        self.cswap_decisions = self.cswap_correct = 0
        self.cswap_best = {}
        self.by_codec, self.by_layer = {}, {}
        self.timeline = []
        self._lock = threading.RLock()

    def resident(self, delta):
        with self._lock:
            self.resident_bytes += delta
            if self.resident_bytes > self.peak_resident_bytes:
                self.peak_resident_bytes = self.resident_bytes

    def device(self, delta):
        with self._lock:
            self.device_live_bytes += delta
            if self.device_live_bytes > self.peak_device_bytes:
                self.peak_device_bytes = self.device_live_bytes

    def count_kept(self, reason, nbytes):
        """A tensor of @nbytes left where it is, for @reason."""
        with self._lock:
            self.kept += 1
            self.kept_bytes += nbytes
            row = self.kept_reasons.setdefault(reason, [0, 0])
            row[0] += 1
            row[1] += nbytes
            if reason == "device_full":
                self.kept_full += 1
                self.kept_full_bytes += nbytes
        if reason in WARN_REASONS:
            _warn_once(reason, WARN_REASONS[reason])

    def count_read(self, fetched, reread, prefetching):
        """One unpack's read: @fetched is None when nothing was fetched
        ahead for it, else whether that fetch had completed; @reread: the
        block was read before; @prefetching: prefetch is on."""
        with self._lock:
            if fetched is not None:
                if fetched:
                    self.prefetch_hits += 1
                else:
                    self.prefetch_late += 1
            elif reread:
                self.rereads += 1
            elif prefetching:
                self.prefetch_misses += 1

    def count_codec(self, name, logical, stored, layer=None):
        with self._lock:
            _count(self.by_codec, name, logical, stored)
            if layer is not None:
                _count(self.by_layer, layer, logical, stored)

    def sample(self, event):
        live = buddy.live_bytes()
        if live is not None:
            live = live[0]
            self.process_bytes = live
            if self.peak_process_bytes is None or \
                    live > self.peak_process_bytes:
                self.peak_process_bytes = live
        self.timeline.append((event, self.resident_bytes,
                              self.device_live_bytes, live))

    def mean_resident(self):
        if not self.timeline:
            return 0.0
        return sum(t[1] for t in self.timeline) / len(self.timeline)

    def mean_process(self):
        """Mean of the whole-process live bytes sampled, or None."""
        v = [t[3] for t in self.timeline if t[3] is not None]
        return sum(v) / len(v) if v else None

    def as_dict(self):
        d = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        d.pop("timeline")
        return d

    def __repr__(self):
        return f"OffloadStats({self.as_dict()})"


# Why a tensor is kept; the ones with a sentence are warned about, once a
# process (warnings.warn), since the user may expect them offloaded.
KEEP_REASONS = ("policy", "min_bytes", "empty", "non_contiguous", "device",
                "no_device", "device_full", "graph_capture", "compiling",
                "no_gpu_codec", "pinned_full", "sparse_view", "late")
WARN_REASONS = {
    "non_contiguous": "a saved CPU tensor is not contiguous: kept in memory "
                      "(stats.kept_reasons['non_contiguous'])",
    "device": "a saved tensor is on a device other than the CPU or CUDA: "
              "kept there (stats.kept_reasons['device'])",
    "no_device": "the buddy device could not be opened: saved CPU tensors "
                 "are kept in memory (stats.kept_reasons['no_device'])",
    "device_full": "the buddy device is full: saved tensors that do not fit "
                   "are kept in memory, training goes on (stats.kept_full)",
    "graph_capture": "tensors saved during CUDA graph capture stay on the "
                     "GPU (stats.kept_reasons['graph_capture'])",
    "compiling": "tensors saved inside a torch.compile region stay where "
                 "they are: offload is eager only "
                 "(stats.kept_reasons['compiling'])",
    "no_gpu_codec": "the policy's codec has no GPU encoder: CUDA tensors "
                    "stay on the GPU (stats.kept_reasons['no_gpu_codec'])",
    "pinned_full": "the pinned host pool is at its limit: tensors that do "
                   "not fit stay on the GPU (stats.kept_reasons"
                   "['pinned_full'])",
    "sparse_view": "a saved view covers a small part of a large storage: "
                   "kept (stats.kept_reasons['sparse_view'])",
}
_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"buddy.torch: {message}", RuntimeWarning,
                      stacklevel=3)


def _count(table, name, logical, stored):
    row = table.setdefault(name, [0, 0, 0])
    row[0] += 1
    row[1] += logical
    row[2] += stored
