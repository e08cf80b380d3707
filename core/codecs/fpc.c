// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpc.c - Frequent Pattern Compression (Alameldeen & Wood 2004) of one
 * 128-byte entry.
 *
 * The entry is 32 little-endian 32-bit words w[0..31] (w[j] from bytes
 * 4j..4j+3).  Each word, or run of zero words, becomes a 3-bit prefix and a
 * payload, every field written most significant bit first:
 *
 *   prefix  meaning                                   payload    bits
 *   000     run of 1..8 zero words                    run-1, 3   6
 *   001     4-bit sign-extended value                 w[3:0]     7
 *   010     8-bit sign-extended value                 w[7:0]     11
 *   011     16-bit sign-extended value                w[15:0]    19
 *   100     low halfword zero                         w[31:16]   19
 *   101     two halfwords, each an 8-bit sign-        w[23:16],  19
 *           extended value (high halfword first)      w[7:0]
 *   110     four equal bytes                          w[7:0]     11
 *   111     uncompressed word                         w[31:0]    35
 *
 * Zero words are grouped greedily into maximal runs of at most 8 (a run of
 * 11 zero words is a run of 8 then a run of 3).  A non-zero word takes the
 * cheapest pattern that applies, the lowest prefix on a tie: 0xffffffff is
 * 001 (-1, not 110), which makes all-ones 224 bits; 0x000000ff (255) is 011;
 * 0x00010000 is 100 (not 101).  The all-zero entry is 4 runs of 8, 24 bits;
 * the longest stream is 32 * 35 = 1120 bits (140 bytes).
 *
 * The decoder stops after 32 words; any bits after that are padding and are
 * ignored.  A run that would go past word 31, or a stream that ends before
 * all 32 words are decoded, is -EINVAL.
 *
 * size() adds token lengths without building tokens (see fpc_size()).
 */
#include "../codec.h"

#define FPC_ZRUN	0
#define FPC_S4		1
#define FPC_S8		2
#define FPC_S16		3
#define FPC_HI16	4
#define FPC_2X8		5
#define FPC_REP8	6
#define FPC_RAW		7

/* Payload width of each prefix; the zero run's is its 3-bit length - 1. */
static const u8 fpc_payload_bits[8] = { 3, 4, 8, 16, 16, 16, 8, 32 };

/*
 * Pattern of a non-zero word, cheapest first, lowest prefix on a tie:
 * S4 (7 bits), S8 (11), REP8 (11), S16 (19), HI16 (19), 2X8 (19), RAW (35).
 * Branch-free: one bit per pattern that applies, in that order; the lowest
 * set bit wins.  RAW always applies.
 */
static const u8 fpc_class_order[7] = {
	FPC_S4, FPC_S8, FPC_REP8, FPC_S16, FPC_HI16, FPC_2X8, FPC_RAW,
};

static __always_inline unsigned int fpc_class(u32 w)
{
	/* Both halfwords 8-bit sign-extended, and four equal bytes. */
	u32 x8 = ((u32)(s32)(s8)w & 0xffff) | (u32)(s32)(s8)(w >> 16) << 16;
	u32 rot = (w << 8) | (w >> 24);
	unsigned int m = 1u << 6;

	m |= (unsigned int)(w + 8 < 16);			/* -8..7 */
	m |= (unsigned int)(w + 0x80 < 0x100) << 1;		/* -128..127 */
	m |= (unsigned int)(w == rot) << 2;
	m |= (unsigned int)(w + 0x8000 < 0x10000) << 3;	/* 16-bit */
	m |= (unsigned int)!(w & 0xffff) << 4;
	m |= (unsigned int)(w == x8) << 5;
	return fpc_class_order[__builtin_ctz(m)];
}

/* Payload of a non-zero word: ((w >> shift) & hi) | (w & lo). */
static const u8 fpc_pl_shift[8] = { 0, 0, 0, 0, 16, 8, 0, 0 };
static const u32 fpc_pl_hi[8] = {
	0, 0xf, 0xff, 0xffff, 0xffff, 0xff00, 0xff, 0xffffffff,
};
static const u32 fpc_pl_lo[8] = { 0, 0, 0, 0, 0, 0xff, 0, 0 };

static __always_inline u32 fpc_payload(unsigned int cls, u32 w)
{
	return ((w >> fpc_pl_shift[cls]) & fpc_pl_hi[cls]) |
	       (w & fpc_pl_lo[cls]);
}

/*
 * Local MSB-first writer: whole 32-bit groups go out at once.  @n <= 32 and
 * nacc < 32 between puts, so the 64-bit accumulator never loses a bit.
 */
struct fpc_wr {
	u8 *p;
	u64 acc;
	unsigned int nacc;
	unsigned int bits;
};

static __always_inline void fpc_put(struct fpc_wr *w, u32 v, unsigned int n)
{
	w->bits += n;
	w->acc = (w->acc << n) | v;
	w->nacc += n;
	if (w->nacc >= 32) {
		u32 out;

		w->nacc -= 32;
		out = (u32)(w->acc >> w->nacc);
		w->p[0] = out >> 24;
		w->p[1] = out >> 16;
		w->p[2] = out >> 8;
		w->p[3] = out;
		w->p += 4;
	}
}

static unsigned int fpc_compress(const u8 *src, u8 *dst)
{
	struct fpc_wr w = { .p = dst };
	unsigned int i;
	u32 zmask = 0;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		zmask |= (u32)!get_unaligned_le32(src + 4 * i) << i;

	for (i = 0; i < BUDDY_ENTRY_WORDS; ) {
		u32 v = get_unaligned_le32(src + 4 * i);
		unsigned int cls, n;

		if (zmask & (1u << i)) {
			/* Greedy run: the zeros from i on, at most 8. */
			n = __builtin_ctzll(~((u64)zmask >> i));
			if (n > 8)
				n = 8;
			fpc_put(&w, (FPC_ZRUN << 3) | (n - 1), 6);
			i += n;
			continue;
		}
		cls = fpc_class(v);
		n = fpc_payload_bits[cls];
		if (cls == FPC_RAW) {
			fpc_put(&w, FPC_RAW, 3);
			fpc_put(&w, v, 32);
		} else {
			fpc_put(&w, (cls << n) | fpc_payload(cls, v), 3 + n);
		}
		i++;
	}
	/* Flush the last partial group, zero-padded to a whole byte. */
	if (w.nacc) {
		u32 last = (u32)(w.acc << (32 - w.nacc));
		unsigned int b;

		for (b = 0; b < DIV_ROUND_UP(w.nacc, 8); b++)
			*w.p++ = last >> (24 - 8 * b);
	}
	return w.bits;
}

/*
 * Size-only path, a dedicated computation that matches fpc_compress():
 *
 *  - non-zero word: the cheapest pattern costs 7 (S4), 11 (S8, REP8),
 *    19 (S16, HI16, 2X8) or 35 (RAW).  S4 implies S8 implies S16, so with
 *    a = S16|HI16|2X8|REP8, b = S8|REP8, c = S4 the cost is
 *    35 - 16a - 8b - 4c, the same patterns fpc_class() tests;
 *  - zero words: the greedy runs of at most 8 make ceil(L / 8) tokens of
 *    6 bits per maximal run of L zero words.
 *
 * The round-trip test checks size() == compress() on every entry.
 */
static unsigned int fpc_size(const u8 *src)
{
	unsigned int i, bits = 0;
	u32 zmask = 0;
	u64 z;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++) {
		u32 w = get_unaligned_le32(src + 4 * i);
		u32 x8 = ((u32)(s32)(s8)w & 0xffff) |
			 (u32)(s32)(s8)(w >> 16) << 16;
		unsigned int rep = w == ((w << 8) | (w >> 24));
		unsigned int c = w + 8 < 16;
		unsigned int b = (w + 0x80 < 0x100) | rep;
		unsigned int a = (w + 0x8000 < 0x10000) | !(w & 0xffff) |
				 (w == x8) | rep;

		if (!w)
			zmask |= 1u << i;
		else
			bits += 35 - 16 * a - 8 * b - 4 * c;
	}
	for (z = zmask; z; ) {
		unsigned int start = __builtin_ctzll(z);
		unsigned int len = __builtin_ctzll(~(z >> start));

		bits += 6 * ((len + 7) >> 3);
		z &= ~(((1ull << len) - 1) << start);
	}
	return bits;
}

static __always_inline u64 fpc_be64(const u8 *p)
{
	return (u64)p[0] << 56 | (u64)p[1] << 48 | (u64)p[2] << 40 |
	       (u64)p[3] << 32 | (u64)p[4] << 24 | (u64)p[5] << 16 |
	       (u64)p[6] << 8 | p[7];
}

/*
 * Local bounds-checked MSB-first reader.  @acc holds the next stream bits
 * MSB-aligned; the first @avail of them are real.  A refill only loads
 * bytes below @srclen (the rest of the window is zeros), and a token longer
 * than @avail is an error, so missing bytes are never taken for zeros.
 * Bits of a partly loaded byte may sit below @avail: they are the real
 * stream bits, and the next refill ORs the same values over them.
 */
struct fpc_rd {
	const u8 *src;
	unsigned int srclen;
	unsigned int next;	/* next byte to load */
	unsigned int avail;
	u64 acc;
};

static __always_inline void fpc_refill(struct fpc_rd *r)
{
	unsigned int room = (64 - r->avail) >> 3, left = r->srclen - r->next;
	u64 x;

	if (likely(left >= 8)) {
		x = fpc_be64(r->src + r->next);
	} else {
		unsigned int i;

		x = 0;
		for (i = 0; i < left; i++)
			x |= (u64)r->src[r->next + i] << (56 - 8 * i);
		if (room > left)
			room = left;
	}
	r->acc |= x >> r->avail;
	r->next += room;
	r->avail += 8 * room;
}

/* Payload bits of prefix p: byte p of this constant (3,4,8,16,16,16,8,32). */
#define FPC_PAYLOAD_BITS	0x2008101010080403ull

/*
 * Value of a token of prefix 1..7 but 5 (2X8) from its payload p:
 * (u32)((s32)(p << up) >> down) * mul.  Prefix 0 (zero run) gives 0.
 */
static const u8 fpc_up[8] = { 0, 28, 24, 16, 16, 0, 0, 0 };
static const u8 fpc_down[8] = { 0, 28, 24, 16, 0, 0, 0, 0 };
static const u32 fpc_mul[8] = { 0, 1, 1, 1, 1, 0, 0x01010101u, 1 };

static int fpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	struct fpc_rd r = { .src = src, .srclen = srclen };
	unsigned int i = 0;

	memset(dst, 0, BUDDY_ENTRY_BYTES);
	while (i < BUDDY_ENTRY_WORDS) {
		unsigned int pfx, n, len;
		u32 p, v, x8;

		if (r.avail < 35)
			fpc_refill(&r);
		pfx = (unsigned int)(r.acc >> 61);
		n = (unsigned int)(FPC_PAYLOAD_BITS >> (8 * pfx)) & 0xff;
		len = 3 + n;
		if (unlikely(len > r.avail))
			return -EINVAL;
		p = (u32)((r.acc << 3) >> (64 - n));
		r.acc <<= len;
		r.avail -= len;

		v = (u32)((s32)(p << fpc_up[pfx]) >> fpc_down[pfx]) *
		    fpc_mul[pfx];
		x8 = (u32)(s32)(s8)(p >> 8) << 16 | (u16)(s16)(s8)p;
		if (pfx == FPC_2X8)
			v = x8;
		put_unaligned_le32(v, dst + 4 * i);
		if (pfx == FPC_ZRUN) {
			/* The words are zero already; a run may not pass 31. */
			if (unlikely(p + 1 > BUDDY_ENTRY_WORDS - i))
				return -EINVAL;
			i += p + 1;
		} else {
			i++;
		}
	}
	return 0;
}

const struct buddy_codec buddy_codec_fpc = {
	.name		= "fpc",
	.id		= BUDDY_CODEC_FPC,
	.compress	= fpc_compress,
	.size		= fpc_size,
	.decompress	= fpc_decompress,
};
