// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Bit-Plane Compression (Kim et al., ISCA 2016) of one 128-byte entry,
 * bit-exact to shared/spec/bpc.md.
 *
 * The entry is 32 signed 32-bit words.  w[0] is the base; the 31 deltas
 * d[i] = w[i+1] - w[i] are 33-bit numbers, cut into 33 delta bit-planes
 * DBP[k] (bit i of plane k = bit k of d[i]) and XORed with their upper
 * neighbour (DBX[k] = DBP[k] ^ DBP[k+1], DBX[32] = DBP[32]).  The planes are
 * coded from k = 32 down to 0 with the symbol table of the spec.
 *
 * The encoder never looks at a plane to choose its symbol: a few masks over
 * the columns of the delta matrix, two rows per 64-bit operation, classify
 * all 33 planes at once, which is all the size-only path needs.  Only
 * planes whose symbol carries them (the literals, the one- and two-bit
 * patterns) come from a 32x32 bit-matrix transpose of the DBX rows, and
 * two literal planes in a row go out as one 64-bit word.  An entry whose
 * sure literals alone make it RAW gets no stream.  Constant and ramp
 * entries skip all of it.
 *
 * The decoder takes constant and ramp streams from their first 64 bits
 * (bpc_ramp()); it turns other symbols back into DBP planes with one peek
 * per symbol (two literals at once when they follow each other), then
 * transposes the planes back into deltas.
 */
#include "core/codecs/bpc.h"

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
 * Literal planes that alone make a stream too long for 96 bytes, whatever
 * else it holds (a base of 3 bits at least).
 */
#define BPC_RAW_LITERALS	24
_Static_assert(BPC_RAW_LITERALS * 32 + 3 > 96 * 8, "a RAW entry");

/*
 * The encoder.  With @write false (the size-only path) it adds up the
 * symbol lengths of the plane classes and transposes nothing.  With
 * @raw_stop it writes no stream where the planes that are surely
 * literals make it longer than RAW (BPC_MAX_BITS then).
 */
static __always_inline unsigned int bpc_encode(const u8 *src, u8 *dst,
					       const bool write,
					       const bool raw_stop)
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
	/* a literal so far may be two adjacent ones, if it is a candidate */
	if (raw_stop && bpc_weight(lit & ~m.cand) >= BPC_RAW_LITERALS)
		return BPC_MAX_BITS;

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
	return bpc_encode(src, dst, true, false);
}

static unsigned int bpc_size(const u8 *src)
{
	return bpc_encode(src, NULL, false, false);
}

/*
 * buddy_entry_encode() in one: most entries stored RAW cost no stream
 * (the literals alone make it too long).
 */
static unsigned int bpc_entry_encode(const u8 *entry, u8 *out)
{
	if (buddy_entry_is_zero(entry))
		return BUDDY_CODE_ZERO;
	return buddy_entry_pack(entry, out, bpc_encode(entry, out, true, true));
}

static int bpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	struct bitr r;
	/* every plane and word is set before it is read */
	u32 p[BPC_PLANES + 1] __uninitialized, up = 0;
	u64 x[16] __uninitialized, v;
	unsigned int lit = 0;
	s64 w, d;
	int k, i, ret;

	/*
	 * A symbol starts only at a bit inside the stream, and the stream is
	 * long enough when the last symbol ends inside it.
	 */
	bitr_init(&r, src, srclen);
	v = bitr_peek(&r);
	/* constants and ramps, from the first 64 bits alone */
	if (r.end <= 64 && bpc_ramp(v, r.end, dst, &ret))
		return ret;
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
		bpc_put_ramp(dst, w, d);
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

const struct buddy_codec buddy_codec_bpc = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.compress = bpc_compress,
	.size = bpc_size,
	.decompress = bpc_decompress,
	.encode = bpc_entry_encode,
};
