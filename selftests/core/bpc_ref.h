/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * bpc_ref.h - the reference BPC that the tests hold every implementation
 * in core/codecs to: the scalar codec as it was before the codecs were
 * made faster (core/codecs/bpc.c and bpc.h), frozen here, so that a change
 * to the scalar codec is checked against something other than itself.
 * Streams, sizes, decoded entries and which malformed streams are
 * rejected are the contract; speed is not.  Include it in one test file
 * (static functions; bpc_ref_codec is its struct buddy_codec).
 */
#ifndef BUDDY_SELFTESTS_BPC_REF_H
#define BUDDY_SELFTESTS_BPC_REF_H

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

static __always_inline unsigned int bpc_weight(u64 m)
{
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
 * low 32 bits) and their signs @sg (DBP[32]); -EINVAL when a word does not
 * fit 32 bits.
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

		for (j = 0; j < 16; j++) {
			ovf |= __builtin_add_overflow(w, (s32)x[j], &w);
			put_unaligned_le32((u32)w, dst + 8 * j + 4);
			if (j == 15)
				break;
			ovf |= __builtin_add_overflow(w, (s32)(x[j] >> 32), &w);
			put_unaligned_le32((u32)w, dst + 8 * j + 8);
		}
		return ovf ? -EINVAL : 0;
	}
	/* d[i] = low 32 bits - 2^32 * bit 32; w64 + 2^31 must fit 32 bits */
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
 * In-place transpose of a 32x32 bit matrix: bit c of row r <-> bit r of
 * row c.  x[j] holds rows 2j (low half) and 2j + 1 (high half), so rows
 * 2j and 2j + 1 of the result, two planes that follow each other in the
 * stream, end up in one word too.  Each stage swaps bit b of the row index
 * with bit b of the column index (Hacker's Delight, 7-3); the stages
 * commute.  Stage b = 0 swaps inside each word: column c (odd) of row 2j,
 * at bit c, with column c - 1 of row 2j + 1, at bit c + 31.  The others
 * swap rows r and r + s (s = 2, 4, 8, 16), words j and j + s / 2, two row
 * pairs at once.
 */
#define SWAP(a, s, m) do {						\
	t = ((x[a] >> (s)) ^ x[(a) + (s) / 2]) & (m);			\
	x[a] ^= t << (s);						\
	x[(a) + (s) / 2] ^= t;						\
} while (0)
#define SWAP4(a0, a1, a2, a3, s, m) do {				\
	SWAP(a0, s, m); SWAP(a1, s, m); SWAP(a2, s, m); SWAP(a3, s, m);	\
} while (0)

/* Stage b = 0 on one word (the encoder does it as it makes the word). */
static __always_inline u64 bpc_transpose_word(u64 v)
{
	u64 t = (v ^ (v >> 31)) & 0x00000000aaaaaaaaull;

	return v ^ t ^ t << 31;
}

/* Stage b = 1 on words 2i (*@lo) and 2i + 1 (*@hi), after stage 0. */
static __always_inline void bpc_transpose_two(u64 *lo, u64 *hi)
{
	u64 t = ((*lo >> 2) ^ *hi) & 0x3333333333333333ull;

	*lo ^= t << 2;
	*hi ^= t;
}

/* The other stages, once every word went through the first two. */
static __always_inline void bpc_transpose_words(u64 *x)
{
	const u64 m4 = 0x0f0f0f0f0f0f0f0full, m8 = 0x00ff00ff00ff00ffull;
	const u64 m16 = 0x0000ffff0000ffffull;
	u64 t;

	SWAP4(0, 1, 4, 5, 4, m4);	SWAP4(8, 9, 12, 13, 4, m4);
	SWAP4(0, 1, 2, 3, 8, m8);	SWAP4(8, 9, 10, 11, 8, m8);
	SWAP4(0, 1, 2, 3, 16, m16);	SWAP4(4, 5, 6, 7, 16, m16);
}

/*
 * Column masks of the delta matrix classify all 33 planes at once.  Row i
 * of the matrix is delta i, d taken as a 64-bit unsigned (bits 0..32, then
 * copies of bit 32), and its DBX row is e = d ^ (d >> 1): bit k of e is bit
 * k of d ^ bit k + 1 of d for k < 32, bit 63 of e is the sign (DBX[32] =
 * DBP[32]).  Plane 32 is gathered as a plane anyway (sg), so the masks
 * need only columns 0..31 of the rows, and two rows fit a 64-bit word: the
 * word x = e[2j] | e[2j+1] << 32 that goes to the transpose.  Each mask
 * keeps two lanes, even rows low and odd rows high, merged at the end.
 */
struct bpc_cols {
	u64 any;	/* a one in the column */
	u64 two;	/* at least two ones */
	u64 adj;	/* ones in two adjacent rows */
	u64 all;	/* all ones */
	u64 up;		/* the last word added */
	s64 dbp;	/* OR of the deltas: DBP[k] != 0 (bit 63: k = 32) */
};

/* The DBX row of delta @d. */
static __always_inline u64 bpc_dbx_row(s64 d)
{
	return (u64)d ^ ((u64)d >> 1);
}

/*
 * Add the word @x of rows 2j, 2j + 1 (deltas @dlo, @dhi), the word below
 * the last added.  Adjacent rows: 2j and 2j + 1 inside the word, 2j + 1
 * and 2j + 2 (the low lane of the word above).
 */
static __always_inline void bpc_cols_add(struct bpc_cols *c, u64 x, s64 dlo,
					 s64 dhi, const bool adj)
{
	c->dbp |= dlo | dhi;
	c->two |= c->any & x;
	c->any |= x;
	c->all &= x;
	if (adj) {
		c->adj |= x & (x >> 32 | c->up << 32);
		c->up = x;
	}
}

/*
 * The plane masks (struct bpc_masks) of the lanes of @c and of plane 32,
 * @sg.  A column holds a single one when a lane holds exactly one and the
 * other none, and two ones when each lane holds exactly one (cand); they
 * are adjacent when c->adj says so, if it was kept.
 */
static __always_inline void bpc_masks(struct bpc_masks *m,
				      const struct bpc_cols *c, u32 sg)
{
	u32 a0 = (u32)c->any, a1 = (u32)(c->any >> 32);
	u32 o0 = a0 & ~(u32)c->two, o1 = a1 & ~(u32)(c->two >> 32);
	u32 adj = (u32)c->adj | (u32)(c->adj >> 32);
	u32 low = sg & -sg;		/* plane 32: the lowest one */

	m->nz = a0 | a1 | (u64)(sg != 0) << 32;
	m->all = ((u32)c->all & (u32)(c->all >> 32)) |
		 (u64)(sg == BPC_PLANE_MASK) << 32;
	m->dbp = (u32)c->dbp | (u64)(c->dbp < 0) << 32;
	m->one = (o0 & ~a1) | (o1 & ~a0) | (u64)(sg && sg == low) << 32;
	m->cand = o0 & o1;
	m->pair = (m->cand & adj) | (u64)(sg && sg == 3 * low) << 32;
}

/*
 * Deltas 2j + 1 and 2j into the masks and the signs (*@w is word 2j + 2 of
 * the entry, then word 2j); returns their word for the transpose.
 */
static __always_inline u64 bpc_row2(const u8 *src, int j, s64 *w,
				    struct bpc_cols *c, u64 *sg,
				    const bool write)
{
	s64 whi = bpc_word(src, 2 * j + 1), wlo = bpc_word(src, 2 * j);
	s64 dhi = *w - whi, dlo = whi - wlo;
	u64 ehi = bpc_dbx_row(dhi), elo = bpc_dbx_row(dlo);
	u64 xj = (u32)elo | ehi << 32;

	*w = wlo;
	bpc_cols_add(c, xj, dlo, dhi, !write);
	*sg = *sg << 2 | (ehi >> 63) << 1 | elo >> 63;
	return xj;
}

/*
 * The encoder.  With @write false (the size-only path) it adds up the
 * symbol lengths of the plane classes and transposes nothing.
 */
static __always_inline unsigned int bpc_encode(const u8 *src, u8 *dst,
					       const bool write)
{
	struct bpc_cols c;
	struct bpc_masks m;
	struct bitw o;
	u64 x[17] __uninitialized;	/* every word set before it is read */
	u64 e, sg, base, s5, s10, lit;
	s64 w0 = bpc_word(src, 0), d0 = bpc_word(src, 1) - w0, w, d;
	int i;

	bitw_init(&o, dst);
	base = bpc_base((s32)w0);

	/*
	 * Constant and ramp entries: the second delta decides whether the
	 * others are worth a look; constants, and mostly-zero entries that
	 * only start like one, are checked 8 bytes at a time.
	 */
	if (bpc_word(src, 2) - bpc_word(src, 1) == d0) {
		u64 diff = 0, q0, q;

		if (!d0) {
			memcpy(&q0, src, 8);
			for (i = 1; i < BUDDY_ENTRY_BYTES / 8; i++) {
				memcpy(&q, src + 8 * i, 8);
				diff |= q ^ q0;
			}
		} else {
			for (i = 2; i < BUDDY_ENTRY_WORDS - 1; i++)
				diff |= bpc_word(src, i + 1) -
					bpc_word(src, i) - d0;
		}
		if (!diff)
			return bpc_encode_ramp(&o, base, d0, write);
	}

	/*
	 * The 33-bit deltas are the 64-bit differences of the sign-extended
	 * words, taken from the top.  Deltas 2j and 2j + 1 share the word
	 * x[j] for the transpose and the masks (delta 31 does not exist:
	 * zero, but all ones for c.all); the signs, DBX[32], are shifted into
	 * sg, delta i to bit i.
	 */
	w = bpc_word(src, 30);
	d = bpc_word(src, 31) - w;
	e = bpc_dbx_row(d);
	sg = e >> 63;
	c.any = c.up = (u32)e;
	c.all = c.any | 0xffffffff00000000ull;
	c.two = c.adj = 0;
	c.dbp = d;
	/* words 2i + 1 and 2i go through the first two transpose stages */
	for (i = 7; i >= 0; i--) {
		u64 xhi = i == 7 ? (u32)e : bpc_row2(src, 2 * i + 1, &w, &c,
						     &sg, write);
		u64 xlo = bpc_row2(src, 2 * i, &w, &c, &sg, write);

		if (write) {
			xhi = bpc_transpose_word(xhi);
			xlo = bpc_transpose_word(xlo);
			bpc_transpose_two(&xlo, &xhi);
			x[2 * i + 1] = xhi;
			x[2 * i] = xlo;
		}
	}

	/* the symbol of each plane, in 33-bit masks */
	bpc_masks(&m, &c, (u32)sg);
	bpc_classes(&m, &s5, &s10, &lit);
	if (!write)
		return bpc_size_of(base, s5, s10, lit, m.nz ^ BPC_ALL_PLANES);

	if (lit | s10)
		bpc_transpose_words(x);	/* x[j] = DBX[2j] | DBX[2j+1] */
	/*
	 * The compress path leaves adjacency out of the masks: a plane with
	 * a single one in each lane codes as two adjacent ones when it is
	 * 3 << p (it is taken for a literal so far, so x is transposed).
	 */
	for (m.cand &= ~s5; m.cand; m.cand &= m.cand - 1) {
		unsigned int k = __builtin_ctzll(m.cand);
		u32 v = (u32)(x[k / 2] >> (k & 1 ? 32 : 0));
		u64 is2 = (u64)(v == 3u << __builtin_ctz(v)) << k;

		s10 |= is2;
		lit &= ~is2;
	}
	x[16] = sg;			/* DBX[32] */
	return bpc_put_planes(&o, base, x, m.nz, lit, s5, m.all);
}

static unsigned int bpc_compress(const u8 *src, u8 *dst)
{
	return bpc_encode(src, dst, true);
}

static unsigned int bpc_size(const u8 *src)
{
	return bpc_encode(src, NULL, false);
}

static int bpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	struct bitr r;
	/* every plane and word is set before it is read */
	u32 p[BPC_PLANES + 1] __uninitialized, up = 0;
	u64 x[16] __uninitialized, v;
	unsigned int lit = 0;
	s64 w, d;
	int k, i;

	/*
	 * A symbol starts only at a bit inside the stream, and the stream is
	 * long enough when the last symbol ends inside it.
	 */
	bitr_init(&r, src, srclen);
	v = bitr_peek(&r);
	bitr_skip(&r, bpc_get_base(v, &w));

	/* A constant entry: a run of all 33 planes. */
	if ((v << r.pos) >> 57 == BPC_RUN33) {		/* v: bits 0..63 */
		bitr_skip(&r, 7);
		if (bitr_over(&r))
			return -EINVAL;
		for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
			put_unaligned_le32((u32)w, dst + 4 * i);
		return 0;
	}

	/*
	 * DBP[k] = DBX[k] ^ DBP[k + 1], with up = DBP[k + 1] (DBP[33] = 0).
	 * lit counts the symbols that can make a plane other than 0 or all
	 * ones.
	 */
	for (k = BPC_PLANES - 1; k >= 0; ) {
		u32 s;

		if (unlikely(bitr_over(&r)))
			return -EINVAL;
		v = bitr_peek(&r);
		if ((v & BPC_LIT2) == BPC_LIT2 && k) {	/* 1 DBX 1 DBX */
			up ^= (u32)(v >> 32) & BPC_PLANE_MASK;
			p[k--] = up;
			up ^= (u32)v & BPC_PLANE_MASK;
			p[k--] = up;
			bitr_skip64(&r);
			lit++;
			continue;
		}
		s = (u32)(v >> 32);
		if (s >> 31) {					/* 1 DBX */
			up ^= s & BPC_PLANE_MASK;
			bitr_skip(&r, 32);
			lit++;
		} else if (s >> 30) {				/* 01 LLLLL */
			unsigned int n = ((s >> 25) & 31) + 2;

			if (n > (unsigned int)k + 1)
				return -EINVAL;
			bitr_skip(&r, 7);
			while (--n)
				p[k--] = up;
		} else if (s >> 29) {				/* 001 */
			bitr_skip(&r, 3);
		} else {
			unsigned int at = (s >> 22) & 31;

			switch (s >> 27) {
			case 0:					/* 00000 */
				up ^= BPC_PLANE_MASK;
				bitr_skip(&r, 5);
				break;
			case 1:					/* 00001 */
				if (k == BPC_PLANES - 1)
					return -EINVAL;
				up = 0;		/* DBP[k] == 0 */
				bitr_skip(&r, 5);
				break;
			case 2:					/* 00010 p */
				if (at > 29)
					return -EINVAL;
				up ^= 3u << at;
				bitr_skip(&r, 10);
				lit++;
				break;
			default:				/* 00011 p */
				if (at > 30)
					return -EINVAL;
				up ^= 1u << at;
				bitr_skip(&r, 10);
				lit++;
				break;
			}
		}
		p[k--] = up;
	}
	if (bitr_over(&r))
		return -EINVAL;

	put_unaligned_le32((u32)w, dst);
	if (!lit) {
		/*
		 * Every plane is 0 or all ones: all deltas equal d, whose
		 * bit k is bit 0 of DBP[k].
		 */
		u32 d31 = 0;

		for (k = 0; k < 31; k++)
			d31 |= p[k] & (1u << k);
		/* bit 32, the sign, extends up */
		d = (s64)(d31 | (u64)(p[31] & 1) << 31 |
			  (0 - (u64)(p[32] & 1)) << 32);
		if (bpc_ramp_ok(w, d))
			return -EINVAL;
		for (i = 1; i < BUDDY_ENTRY_WORDS; i++) {
			w += d;
			put_unaligned_le32((u32)w, dst + 4 * i);
		}
		return 0;
	}

	/* Planes back to deltas: x[j] = d[2j] | d[2j + 1] << 32. */
	for (i = 0; i < 16; i += 2) {
		x[i] = bpc_transpose_word(p[2 * i] | (u64)p[2 * i + 1] << 32);
		x[i + 1] = bpc_transpose_word(p[2 * i + 2] |
					      (u64)p[2 * i + 3] << 32);
		bpc_transpose_two(&x[i], &x[i + 1]);
	}
	bpc_transpose_words(x);
	return bpc_words(dst, (s32)w, x, p[32], p[31]);
}

static const struct buddy_codec bpc_ref_codec = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.compress = bpc_compress,
	.size = bpc_size,
	.decompress = bpc_decompress,
};

#endif /* BUDDY_SELFTESTS_BPC_REF_H */
