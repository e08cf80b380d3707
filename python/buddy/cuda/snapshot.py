# SPDX-License-Identifier: GPL-2.0 OR MIT
"""torch.cuda.memory_snapshot() parsed into segments and labelled blocks.

The caching allocator's snapshot is a list of segments (one cudaMalloc
region each, or with expandable segments one cuMemMap range), each with
the blocks that tile it (one storage each when allocated, cached-free
otherwise).  Two shapes are understood:

- torch 2.1 and later: a block has "address", "size", "requested_size",
  "state" and "frames" (innermost first: filename, line, name); a segment
  has "is_expandable" and "segment_pool_id" (not (0, 0): a private pool,
  CUDA graphs or torch.cuda.MemPool);
- torch 1.13 and 2.0: a block has no address: blocks follow each other in
  address order from the segment's address, so each address is the sum of
  the sizes before it; the frames sit under "history", a list of the
  allocations made in the block, newest first, each with "addr",
  "real_size" (the size asked for) and "frames".  The entry at the
  block's own address is the block's storage.

States: "active_allocated" (a live storage: "active"), "active_pending_free"
or "active_awaiting_free" (freed, a stream still uses it: "pending"),
"inactive" (cached free: "inactive").

A block's label names its site, hashed with the size asked for into a
name buddyd can take ("cu-" and 12 hex digits: printable, no '/', as the
CPU profiler's "bp-" labels).  The site is the block's first Python frame
outside torch (and outside this package): "file.py:LINE function".  A
live block without any Python frame was allocated where no Python code
runs, in backward (autograd's threads): site "<backward>" when the
allocator recorded history from the start, else "<no-stack>" (it may
predate the recording).  Pending and inactive blocks hold no storage:
"<cached>".
"""
import os
import struct

LABEL_PREFIX = "cu-"
BACKWARD = "<backward>"
NO_STACK = "<no-stack>"
CACHED = "<cached>"
ENTRY = 128

_STATES = {
    "active_allocated": "active",
    "active_pending_free": "pending",
    "active_awaiting_free": "pending",
    "inactive": "inactive",
}


class SnapshotError(ValueError):
    """A snapshot structure this parser cannot trust."""


class Label:
    __slots__ = ("name", "kind", "site", "key")

    def __init__(self, name, kind, site, key):
        self.name, self.kind, self.site, self.key = name, kind, site, key

    def __repr__(self):
        return f"Label({self.name}, {self.kind}, {self.site!r})"


class Block:
    __slots__ = ("seg", "device", "addr", "off", "size", "requested", "state",
                 "frames", "label")

    def __init__(self, seg, device, addr, off, size, requested, state,
                 frames):
        self.seg, self.device, self.addr, self.off = seg, device, addr, off
        self.size, self.requested, self.state = size, requested, state
        self.frames = frames
        self.label = None

    def __repr__(self):
        return (f"Block(seg {self.seg}, 0x{self.addr:x}+{self.size}, "
                f"{self.state}, {self.label})")


class Segment:
    __slots__ = ("index", "device", "addr", "size", "stream", "pool",
                 "large", "expandable", "blocks")

    def __init__(self, index, device, addr, size, stream, pool, large,
                 expandable):
        self.index, self.device, self.addr, self.size = index, device, addr, size
        self.stream, self.pool, self.large = stream, pool, large
        self.expandable = expandable
        self.blocks = []

    @property
    def private_pool(self):
        return tuple(self.pool) != (0, 0)


class Snapshot:
    """The parsed snapshot: @segments in address order, @fmt "2.x" or
    "1.13" (blocks without address), and what was found odd (@notes)."""

    def __init__(self, segments, fmt, notes):
        self.segments, self.fmt, self.notes = segments, fmt, notes

    def blocks(self, states=("active", "pending", "inactive")):
        for s in self.segments:
            for b in s.blocks:
                if b.state in states:
                    yield b

    def bytes(self, states=("active", "pending", "inactive")):
        return sum(b.size for b in self.blocks(states))


def _int(d, key, what, default=None):
    v = d.get(key, default)
    if v is None or isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise SnapshotError(f"{what}: {key!r} is {v!r}, not a count")
    return v


def _frames(raw, what):
    out = []
    for f in raw or []:
        if not isinstance(f, dict):
            raise SnapshotError(f"{what}: a frame is {type(f).__name__}")
        out.append((str(f.get("filename", "?")), int(f.get("line", 0) or 0),
                    str(f.get("name", "?"))))
    return out


def _history_entry(b, addr, what):
    """The 1.13/2.0 history entry of the storage at @addr (newest first),
    or None."""
    hist = b.get("history")
    if not hist:
        return None
    if not isinstance(hist, list):
        raise SnapshotError(f"{what}: history is {type(hist).__name__}")
    for h in hist:
        if isinstance(h, dict) and h.get("addr") == addr:
            return h
    return None


def parse(segments):
    """Parse the list torch.cuda.memory_snapshot() returns.  Raises
    SnapshotError naming the segment and block for what cannot be
    trusted (overlapping or out-of-segment blocks, negative sizes, a
    block size not a multiple of 128); notes what is odd but usable."""
    if not isinstance(segments, list):
        raise SnapshotError(f"the snapshot is {type(segments).__name__}, "
                            "not a list of segments")
    has_addr = any("address" in b for s in segments if isinstance(s, dict)
                   for b in s.get("blocks") or [] if isinstance(b, dict))
    fmt = "2.x" if has_addr else "1.13"
    notes = []
    out = []
    for i, s in enumerate(segments):
        what = f"segment {i}"
        if not isinstance(s, dict):
            raise SnapshotError(f"{what} is {type(s).__name__}")
        addr = _int(s, "address", what)
        size = _int(s, "total_size", what)
        pool = s.get("segment_pool_id") or (0, 0)
        seg = Segment(i, int(s.get("device", 0) or 0), addr, size,
                      int(s.get("stream", 0) or 0),
                      tuple(int(x) for x in pool),
                      s.get("segment_type", "large") == "large",
                      bool(s.get("is_expandable", False)))
        cur = addr
        for j, b in enumerate(s.get("blocks") or []):
            bw = f"{what} (0x{addr:x}), block {j}"
            if not isinstance(b, dict):
                raise SnapshotError(f"{bw} is {type(b).__name__}")
            bsize = _int(b, "size", bw)
            if bsize % ENTRY:
                raise SnapshotError(f"{bw}: size {bsize} is not a multiple "
                                    f"of {ENTRY}")
            state = _STATES.get(b.get("state"))
            if state is None:
                raise SnapshotError(f"{bw}: unknown state {b.get('state')!r}")
            if has_addr:
                baddr = _int(b, "address", bw)
                if baddr < cur:
                    raise SnapshotError(f"{bw}: address 0x{baddr:x} overlaps "
                                        "the block before it")
            else:
                baddr = cur
            if baddr + bsize > addr + size:
                raise SnapshotError(f"{bw}: 0x{baddr:x}+{bsize} runs past the "
                                    f"segment's end 0x{addr + size:x}")
            requested = b.get("requested_size")
            frames = b.get("frames")
            if frames is None and "history" in b:
                h = _history_entry(b, baddr, bw)
                if h is not None:
                    frames = h.get("frames")
                    requested = h.get("real_size", requested)
                elif state == "active":
                    notes.append(f"{bw}: no history entry at its address "
                                 f"0x{baddr:x}")
            if not isinstance(requested, int) or not 0 < requested <= bsize:
                requested = bsize
            seg.blocks.append(Block(i, seg.device, baddr, baddr - addr,
                                    bsize, requested, state,
                                    _frames(frames, bw)))
            cur = baddr + bsize
        if not has_addr and cur != addr + size and seg.blocks:
            notes.append(f"{what}: its blocks add up to {cur - addr} of "
                         f"{size} bytes")
        out.append(seg)
    out.sort(key=lambda g: (g.device, g.addr))
    for k in range(1, len(out)):
        a, b = out[k - 1], out[k]
        if a.device == b.device and a.addr + a.size > b.addr:
            raise SnapshotError(f"segments {a.index} and {b.index} overlap")
    return Snapshot(out, fmt, notes)


# --- labels -------------------------------------------------------------------

FNV_INIT = 0xcbf29ce484222325


def fnv(h, data):
    """FNV-1a 64, as tools/profile/interposer/profile_shm.h's bprof_fnv()."""
    for c in data:
        h ^= c
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def label_name(key):
    """buddyd's form, as BPROF_LABEL_FMT: a prefix and 12 hex digits of
    the key's upper bits."""
    return f"{LABEL_PREFIX}{key >> 16:012x}"


def _inside(path, dirs):
    return any(path == d or path.startswith(d + os.sep) for d in dirs)


class Labeller:
    """Labels blocks.  @skip_dirs: the directories whose frames do not
    name a block (torch's package, this package); @from_start: the
    allocator recorded history before the first CUDA allocation."""

    def __init__(self, skip_dirs, from_start):
        self.skip_dirs = [os.path.normpath(d) for d in skip_dirs if d]
        self.from_start = from_start
        self.labels = {}        # name -> Label

    def _make(self, kind, site, size):
        key = fnv(FNV_INIT, site.encode("utf-8", "replace") + b"\0")
        key = fnv(key, struct.pack("<Q", size))
        name = label_name(key)
        lab = self.labels.get(name)
        if lab is None:
            lab = self.labels[name] = Label(name, kind, site, key)
        return lab

    def site(self, frames):
        """The first frame outside the skipped directories, as
        "basename:line function", or None."""
        for filename, line, name in frames:
            if filename.startswith("<") or \
               _inside(os.path.normpath(filename), self.skip_dirs):
                continue
            return f"{os.path.basename(filename)}:{line} {name}"
        return None

    def label(self, block):
        if block.state != "active":
            block.label = self._make("cached", CACHED, 0)
            return block.label
        site = self.site(block.frames)
        if site is not None:
            block.label = self._make("frame", site, block.requested)
        elif block.frames:
            # every frame in torch (a thread of its own): the innermost
            f = block.frames[0]
            block.label = self._make(
                "frame", f"{os.path.basename(f[0])}:{f[1]} {f[2]}",
                block.requested)
        else:
            block.label = self._make(
                "backward" if self.from_start else "nostack",
                BACKWARD if self.from_start else NO_STACK, block.requested)
        return block.label

    def label_all(self, snap):
        for b in snap.blocks():
            self.label(b)
        return snap
