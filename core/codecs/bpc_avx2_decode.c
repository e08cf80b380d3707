// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * bpc_avx2_decode.c - BPC's AVX2 decoder, one entry at a time and eight
 * side by side (decode_n): bpc_avx2.c's header comment says how it works
 * and why every function carries a target attribute.
 */
#include "core/codecs/bpc_avx2.h"

#ifdef BUDDY_HAVE_AVX2

/* --- decoding -------------------------------------------------------------- */

/*
 * The symbols by their first 10 bits v (prefix-coded as in the spec), for
 * the decoder's loop: bpc_sym[v] has the plane in its low half (the DBX of
 * 00000 and of the single and double ones, zero for runs, 001 and 00001; a
 * position past the plane sets bit 31, which no valid plane has) and in
 * its high half the mask of the bits after the prefix that are the plane
 * (a literal's 31); bpc_dbp0[v] is all ones for 00001, whose DBX is the
 * DBP above (DBP[k] = 0); bpc_cnt[v] the planes the symbol covers (L for a
 * run 01 LLLLL, else 1).  Filled once by buddy_bpc_avx2_init().
 */
static u64 bpc_sym[1024] __ro_after_init;
static u8 bpc_cnt[1024] __ro_after_init;
static u32 bpc_dbp0[1024] __ro_after_init;

void buddy_bpc_avx2_init(void)
{
	unsigned int v;

	for (v = 0; v < 1024; v++) {
		u32 dbx;

		if (v >> 7)			/* 1, 01, 001 */
			dbx = 0;
		else if (v >> 6)		/* 0001x ppppp */
			dbx = (v >> 5 & 1 ? 1u : 3u) << (v & 31);
		else				/* 00001, 00000 */
			dbx = v >> 5 ? 0 : BPC_PLANE_MASK;
		bpc_sym[v] = v >> 9 ? (u64)BPC_PLANE_MASK << 32 : dbx;
		bpc_cnt[v] = v >> 8 == 1 ? (v >> 3 & 31) + 2 : 1;
		bpc_dbp0[v] = v >> 5 == 1 ? ~0u : 0;
	}
}

/*
 * Symbol lengths by leading zeros (capped at 4 by a sentinel bit): 1 DBX
 * 32, 01 LLLLL 7, 001 3, 0001x ppppp 10, 0000x 5; one byte each.
 */
#define BPC_LENS	(32ull | 7ull << 8 | 3ull << 16 | 10ull << 24 | 5ull << 32)
/* 64 - each */
#define BPC_NLENS	(32ull | 57ull << 8 | 61ull << 16 | 54ull << 24 | 59ull << 32)
/* The sentinel that caps the leading zeros at 4. */
#define BPC_STOP	(1ull << 59)

/* Big-endian 64 bits from bit @at of @b (any @at: @b is padded). */
static BPC_AVX2 __always_inline u64 bits_at(const u8 *b, unsigned int at)
{
	return bits_get64(b + (at >> 3), at & 7);
}

/* Big-endian 57 bits or more from bit @at of @b (then zeros). */
static BPC_AVX2 __always_inline u64 bits57(const u8 *b, unsigned int at)
{
	return get_unaligned_be64(b + (at >> 3)) << (at & 7);
}

/*
 * The stretch of @n literals (n <= 33) from bit @pos of @b, if all @n
 * markers are ones and the stretch ends by bit @end: their planes into
 * q[0..n-1] in stream order (and zeros up to a multiple of 8).  Loads
 * stay below byte end / 8 + 32.
 */
static BPC_AVX2 __always_inline bool bpc_literals(const u8 *b, unsigned int pos, unsigned int n,
			  unsigned int end, u32 *q)
{
	/* per 128-bit lane: big-endian 32-bit words */
	const v8u be = {
		0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,
		0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,
	};
	const v8u lanes = { 0, 1, 2, 3, 4, 5, 6, 7 };
	const u8 *p = b + (pos >> 3);
	unsigned int s = pos & 7, j, miss = 0;
	v8u zero = { 0 };

	if (pos + 32 * n > end)
		return false;
	for (j = 0; j < n; j += 8) {
		v8u a = shufb(ld8(p + 4 * j), be);
		v8u c = shufb(ld8(p + 4 * j + 4), be);
		v8u in = (v8u)(lanes < bcast(n - j));	/* lanes of the stretch */
		v8u w = ((a << s) | ((c >> 1) >> (31 - s))) & in;

		miss |= signs(w ^ in);
		st8(q + j, w & bcast(BPC_PLANE_MASK));
	}
	if (!miss)
		return true;
	for (j = 0; j < n; j += 8)		/* the planes stay zero */
		st8(q + j, zero);
	return false;
}

/* Bit k of each lane: the XOR of its bits k..31. */
static BPC_AVX2 __always_inline v8u suffix_xor(v8u x)
{
	x ^= x >> 1;
	x ^= x >> 2;
	x ^= x >> 4;
	x ^= x >> 8;
	return x ^ (x >> 16);
}

/* Inclusive prefix sum over the 8 lanes. */
static BPC_AVX2 __always_inline v8u prefix_sum(v8u x)
{
	v8u zero = { 0 };

	x += __builtin_shufflevector(x, zero, 8, 0, 1, 2, 8, 4, 5, 6);
	x += __builtin_shufflevector(x, zero, 8, 8, 0, 1, 8, 8, 4, 5);
	return x + __builtin_shufflevector(x, zero, 8, 8, 8, 8, 3, 3, 3, 3);
}

static BPC_AVX2 __always_inline v8u lane7(v8u v)
{
	return __builtin_shufflevector(v, v, 7, 7, 7, 7, 7, 7, 7, 7);
}

/*
 * The 32 words from the base @w, the DBX planes 0..31 (pl[j] lane l:
 * plane 8j + l, 31 bits each) and DBX[32] @sg (which is DBP[32]) into
 * @dst; -EINVAL where a word does not fit 32 bits, as bpc.c decides it.
 */
static BPC_AVX2 __always_inline int bpc_avx2_words(u8 *dst, s64 w, v8u *pl,
						   u32 sg)
{
	const v8u steps = { 0, 1, 2, 3, 4, 5, 6, 7 };
	v8u zero = { 0 }, d[4], sign[4], prev, bad;
	int j;

	/*
	 * Rows: shifted by one plane bit first, row i + 1 is delta i and
	 * row 0 zero, which is the exclusive prefix the sum below wants.
	 */
#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		pl[j] <<= 1;
	bpc_transpose(pl);
	sg <<= 1;
#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v8u bit = bcast(1) << (steps + 8 * j);

		sign[j] = (v8u)((bcast(sg) & bit) == bit);
		/* bits 0..31 */
		d[j] = suffix_xor(pl[j]) ^ sign[j];
	}

	/*
	 * The words mod 2^32 are the prefix sums of the deltas' low 32
	 * bits.  A delta is those bits as a signed number, plus 2^32 where
	 * its bit 31 is set and its sign (bit 32) is not, minus 2^32 where
	 * the sign is set and bit 31 is not.  With word i - 1 in range,
	 * word i is in range exactly when the 32-bit sum overflows where
	 * bit 31 and the sign of delta i differ (the overflow makes up for
	 * the 2^32) and does not where they agree; a 32-bit sum r = a + b
	 * overflows where (a ^ r) & (b ^ r) < 0.
	 */
	prev = bcast((u32)w);
	bad = zero;
#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v8u r = prefix_sum(d[j]) + lane7(prev);
		v8u a = __builtin_shufflevector(prev, r, 7, 8, 9, 10, 11, 12,
						13, 14);

		bad |= ((a ^ r) & (d[j] ^ r)) ^ d[j] ^ sign[j];
		st8(dst + 32 * j, r);
		prev = r;
	}
	return signs(bad) ? -EINVAL : 0;
}

/* 32 words from @w, each @d more than the one before, eight at a time. */
static BPC_AVX2 __always_inline void put_ramp(u8 *dst, s64 w, s64 d)
{
	const v8u steps = { 0, 1, 2, 3, 4, 5, 6, 7 };
	v8u v = bcast((u32)w) + steps * bcast((u32)d);
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++, v += bcast(8 * (u32)d))
		st8(dst + 32 * j, v);
}

/*
 * The stream whose base word @w ends at bit @pos, @win its bits from there
 * on (the stream has @end bits), is a constant entry's, the base and a run
 * of 33 planes: its 32 words to @dst and *@ret 0, or -EINVAL where the run
 * is cut short.
 */
static BPC_AVX2 __always_inline bool bpc_constant_at(u64 win, unsigned int pos,
						     s64 w, unsigned int end,
						     u8 *dst, int *ret)
{
	if (win >> 57 != BPC_RUN33)
		return false;
	*ret = pos + 7 > end ? -EINVAL : 0;
	if (!*ret)
		put_ramp(dst, w, 0);
	return true;
}

/* bpc_constant_at() of the stream whose first 64 bits are @v. */
static BPC_AVX2 __always_inline bool bpc_constant(u64 v, unsigned int end,
						  u8 *dst, int *ret)
{
	s64 w;
	unsigned int pos = bpc_get_base(v, &w);

	return bpc_constant_at(v << pos, pos, w, end, dst, ret);
}

/* @x shifted by @n mod 64, as the instructions do. */
static BPC_AVX2 __always_inline u64 shl_any(u64 x, u64 n)
{
	asm("shlx %2, %1, %0" : "=r" (x) : "r" (x), "r" (n));
	return x;
}

static BPC_AVX2 __always_inline u64 shr_any(u64 x, u64 n)
{
	asm("shrx %2, %1, %0" : "=r" (x) : "r" (x), "r" (n));
	return x;
}

/*
 * The symbols of the planes from bit *@pos of the stream @b (@end bits),
 * whose 128 bits from there are @win and @a, into @q (zeroed), DBX in
 * stream order; *@pos moves past them.  Returns the planes they cover.
 * A function of its own, so that the compiler keeps its state in
 * registers.
 */
static BPC_AVX2 noinline unsigned int bpc_get_symbols(const u8 *b, u32 *q,
						  u64 win, u64 a,
						  unsigned int *ppos,
						  unsigned int end)
{
	unsigned int pos = *ppos, i = 0;
	u64 ws = win | BPC_STOP;
	u32 up = 0;	/* DBP of the plane above: the XOR of the DBX */

	for (;;) {
		do {
			u64 sh = 8 * (u64)__builtin_clzll(ws);
			u64 n = shr_any(BPC_LENS, sh);
			u64 nn = shr_any(BPC_NLENS, sh);
			unsigned int t = win >> 54;
			u64 e = bpc_sym[t], next, hi, lo, los;
			u32 dbx;

			/* four literals: perhaps all the planes left */
			if ((win & a & BPC_LIT2) == BPC_LIT2)
				break;
			next = bits57(b, pos + 128);
			dbx = (u32)e | ((u32)(win >> 32) & (u32)(e >> 32)) |
			      (up & bpc_dbp0[t]);
			up ^= dbx;
			q[i] = dbx;
			i += bpc_cnt[t];
			pos += n & 63;
			hi = shl_any(win, n);
			lo = shr_any(a, nn);
			los = lo | BPC_STOP;
			asm("" : "+r" (los));	/* not (hi | lo) | stop */
			win = hi | lo;
			ws = hi | los;
			a = shl_any(a, n) | shr_any(next, nn);
		} while (i < BPC_PLANES);
		if (i >= BPC_PLANES)
			break;
		/* four literals; all the planes left, if they are */
		if (i < BPC_PLANES - 1 &&
		    bpc_literals(b, pos, BPC_PLANES - i, end, q + i)) {
			pos += 32 * (BPC_PLANES - i);
			i = BPC_PLANES;
			break;
		}
		q[i] = (u32)(win >> 32) & BPC_PLANE_MASK;
		up ^= q[i++];
		if (i == BPC_PLANES) {
			pos += 32;
			break;
		}
		q[i] = (u32)win & BPC_PLANE_MASK;
		up ^= q[i++];
		pos += 64;
		win = a;
		ws = win | BPC_STOP;
		a = bits_at(b, pos + 64);
	}
	*ppos = pos;
	return i;
}

BPC_AVX2 int bpc_avx2_decompress(const u8 *src, unsigned int srclen,
					u8 *dst)
{
	/*
	 * The stream and zeros after it, as far as any load reaches: the
	 * loop's start at most 128 bits past a symbol, which starts at most
	 * 33 + 32 * 32 bits in; a literal stretch's end inside the stream.
	 */
	u8 b[192] __aligned(32);
	/* DBX in stream order (q[0] = DBX[32], q[32 - k] = DBX[k]) */
	u32 q[48] __aligned(32);
	const v8u rev = { 7, 6, 5, 4, 3, 2, 1, 0 };
	unsigned int len = srclen < BUDDY_STREAM_MAX ? srclen :
			   BUDDY_STREAM_MAX, end = 8 * len, pos, i, j;
	v8u zero = { 0 }, pl[4];
	u64 win, a;
	s64 w, d;
	int ret;

	if (len >= 8) {
		win = get_unaligned_be64(src);
		/* a constant entry: base and a run of 33 */
		if (bpc_constant(win, end, dst, &ret))
			return ret;
		if (len == 8 && bpc_ramp_of(win, end, &w, &d, &ret)) {
			if (!ret)
				put_ramp(dst, w, d);
			return ret;
		}
	}
	if (len == 8) {
		v4q v = { get_unaligned_le64(src), 0, 0, 0 };

		st8(b, (v8u)v);
		j = 32;
	} else {
		for (j = 0; j + 32 <= len; j += 32)
			st8(b + j, ld8(src + j));
		if (j < len) {
			st8(b + j, zero);
			memcpy(b + j, src + j, len - j);
			j += 32;
		}
	}
	for (; j < sizeof(b); j += 32)
		st8(b + j, zero);
	win = get_unaligned_be64(b);
	if (len < 8 && bpc_constant(win, end, dst, &ret))
		return ret;

	/*
	 * The window win holds bits pos..pos+63, a the 64 after them; each
	 * step loads the bits after those, off the chain from one symbol to
	 * the next, which is only: leading zeros, length, shift.
	 */
	a = get_unaligned_be64(b + 8);
	pos = bpc_get_base(win, &w);
	win = win << pos | a >> (64 - pos);
	a = a << pos | bits57(b, 128) >> (64 - pos);
	if (win >> 59 == 1)	/* 00001 for plane 32: it has no DBP above */
		return -EINVAL;
	st8(q, zero);
	st8(q + 8, zero);
	st8(q + 16, zero);
	st8(q + 24, zero);
	st8(q + 32, zero);
	i = bpc_get_symbols(b, q, win, a, &pos, end);
	/* a run past plane 0, a symbol past the end */
	if (i != BPC_PLANES || pos > end)
		return -EINVAL;

	/* planes 8j..8j+7 in pl[j] (lane l: plane 8j + l) */
#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		pl[j] = perm(ld8(q + 25 - 8 * j), rev);
	/* a position past a plane sets bit 31 */
	if (signs(pl[0] | pl[1] | pl[2] | pl[3] | bcast(q[0])))
		return -EINVAL;
	return bpc_avx2_words(dst, w, pl, q[0]);
}

BPC_AVX2 int bpc_avx2_entry_decode(unsigned int code,
					  const u8 *stored, u8 *entry)
{
	switch (code) {
	case BUDDY_CODE_ZERO:
		entry_clear(entry);
		return 0;
	case BUDDY_CODE_RAW:
		entry_copy(entry, stored);
		return 0;
	case BUDDY_CODE_C8:
	case BUDDY_CODE_C32:
	case BUDDY_CODE_C64:
	case BUDDY_CODE_C96:
		return bpc_avx2_decompress(stored, buddy_code_bytes(code),
					   entry);
	default:
		return -EINVAL;
	}
}

/* --- eight entries at once ------------------------------------------------ */

/*
 * Bytes of one lane's copy of its stream (at most 96), and as far as a
 * load reaches: the word that holds bit pos + 64 and the one after it,
 * where pos stays below 33 + 33 * 32 bits, are words 36 and 37 at most.
 */
#define BPC_LANE_BYTES	160
/*
 * The fewest streams worth decoding side by side: eight lanes take as
 * long as one.  Against the single decoder, four lanes were 1.06x on
 * relu95 and 0.61x on float32 (whose literals it takes in vectors), five
 * 1.24x and 0.72x.
 */
#define BPC_LANES_MIN	5

/*
 * Eight entries decoded side by side, one per 32-bit lane: each lane's
 * stream copied into b[l] as big-endian 32-bit words (byte-swapped once,
 * not on every load), what an earlier stream left after it, the DBP of
 * plane 32 - k of every lane after step k in dbp[k], the base words in w,
 * where each stream is from and goes to; delta[] is bpc_lanes_words()'
 * scratch (1 KiB the kernel's stack frame could not hold), tmp[]
 * words2_at()'s.
 */
struct bpc_lanes {
	u8 b[8][BPC_LANE_BYTES];
	u32 dbp[BPC_PLANES][8];
	u32 delta[32][8];
	const u8 *src[8];
	u8 *dst[8];
	unsigned int len[8];
	s32 w[8];
	u32 tmp[8];
};

#ifdef __KERNEL__
static DEFINE_PER_CPU(struct bpc_lanes, bpc_lanes_cpu);
#endif

/*
 * Shifts by counts 0..32 per lane, as the instructions do them (zeros,
 * or sign bits, from 32 on), which C's shift operators leave undefined.
 */
static BPC_AVX2 __always_inline v8u shl(v8u v, v8u n)
{
	return (v8u)__builtin_ia32_psllv8si((v8s)v, (v8s)n);
}

static BPC_AVX2 __always_inline v8u shr(v8u v, v8u n)
{
	return (v8u)__builtin_ia32_psrlv8si((v8s)v, (v8s)n);
}

static BPC_AVX2 __always_inline v8u sar(v8u v, v8u n)
{
	return (v8u)__builtin_ia32_psrav8si((v8s)v, (v8s)n);
}

/* @b where the mask @m (all ones or zero per lane) is set, else @a. */
static BPC_AVX2 __always_inline v8u blendv(v8u a, v8u b, v8u m)
{
	return (a & ~m) | (b & m);
}

/* Transpose the 8x8 matrix of 32-bit lanes @v (v[i] lane j <-> v[j] lane i). */
static BPC_AVX2 __always_inline void transpose8(v8u v[8])
{
	v8u a[8], b[8];
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 8; j += 2) {
		a[j] = __builtin_shufflevector(v[j], v[j + 1], 0, 8, 1, 9, 4, 12, 5, 13);
		a[j + 1] = __builtin_shufflevector(v[j], v[j + 1], 2, 10, 3, 11, 6, 14, 7, 15);
	}
#pragma GCC unroll 2
	for (j = 0; j < 8; j += 4) {
		b[j] = (v8u)__builtin_shufflevector((v4q)a[j], (v4q)a[j + 2], 0, 4, 2, 6);
		b[j + 1] = (v8u)__builtin_shufflevector((v4q)a[j], (v4q)a[j + 2], 1, 5, 3, 7);
		b[j + 2] = (v8u)__builtin_shufflevector((v4q)a[j + 1], (v4q)a[j + 3], 0, 4, 2, 6);
		b[j + 3] = (v8u)__builtin_shufflevector((v4q)a[j + 1], (v4q)a[j + 3], 1, 5, 3, 7);
	}
#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v[j] = __builtin_shufflevector(b[j], b[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
		v[j + 4] = __builtin_shufflevector(b[j], b[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
	}
}

/* Bits under @m of @b <-> the bits @sh above them in @a. */
static BPC_AVX2 __always_inline void swap_bits(v8u *a, v8u *b, unsigned int sh,
					       v8u m)
{
	v8u t = ((*a >> sh) ^ *b) & m;

	*b ^= t;
	*a ^= t << sh;
}

/*
 * The words of the lanes in @okm (of the @n decoded by bpc_lanes_decode())
 * to their s->dst, all eight lanes at once: s->dbp[32 - p] is plane p of
 * every lane, whose bit i is bit p of delta i, so each lane's 32x32 bit
 * matrix is transposed in place (five delta swaps, strides 16 and 8 over
 * the planes, then 4, 2, 1 within eight of them), after which row i of
 * every lane is delta i; the words follow by one add a delta, with the
 * range check of bpc_avx2_words(), and go out eight by eight through
 * 8x8 transposes.  Row 31 (there is no delta 31) holds bit 31 of every
 * plane, which a position past a plane sets: such lanes leave *@okmp,
 * and the words stored for them before are the single decoder's to
 * replace.  Returns -EINVAL where a word of a lane left in *@okmp does
 * not fit 32 bits (its words are stored all the same, as
 * bpc_avx2_words() does).
 */
static BPC_AVX2 __always_inline int bpc_lanes_words(struct bpc_lanes *s,
						    unsigned int n,
						    unsigned int *okmp)
{
	unsigned int okm = *okmp;
	v8u x[8], out[8], prev, sg, bad, r, sign;
	v8u m16 = opaque(bcast(0x0000ffff)), m8 = opaque(bcast(0x00ff00ff));
	v8u m4 = opaque(bcast(0x0f0f0f0f)), m2 = opaque(bcast(0x33333333));
	v8u m1 = opaque(bcast(0x55555555));
	unsigned int l;
	int g, m;

#pragma GCC unroll 8
	for (m = 0; m < 8; m++) {
		x[0] = ld8(s->dbp[32 - m]);		/* planes m, m + 8.. */
		x[1] = ld8(s->dbp[24 - m]);
		x[2] = ld8(s->dbp[16 - m]);
		x[3] = ld8(s->dbp[8 - m]);
		swap_bits(&x[0], &x[2], 16, m16);
		swap_bits(&x[1], &x[3], 16, m16);
		swap_bits(&x[0], &x[1], 8, m8);
		swap_bits(&x[2], &x[3], 8, m8);
		st8(s->delta[m], x[0]);
		st8(s->delta[m + 8], x[1]);
		st8(s->delta[m + 16], x[2]);
		st8(s->delta[m + 24], x[3]);
	}
	prev = ld8(s->w);
	sg = ld8(s->dbp[0]);
	bad = bcast(0);
#pragma GCC unroll 4
	for (g = 0; g < 4; g++) {
#pragma GCC unroll 8
		for (m = 0; m < 8; m++)
			x[m] = ld8(s->delta[8 * g + m]);
#pragma GCC unroll 4
		for (m = 0; m < 4; m++)
			swap_bits(&x[m], &x[m + 4], 4, m4);
#pragma GCC unroll 4
		for (m = 0; m < 4; m++)		/* rows 0, 1, 4, 5 and 2 on */
			swap_bits(&x[m + (m & 2)], &x[m + (m & 2) + 2], 2, m2);
#pragma GCC unroll 4
		for (m = 0; m < 8; m += 2)
			swap_bits(&x[m], &x[m + 1], 1, m1);
		/* x[m]: delta 8g + m of every lane (row 31: no delta) */
		if (g == 3) {
			okm &= ~signs((v8u)(x[7] != 0) | sg);
			*okmp = okm;
		}
		out[0] = prev;
#pragma GCC unroll 8
		for (m = 0; m < 8; m++) {
			if (8 * g + m == 31)
				break;
			/* only bit 31 of bad counts: the sign of delta 8g + m */
			sign = sg << (31 - 8 * g - m);
			r = prev + x[m];
			bad |= ((prev ^ r) & (x[m] ^ r)) ^ x[m] ^ sign;
			prev = r;
			if (m < 7)
				out[m + 1] = r;
		}
		transpose8(out);
		for (l = 0; l < n; l++)
			if (okm >> l & 1)
				st8(s->dst[l] + 32 * g, out[l]);
	}
	return signs(bad) & okm ? -EINVAL : 0;
}

/*
 * The two words at word @at of each lane's buffer (lane l's at word 40l +
 * at[l] of s->b): the word indices go out through s->tmp (one store, eight
 * scalar loads, cheaper than eight extractions from the register), the
 * words come in as eight 8-byte loads, lanes 0, 1, 4, 5 in one register
 * and 2, 3, 6, 7 in the other: the order in which one shuffle of the two
 * takes the first word of every lane into @g0, one the second into @g1.
 * Not vpgatherdd: it costs as much on Zen 4, and QEMU 7.2's TCG (the
 * guests of make check) decoded these lanes wrong with it and vpblendvb
 * together.
 */
static BPC_AVX2 __always_inline void words2_at(struct bpc_lanes *s, v8u at,
					       v8u *g0, v8u *g1)
{
	const u8 *b = (const u8 *)s->b;
	const u32 *t = s->tmp;
	v4q x, y;

	/* not st8(): the compiler must see s->tmp itself written */
	asm("vmovdqu %1, %0" : "=m" (s->tmp) : "x" (at));
	x[0] = get_unaligned_le64(b + 4 * (size_t)t[0]);
	x[1] = get_unaligned_le64(b + 4 * (size_t)t[1]);
	x[2] = get_unaligned_le64(b + 4 * (size_t)t[4]);
	x[3] = get_unaligned_le64(b + 4 * (size_t)t[5]);
	y[0] = get_unaligned_le64(b + 4 * (size_t)t[2]);
	y[1] = get_unaligned_le64(b + 4 * (size_t)t[3]);
	y[2] = get_unaligned_le64(b + 4 * (size_t)t[6]);
	y[3] = get_unaligned_le64(b + 4 * (size_t)t[7]);
	/* vshufps: GCC makes four shuffles and two blends of the same */
	*g0 = (v8u)__builtin_ia32_shufps256(BPC_AS(float, x),
					    BPC_AS(float, y), 0x88);
	*g1 = (v8u)__builtin_ia32_shufps256(BPC_AS(float, x),
					    BPC_AS(float, y), 0xdd);
}

/*
 * Decode the @n (BPC_LANES_MIN..8) streams s->b[l] (s->len[l] bytes) side by side,
 * one plane of every lane per step, plane 32 first: a lane in a zero run
 * takes no bits, any other takes its next symbol.  The lanes whose
 * streams are valid get their words (bpc_lanes_words()); the others, and
 * any stream with a doubt (a position past a plane, a run past plane 0, a
 * symbol past the end, 00001 for plane 32), go to bpc_avx2_decompress(),
 * which gives the verdict.  Returns 0 or -EINVAL (any of them).
 */
static BPC_AVX2 noinline int bpc_lanes_decode(struct bpc_lanes *s,
					      unsigned int n)
{
	/*
	 * A symbol's length and its one or two ones (0001x ppppp) by its
	 * first five bits v, for byte shuffles indexed by v >> 27 done
	 * arithmetically: byte v & 15 of each 128-bit lane (lengths 5, 5,
	 * 10, 10 for 00000, 00001, 00010, 00011, then 3 for 001xx and 7 for
	 * 01xxx; ones 3 and 1 for 00010 and 00011), and none for a literal
	 * (1 and 31 bits), whose index byte then has its top bit set.  Bytes
	 * 1..3 of a lane read entry 0, which the length's mask (63) or the
	 * table (0) drops.
	 */
	const v8u lens = {
		0x0a0a0505, 0x03030303, 0x07070707, 0x07070707,
		0x0a0a0505, 0x03030303, 0x07070707, 0x07070707,
	};
	const v8u ones1 = { 0x01030000, 0, 0, 0, 0x01030000, 0, 0, 0 };
	/* by the first three bits: 000, 001, 010, 011, 1xx */
	const v8u base_bits = { 3, 7, 11, 19, 33, 33, 33, 33 };
	const v8u base_n = { 0, 4, 8, 16, 32, 32, 32, 32 };
	const v8u lanes = { 0, 1, 2, 3, 4, 5, 6, 7 };
	v8u zero = { 0 }, pos, run = zero, up = zero, bad, end, base;
	v8u w0, w1, t8[8], top, x, nb, r, q;
	v8u k1, k7, k27, k31, k32, k63, kmask;
	unsigned int l, k, okm;
	int ret = 0, j;

	/*
	 * The first eight words of every lane (t8[j] lane l: word j of lane
	 * l, big-endian), the base word from them, and the window moved
	 * past it by pos = 3..33 bits.
	 */
#pragma GCC unroll 8
	for (l = 0; l < 8; l++)
		t8[l] = ld8(s->b[l]);
	transpose8(t8);
	top = t8[0] >> 29;
	pos = perm(base_bits, top);
	nb = perm(base_n, top);
	/* its payload: after 1, or after 0cc (none after 000) */
	x = (v8u)((v8s)top > 3);
	x = blendv(t8[0] << 3 | t8[1] >> 29, t8[0] << 1 | t8[1] >> 31, x);
	x = sar(x, bcast(32) - nb) & ~(v8u)(top == 0);
	st8(s->w, x);
	q = (v8u)((v8s)pos > 31);
	r = pos & 31;
#pragma GCC unroll 5
	for (j = 0; j < 5; j++)
		t8[j] = blendv(t8[j], t8[j + 1], q);
	w0 = shl(t8[0], r) | shr(t8[1], bcast(32) - r);
	w1 = shl(t8[1], r) | shr(t8[2], bcast(32) - r);
	/*
	 * w0, w1: bits pos..pos+63 of each lane.  Each step loads the two
	 * aligned words that hold bit pos + 64 (words 2 and 3 after the one
	 * of bit pos), from pos alone: off the chain from one symbol to the
	 * next (its class, its length, the shift).
	 */
	end = ld8(s->len) << 3;
	/* 00001 for plane 32: it has no DBP above; the lanes past n */
	bad = (v8u)((w0 >> 27) == 1) | (v8u)(lanes >= bcast(n));
	base = lanes * bcast(BPC_LANE_BYTES / 4) + bcast(2);
	k1 = opaque(bcast(1));
	k7 = opaque(bcast(7));
	k27 = opaque(bcast(27));
	k31 = opaque(bcast(31));
	k32 = opaque(bcast(32));
	k63 = opaque(bcast(63));
	kmask = opaque(bcast(BPC_PLANE_MASK));
	for (k = 0; k < BPC_PLANES; k++) {
		v8u lo, lit, len, sym, dbx, pp, rn, next, sh, g0, g1;

		if (!signs((v8u)(run == 0))) {
			/* every lane in a zero run: no bits taken */
			st8(s->dbp[k], up);
			run -= k1;
			continue;
		}
		sh = pos & k31;
		words2_at(s, base + (pos >> 5), &g0, &g1);
		next = shl(g0, sh) | shr(g1, k32 - sh);
		/* the lanes in a run take no symbol */
		sym = (v8u)(run == 0);
		lo = sar(w0, k27);
		lit = (v8u)((v8s)w0 >> 31);
		len = ((shufb(lens, lo) & k63) | (lit & k32)) & sym;
		pp = (w0 >> 22) & k31;
		dbx = (((w0 & lit) | (v8u)(lo == 0)) & kmask) |
		      (shufb(ones1, lo) << pp) | (up & (v8u)(lo == 1));
		/* a position past the plane sets bit 31: bpc_lanes_words() */
		up ^= dbx & sym;
		st8(s->dbp[k], up);
		/*
		 * 01 LLLLL, the only symbol of 7 bits: w0 >> 25 is 32 + L - 2,
		 * L - 1 planes left after; the other lanes count their runs
		 * down to 0 (16-bit saturating: runs are short).
		 */
		run = (v8u)__builtin_ia32_psubusw256(BPC_AS(short, run),
						     BPC_AS(short, k1)) |
		      (((w0 >> 25) - k31) & (v8u)(len == k7));
		rn = k32 - len;
		w0 = shl(w0, len) | shr(w1, rn);
		w1 = shl(w1, len) | shr(next, rn);
		pos += len;
	}
	/* a run past plane 0, a symbol past the end */
	bad |= ~(v8u)(run == 0) | (v8u)((v8s)pos > (v8s)end);
	okm = ~signs(bad) & ((1u << n) - 1);

	ret = bpc_lanes_words(s, n, &okm);
	for (l = 0; l < n; l++)
		if (!(okm >> l & 1))
			ret |= bpc_avx2_decompress(s->src[l], s->len[l],
						   s->dst[l]);
	return ret;
}

/* The planes of the last ramp decode_n() parsed, from the end of its base. */
struct bpc_ramp_memo {
	u64 win;
	unsigned int pos;
	s64 d;
	bool bad;
};

/*
 * A C8 entry at @stored that is a constant or a ramp into @dst, its
 * verdict ORed into *@ret; false for any other C8 stream.  A ramp whose
 * planes are those of the last one (the same stride from another base:
 * indices, offsets, timestamps in a row) takes them from @memo.
 */
static BPC_AVX2 __always_inline bool c8_decode(struct bpc_ramp_memo *memo,
					       const u8 *stored, u8 *dst,
					       int *ret)
{
	u64 v = get_unaligned_be64(stored), win;
	unsigned int pos;
	s64 w;
	int r;

	pos = bpc_get_base(v, &w);
	win = v << pos;
	if (bpc_constant_at(win, pos, w, 64, dst, &r)) {
		*ret |= r;
		return true;
	}
	if ((win != memo->win || pos != memo->pos) &&
	    bpc_ramp_planes(win, pos, 64, &memo->d, &memo->bad)) {
		memo->win = win;
		memo->pos = pos;
	}
	if (win != memo->win || pos != memo->pos)
		return false;
	r = memo->bad ? -EINVAL : bpc_ramp_ok(w, memo->d);
	if (!r)
		put_ramp(dst, w, memo->d);
	*ret |= r;
	return true;
}

/*
 * Decode @n stored entries, entry k of size code @codes[k] at @stored[k],
 * into 128 bytes each at @entries: the compressed ones eight at a time by
 * bpc_lanes_decode().  Returns 0, or -EINVAL where any entry did not
 * decode (the others are decoded all the same).
 */
BPC_AVX2 int bpc_avx2_decode_n(const unsigned int *codes,
				      const u8 *const *stored, u8 *entries,
				      unsigned int n)
{
#ifdef __KERNEL__
	/* over 2 KiB: not on the stack; preemption is off in the FPU section */
	struct bpc_lanes *s = this_cpu_ptr(&bpc_lanes_cpu);
#else
	struct bpc_lanes lanes, *s = &lanes;
#endif
	/* per 128-bit lane: big-endian 32-bit words */
	const v8u bswap = {
		0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,
		0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f,
	};
	/* none kept yet: a base is 3 bits or more */
	struct bpc_ramp_memo memo = { .pos = 0 };
	unsigned int k, m = 0, j, o;
	bool zeroed = false;
	v8u zero = { 0 }, v0, v1, v2;
	int ret = 0;

	for (k = 0; k < n; k++) {
		unsigned int code = codes[k], len;
		u8 *dst = entries + (size_t)k * BUDDY_ENTRY_BYTES;

		/* zero, RAW and C8 here, without a call; bad codes */
		if (code < BUDDY_CODE_C32 || code > BUDDY_CODE_C96) {
			if (code == BUDDY_CODE_ZERO)
				entry_clear(dst);
			else if (code == BUDDY_CODE_RAW)
				entry_copy(dst, stored[k]);
			else if (code != BUDDY_CODE_C8 ||
				 !c8_decode(&memo, stored[k], dst, &ret))
				ret |= bpc_avx2_entry_decode(code, stored[k],
							     dst);
			continue;
		}
		/*
		 * The lanes read past their streams (harmless: a stream is
		 * decoded right only where its symbols end inside it), never
		 * memory that was not written: zeros before the first stream,
		 * and only then (a call of RAW entries runs at memcpy speed).
		 */
		if (!zeroed) {
			for (j = 0; j < 8 * BPC_LANE_BYTES; j += 32)
				st8((u8 *)s->b + j, zero);
			zeroed = true;
		}
		/*
		 * The stream's 32-byte pieces at 0, o and len - 32 (32, 64 or
		 * 96 bytes: o is 0 or 32), without a branch and without a load
		 * past its end; what lies after it is left from before.
		 */
		len = buddy_code_bytes(code);
		o = len > 32 ? 32 : 0;
		v0 = shufb(ld8(stored[k]), bswap);
		v1 = shufb(ld8(stored[k] + o), bswap);
		v2 = shufb(ld8(stored[k] + len - 32), bswap);
		st8(s->b[m], v0);
		st8(s->b[m] + o, v1);
		st8(s->b[m] + len - 32, v2);
		s->src[m] = stored[k];
		s->dst[m] = dst;
		s->len[m] = len;
		if (++m == 8) {
			ret |= bpc_lanes_decode(s, m);
			m = 0;
		}
	}
	/*
	 * A few left: the lanes take as long for one stream as for eight,
	 * the single decoder less for up to four (or more, on literals).
	 */
	if (m >= BPC_LANES_MIN)
		return ret | bpc_lanes_decode(s, m);
	for (k = 0; k < m; k++)
		ret |= bpc_avx2_decompress(s->src[k], s->len[k], s->dst[k]);
	return ret;
}

#endif /* BUDDY_HAVE_AVX2 */
