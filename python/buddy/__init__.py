# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy - Buddy Compression memory from Python, over libbuddy.

A thin ctypes layer: every operation is one libbuddy call
(lib/libbuddy.h).  Arrays and tensors are read and written in place
through their buffer (numpy's ctypes pointer, torch's data_ptr(), or the
buffer protocol): no intermediate copy is made.

    import buddy, numpy as np
    with buddy.Device() as dev:             # $BUDDY_DEVICE or /dev/buddy
        a = dev.alloc(1 << 20, target="2x", codec="zvc", label="acts")
        x = np.arange(1 << 18, dtype=np.float32)
        a.write(x)
        y = np.empty_like(x)
        a.read_into(y)
        print(a.stat()["codes"], dev.info()["ratio_milli"])
"""
import ctypes
import errno
import os

from . import _lib

__version__ = "0.1"

__all__ = ["BuddyError", "Device", "Allocation", "Codec", "codec_names",
           "buffer_pointer", "live_bytes", "Aio"]


def live_bytes():
    """(live, peak): the bytes of the allocations the profiler's interposer
    (libbuddyprof.so) tracks live in this whole process now, and their
    peak, as buddyprof_live_bytes() reads them; None when the process does
    not run under it (start it with 'buddyctl profile --no-timer -- ...').
    Only allocations of at least the profiler's --min-size are tracked."""
    f = _lib.buddyprof_live_bytes
    if f is None:
        return None
    peak = ctypes.c_ulonglong()
    live = f(ctypes.byref(peak))
    return None if live < 0 else (live, peak.value)


class BuddyError(OSError):
    """A libbuddy call failed: errno, and a message naming the object."""

    def __init__(self, err, op, obj, why=None):
        err = abs(err)
        if why is None:
            why = _lib.buddy_strerror(err, op).decode(errors="replace")
        super().__init__(err, f"{obj}: {why}")


def _check(ret, op, obj):
    if ret < 0:
        raise BuddyError(ret, op, obj)
    return ret


def buffer_pointer(obj, writable):
    """(address, nbytes, keepalive) of the memory of @obj, without a copy.

    Takes a torch tensor (CPU, contiguous), a numpy array (C-contiguous), a
    writable buffer (bytearray, memoryview, array.array, ...) or, when
    @writable is false, bytes.  Anything else raises TypeError or
    ValueError naming the cause: a copy would defeat the purpose.
    """
    mod = type(obj).__module__
    if mod.startswith("torch") and hasattr(obj, "data_ptr"):
        if obj.device.type != "cpu":
            raise ValueError(f"tensor on {obj.device}: only CPU tensors")
        if not obj.is_contiguous():
            raise ValueError("tensor is not contiguous")
        return obj.data_ptr(), obj.numel() * obj.element_size(), obj
    if hasattr(obj, "__array_interface__") and hasattr(obj, "ctypes"):
        if not obj.flags["C_CONTIGUOUS"]:
            raise ValueError("array is not C-contiguous")
        if writable and not obj.flags["WRITEABLE"]:
            raise ValueError("array is read-only")
        return obj.ctypes.data, obj.nbytes, obj
    if isinstance(obj, bytes):
        if writable:
            raise ValueError("bytes are read-only")
        return ctypes.cast(ctypes.c_char_p(obj), ctypes.c_void_p).value or 0, \
            len(obj), obj
    try:
        mv = memoryview(obj)
    except TypeError:
        raise TypeError(f"{type(obj).__name__} has no buffer") from None
    if not mv.contiguous:
        raise ValueError("buffer is not contiguous")
    if mv.readonly:
        raise ValueError(f"{type(obj).__name__} buffer is read-only")
    if mv.nbytes == 0:
        return 0, 0, mv
    cbuf = (ctypes.c_char * mv.nbytes).from_buffer(mv.cast("B"))
    return ctypes.addressof(cbuf), mv.nbytes, (mv, cbuf)


def _struct_dict(s):
    out = {}
    for name, _ in s._fields_:
        v = getattr(s, name)
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif isinstance(v, ctypes.Structure):
            v = _struct_dict(v)
        elif isinstance(v, ctypes.Array):
            v = list(v)
        out[name] = v
    return out


def _close_fd(fd):
    if _lib.buddy_close is not None:
        return _lib.buddy_close(fd)
    try:
        os.close(fd)
    except OSError as e:
        return -e.errno
    return 0


class _Descriptor:
    """What a device and an allocation share: a libbuddy descriptor that
    closing (or collecting) releases."""
    fd = -1

    def fileno(self):
        return self.fd

    def close(self):
        if self.fd >= 0:
            _close_fd(self.fd)
            self.fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Device(_Descriptor):
    """The control device: @path (a node or "inproc:OPTIONS"), else what
    buddy_open(NULL) opens: $BUDDY_DEVICE, else /dev/buddy."""

    def __init__(self, path=None):
        # libbuddy resolves the default; the name is only for messages.
        self.path = path or os.environ.get("BUDDY_DEVICE") or "/dev/buddy"
        self.fd = _check(_lib.buddy_open(path.encode() if path else None),
                         _lib.OP_OPEN, self.path)
        # The right node?  Anything else answers GET_INFO with ENOTTY.
        r = _lib.buddy_get_info(self.fd, ctypes.byref(_lib.BuddyInfo()))
        if r in (-errno.ENOTTY, -errno.EINVAL):
            self.close()
            raise BuddyError(-errno.ENOTTY, _lib.OP_OPEN, self.path,
                             "not a buddy device (it does not answer "
                             "BUDDY_IOC_GET_INFO)")

    @property
    def in_process(self):
        """True for libbuddy's in-process device ("inproc:..."), whose
        descriptors io_uring cannot reach (libbuddy emulates them)."""
        return self.path.startswith("inproc")

    def info(self):
        """BUDDY_IOC_GET_INFO as a dict (struct buddy_info's fields)."""
        i = _lib.BuddyInfo()
        _check(_lib.buddy_get_info(self.fd, ctypes.byref(i)), _lib.OP_INFO,
               self.path)
        return _struct_dict(i)

    def alloc(self, size, target="1x", codec="default", label=None):
        """A new allocation of @size bytes.

        @target: a BUDDY_TARGET_* number or a name buddy_target_parse()
        takes ("1x", "2x", "4x", "16x", "4/3", "auto", "64B"...); @codec: a
        BUDDY_CODEC_* number or a name ("default", "bpc", "zvc", ...).
        """
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ValueError(f"allocation size {size!r}: a number of bytes "
                             "> 0")
        if isinstance(target, str):
            t = ctypes.c_uint()
            if _lib.buddy_target_parse(target.encode(), ctypes.byref(t)):
                raise ValueError(f"unknown target '{target}'")
            target = t.value
        if isinstance(codec, str):
            c = _lib.buddy_codec_parse(codec.encode())
            if c < 0:
                raise ValueError(f"unknown codec '{codec}'")
            codec = c
        aid = _lib.c_u64()
        name = f"allocation of {size} bytes" + (f" '{label}'" if label else "")
        fd = _check(_lib.buddy_alloc_simple(
            self.fd, size, target, codec,
            label.encode() if label is not None else None,
            ctypes.byref(aid)), _lib.OP_ALLOC, f"{self.path}: {name}")
        return Allocation(fd, aid.value, size, label)


class Allocation(_Descriptor):
    """One allocation: its descriptor; closing it frees the allocation."""

    def __init__(self, fd, aid, size, label=None):
        self.fd, self.id, self.size, self.label = fd, aid, size, label

    def _name(self):
        return f"allocation {self.id}"

    def _io(self, fn, op, obj, offset, writable):
        ptr, n, keep = buffer_pointer(obj, writable=writable)
        if offset < 0 or offset + n > self.size:
            raise ValueError(f"{self._name()}: {n} bytes at {offset} pass "
                             f"its end ({self.size})")
        r = _check(fn(self.fd, ptr, n, offset), op, self._name())
        del keep
        if r != n:
            raise BuddyError(-errno.EIO, op, self._name())
        return r

    def write(self, obj, offset=0):
        """Write all the bytes of @obj at @offset; returns their number."""
        return self._io(_lib.buddy_pwrite, _lib.OP_WRITE, obj, offset, False)

    def read_into(self, obj, offset=0):
        """Fill @obj with the bytes at @offset; returns their number."""
        return self._io(_lib.buddy_pread, _lib.OP_READ, obj, offset, True)

    def stat(self):
        """BUDDY_IOC_ALLOC_STAT as a dict (struct buddy_alloc_stat's
        fields; "codes" cut to the six size codes, by name)."""
        st = _lib.BuddyAllocStat()
        _check(_lib.buddy_alloc_stat(self.fd, ctypes.byref(st)),
               _lib.OP_STAT, self._name())
        d = _struct_dict(st)
        d["codes"] = dict(zip(_lib.BUDDY_CODE_NAMES, d["codes"]))
        return d


class Aio:
    """An io_uring context of libbuddy (buddy_aio_init(), libbuddy_aio.c):
    reads of allocations queued, submitted together, several in flight,
    reaped as they complete.  Like libbuddy's, one context serves one
    thread.  @depth: submission queue entries.  The buffers must stay
    alive until their completion is reaped: read_into() keeps them until
    wait() returns their completion.
    """

    def __init__(self, depth=8):
        if _lib.buddy_aio_init is None:
            raise OSError(errno.ENOSYS, f"{_lib.path} has no buddy_aio_*")
        err = ctypes.c_int()
        self._ctx = _lib.buddy_aio_init(depth, ctypes.byref(err))
        if not self._ctx:
            raise OSError(-err.value, f"buddy_aio_init({depth}): "
                          f"{os.strerror(-err.value)}")
        self._keep = {}
        self._comp = (_lib.BuddyAioCompletion * (2 * depth))()

    def read_into(self, alloc, obj, user_data, offset=0):
        """Queue a read of @alloc's bytes at @offset into all of @obj."""
        ptr, n, keep = buffer_pointer(obj, writable=True)
        if offset < 0 or offset + n > alloc.size:
            raise ValueError(f"{alloc._name()}: {n} bytes at {offset} pass "
                             f"its end ({alloc.size})")
        _check(_lib.buddy_aio_read(self._ctx, alloc.fd, ptr, n, offset,
                                   user_data), _lib.OP_READ, alloc._name())
        self._keep[user_data] = keep

    def submit(self):
        """Hand what is queued to the kernel; the number submitted."""
        return _check(_lib.buddy_aio_submit(self._ctx), _lib.OP_READ,
                      "io_uring")

    def wait(self):
        """Submit, wait for at least one completion, and return every one
        available: [(user_data, bytes read or -errno)]."""
        n = _check(_lib.buddy_aio_wait(self._ctx, self._comp,
                                       len(self._comp)),
                   _lib.OP_READ, "io_uring")
        out = [(c.user_data, c.res) for c in self._comp[:n]]
        for ud, _ in out:
            self._keep.pop(ud, None)
        return out

    @property
    def pending(self):
        """Reads queued or in flight, not reaped yet."""
        return _lib.buddy_aio_pending(self._ctx)

    def close(self):
        """Wait for what is in flight, then free the ring."""
        if self._ctx:
            while self.pending:
                self.wait()
            _lib.buddy_aio_exit(self._ctx)
            self._ctx = None

    def __del__(self):
        self.close()


def _need_tcodec():
    if _lib.buddy_tcodec_find is None:
        raise ImportError(f"buddy: {_lib.path} has no whole-buffer codecs "
                          "(buddy_tcodec_*): rebuild libbuddy")


def codec_names():
    """Names of libbuddy's whole-buffer codecs (lib/tcodec.h)."""
    _need_tcodec()
    return [_lib.buddy_tcodec_name(i).decode()
            for i in range(_lib.buddy_tcodec_count())]


class Codec:
    """A whole-buffer codec of libbuddy (buddy_tcodec_*): cDMA's ZVC, RLE
    and zlib, LZ4, Gist's CSR, Binarize and DPR.  Lossy (DPR) and mask
    (Binarize) codecs must be asked for with allow_lossy / allow_mask.

    encode(obj) returns a memoryview of the encoded bytes; decode(src, out)
    fills @out (a tensor, array or writable buffer of the original length).
    """

    def __init__(self, name, allow_lossy=False, allow_mask=False):
        _need_tcodec()
        allow = (_lib.BUDDY_TCODEC_LOSSY if allow_lossy else 0) | \
            (_lib.BUDDY_TCODEC_MASK if allow_mask else 0)
        idx = _lib.buddy_tcodec_find(name.encode(), allow)
        if idx in (-errno.ENOENT, -errno.EPERM):
            why = "no such codec" if idx == -errno.ENOENT else \
                "lossy or mask codec not allowed (pass allow_lossy or " \
                "allow_mask)"
            raise ValueError(f"codec '{name}': {why}")
        if idx < 0:
            raise OSError(-idx, f"codec '{name}': {os.strerror(-idx)}")
        self.idx, self.name = idx, name
        self.flags = _lib.buddy_tcodec_flags(idx)
        self.lossy = bool(self.flags & _lib.BUDDY_TCODEC_LOSSY)
        self.mask = bool(self.flags & _lib.BUDDY_TCODEC_MASK)
        self.lossless = not (self.lossy or self.mask)

    def bound(self, nbytes):
        return _lib.buddy_tcodec_bound(self.idx, nbytes)

    def _run(self, fn, src, dst):
        """fn(idx, src, srclen, dst, dstlen) on the two buffers' memory:
        (its result, srclen, dstlen); -errno raises OSError."""
        sptr, sn, skeep = buffer_pointer(src, writable=False)
        dptr, dn, dkeep = buffer_pointer(dst, writable=True)
        r = fn(self.idx, sptr, sn, dptr, dn)
        del skeep, dkeep
        if r < 0:
            what = "encoding" if fn is _lib.buddy_tcodec_encode else \
                f"decoding to {dn} bytes"
            raise OSError(-r, f"codec {self.name}: {what} from {sn} bytes: "
                          f"{os.strerror(-r)}")
        return r

    def encode(self, obj):
        n = buffer_pointer(obj, writable=False)[1]
        out = bytearray(max(self.bound(n), 1))
        r = self._run(_lib.buddy_tcodec_encode, obj, out)
        return memoryview(out)[:r]

    def decode(self, src, out):
        self._run(_lib.buddy_tcodec_decode, src, out)
        return out

    def __repr__(self):
        return f"Codec({self.name!r})"
