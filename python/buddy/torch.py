# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch - keep the activations PyTorch saves for backward in buddy
memory: vDNN, cDMA, CSWAP and Gist as training policies (issue 14).

    import buddy.torch as bt
    plan = bt.probe(lambda: loss_fn(model(x), y))      # once: who saves what
    with bt.offload(policy="gist", plan=plan) as off:
        loss = loss_fn(model(x), y)
    loss.backward()
    print(off.stats)

offload() is a context manager over torch.autograd.graph.saved_tensors_hooks:
during forward, pack() copies each saved activation into a buddy allocation
(raw, compressed by the device, or encoded in userspace by one of libbuddy's
whole-buffer codecs, buddy.Codec) and autograd keeps only a handle; during
backward, unpack() reads it back, from a prefetch a worker thread made if
it guessed right.  The allocation is freed when autograd drops the handle.

What torch 1.13's hooks do, and what pack() does about it:
  - pack also receives parameters (and views of them): kept as they are;
  - pack receives the same tensor more than once (a ReLU's output saved by
    the ReLU and by the max-pool after it): one handle serves both, found
    by data pointer, dtype, shape, stride and _version while the first
    tensor is alive;
  - hooks bypass autograd's in-place check, so pack copies synchronously;
  - pack does not know which operation saves the tensor.  probe() finds
    out by a walk of grad_fn: it runs one forward with hooks that hand out
    numbered tokens, walks the graph from the output, and reads every
    node's _saved_* attributes, whose unpack names the token: for every
    pack, in order, the backward nodes that read the tensor.  vdnn-conv
    (inputs of ConvolutionBackward), Binarize (only ReluBackward and
    MaxPool2DWithIndicesBackward read it) and the layer types of the
    accounting come from that plan.  A pack whose shape differs from the
    plan's is treated as unknown (offloaded losslessly, never binarized).
  - unpack is called lazily and 1.13 has no hook for the next backward
    node: prefetch predicts by reverse pack order (exact for sequential
    networks, approximate for branches) and stats.prefetch_* say how often
    it was right.

Policies (LOSSLESS: gradients bit-identical to no policy):
  none       nothing offloaded; the same accounting (the baseline)
  vdnn-all   every saved activation, uncompressed (device codec none, 1x)
  vdnn-conv  only the inputs of convolutions (needs a plan)
  vdnn-dyn   the fewest, earliest-saved activations that bring the saved
             bytes kept in memory under budget= (vDNN's dynamic policy;
             with a plan, else greedily once the budget is full)
  cdma       every one, compressed by the device with ZVC at target 2x
  cdma-rle, cdma-zlib
             cDMA's comparison codecs, in userspace (libbuddy's codecs),
             stored at 1x
  cswap      per tensor, compress with the codec of the calibrate model
             (buddyctl calibrate) whose predicted codec time plus link
             time is least, or not at all; link_gbps= the link speed
  gist       Binarize for ReLU outputs only ReLU/max-pool backward read,
             CSR where it is smaller than the tensor, else raw
  gist-dpr   gist, and DPR (dpr_bits= 16, 10 or 8) for the rest: LOSSY
"""
import errno
import json
import queue
import threading
import time
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

import buddy

POLICIES = ("none", "vdnn-all", "vdnn-conv", "vdnn-dyn", "cdma", "cdma-rle",
            "cdma-zlib", "cswap", "gist", "gist-dpr")
LOSSLESS = tuple(p for p in POLICIES if p != "gist-dpr")
NEED_PLAN = ("vdnn-conv", "gist", "gist-dpr")
CSWAP_CODECS = ("zvc", "rle", "csr", "lz4")
# Backward nodes that read only x > 0 of the tensor (ReLU's result) or
# nothing but its shape (max-pool's input, next to the indices).
BINARIZE_OK = {("ReluBackward0", "result"), ("ThresholdBackward0", "self"),
               ("MaxPool2DWithIndicesBackward0", "self")}


def _layer(node):
    return node.rstrip("0123456789").replace("Backward", "") or "?"


class Plan:
    """What probe() learnt: for pack number i, shapes[i] and consumers[i],
    the set of (backward node type, saved attribute) that read the tensor
    (merged over the packs of the same tensor), nbytes[i], params[i] (a
    parameter) and first[i], the first pack of the same tensor."""

    def __init__(self):
        self.shapes, self.consumers, self.nbytes, self.params = [], [], [], []
        self.first = []

    def __len__(self):
        return len(self.shapes)

    def layer(self, i):
        names = sorted({_layer(n) for n, _ in self.consumers[i]})
        return "+".join(names) or "?"

    def conv_input(self, i):
        return ("ConvolutionBackward0", "input") in self.consumers[i]

    def binarizable(self, i):
        c = self.consumers[i]
        return bool(c) and c <= BINARIZE_OK


def probe(fn):
    """Run @fn (a forward returning a tensor with a grad_fn) once under
    numbering hooks and walk grad_fn: the Plan of its packs.  It is a real
    forward: batch norm's running statistics move as in any forward."""
    plan, tensors, groups, last = Plan(), [], {}, []

    def pack(t):
        i = len(plan.shapes)
        plan.shapes.append(tuple(t.shape))
        plan.nbytes.append(t.numel() * t.element_size())
        plan.consumers.append(set())
        plan.params.append(_is_param(t))
        key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
               t._version)
        groups.setdefault(key, []).append(i)
        plan.first.append(groups[key][0])
        tensors.append(t)
        return i

    def unpack(i):
        last.append(i)
        return tensors[i]

    with saved_tensors_hooks(pack, unpack):
        out = fn()
    seen, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = type(node).__name__
        for attr in dir(node):
            if not attr.startswith("_raw_saved_"):
                continue
            field = attr[len("_raw_saved_"):]
            last.clear()
            try:
                getattr(node, "_saved_" + field)
            except RuntimeError:
                continue
            for i in last:
                plan.consumers[i].add((name, field))
        stack.extend(f for f, _ in node.next_functions)
    for idx in groups.values():
        merged = set().union(*(plan.consumers[i] for i in idx))
        for i in idx:
            plan.consumers[i] = merged
    tensors.clear()
    del out
    return plan


def load_calibration(path):
    """The model "buddyctl calibrate -o PATH" wrote: {codec: {"compress",
    "decompress", "bytes": (c0, c1, c2, c3), "rae": {...}}}."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("format") != "buddy-calibration":
        raise ValueError(f"{path}: not a buddyctl calibrate model")
    out = {}
    for c in doc["codecs"]:
        out[c["name"]] = {k: tuple(c[k]["coef"]) for k in
                          ("compress", "decompress", "bytes")}
        out[c["name"]]["rae"] = {k: c[k]["rae"] for k in
                                 ("compress", "decompress", "bytes")}
        s = c.get("samples") or []
        if s:   # rows of size, sparsity, ...: what the fit has seen
            out[c["name"]]["domain"] = (max(r[0] for r in s),
                                        min(r[1] for r in s),
                                        max(r[1] for r in s))
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

    packs, params, duplicates: pack() calls, parameters kept, packs served
    by an earlier handle; kept, kept_bytes: activations left in memory;
    offloaded, offloaded_bytes: handles stored in buddy memory (the logical
    bytes offloaded); unpacks, unpacked_bytes: read back (the logical bytes
    prefetched or fetched; a duplicate is read again when the tensor its
    first unpack made is gone); unpacks_shared: unpacks served by that
    tensor; stored_bytes: what the allocations hold (a userspace codec's
    output, or 32 x the sectors the device wrote for a device-compressed
    tensor); device_sector_bytes,
    buddy_sector_bytes: 32-byte sectors the device moved for them (reads
    and writes), buddy's being Buddy's link; resident_bytes,
    peak_resident_bytes: saved activations in process memory (kept ones,
    prefetched and unpacked ones still alive); device_live_bytes,
    peak_device_bytes: logical bytes in live allocations;
    process_bytes, peak_process_bytes: the whole process's live bytes as
    the profiler's interposer tracks them (buddy.live_bytes(); None when
    the process does not run under it), sampled at every pack and unpack;
    timeline: (event, resident_bytes, device_live_bytes, process_bytes) at
    every pack and unpack;
    by_codec, by_layer: {name: [tensors, logical bytes, stored bytes]};
    prefetch_hits (ready at unpack), prefetch_late (in flight),
    prefetch_misses (first reads not prefetched); prefetch_uring:
    prefetches read through io_uring; rereads: reads of a
    duplicate whose first unpacked tensor was already freed; cswap_decisions, cswap_correct: decisions measured
    against the choice that turned out best, and how many agreed.
    """

    def __init__(self):
        self.packs = self.params = self.duplicates = 0
        self.kept = self.kept_bytes = 0
        self.offloaded = self.offloaded_bytes = self.stored_bytes = 0
        self.unpacks = self.unpacks_shared = self.unpacked_bytes = 0
        self.device_sector_bytes = self.buddy_sector_bytes = 0
        self.resident_bytes = self.peak_resident_bytes = 0
        self.device_live_bytes = self.peak_device_bytes = 0
        self.process_bytes = self.peak_process_bytes = None
        self.prefetch_hits = self.prefetch_late = self.prefetch_misses = 0
        self.prefetch_uring = 0
        self.rereads = 0
        self.cswap_decisions = self.cswap_correct = 0
        self.by_codec, self.by_layer = {}, {}
        self.timeline = []
        self._lock = threading.Lock()

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
    encoded with; stored: bytes in the allocation."""
    __slots__ = ("alloc", "shape", "dtype", "nbytes", "stats", "codec",
                 "stored", "seq", "fetch", "last", "__weakref__")

    def __init__(self, alloc, t, stats, codec, stored, seq):
        self.alloc, self.shape, self.dtype = alloc, t.shape, t.dtype
        self.nbytes, self.stats = t.numel() * t.element_size(), stats
        self.codec, self.stored, self.seq = codec, stored, seq
        self.fetch = self.last = None
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


class _Fetch:
    """A prefetch: done when the worker has read the handle."""
    __slots__ = ("event", "tensor", "error")

    def __init__(self):
        self.event, self.tensor, self.error = threading.Event(), None, None


def _is_param(t):
    base = t._base if t._base is not None else t
    return isinstance(base, torch.nn.Parameter) or \
        (base.is_leaf and base.requires_grad)


def _count(table, name, logical, stored):
    row = table.setdefault(name, [0, 0, 0])
    row[0] += 1
    row[1] += logical
    row[2] += stored


class offload:
    """Context manager: saved activations go to buddy allocations.

    policy: one of POLICIES; device: a buddy.Device (default: a new one on
    $BUDDY_DEVICE or /dev/buddy, closed by close()); plan: probe()'s Plan
    (needed by NEED_PLAN policies); target, codec: the device target and
    codec of device-compressed policies; min_bytes: smaller tensors stay in
    memory; budget: vdnn-dyn's bytes of saved activations kept in memory;
    calibration: cswap's model, a path or load_calibration()'s dict;
    link_gbps: cswap's link speed, GB/s; measure_decisions: cswap also times
    every candidate for decision accuracy; dpr_bits: gist-dpr's 16, 10 or
    8; prefetch: tensors read ahead on the worker thread (0: none);
    uring: the worker reads through libbuddy's io_uring context, all the
    queued prefetches in flight at once (default: on the kernel's
    /dev/buddy, not on the in-process device).
    """

    def __init__(self, policy="vdnn-all", device=None, plan=None, target=None,
                 codec=None, min_bytes=0, budget=None, calibration=None,
                 link_gbps=2.0, measure_decisions=False, dpr_bits=16,
                 prefetch=2, label="buddy.torch", uring=None):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy '{policy}' (known: "
                             f"{', '.join(POLICIES)})")
        if policy in NEED_PLAN and plan is None:
            raise ValueError(f"policy '{policy}' needs plan=probe(...): pack "
                             "alone cannot tell which operation saves a "
                             "tensor")
        if policy == "vdnn-dyn" and (budget is None or budget < 0):
            raise ValueError("policy 'vdnn-dyn' needs budget= (bytes >= 0)")
        if policy == "cswap" and calibration is None:
            raise ValueError("policy 'cswap' needs calibration= (a model "
                             "from 'buddyctl calibrate -o FILE')")
        if dpr_bits not in (16, 10, 8):
            raise ValueError(f"dpr_bits {dpr_bits}: 16, 10 or 8")
        if link_gbps <= 0:
            raise ValueError(f"link_gbps {link_gbps}: must be > 0")
        self.policy, self.plan, self.label = policy, plan, label
        dev_codec = {"cdma": ("2x", "zvc")}.get(policy, ("1x", "none"))
        self.target = target or dev_codec[0]
        self.dev_codec = codec or dev_codec[1]
        self.min_bytes, self.budget = min_bytes, budget
        self.link_bps = link_gbps * 1e9
        self.measure = measure_decisions
        self.prefetch_depth = prefetch if policy != "none" else 0
        self.calib = calibration
        if isinstance(calibration, str):
            self.calib = load_calibration(calibration)
        self.codecs = {}
        names = {"cdma-rle": ["rle"], "cdma-zlib": ["zlib"],
                 "cswap": list(CSWAP_CODECS), "gist": ["csr"],
                 "gist-dpr": ["csr", f"dpr{dpr_bits}"]}.get(policy, [])
        for n in names:
            self.codecs[n] = buddy.Codec(n, allow_lossy=n.startswith("dpr"))
        if policy.startswith("gist"):
            self.codecs["binarize"] = buddy.Codec("binarize", allow_mask=True)
        if policy == "cswap":
            missing = [n for n in CSWAP_CODECS if n not in self.calib]
            if missing:
                raise ValueError("calibration lacks codec(s) " +
                                 ", ".join(missing))
        self.dpr = f"dpr{dpr_bits}"
        self._own = device is None
        self.device = buddy.Device() if device is None else device
        self.stats = OffloadStats()
        self._dyn_offload = None
        if policy == "vdnn-dyn" and plan is not None:
            self._dyn_offload = self._dyn_choice()
        self._seen = {}
        self._hooks = None
        self._seq = 0
        self._order = []               # weak refs to handles, pack order
        self._next = None              # index in _order to prefetch next
        self._outstanding = 0          # prefetches not unpacked yet
        self._queue = self._worker = None
        # Prefetch reads through io_uring on the kernel's device; the
        # in-process device's descriptors are not files: a thread reads.
        self._uring = uring if uring is not None else \
            (not getattr(self.device, "in_process", True) and
             buddy._lib.buddy_aio_init is not None)

    # --- decisions ---------------------------------------------------------

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
        return self.plan is not None and i < len(self.plan) and \
            self.plan.shapes[i] == tuple(t.shape)

    def _cswap_cost(self, name, nbytes, sparsity):
        if name == "none":
            return 2 * nbytes / self.link_bps
        m = self.calib[name]
        enc = _predict_in(m, "bytes", nbytes, sparsity)
        return _predict_in(m, "compress", nbytes, sparsity) + \
            _predict_in(m, "decompress", nbytes, sparsity) + \
            2 * enc / self.link_bps

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
        best = min(costs, key=costs.get)
        self.stats.cswap_decisions += 1
        self.stats.cswap_correct += best == chosen

    def _decide(self, i, t):
        """(what, codec name): what is "keep", "device" or "user"."""
        pol, nbytes = self.policy, t.numel() * t.element_size()
        known = self._plan_ok(i, t)
        if pol == "none":
            return "keep", None
        if pol == "vdnn-conv":
            return ("device", None) if known and self.plan.conv_input(i) \
                else ("keep", None)
        if pol == "vdnn-dyn":
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

    # --- hooks -------------------------------------------------------------

    def _key(self, t):
        return (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
                t._version)

    def _pack(self, t):
        st = self.stats
        i = self._seq
        self._seq += 1
        st.packs += 1
        if _is_param(t):
            st.params += 1
            return t
        key = self._key(t)
        seen = self._seen.get(key)
        if seen is not None:
            ref, h = seen
            h = h()
            if ref() is not None and h is not None:
                st.duplicates += 1
                return h
        nbytes = t.numel() * t.element_size()
        what, cname = "keep", None
        if t.device.type == "cpu" and t.is_contiguous() and nbytes and \
                nbytes >= self.min_bytes:
            what, cname = self._decide(i, t)
        if what == "keep":
            h = _Kept(t, st)
            st.kept += 1
            st.kept_bytes += nbytes
        else:
            h = self._store(t, what, cname)
            layer = self.plan.layer(i) if self._plan_ok(i, t) else "?"
            _count(st.by_codec, cname or self.dev_codec, nbytes, h.stored)
            _count(st.by_layer, layer, nbytes, h.stored)
            self._order.append(weakref.ref(h))
        seen_map = self._seen
        self._seen[key] = (weakref.ref(t, lambda _r, k=key:
                                       seen_map.pop(k, None)),
                           weakref.ref(h))
        st.sample("pack")
        return h

    def _store(self, t, what, cname):
        st = self.stats
        nbytes = t.numel() * t.element_size()
        codec, data = None, t.detach()
        if what == "user":
            codec = self.codecs[cname]
            data = codec.encode(data)   # synchronous: the value at pack time
            stored = len(data)
            a = self.device.alloc(max(stored, 1), target="1x", codec="none",
                                  label=self.label)
        else:
            stored = nbytes
            a = self.device.alloc(nbytes, target=self.target,
                                  codec=self.dev_codec, label=self.label)
        try:
            if stored:
                a.write(data)
            if what == "device":
                stored = self._sectors_written(a, stored)
        except BaseException:
            a.close()
            raise
        st.offloaded += 1
        st.offloaded_bytes += nbytes
        st.stored_bytes += stored
        h = _Saved(a, t, st, codec, stored, len(self._order))
        return h

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
        if isinstance(h, _Kept):
            self.stats.sample("unpack")
            return h.t
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
        if f is not None:
            if f.event.is_set():
                st.prefetch_hits += 1
            else:
                st.prefetch_late += 1
                f.event.wait()
            h.fetch = None
            self._outstanding -= 1
            if f.error is not None:
                raise f.error
            out = f.tensor
        else:
            if h.last is not None:
                st.rereads += 1         # a duplicate, first tensor gone
            elif self.prefetch_depth:
                st.prefetch_misses += 1
            out = h.read()
        st.unpacks += 1
        st.unpacked_bytes += h.nbytes
        h.last = weakref.ref(out)
        st.sample("unpack")
        self._prefetch_after(h)
        return out

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
        while True:
            item = self._queue.get()
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
        flight, ud, stop = {}, 0, False
        try:
            while not stop or flight:
                items = []
                if not stop:
                    try:
                        items.append(self._queue.get(block=not flight))
                        while True:
                            items.append(self._queue.get_nowait())
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

    def __enter__(self):
        self._seq = 0
        self._order, self._next, self._outstanding = [], None, 0
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        self._hooks = None
        self._seen.clear()
        # Backward starts with the last saved: read it ahead already.
        if self.prefetch_depth and self._order and exc[0] is None:
            self._start_worker()
            self._next = len(self._order) - 1
            self._queue_prefetch()

    def close(self):
        """Stop the prefetch worker; close the device offload() opened
        itself (handles keep theirs)."""
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None
        if self._own:
            self.device.close()
