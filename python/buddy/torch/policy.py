# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.policy - the policies and what each does with a saved
activation: their names, the device target and codec they take, vDNN-dyn's
budget, CSWAP's choice by predicted cost (buddy.torch.calibration, and
measured on the GPU), and Gist's encodings.  offload() takes the
decisions from _Decisions."""
import ctypes
import time

import torch

from buddy import _lib, cswap_model
from buddy.torch.calibration import _predict_in, load_calibration


POLICIES = ("none", "vdnn-all", "vdnn-conv", "vdnn-dyn", "cdma", "cdma-rle",
            "cdma-zlib", "cswap", "gist", "gist-dpr")
LOSSLESS = tuple(p for p in POLICIES if p != "gist-dpr")
NEED_PLAN = ("vdnn-conv", "gist", "gist-dpr")
CSWAP_CODECS = ("zvc", "rle", "csr", "lz4")
# Backward nodes that read only x > 0 of the tensor (ReLU's result) or
# nothing but its shape (max-pool's input, next to the indices).
BINARIZE_OK = {("ReluBackward0", "result"), ("ThresholdBackward0", "self"),
               ("MaxPool2DWithIndicesBackward0", "self")}
GPU_MIN_BYTES = 256 << 10      # smaller GPU tensors stay (min_bytes=None)


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

# The link speed cswap measured, per GPU, for the process.
_links = {}


class _Decisions:
    """offload()'s decisions: which tensors a policy offloads, and how."""

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
