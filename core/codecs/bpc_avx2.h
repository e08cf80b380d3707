/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * bpc_avx2.h - what BPC's AVX2 encoder (bpc_avx2.c) and decoder
 * (bpc_avx2_decode.c) share: 32-byte vectors as GCC vector extensions and
 * x86 builtins, the 32x32 bit transpose both directions use, and the
 * decoder's entry points the codec table names.  Nothing here is called
 * before core/codec.c checked the CPU (see bpc_avx2.c).
 */
#ifndef BUDDY_CORE_BPC_AVX2_H
#define BUDDY_CORE_BPC_AVX2_H

/* every function of the files that include this one has POPCNT */
#define BPC_HAVE_POPCNT
#include "core/codecs/bpc.h"

#ifdef BUDDY_HAVE_AVX2

/*
 * Every function here: the loops over the four registers of an entry are
 * unrolled (#pragma GCC unroll), so that arrays of vectors stay in
 * registers.
 */
#define BPC_AVX2 __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt")))
/* the same and GFNI: the functions only the "gfni" implementation runs */
#define BPC_GFNI __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt,gfni")))

typedef u32 v8u __attribute__((vector_size(32)));
typedef s32 v8s __attribute__((vector_size(32)));
typedef u64 v4q __attribute__((vector_size(32)));
/* the builtins' own element types, for their arguments */
#define BPC_AS(type, v)	((type __attribute__((vector_size(32))))(v))

/*
 * Unaligned 32-byte loads and stores, as one instruction each: GCC's
 * generic tuning would split a plain one in two 16-byte halves, which
 * costs a store-forwarding stall wherever 32 bytes stored are loaded in
 * other pieces (and the target attribute cannot change the tuning).
 */
struct bpc_32b {
	u8 b[32];
};

static BPC_AVX2 __always_inline v8u ld8(const void *p)
{
	v8u v;

	asm("vmovdqu %1, %0" : "=x" (v) : "m" (*(const struct bpc_32b *)p));
	return v;
}

static BPC_AVX2 __always_inline void st8(void *p, v8u v)
{
	asm("vmovdqu %1, %0" : "=m" (*(struct bpc_32b *)p) : "x" (v));
}

static BPC_AVX2 __always_inline v8u bcast(u32 x)
{
	v8u v = { x, x, x, x, x, x, x, x };

	return v;
}

/*
 * @v, which the compiler then takes for unknown: a loop uses such a
 * constant from a register or the stack, where GCC would rebuild it
 * (mov, vmovd, vpbroadcastd) on every pass for want of registers.
 */
static BPC_AVX2 __always_inline v8u opaque(v8u v)
{
	asm("" : "+x" (v));
	return v;
}

/* Lane 0 of @v in every lane. */
static BPC_AVX2 __always_inline v8u lane0(v8u v)
{
	return __builtin_shufflevector(v, v, 0, 0, 0, 0, 0, 0, 0, 0);
}

static BPC_AVX2 __always_inline v8u perm(v8u v, v8u idx)
{
	return (v8u)__builtin_ia32_permvarsi256((v8s)v, (v8s)idx);
}

static BPC_AVX2 __always_inline v8u shufb(v8u v, v8u idx)
{
	return (v8u)__builtin_ia32_pshufb256(BPC_AS(char, v), BPC_AS(char, idx));
}

/* Bit i: the sign of lane i. */
static BPC_AVX2 __always_inline unsigned int signs(v8u v)
{
	return __builtin_ia32_movmskps256(BPC_AS(float, v));
}

static BPC_AVX2 __always_inline bool all_zero(v8u v)
{
	return __builtin_ia32_ptestz256(BPC_AS(long long, v), BPC_AS(long long, v));
}

/* The halves, the 64-bit pairs and the 32-bit pairs of lanes swapped. */
static BPC_AVX2 __always_inline v8u swap128(v8u v)
{
	return __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
}

static BPC_AVX2 __always_inline v8u swap64(v8u v)
{
	return __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
}

static BPC_AVX2 __always_inline v8u swap32(v8u v)
{
	return __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
}

/* --- the 32x32 bit transpose ----------------------------------------------- */

/*
 * In-place transpose of a 32x32 bit matrix: bit c of word i <-> bit i of
 * word c, v[j] holding words 8j..8j+7.  With i = 8g + r and c = 8t + s:
 * the bytes t of words 8g..8g+7 are gathered into 64-bit lane g of
 * register t (two byte shuffles per register and a 4x4 transpose of 64-bit
 * lanes), each 64-bit lane is transposed as an 8x8 bit matrix, after which
 * its byte s holds byte g of word 8t + s: one more shuffle pair puts it
 * there.
 */

/* per 128-bit lane: byte 4t + r <- byte 4r + t (4x4 bytes) */
#define BPC_BYTES4X4	0x0c080400, 0x0d090501, 0x0e0a0602, 0x0f0b0703

/*
 * The gathering: x[t] lane g gets bytes t of v[g] (words 8g..8g+7), in
 * the order the shuffles @bytes and @pair give the bytes of a lane.
 */
static BPC_AVX2 __always_inline void bpc_gather_bytes(const v8u v[4], v4q x[4],
						      v8u bytes, v8u pair)
{
	v4q a0, a1, a2, a3;
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		x[j] = (v4q)perm(shufb(v[j], bytes), pair);
	a0 = __builtin_shufflevector(x[0], x[1], 0, 4, 2, 6);
	a1 = __builtin_shufflevector(x[0], x[1], 1, 5, 3, 7);
	a2 = __builtin_shufflevector(x[2], x[3], 0, 4, 2, 6);
	a3 = __builtin_shufflevector(x[2], x[3], 1, 5, 3, 7);
	x[0] = __builtin_shufflevector(a0, a2, 0, 1, 4, 5);
	x[1] = __builtin_shufflevector(a1, a3, 0, 1, 4, 5);
	x[2] = __builtin_shufflevector(a0, a2, 2, 3, 6, 7);
	x[3] = __builtin_shufflevector(a1, a3, 2, 3, 6, 7);
}

/* The bytes of the transposed lanes of @y back to words 8t..8t+7. */
static BPC_AVX2 __always_inline v8u bpc_scatter_bytes(v4q y)
{
	const v8u bytes4x4 = { BPC_BYTES4X4, BPC_BYTES4X4 };
	const v8u unpair = { 0, 2, 4, 6, 1, 3, 5, 7 };

	return shufb(perm((v8u)y, unpair), bytes4x4);
}

/* Each 8x8 bit matrix by three delta swaps (Hacker's Delight 7-3). */
static BPC_AVX2 __always_inline void bpc_transpose(v8u v[4])
{
	const v8u bytes4x4 = { BPC_BYTES4X4, BPC_BYTES4X4 };
	const v8u pair = { 0, 4, 1, 5, 2, 6, 3, 7 };
	v4q x[4], t;
	int j;

	bpc_gather_bytes(v, x, bytes4x4, pair);
#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v4q y = x[j];

		t = (y ^ (y >> 7)) & 0x00aa00aa00aa00aaull;
		y ^= t ^ (t << 7);
		t = (y ^ (y >> 14)) & 0x0000cccc0000ccccull;
		y ^= t ^ (t << 14);
		t = (y ^ (y >> 28)) & 0x00000000f0f0f0f0ull;
		y ^= t ^ (t << 28);
		v[j] = bpc_scatter_bytes(y);
	}
}

/*
 * Each 8x8 bit matrix by GF2P8AFFINEQB, where the CPU has GFNI: with the
 * bytes 1 << i as its operand and a 64-bit lane as the matrix, it sets bit
 * 7 - r of byte c to bit c of byte r of the lane, which is the transpose
 * once the lane's bytes come in reverse order, as the gathering shuffles
 * (bytes4x4 and pair, reversed) put them at no cost.
 */
static BPC_GFNI __always_inline void bpc_transpose_gfni(v8u v[4])
{
	/* per 128-bit lane: byte 4t + 3 - r <- byte 4r + t */
	const v8u rbytes4x4 = {
		0x0004080c, 0x0105090d, 0x02060a0e, 0x03070b0f,
		0x0004080c, 0x0105090d, 0x02060a0e, 0x03070b0f,
	};
	const v8u rpair = { 4, 0, 5, 1, 6, 2, 7, 3 };
	const v4q ones = {
		0x8040201008040201ull, 0x8040201008040201ull,
		0x8040201008040201ull, 0x8040201008040201ull,
	};
	v4q x[4];
	int j;

	bpc_gather_bytes(v, x, rbytes4x4, rpair);
#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		v[j] = bpc_scatter_bytes((v4q)__builtin_ia32_vgf2p8affineqb_v32qi(
				BPC_AS(char, ones), BPC_AS(char, x[j]), 0));
}

/* A RAW entry's 128 bytes, as four 32-byte moves. */
static BPC_AVX2 __always_inline void entry_copy(u8 *dst, const u8 *src)
{
	v8u a = ld8(src), b = ld8(src + 32), c = ld8(src + 64);
	v8u d = ld8(src + 96);

	st8(dst, a);
	st8(dst + 32, b);
	st8(dst + 64, c);
	st8(dst + 96, d);
}

/* A ZERO entry's 128 bytes, the same way. */
static BPC_AVX2 __always_inline void entry_clear(u8 *dst)
{
	v8u zero = { 0 };

	st8(dst, zero);
	st8(dst + 32, zero);
	st8(dst + 64, zero);
	st8(dst + 96, zero);
}

int bpc_avx2_decompress(const u8 *src, unsigned int srclen, u8 *dst);
int bpc_avx2_entry_decode(unsigned int code, const u8 *stored, u8 *entry);
int bpc_avx2_decode_n(const unsigned int *codes, const u8 *const *stored,
		      u8 *entries, unsigned int n);

#endif /* BUDDY_HAVE_AVX2 */
#endif /* BUDDY_CORE_BPC_AVX2_H */
