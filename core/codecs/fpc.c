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
#include "core/bitstream.h"

#define FPC_ZRUN	0
#define FPC_S4		1
#define FPC_S8		2
#define FPC_S16		3
#define FPC_HI16	4
#define FPC_2X8		5
#define FPC_REP8	6
#define FPC_RAW		7

/*
 * Pattern of a non-zero word, cheapest first, lowest prefix on a tie:
 * S4 (7 bits), S8 (11), REP8 (11), S16 (19), HI16 (19), 2X8 (19), RAW (35).
 * Branch-free: one bit per pattern that applies, in that order; the lowest
 * set bit wins.  RAW always applies.
 */
static __always_inline unsigned int fpc_order(u32 w)
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
	return __builtin_ctz(m);
}

/*
 * The token of each pattern, in that order: prefix << payload width | the
 * payload ((w >> shift) & hi) | (w & lo), @len bits in all.
 */
static const struct {
	u64 pfx;
	u32 hi, lo;
	u8 shift, len;
} fpc_tokens[6] = {
	{ (u64)FPC_S4 << 4, 0xf, 0, 0, 7 },
	{ (u64)FPC_S8 << 8, 0xff, 0, 0, 11 },
	{ (u64)FPC_REP8 << 8, 0xff, 0, 0, 11 },
	{ (u64)FPC_S16 << 16, 0xffff, 0, 0, 19 },
	{ (u64)FPC_HI16 << 16, 0xffff, 0, 16, 19 },
	{ (u64)FPC_2X8 << 16, 0xff00, 0xff, 8, 19 },
};
#define FPC_ORDER_RAW	6	/* the last: RAW always applies */

/*
 * A token is one put of at most 35 bits, and starts after at most 31 others:
 * no store starts past bit 31 * 35.
 */
#define FPC_MAX_TOKEN	35
_Static_assert(BITW_BUF_BYTES((BUDDY_ENTRY_WORDS - 1) * FPC_MAX_TOKEN) <=
	       BUDDY_STREAM_MAX, "the writer stores 8 bytes from a token");

static unsigned int fpc_compress(const u8 *src, u8 *dst)
{
	struct bitw w;
	unsigned int i;
	u32 zmask = 0;

	bitw_init(&w, dst);
	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		zmask |= (u32)!get_unaligned_le32(src + 4 * i) << i;

	for (i = 0; i < BUDDY_ENTRY_WORDS; ) {
		u32 v = get_unaligned_le32(src + 4 * i);
		unsigned int o, n;

		if (zmask & (1u << i)) {
			/* Greedy run: the zeros from i on, at most 8. */
			n = __builtin_ctzll(~((u64)zmask >> i));
			if (n > 8)
				n = 8;
			bitw_put(&w, (FPC_ZRUN << 3) | (n - 1), 6);
			i += n;
			continue;
		}
		o = fpc_order(v);
		if (o == FPC_ORDER_RAW)
			bitw_put(&w, (u64)FPC_RAW << 32 | v, 35);
		else
			bitw_put(&w, fpc_tokens[o].pfx |
				 ((v >> fpc_tokens[o].shift) &
				  fpc_tokens[o].hi) |
				 (v & fpc_tokens[o].lo), fpc_tokens[o].len);
		i++;
	}
	return bitw_finish(&w);
}

/*
 * Size-only path, a dedicated computation that matches fpc_compress():
 *
 *  - non-zero word: the cheapest pattern costs 7 (S4), 11 (S8, REP8),
 *    19 (S16, HI16, 2X8) or 35 (RAW).  S4 implies S8 implies S16, so with
 *    a = S16|HI16|2X8|REP8, b = S8|REP8, c = S4 the cost is
 *    35 - 16a - 8b - 4c, the same patterns fpc_order() tests;
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

/* Payload bits of prefix p: byte p of this constant (3,4,8,16,16,16,8,32). */
#define FPC_PAYLOAD_BITS	0x2008101010080403ull

/*
 * Value of a token of prefix 1..7 but 5 (2X8) from its payload p:
 * (u32)((s32)(p << up) >> down) * mul.  Prefix 0 (zero run) gives 0.
 */
static const struct {
	u8 up, down;
	u32 mul;
} fpc_values[8] = {
	{ 0, 0, 0 }, { 28, 28, 1 }, { 24, 24, 1 }, { 16, 16, 1 },
	{ 16, 0, 1 }, { 0, 0, 0 }, { 0, 0, 0x01010101u }, { 0, 0, 1 },
};

static int fpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	struct bitr r;
	unsigned int i = 0, used = 0;
	u64 t;

	bitr_init(&r, src, srclen);
	t = bitr_peek(&r);
	memset(dst, 0, BUDDY_ENTRY_BYTES);
	while (i < BUDDY_ENTRY_WORDS) {
		unsigned int pfx, n;
		u32 p, v, x8;

		/*
		 * Tokens come from @t, a copy of the reader's 64-bit window,
		 * which moves on once a token might take @used past 56 bits,
		 * the most bitr_skip() takes.  The stream is long enough when
		 * its last token ends inside it: checked once at the end.
		 */
		if (used > 56 - FPC_MAX_TOKEN) {
			bitr_skip(&r, used);
			t = bitr_peek(&r);
			used = 0;
		}
		pfx = (unsigned int)(t >> 61);
		n = (unsigned int)(FPC_PAYLOAD_BITS >> (8 * pfx)) & 0xff;
		p = (u32)((t << 3) >> (64 - n));
		t <<= 3 + n;
		used += 3 + n;

		v = (u32)((s32)(p << fpc_values[pfx].up) >>
			  fpc_values[pfx].down) * fpc_values[pfx].mul;
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
	if (used)
		bitr_skip(&r, used);
	return bitr_over(&r) ? -EINVAL : 0;
}

const struct buddy_codec buddy_codec_fpc = {
	.name		= "fpc",
	.id		= BUDDY_CODEC_FPC,
	.compress	= fpc_compress,
	.size		= fpc_size,
	.decompress	= fpc_decompress,
};
