# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch - keep the activations PyTorch saves for backward in buddy
memory (issue 14's training policies).

    import buddy.torch
    with buddy.torch.offload(policy="vdnn-all") as off:
        loss = model(x).sum()
    loss.backward()
    print(off.stats)

offload() is a context manager over torch.autograd.graph.saved_tensors_hooks:
during forward, pack() copies each saved activation into a new buddy
allocation and autograd keeps only a handle; during backward, unpack() reads
it back into a new tensor.  The allocation is freed when autograd drops the
handle (after backward, or with the graph).

What torch 1.13's hooks do, and what pack() does about it:
  - pack also receives parameters (and views of them, such as the
    transposed weight of a Linear): they are kept as they are, since they
    live anyway;
  - pack receives the same tensor more than once (a ReLU's output saved by
    the ReLU and by the max-pool after it): one allocation serves both,
    found by data pointer, dtype, shape, stride and _version while the
    first tensor is alive (a weak reference proves its memory was not
    reused);
  - hooks bypass autograd's check that a saved tensor was not modified in
    place, so pack copies synchronously: the value saved is the value at
    pack time, as without hooks.

Policies (more to come: vdnn-conv, vdnn-dyn, cswap, gist):
  vdnn-all  every saved activation, uncompressed: codec none, target 1x
  cdma      every saved activation, compressed with ZVC (cDMA's codec) at
            the target ratio given (default 2x)

Unpack is synchronous here; prefetching ahead of backward is not done yet.
"""
import weakref

import torch
from torch.autograd.graph import saved_tensors_hooks

import buddy

POLICIES = {
    "vdnn-all": {"codec": "none", "target": "1x"},
    "cdma": {"codec": "zvc", "target": "2x"},
}


class OffloadStats:
    """Counters of one offload() context.

    packs: pack() calls; params: parameters (and their views) kept;
    duplicates: packs served by an earlier allocation; kept: activations
    not offloaded (not on the CPU, not contiguous, or below min_bytes);
    offloaded, offloaded_bytes: allocations made and their bytes (the
    logical bytes offloaded); unpacks, unpacked_bytes: reads back;
    live_bytes, peak_live_bytes: bytes in live allocations now and at most;
    timeline: (event, live_bytes) at every pack and unpack, event "pack" or
    "unpack".
    """

    def __init__(self):
        self.packs = self.params = self.duplicates = self.kept = 0
        self.offloaded = self.offloaded_bytes = 0
        self.unpacks = self.unpacked_bytes = 0
        self.live_bytes = self.peak_live_bytes = 0
        self.timeline = []

    def as_dict(self):
        d = dict(vars(self))
        d.pop("timeline")
        return d

    def __repr__(self):
        return f"OffloadStats({self.as_dict()})"


class _Saved:
    """A saved activation in a buddy allocation; freed with the handle."""
    __slots__ = ("alloc", "shape", "dtype", "nbytes", "stats", "__weakref__")

    def __init__(self, alloc, t, stats):
        self.alloc, self.shape, self.dtype = alloc, t.shape, t.dtype
        self.nbytes, self.stats = t.numel() * t.element_size(), stats
        stats.live_bytes += self.nbytes
        stats.peak_live_bytes = max(stats.peak_live_bytes, stats.live_bytes)

    def __del__(self):
        self.alloc.close()
        self.stats.live_bytes -= self.nbytes


def _is_param(t):
    base = t._base if t._base is not None else t
    return isinstance(base, torch.nn.Parameter) or \
        (base.is_leaf and base.requires_grad)


class offload:
    """Context manager: saved activations go to buddy allocations.

    policy: a key of POLICIES; device: a buddy.Device (default: a new one
    on $BUDDY_DEVICE or /dev/buddy, closed on exit); target, codec:
    override the policy's; min_bytes: smaller tensors stay in memory;
    label: the allocations' label.
    """

    def __init__(self, policy="vdnn-all", device=None, target=None,
                 codec=None, min_bytes=0, label="buddy.torch"):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy '{policy}' (known: "
                             f"{', '.join(sorted(POLICIES))})")
        self.policy = policy
        self.target = target or POLICIES[policy]["target"]
        self.codec = codec or POLICIES[policy]["codec"]
        self.min_bytes, self.label = min_bytes, label
        self._own = device is None
        self.device = buddy.Device() if device is None else device
        self.stats = OffloadStats()
        self._seen = {}
        self._hooks = None

    def _key(self, t):
        return (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()),
                t._version)

    def _pack(self, t):
        st = self.stats
        st.packs += 1
        if _is_param(t):
            st.params += 1
            return t
        nbytes = t.numel() * t.element_size()
        if t.device.type != "cpu" or not t.is_contiguous() or \
                nbytes == 0 or nbytes < self.min_bytes:
            st.kept += 1
            return t
        key = self._key(t)
        seen = self._seen.get(key)
        if seen is not None:
            ref, h = seen
            h = h()
            if ref() is not None and h is not None:
                st.duplicates += 1
                return h
        a = self.device.alloc(nbytes, target=self.target, codec=self.codec,
                              label=self.label)
        try:
            a.write(t.detach())       # synchronous: the value at pack time
        except BaseException:
            a.close()
            raise
        h = _Saved(a, t, st)
        seen_map = self._seen
        self._seen[key] = (weakref.ref(t, lambda _r, k=key:
                                       seen_map.pop(k, None)),
                           weakref.ref(h))
        st.offloaded += 1
        st.offloaded_bytes += nbytes
        st.timeline.append(("pack", st.live_bytes))
        return h

    def _unpack(self, h):
        if not isinstance(h, _Saved):
            return h
        out = torch.empty(h.shape, dtype=h.dtype)
        h.alloc.read_into(out)
        st = self.stats
        st.unpacks += 1
        st.unpacked_bytes += h.nbytes
        st.timeline.append(("unpack", st.live_bytes))
        return out

    def __enter__(self):
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        self._hooks = None
        self._seen.clear()

    def close(self):
        """Close the device offload() opened itself (handles keep theirs)."""
        if self._own:
            self.device.close()
