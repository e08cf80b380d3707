# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.torch_codecs - libbuddy's whole-buffer codec streams made with
torch operations, so that they run where the tensor is (a GPU).

Every encoder here writes exactly the bytes libbuddy's encoder writes
(lib/tcodec.c, gist.c): a stream encoded on the GPU decodes with
buddy.Codec on the CPU, and the reverse.  The encoders take the tensor's
bytes as a one-dimensional uint8 tensor on any device and use only
element-wise operations, reductions, cumsum, searchsorted and gathers:
deterministic, and no operation whose output size depends on the data
(nonzero, masked_select, boolean indexing), since those read a size back
to the host and so stop it until the device has caught up.

ZVC and CSR streams have a data-dependent length.  Their encoding is in two
phases: count() returns the non-zero words of every chunk as a small tensor
on the device; once the caller has those numbers on the host (without
waiting, when the copy of the counts has completed: buddy.gpu_offload
polls an event), encode() writes the stream of exactly that length.
Binarize and DPR have lengths known from the input's.

ZVC's stream is a chain (each window's mask says where the next one
starts), which a parallel decoder cannot follow: encode() also returns
the number of non-zero words of every window, one byte each (1/128 of the
input), the decoder's index.  It travels beside the stream, never in it.
"""
import sys

import torch

ENTRY_WORDS = 32            # a ZVC window: 128 bytes
CSR_COLS = 256              # a CSR row: 256 words
# Work in chunks of this many 32-bit words (a multiple of both units), so
# that the temporaries of a large tensor stay a few times 16 MiB.
CHUNK_WORDS = 1 << 22
DPR_FORMATS = {16: (5, 10, 2), 10: (5, 4, 3), 8: (4, 3, 4)}   # e, m, per word

# Streams are little-endian; so are the tensors' bytes on every machine
# torch supports, which the byte views below rely on.
assert sys.byteorder == "little"

CODECS = ("zvc", "csr", "binarize", "dpr16", "dpr10", "dpr8")
COUNTED = ("zvc", "csr")     # two-phase: counts first, then the stream


def as_bytes(t):
    """The bytes of a dense tensor @t (its span in its storage, in memory
    order) as a one-dimensional uint8 tensor, without a copy."""
    flat = t.as_strided((t.numel(),), (1,), t.storage_offset())
    return flat.view(torch.uint8)


def _words(b, unit):
    """The bytes @b as int32 words, zero-padded to a multiple of @unit
    words (a copy only when padding or alignment needs one)."""
    n = b.numel()
    want = -(-n // (4 * unit)) * 4 * unit
    if want != n or b.storage_offset() % 4:
        p = torch.zeros(want, dtype=torch.uint8, device=b.device)
        p[:n] = b
        b = p
    return b.view(torch.int32)


def _to_i32(v):
    """int64 values in [0, 2^32) as the int32 with the same bits."""
    return torch.where(v >= 1 << 31, v - (1 << 32), v).to(torch.int32)


def _chunks(nwords):
    return [(c, min(c + CHUNK_WORDS, nwords))
            for c in range(0, nwords, CHUNK_WORDS)] or [(0, 0)]


_static = {"ok": hasattr(torch, "nonzero_static")}


def _compact(values, keep, total, out):
    """out[k] = the k-th value whose keep is set (@total of them).  On a GPU
    torch's nonzero_static (told the size, so it does not read it back)
    where this torch has it; else the inclusive prefix count of keep,
    which is sorted, is searched for where it first reaches k + 1."""
    if total == 0:
        return
    idx = None
    if _static["ok"] and keep.is_cuda:
        try:
            idx = torch.nonzero_static(keep, size=total).view(-1)
        except (RuntimeError, NotImplementedError):
            _static["ok"] = False      # no CUDA kernel in this torch
    if idx is None:
        pos = torch.cumsum(keep, 0, dtype=torch.int32)
        want = torch.arange(1, total + 1, dtype=torch.int32,
                            device=keep.device)
        idx = torch.searchsorted(pos, want)
    torch.index_select(values, 0, idx, out=out)


# --- phase one: the counts -------------------------------------------------

def count(name, b):
    """Non-zero 32-bit words of each chunk of the bytes @b for the counted
    codecs (zvc, csr): an int64 tensor on @b's device, one per chunk."""
    unit = ENTRY_WORDS if name == "zvc" else CSR_COLS
    if name == "csr" and b.numel() % 4:
        raise ValueError(f"csr: {b.numel()} bytes, not whole 32-bit words")
    w = _words(b, unit)
    return torch.stack([(w[a:e] != 0).sum() for a, e in _chunks(w.numel())])


def stream_len(name, nbytes, nnz, esize=4):
    """Length of the @name stream of @nbytes input bytes with @nnz non-zero
    words (ignored for the codecs whose length does not depend on it);
    @esize: Binarize's element size."""
    n = nbytes // 4
    if name == "zvc":
        return 4 * -(-nbytes // (4 * ENTRY_WORDS)) + 4 * nnz
    if name == "csr":
        return 2 * -(-n // CSR_COLS) + 5 * nnz
    if name == "binarize":
        return -(-(nbytes // esize) // 8)
    if name.startswith("dpr"):
        per = DPR_FORMATS[int(name[3:])][2]
        return 4 * -(-n // per)
    raise ValueError(f"codec '{name}': no torch encoder (known: "
                     f"{', '.join(CODECS)})")


# --- phase two: the streams ------------------------------------------------

def encode(name, b, counts=None, dtype=torch.float32):
    """The @name stream of the bytes @b (uint8, one dimension) as a uint8
    tensor on @b's device, and the decoder's index (ZVC) or None.

    @counts: for zvc and csr, count()'s numbers as host integers (a list);
    None reads them here, which waits for the device.  @dtype: the
    elements Binarize tests for x > 0 (libbuddy's stream is float32's; the
    same bit per element serves bfloat16 and float16)."""
    if name in COUNTED and counts is None:
        counts = [int(c) for c in count(name, b).tolist()]
    if name == "zvc":
        return _zvc_encode(b, counts)
    if name == "csr":
        return _csr_encode(b, counts), None
    if name == "binarize":
        return _bin_encode(b, dtype), None
    if name.startswith("dpr") and int(name[3:]) in DPR_FORMATS:
        return _dpr_encode(b, int(name[3:])), None
    raise ValueError(f"codec '{name}': no torch encoder (known: "
                     f"{', '.join(CODECS)})")


def _zvc_encode(b, counts):
    w = _words(b, ENTRY_WORDS)
    nwin = w.numel() // ENTRY_WORDS
    total = nwin + sum(counts)
    out = torch.empty(total, dtype=torch.int32, device=b.device)
    index = torch.empty(nwin, dtype=torch.uint8, device=b.device)
    shifts = torch.arange(ENTRY_WORDS, dtype=torch.int64, device=b.device)
    at = 0
    for (a, e), nnz in zip(_chunks(w.numel()), counts):
        win = w[a:e].view(-1, ENTRY_WORDS)
        nz = win != 0
        mask = _to_i32((nz.to(torch.int64) << shifts).sum(1))
        # Each window as 33 slots, its mask then its words; the stream is
        # the slots kept: the mask always, a word when it is not zero.
        slots = torch.cat([mask.unsqueeze(1), win], 1).view(-1)
        keep = torch.cat([torch.ones_like(nz[:, :1]), nz], 1).view(-1)
        n = win.shape[0] + nnz
        _compact(slots, keep, n, out[at:at + n])
        index[a // ENTRY_WORDS:e // ENTRY_WORDS] = nz.sum(1)
        at += n
    return out.view(torch.uint8), index


def _csr_encode(b, counts):
    n = b.numel() // 4
    w = _words(b, CSR_COLS)
    rows = -(-n // CSR_COLS)
    total = sum(counts)
    out = torch.empty(2 * rows + 5 * total, dtype=torch.uint8,
                      device=b.device)
    cols = torch.arange(CSR_COLS, dtype=torch.uint8, device=b.device)
    col_at, val_at = 2 * rows, 2 * rows + total
    for (a, e), nnz in zip(_chunks(w.numel()), counts):
        win = w[a:e].view(-1, CSR_COLS)
        nz = win != 0
        r0, r1 = a // CSR_COLS, min(e // CSR_COLS, rows)
        per_row = nz.sum(1).to(torch.int16)[:r1 - r0]
        out[2 * r0:2 * r1] = per_row.view(torch.uint8)
        keep = nz.view(-1)
        _compact(cols.repeat(win.shape[0]), keep, nnz,
                 out[col_at:col_at + nnz])
        vals = torch.empty(nnz, dtype=torch.int32, device=b.device)
        _compact(win.reshape(-1), keep, nnz, vals)
        out[val_at:val_at + 4 * nnz] = vals.view(torch.uint8)
        col_at += nnz
        val_at += 4 * nnz
    return out


def _bin_encode(b, dtype):
    x = _elems(b, dtype)
    n = x.numel()
    bits = torch.zeros(-(-n // 8) * 8, dtype=torch.uint8, device=b.device)
    bits[:n] = x > 0
    shifts = torch.arange(8, dtype=torch.uint8, device=b.device)
    return (bits.view(-1, 8) << shifts).sum(1).to(torch.uint8)


def _elems(b, dtype):
    """The bytes @b as elements of @dtype (a copy only to align them)."""
    size = torch.empty(0, dtype=dtype).element_size()
    if b.numel() % size:
        raise ValueError(f"{b.numel()} bytes, not whole {dtype} elements")
    if b.storage_offset() % size:
        b = b.clone()
    return b.view(dtype)


def _dpr_codes(x, bits):
    """tcodec_dpr_from_f32() of every float32 of @x, as int64 codes."""
    eb, mb, _ = DPR_FORMATS[bits]
    emax, bias = (1 << eb) - 1, (1 << (eb - 1)) - 1
    mmask, shift = (1 << mb) - 1, 23 - mb
    v = x.view(torch.int32).to(torch.int64) & 0xffffffff
    sign = (v >> 31) << (eb + mb)
    exp = (v >> 23) & 0xff
    man = v & 0x7fffff
    # Round the 24-bit significand to 1 + mb bits, ties to even.
    full = (man | (1 << 23)) + ((1 << (shift - 1)) - 1) + \
        ((man >> shift) & 1)
    carry = full >> 24
    full = full >> carry
    e = exp - 127 + carry + bias
    normal = sign | (e << mb) | ((full >> shift) & mmask)
    clamp = sign | ((emax - 1) << mb) | mmask
    tiny = torch.where(x.abs() >= 2.0 ** -bias, sign | (1 << mb), sign)
    code = torch.where(e >= emax, clamp,
                       torch.where(e <= 0, tiny, normal))
    code = torch.where(exp == 0, sign, code)
    special = sign | (emax << mb) | torch.where(
        man != 0, torch.full_like(man, 1 << (mb - 1)), torch.zeros_like(man))
    return torch.where(exp == 0xff, special, code)


def _dpr_encode(b, bits):
    x = _elems(b, torch.float32)
    per = DPR_FORMATS[bits][2]
    n = x.numel()
    codes = torch.zeros(-(-n // per) * per, dtype=torch.int64,
                        device=b.device)
    codes[:n] = _dpr_codes(x, bits)
    shifts = torch.arange(per, dtype=torch.int64, device=b.device) * bits
    words = (codes.view(-1, per) << shifts).sum(1)
    return _to_i32(words).view(torch.uint8)


# --- decoders --------------------------------------------------------------

def decode(name, stream, out, index=None, counts=None,
           dtype=torch.float32):
    """Fill @out (uint8, one dimension: the tensor's bytes) from the @name
    stream @stream (uint8, on @out's device).  Binarize writes 1.0 or 0.0
    values of @dtype; DPR the rounded float32 values.

    @index: ZVC's per-window counts from encode(); without it (a stream
    libbuddy encoded) it is recovered by a walk of the chain on the host.
    @counts: the per-chunk counts encode() was given (saves a host read)."""
    if name == "zvc":
        return _zvc_decode(stream, out, index, counts)
    if name == "csr":
        return _csr_decode(stream, out, counts)
    if name == "binarize":
        return _bin_decode(stream, out, dtype)
    if name.startswith("dpr") and int(name[3:]) in DPR_FORMATS:
        return _dpr_decode(stream, out, int(name[3:]))
    raise ValueError(f"codec '{name}': no torch decoder (known: "
                     f"{', '.join(CODECS)})")


def zvc_index(stream):
    """The per-window counts of a ZVC stream, by walking its chain (on the
    host: for streams that come without encode()'s index)."""
    w = stream.cpu().view(torch.int32).tolist()
    out, at = [], 0
    while at < len(w):
        nnz = bin(w[at] & 0xffffffff).count("1")
        out.append(nnz)
        at += 1 + nnz
    return torch.tensor(out, dtype=torch.uint8, device=stream.device)


def _zvc_decode(stream, out, index, counts):
    if index is None:
        index = zvc_index(stream)
    s = _words(stream, 1)
    n = out.numel()
    nwin = -(-n // (4 * ENTRY_WORDS))
    res = torch.empty(nwin * ENTRY_WORDS, dtype=torch.int32,
                      device=out.device)
    shifts = torch.arange(ENTRY_WORDS, dtype=torch.int32, device=out.device)
    cnt = index.to(torch.int32)
    if counts is None:
        counts = [int(cnt[a // ENTRY_WORDS:e // ENTRY_WORDS].sum())
                  for a, e in _chunks(nwin * ENTRY_WORDS)]
    at = 0
    for (a, e), nnz in zip(_chunks(nwin * ENTRY_WORDS), counts):
        c = cnt[a // ENTRY_WORDS:e // ENTRY_WORDS]
        starts = torch.cumsum(c + 1, 0, dtype=torch.int32) - (c + 1) + at
        masks = s[starts.long()]
        bits = ((masks.unsqueeze(1) >> shifts) & 1).bool()
        rank = torch.cumsum(bits, 1, dtype=torch.int32)
        src = (starts.unsqueeze(1) + rank).long().clamp_(max=s.numel() - 1)
        res[a:e] = torch.where(bits, s[src], torch.zeros_like(src,
                               dtype=torch.int32)).view(-1)
        at += c.numel() + nnz
    out.copy_(res.view(torch.uint8)[:n])
    return out


def _csr_decode(stream, out, counts):
    n = out.numel() // 4
    rows = -(-n // CSR_COLS)
    per_row = stream[:2 * rows].clone().view(torch.int16).to(torch.int64)
    chunks = _chunks(rows * CSR_COLS)
    if counts is None:                 # a foreign stream: count its rows
        step = CHUNK_WORDS // CSR_COLS
        counts = [int(per_row[a // CSR_COLS:a // CSR_COLS + step].sum())
                  for a, _ in chunks]
    total = sum(counts)
    cols = stream[2 * rows:2 * rows + total].to(torch.int64)
    vals = stream[2 * rows + total:2 * rows + 5 * total].clone() \
        .view(torch.int32)
    # The word index of every stored value (increasing); in each chunk the
    # words present are marked, and a word's value is the one whose rank
    # among them it has.  Only writes of True go to the same places.
    where = torch.repeat_interleave(
        torch.arange(rows, device=out.device) * CSR_COLS, per_row,
        output_size=total) + cols
    res = torch.zeros(rows * CSR_COLS, dtype=torch.int32, device=out.device)
    lo = 0
    for (a, e), nnz in zip(chunks, counts):
        if nnz:
            present = torch.zeros(e - a, dtype=torch.bool, device=out.device)
            present[where[lo:lo + nnz] - a] = True
            rank = torch.cumsum(present, 0) - 1
            res[a:e] = torch.where(present, vals[lo + rank.clamp_(min=0)],
                                   res[a:e])
        lo += nnz
    out.copy_(res.view(torch.uint8)[:4 * n])
    return out


def _bin_decode(stream, out, dtype):
    x = _elems(out, dtype)
    shifts = torch.arange(8, dtype=torch.uint8, device=out.device)
    bits = ((stream.unsqueeze(1) >> shifts) & 1).view(-1)[:x.numel()]
    x.copy_(bits.to(dtype))
    if x.data_ptr() != out.data_ptr():
        out.copy_(x.view(torch.uint8))
    return out


def _dpr_decode(stream, out, bits):
    eb, mb, per = DPR_FORMATS[bits]
    emax, bias = (1 << eb) - 1, (1 << (eb - 1)) - 1
    mmask = (1 << mb) - 1
    n = out.numel() // 4
    v = stream.clone().view(torch.int32).to(torch.int64) & 0xffffffff
    shifts = torch.arange(per, dtype=torch.int64, device=out.device) * bits
    code = ((v.unsqueeze(1) >> shifts) & ((1 << bits) - 1)).view(-1)[:n]
    e = (code >> mb) & emax
    m = code & mmask
    sign = ((code >> (eb + mb)) & 1) << 31
    inf = (0xff << 23) | torch.where(m != 0, torch.full_like(m, 1 << 22),
                                     torch.zeros_like(m))
    normal = ((e - bias + 127) << 23) | (m << (23 - mb))
    word = sign | torch.where(e == emax, inf,
                              torch.where(e != 0, normal,
                                          torch.zeros_like(m)))
    out.view(torch.int32).copy_(_to_i32(word))
    return out
