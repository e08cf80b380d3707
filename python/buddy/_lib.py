# SPDX-License-Identifier: GPL-2.0 OR MIT
"""ctypes bindings of libbuddy (lib/libbuddy.h) and of the uapi
structs it fills (uapi/linux/buddy.h).

The library is found, in order, at $BUDDY_LIBBUDDY, in the source tree's
build/lib/ (for tests from the tree), and by the dynamic loader as
libbuddy.so.1 (after "make install" and ldconfig).  Without it the
package still imports (its libbuddy-free modules, buddy.cuda and
buddy._codec, work) and every libbuddy call raises the ImportError that
says why it did not load.  Nothing libbuddy does is done here: these are
declarations only.  The struct layouts are checked against the C headers
by python/tests/test_buddy.py.
"""
import ctypes

from . import _lib_path

c_u32 = ctypes.c_uint32
c_u64 = ctypes.c_uint64
c_s32 = ctypes.c_int32

# uapi/linux/buddy.h
BUDDY_MAX_NODES = 64
BUDDY_LABEL_LEN = 32
BUDDY_CODE_SLOTS = 16
BUDDY_CODE_NAMES = ("zero", "c8", "c32", "c64", "c96", "raw")
BUDDY_CODEC_NR = 6                  # BUDDY_CODEC_DEFAULT .. BUDDY_CODEC_NONE

# enum buddy_op of libbuddy.h, for buddy_strerror()
OP_OPEN, OP_INFO, OP_ALLOC, OP_READ, OP_WRITE, OP_STAT = range(6)


class BuddyInfo(ctypes.Structure):
    """struct buddy_info"""
    _fields_ = [
        ("abi_version", c_u32), ("max_ratio", c_u32),
        ("features", c_u64), ("codecs", c_u64),
        ("device_bytes", c_u64), ("device_used", c_u64),
        ("buddy_bytes", c_u64), ("buddy_used", c_u64),
        ("logical_bytes", c_u64),
        ("ratio_milli", c_u32), ("nr_allocs", c_u32),
        ("device_node", c_s32), ("buddy_node", c_s32),
        ("nr_nodes", c_u32), ("chunk_bytes", c_u32),
        ("device_node_pages", c_u64 * BUDDY_MAX_NODES),
        ("buddy_node_pages", c_u64 * BUDDY_MAX_NODES),
    ]


class BuddyCounters(ctypes.Structure):
    """struct buddy_counters"""
    _fields_ = [(n, c_u64) for n in (
        "entry_reads", "entry_writes",
        "device_sectors_read", "device_sectors_written",
        "buddy_sectors_read", "buddy_sectors_written",
        "buddy_accesses", "overflows")]


class BuddyAllocStat(ctypes.Structure):
    """struct buddy_alloc_stat"""
    _fields_ = [
        ("id", c_u64), ("size", c_u64),
        ("target", c_u32), ("codec", c_u32),
        ("owner_uid", c_u32), ("owner_pid", c_u32),
        ("label", ctypes.c_char * BUDDY_LABEL_LEN),
        ("comm", ctypes.c_char * 16),
        ("device_bytes", c_u64), ("buddy_bytes", c_u64),
        ("nr_entries", c_u64),
        ("target_source", c_u32), ("reserved", c_u32),
        ("codes", c_u64 * BUDDY_CODE_SLOTS),
        ("counters", BuddyCounters),
        ("link_ns", c_u64),
        ("window_faults", c_u64), ("window_hits", c_u64),
        ("window_writebacks", c_u64), ("window_evictions", c_u64),
        ("window_resident", c_u64),
        ("link_requests", c_u64),
    ]


# The package imports without libbuddy (a machine without liburing or
# liblz4, such as a GPU node, still runs buddy.cuda): every libbuddy call
# then raises the ImportError that says why the library did not load.
try:
    lib, path = _lib_path.load("BUDDY_LIBBUDDY", "libbuddy.so.1", "libbuddy",
                               "make lib")
    load_error = None
except ImportError as e:
    lib, path, load_error = None, None, e


def _unloaded(name):
    def call(*args, **kwargs):
        raise ImportError(str(load_error))
    call.__name__ = name
    return call


def _fn(name, restype, *argtypes, optional=False):
    if lib is None:
        return _unloaded(name)
    f = getattr(lib, name, None)
    if f is None:
        if optional:
            return None
        raise ImportError(f"buddy: {path} lacks {name}")
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
c_size_t, c_ssize_t = ctypes.c_size_t, ctypes.c_ssize_t

buddy_open = _fn("buddy_open", c_int, c_char_p)
buddy_get_info = _fn("buddy_get_info", c_int, c_int,
                     ctypes.POINTER(BuddyInfo))
buddy_alloc_simple = _fn("buddy_alloc_simple", c_int, c_int, c_u64,
                         ctypes.c_uint, ctypes.c_uint, c_char_p,
                         ctypes.POINTER(c_u64))
buddy_pread = _fn("buddy_pread", c_ssize_t, c_int, c_void_p, c_size_t, c_u64)
buddy_pwrite = _fn("buddy_pwrite", c_ssize_t, c_int, c_void_p, c_size_t,
                   c_u64)
buddy_alloc_stat = _fn("buddy_alloc_stat", c_int, c_int,
                       ctypes.POINTER(BuddyAllocStat))
buddy_strerror = _fn("buddy_strerror", c_char_p, c_int, c_int)
buddy_target_parse = _fn("buddy_target_parse", c_int, c_char_p,
                         ctypes.POINTER(ctypes.c_uint))
buddy_target_name = _fn("buddy_target_name", c_char_p, ctypes.c_uint)
buddy_codec_parse = _fn("buddy_codec_parse", c_int, c_char_p)
buddy_codec_name = _fn("buddy_codec_name", c_char_p, ctypes.c_uint)
# The in-process backend's close (libbuddy with the inproc device); else
# close(2) is the way to free an allocation.
buddy_close = _fn("buddy_close", c_int, c_int, optional=True)

# Whole-buffer codecs (libbuddy_tcodec.c over tcodec.h; optional so that an
# older libbuddy still serves the device calls).
BUDDY_TCODEC_LOSSY, BUDDY_TCODEC_MASK, BUDDY_TCODEC_WORDS = 1, 2, 4
buddy_tcodec_count = _fn("buddy_tcodec_count", c_int, optional=True)
buddy_tcodec_find = _fn("buddy_tcodec_find", c_int, c_char_p, ctypes.c_uint,
                        optional=True)
buddy_tcodec_name = _fn("buddy_tcodec_name", c_char_p, c_int, optional=True)
buddy_tcodec_flags = _fn("buddy_tcodec_flags", c_int, c_int, optional=True)
buddy_tcodec_bound = _fn("buddy_tcodec_bound", c_size_t, c_int, c_size_t,
                         optional=True)
buddy_tcodec_encode = _fn("buddy_tcodec_encode", c_ssize_t, c_int, c_void_p,
                          c_size_t, c_void_p, c_size_t, optional=True)
buddy_tcodec_decode = _fn("buddy_tcodec_decode", c_int, c_int, c_void_p,
                          c_size_t, c_void_p, c_size_t, optional=True)

# The profiler's interposer (libbuddyprof.so, preloaded by buddyctl
# profile): the live bytes it tracks for the whole process.  Looked up in
# the process's global symbols; None when it is not preloaded.
try:
    buddyprof_live_bytes = ctypes.CDLL(None).buddyprof_live_bytes
    buddyprof_live_bytes.restype = ctypes.c_longlong
    buddyprof_live_bytes.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)]
except AttributeError:
    buddyprof_live_bytes = None

# io_uring reads (libbuddy_aio.c; optional: an older libbuddy lacks them).


class BuddyAioCompletion(ctypes.Structure):
    """struct buddy_aio_completion"""
    _fields_ = [("user_data", c_u64), ("res", ctypes.c_int64)]


buddy_aio_init = _fn("buddy_aio_init", c_void_p, ctypes.c_uint,
                     ctypes.POINTER(c_int), optional=True)
buddy_aio_exit = _fn("buddy_aio_exit", None, c_void_p, optional=True)
buddy_aio_read = _fn("buddy_aio_read", c_int, c_void_p, c_int, c_void_p,
                     c_size_t, c_u64, c_u64, optional=True)
buddy_aio_submit = _fn("buddy_aio_submit", c_int, c_void_p, optional=True)
buddy_aio_wait = _fn("buddy_aio_wait", c_int, c_void_p,
                     ctypes.POINTER(BuddyAioCompletion), ctypes.c_uint,
                     optional=True)
buddy_aio_pending = _fn("buddy_aio_pending", ctypes.c_uint, c_void_p,
                        optional=True)
