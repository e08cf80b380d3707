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

#define BPC_PLANES	33
#define BPC_PLANE_MASK	0x7fffffffu	/* 31 deltas per plane */
/* Longest stream: a 33-bit base and 33 uncompressed planes. */
#define BPC_MAX_BITS	(33 + BPC_PLANES * 32)

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
 * The bit writer.  Every put stores the whole 64-bit accumulator at the
 * byte the stream has reached, then keeps only the bits of the last,
 * incomplete byte: no flush test, no separate finish, and the bits after
 * the stream are always zero.  The store reaches 8 bytes past the last
 * whole byte, at most byte BPC_MAX_BITS / 8 + 7 of dst.  With a NULL
 * buffer it only counts (the size-only path).
 */
struct bpc_out {
	u8 *buf;		/* NULL: count only */
	unsigned int nbits;	/* bits written */
	u64 acc;		/* the incomplete byte's bits, left-aligned */
};

_Static_assert(BPC_MAX_BITS / 8 + 8 <= BUDDY_STREAM_MAX,
	       "the BPC writer stores 8 bytes past the last whole byte");

static __always_inline void put_be64(u64 v, u8 *p)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* Append the @n bits of @v (v < 2^n), 1 <= @n <= 56. */
static __always_inline void bpc_put(struct bpc_out *o, u64 v, unsigned int n)
{
	unsigned int used = o->nbits & 7;

	if (o->buf) {
		o->acc |= v << (64 - used - n);
		put_be64(o->acc, o->buf + (o->nbits >> 3));
		o->acc <<= (used + n) & ~7u;
	}
	o->nbits += n;
}

/*
 * A zero run of @run planes (none when 0), then the @n-bit symbol @sym, as
 * one put: 001 for a single plane, 01 LLLLL (L = run - 2) for longer runs.
 */
static __always_inline void bpc_put_run(struct bpc_out *o, unsigned int run,
					u32 sym, unsigned int n)
{
	u64 code = run > 1 ? 30 + run : run;	/* 30 + run = 32 | (run - 2) */
	unsigned int len = run > 1 ? 7 : 3 * run;

	bpc_put(o, code << n | sym, len + n);
}

static __always_inline void bpc_put_base(struct bpc_out *o, s32 w0)
{
	if (w0 == 0)
		bpc_put(o, 0, 3);
	else if (w0 >= -8 && w0 <= 7)
		bpc_put(o, (1u << 4) | ((u32)w0 & 0xf), 7);
	else if (w0 >= -128 && w0 <= 127)
		bpc_put(o, (2u << 8) | ((u32)w0 & 0xff), 11);
	else if (w0 >= -32768 && w0 <= 32767)
		bpc_put(o, (3u << 16) | ((u32)w0 & 0xffff), 19);
	else
		bpc_put(o, (1ull << 32) | (u32)w0, 33);
}

/* Word @i of the entry, sign-extended. */
static __always_inline s64 bpc_word(const u8 *src, int i)
{
	return (s32)get_unaligned_le32(src + 4 * i);
}

/*
 * All 31 deltas equal @d (constant and ramp entries): every DBP[k] is 0 or
 * all ones, so every DBX[k] is too, and DBX[k] != 0 exactly where bits k
 * and k + 1 of @d differ (bit 32 for DBX[32]).  All-ones planes code as
 * 00000, whatever DBP is.
 */
static __always_inline void bpc_encode_ramp(struct bpc_out *o, s64 d)
{
	u64 d33 = (u64)d & ((1ull << BPC_PLANES) - 1);
	u64 nz = d33 ^ (d33 >> 1);
	unsigned int last = BPC_PLANES, k;

	while (nz) {
		k = 63 - __builtin_clzll(nz);
		nz ^= 1ull << k;
		bpc_put_run(o, last - 1 - k, 0, 5);	/* 00000 */
		last = k;
	}
	if (last)
		bpc_put_run(o, last, 0, 0);
}

/* The encoder; dst == NULL gives the size-only path after inlining. */
static __always_inline unsigned int bpc_encode(const u8 *src, u8 *dst)
{
	struct bpc_out o = { .buf = dst, .nbits = 0, .acc = 0 };
	u32 p[BPC_PLANES + 1];
	u64 x[16], diff, sl, sh = 0;
	s64 w0 = bpc_word(src, 0), d0 = bpc_word(src, 1) - w0, d;
	unsigned int run = 0;
	int i, k;

	bpc_put_base(&o, (s32)w0);

	/*
	 * The 33-bit deltas are the 64-bit differences of the sign-extended
	 * words; bit 63 (the sign) is bit 32.  Deltas i and i + 16 share x[i]
	 * for the transpose; the signs are shifted in from the top, delta i
	 * into bit i of sl (i < 16) or sh (i >= 16).  diff stays 0 when all
	 * deltas are equal.
	 */
	d = bpc_word(src, 16) - bpc_word(src, 15);
	x[15] = (u32)d;
	diff = d ^ d0;
	sl = (u64)d >> 63;
	for (i = 14; i >= 0; i--) {
		s64 lo = bpc_word(src, i + 1) - bpc_word(src, i);
		s64 hi = bpc_word(src, i + 17) - bpc_word(src, i + 16);

		x[i] = (u32)lo | (u64)hi << 32;
		diff |= (lo ^ d0) | (hi ^ d0);
		sl = sl << 1 | (u64)lo >> 63;
		sh = sh << 1 | (u64)hi >> 63;
	}
	if (!diff) {
		bpc_encode_ramp(&o, d0);
		return o.nbits;
	}

	transpose32x2(x);
	for (i = 0; i < 16; i++) {
		p[i] = (u32)x[i];
		p[i + 16] = (u32)(x[i] >> 32);
	}
	p[32] = (u32)(sl | sh << 16);
	p[33] = 0;

	for (k = BPC_PLANES - 1; k >= 0; k--) {
		u32 v = p[k] ^ p[k + 1], sym;
		unsigned int n, pos;

		if (!v) {
			run++;
			continue;
		}
		pos = __builtin_ctz(v);
		if (v == BPC_PLANE_MASK) {
			sym = 0;			/* 00000 */
			n = 5;
		} else if (!p[k]) {
			sym = 1;			/* 00001 */
			n = 5;
		} else if (v == 1u << pos) {
			sym = 3u << 5 | pos;		/* 00011 p */
			n = 10;
		} else if (v == 3u << pos) {
			sym = 2u << 5 | pos;		/* 00010 p */
			n = 10;
		} else {
			sym = 1u << 31 | v;		/* 1 DBX */
			n = 32;
		}
		bpc_put_run(&o, run, sym, n);
		run = 0;
	}
	if (run)
		bpc_put_run(&o, run, 0, 0);
	return o.nbits;
}

static unsigned int bpc_compress(const u8 *src, u8 *dst)
{
	return bpc_encode(src, dst);
}

static unsigned int bpc_size(const u8 *src)
{
	return bpc_encode(src, NULL);
}

/*
 * The decoder reads a zero-padded copy of the stream; a symbol starts only
 * at a bit inside the stream, so a peek (one unaligned 64-bit load) never
 * goes past the 8 zero bytes after it.  The stream is long enough when the
 * last symbol ends inside it.  It never needs more than BPC_MAX_BITS bits.
 */
#define BPC_IN_MAX	DIV_ROUND_UP(BPC_MAX_BITS, 8)

static __always_inline u64 bpc_peek(const u8 *buf, unsigned int pos)
{
	u64 v;

	memcpy(&v, buf + (pos >> 3), 8);
	return __builtin_bswap64(v) << (pos & 7);
}

static int bpc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	u8 buf[BPC_IN_MAX + 8];
	u32 p[BPC_PLANES + 1], up = 0;
	u64 x[16], v, bad = 0;
	unsigned int len = srclen < BPC_IN_MAX ? srclen : BPC_IN_MAX;
	unsigned int end = 8 * len, pos, lit = 0;
	s64 w, d;
	int k, i;

	memcpy(buf, src, len);
	memset(buf + len, 0, 8);

	v = bpc_peek(buf, 0);
	if (v >> 63) {					/* 1 + 32 bits */
		w = (s32)(v >> 31);
		pos = 33;
	} else if (v >> 61) {				/* 0cc + 4/8/16 bits */
		unsigned int n = 2u << (v >> 61);

		w = (s64)(v << 3) >> (64 - n);
		pos = 3 + n;
	} else {					/* 000 */
		w = 0;
		pos = 3;
	}

	/*
	 * DBP[k] = DBX[k] ^ DBP[k + 1], with up = DBP[k + 1] (DBP[33] = 0).
	 * lit counts the symbols that can make a plane other than 0 or all
	 * ones.
	 */
	for (k = BPC_PLANES - 1; k >= 0; ) {
		u32 s;

		if (unlikely(pos > end))
			return -EINVAL;
		s = (u32)(bpc_peek(buf, pos) >> 32);
		if (s >> 31) {					/* 1 DBX */
			up ^= s & BPC_PLANE_MASK;
			pos += 32;
			lit++;
		} else if (s >> 30) {				/* 01 LLLLL */
			unsigned int n = ((s >> 25) & 31) + 2;

			if (n > (unsigned int)k + 1)
				return -EINVAL;
			pos += 7;
			while (--n)
				p[k--] = up;
		} else if (s >> 29) {				/* 001 */
			pos += 3;
		} else {
			unsigned int at = (s >> 22) & 31;

			switch (s >> 27) {
			case 0:					/* 00000 */
				up ^= BPC_PLANE_MASK;
				pos += 5;
				break;
			case 1:					/* 00001 */
				if (k == BPC_PLANES - 1)
					return -EINVAL;
				up = 0;		/* DBP[k] == 0 */
				pos += 5;
				break;
			case 2:					/* 00010 p */
				if (at > 29)
					return -EINVAL;
				up ^= 3u << at;
				pos += 10;
				lit++;
				break;
			default:				/* 00011 p */
				if (at > 30)
					return -EINVAL;
				up ^= 1u << at;
				pos += 10;
				lit++;
				break;
			}
		}
		p[k--] = up;
	}
	if (pos > end)
		return -EINVAL;

	put_unaligned_le32((u32)w, dst);
	if (!lit) {
		/*
		 * Every plane is 0 or all ones: all deltas equal d, whose
		 * bit k is bit 0 of DBP[k].  The words grow linearly, so they
		 * all fit when the last one does.
		 */
		for (d = 0, k = BPC_PLANES - 1; k >= 0; k--)
			d = d << 1 | (p[k] & 1);
		d = (s64)((u64)d << 31) >> 31;		/* sign bit 32 */
		if (w + 31 * d < -2147483648ll || w + 31 * d > 2147483647ll)
			return -EINVAL;
		for (i = 1; i < BUDDY_ENTRY_WORDS; i++) {
			w += d;
			put_unaligned_le32((u32)w, dst + 4 * i);
		}
		return 0;
	}

	/* Planes back to deltas, deltas back to words. */
	for (i = 0; i < 16; i++)
		x[i] = p[i] | (u64)p[i + 16] << 32;
	transpose32x2(x);
	/*
	 * d[i] = low 32 bits - 2^32 * bit 32 (DBP[32]).  A word is in range
	 * when w + 2^31 fits 32 bits unsigned.
	 */
	for (i = 0; i < BUDDY_ENTRY_WORDS - 1; i++) {
		u32 lo = i < 16 ? (u32)x[i] : (u32)(x[i - 16] >> 32);

		w += (s64)lo - ((s64)((p[32] >> i) & 1) << 32);
		bad |= (u64)(w + 0x80000000ll) >> 32;
		put_unaligned_le32((u32)w, dst + 4 * (i + 1));
	}
	return bad ? -EINVAL : 0;
}

const struct buddy_codec buddy_codec_bpc = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.compress = bpc_compress,
	.size = bpc_size,
	.decompress = bpc_decompress,
};
