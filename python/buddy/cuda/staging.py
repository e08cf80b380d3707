# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The copy plan and the copy/size pipeline.

Blocks reach the host in large pieces: a piece is a run of blocks that
follow each other in one segment, at most @max_bytes long (a longer block
is cut into several pieces).  A piece never spans two segments, even when
they are adjacent in the address space: a copy across two cudaMalloc
regions fails (cudaErrorInvalidValue), and two cuMemMap ranges of
expandable segments need not be one mapping either.

The pipeline keeps two host buffers: while piece k is sized (the C
library, on all cores, the GIL released), piece k + 1 copies into the
other buffer.  The device is anything with

    buffer(i)        the host address of buffer i (0 or 1)
    copy(i, piece)   start copying @piece into buffer i
    wait(i)          wait for that copy; raises when it failed

(hook.py's CUDA device; the tests' fake device over host memory).  A
piece whose copy fails is not sized: its bytes count as unread, and the
pipeline goes on.
"""
import time

from .. import _codec

ENTRY = 128


class Piece:
    """@addr..@addr + nbytes of segment @seg (device @device), made of
    @parts: (block index, bytes) in address order."""
    __slots__ = ("seg", "device", "addr", "parts", "nbytes")

    def __init__(self, seg, device, addr):
        self.seg, self.device, self.addr = seg, device, addr
        self.parts = []
        self.nbytes = 0

    def __repr__(self):
        return f"Piece(seg {self.seg}, 0x{self.addr:x}+{self.nbytes})"


def plan(blocks, max_bytes):
    """The pieces that copy @blocks (a list of snapshot.Block, those to
    size, in segment and address order as Snapshot.blocks() gives them).
    Part i of a piece names its block by its index in @blocks."""
    if max_bytes < ENTRY or max_bytes % ENTRY:
        raise ValueError(f"piece size {max_bytes}: not a multiple of {ENTRY}")
    pieces = []
    cur = None
    for bi, b in enumerate(blocks):
        off = 0
        while off < b.size:
            at = b.addr + off
            if cur is None or cur.seg != b.seg or \
               cur.addr + cur.nbytes != at or cur.nbytes == max_bytes:
                cur = Piece(b.seg, b.device, at)
                pieces.append(cur)
            n = min(b.size - off, max_bytes - cur.nbytes)
            cur.parts.append((bi, n))
            cur.nbytes += n
            off += n
    return pieces


class BlockStat:
    """What the pipeline measured of one block: entries sized, per codec
    the size-code histogram and Fig. 3 bytes, bytes not read."""
    __slots__ = ("entries", "hist", "fig3", "unread")

    def __init__(self):
        self.entries = 0
        self.hist = [[0] * _codec.CODE_NR for _ in range(_codec.NC)]
        self.fig3 = [0] * _codec.NC
        self.unread = 0

    def add(self, st):
        self.entries += st.entries
        for c in range(_codec.NC):
            for q in range(_codec.CODE_NR):
                self.hist[c][q] += st.hist[c][q]
            self.fig3[c] += st.fig3_bytes[c]


class Timing:
    """Seconds the pipeline spent waiting for copies and sizing, pieces
    copied, and the failures (piece, message)."""

    def __init__(self):
        self.wait_s = self.size_s = 0.0
        self.pieces = 0
        self.failed = []


def run(pieces, nblocks, device, sizer, codecs=_codec.ALL):
    """Copy and size @pieces: a list of @nblocks BlockStat, and a Timing."""
    stats = [BlockStat() for _ in range(nblocks)]
    tm = Timing()
    started = [False, False]

    def start(k):
        i = k % 2
        try:
            device.copy(i, pieces[k])
            started[i] = True
        except Exception as e:          # the device said no: not read
            started[i] = e

    if pieces:
        start(0)
    for k, pc in enumerate(pieces):
        i = k % 2
        if k + 1 < len(pieces):
            start(k + 1)
        err = started[i] if started[i] is not True else None
        if err is None:
            t0 = time.perf_counter()
            try:
                device.wait(i)
            except Exception as e:
                err = e
            tm.wait_s += time.perf_counter() - t0
        if err is not None:
            tm.failed.append((pc, str(err)))
            for bi, n in pc.parts:
                stats[bi].unread += n
            continue
        t0 = time.perf_counter()
        res = sizer.ranges(device.buffer(i), [n for _, n in pc.parts], codecs)
        tm.size_s += time.perf_counter() - t0
        for (bi, _), st in zip(pc.parts, res):
            stats[bi].add(st)
        tm.pieces += 1
    return stats, tm
