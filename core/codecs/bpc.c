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
 * The planes come from one 32x32 bit-matrix transpose of the low 32 bits of
 * the deltas (plane 32, the delta signs, is gathered separately), which is
 * what makes this scalar code fast enough to beat a 4 KiB LZ4 page.
 */
#include "../codec.h"
#include "../bitstream.h"

#define BPC_PLANES	33
#define BPC_PLANE_MASK	0x7fffffffu	/* 31 deltas per plane */

/*
 * In-place transpose of a 32x32 bit matrix: bit k of a[i] <-> bit i of a[k].
 * Rows k and k + 16 travel together in one 64-bit word, so the first stage
 * is a swap inside each word and every later stage swaps two row pairs at
 * once (the recursive block transpose of Hacker's Delight, 7-3).
 */
#define SWAP(k, j, m) do {					\
	t = ((x[k] >> (j)) ^ x[(k) + (j)]) & (m);			\
	x[k] ^= t << (j);						\
	x[(k) + (j)] ^= t;						\
} while (0)
#define SWAP4(k0, k1, k2, k3, j, m) do {				\
	SWAP(k0, j, m); SWAP(k1, j, m); SWAP(k2, j, m); SWAP(k3, j, m);	\
} while (0)

/* x[k] holds rows k (low half) and k + 16 (high half) of the matrix. */
static __always_inline void transpose32x2(u64 *x)
{
	const u64 m8 = 0x00ff00ff00ff00ffull, m4 = 0x0f0f0f0f0f0f0f0full;
	const u64 m2 = 0x3333333333333333ull, m1 = 0x5555555555555555ull;
	u64 t;
	unsigned int k;

	for (k = 0; k < 16; k++) {
		t = ((x[k] >> 16) ^ x[k]) & 0x00000000ffff0000ull;
		x[k] ^= t | t << 16;
	}
	SWAP4(0, 1, 2, 3, 8, m8);	SWAP4(4, 5, 6, 7, 8, m8);
	SWAP4(0, 1, 2, 3, 4, m4);	SWAP4(8, 9, 10, 11, 4, m4);
	SWAP4(0, 1, 4, 5, 2, m2);	SWAP4(8, 9, 12, 13, 2, m2);
	SWAP4(0, 2, 4, 6, 1, m1);	SWAP4(8, 10, 12, 14, 1, m1);
}

/*
 * Delta bit-planes of the entry: plane k < 16 in the low half of x[k],
 * plane k + 16 in its high half, plane 32 (the delta signs) in *sign.
 * Returns w0.
 */
static __always_inline s32 bpc_planes(const u8 *src, u64 *x, u32 *sign)
{
	s32 w[BUDDY_ENTRY_WORDS];
	u32 sg = 0;
	unsigned int i;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		w[i] = (s32)get_unaligned_le32(src + 4 * i);
	for (i = 0; i < 16; i++) {
		u32 lo = (u32)w[i + 1] - (u32)w[i];
		u32 hi = i < 15 ? (u32)w[i + 17] - (u32)w[i + 16] : 0;

		x[i] = lo | (u64)hi << 32;
	}
	/* bit 32 of the 33-bit delta is its sign: w[i+1] < w[i] */
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++)
		sg |= (u32)(w[i + 1] < w[i]) << i;
	*sign = sg;
	transpose32x2(x);
	return w[0];
}

static __always_inline void put_run(struct bitw *w, unsigned int run)
{
	if (run == 1)
		bitw_put(w, 1, 3);			/* 001 */
	else if (run)
		bitw_put(w, (1u << 5) | (run - 2), 7);	/* 01 LLLLL */
}

/* The encoder; dst == NULL gives the size-only path after inlining. */
static __always_inline unsigned int bpc_encode(const u8 *src, u8 *dst)
{
	u32 dbp[BPC_PLANES], dbx[BPC_PLANES], sign;
	u64 x[16], nonzero = 0;
	struct bitw w;
	int k, last = BPC_PLANES;
	s32 w0;

	bitw_init(&w, dst, BUDDY_STREAM_MAX);
	w0 = bpc_planes(src, x, &sign);

	if (w0 == 0)
		bitw_put(&w, 0, 3);
	else if (w0 >= -8 && w0 <= 7)
		bitw_put(&w, (1u << 4) | ((u32)w0 & 0xf), 7);
	else if (w0 >= -128 && w0 <= 127)
		bitw_put(&w, (2u << 8) | ((u32)w0 & 0xff), 11);
	else if (w0 >= -32768 && w0 <= 32767)
		bitw_put(&w, (3u << 16) | ((u32)w0 & 0xffff), 19);
	else {
		bitw_put(&w, 1, 1);
		bitw_put(&w, (u32)w0, 32);
	}

	/* DBX[k] = DBP[k] ^ DBP[k + 1], two planes per 64-bit XOR */
	for (k = 0; k < 16; k++) {
		u64 up = k < 15 ? x[k + 1] : (x[0] >> 32) | (u64)sign << 32;
		u64 y = x[k] ^ up;

		dbp[k] = (u32)x[k];
		dbp[k + 16] = (u32)(x[k] >> 32);
		dbx[k] = (u32)y;
		dbx[k + 16] = (u32)(y >> 32);
		nonzero |= (u64)!!dbx[k] << k | (u64)!!dbx[k + 16] << (k + 16);
	}
	dbp[32] = dbx[32] = sign;
	nonzero |= (u64)!!sign << 32;

	/* visit only the non-zero planes, top down; the gaps are zero runs */
	while (nonzero) {
		unsigned int p;
		u32 v;

		k = 63 - __builtin_clzll(nonzero);
		nonzero &= ~(1ull << k);
		put_run(&w, last - 1 - k);
		last = k;
		v = dbx[k];
		p = __builtin_ctz(v);
		if (v == BPC_PLANE_MASK)
			bitw_put(&w, 0, 5);			/* 00000 */
		else if (!dbp[k])
			bitw_put(&w, 1, 5);			/* 00001 */
		else if (v == 3u << p)
			bitw_put(&w, (2u << 5) | p, 10);	/* 00010 p */
		else if (v == 1u << p)
			bitw_put(&w, (3u << 5) | p, 10);	/* 00011 p */
		else
			bitw_put(&w, (1u << 31) | v, 32);	/* 1 DBX */
	}
	put_run(&w, last);
	return bitw_finish(&w);
}

static unsigned int bpc_compress(const u8 *src, u8 *dst)
{
	return bpc_encode(src, dst);
}

static unsigned int bpc_size(const u8 *src)
{
	return bpc_encode(src, NULL);
}

static inline s32 sext(u32 v, unsigned int bits)
{
	u32 m = 1u << (bits - 1);

	return (s32)((v ^ m) - m);
}

static int bpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	u32 dbp[BPC_PLANES + 1];
	u64 x[16];
	struct bitr r;
	s64 w;
	u32 v;
	int k, i;

	bitr_init(&r, src, srclen);
	v = bitr_peek(&r, 32);
	if (v >> 31) {					/* 1 + 32 bits */
		bitr_skip(&r, 1);
		w = (s32)bitr_get(&r, 32);
	} else {
		static const u8 width[4] = { 0, 4, 8, 16 };
		unsigned int n = width[v >> 29];

		w = n ? sext((v >> (29 - n)) & ((1u << n) - 1), n) : 0;
		bitr_skip(&r, 3 + n);
	}

	dbp[BPC_PLANES] = 0;	/* DBP[33] = 0 makes DBX[32] = DBP[32] */
	for (k = BPC_PLANES - 1; k >= 0 && !r.err; ) {
		u32 dbx;

		v = bitr_peek(&r, 32);
		if (v >> 31) {					/* 1 DBX */
			dbx = v & BPC_PLANE_MASK;
			bitr_skip(&r, 32);
		} else if (v >> 30) {				/* 01 LLLLL */
			unsigned int len = ((v >> 25) & 31) + 2;

			if (len > (unsigned int)k + 1)
				return -EINVAL;
			bitr_skip(&r, 7);
			while (len--) {
				dbp[k] = dbp[k + 1];
				k--;
			}
			continue;
		} else if (v >> 29) {				/* 001 */
			dbx = 0;
			bitr_skip(&r, 3);
		} else {
			unsigned int p = (v >> 22) & 31;

			switch (v >> 27) {
			case 0:					/* 00000 */
				dbx = BPC_PLANE_MASK;
				bitr_skip(&r, 5);
				break;
			case 1:					/* 00001 */
				if (k == BPC_PLANES - 1)
					return -EINVAL;
				dbx = dbp[k + 1];	/* DBP[k] == 0 */
				bitr_skip(&r, 5);
				break;
			case 2:					/* 00010 p */
				if (p > 29)
					return -EINVAL;
				dbx = 3u << p;
				bitr_skip(&r, 10);
				break;
			default:				/* 00011 p */
				if (p > 30)
					return -EINVAL;
				dbx = 1u << p;
				bitr_skip(&r, 10);
				break;
			}
		}
		dbp[k] = dbx ^ dbp[k + 1];
		k--;
	}
	if (r.err)
		return -EINVAL;

	/* Planes back to deltas, deltas back to words. */
	if (dbp[32] & ~BPC_PLANE_MASK)
		return -EINVAL;
	for (i = 0; i < 16; i++)
		x[i] = dbp[i] | (u64)dbp[i + 16] << 32;
	transpose32x2(x);
	put_unaligned_le32((u32)w, dst);
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++) {
		u32 d32 = i < 16 ? (u32)x[i] : (u32)(x[i - 16] >> 32);
		s64 d = (s64)d32 - ((s64)((dbp[32] >> i) & 1) << 32);

		w += d;
		if (w < -2147483648ll || w > 2147483647ll)
			return -EINVAL;
		put_unaligned_le32((u32)w, dst + 4 * (i + 1));
	}
	return 0;
}

const struct buddy_codec buddy_codec_bpc = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.compress = bpc_compress,
	.size = bpc_size,
	.decompress = bpc_decompress,
};
