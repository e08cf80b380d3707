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

/* In-place transpose of a 32x32 bit matrix: bit k of a[i] <-> bit i of a[k]. */
static __always_inline void transpose32(u32 *a)
{
	unsigned int j, k;
	u32 m = 0x0000ffffu, t;

	for (j = 16; j; j >>= 1, m ^= m << j) {
		for (k = 0; k < 32; k = ((k | j) + 1) & ~j) {
			t = ((a[k] >> j) ^ a[k | j]) & m;
			a[k] ^= t << j;
			a[k | j] ^= t;
		}
	}
}

/* Delta bit-planes of the entry; returns w0.  dbp[k] for k = 0..32. */
static __always_inline s32 bpc_planes(const u8 *src, u32 *dbp)
{
	s32 w[BUDDY_ENTRY_WORDS];
	u32 sign = 0;
	unsigned int i;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		w[i] = (s32)get_unaligned_le32(src + 4 * i);
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++) {
		s64 d = (s64)w[i + 1] - (s64)w[i];

		dbp[i] = (u32)d;
		sign |= (u32)(((u64)d >> 32) & 1) << i;
	}
	dbp[31] = 0;
	transpose32(dbp);
	dbp[32] = sign;
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
	u32 dbp[BPC_PLANES];
	struct bitw w;
	unsigned int run = 0;
	int k;
	s32 w0;

	bitw_init(&w, dst, BUDDY_STREAM_MAX);
	w0 = bpc_planes(src, dbp);

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

	for (k = BPC_PLANES - 1; k >= 0; k--) {
		u32 x = k == BPC_PLANES - 1 ? dbp[k] : dbp[k] ^ dbp[k + 1];
		unsigned int p;

		if (!x) {
			run++;
			continue;
		}
		put_run(&w, run);
		run = 0;
		p = __builtin_ctz(x);
		if (x == BPC_PLANE_MASK)
			bitw_put(&w, 0, 5);			/* 00000 */
		else if (!dbp[k])
			bitw_put(&w, 1, 5);			/* 00001 */
		else if (x == 3u << p)
			bitw_put(&w, (2u << 5) | p, 10);	/* 00010 p */
		else if (x == 1u << p)
			bitw_put(&w, (3u << 5) | p, 10);	/* 00011 p */
		else
			bitw_put(&w, (1u << 31) | x, 32);	/* 1 DBX */
	}
	put_run(&w, run);
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
	struct bitr r;
	s64 w;
	int k, i;

	bitr_init(&r, src, srclen);
	if (bitr_get(&r, 1)) {
		w = (s32)bitr_get(&r, 32);
	} else {
		static const u8 width[4] = { 0, 4, 8, 16 };
		unsigned int n = width[bitr_get(&r, 2)];

		w = n ? sext(bitr_get(&r, n), n) : 0;
	}

	dbp[BPC_PLANES] = 0;	/* DBP[33] = 0 makes DBX[32] = DBP[32] */
	for (k = BPC_PLANES - 1; k >= 0 && !r.err; ) {
		u32 x;

		if (bitr_get(&r, 1)) {				/* 1 */
			x = bitr_get(&r, 31);
		} else if (bitr_get(&r, 1)) {			/* 01 */
			unsigned int len = bitr_get(&r, 5) + 2;

			if (len > (unsigned int)k + 1)
				return -EINVAL;
			while (len--) {
				dbp[k] = dbp[k + 1];
				k--;
			}
			continue;
		} else if (bitr_get(&r, 1)) {			/* 001 */
			x = 0;
		} else {
			unsigned int sym = bitr_get(&r, 2), p;

			switch (sym) {
			case 0:					/* 00000 */
				x = BPC_PLANE_MASK;
				break;
			case 1:					/* 00001 */
				if (k == BPC_PLANES - 1)
					return -EINVAL;
				x = dbp[k + 1];	/* DBP[k] == 0 */
				break;
			case 2:					/* 00010 */
				p = bitr_get(&r, 5);
				if (p > 29)
					return -EINVAL;
				x = 3u << p;
				break;
			default:				/* 00011 */
				p = bitr_get(&r, 5);
				if (p > 30)
					return -EINVAL;
				x = 1u << p;
				break;
			}
		}
		dbp[k] = x ^ dbp[k + 1];
		k--;
	}
	if (r.err)
		return -EINVAL;

	/* Planes back to deltas, deltas back to words. */
	if (dbp[32] & ~BPC_PLANE_MASK)
		return -EINVAL;
	transpose32(dbp);
	put_unaligned_le32((u32)w, dst);
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++) {
		s64 d = (s64)dbp[i];

		if (dbp[32] & (1u << i))
			d -= 1ll << 32;
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
