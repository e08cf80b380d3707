# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch - keep the activations PyTorch saves for backward out of
memory: vDNN, cDMA, CSWAP and Gist as training policies, for CPU tensors
in buddy memory and for CUDA tensors in pinned host memory.

    import buddy.torch as bt
    for x, y in loader:
        with bt.offload(policy="gist") as off:
            loss = loss_fn(model(x), y)
        loss.backward()
    print(off.stats)

offload() is a context manager over torch.autograd.graph.saved_tensors_hooks:
during forward, pack() copies each saved activation out and autograd keeps
only a handle; during backward, unpack() brings it back, from a prefetch
if it guessed right.  A CPU tensor goes into a buddy allocation (raw,
compressed by the device, or encoded by one of libbuddy's whole-buffer
codecs, buddy.Codec), read back by a worker thread; a CUDA tensor is
encoded on the GPU and copied on side streams (buddy/gpu_offload.py).
The copy is freed when autograd drops the handle; the context's worker
and device when it has been left and its last handle is gone.

What the hooks do, and what pack() does about it:
  - pack also receives parameters (and views of them, and autocast's
    lower-precision copies of them): kept as they are;
  - pack receives the same tensor more than once (a ReLU's output saved by
    the ReLU and by the max-pool after it): one handle serves both, found
    by data pointer, dtype, shape, stride and _version while the first
    tensor is alive;
  - hooks bypass autograd's in-place check, so pack copies CPU tensors
    synchronously, and records the version of CUDA tensors, whose copy is
    asynchronous, to check it when the copy completes and at unpack;
  - pack does not know which operation saves the tensor.  probe() finds
    out by a walk of grad_fn: it runs one forward with hooks that hand out
    numbered tokens, walks the graph from the output, and reads every
    node's _saved_* attributes, whose unpack names the token: for every
    pack, in order, the backward nodes that read the tensor.  A policy
    without a plan learns it the same way at the end of its first step's
    forward, walking from the nodes that made the saved tensors.
    vdnn-conv (inputs of ConvolutionBackward), Binarize (only ReluBackward
    and MaxPool2DWithIndicesBackward read it) and the layer types of the
    accounting come from that plan.  A pack whose shape or producer
    differs from the plan's is treated as unknown (offloaded losslessly,
    never binarized).
  - unpack is called lazily and there is no hook for the next backward
    node: prefetch predicts by reverse pack order (exact for sequential
    networks, approximate for branches) and stats.prefetch_* say how often
    it was right.

Policies (LOSSLESS: gradients bit-identical to no policy):
  none       nothing offloaded; the same accounting (the baseline)
  vdnn-all   every saved activation, uncompressed (device codec none, 1x)
  vdnn-conv  only the inputs of convolutions (a plan, given or learnt)
  vdnn-dyn   the fewest, earliest-saved activations that bring the saved
             bytes kept in memory under budget= (vDNN's dynamic policy;
             by default budget_fraction of what the first step saves)
  cdma       every one, compressed with ZVC: by the device at target 2x,
             on the GPU for CUDA tensors
  cdma-rle, cdma-zlib
             cDMA's comparison codecs, in userspace (libbuddy's codecs),
             stored at 1x; no GPU encoder: CUDA tensors stay
  cswap      per tensor, compress with the codec of the cost model whose
             predicted codec time plus link time is least, or not at all
             (the model: calibration=, else made on this machine once and
             cached, buddy.cswap_model)
  gist       Binarize for ReLU outputs only ReLU/max-pool backward read,
             CSR where it is smaller than the tensor, else raw
  gist-dpr   gist, and DPR (dpr_bits= 16, 10 or 8) for the rest: LOSSY
"""
import ctypes
import errno
import json
import os
import queue
import sys
import threading
import time
import warnings
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

import buddy
import buddy.torch_streams
from buddy import _lib, cswap_model
from buddy.gpu_offload import FULL_ERRNOS, GpuOffload, View
from buddy.pinned_pool import PinnedPool

POLICIES = ("none", "vdnn-all", "vdnn-conv", "vdnn-dyn", "cdma", "cdma-rle",
            "cdma-zlib", "cswap", "gist", "gist-dpr")
LOSSLESS = tuple(p for p in POLICIES if p != "gist-dpr")
NEED_PLAN = ("vdnn-conv", "gist", "gist-dpr")
CSWAP_CODECS = ("zvc", "rle", "csr", "lz4")
# Backward nodes that read only x > 0 of the tensor (ReLU's result) or
# nothing but its shape (max-pool's input, next to the indices).
BINARIZE_OK = {("ReluBackward0", "result"), ("ThresholdBackward0", "self"),
               ("MaxPool2DWithIndicesBackward0", "self")}
SLAB_BYTES = 256 << 20         # the pinned pool's slabs (a power of two)
GPU_MIN_BYTES = 256 << 10      # smaller GPU tensors stay (min_bytes=None)


def _cuda_present():
    return torch.cuda.is_available()


def _layer(node):
    return node.rstrip("0123456789").replace("Backward", "") or "?"


class Plan:
    """What probe() (or the first step of a policy without a plan) learnt:
    for pack number i, shapes[i] and consumers[i], the set of (backward
    node type, saved attribute) that read the tensor (merged over the packs
    of the same tensor; an unknown reader is ("?", "?")), nbytes[i],
    params[i] (a parameter), first[i], the first pack of the same tensor,
    and producers[i], the type of the node that made it (None for a
    leaf)."""

    def __init__(self):
        self.shapes, self.consumers, self.nbytes, self.params = [], [], [], []
        self.first, self.producers = [], []

    def __len__(self):
        return len(self.shapes)

    def add(self, t, first, param):
        """Row of a pack of @t (number len(self)); @first: the first pack of
        the same tensor."""
        self.shapes.append(tuple(t.shape))
        self.nbytes.append(t.numel() * t.element_size())
        self.consumers.append(set())
        self.params.append(param)
        self.first.append(first)
        self.producers.append(_producer(t))

    def matches(self, i, t):
        """Pack @i of a later step is the tensor this plan saw there."""
        return i < len(self) and self.shapes[i] == tuple(t.shape) and \
            self.producers[i] == _producer(t)

    def layer(self, i):
        names = sorted({_layer(n) for n, _ in self.consumers[i]} - {"?"})
        return "+".join(names) or "?"

    def conv_input(self, i):
        return ("ConvolutionBackward0", "input") in self.consumers[i]

    def binarizable(self, i):
        c = self.consumers[i]
        return bool(c) and c <= BINARIZE_OK

    def saved_bytes(self):
        """Bytes of the distinct saved activations (no parameters)."""
        return sum(self.nbytes[i] for i in range(len(self))
                   if not self.params[i] and self.first[i] == i)


def _producer(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _walk_saved(roots, read):
    """Visit every node reachable from @roots and read each saved tensor
    attribute; read(node name, field, getter) does the read, whose unpack
    hook names the pack."""
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = type(node).__name__
        for attr in dir(node):
            if attr.startswith("_raw_saved_"):
                field = attr[len("_raw_saved_"):]
                read(name, field, lambda n=node, f=field:
                     getattr(n, "_saved_" + f))
        stack.extend(f for f, _ in node.next_functions)


def _merge(plan, groups):
    for idx in groups.values():
        merged = set().union(*(plan.consumers[i] for i in idx))
        for i in idx:
            plan.consumers[i] = merged


def probe(fn):
    """Run @fn (a forward returning a tensor with a grad_fn) once under
    numbering hooks and walk grad_fn: the Plan of its packs.  It is a real
    forward: batch norm's running statistics move as in any forward (a
    policy left without a plan learns it in its first step instead)."""
    plan, tensors, groups, last = Plan(), [], {}, []

    def pack(t):
        i = len(plan.shapes)
        key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
               t._version)
        groups.setdefault(key, []).append(i)
        plan.add(t, groups[key][0], _is_param(t))
        tensors.append(t)
        return i

    def unpack(i):
        last.append(i)
        return tensors[i]

    def read(name, field, get):
        last.clear()
        try:
            get()
        except RuntimeError:
            return
        for i in last:
            plan.consumers[i].add((name, field))

    with saved_tensors_hooks(pack, unpack):
        out = fn()
    _walk_saved([out.grad_fn], read)
    _merge(plan, groups)
    tensors.clear()
    del out
    return plan


def load_calibration(path):
    """The model "buddyctl calibrate -o PATH" wrote: {codec: {"compress",
    "decompress", "bytes": (c0, c1, c2, c3), "rae": {...}}}.  A file that
    cannot be read or is not such a model raises ValueError (OSError for
    one that cannot be opened) naming @path and the cause."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a buddyctl calibrate model: not "
                         f"JSON ({e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a buddyctl calibrate model: not "
                         f"text ({e.reason})") from None
    if not isinstance(doc, dict) or doc.get("format") != "buddy-calibration":
        raise ValueError(f"{path}: not a buddyctl calibrate model")
    out = {}
    try:
        for c in doc["codecs"]:
            m = {k: tuple(float(v) for v in c[k]["coef"]) for k in
                 ("compress", "decompress", "bytes")}
            if any(len(m[k]) != 4 for k in m):
                raise ValueError("a model has other than 4 coefficients")
            m["rae"] = {k: c[k].get("rae") for k in
                        ("compress", "decompress", "bytes")}
            s = c.get("samples") or []
            if s:   # rows of size, sparsity, ...: what the fit has seen
                m["domain"] = (max(float(r[0]) for r in s),
                               min(float(r[1]) for r in s),
                               max(float(r[1]) for r in s))
            out[str(c["name"])] = m
    except (KeyError, TypeError, ValueError, IndexError) as e:
        what = f"no field {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(f"{path}: malformed buddyctl calibrate model: "
                         f"{what}") from None
    return out


def _predict(coef, size, sparsity):
    # calib.h's model: the same four products as calib_predict().
    return coef[0] + coef[1] * size + coef[2] * sparsity + \
        coef[3] * size * sparsity


def _predict_in(model, what, size, sparsity):
    """@what ("compress", "decompress", "bytes") of a codec's model, as a
    rate per byte: the fit evaluated at the largest size it saw (where its
    intercept matters least) and scaled to @size, with sparsity clamped to
    the range its samples covered.  The linear fit used as it is gave
    small tensors negative intercepts' worth of time and bytes: a codec
    free and its output smaller than it is (ResNet-18: LZ4 chosen for 88
    dense tensors it did not compress, 27% of decisions right).  Never
    below zero; a model without samples (no domain) is used as fitted."""
    dom = model.get("domain")
    if not dom:
        return max(_predict(model[what], size, sparsity), 0.0)
    smax, pmin, pmax = dom     # largest size, sparsity range seen
    sp = min(max(sparsity, pmin), pmax)
    return max(_predict(model[what], smax, sp), 0.0) * size / smax


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


def _is_param(t):
    base = t._base if t._base is not None else t
    return isinstance(base, torch.nn.Parameter) or \
        (base.is_leaf and base.requires_grad) or _is_autocast_weight(base)


def _is_autocast_weight(t):
    """A lower-precision copy of a parameter (autocast's cast, which it
    caches for the whole region: offloading it would free nothing)."""
    fn = t.grad_fn
    if fn is None or type(fn).__name__ != "ToCopyBackward0":
        return False
    nxt = [n for n, _ in fn.next_functions if n is not None]
    return bool(nxt) and all(type(n).__name__ == "AccumulateGrad"
                             for n in nxt)


def _compiling():
    """True while torch.compile traces (torch 2.x; never on 1.13)."""
    comp = getattr(torch, "compiler", None)
    f = getattr(comp, "is_compiling", None)
    if f is None:
        dyn = sys.modules.get("torch._dynamo")
        f = getattr(dyn, "is_compiling", None)
    return bool(f()) if f is not None else False


def _count(table, name, logical, stored):
    row = table.setdefault(name, [0, 0, 0])
    row[0] += 1
    row[1] += logical
    row[2] += stored


def _check_target(target):
    """@target as buddy_target_parse() takes it, or ValueError."""
    if target is None or _lib.lib is None:
        return target
    if isinstance(target, str):
        t = ctypes.c_uint()
        if _lib.buddy_target_parse(target.encode(), ctypes.byref(t)) == 0:
            return target
    elif isinstance(target, int) and target in TARGETS.values():
        return target
    raise ValueError(f"unknown target '{target}' (known: "
                     f"{', '.join(TARGETS)}, or device bytes per entry: "
                     "128B, 96B, 64B, 32B, 8B)")


def _check_codec(codec):
    if codec is None or _lib.lib is None:
        return codec
    names = [_lib.buddy_codec_name(i).decode()
             for i in range(_lib.BUDDY_CODEC_NR)]
    if isinstance(codec, str) and _lib.buddy_codec_parse(codec.encode()) >= 0:
        return codec
    if isinstance(codec, int) and 0 <= codec < len(names):
        return codec
    raise ValueError(f"unknown codec '{codec}' (known: {', '.join(names)})")


TARGETS = {"1x": 128, "4/3x": 96, "2x": 64, "4x": 32, "16x": 8, "auto": 0}

# The buddy device offload() opens itself: one per $BUDDY_DEVICE, shared by
# the contexts that use it at the same time and closed when the last one
# lets it go (libbuddy's in-process device cannot be opened again with
# other options while it is open).
_devices = {}
_devices_lock = threading.Lock()


def _acquire_device():
    path = os.environ.get("BUDDY_DEVICE") or "/dev/buddy"
    with _devices_lock:
        ent = _devices.get(path)
        if ent is None:
            ent = _devices[path] = [buddy.Device(), 0]
        ent[1] += 1
        return ent[0]


def _release_device(dev):
    with _devices_lock:
        for path, ent in list(_devices.items()):
            if ent[0] is dev:
                ent[1] -= 1
                if ent[1] == 0:
                    del _devices[path]
                    dev.close()
                return


# The GPU's side: streams and the pinned pool, one per device for the
# process (the pool is reused from step to step and context to context).
_gpu = {}
_gpu_lock = threading.Lock()
_links = {}


def _gpu_resources(device, pinned_limit, slab_bytes):
    key = str(device)
    with _gpu_lock:
        res = _gpu.get(key)
        if res is None:
            streams = buddy.torch_streams.for_device(device)
            if streams is None:
                return None
            res = _gpu[key] = (streams, PinnedPool(
                streams.host_empty, slab_bytes, pinned_limit))
        if pinned_limit is not None:
            res[1].limit_bytes = pinned_limit
        return res


def pinned_pool(device="cuda"):
    """The pinned host pool of @device's offloads (None before the first):
    its slabs, reserved_bytes, used_bytes, peak_used_bytes and waits."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    res = _gpu.get(str(device))
    return res[1] if res else None


def empty_pinned_cache():
    """Give the wholly free slabs of every pinned pool back."""
    for _, pool in list(_gpu.values()):
        pool.release()


def deterministic_recipe():
    """Make CUDA training in this process repeat itself bit for bit, the
    recipe under which the lossless policies are compared with training
    without them: CUBLAS_WORKSPACE_CONFIG=:4096:8 (set here unless CUDA
    has started, which raises), deterministic algorithms with warn_only
    (AdaptiveAvgPool2d's backward has no deterministic CUDA kernel: it
    would raise otherwise, and it is deterministic for the pooling of a
    7x7 map to 1x1 anyway), cuDNN without benchmarking, and one
    scaled-dot-product attention backend, the math one."""
    want = (":4096:8", ":16:8")
    if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in want:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            raise RuntimeError("deterministic_recipe(): CUDA has started "
                               "without CUBLAS_WORKSPACE_CONFIG=:4096:8; "
                               "set it before the first CUDA call")
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = want[0]
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    for name, on in (("enable_flash_sdp", False),
                     ("enable_mem_efficient_sdp", False),
                     ("enable_cudnn_sdp", False), ("enable_math_sdp", True)):
        f = getattr(torch.backends.cuda, name, None)
        if f is not None:
            f(on)


def _default_pinned_limit():
    """Half the machine's memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError):
        return None


class offload:
    """Context manager: saved activations go to buddy allocations (CPU
    tensors) or to pinned host memory (CUDA tensors; buddy/gpu_offload.py).

    policy: one of POLICIES; device: a buddy.Device (default: one on
    $BUDDY_DEVICE or /dev/buddy, opened at the first CPU tensor and shared
    by the contexts that use it at the same time); plan: probe()'s Plan
    (without one, a policy that needs it learns it in its first step, which
    offloads without the plan's encodings); target, codec: the device target
    and codec of device-compressed policies; min_bytes: smaller tensors stay
    in memory (default 0 for CPU tensors, GPU_MIN_BYTES for the others,
    whose copy costs more to start than it gives back); budget: vdnn-dyn's bytes of saved activations kept in memory
    (default: budget_fraction of what the first step saves, that step
    offloading all); calibration: cswap's model for CPU codecs, a path or
    load_calibration()'s dict (default: one made on this machine the first
    time and cached, buddy.cswap_model); gpu_calibration: the same for the
    GPU encoders; link_gbps: cswap's link speed for CPU tensors, GB/s (on a
    GPU the copy speed is measured); measure_decisions: cswap also times
    every candidate for decision accuracy; dpr_bits: gist-dpr's 16, 10 or
    8; prefetch: CPU tensors read ahead on the worker thread (0: none, on
    every device); uring: the worker reads through libbuddy's io_uring
    context (default: on the kernel's /dev/buddy, not on the in-process
    device).  GPU only: prefetch_bytes, the bytes fetched ahead and not yet
    unpacked; deferred_bytes, tensors whose zero count is awaited before
    pack waits; destination, "host" (pinned memory) or "buddy" (a buddy
    allocation through the pinned staging); pinned_limit, the pinned pool's
    bytes (default half the machine's memory); streams, the
    buddy.torch_streams interface to use for CPU tensors too (tests, dry
    runs).

    The context releases what it took (the prefetch worker, the device it
    opened) once it has been left and autograd has dropped the last tensor
    it saved, normally at the end of backward; close() does it at once.
    """

    def __init__(self, policy="vdnn-all", device=None, plan=None, target=None,
                 codec=None, min_bytes=None, budget=None, calibration=None,
                 link_gbps=2.0, measure_decisions=False, dpr_bits=16,
                 prefetch=2, label="buddy.torch", uring=None,
                 budget_fraction=0.5, gpu_calibration=None,
                 prefetch_bytes=512 << 20, deferred_bytes=256 << 20,
                 destination="host", pinned_limit=None, streams=None):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy '{policy}' (known: "
                             f"{', '.join(POLICIES)})")
        for name, v in (("min_bytes", min_bytes or 0), ("prefetch", prefetch),
                        ("prefetch_bytes", prefetch_bytes),
                        ("deferred_bytes", deferred_bytes)):
            if not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} {v!r}: an integer >= 0")
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ValueError(f"budget {budget!r}: bytes, an integer >= 0")
        if not 0 < budget_fraction <= 1:
            raise ValueError(f"budget_fraction {budget_fraction}: in (0, 1]")
        if dpr_bits not in (16, 10, 8):
            raise ValueError(f"dpr_bits {dpr_bits}: 16, 10 or 8")
        if link_gbps <= 0:
            raise ValueError(f"link_gbps {link_gbps}: must be > 0")
        if destination not in ("host", "buddy"):
            raise ValueError(f"destination '{destination}': 'host' or "
                             "'buddy'")
        if pinned_limit is not None and pinned_limit <= 0:
            raise ValueError(f"pinned_limit {pinned_limit}: bytes, > 0")
        self.policy, self.plan, self.label = policy, plan, label
        dev_codec = {"cdma": ("2x", "zvc")}.get(policy, ("1x", "none"))
        self.target = _check_target(target) or dev_codec[0]
        self.dev_codec = _check_codec(codec) or dev_codec[1]
        self.min_bytes, self.budget = min_bytes, budget
        self.budget_fraction = budget_fraction
        self.link_bps = link_gbps * 1e9
        self.measure = measure_decisions
        self.prefetch_depth = prefetch if policy != "none" else 0
        self.prefetch_bytes = prefetch_bytes if policy != "none" else 0
        self.deferred_bytes = deferred_bytes
        self.destination, self.pinned_limit = destination, pinned_limit
        self.calib = calibration
        if isinstance(calibration, (str, os.PathLike)):
            self.calib = load_calibration(calibration)
        self.gpu_calib = gpu_calibration
        if isinstance(gpu_calibration, (str, os.PathLike)):
            self.gpu_calib = load_calibration(gpu_calibration)
        self.dpr = f"dpr{dpr_bits}"
        self._codec_names = {"cdma-rle": ["rle"], "cdma-zlib": ["zlib"],
                             "cswap": list(CSWAP_CODECS), "gist": ["csr"],
                             "gist-dpr": ["csr", self.dpr]}.get(policy, [])
        if policy.startswith("gist"):
            self._codec_names.append("binarize")
        self.codecs = {}
        if _lib.lib is not None:
            self._open_codecs()
        if policy == "cswap" and self.calib is not None:
            missing = [n for n in CSWAP_CODECS if n not in self.calib]
            if missing:
                raise ValueError("calibration lacks codec(s) " +
                                 ", ".join(missing))
        if policy in ("cdma-rle", "cdma-zlib") and _cuda_present():
            _warn_once(policy, f"policy '{policy}': {policy[5:]} has no GPU "
                       "encoder: CUDA tensors stay on the GPU")
        if policy == "cswap" and _cuda_present():
            _warn_once(policy, "policy 'cswap': on CUDA tensors the "
                       "candidates are none, zvc and csr (rle and lz4 have "
                       "no GPU encoder)")
        self._own = device is None
        self.device = device
        self._device_error = None
        self._uring_arg = uring
        self._uring = None
        if not self._own:
            self._set_uring()
        elif destination == "buddy":
            self._get_device()
        self.stats = OffloadStats()
        self._streams_arg = streams
        self._learning = False
        self._learned = None
        self._dyn_offload = None
        if policy == "vdnn-dyn" and plan is not None:
            self._set_budget()
        self._seen = {}
        self._hooks = None
        self._seq = 0
        self._order = []               # weak refs to handles, pack order
        self._next = None              # index in _order to prefetch next
        self._outstanding = 0          # prefetches not unpacked yet
        self._queue = self._worker = None
        self._engines = {}             # device: GpuOffload
        self._gpu_model = None
        self._live = 0                 # _Saved handles alive
        self._inside = False
        self._walking = None
        self._lock = threading.RLock()

    def _open_codecs(self):
        for n in self._codec_names:
            self.codecs[n] = buddy.Codec(n, allow_lossy=n.startswith("dpr"),
                                         allow_mask=n == "binarize")

    def _set_uring(self):
        # Prefetch reads through io_uring on the kernel's device; the
        # in-process device's descriptors are not files: a thread reads.
        self._uring = self._uring_arg if self._uring_arg is not None else \
            (not getattr(self.device, "in_process", True) and
             buddy._lib.buddy_aio_init is not None)

    def _get_device(self):
        """The buddy device, opened (and shared) the first time; None, with
        the reason kept, when it cannot be."""
        if self.device is None and self._own:
            try:
                self.device = _acquire_device()
            except (OSError, ImportError) as e:
                self._device_error = e
                if self.destination == "buddy":
                    raise
                return None
            self._set_uring()
        return self.device

    # --- decisions ---------------------------------------------------------

    def _set_budget(self):
        """vDNN-dyn's budget (its default from the plan) and, with a plan,
        its choice."""
        if self.budget is None and self.plan is not None:
            self.budget = int(self.budget_fraction * self.plan.saved_bytes())
        if self.plan is not None and self.budget is not None:
            self._dyn_offload = self._dyn_choice()

    def _dyn_choice(self):
        """vDNN-dyn with a plan: offload the earliest-saved activations
        (needed last by backward) until the rest fits the budget."""
        p = self.plan
        unique = [i for i in range(len(p))
                  if not p.params[i] and p.first[i] == i]
        need = sum(p.nbytes[i] for i in unique) - self.budget
        chosen = set()
        for i in unique:
            if need <= 0:
                break
            chosen.add(i)
            need -= p.nbytes[i]
        return chosen

    def _plan_ok(self, i, t):
        return self.plan is not None and self.plan.matches(i, t)

    def _cswap_cost(self, name, nbytes, sparsity):
        if name == "none":
            return 2 * nbytes / self.link_bps
        m = self.calib[name]
        enc = _predict_in(m, "bytes", nbytes, sparsity)
        return _predict_in(m, "compress", nbytes, sparsity) + \
            _predict_in(m, "decompress", nbytes, sparsity) + \
            2 * enc / self.link_bps

    def _cswap_judged(self, costs, chosen):
        best = min(costs, key=costs.get)
        st = self.stats
        with st._lock:
            st.cswap_decisions += 1
            st.cswap_correct += best == chosen
            st.cswap_best[best] = st.cswap_best.get(best, 0) + 1

    def _cswap_measure(self, t, chosen):
        """Time every candidate natively (thread CPU time, as calibrate
        does) and see whether @chosen was the best."""
        nbytes = t.numel() * t.element_size()
        costs = {"none": 2 * nbytes / self.link_bps}
        out = torch.empty_like(t)
        for name in CSWAP_CODECS:
            c, best = self.codecs[name], None
            for _ in range(3):         # the fastest of three, as calibrate
                t0 = time.thread_time()
                enc = c.encode(t)
                c.decode(enc, out)
                dt = time.thread_time() - t0
                best = dt if best is None else min(best, dt)
            costs[name] = best + 2 * len(enc) / self.link_bps
        self._cswap_judged(costs, chosen)

    def _cpu_calibration(self):
        if self.calib is None:
            path, _ = cswap_model.cached("cpu", lambda: cswap_model.
                                         calibrate_cpu(CSWAP_CODECS))
            self.calib = load_calibration(path)
        return self.calib

    def _decide(self, i, t):
        """(what, codec name): what is "keep", "device" or "user"."""
        pol, nbytes = self.policy, t.numel() * t.element_size()
        known = self._plan_ok(i, t)
        if pol == "none":
            return "keep", None
        if pol == "vdnn-conv":
            if self.plan is None:
                return "device", None  # the first step: all of them
            return ("device", None) if known and self.plan.conv_input(i) \
                else ("keep", None)
        if pol == "vdnn-dyn":
            if self.budget is None:
                return "device", None  # the first step: all of them
            if self._dyn_offload is not None and known:
                return ("device", None) if i in self._dyn_offload \
                    else ("keep", None)
            if self.stats.resident_bytes + nbytes <= self.budget:
                return "keep", None
            return "device", None
        if pol in ("vdnn-all", "cdma"):
            return "device", None
        if pol in ("cdma-rle", "cdma-zlib"):
            return "user", pol[5:]
        if t.dtype != torch.float32:
            return "device", None
        if pol == "cswap":
            self._cpu_calibration()
            sparsity = float((t == 0).sum()) / max(t.numel(), 1)
            costs = {n: self._cswap_cost(n, nbytes, sparsity)
                     for n in ("none",) + CSWAP_CODECS}
            best = min(costs, key=costs.get)
            if self.measure:
                self._cswap_measure(t, best)
            return ("device", None) if best == "none" else ("user", best)
        # gist, gist-dpr
        if known and self.plan.binarizable(i):
            return "user", "binarize"
        zeros = float((t == 0).sum()) / max(t.numel(), 1)
        # CSR costs 5 bytes a non-zero word and 2 a 256-word row.
        n = t.numel()
        if 5 * n * (1 - zeros) + 2 * -(-n // 256) < 4 * n:
            return "user", "csr"
        if pol == "gist-dpr":
            return "user", self.dpr
        return "device", None

    def _decide_gpu(self, i, t):
        """The codec of a tensor the GPU path takes out ("raw", a
        torch_codecs name, or "auto": chosen on its zero count by
        _choose_gpu), or ("keep", reason)."""
        pol = self.policy
        if pol in ("cdma-rle", "cdma-zlib"):
            return "keep", "no_gpu_codec"
        if pol in ("cswap", "gist", "gist-dpr") or pol == "cdma":
            if pol == "gist" or pol == "gist-dpr":
                if self._plan_ok(i, t) and self.plan.binarizable(i) and \
                        t.is_floating_point():
                    return "binarize"
                return "auto"
            return "zvc" if pol == "cdma" else "auto"
        what, _ = self._decide(i, t)
        return ("keep", "policy") if what == "keep" else "raw"

    def _choose_gpu(self, blk, src, nnz, nwords):
        """A block's codec once its non-zero word count is known."""
        nbytes = blk.nbytes
        words = nbytes % 4 == 0
        if self.policy in ("gist", "gist-dpr"):
            rows = -(-nwords // 256)
            if words and 5 * nnz + 2 * rows < 4 * nwords:
                return "csr"
            if self.policy == "gist-dpr" and blk.dtype == torch.float32:
                return self.dpr
            return "raw"
        # cswap: the GPU model's least cost
        model, (d2h, h2d) = self._gpu_cswap(src.device)
        sparsity = 1.0 - nnz / max(nwords, 1)
        costs = {"raw": nbytes / d2h + nbytes / h2d}
        for name in ("zvc", "csr"):
            if name == "csr" and not words:
                continue
            m = model[name]
            enc = _predict_in(m, "bytes", nbytes, sparsity)
            costs[name] = _predict_in(m, "compress", nbytes, sparsity) + \
                _predict_in(m, "decompress", nbytes, sparsity) + \
                enc / d2h + enc / h2d
        best = min(costs, key=costs.get)
        if self.measure:
            self._cswap_measure_gpu(src, best, list(costs), d2h, h2d)
        return best

    def _gpu_cswap(self, device):
        """(the GPU encoders' model, (d2h, h2d) bytes/s) of @device."""
        if self._gpu_model is None:
            if device.type == "cuda":
                key = str(device)
                if key not in _links:
                    _links[key] = cswap_model.link_bandwidth(device)
                link = _links[key]
                model = self.gpu_calib
                if model is None:
                    path, _ = cswap_model.cached(
                        "gpu", lambda: cswap_model.calibrate_gpu(device),
                        device)
                    model = load_calibration(path)
            else:                      # CPU tensors on the stream path
                link = (self.link_bps, self.link_bps)
                model = self.gpu_calib
                if model is None:
                    path, _ = cswap_model.cached(
                        "torch-cpu", lambda: cswap_model.calibrate_torch(
                            device))
                    model = load_calibration(path)
            self._gpu_model = (model, link)
        return self._gpu_model

    def _cswap_measure_gpu(self, src, chosen, names, d2h, h2d):
        """Time every candidate's encoder and decoder on @src where it is
        (CUDA events on a GPU) and see whether @chosen was the best."""
        nbytes = src.numel()
        costs = {"raw": nbytes / d2h + nbytes / h2d}
        out = torch.empty_like(src)
        for name in names:
            if name == "raw":
                continue
            best = None
            for _ in range(3):
                te, td, n = cswap_model.time_codec(name, src, out)
                dt = te + td
                best = dt if best is None else min(best, dt)
            costs[name] = best + n / d2h + n / h2d
        self._cswap_judged(costs, chosen)

    # --- hooks -------------------------------------------------------------

    def _key(self, t):
        return (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
                t._version)

    def _keep(self, t, reason):
        h = _Kept(t, self.stats)
        self.stats.count_kept(reason, h.nbytes)
        return h

    def _streams_for(self, t):
        """The stream interface for @t's device, or None (CPU path)."""
        if self._streams_arg is not None and \
                t.device.type == self._streams_arg.device.type:
            return self._streams_arg
        if t.device.type == "cpu":
            return None
        eng = self._engines.get(t.device)
        if eng is not None:
            return eng.streams
        res = _gpu_resources(t.device, self.pinned_limit or
                             _default_pinned_limit(), SLAB_BYTES)
        return res[0] if res else None

    def _engine(self, t, streams):
        eng = self._engines.get(t.device)
        if eng is None:
            if streams is self._streams_arg:
                pool = PinnedPool(streams.host_empty, SLAB_BYTES,
                                  self.pinned_limit)
            else:
                pool = _gpu_resources(t.device, None, SLAB_BYTES)[1]
            store = None
            if self.destination == "buddy":
                # the device as it is when the copy completes: a context
                # let go (_release) reopens it
                me = weakref.ref(self)
                store = (lambda n: me()._get_device().alloc(
                    max(n, 1), target="1x", codec="none",
                    label=me().label))
            eng = self._engines[t.device] = GpuOffload(
                streams, pool, self.stats, self._choose_gpu,
                self.prefetch_bytes if self.prefetch_depth else 0,
                self.deferred_bytes, store)
        return eng

    def _pack(self, t):
        st = self.stats
        i = self._seq
        self._seq += 1
        st.packs += 1
        param = _is_param(t)
        if self._learning:
            self._learn_pack(i, t, param)
        if param:
            st.params += 1
            return t
        key = self._key(t)
        seen = self._seen.get(key)
        if seen is not None:
            ref, h = seen
            h = h()
            if ref() is not None and h is not None:
                st.duplicates += 1
                if isinstance(h, View):
                    GpuOffload.reuse(h)
                if self._learning:
                    self._learn_handle(i, h)
                return h
        nbytes = t.numel() * t.element_size()
        if t.is_cuda and torch.cuda.is_current_stream_capturing():
            # before any stream or pinned memory is made: a graph
            # being captured replays its own memory, not ours
            h = self._keep(t, "graph_capture")
        elif _compiling():
            h = self._keep(t, "compiling")
        elif (streams := self._streams_for(t)) is not None:
            h = self._pack_streamed(i, t, streams, nbytes)
        else:
            h = self._pack_cpu(i, t, nbytes)
        if self._learning:
            self._learn_handle(i, h)
        seen_map = self._seen
        self._seen[key] = (weakref.ref(t, lambda _r, k=key:
                                       seen_map.pop(k, None)),
                           weakref.ref(h))
        st.sample("pack")
        return h

    def _pack_cpu(self, i, t, nbytes):
        reason = None
        if t.device.type != "cpu":
            reason = "device"
        elif nbytes == 0:
            reason = "empty"
        elif not t.is_contiguous():
            reason = "non_contiguous"
        elif nbytes < (self.min_bytes or 0):
            reason = "min_bytes"
        if reason is None:
            what, cname = self._decide(i, t)
            if what == "keep":
                reason = "policy"
        if reason is None and self._get_device() is None:
            reason = "no_device"
        if reason is not None:
            return self._keep(t, reason)
        h = self._store(t, what, cname)
        if h is None:
            return self._keep(t, "device_full")
        layer = self.plan.layer(i) if self._plan_ok(i, t) else "?"
        self.stats.count_codec(cname or self.dev_codec, nbytes, h.stored,
                               layer)
        self._order.append(weakref.ref(h))
        return h

    def _pack_streamed(self, i, t, streams, nbytes):
        if streams.capturing():
            return self._keep(t, "graph_capture")
        floor = GPU_MIN_BYTES if self.min_bytes is None else self.min_bytes
        if nbytes < floor:
            return self._keep(t, "min_bytes")
        codec = self._decide_gpu(i, t)
        if isinstance(codec, tuple):
            return self._keep(t, codec[1])
        layer = self.plan.layer(i) if self._plan_ok(i, t) else "?"
        v = self._engine(t, streams).pack(t, codec, layer)
        if isinstance(v, str):
            return self._keep(t, v)
        return v

    def _store(self, t, what, cname):
        """A _Saved handle of @t, or None when the device is full."""
        st = self.stats
        nbytes = t.numel() * t.element_size()
        codec, data = None, t.detach()
        try:
            if what == "user":
                codec = self.codecs[cname]
                data = codec.encode(data)   # synchronous: the value now
                stored = len(data)
                a = self.device.alloc(max(stored, 1), target="1x",
                                      codec="none", label=self.label)
            else:
                stored = nbytes
                a = self.device.alloc(nbytes, target=self.target,
                                      codec=self.dev_codec, label=self.label)
        except OSError as e:
            if e.errno in FULL_ERRNOS:
                return None
            raise
        try:
            if stored:
                a.write(data)
            if what == "device":
                stored = self._sectors_written(a, stored)
        except OSError as e:
            a.close()
            if e.errno in FULL_ERRNOS:
                return None
            raise
        except BaseException:
            a.close()
            raise
        st.offloaded += 1
        st.offloaded_bytes += nbytes
        st.stored_bytes += stored
        with self._lock:
            self._live += 1
        return _Saved(a, t, st, codec, stored, len(self._order),
                      weakref.ref(self))

    @staticmethod
    def _sectors_written(a, default):
        """What the device holds of a device-compressed tensor: 32 x the
        sectors its write stored (@default on a device without counters)."""
        try:
            c = a.stat()["counters"]
        except (AttributeError, KeyError, TypeError):
            return default
        return 32 * (c["device_sectors_written"] + c["buddy_sectors_written"])

    def _unpack(self, h):
        if self._walking is not None:
            return self._walk_unpack(h)
        if isinstance(h, _Kept):
            self.stats.sample("unpack")
            return h.t
        if isinstance(h, View):
            out = h.block.engine.unpack(h)
            self.stats.sample("unpack")
            return out
        if not isinstance(h, _Saved):
            return h
        st = self.stats
        out = h.last() if h.last is not None else None
        if out is not None:
            # A duplicate's second unpack (max-pool's and ReLU's backward):
            # the tensor the first one made is still alive; share it.
            st.unpacks += 1
            st.unpacks_shared += 1
            st.sample("unpack")
            return out
        f = h.fetch
        # a duplicate whose first tensor is gone is read again
        st.count_read(None if f is None else f.event.is_set(),
                      h.last is not None, self.prefetch_depth)
        if f is not None:
            f.event.wait()
            h.fetch = None
            self._outstanding -= 1
            if f.error is not None:
                raise f.error
            out = f.tensor
        else:
            out = h.read()
        st.unpacks += 1
        st.unpacked_bytes += h.nbytes
        h.last = weakref.ref(out)
        st.sample("unpack")
        self._prefetch_after(h)
        return out

    # --- the plan learnt in the first step ---------------------------------

    def _learn_pack(self, i, t, param):
        self._learned.add(t, i, param)
        self._learn_packs.append(None)
        fn = t.grad_fn
        if fn is not None:
            self._learn_roots.append(fn)

    def _learn_handle(self, i, h):
        first = self._learn_first.setdefault(id(h), i)
        self._learned.first[i] = first
        self._learn_packs[i] = h
        self._learn_count[id(h)] = self._learn_count.get(id(h), 0) + 1

    def _walk_unpack(self, h):
        """An unpack during the walk: name the handle, move nothing."""
        self._walking.append(h)
        if isinstance(h, _Kept):
            return h.t
        if isinstance(h, View):
            return torch.empty(0, dtype=h.dtype, device=h.block.engine.
                               streams.device)
        if isinstance(h, _Saved):
            return torch.empty(0, dtype=h.dtype)
        return h

    def _learn_finish(self):
        """After the first step's forward: walk the graph from every node
        that made a saved tensor and read each saved attribute, as probe()
        does.  A tensor whose packs were not all read by the nodes reached
        (the last nodes, whose outputs nothing saved) gets an unknown
        reader, so it is never binarized."""
        plan, hits = self._learned, {}
        self._walking = []

        def read(name, field, get):
            self._walking.clear()
            try:
                get()
            except RuntimeError:
                return
            for h in self._walking:
                hits.setdefault(id(h), set()).add((name, field))
                self._learn_read[id(h)] = self._learn_read.get(id(h), 0) + 1

        try:
            _walk_saved(self._learn_roots, read)
        finally:
            self._walking = None
        for i, h in enumerate(self._learn_packs):
            if h is None:
                continue
            c = set(hits.get(id(h), ()))
            if self._learn_read.get(id(h), 0) != self._learn_count[id(h)]:
                c.add(("?", "?"))
            plan.consumers[i] = c
        self.plan, self._learning = plan, False
        self._learn_roots = self._learn_packs = None
        if self.policy == "vdnn-dyn":
            self._set_budget()

    # --- prefetch ----------------------------------------------------------

    def _prefetch_after(self, h):
        """Backward needs the handles in about reverse pack order: queue the
        next prefetch_depth handles saved before @h."""
        if not self.prefetch_depth:
            return
        self._start_worker()
        if self._next is None or h.seq <= self._next:
            self._next = h.seq - 1
        self._queue_prefetch()

    def _start_worker(self):
        if self._worker is None:
            self._queue = queue.Queue()
            self._worker = threading.Thread(target=self._work, daemon=True,
                                            name="buddy-prefetch")
            self._worker.start()

    def _queue_prefetch(self):
        while self._next >= 0 and self._outstanding < self.prefetch_depth:
            nh = self._order[self._next]()
            self._next -= 1
            if nh is None or nh.fetch is not None:
                continue
            nh.fetch = _Fetch()
            self._queue.put((nh, nh.fetch))
            self._outstanding += 1

    def _work(self):
        if self._uring:
            return self._work_uring()
        q = self._queue
        while True:
            item = q.get()
            if item is None:
                return
            h, f = item
            try:
                f.tensor = h.read()
            except BaseException as e:   # handed to unpack
                f.error = e
            f.event.set()
            del h, f, item

    def _work_uring(self):
        """The worker on /dev/buddy: every queued prefetch is a read on
        libbuddy's io_uring context (several in flight), completed as the
        ring reports it.  The context is this thread's own."""
        aio = buddy.Aio(max(2 * self.prefetch_depth, 4))
        q = self._queue
        flight, ud, stop = {}, 0, False
        try:
            while not stop or flight:
                items = []
                if not stop:
                    try:
                        items.append(q.get(block=not flight))
                        while True:
                            items.append(q.get_nowait())
                    except queue.Empty:
                        pass
                for item in items:
                    if item is None:
                        stop = True
                        continue
                    h, f = item
                    ud += 1
                    try:
                        out, dst = h.buffers()
                        aio.read_into(h.alloc, dst, ud)
                        flight[ud] = (h, f, out, dst)
                    except BaseException as e:
                        f.error = e
                        f.event.set()
                # Hold no fetch past its hand-over, as the thread does not:
                # a tensor kept alive here would let a duplicate's second
                # unpack share it where the thread's would read again.
                items = item = h = f = out = dst = None
                if not flight:
                    continue
                for done, res in aio.wait():
                    h, f, out, dst = flight.pop(done)
                    try:
                        want = len(dst) if isinstance(dst, bytearray) \
                            else h.nbytes
                        if res < 0:
                            raise buddy.BuddyError(res, buddy._lib.OP_READ,
                                                   h.alloc._name())
                        if res != want:
                            raise buddy.BuddyError(-errno.EIO,
                                                   buddy._lib.OP_READ,
                                                   h.alloc._name())
                        f.tensor = h.finish(out, dst)
                        with self.stats._lock:
                            self.stats.prefetch_uring += 1
                    except BaseException as e:
                        f.error = e
                    f.event.set()
                    del h, f, out, dst
        finally:
            aio.close()

    # --- the context -------------------------------------------------------

    def __enter__(self):
        if self._inside:
            raise RuntimeError("buddy.torch.offload: already entered")
        self._seq = 0
        self._order, self._next, self._outstanding = [], None, 0
        for eng in self._engines.values():
            eng.new_step()
        self._learning = self.plan is None and (
            self.policy in NEED_PLAN or
            (self.policy == "vdnn-dyn" and self.budget is None))
        if self._learning:
            self._learned = Plan()
            self._learn_roots, self._learn_packs = [], []
            self._learn_first, self._learn_count = {}, {}
            self._learn_read = {}
        self._inside = True
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        self._hooks = None
        self._seen.clear()
        if self._learning:
            if exc[0] is None:
                self._learn_finish()
            else:
                self._learning = False
        for eng in self._engines.values():
            if exc[0] is None:
                eng.start_backward()
            else:
                eng.flush()
        # Backward starts with the last saved: read it ahead already.
        if self.prefetch_depth and self._order and exc[0] is None:
            self._start_worker()
            self._next = len(self._order) - 1
            self._queue_prefetch()
        with self._lock:
            self._inside = False
            done = self._live == 0
        if done:
            self._release()

    def _handle_gone(self):
        with self._lock:
            self._live -= 1
            done = self._live == 0 and not self._inside
        if done:
            self._release()

    def _release(self):
        """Stop the worker and let the device go (what close() does; the
        worker is only told to stop when the last handle went in it)."""
        w = self._worker
        if w is not None:
            self._worker = None
            self._queue.put(None)
            if w is not threading.current_thread():
                w.join()
        if self._own and self.device is not None:
            dev, self.device = self.device, None
            _release_device(dev)

    def close(self):
        """Stop the prefetch worker; let the device offload() opened go
        (handles keep their allocations)."""
        self._release()
