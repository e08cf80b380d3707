#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check buddyctl's output from the guest (selftests/tools/buddyctl-guest.sh).

    buddyctl_check.py RUN_OUTPUT [OUTDIR]

RUN_OUTPUT is what scripts/guest/run.sh printed; the guest script's blocks
("### BEGIN name rc=N" ... "### STDERR name" ... "### END name") are cut out
of it, kernel console lines dropped.  Every check is one TAP line; the last
line is a kselftest "# Totals:".  With OUTDIR the PNGs and the terminal
renderings are also saved there (for a person to look at).

Expectations come from the documentation (Documentation/buddyctl.rst: keys,
palette, geometry) and from what buddyctl_hold says it allocated (sizes,
labels, owners, the size code of every entry), never from buddyctl itself.
Plain python3: json, zlib, base64, struct, re.
"""
import base64
import json
import os
import re
import struct
import sys
import zlib

# ---- the documented interface ------------------------------------------------
STAT_KEYS = ["id", "size", "target", "target_bytes", "codec", "label", "owner",
             "device_bytes", "buddy_bytes", "nr_entries", "target_source",
             "ratio", "buddy_access_fraction", "histogram", "counters"]
OWNER_KEYS = ["uid", "pid", "comm"]
HIST_KEYS = ["zero", "c8", "c32", "c64", "c96", "raw"]
COUNTER_KEYS = ["entry_reads", "entry_writes", "device_sectors_read",
                "device_sectors_written", "buddy_sectors_read",
                "buddy_sectors_written", "buddy_accesses", "overflows"]
INFO_KEYS = ["device", "abi_version", "features", "codecs", "default_codec",
             "max_ratio", "carve_out_ratio", "ratio", "ratio_milli",
             "nr_allocs", "logical_bytes", "chunk_bytes", "nr_nodes",
             "numa_distance", "pools"]
POOL_KEYS = ["pool", "size", "used", "free", "node_requested", "nodes",
             "node_pages"]
PROFILE_KEYS = ["uid", "label", "target", "target_bytes", "codec"]
TARGETS = {128: "1x", 96: "4/3x", 64: "2x", 32: "4x", 8: "16x"}
CODECS = ["default", "bpc", "zvc", "bdi", "fpc", "none"]
PALETTE = [(0x08, 0x30, 0x6b), (0x21, 0x71, 0xd5), (0x20, 0xc0, 0xa0),
           (0xf5, 0xe0, 0x20), (0xf5, 0x82, 0x1e), (0xc8, 0x1e, 0x1e)]
EMPTY = (0xe6, 0xe6, 0xe6)
GLYPHS = ".:-=+#"
MIB = 1 << 20

# ---- TAP -------------------------------------------------------------------
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from tap import Tap  # noqa: E402

tap = Tap()


def ok(cond, desc, diag=None):
    return bool(tap.check(desc, cond, () if diag is None else
                          str(diag).splitlines()[:15]))


# ---- the run's blocks -------------------------------------------------------
KMSG = re.compile(r"^\[\s*\d+\.\d+\] ")


class Block:
    def __init__(self, rc):
        self.rc = rc
        self.out = []
        self.err = []

    @property
    def stdout(self):
        return "".join(line + "\n" for line in self.out)

    @property
    def stderr(self):
        return "".join(line + "\n" for line in self.err)

    def json(self):
        return json.loads(self.stdout)


def parse_run(path):
    blocks, meta = {}, {}
    cur, where = None, None
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if KMSG.match(line):
            continue
        m = re.match(r"^### BEGIN (\S+) rc=(\d+)$", line)
        if m:
            cur = Block(int(m.group(2)))
            blocks[m.group(1)] = cur
            where = cur.out
            continue
        if cur is not None and line == f"### STDERR {name_of(blocks, cur)}":
            where = cur.err
            continue
        if cur is not None and line == f"### END {name_of(blocks, cur)}":
            cur, where = None, None
            continue
        m = re.match(r"^### (IDS|PIDS|DONE|FATAL)\b ?(.*)$", line)
        if m and cur is None:
            meta[m.group(1)] = m.group(2)
            continue
        if where is not None:
            where.append(line)
    return blocks, meta


def name_of(blocks, cur):
    for k, v in blocks.items():
        if v is cur:
            return k
    return None


# ---- PNG ---------------------------------------------------------------------
def png_decode(data):
    """(width, height, rows of (r, g, b) tuples, text chunks)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, idat, text, ihdr = 8, b"", {}, None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(ctype + body) & 0xffffffff != crc:
            raise ValueError(f"bad CRC in {ctype!r}")
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"tEXt":
            k, v = body.split(b"\0", 1)
            text[k.decode()] = v.decode("latin-1")
        elif ctype == b"IEND":
            break
        pos += 12 + length
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype != 2 or interlace:
        raise ValueError(f"unexpected IHDR {ihdr}")
    raw = zlib.decompress(idat)
    stride, bpp = w * 3, 3
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 0xff
            elif ft == 2:
                line[i] = (line[i] + b) & 0xff
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 0xff
            elif ft != 0:
                raise ValueError(f"filter type {ft}")
        rows.append([tuple(line[3 * x:3 * x + 3]) for x in range(w)])
        prev = line
    return w, h, rows, text


def color_of(mean):
    """The documented colour of a mean code: interpolation, half up."""
    if mean <= 0:
        return PALETTE[0]
    if mean >= 5:
        return PALETTE[5]
    lo = int(mean)
    t = mean - lo
    return tuple(int(PALETTE[lo][k] + (PALETTE[lo + 1][k] - PALETTE[lo][k]) * t
                     + 0.5) for k in range(3))


def xterm256(c):
    """Nearest colour of the xterm palette: the 6x6x6 cube or the greys."""
    lv = [0, 95, 135, 175, 215, 255]
    idx = [min(range(6), key=lambda i: (abs(lv[i] - v), i)) for v in c]
    dc = sum((c[k] - lv[idx[k]]) ** 2 for k in range(3))
    avg = sum(c) // 3
    k = 0 if avg < 8 else min(23, (avg - 8 + 5) // 10)
    grey = 8 + 10 * k
    dg = sum((v - grey) ** 2 for v in c)
    if dg < dc:
        return 232 + k
    return 16 + 36 * idx[0] + 6 * idx[1] + idx[2]


def check_grid(rows, scale, width, cells, want_code, desc):
    """Every pixel of every cell square has the colour of its code."""
    bad = []
    nrows = (cells + width - 1) // width
    for r in range(nrows):
        for c in range(width):
            cell = r * width + c
            want = color_of(want_code(cell)) if cell < cells else EMPTY
            for dy in range(scale):
                for dx in range(scale):
                    got = rows[r * scale + dy][c * scale + dx]
                    if got != want:
                        bad.append(f"cell {cell} (row {r} col {c}) pixel "
                                   f"+{dx},+{dy}: {got} want {want}")
                        break
                else:
                    continue
                break
    ok(not bad, desc, "\n".join(bad[:10]))


# ---- terminal text ------------------------------------------------------------
ESC = re.compile(r"\x1b\[([0-9;]*)m")


def parse_color_line(line, truecolor):
    """(upper, lower) colours per half-block character of one line."""
    fg = bg = None
    cells = []
    pos = 0
    while pos < len(line):
        m = ESC.match(line, pos)
        if m:
            p = [int(x) for x in m.group(1).split(";") if x != ""] or [0]
            if p == [0]:
                fg = bg = None
            elif p == [49]:
                bg = None
            elif p[0] in (38, 48):
                v = tuple(p[2:5]) if p[1] == 2 else p[2]
                if p[0] == 38:
                    fg = v
                else:
                    bg = v
            pos = m.end()
            continue
        ch = line[pos]
        if ch == "\u2580":
            cells.append((fg, bg))
        elif ch == "\u2584":
            cells.append((bg, fg))
        pos += 1
    return cells


def check_color_text(block, cells, width, want_code, truecolor, desc,
                     legend=False):
    lines = block.out
    rows = (cells + width - 1) // width
    body = lines[1:1 + (rows + 1) // 2]
    extra = lines[1 + (rows + 1) // 2:]
    ok(len(body) == (rows + 1) // 2 and len(extra) == (1 if legend else 0),
       f"{desc}: header + {(rows + 1) // 2} lines for {rows} rows"
       + (" + legend" if legend else ""),
       f"{len(lines)} lines")
    if legend:
        ok(extra and extra[0].startswith("legend:")
           and all(nm in extra[0] for nm in
                   ["ZERO", "C8", "C32", "C64", "C96", "RAW"]),
           f"{desc}: legend line names the six codes", extra)

    def conv(code):
        c = color_of(code)
        return c if truecolor else xterm256(c)
    bad = []
    for li, line in enumerate(body):
        got = parse_color_line(line, truecolor)
        r = 2 * li
        want = []
        for c in range(width):
            up, lo = r * width + c, (r + 1) * width + c
            if up >= cells:
                break
            want.append((conv(want_code(up)),
                         conv(want_code(lo)) if r + 1 < rows and lo < cells
                         else None))
        if got != want:
            bad.append(f"line {li}: got {got[:4]}... ({len(got)}) want "
                       f"{want[:4]}... ({len(want)})")
        if not line.endswith("\x1b[0m"):
            bad.append(f"line {li} does not end with ESC[0m")
    ok(not bad, f"{desc}: every half block has its two cells' colours",
       "\n".join(bad))


def check_plain_text(block, cells, width, want_code, desc):
    lines = block.out
    rows = (cells + width - 1) // width
    body = lines[1:]
    ok(len(body) == rows, f"{desc}: header + {rows} lines, one per row",
       f"{len(lines)} lines")
    want = []
    for r in range(rows):
        want.append("".join(GLYPHS[int(want_code(c) + 0.5)] for c in
                            range(r * width, min((r + 1) * width, cells))))
    bad = [f"row {i}: {g!r} want {w!r}" for i, (g, w) in
           enumerate(zip(body, want)) if g != w]
    ok(not bad and len(body) == rows, f"{desc}: one glyph per cell, .:-=+#",
       "\n".join(bad[:5]))


# ---- main -----------------------------------------------------------------------
def main():
    run = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else None
    print("TAP version 13")
    blocks, meta = parse_run(run)
    ok("DONE" in meta and "FATAL" not in meta,
       "the guest script ran to its end", meta.get("FATAL", "no DONE marker"))
    if "hold.a" not in blocks or "hold.b" not in blocks:
        ok(False, "buddyctl_hold started")
        return finish()

    def B(name):
        return blocks.get(name) or Block(-1)

    def J(name):
        try:
            return B(name).json()
        except ValueError as e:
            return {"__error__": str(e), "__text__": B(name).stdout[:500]}

    def ids_of(arr):
        return [o.get("id") for o in arr] if isinstance(arr, list) else None

    ha, hb = J("hold.a"), J("hold.b")
    pids = [int(x) for x in meta.get("PIDS", "0 0").split()]
    for h in ha:
        h["pid_expected"] = pids[0]
    for h in hb:
        h["pid_expected"] = pids[1]
    hold = ha + hb
    ok(len(ha) == 3 and len(hb) == 3 and
       all(h["pid"] == h["pid_expected"] for h in hold),
       "two holders, three allocations each", (pids, hold))
    by_id = {h["id"]: h for h in hold}
    by_name = {}
    for h in hold:
        key = ("b" if h["pid_expected"] == pids[1] else "") + h["label"]
        by_name[key] = h
    A_ALPHA, A_BETA, A_GAMMA = (by_name[k]["id"] for k in ("alpha", "beta",
                                                            "gamma"))
    B_ALPHA, B_DELTA, B_AUTO = (by_name[k]["id"] for k in ("balpha", "bdelta",
                                                            "bautolbl"))
    if outdir:
        os.makedirs(outdir, exist_ok=True)

    def codes_of(h):
        if "codes" in h:
            return [int(ch) for ch in h["codes"]]
        if h["pattern"] == "bands":
            return [(i // 64) % 6 for i in range(h["nr_entries"])]
        raise ValueError("no codes")

    # ---- info ----------------------------------------------------------------
    for name, nr in (("info.empty", 0), ("info.json", 6), ("info.freed", 0)):
        b, j = B(name), J(name)
        ok(b.rc == 0 and isinstance(j, dict) and list(j) == INFO_KEYS,
           f"{name}: one JSON object with the documented keys in order",
           f"rc {b.rc} keys {list(j) if isinstance(j, dict) else j}")
        if not isinstance(j, dict) or "pools" not in j:
            continue
        ok(j["abi_version"] == 1 and j["device"] == "/dev/buddy",
           f"{name}: device and ABI version")
        ok(j["nr_allocs"] == nr, f"{name}: nr_allocs {nr}", j["nr_allocs"])
        ok([p["pool"] for p in j["pools"]] == ["device", "buddy"] and
           all(list(p) == POOL_KEYS for p in j["pools"]),
           f"{name}: pools device and buddy with the documented keys",
           j["pools"])
        dev, bud = j["pools"]
        ok(dev["size"] == 32 * MIB and bud["size"] == 96 * MIB and
           j["max_ratio"] == 4 and j["carve_out_ratio"] == 3.0,
           f"{name}: sizes from device_mb=32 max_ratio=4 (carve-out 3x)",
           (dev["size"], bud["size"], j["max_ratio"], j["carve_out_ratio"]))
        ok(all(p["used"] + p["free"] == p["size"] for p in j["pools"]),
           f"{name}: used + free = size")
        ok(dev["node_requested"] == 0 and bud["node_requested"] == 1 and
           dev["nodes"] == "0" and bud["nodes"] == "1",
           f"{name}: pools on the nodes asked for, numactl lists",
           (dev["nodes"], bud["nodes"]))
        ok(dev["node_pages"] == [{"node": 0, "pages": 8192,
                                  "bytes": 32 * MIB}] and
           bud["node_pages"] == [{"node": 1, "pages": 24576,
                                  "bytes": 96 * MIB}],
           f"{name}: pages per node", (dev["node_pages"], bud["node_pages"]))
        ok(isinstance(j["numa_distance"], int) and j["numa_distance"] > 10,
           f"{name}: numa_distance() of nodes 0 and 1 is a remote one",
           j["numa_distance"])
        ok(j["codecs"] == ["bpc", "zvc", "bdi", "fpc", "none"] and
           j["default_codec"] == "bpc",
           f"{name}: codecs by name, default bpc", j["codecs"])
        ok({"rw", "get_map", "admin", "auto"} <= set(j["features"]) and
           all(re.match(r"^[a-z_0-9]+$", f) for f in j["features"]),
           f"{name}: features by name", j["features"])
        ok(abs(j["ratio"] - j["ratio_milli"] / 1000) < 0.0005,
           f"{name}: ratio = ratio_milli / 1000")
        if nr:
            ok(j["logical_bytes"] == sum(h["size"] for h in hold) and
               dev["used"] > 0 and bud["used"] > 0 and j["ratio_milli"] > 0,
               f"{name}: logical bytes = sum of the sizes, pools in use",
               (j["logical_bytes"], dev["used"], bud["used"]))
        else:
            ok(j["logical_bytes"] == 0 and dev["used"] == 0 and
               bud["used"] == 0 and j["ratio"] == 0,
               f"{name}: nothing in use", j)
    j = J("info.human")
    ok(isinstance(j, dict) and j.get("pools", [{}])[0].get("size") ==
       "32.00 MiB" and j["pools"][1]["size"] == "96.00 MiB" and
       j["pools"][0]["node_pages"][0]["bytes"] == "32.00 MiB" and
       j["chunk_bytes"] == "2.00 MiB" and j["nr_allocs"] == 6,
       "info -u: sizes in binary units, counts stay numbers", j)
    t = B("info.text").stdout
    ok(B("info.text").rc == 0 and
       re.search(r"^device\s+33554432\s+\d+\s+\d+\s+0\s+0\s+0:8192$", t, re.M)
       and re.search(r"^buddy\s+100663296\s+\d+\s+\d+\s+1\s+1\s+1:24576$", t,
                     re.M) and re.search(r"^codecs\s+\[bpc\] zvc bdi fpc none$",
                                         t, re.M),
       "info (text): pool table with nodes and pages, codecs with [default]",
       t)
    t = B("info.text-human").stdout
    ok(re.search(r"^device\s+32\.00 MiB\s", t, re.M) and
       re.search(r"^buddy\s+96\.00 MiB\s", t, re.M),
       "info -u (text): sizes in binary units", t)

    # ---- list ----------------------------------------------------------------
    all_ = J("list.all")
    ok(B("list.all").rc == 0 and isinstance(all_, list) and len(all_) == 6,
       "list: a JSON array of the 6 live allocations", all_)
    if not isinstance(all_, list):
        all_ = []
    ok(ids_of(all_) == sorted(by_id), "list: in id order", ids_of(all_))
    bad = []
    for o in all_:
        h = by_id.get(o.get("id"))
        if h is None:
            bad.append(f"unknown id {o.get('id')}")
            continue
        if list(o) != STAT_KEYS or list(o["owner"]) != OWNER_KEYS or \
           list(o["histogram"]) != HIST_KEYS or \
           list(o["counters"]) != COUNTER_KEYS:
            bad.append(f"{h['id']}: keys {list(o)}")
            continue
        want = {"size": h["size"], "target": TARGETS[h["target"]],
                "target_bytes": h["target"], "codec": CODECS[h["codec"]],
                "label": h["label"], "nr_entries": h["nr_entries"],
                "owner": {"uid": h["uid"], "pid": h["pid_expected"],
                          "comm": "buddyctl_hold"},
                "histogram": h["histogram"],
                "target_source": "default" if h["label"] == "autolbl"
                else "explicit"}
        for k, v in want.items():
            if o[k] != v:
                bad.append(f"{h['id']} {k}: {o[k]!r} want {v!r}")
        c = o["counters"]
        acc = c["entry_reads"] + c["entry_writes"]
        frac = round(c["buddy_accesses"] / acc, 4) if acc else 0
        if o["buddy_access_fraction"] != frac:
            bad.append(f"{h['id']} buddy_access_fraction "
                       f"{o['buddy_access_fraction']} want {frac}")
        if o["ratio"] != round(o["size"] / o["device_bytes"], 3):
            bad.append(f"{h['id']} ratio {o['ratio']}")
        if h["pattern"] != "zero" and c["entry_writes"] < h["nr_entries"]:
            bad.append(f"{h['id']} entry_writes {c['entry_writes']}")
        if h["target"] == 128 and o["buddy_bytes"] != 0:
            bad.append(f"{h['id']} 1x but buddy_bytes {o['buddy_bytes']}")
        if o["device_bytes"] <= 0:
            bad.append(f"{h['id']} device_bytes {o['device_bytes']}")
    ok(not bad and all_, "list: every key and value as allocated "
       "(owner, target, codec, histogram of every entry's code, ratio, "
       "fraction)", "\n".join(bad))
    by_list = {o["id"]: o for o in all_ if "id" in o}

    hum = J("list.human")
    hb = {o["id"]: o for o in hum} if isinstance(hum, list) else {}
    ok(hb.get(A_ALPHA, {}).get("size") == "48.00 KiB" and
       hb.get(A_GAMMA, {}).get("size") == "1000 B" and
       hb.get(B_DELTA, {}).get("size") == "4.00 MiB" and
       isinstance(hb.get(B_DELTA, {}).get("device_bytes"), str) and
       hb.get(B_DELTA, {}).get("nr_entries") == 32768,
       "list -u: sizes as strings, counts stay numbers",
       {k: (v["size"], v["device_bytes"]) for k, v in hb.items()})

    # filters: the documented semantics, OR within and AND across options
    def sel(pred):
        return sorted(o["id"] for o in all_ if pred(o))
    A = set(by_id[i]["id"] for i in by_id if by_id[i]["pid_expected"] ==
            pids[0])
    cases = {
        "list.pid-a": sel(lambda o: o["owner"]["pid"] == pids[0]),
        "list.pid-ab": sel(lambda o: True),
        "list.pid-a-b": sel(lambda o: True),
        "list.label-alpha": sel(lambda o: o["label"] == "alpha"),
        "list.label-alpha-gamma": sel(lambda o: o["label"] in
                                      ("alpha", "gamma")),
        "list.label-alpha-uid1000": sel(lambda o: o["label"] == "alpha" and
                                        o["owner"]["uid"] == 1000),
        "list.label-alpha-pid-a": sel(lambda o: o["label"] == "alpha" and
                                      o["owner"]["pid"] == pids[0]),
        "list.target-2x": sel(lambda o: o["target"] == "2x"),
        "list.target-2x-4x": sel(lambda o: o["target"] in
                                 ("2x", "4x", "16x")),
        "list.uid1000-target-4x": sel(lambda o: o["owner"]["uid"] == 1000 and
                                      o["target"] == "4x"),
        "list.id-two": sorted([A_BETA, B_DELTA]),
        "list.id-range": sel(lambda o: A_ALPHA <= o["id"] <= A_GAMMA),
        "list.codec-bpc": sel(lambda o: o["codec"] == "bpc"),
        "list.one": [A_GAMMA],
        "list.none": [],
    }
    # the expectations themselves must mean something
    ok(cases["list.pid-a"] == sorted(A) and
       cases["list.label-alpha-uid1000"] == [B_ALPHA] and
       cases["list.label-alpha-pid-a"] == [A_ALPHA] and
       cases["list.uid1000-target-4x"] == [A_BETA] and
       len(cases["list.label-alpha-gamma"]) == 3 and
       len(cases["list.target-2x-4x"]) == 3,
       "filter expectations pick the intended allocations", cases)
    for name, want in cases.items():
        b, j = B(name), J(name)
        ok(b.rc == 0 and isinstance(j, list) and b.stdout.lstrip()[:1] == "["
           and sorted(ids_of(j)) == want,
           f"{name}: array of ids {want}",
           f"rc {b.rc} got {ids_of(j) if isinstance(j, list) else j}")
    b = B("list.bad-target")
    ok(b.rc == 2 and "invalid target '3x'" in b.stderr and b.stdout == "",
       "list --target 3x: usage error, exit 2", (b.rc, b.stderr))

    # ---- show --------------------------------------------------------------
    j = J("show.alpha")
    ok(B("show.alpha").rc == 0 and isinstance(j, dict) and
       j == by_list.get(A_ALPHA),
       "show ID: the object list prints for it, not in an array",
       (j, by_list.get(A_ALPHA)))
    j = J("show.auto")
    ok(isinstance(j, dict) and j.get("target_source") == "default" and
       j.get("target") == "1x" and j.get("codec") == "bpc",
       "show --json: an AUTO allocation without profile is 1x bpc, "
       "target_source default", j)
    j = J("show.human")
    ok(isinstance(j, dict) and j.get("size") == "4.00 MiB" and
       re.match(r"^3\.0\d MiB$", str(j.get("device_bytes"))) and
       j.get("nr_entries") == 32768,
       "show -u: 4 MiB at 4/3x reserves 3 MiB of device (and metadata)", j)
    b = B("show.missing")
    ok(b.rc == 1 and b.stdout == "" and b.stderr.strip() ==
       "buddyctl: allocation 99999: No such file or directory "
       "(no live allocation has this id)",
       "show of a missing id: exit 1, names the allocation and errno",
       (b.rc, b.stderr))
    b = B("show.noarg")
    ok(b.rc == 2 and "missing allocation ID" in b.stderr,
       "show without ID: exit 2", (b.rc, b.stderr))

    # ---- heatmap: PNG ------------------------------------------------------
    def png(name):
        b = B(name + ".b64")
        raw = base64.b64decode("".join(b.out))
        if outdir:
            with open(os.path.join(outdir, name.split(".", 1)[1] + ".png"),
                      "wb") as f:
                f.write(raw)
        return png_decode(raw)

    alpha = by_id[A_ALPHA]
    acodes = codes_of(alpha)
    b = B("heatmap.alpha-png")
    ok(b.rc == 0 and re.search(
        rf'^allocation {A_ALPHA} "alpha" \(2x bpc\): 384 entries, 64 cells '
        r"per row, block 1 entry per cell, 6 rows: /tmp/bctl/alpha\.png "
        r"\(256x24 px\)$", b.stdout, re.M),
       "heatmap -o: the summary line tells geometry and size", b.stdout)
    try:
        w, h, rows, text = png("heatmap.alpha-png")
        ok((w, h) == (256, 24), "heatmap -o: 64 x 4 px wide, 6 rows x 4 px "
           "tall", (w, h))
        ok(text.get("buddy-id") == str(A_ALPHA) and
           text.get("buddy-entries") == "384" and
           text.get("buddy-width") == "64" and
           text.get("buddy-block") == "1" and text.get("buddy-rows") == "6",
           "heatmap PNG: tEXt chunks with id, entries, width, block, rows",
           text)
        ok(set(acodes) == set(range(6)) and
           acodes == [(i // 64) % 6 for i in range(384)],
           "the banded allocation holds every code, one per row", acodes[:70])
        check_grid(rows, 4, 64, 384, lambda c: acodes[c],
                   "heatmap PNG: every square has its entry's code colour")
    except Exception as e:
        ok(False, "heatmap -o alpha: a decodable PNG", repr(e))

    j = J("heatmap.alpha-legend-png")
    try:
        w, h, rows, text = png("heatmap.alpha-legend-png")
        ok(isinstance(j, dict) and j.get("width_px") == w == 256 and
           j.get("height_px") == h and h > 24 and j.get("rows") == 6 and
           j.get("block") == 1 and j.get("entries") == 384 and
           j.get("cells") == 384 and j.get("legend") is True and
           j.get("scale") == 4 and j.get("width") == 64,
           "heatmap --legend --json: geometry as JSON matches the PNG",
           (j, w, h))
        check_grid(rows, 4, 64, 384, lambda c: acodes[c],
                   "heatmap --legend: the grid is unchanged above the strip")
        strip = set(p for r in rows[24:] for p in r)
        ok(all(c in strip for c in PALETTE) and (255, 255, 255) in strip,
           "heatmap --legend: the strip has the six swatches on white")
    except Exception as e:
        ok(False, "heatmap --legend: a decodable PNG", repr(e))

    delta = by_id[B_DELTA]
    dcodes = codes_of(delta)
    ok(delta["histogram"] == {k: sum(1 for c in dcodes if c == i)
                              for i, k in enumerate(HIST_KEYS)},
       "the large banded allocation: codes as its pattern says")

    def mean_code(codes, block):
        return lambda c: (sum(codes[c * block:(c + 1) * block]) /
                          len(codes[c * block:(c + 1) * block]))
    b = B("heatmap.delta-png")
    ok(b.rc == 0 and "32768 entries, 64 cells per row, block 2 entries per "
       "cell (mean code), 256 rows" in b.stdout,
       "heatmap -o of 32768 entries: block 2 for the default 256 rows",
       b.stdout)
    try:
        w, h, rows, text = png("heatmap.delta-png")
        ok(w == 256 and h > 1024 and text.get("buddy-block") == "2" and
           text.get("buddy-rows") == "256",
           "downsampled PNG: 256 x (1024 + legend) px", (w, h, text))
        check_grid(rows, 4, 64, 16384, mean_code(dcodes, 2),
                   "downsampled PNG: each square is its block's mean code")
    except Exception as e:
        ok(False, "heatmap -o delta: a decodable PNG", repr(e))
    b = B("heatmap.delta-png-r100")
    try:
        w, h, rows, text = png("heatmap.delta-png-r100")
        # 32768 > 32 * 100 * 8, <= 32 * 100 * 16: B 16, 2048 cells, 64 rows
        ok(b.rc == 0 and (w, h) == (64, 128) and
           text.get("buddy-block") == "16" and "block 16 entries" in b.stdout,
           "--max-rows 100 --width 32 --scale 2: block 16, 64 rows, 64x128 "
           "px", (w, h, text, b.stdout))
        check_grid(rows, 2, 32, 2048, mean_code(dcodes, 16),
                   "--width 32: each square is its block's mean code")
    except Exception as e:
        ok(False, "heatmap -o delta100: a decodable PNG", repr(e))

    b = B("heatmap.stdout-png")
    try:
        w, h, rows, text = png("heatmap.stdout-png")
        ok(b.rc == 0 and (w, h) == (256, 24) and
           ": - (256x24 px)" in b.stderr,
           "heatmap -o -: the PNG on stdout, the summary on stderr",
           (w, h, b.stderr))
    except Exception as e:
        ok(False, "heatmap -o -: a decodable PNG on stdout", repr(e))

    # ---- without privilege ------------------------------------------------------
    b = B("noperm.open")
    ok(b.rc == 1 and b.stderr.strip() == "buddyctl: /dev/buddy: Permission "
       "denied (read-write access needed: root, or a member of the device's "
       "group)",
       "list as uid 1000 (/dev/buddy 0660): exit 1, names the device",
       (b.rc, b.stderr))
    b = B("noperm.list")
    ok(b.rc == 1 and b.stderr.strip() == "buddyctl: /dev/buddy: Operation "
       "not permitted (needs CAP_SYS_ADMIN)",
       "list as uid 1000 (/dev/buddy 0666): EPERM, needs CAP_SYS_ADMIN",
       (b.rc, b.stderr))
    j = J("noperm.info")
    ok(B("noperm.info").rc == 0 and isinstance(j, dict) and
       j.get("nr_allocs") == 6,
       "info as uid 1000: no privilege needed", (B("noperm.info").stderr, j))

    # ---- heatmap: terminal ----------------------------------------------------
    for name in ("heatmap.alpha-256", "heatmap.alpha-truecolor",
                 "heatmap.alpha-plain", "heatmap.delta-256",
                 "heatmap.delta-plain"):
        if outdir:
            with open(os.path.join(outdir, name.split(".", 1)[1] + ".txt"),
                      "w") as f:
                f.write(B(name).stdout)
    header = (rf'^allocation {A_ALPHA} "alpha" \(2x bpc\): 384 entries, 64 '
              r"cells per row, block 1 entry per cell, 6 rows$")
    b = B("heatmap.alpha-plain")
    ok(b.rc == 0 and b.out and re.match(header, b.out[0]),
       "heatmap (stdout not a tty): the header line", b.out[:1])
    check_plain_text(b, 384, 64, lambda c: acodes[c], "heatmap plain")
    b = B("heatmap.alpha-256")
    ok(b.rc == 0 and b.out and re.match(header, b.out[0]),
       "heatmap --color=256: the header line", b.out[:1])
    check_color_text(b, 384, 64, lambda c: acodes[c], False,
                     "heatmap --color=256", legend=True)
    b = B("heatmap.alpha-truecolor")
    check_color_text(b, 384, 64, lambda c: acodes[c], True,
                     "heatmap --color=truecolor")
    b = B("heatmap.delta-plain")
    ok(b.rc == 0 and b.out and "32768 entries, 64 cells per row, block 8 "
       "entries per cell (mean code), 64 rows" in b.out[0],
       "heatmap of 32768 entries in a terminal: block 8, 64 rows", b.out[:1])
    check_plain_text(b, 4096, 64, mean_code(dcodes, 8),
                     "heatmap --no-color downsampled")
    b = B("heatmap.delta-256")
    check_color_text(b, 4096, 64, mean_code(dcodes, 8), False,
                     "heatmap --color=256 downsampled")
    b = B("heatmap.delta-rows40")
    ok(b.rc == 0 and b.out and "block 16 entries per cell (mean code), 32 "
       "rows" in b.out[0] and len(b.out) == 1 + 16,
       "heatmap --max-rows 40: block 16, 32 rows in 16 lines",
       (b.out[:1], len(b.out)))
    j = J("heatmap.delta-json")
    want = [round(mean_code(dcodes, 8)(c), 3) for c in range(4096)]
    ok(isinstance(j, dict) and j.get("block") == 8 and j.get("rows") == 64
       and j.get("cells") == 4096 and j.get("means") == want,
       "heatmap --json: the mean code of every cell",
       {k: v for k, v in j.items() if k != "means"}
       if isinstance(j, dict) else j)
    gam = by_id[A_GAMMA]
    b = B("heatmap.gamma-plain")
    check_plain_text(b, 8, 64, lambda c: codes_of(gam)[c],
                     "heatmap of 8 entries (1000 bytes)")
    beta = by_id[A_BETA]
    j = J("heatmap.beta-json")
    ok(isinstance(j, dict) and j.get("width") == 16 and j.get("rows") == 32
       and j.get("block") == 1 and
       j.get("means") == [float(c) for c in codes_of(beta)],
       "heatmap --json --width 16: one mean per entry, its code", j)
    b = B("heatmap.missing")
    ok(b.rc == 1 and "buddyctl: allocation 99999: No such file or directory"
       in b.stderr, "heatmap of a missing id: exit 1, names it", b.stderr)
    ok(B("heatmap.badwidth").rc == 2, "heatmap --width 0: exit 2")

    # ---- set-target --------------------------------------------------------
    b = B("set-target.beta-2")
    ok(b.rc == 0 and b.stdout.strip() ==
       f"allocation {A_BETA}: 4x zvc -> 2x zvc",
       "set-target ID 2: one line tells the change", (b.rc, b.stdout,
                                                       b.stderr))
    j = J("show.beta-after")
    ok(isinstance(j, dict) and j.get("target") == "2x" and
       j.get("target_bytes") == 64 and j.get("codec") == "zvc" and
       j.get("target_source") == "explicit" and
       j.get("histogram") == beta["histogram"],
       "show after set-target: 2x, same codec, same codes", j)
    j = J("set-target.alpha-4-zvc")
    ok(B("set-target.alpha-4-zvc").rc == 0 and isinstance(j, dict) and
       j.get("target") == "4x" and j.get("codec") == "zvc" and
       sum(j.get("histogram", {}).values()) == 384,
       "set-target --json 4x --codec zvc: the allocation after", j)
    b = B("set-target.gamma-same")
    ok(b.rc == 0 and b.stdout.strip() ==
       f"allocation {A_GAMMA}: 1x none -> 1x none",
       "set-target to the same target: exit 0", b.stdout)
    b = B("set-target.missing")
    ok(b.rc == 1 and b.stderr.strip() ==
       "buddyctl: allocation 99999: No such file or directory "
       "(no live allocation has this id)",
       "set-target of a missing id: exit 1, names it", b.stderr)
    ok(B("set-target.badratio").rc == 2, "set-target ID 3: exit 2")
    ok(B("verify.a").stdout.strip() == "ok 3",
       "data read back unchanged after set-target", B("verify.a").stdout)

    # ---- profiles -------------------------------------------------------------
    b = B("set-target.auto-none")
    ok(b.rc == 1 and f"allocation {B_AUTO}: No such file or directory (no "
       'profile for uid 0 label "autolbl"' in b.stderr,
       "set-target auto without a profile: exit 1, says which", b.stderr)
    ok(J("show-profiles.empty") == [], "show-profiles: [] at first")
    good = [{"uid": 0, "label": "autolbl", "target": "4x", "target_bytes": 32,
             "codec": "zvc"},
            {"uid": 1000, "label": "beta", "target": "16x", "target_bytes": 8,
             "codec": "default"},
            {"uid": 0, "label": "spAce", "target": "2x", "target_bytes": 64,
             "codec": "bpc"}]
    ok(B("load-profiles.good").rc == 0, "load-profiles FILE: exit 0",
       B("load-profiles.good").stderr)
    j = J("show-profiles.good")
    ok(j == good and all(list(o) == PROFILE_KEYS for o in j),
       "show-profiles: the file's profiles, escapes decoded", j)
    b = B("load-profiles.bad")
    ok(b.rc == 1 and "bad.state:2: invalid target" in b.stderr and
       "nothing installed" in b.stderr,
       "load-profiles of a bad file: exit 1, FILE:LINE: reason", b.stderr)
    ok(J("show-profiles.after-bad") == good,
       "a bad file changes nothing (all or nothing)")
    b = B("load-profiles.empty")
    ok(b.rc == 1 and "no profiles in the file: the device's profile table "
       "is left as it was (--replace empties it)" in b.stderr,
       "load-profiles of an empty file: exit 1, says the table is kept",
       (b.rc, b.stderr))
    ok(J("show-profiles.after-empty") == good,
       "an empty file without --replace changes nothing")
    ok("load-profiles: /tmp/" in B("load-profiles.good").stderr and
       "/good.state: 3 profiles installed in /dev/buddy, replacing " in
       B("load-profiles.good").stderr,
       "load-profiles says what it replaced", B("load-profiles.good").stderr)
    ok("clear-profiles: /dev/buddy: 4 profiles removed" in
       B("clear-profiles").stderr,
       "clear-profiles says what it removed", B("clear-profiles").stderr)
    b = B("set-target.auto")
    ok(b.rc == 0 and b.stdout.strip() ==
       f"allocation {B_AUTO}: 1x bpc -> 4x zvc",
       "set-target ID auto: the profile's target and codec", (b.stdout,
                                                              b.stderr))
    j = J("show.auto-after")
    ok(isinstance(j, dict) and j.get("target") == "4x" and
       j.get("codec") == "zvc" and j.get("target_source") == "explicit",
       "show after set-target auto: 4x zvc", j)
    ok(B("set-target.auto-gamma").rc == 1,
       "set-target auto for a label without profile: exit 1")
    j = J("load-profiles.merge")
    ok(B("load-profiles.merge").rc == 0 and j == [
        {**good[0], "target": "2x", "target_bytes": 64, "codec": "bdi"},
        good[1], good[2],
        {"uid": 0, "label": "gamma", "target": "4/3x", "target_bytes": 96,
         "codec": "fpc"}],
       "load-profiles --merge --json: replaced in place, new ones appended",
       j)
    j = J("set-target.auto-gamma2")
    ok(isinstance(j, dict) and j.get("target") == "4/3x" and
       j.get("codec") == "fpc", "set-target --json ID auto after merge", j)
    ok(B("clear-profiles").rc == 0 and J("show-profiles.cleared") == [],
       "clear-profiles: the table is empty")
    ok(B("verify.a2").stdout.strip() == "ok 3" and
       B("verify.b").stdout.strip() == "ok 3",
       "all data read back unchanged at the end",
       (B("verify.a2").stdout, B("verify.b").stdout))

    # ---- stats ------------------------------------------------------------------
    for name, listing in (("stats.json", "list.all"),
                          ("stats.end", "list.end")):
        j, lst = J(name), J(listing)
        if not isinstance(j, dict) or not isinstance(lst, list):
            ok(False, f"{name}: JSON", j)
            continue
        ok(list(j) == ["mm_stat", "io_stat", "code_stat", "ratio",
                       "buddy_access_fraction"] and
           list(j["io_stat"]) == COUNTER_KEYS and
           list(j["code_stat"]) == HIST_KEYS,
           f"{name}: the documented keys", list(j))
        mm = j["mm_stat"]
        ok(mm["nr_allocs"] == 6 and
           mm["logical_bytes"] == sum(h["size"] for h in hold) and
           mm["device_total"] == 32 * MIB and mm["buddy_total"] == 96 * MIB,
           f"{name}: mm_stat matches the allocations", mm)
        ok(j["code_stat"] == {k: sum(o["histogram"][k] for o in lst)
                              for k in HIST_KEYS},
           f"{name}: code_stat is the sum of the histograms", j["code_stat"])
        io = j["io_stat"]
        acc = io["entry_reads"] + io["entry_writes"]
        ok(j["buddy_access_fraction"] == round(io["buddy_accesses"] / acc, 4)
           and j["ratio"] == round(mm["ratio_milli"] / 1000, 3) and
           io["entry_writes"] >= sum(o["counters"]["entry_writes"]
                                     for o in lst),
           f"{name}: fraction and ratio from the columns", j)
    ok(J("stats.end")["io_stat"]["entry_reads"] >
       J("stats.json")["io_stat"]["entry_reads"],
       "stats: the read-backs count as reads")
    t = B("stats.text").stdout
    ok(re.search(r"^  device_total\s+32\.00 MiB$", t, re.M) and
       re.search(r"^buddy_access_fraction\s+\d\.\d{4}$", t, re.M),
       "stats -u (text)", t)

    # ---- mixed data ------------------------------------------------------------
    hc = J("hold.c")
    mix = hc[0] if isinstance(hc, list) and hc else {}
    mcodes = codes_of(mix) if mix else []
    j = J("show.mixed")
    ok(mix and isinstance(j, dict) and j.get("histogram") ==
       mix["histogram"] and len(set(mcodes)) >= 4,
       "show: a mixed allocation's histogram, codes of several kinds",
       (j.get("histogram") if isinstance(j, dict) else j,
        mix.get("histogram")))
    b = B("heatmap.mixed-256")
    if outdir:
        with open(os.path.join(outdir, "mixed-256.txt"), "w") as f:
            f.write(b.stdout)
    if mcodes:
        check_color_text(b, len(mcodes), 64, lambda c: mcodes[c], False,
                         "heatmap --color=256 of mixed data", legend=True)
        try:
            w, h, rows, text = png("heatmap.mixed-png")
            ok(w == 256 and h > 256 and text.get("buddy-rows") == "64",
               "mixed data PNG: 4096 entries in 64 rows", (w, h, text))
            check_grid(rows, 4, 64, len(mcodes), lambda c: mcodes[c],
                       "mixed data PNG: every square has its entry's code "
                       "colour")
        except Exception as e:
            ok(False, "heatmap -o mixed: a decodable PNG", repr(e))

    ok(J("list.freed") == [] and B("list.freed").stdout.strip() == "[]",
       "list after the holders exit: []", B("list.freed").stdout)
    return finish()


def finish():
    return tap.totals()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a crash is one failed test, with totals
        import traceback
        ok(False, "buddyctl_check.py ran through", traceback.format_exc())
        sys.exit(finish() or 1)
