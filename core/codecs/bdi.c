// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bdi.c - Base-Delta-Immediate compression (Pekhimenko et al., PACT 2012) of
 * one 128-byte entry.
 *
 * The entry is read as n = 128 / k little-endian k-byte elements x[0..n-1]
 * (k = 8, 4 or 2).  An encoding BkDd stores every element as a d-byte signed
 * delta from one of two bases: the implicit zero base, or one explicit
 * k-byte base.
 *
 *  - An element is an immediate when it fits d bytes signed (as a k-byte
 *    signed value); it uses the zero base.
 *  - The first element that is not an immediate is the base.  Every later
 *    non-immediate must have (x - base) fit d bytes signed.  The subtraction
 *    is done modulo 2^(8k), in k-byte two's complement, as BDI hardware does
 *    with a k-byte subtractor: e.g. in B8D1 the elements 0x7fff...ff and
 *    0x8000...00 are one apart, so base 0x7fff...ff and delta +1 encode the
 *    second.  The decoder adds modulo 2^(8k) likewise.
 *  - With no non-immediate element the stored base is 0.
 *
 * Stream layout, every field most significant bit first, in this order:
 *
 *   tag   4 bits    encoding, below
 *   mask  n bits    BkDd only: bit for x[0] first; 1 = explicit base,
 *                   0 = implicit base 0
 *   base  8k bits   BkDd only: the explicit base, a k-byte unsigned value
 *   delta n * 8d    BkDd only: x[i] - base (mask 1) or x[i] (mask 0), low 8d
 *                   bits, x[0] first
 *
 *   tag   name    body                                       bits
 *   0000  zeros   8 zero bits (the entry is 128 zero bytes)    12
 *   0001  rep8    the 8-byte element as a u64, all 16 equal    68
 *   0010  B8D1    mask 16, base 64, 16 x 8                    212
 *   0011  B8D2    mask 16, base 64, 16 x 16                   340
 *   0100  B8D4    mask 16, base 64, 16 x 32                   596
 *   0101  B4D1    mask 32, base 32, 32 x 8                    324
 *   0110  B4D2    mask 32, base 32, 32 x 16                   580
 *   0111  B2D1    mask 64, base 16, 64 x 8                    596
 *   1111  raw     the 128 bytes in order                     1028
 *   1000..1110    reserved: -EINVAL
 *
 * (Tag values follow Table 2 of the BDI paper.)  The encoder takes the
 * smallest encoding that applies, trying them in the order zeros, rep8,
 * B8D1, B4D1, B8D2, B4D2, B2D1, B8D4, raw; B2D1 and B8D4 cost the same and
 * B2D1 wins the tie.  rep8 is used only when the entry is not all zero.
 *
 * The decoder rejects reserved tags, a zeros body that is not zero, and a
 * stream longer than @srclen; bits after the stream are padding, ignored.
 */
#include "core/bitstream.h"

#define BDI_ZEROS	0x0
#define BDI_REP8	0x1
#define BDI_B8D1	0x2
#define BDI_B8D2	0x3
#define BDI_B8D4	0x4
#define BDI_B4D1	0x5
#define BDI_B4D2	0x6
#define BDI_B2D1	0x7
#define BDI_RAW		0xf

/* Per tag: element bytes k, delta bytes d, stream bits; bits 0: reserved. */
static const struct {
	u8 k, d;
	u16 bits;
} bdi_modes[16] = {
	[BDI_ZEROS] = { 0, 0, 12 },
	[BDI_REP8]  = { 8, 0, 68 },
	[BDI_B8D1]  = { 8, 1, 4 + 16 + 64 + 16 * 8 },
	[BDI_B8D2]  = { 8, 2, 4 + 16 + 64 + 16 * 16 },
	[BDI_B8D4]  = { 8, 4, 4 + 16 + 64 + 16 * 32 },
	[BDI_B4D1]  = { 4, 1, 4 + 32 + 32 + 32 * 8 },
	[BDI_B4D2]  = { 4, 2, 4 + 32 + 32 + 32 * 16 },
	[BDI_B2D1]  = { 2, 1, 4 + 64 + 16 + 64 * 8 },
	[BDI_RAW]   = { 1, 1, 4 + 1024 },
};

static __always_inline u64 bdi_load8(const u8 *p)
{
	return get_unaligned_le32(p) | (u64)get_unaligned_le32(p + 4) << 32;
}

static __always_inline u64 bdi_load(const u8 *p, unsigned int k)
{
	if (k == 2)
		return p[0] | (u32)p[1] << 8;
	if (k == 4)
		return get_unaligned_le32(p);
	return bdi_load8(p);
}

/*
 * Which of BkD1, BkD2, BkD4 (bits 0, 1, 2 of @dset) apply to the entry, in
 * one pass over its k-byte elements; bit j of the result set when BkD(2^j)
 * applies, with its base in bases[j] (0 when every element is an
 * immediate).  Values live in the low 8k bits of a u64; the additions and
 * the subtraction are taken modulo 2^(8k) (& kmask).  v fits d bytes signed
 * iff v + 2^(8d-1) (mod 2^(8k)) < 2^(8d).
 */
static __always_inline unsigned int bdi_scan(const u8 *src, unsigned int k,
					     unsigned int dset, u64 *bases)
{
	const u64 kmask = k == 8 ? ~0ull : (1ull << (8 * k)) - 1;
	unsigned int have = 0, ok = dset, i, j;

	for (j = 0; j < 3; j++)
		bases[j] = 0;
	for (i = 0; i < BUDDY_ENTRY_BYTES / k && ok; i++) {
		u64 x = bdi_load(src + k * i, k);

		for (j = 0; j < 3; j++) {
			const u64 half = 1ull << (8 * (1u << j) - 1);
			const u64 lim = half << 1;

			if (!(dset & (1u << j)) || !(ok & (1u << j)))
				continue;
			if (((x + half) & kmask) < lim)
				continue;		/* immediate */
			if (!(have & (1u << j))) {
				have |= 1u << j;
				bases[j] = x;
			} else if (((x - bases[j] + half) & kmask) >= lim) {
				ok &= ~(1u << j);
			}
		}
	}
	return ok;
}

/* The encoding of an entry (a BDI_* tag) and, for BkDd, its base. */
static unsigned int bdi_choose(const u8 *src, u64 *base)
{
	u64 e0 = bdi_load8(src), b8[3], b4[3], b2[3];
	unsigned int i, ok8, ok4;

	for (i = 1; i < 16; i++)
		if (bdi_load8(src + 8 * i) != e0)
			break;
	if (i == 16) {
		*base = e0;
		return e0 ? BDI_REP8 : BDI_ZEROS;
	}
	/* Ascending stream size: 212, 324, 340, 580, 596, 596. */
	ok8 = bdi_scan(src, 8, 7, b8);
	if (ok8 & 1) {
		*base = b8[0];
		return BDI_B8D1;
	}
	ok4 = bdi_scan(src, 4, 3, b4);
	if (ok4 & 1) {
		*base = b4[0];
		return BDI_B4D1;
	}
	if (ok8 & 2) {
		*base = b8[1];
		return BDI_B8D2;
	}
	if (ok4 & 2) {
		*base = b4[1];
		return BDI_B4D2;
	}
	if (bdi_scan(src, 2, 1, b2)) {
		*base = b2[0];
		return BDI_B2D1;
	}
	if (ok8 & 4) {
		*base = b8[2];
		return BDI_B8D4;
	}
	return BDI_RAW;
}

/* The longest stream, raw, 4 + 1024 bits, fits with the writer's slack. */
_Static_assert(BITW_BUF_BYTES(4 + 8 * BUDDY_ENTRY_BYTES) <= BUDDY_STREAM_MAX,
	       "every put and the finish start inside the stream");

/*
 * Stream of BkDd @tag: the tag, mask, base and deltas.  The deltas are
 * packed 64 bits at a time (8 / @d of them, the first on top) while the
 * mask is made, and go out after it.
 */
static __always_inline void bdi_body(struct bitw *w, const u8 *src,
				     unsigned int tag, unsigned int k,
				     unsigned int d, u64 base)
{
	const unsigned int n = BUDDY_ENTRY_BYTES / k, per = 8 / d;
	const u64 kmask = k == 8 ? ~0ull : (1ull << (8 * k)) - 1;
	const u64 half = 1ull << (8 * d - 1), lim = 1ull << (8 * d);
	u64 deltas[BUDDY_ENTRY_BYTES / 8], mask = 0, acc = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		u64 x = bdi_load(src + k * i, k);
		u64 nonimm = ((x + half) & kmask) >= lim;

		mask = mask << 1 | nonimm;
		acc = acc << (8 * d) | ((nonimm ? x - base : x) & (lim - 1));
		if (i % per == per - 1)
			deltas[i / per] = acc;
	}
	if (n == 64) {
		bitw_put(w, tag, 4);
		bitw_put64(w, mask);
	} else {
		bitw_put(w, (u64)tag << n | mask, 4 + n);
	}
	if (k == 8)
		bitw_put64(w, base);
	else
		bitw_put(w, base, 8 * k);
	for (i = 0; i < n / per; i++)
		bitw_put64(w, deltas[i]);
}

static unsigned int bdi_compress(const u8 *src, u8 *dst)
{
	struct bitw w;
	unsigned int tag, j;
	u64 base;

	bitw_init(&w, dst);
	tag = bdi_choose(src, &base);
	switch (tag) {
	case BDI_ZEROS:
		bitw_put(&w, 0, 12);		/* the tag, 8 zero bits */
		break;
	case BDI_RAW:
		bitw_put(&w, tag, 4);
		for (j = 0; j < BUDDY_ENTRY_BYTES; j += 8)
			bitw_put64(&w, get_unaligned_be64(src + j));
		break;
	case BDI_REP8:
		bitw_put(&w, tag, 4);
		bitw_put64(&w, base);
		break;
	case BDI_B8D1:
		bdi_body(&w, src, tag, 8, 1, base);
		break;
	case BDI_B8D2:
		bdi_body(&w, src, tag, 8, 2, base);
		break;
	case BDI_B8D4:
		bdi_body(&w, src, tag, 8, 4, base);
		break;
	case BDI_B4D1:
		bdi_body(&w, src, tag, 4, 1, base);
		break;
	case BDI_B4D2:
		bdi_body(&w, src, tag, 4, 2, base);
		break;
	default:
		bdi_body(&w, src, tag, 2, 1, base);
		break;
	}
	return bitw_finish(&w);
}

static unsigned int bdi_size(const u8 *src)
{
	u64 base;

	return bdi_modes[bdi_choose(src, &base)].bits;
}

/*
 * The body is the stream from bit 4 on, byte-aligned after the tag: body
 * byte j is the low nibble of s[j] and the high nibble of s[j + 1].  The
 * decoder checks the stream length first, then reads every field of 8 to
 * 64 bits with one bits_get64() of the 9 bytes from its first: those of
 * the last field end where the stream does.
 */
static __always_inline u64 bdi_field(const u8 *s, unsigned int off)
{
	return bits_get64(s + off, 4);
}

/*
 * Decode the body of BkDd.  The mask and each 64-bit group of deltas are
 * consumed from the top, one element at a time.
 */
static __always_inline void bdi_unbody(const u8 *s, u8 *dst, unsigned int k,
				       unsigned int d)
{
	const unsigned int n = BUDDY_ENTRY_BYTES / k, per = 8 / d;
	const unsigned int at = n / 8 + k;
	u64 mask = bdi_field(s, 0);
	u64 base = bdi_field(s, n / 8) >> (64 - 8 * k);
	u64 q = 0;
	unsigned int i;

	for (i = 0; i < n; i++, dst += k) {
		u64 v;

		if (!(i % per))
			q = bdi_field(s, at + d * i);
		/* Sign-extend the delta, then add modulo 2^(8k). */
		v = (u64)((s64)q >> (64 - 8 * d));
		v += base & (u64)((s64)mask >> 63);
		q <<= 8 * d;
		mask <<= 1;
		if (k == 2) {
			dst[0] = (u8)v;
			dst[1] = (u8)(v >> 8);
		} else if (k == 4) {
			put_unaligned_le32((u32)v, dst);
		} else {
			put_unaligned_le32((u32)v, dst);
			put_unaligned_le32((u32)(v >> 32), dst + 4);
		}
	}
}

static int bdi_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	unsigned int tag, i;
	u64 v;

	if (!srclen)
		return -EINVAL;
	tag = src[0] >> 4;
	/* Reserved tag, or fewer bytes than the stream needs. */
	if (!bdi_modes[tag].bits ||
	    DIV_ROUND_UP(bdi_modes[tag].bits, 8) > srclen)
		return -EINVAL;

	switch (tag) {
	case BDI_ZEROS:
		/* the tag, then 8 zero bits: too short for bdi_field() */
		if (src[0] | src[1] >> 4)
			return -EINVAL;
		memset(dst, 0, BUDDY_ENTRY_BYTES);
		break;
	case BDI_REP8:
		v = bdi_field(src, 0);
		for (i = 0; i < BUDDY_ENTRY_BYTES; i += 8) {
			put_unaligned_le32((u32)v, dst + i);
			put_unaligned_le32((u32)(v >> 32), dst + i + 4);
		}
		break;
	case BDI_RAW:
		for (i = 0; i < BUDDY_ENTRY_BYTES; i += 8)
			bits_put64(dst + i, bdi_field(src, i));
		break;
	case BDI_B8D1:
		bdi_unbody(src, dst, 8, 1);
		break;
	case BDI_B8D2:
		bdi_unbody(src, dst, 8, 2);
		break;
	case BDI_B8D4:
		bdi_unbody(src, dst, 8, 4);
		break;
	case BDI_B4D1:
		bdi_unbody(src, dst, 4, 1);
		break;
	case BDI_B4D2:
		bdi_unbody(src, dst, 4, 2);
		break;
	default:	/* BDI_B2D1 */
		bdi_unbody(src, dst, 2, 1);
		break;
	}
	return 0;
}

const struct buddy_codec buddy_codec_bdi = {
	.name		= "bdi",
	.id		= BUDDY_CODEC_BDI,
	.compress	= bdi_compress,
	.size		= bdi_size,
	.decompress	= bdi_decompress,
};
