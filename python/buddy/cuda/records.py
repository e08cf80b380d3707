# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The record file: what the hook measured in one process, for
`buddyctl profile` to turn into its report.

One file per process, DIR/cuda-PID.tsv, written as the run goes (a
killed process leaves every snapshot it finished).  UTF-8 text, one
record per line, fields separated by one TAB, the first field the
record's type; numbers decimal unless said, addresses hexadecimal with
0x; text fields escaped (\\\\, \\t, \\n, \\r, \\xNN for other bytes below
0x20).  Records (version 1):

  buddy-cuda-profile 1      the first line: format and version
  proc    pid ppid rank local_rank world t0 torch backend history
          from_start exe argv
                            the process (rank, local_rank, world: torchrun's
                            RANK, LOCAL_RANK, WORLD_SIZE, -1 when unset; t0:
                            Unix time of the hook's start; backend:
                            native or cudaMallocAsync; history: how stacks
                            were recorded, "off" when they were not;
                            from_start: 1 when before the first CUDA
                            allocation)
  codecs  bpc zvc bdi fpc   the codecs of the histograms, in order; "-"
                            for one not sized (its columns are zero)
  note    text              something the report should say
  label   name kind site    once per label, before its first block: kind
                            frame, backward, nostack or cached; site
                            "file.py:LINE function", "<backward>", ...
  snap    id t progress stop_ms copy_ms size_ms segments blocks bytes
          unread            a snapshot begins: t seconds since t0,
                            progress the backward passes begun, stop_ms
                            the program's wait, copy_ms of which waiting
                            for copies, size_ms sizing; bytes of its
                            blocks, unread of those not read
  seg     snap seg device addr size stream pool type expandable
                            a segment (seg: its index in the snapshot;
                            pool "a,b", "0,0" the default pool; type large
                            or small; expandable 0 or 1)
  blk     snap seg off size requested state label entries unread
          h[4][6] f[4]      a block at offset off of segment seg, state a
                            (active: a storage), p (freed, a stream still
                            uses it) or i (cached free); entries sized,
                            bytes unread; per codec the entries of each
                            size code (zero, 8, 32, 64, 96 B, raw) and the
                            Fig. 3 bytes
  drop    id                the schedule dropped snapshot id (thinning)
  end     t backward allocations record_s kept
                            the process exits: backward passes, CUDA
                            allocations (memory_stats), seconds the stack
                            recording cost them (estimated), the snapshot
                            ids kept (comma-separated, "-" for none)

A snapshot's blocks follow its snap line and its segments; a later snap
line ends it.  Without an end line the process did not exit normally:
every snapshot not dropped counts.

The driver API interposer (tools/profile/cuda_driver/, `buddyctl profile
--cuda=driver`) writes the same records for any CUDA program, with these
values: proc's torch "-", backend "driver", history "native"; label kind
"native", site "object+0xOFFSET symbol"; snap's progress the allocation
calls made so far, stop_ms the snapshot's duration (the program is not
stopped: only its allocation calls could wait that long); one seg per
allocation, its type the call that made it (cuMemAlloc,
cuMemAllocPitch, cuMemAllocManaged, cuMemAllocAsync,
cuMemAllocFromPoolAsync, cuMemMap), stream 0, pool "0,0", with one blk
at offset 0 in state a; end's backward 0, allocations the tracked calls,
record_s the seconds spent labelling them.
"""
import os

from .. import _codec

MAGIC = "buddy-cuda-profile"
VERSION = 1
NHIST = _codec.NC * _codec.CODE_NR
STATE_CODE = {"active": "a", "pending": "p", "inactive": "i"}
CODE_STATE = {v: k for k, v in STATE_CODE.items()}


class RecordError(ValueError):
    """A record file that does not parse: names the file, line and why."""


def escape(s):
    out = []
    for ch in str(s):
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7f:
            out.append(f"\\x{o:02x}")
        else:
            out.append(ch)
    return "".join(out)


def unescape(s):
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = s[i + 1:i + 2]
        if nxt in ("\\", "t", "n", "r"):
            out.append({"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}[nxt])
            i += 2
        elif nxt == "x" and len(s) >= i + 4:
            try:
                out.append(chr(int(s[i + 2:i + 4], 16)))
            except ValueError:
                raise ValueError(f"bad escape {s[i:i + 4]!r}") from None
            i += 4
        else:
            raise ValueError(f"bad escape {s[i:i + 2]!r}")
    return "".join(out)


class Writer:
    """Appends records to @path, flushed after each snapshot."""

    def __init__(self, path, proc, history, from_start,
                 codecs=_codec.ALL):
        self.path = path
        self.f = open(path, "w", encoding="utf-8")
        self.labels = set()
        self._line(MAGIC, VERSION)
        self._line("proc", proc["pid"], proc["ppid"], proc["rank"],
                   proc["local_rank"], proc["world"], f"{proc['t0']:.6f}",
                   escape(proc["torch"]), proc["backend"], escape(history),
                   int(from_start), escape(proc["exe"]),
                   escape(" ".join(proc["argv"])))
        self._line("codecs", *(n if codecs & (1 << c) else "-"
                                for c, n in enumerate(_codec.CODECS)))
        self.f.flush()

    def _line(self, *fields):
        self.f.write("\t".join(str(x) for x in fields) + "\n")

    def note(self, text):
        self._line("note", escape(text))
        self.f.flush()

    def snapshot(self, sid, t, progress, stop_ms, copy_ms, size_ms, snap,
                 blocks, stats):
        """One snapshot: @snap (snapshot.Snapshot), the @blocks sized (a
        list of snapshot.Block) and their @stats (staging.BlockStat)."""
        total = sum(b.size for b in blocks)
        unread = sum(s.unread for s in stats)
        self._line("snap", sid, f"{t:.6f}", progress, f"{stop_ms:.3f}",
                   f"{copy_ms:.3f}", f"{size_ms:.3f}", len(snap.segments),
                   len(blocks), total, unread)
        for g in snap.segments:
            self._line("seg", sid, g.index, g.device, f"0x{g.addr:x}",
                       g.size, g.stream, f"{g.pool[0]},{g.pool[1]}",
                       "large" if g.large else "small", int(g.expandable))
        for b, st in zip(blocks, stats):
            lab = b.label
            if lab.name not in self.labels:
                self.labels.add(lab.name)
                self._line("label", lab.name, lab.kind, escape(lab.site))
            hist = [x for row in st.hist for x in row]
            self._line("blk", sid, b.seg, b.off, b.size, b.requested,
                       STATE_CODE[b.state], lab.name, st.entries,
                       st.unread, *hist, *st.fig3)
        self.f.flush()

    def drop(self, sid):
        self._line("drop", sid)
        self.f.flush()

    def end(self, t, backward, allocations, record_s, kept):
        self._line("end", f"{t:.6f}", backward, allocations,
                   f"{record_s:.6f}",
                   ",".join(str(k) for k in kept) if kept else "-")
        self.f.flush()

    def close(self):
        if self.f:
            self.f.close()
            self.f = None


# --- reading ------------------------------------------------------------------

_PROC = ("pid", "ppid", "rank", "local_rank", "world", "t0", "torch",
         "backend", "history", "from_start", "exe", "argv")
_SNAP = ("id", "t", "progress", "stop_ms", "copy_ms", "size_ms", "segments",
         "blocks", "bytes", "unread")
_SEG = ("snap", "seg", "device", "addr", "size", "stream", "pool", "type",
        "expandable")
_BLK = ("snap", "seg", "off", "size", "requested", "state", "label",
        "entries", "unread")
_END = ("t", "backward", "allocations", "record_s", "kept")


def _num(v, what, float_ok=False):
    try:
        x = float(v) if float_ok else int(v, 0)
    except ValueError:
        raise ValueError(f"{what} {v!r} is not a number") from None
    if x < 0 and what not in ("rank", "local_rank", "world"):
        raise ValueError(f"{what} {v!r} is negative")
    return x


def read(path):
    """The records of @path as a dict: proc, codecs, notes, labels (name:
    (kind, site)), snaps (id: dict with segs and blks lists, in file
    order), dropped (set), end (dict or None).  Raises RecordError."""
    out = {"proc": None, "codecs": None, "notes": [], "labels": {},
           "snaps": {}, "dropped": set(), "end": None}
    cur = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            where = f"{path}:{n}"
            fields = line.rstrip("\n").split("\t")
            try:
                cur = _record(out, fields, cur, n)
            except (ValueError, KeyError) as e:
                raise RecordError(f"{where}: {e}") from None
    for kind in ("proc", "codecs"):
        if out[kind] is None:
            raise RecordError(f"{path}: no {kind} record")
    return out


def _record(out, fields, cur, n):
    kind = fields[0]
    if n == 1:
        if fields != [MAGIC, str(VERSION)]:
            raise ValueError(f"not a {MAGIC} {VERSION} file")
        return cur
    want = {"proc": len(_PROC), "codecs": _codec.NC, "note": 1, "label": 3,
            "snap": len(_SNAP), "seg": len(_SEG),
            "blk": len(_BLK) + NHIST + _codec.NC, "drop": 1,
            "end": len(_END)}.get(kind)
    if want is None:
        raise ValueError(f"unknown record {kind!r}")
    if len(fields) - 1 != want:
        raise ValueError(f"{kind}: {len(fields) - 1} fields, not {want}")
    v = fields[1:]
    if kind == "proc":
        p = dict(zip(_PROC, v))
        for k in ("pid", "ppid", "rank", "local_rank", "world", "from_start"):
            p[k] = _num(p[k], k)
        p["t0"] = _num(p["t0"], "t0", True)
        for k in ("torch", "history", "exe", "argv"):
            p[k] = unescape(p[k])
        out["proc"] = p
    elif kind == "codecs":
        if any(x not in (n, "-") for x, n in zip(v, _codec.CODECS)) or \
           all(x == "-" for x in v):
            raise ValueError(f"codecs {v}: not some of "
                             f"{list(_codec.CODECS)} in that order")
        out["codecs"] = list(v)
    elif kind == "note":
        out["notes"].append(unescape(v[0]))
    elif kind == "label":
        out["labels"][v[0]] = (v[1], unescape(v[2]))
    elif kind == "snap":
        s = {k: _num(x, k, k in ("t", "stop_ms", "copy_ms", "size_ms"))
             for k, x in zip(_SNAP, v)}
        if s["id"] in out["snaps"]:
            raise ValueError(f"snapshot {s['id']} twice")
        s["segs"], s["blks"] = [], []
        out["snaps"][s["id"]] = s
        return s
    elif kind == "seg":
        g = dict(zip(_SEG, v))
        for k in ("snap", "seg", "device", "addr", "size", "stream",
                  "expandable"):
            g[k] = _num(g[k], k)
        g["pool"] = tuple(int(x) for x in g["pool"].split(","))
        _in_snap(cur, g["snap"], "seg")["segs"].append(g)
    elif kind == "blk":
        b = dict(zip(_BLK, v[:len(_BLK)]))
        for k in ("snap", "seg", "off", "size", "requested", "entries",
                  "unread"):
            b[k] = _num(b[k], k)
        if b["state"] not in CODE_STATE:
            raise ValueError(f"state {b['state']!r}")
        b["state"] = CODE_STATE[b["state"]]
        if b["label"] not in out["labels"]:
            raise ValueError(f"label {b['label']} before its label record")
        nums = [_num(x, "count") for x in v[len(_BLK):]]
        b["hist"] = [nums[c * _codec.CODE_NR:(c + 1) * _codec.CODE_NR]
                     for c in range(_codec.NC)]
        b["fig3"] = nums[NHIST:]
        s = _in_snap(cur, b["snap"], "blk")
        if not any(g["seg"] == b["seg"] for g in s["segs"]):
            raise ValueError(f"block of segment {b['seg']}, not in snapshot "
                             f"{b['snap']}")
        for c in range(_codec.NC):
            if any(b["hist"][c]) and sum(b["hist"][c]) != b["entries"]:
                raise ValueError(f"{_codec.CODECS[c]}: histogram sums to "
                                 f"{sum(b['hist'][c])}, not {b['entries']}")
        if b["entries"] * _codec.ENTRY + b["unread"] != b["size"]:
            raise ValueError(f"entries {b['entries']} and unread "
                             f"{b['unread']} do not make size {b['size']}")
        s["blks"].append(b)
    elif kind == "drop":
        out["dropped"].add(_num(v[0], "id"))
    elif kind == "end":
        e = dict(zip(_END, v))
        e["t"] = _num(e["t"], "t", True)
        e["record_s"] = _num(e["record_s"], "record_s", True)
        e["backward"] = _num(e["backward"], "backward")
        e["allocations"] = _num(e["allocations"], "allocations")
        e["kept"] = [] if e["kept"] == "-" else \
            [_num(x, "kept id") for x in e["kept"].split(",")]
        out["end"] = e
    return cur


def _in_snap(cur, sid, kind):
    if cur is None or cur["id"] != sid:
        raise ValueError(f"{kind} of snapshot {sid} outside it")
    return cur


def kept(rec):
    """The snapshot ids that count, in order: the end record's, else every
    one not dropped."""
    if rec["end"] is not None:
        return list(rec["end"]["kept"])
    return [s for s in rec["snaps"] if s not in rec["dropped"]]


def files(directory):
    """The record files of @directory, by pid."""
    out = []
    for name in os.listdir(directory):
        if name.startswith("cuda-") and name.endswith(".tsv"):
            out.append(os.path.join(directory, name))
    return sorted(out, key=lambda p: int(p.rsplit("-", 1)[1][:-4])
                  if p.rsplit("-", 1)[1][:-4].isdigit() else 0)


# --- summary -----------------------------------------------------------------

def fig3_ratio(entries, fig3_bytes):
    """The Fig. 3 ratio: logical over Fig. 3 bytes (inf when nothing is
    stored, 0 without entries)."""
    if not entries:
        return 0.0
    return float("inf") if not fig3_bytes else \
        _codec.ENTRY * entries / fig3_bytes


def snap_figures(s, codec=0):
    """A snapshot's figures in both units: storage blocks (active ones)
    and segments (every block: what the hardware would hold)."""
    fig = {"t": s["t"], "progress": s["progress"], "stop_ms": s["stop_ms"],
           "bytes": {"active": 0, "pending": 0, "inactive": 0}}
    for unit, states in (("blocks", ("active",)),
                         ("segments", ("active", "pending", "inactive"))):
        ent = f3 = 0
        for b in s["blks"]:
            if b["state"] in states:
                ent += b["entries"]
                f3 += b["fig3"][codec]
        fig[unit] = fig3_ratio(ent, f3)
        fig[unit + "_entries"], fig[unit + "_fig3"] = ent, f3
    for b in s["blks"]:
        fig["bytes"][b["state"]] += b["size"]
    fig["segments_n"] = len(s["segs"])
    fig["expandable"] = sum(1 for g in s["segs"] if g["expandable"])
    fig["private_pool_bytes"] = sum(g["size"] for g in s["segs"]
                                    if g["pool"] != (0, 0))
    fig["unread"] = s["unread"]
    return fig


def _fmt(r):
    return "inf" if r == float("inf") else f"{r:.2f}"


def summary(paths):
    """Text: per process, per kept snapshot, the Fig. 3 ratio (of the
    first codec sized, BPC by default) of storage blocks and of segments,
    bytes by state, the program's stop; then the process's totals and its
    notes."""
    L = []
    for p in paths:
        rec = read(p)
        codec = next(c for c, n in enumerate(rec["codecs"]) if n != "-")
        pr = rec["proc"]
        ks = kept(rec)
        rank = f", rank {pr['rank']}" if pr["rank"] >= 0 else ""
        L.append(f"buddy.cuda: pid {pr['pid']}{rank} ({pr['exe']}), torch "
                 f"{pr['torch']}, allocator {pr['backend']}, stacks "
                 f"{pr['history']}: {len(ks)} snapshots kept of "
                 f"{len(rec['snaps'])} taken ({p})")
        L.append(f"  {'snap':>4} {'backward':>8} {'t(s)':>8} {'active':>9} "
                 f"{'cached':>9} {'stop-ms':>8}  Fig. 3 {_codec.CODECS[codec]}: "
                 f"{'blocks':>6} {'segments':>8}")
        tot = {"blocks": [0, 0], "segments": [0, 0]}
        for sid in ks:
            fg = snap_figures(rec["snaps"][sid], codec)
            for u in tot:
                tot[u][0] += fg[u + "_entries"]
                tot[u][1] += fg[u + "_fig3"]
            cached = fg["bytes"]["pending"] + fg["bytes"]["inactive"]
            L.append(f"  {sid:>4} {fg['progress']:>8} {fg['t']:>8.2f} "
                     f"{fg['bytes']['active'] / 2**20:>8.1f}M "
                     f"{cached / 2**20:>8.1f}M {fg['stop_ms']:>8.1f}  "
                     f"{'':>13}{_fmt(fg['blocks']):>6} "
                     f"{_fmt(fg['segments']):>8}")
        if ks:
            fg = snap_figures(rec["snaps"][ks[-1]], codec)
            L.append(f"  segments at the last: {fg['segments_n']}, "
                     f"{fg['expandable']} expandable, "
                     f"{fg['private_pool_bytes'] / 2**20:.1f} MiB in private "
                     "pools (CUDA graphs, MemPool)")
        L.append(f"  all kept snapshots: Fig. 3 {_codec.CODECS[codec]} "
                 f"{_fmt(fig3_ratio(*tot['blocks']))} per storage block, "
                 f"{_fmt(fig3_ratio(*tot['segments']))} per segment")
        if rec["end"] is not None:
            e = rec["end"]
            L.append(f"  {e['backward']} backward passes, {e['allocations']} "
                     f"CUDA allocations; stack recording cost an estimated "
                     f"{e['record_s']:.3f} s")
        else:
            L.append("  no end record: the process did not exit normally")
        for note in rec["notes"]:
            L.append(f"  note: {note}")
    return "\n".join(L)
