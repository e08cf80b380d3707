#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent size model of the entry codecs, for selftests/tools.

Written from shared/spec/bpc.md alone (no code shared with core/), in plain
Python (struct only), deliberately slow and literal.  Sub-commands:

  vectors FILE          write the spec's BPC test vectors T1..T11, one entry
                        each, in order
  varied FILE N SEED    write N entries of many kinds (zero, small, ramps,
                        repeated, pointers, floats, extremes, random...)
  random FILE N SEED    write N entries of uniform random bytes
  bits CODEC FILE       print codec's stream length in bits per entry (tail
                        zero-padded), as "buddyctl analyze --per-entry" must
  report FILE...        print the JSON report "buddyctl analyze --json" must
                        give for all codecs (ratios rounded to 4 places)
"""
import json
import random
import struct
import sys

ENTRY = 128
CODECS = ["bpc", "zvc", "bdi", "fpc", "none"]


# --- BPC: shared/spec/bpc.md, row by row -----------------------------------
def bpc_bits(e):
    w = struct.unpack("<32i", e)
    m33 = (1 << 33) - 1
    d = [(w[i + 1] - w[i]) & m33 for i in range(31)]
    dbp = [0] * 33
    for k in range(33):
        p = 0
        for i in range(31):
            p |= ((d[i] >> k) & 1) << i
        dbp[k] = p
    dbx = [0] * 33
    dbx[32] = dbp[32]
    for k in range(31, -1, -1):
        dbx[k] = dbp[k] ^ dbp[k + 1]
    w0 = w[0]
    if w0 == 0:
        bits = 3
    elif -8 <= w0 <= 7:
        bits = 7
    elif -128 <= w0 <= 127:
        bits = 11
    elif -32768 <= w0 <= 32767:
        bits = 19
    else:
        bits = 33
    run = 0
    for k in range(32, -1, -1):
        x = dbx[k]
        if x == 0:
            run += 1
            continue
        if run:
            bits += 3 if run == 1 else 7
            run = 0
        if x == 0x7FFFFFFF or dbp[k] == 0:
            bits += 5
        elif any(x == 3 << p for p in range(30)):
            bits += 10
        elif any(x == 1 << p for p in range(31)):
            bits += 10
        else:
            bits += 32
    if run:
        bits += 3 if run == 1 else 7
    return bits


# --- ZVC --------------------------------------------------------------------
def zvc_bits(e):
    w = struct.unpack("<32I", e)
    return 32 + 32 * sum(1 for x in w if x)


# --- BDI: zero base + one base, k-byte wrapping subtraction -----------------
def _signed(v, nbytes):
    v &= (1 << (8 * nbytes)) - 1
    return v - (1 << (8 * nbytes)) if v >> (8 * nbytes - 1) else v


def _fits(v, nbytes):
    return -(1 << (8 * nbytes - 1)) <= v < (1 << (8 * nbytes - 1))


def _bdi_applies(e, k, d):
    n = ENTRY // k
    xs = [int.from_bytes(e[i * k:(i + 1) * k], "little") for i in range(n)]
    base = None
    for x in xs:
        if _fits(_signed(x, k), d):
            continue
        if base is None:
            base = x
        elif not _fits(_signed(x - base, k), d):
            return False
    return True


def bdi_bits(e):
    if not any(e):
        return 12
    q = struct.unpack("<16Q", e)
    if all(x == q[0] for x in q):
        return 68
    best = 1028
    for k, d in ((8, 1), (4, 1), (8, 2), (4, 2), (2, 1), (8, 4)):
        bits = 4 + ENTRY // k + 8 * k + (ENTRY // k) * 8 * d
        if bits < best and _bdi_applies(e, k, d):
            best = bits
    return best


# --- FPC --------------------------------------------------------------------
def _se_fits(w, nbits):
    s = w - (1 << 32) if w >> 31 else w
    return -(1 << (nbits - 1)) <= s < (1 << (nbits - 1))


def _fpc_word(w):
    cands = [35]                                  # 111 raw
    if _se_fits(w, 4):
        cands.append(7)                           # 001
    if _se_fits(w, 8):
        cands.append(11)                          # 010
    if _se_fits(w, 16):
        cands.append(19)                          # 011
    if w & 0xFFFF == 0:
        cands.append(19)                          # 100
    lo, hi = w & 0xFFFF, w >> 16
    if _se_fits16(lo) and _se_fits16(hi):
        cands.append(19)                          # 101
    b = w & 0xFF
    if w == b * 0x01010101:
        cands.append(11)                          # 110
    return min(cands)


def _se_fits16(h):
    s = h - 0x10000 if h >> 15 else h
    return -128 <= s < 128


def fpc_bits(e):
    w = struct.unpack("<32I", e)
    bits, i = 0, 0
    while i < 32:
        if w[i] == 0:
            j = i
            while j < 32 and w[j] == 0:
                j += 1
            bits += 6 * ((j - i + 7) // 8)
            i = j
        else:
            bits += _fpc_word(w[i])
            i += 1
    return bits


def none_bits(e):
    return 1024


SIZE = {"bpc": bpc_bits, "zvc": zvc_bits, "bdi": bdi_bits, "fpc": fpc_bits,
        "none": none_bits}


# --- generators -------------------------------------------------------------
def pack32(words):
    return struct.pack("<32I", *[x & 0xFFFFFFFF for x in words])


def vectors():
    return [
        pack32([0] * 32),
        pack32(range(32)),
        pack32([0xFFFFFFFF] * 32),
        pack32([0x7FFFFFFF, 0x80000000] * 16),
        pack32([0] * 16 + [1] * 16),
        pack32([100 + 3 * i for i in range(32)]),
        pack32([0x12345678] * 32),
        pack32([-i for i in range(32)]),
        pack32([3, -1] * 16),
        pack32([2 * i for i in range(32)]),
        pack32([0] * 16 + [2] * 16),
    ]


def varied_entry(r):
    kind = r.randrange(14)
    if kind == 0:
        return bytes(ENTRY)
    if kind == 1:                                  # small signed ints
        m = r.choice([8, 128, 32768, 1 << 20])
        return pack32([r.randrange(-m, m) for _ in range(32)])
    if kind == 2:                                  # ramp
        b, s = r.getrandbits(32), r.randrange(-9, 10)
        return pack32([b + s * i for i in range(32)])
    if kind == 3:                                  # repeated u32
        return pack32([r.getrandbits(32)] * 32)
    if kind == 4:                                  # repeated u64
        return struct.pack("<Q", r.getrandbits(64)) * 16
    if kind == 5:                                  # 64-bit pointers
        b = 0x7F0000000000 + r.getrandbits(40)
        return struct.pack("<16Q", *[b + 16 * r.randrange(64)
                                     for _ in range(16)])
    if kind == 6:                                  # float32
        return struct.pack("<32f", *[r.uniform(-2, 2) for _ in range(32)])
    if kind == 7:                                  # sparse (ReLU-like)
        return pack32([r.getrandbits(32) if r.random() < 0.2 else 0
                       for _ in range(32)])
    if kind == 8:                                  # extremes
        return pack32([r.choice([0, 1, -1, 0x7FFFFFFF, 0x80000000,
                                 0x7F, 0x80, 0xFFFF0000, 0x00010000])
                       for _ in range(32)])
    if kind == 9:                                  # 16-bit elements
        b = r.getrandbits(16)
        return struct.pack("<64H", *[(b + r.randrange(-100, 100)) & 0xFFFF
                                     for _ in range(64)])
    if kind == 10:                                 # bytes, repeated bytes
        return bytes(r.choice([0, 0x11, 0xAB, r.getrandbits(8)])
                     for _ in range(ENTRY))
    if kind == 11:                                 # one bit / two bits noise
        return pack32([(1 << r.randrange(32)) if r.random() < 0.3 else 0
                       for _ in range(32)])
    if kind == 12:                                 # halfword patterns
        return pack32([(r.randrange(-128, 128) & 0xFFFF) << 16 |
                       (r.randrange(-128, 128) & 0xFFFF)
                       if r.random() < 0.5 else r.getrandbits(16) << 16
                       for _ in range(32)])
    return bytes(r.getrandbits(8) for _ in range(ENTRY))


def entries(path):
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    if len(data) % ENTRY:
        data += bytes(ENTRY - len(data) % ENTRY)
    return [data[i:i + ENTRY] for i in range(0, len(data), ENTRY)]


def fig3_bytes(bits):
    b = (bits + 7) // 8
    for s in (8, 16, 32, 64, 80, 96, 128):
        if b <= s:
            return s
    return 128


def buddy_code(bits):
    b = (bits + 7) // 8
    for code, s in ((1, 8), (2, 32), (3, 64), (4, 96)):
        if b <= s:
            return code
    return 5


def report(paths):
    es = [e for p in paths for e in entries(p)]
    out = {"files": paths, "entries": len(es), "codecs": []}
    for c in CODECS:
        hist = [0] * 6
        f3 = bb = 0
        for e in es:
            if not any(e):
                hist[0] += 1
                continue
            bits = SIZE[c](e)
            code = buddy_code(bits)
            hist[code] += 1
            f3 += fig3_bytes(bits)
            bb += (0, 8, 32, 64, 96, 128)[code]
        rat = lambda t: "inf" if t == 0 else round(128 * len(es) / t, 4)
        out["codecs"].append({
            "codec": c, "ratio_fig3": rat(f3), "ratio_buddy": rat(bb),
            "bytes_fig3": f3, "bytes_buddy": bb,
            "histogram": dict(zip(["zero", "c8", "c32", "c64", "c96", "raw"],
                                  hist))})
    return out


def main(argv):
    cmd = argv[1]
    if cmd == "vectors":
        open(argv[2], "wb").write(b"".join(vectors()))
    elif cmd == "varied":
        r = random.Random(int(argv[4]))
        open(argv[2], "wb").write(b"".join(varied_entry(r)
                                           for _ in range(int(argv[3]))))
    elif cmd == "random":
        r = random.Random(int(argv[4]))
        open(argv[2], "wb").write(r.getrandbits(8 * ENTRY * int(argv[3]))
                                  .to_bytes(ENTRY * int(argv[3]), "little"))
    elif cmd == "bits":
        f = SIZE[argv[2]]
        sys.stdout.write("".join("%d\n" % f(e) for e in entries(argv[3])))
    elif cmd == "report":
        json.dump(report(argv[2:]), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
