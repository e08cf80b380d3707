# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch.resources - what offload() contexts share in a process: the
buddy device, the GPU's streams and pinned host pool, and the recipe that
makes CUDA training repeat itself."""
import os
import threading

import torch

import buddy
import buddy.torch_streams
from buddy.pinned_pool import PinnedPool

SLAB_BYTES = 256 << 20         # the pinned pool's slabs (a power of two)


def _cuda_present():
    return torch.cuda.is_available()


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
