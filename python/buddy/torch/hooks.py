# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.hooks - offload(), the context manager: its arguments, the
saved-tensor pack and unpack hooks, the plan a policy learns in its first
step, and the release of what the context took."""
import os
import sys
import threading
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

import buddy
from buddy import _lib
from buddy.gpu_offload import FULL_ERRNOS, GpuOffload, View
from buddy.pinned_pool import PinnedPool
from buddy.torch.calibration import load_calibration
from buddy.torch.handles import _Kept, _Saved
from buddy.torch.plan import Plan, _is_param, _walk_saved
from buddy.torch.policy import (CSWAP_CODECS, GPU_MIN_BYTES, NEED_PLAN,
                                POLICIES, _check_codec, _check_target,
                                _Decisions)
from buddy.torch.prefetch import _Prefetch
from buddy.torch.resources import (SLAB_BYTES, _acquire_device,
                                   _cuda_present, _default_pinned_limit,
                                   _gpu_resources, _release_device)
from buddy.torch.stats import OffloadStats, _warn_once


def _compiling():
    """True while torch.compile traces (torch 2.x; never on 1.13)."""
    comp = getattr(torch, "compiler", None)
    f = getattr(comp, "is_compiling", None)
    if f is None:
        dyn = sys.modules.get("torch._dynamo")
        f = getattr(dyn, "is_compiling", None)
    return bool(f()) if f is not None else False


class offload(_Decisions, _Prefetch):
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
