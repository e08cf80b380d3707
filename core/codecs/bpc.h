/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * bpc.h - the parts of Bit-Plane Compression that do not depend on how the
 * planes are computed, shared by the scalar codec (bpc.c, the reference)
 * and the vector one (bpc_avx2.c), so that both write and read one format:
 * the base word, the symbol of each plane from its class masks, the stream
 * length, the stream writer over transposed planes, constant and ramp
 * entries, and the words from the deltas.  See shared/spec/bpc.md.
 */
#ifndef BUDDY_CORE_CODECS_BPC_H
#define BUDDY_CORE_CODECS_BPC_H

#include "core/bitstream.h"

#define BPC_PLANES	33
#define BPC_PLANE_MASK	0x7fffffffu	/* 31 deltas per plane */
#define BPC_ALL_PLANES	((1ull << BPC_PLANES) - 1)
/* Longest stream: a 33-bit base and 33 literal planes. */
#define BPC_MAX_BITS	(33 + BPC_PLANES * 32)
/* The literal marker of two planes side by side in one 64-bit word. */
#define BPC_LIT2	0x8000000080000000ull

_Static_assert(BITW_BUF_BYTES(BPC_MAX_BITS) <= BUDDY_STREAM_MAX,
	       "every put and the finish start inside the stream");

/*
 * The zero run of *@run planes, if any: 001, or 01 LLLLL for L = run - 2.
 */
static __always_inline void bpc_put_run(struct bitw *o, unsigned int *run)
{
	if (!*run)
		return;
	if (*run == 1)
		bitw_put(o, 1, 3);
	else
		bitw_put(o, 30 + *run, 7);	/* 30 + run = 32 | (run - 2) */
	*run = 0;
}

/*
 * The base word as code << 6 | length, without a branch (w0 == 0 is as
 * likely as not in some data): b is the width of w0 as a signed number,
 * p picks the 4-, 8-, 16- or 32-bit field.
 */
static __always_inline u64 bpc_base(s32 w0)
{
	u32 m = (u32)(w0 ^ (w0 >> 31));
	unsigned int b = 32 - __builtin_clz(m << 1 | 1);
	unsigned int p = (b > 4) + (b > 8) + (b > 16), n = 4u << p;
	u64 pre = p == 3 ? 1 : p + 1;		/* 1, or 001 010 011 */
	u64 code = pre << n | ((u32)w0 & ((1ull << n) - 1));
	unsigned int len = n + (p == 3 ? 1 : 3);

	return w0 ? code << 6 | len : 3;		/* 000 */
}

/* Word @i of the entry, sign-extended. */
static __always_inline s64 bpc_word(const u8 *src, int i)
{
	return (s32)get_unaligned_le32(src + 4 * i);
}

/*
 * Plane masks (bit k for plane k, 33 bits): non-zero, all ones, DBP not
 * zero, a single one, exactly two ones in adjacent rows, and (the scalar
 * encoder's) exactly one in each of the even and the odd rows.
 */
struct bpc_masks {
	u64 nz, all, dbp, one, pair, cand;
};

/*
 * The symbol class of each plane, in 33-bit masks: @s5 5 bits (all ones,
 * or DBP == 0 with DBX != 0), @s10 10 bits (a single one or two adjacent
 * ones), @lit 32 bits (the other non-zero planes).
 */
static __always_inline void bpc_classes(const struct bpc_masks *m, u64 *s5,
					u64 *s10, u64 *lit)
{
	*s5 = m->all | (m->nz & ~m->dbp);
	*s10 = ~*s5 & (m->one | m->pair);
	*lit = m->nz & ~*s5 & ~*s10;
}

/*
 * Ones in @m.  A file whose every caller runs with POPCNT (the vector
 * codecs' functions, by their target attribute) defines BPC_HAVE_POPCNT
 * before it includes this header and gets the instruction; the others
 * count by halves, as the kernel builds without it and has no libgcc.
 */
static __always_inline unsigned int bpc_weight(u64 m)
{
#ifdef BPC_HAVE_POPCNT
	return __builtin_popcountll(m);
#endif
	m -= (m >> 1) & 0x5555555555555555ull;
	m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
	m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (m * 0x0101010101010101ull) >> 56;
}

/*
 * Stream length from the base (code << 6 | length) and the masks of the
 * planes with 5-, 10- and 32-bit symbols and of the zero planes: a zero
 * run starts below a non-zero plane or at plane 32 and costs 7 bits, or 3
 * when the plane below it is not zero.
 */
static __always_inline unsigned int bpc_size_of(u64 base, u64 s5, u64 s10,
						u64 lit, u64 zero)
{
	u64 starts = zero & ~(zero >> 1);

	return (base & 63) + 5 * bpc_weight(s5) + 10 * bpc_weight(s10) +
	       32 * bpc_weight(lit) + 7 * bpc_weight(starts) -
	       4 * bpc_weight(starts & ~(zero << 1));
}

/*
 * All 31 deltas equal @d (constant and ramp entries): every DBP[k] is 0 or
 * all ones, so every DBX[k] is too, and DBX[k] != 0 exactly where bits k
 * and k + 1 of @d differ (bit 32 for DBX[32]).  Such a plane codes as
 * 00000 (all ones comes first), whatever DBP is.
 */
static __always_inline unsigned int bpc_encode_ramp(struct bitw *o,
						    u64 base, s64 d,
						    const bool write)
{
	u64 d33 = (u64)d & BPC_ALL_PLANES;
	u64 nz = d33 ^ (d33 >> 1);
	unsigned int last = BPC_PLANES, run, k;

	if (!write)
		return bpc_size_of(base, nz, 0, 0, nz ^ BPC_ALL_PLANES);
	bitw_put(o, base >> 6, base & 63);
	while (nz) {
		k = 63 - __builtin_clzll(nz);
		nz ^= 1ull << k;
		run = last - 1 - k;
		bpc_put_run(o, &run);
		bitw_put(o, 0, 5);			/* 00000 */
		last = k;
	}
	bpc_put_run(o, &last);
	return bitw_bits(o);
}

/*
 * Plane @k of the transposed DBX rows (@x, plane 32 in x[16]): a zero
 * plane extends the run, any other codes the run, then its own symbol:
 * 1 DBX, 00000 (all ones first), 00001 (DBP is zero), or the position of
 * a single one or two adjacent ones.
 */
static __always_inline void bpc_put_plane(struct bitw *o, const u64 *x,
					  int k, u64 nz, u64 lit, u64 s5,
					  u64 all, unsigned int *run)
{
	u32 v = (u32)(x[k / 2] >> (k & 1 ? 32 : 0)), sym;
	unsigned int at, n, r = *run;
	u64 code;

	if (!(nz >> k & 1)) {
		(*run)++;
		return;
	}
	/*
	 * The symbol, picked by moves rather than branches where the
	 * compiler can: in some data, plane classes come in any order.
	 */
	at = __builtin_ctz(v | 1u << 31);
	sym = (v >> at == 1 ? 3u << 5 : 2u << 5) | at;	/* 00011/00010 p */
	n = 10;
	if (s5 >> k & 1) {
		sym = !(all >> k & 1);			/* 00000, 00001 */
		n = 5;
	}
	if (lit >> k & 1) {
		sym = 1u << 31 | v;			/* 1 DBX */
		n = 32;
	}
	/* the run before it: 001, 01 LLLLL (30 + r = 32 | (r - 2)) or none */
	code = r > 1 ? 30 + r : r;
	bitw_put(o, code << n | sym, n + (r > 1 ? 7 : 3 * r));
	*run = 0;
}

/*
 * The stream of an entry whose planes are classified (@nz, @lit, @s5,
 * @all as bpc_classes() and struct bpc_masks say) and transposed: x[j] =
 * DBX[2j] | DBX[2j + 1] << 32, x[16] = DBX[32].  Returns its length.
 */
static __always_inline unsigned int bpc_put_planes(struct bitw *o, u64 base,
						   const u64 *x, u64 nz,
						   u64 lit, u64 s5, u64 all)
{
	unsigned int run, low;
	u64 lit2;
	int j;

	bitw_put(o, base >> 6, base & 63);
	/*
	 * Bit 2j of lit2: planes 2j + 1 and 2j are both literals.  Pairs
	 * 0..low-1 are, a stretch down to plane 0 (all the planes of noisy
	 * data), which goes out below as 64-bit words.
	 */
	lit2 = lit & (lit >> 1) & 0x55555555ull;
	low = __builtin_ctzll(~lit2 & 0x155555555ull) / 2;

	/*
	 * Plane 32, then the planes above the stretch two by two (2j + 1,
	 * 2j); run counts the zero planes not coded yet.
	 */
	run = 0;
	bpc_put_plane(o, x, 32, nz, lit, s5, all, &run);
	for (j = 15; j >= (int)low; j--) {
		if (lit2 >> 2 * j & 1) {
			bpc_put_run(o, &run);
			bitw_put64(o, x[j] | BPC_LIT2);	/* 1 DBX 1 DBX */
		} else if (!(nz >> 2 * j & 3)) {
			run += 2;
		} else {
			bpc_put_plane(o, x, 2 * j + 1, nz, lit, s5, all, &run);
			bpc_put_plane(o, x, 2 * j, nz, lit, s5, all, &run);
		}
	}
	bpc_put_run(o, &run);
	/* the bottom stretch: the bit offset stays the same */
	for (j = low - 1; j >= 0; j--)
		bitw_put64(o, x[j] | BPC_LIT2);
	return bitw_finish(o);
}

/*
 * The base word at the start of a stream, from the first 64 bits @v:
 * sets *@w and returns its length in bits (3, 7, 11, 19 or 33).
 */
static __always_inline unsigned int bpc_get_base(u64 v, s64 *w)
{
	if (v >> 63) {					/* 1 + 32 bits */
		*w = (s32)(v >> 31);
		return 33;
	}
	if (v >> 61) {					/* 0cc + 4/8/16 bits */
		unsigned int n = 2u << (v >> 61);

		*w = (s64)(v << 3) >> (64 - n);
		return 3 + n;
	}
	*w = 0;						/* 000 */
	return 3;
}

/* The 7 bits of a zero run over all 33 planes: a constant entry. */
#define BPC_RUN33	(1u << 5 | 31)

/*
 * Words from the base @w and the 31 deltas (x[j] = d[2j] | d[2j+1] << 32,
 * low 32 bits) and their signs @sg (DBP[32]), word 0 included; -EINVAL
 * when a word does not fit 32 bits.
 */
static __always_inline int bpc_words(u8 *dst, s32 w, const u64 *x, u32 sg,
				     u32 dbp31)
{
	s64 w64 = w;
	u64 bad = 0;
	int i, j;

	if (sg == dbp31) {
		/*
		 * No delta needs bit 32 of its own: each is its low 32 bits
		 * sign-extended, and a word is out of range exactly when the
		 * 32-bit sum overflows.
		 */
		bool ovf = false;
		s32 w1;

		for (j = 0; j < 16; j++) {
			u64 two;

			ovf |= __builtin_add_overflow(w, (s32)x[j], &w1);
			two = (u32)w | (u64)(u32)w1 << 32;
			memcpy(dst + 8 * j, &two, 8);	/* words 2j, 2j + 1 */
			if (j < 15)
				ovf |= __builtin_add_overflow(w1, (s32)(x[j] >> 32),
							      &w);
		}
		return ovf ? -EINVAL : 0;
	}
	/* d[i] = low 32 bits - 2^32 * bit 32; w64 + 2^31 must fit 32 bits */
	put_unaligned_le32((u32)w, dst);
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++) {
		u32 lo = (u32)(x[i / 2] >> (i & 1 ? 32 : 0));

		w64 += (s64)lo - ((s64)(sg >> i & 1) << 32);
		bad |= (u64)(w64 + 0x80000000ll) >> 32;
		put_unaligned_le32((u32)w64, dst + 4 * (i + 1));
	}
	return bad ? -EINVAL : 0;
}

/*
 * A ramp: 32 words from @w, each @d more than the one before.  They grow
 * linearly, so they all fit 32 bits when the last one does: else -EINVAL.
 */
static __always_inline int bpc_ramp_ok(s64 w, s64 d)
{
	return w + 31 * d < -2147483648ll || w + 31 * d > 2147483647ll ?
	       -EINVAL : 0;
}

/*
 * 32 words from @w, each @d more than the one before (a constant for d
 * = 0), two to a 64-bit store.
 */
static __always_inline void bpc_put_ramp(u8 *dst, s64 w, s64 d)
{
	u32 a = (u32)w, b = (u32)(w + d), step = (u32)(2 * d);
	int i;

	for (i = 0; i < BUDDY_ENTRY_BYTES; i += 8) {
		u64 two = a | (u64)b << 32;

		memcpy(dst + i, &two, 8);
		a += step;
		b += step;
	}
}

/*
 * The planes of a stream of at most 64 bits, @win its bits from @pos, the
 * end of its base, on (its last bit is bit @end - 1, the rest zero), if
 * they hold only runs, 001, 00000 and 00001 (ramps and constants, the
 * entries whose deltas are all equal): the delta of its words in *@d and
 * *@bad where they are malformed.  False at the first other symbol.  Bit
 * 0 of DBP[k] is bit k of every delta: the planes' DBP bits 0 go into
 * ones, plane 32 first, and make the delta.  The base plays no part: a
 * run of entries of one stride has one @win.
 */
static __always_inline bool bpc_ramp_planes(u64 win, unsigned int pos,
					    unsigned int end, s64 *d,
					    bool *bad)
{
	unsigned int n, top;
	int k = BPC_PLANES, l;
	u64 ones = 0, up = 0;

	while (k > 0 && pos <= end) {
		top = win >> 59;			/* its first 5 bits */
		if (top >= 16 || (top >> 1) == 1)	/* 1 DBX, 0001x */
			return false;
		if (top >= 8) {				/* 01 LLLLL */
			l = (top & 7) * 4 + (int)(win >> 57 & 3) + 2;
			n = 7;
		} else {
			l = 1;
			n = top >= 4 ? 3 : 5;		/* 001, 0000x */
			if (top == 1) {			/* 00001 */
				if (k == BPC_PLANES) {
					*d = 0;
					*bad = true;
					return true;
				}
				up = 0;
			} else if (!top) {		/* 00000 */
				up ^= 1;
			}
		}
		ones = ones << l | ((1ull << l) - 1) * up;
		win <<= n;
		pos += n;
		k -= l;
	}
	*d = (s64)(ones << 31) >> 31;		/* bit 32 is the sign */
	*bad = k || pos > end;
	return true;
}

/*
 * The stream in the 64 bits @v, of which @end are the stream's (the rest
 * zero), if it is a ramp's or a constant's (bpc_ramp_planes()): *@ret 0
 * and the base and the delta of its words in *@w and *@d, or *@ret
 * -EINVAL where the stream is malformed.  False, with *@ret untouched,
 * at the first other symbol.
 */
static __always_inline bool bpc_ramp_of(u64 v, unsigned int end, s64 *w,
					s64 *d, int *ret)
{
	unsigned int pos = bpc_get_base(v, w);
	bool bad;

	if (!bpc_ramp_planes(v << pos, pos, end, d, &bad))
		return false;
	*ret = bad ? -EINVAL : bpc_ramp_ok(*w, *d);
	return true;
}

/*
 * bpc_ramp_of() and the words: 32 of them to @dst where *@ret is 0;
 * nothing written where it returns false.
 */
static __always_inline bool bpc_ramp(u64 v, unsigned int end, u8 *dst,
				     int *ret)
{
	s64 w, d;

	if (!bpc_ramp_of(v, end, &w, &d, ret))
		return false;
	if (!*ret)
		bpc_put_ramp(dst, w, d);
	return true;
}

#endif /* BUDDY_CORE_CODECS_BPC_H */
