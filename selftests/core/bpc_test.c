// SPDX-License-Identifier: GPL-2.0
/*
 * BPC against shared/spec/bpc.md: every test vector, size and full stream,
 * through compress, the size-only path and decompress, in every
 * implementation (scalar, and AVX2 where the CPU has it); the size code.
 */
#include <stdio.h>
#include <kselftest_harness.h>
#include "core/codec.h"

struct vector {
	const char *id;
	s32 (*word)(int i);
	unsigned int bits;
	const char *stream;	/* bits as '0'/'1', spaces ignored */
};

static s32 v_zero(int i) { return 0; }
static s32 v_ramp(int i) { return i; }
static s32 v_ones(int i) { return -1; }
static s32 v_alt(int i) { return i & 1 ? (s32)0x80000000 : 0x7fffffff; }
static s32 v_step1(int i) { return i < 16 ? 0 : 1; }
static s32 v_ramp3(int i) { return 100 + 3 * i; }
static s32 v_const(int i) { return 0x12345678; }
static s32 v_neg(int i) { return -i; }
static s32 v_3m1(int i) { return i & 1 ? -1 : 3; }
static s32 v_even(int i) { return 2 * i; }
static s32 v_step2(int i) { return i < 16 ? 0 : 2; }

static const struct vector vectors[] = {
	{ "T1", v_zero, 10, "000 01 11111" },
	{ "T2", v_ramp, 15, "000 01 11110 00000" },
	{ "T3", v_ones, 14, "001 1111 01 11111" },
	{ "T4", v_alt, 109, "1011111111111111111111111111111111101010101010101010101010101010100000011110011010101010101010101010101010101" },
	{ "T5", v_step1, 20, "000 01 11110 00011 01111" },
	{ "T6", v_ramp3, 26, "010 01100100 01 11101 00000 001" },
	{ "T7", v_const, 40, "1 00010010001101000101011001111000 01 11111" },
	{ "T8", v_neg, 15, "000 00000 01 11110" },
	{ "T9", v_3m1, 86, "00100111101010101010101010101010101010101110111010101010101010101010101010101000000001" },
	{ "T10", v_even, 20, "000 01 11101 00000 00000" },
	{ "T11", v_step2, 25, "000 01 11101 00011 01111 00001" },
};

static void fill(const struct vector *v, u8 *e)
{
	int i;

	for (i = 0; i < 32; i++)
		put_unaligned_le32((u32)v->word(i), e + 4 * i);
}

/* The tests below run once per implementation of BPC. */
FIXTURE(bpc) {
	const struct buddy_codec *c;
};

FIXTURE_VARIANT(bpc) {
	unsigned int impl;
};

FIXTURE_VARIANT_ADD(bpc, scalar) {
	.impl = BUDDY_IMPL_SCALAR,
};

FIXTURE_VARIANT_ADD(bpc, avx2) {
	.impl = BUDDY_IMPL_AVX2,
};

FIXTURE_VARIANT_ADD(bpc, gfni) {
	.impl = BUDDY_IMPL_GFNI,
};

FIXTURE_SETUP(bpc)
{
	if (!buddy_impl_usable(variant->impl))
		SKIP(return, "this CPU or build has no %s code",
		     buddy_impl_name(variant->impl));
	self->c = buddy_codec_impl(&buddy_codec_bpc, variant->impl);
	ASSERT_EQ(variant->impl, self->c->impl);
}

FIXTURE_TEARDOWN(bpc)
{
}

TEST_F(bpc, spec_vectors)
{
	const struct buddy_codec *c = self->c;
	unsigned int n, b, nb;
	size_t vi;

	for (vi = 0; vi < ARRAY_SIZE(vectors); vi++) {
		const struct vector *v = &vectors[vi];
		u8 e[128], s[BUDDY_STREAM_MAX], d[128];
		char want[1200], got[1200];
		const char *p;

		fill(v, e);
		memset(s, 0xa5, sizeof(s));
		n = c->compress(e, s);
		EXPECT_EQ(v->bits, n) TH_LOG("%s size", v->id);
		EXPECT_EQ(n, c->size(e)) TH_LOG("%s size-only", v->id);
		for (p = v->stream, nb = 0; *p; p++)
			if (*p != ' ')
				want[nb++] = *p;
		want[nb] = 0;
		EXPECT_EQ(nb, n) TH_LOG("%s stream length", v->id);
		for (b = 0; b < n && b < sizeof(got) - 1; b++)
			got[b] = '0' + ((s[b / 8] >> (7 - b % 8)) & 1);
		got[b] = 0;
		EXPECT_STREQ(want, got) TH_LOG("%s stream", v->id);
		/* padding bits of the last byte are zero */
		if (n % 8)
			EXPECT_EQ(0, s[n / 8] & ((1u << (8 - n % 8)) - 1));
		memset(d, 0, sizeof(d));
		EXPECT_EQ(0, c->decompress(s, DIV_ROUND_UP(n, 8), d));
		EXPECT_EQ(0, memcmp(d, e, 128)) TH_LOG("%s round trip", v->id);
		/* one byte short of the stream is a truncated stream */
		if (n > 8)
			EXPECT_EQ(-EINVAL,
				  c->decompress(s, DIV_ROUND_UP(n, 8) - 1, d));
	}
}

/* Size bounds of the spec: 10 bits minimum, 1089 bits maximum. */
TEST_F(bpc, size_bounds)
{
	const struct buddy_codec *c = self->c;
	u8 e[128], s[BUDDY_STREAM_MAX], d[128];
	u32 x = 2463534242u;
	unsigned int i, n, max = 0, min = ~0u, t;

	for (t = 0; t < 20000; t++) {
		for (i = 0; i < 128; i += 4) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			put_unaligned_le32(t & 1 ? x : x & 0x80000001u, e + i);
		}
		n = c->compress(e, s);
		ASSERT_EQ(0, c->decompress(s, DIV_ROUND_UP(n, 8), d));
		ASSERT_EQ(0, memcmp(d, e, 128));
		max = n > max ? n : max;
		min = n < min ? n : min;
	}
	EXPECT_GE(1089, max);
	EXPECT_LE(10, min);
}

/* Extremes of the base-word classes: each boundary value and one past it. */
TEST_F(bpc, base_classes)
{
	static const struct { s32 w0; unsigned int bits; } cases[] = {
		{ 0, 3 }, { 7, 7 }, { -8, 7 }, { 8, 11 }, { -9, 11 },
		{ 127, 11 }, { -128, 11 }, { 128, 19 }, { -129, 19 },
		{ 32767, 19 }, { -32768, 19 }, { 32768, 33 }, { -32769, 33 },
		{ 0x7fffffff, 33 }, { (s32)0x80000000, 33 },
	};
	const struct buddy_codec *c = self->c;
	u8 e[128], s[BUDDY_STREAM_MAX], d[128];
	size_t i;
	int j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		/* a constant entry: all planes zero, one run of 33 (7 bits) */
		for (j = 0; j < 32; j++)
			put_unaligned_le32((u32)cases[i].w0, e + 4 * j);
		EXPECT_EQ(cases[i].bits + 7, c->compress(e, s))
			TH_LOG("w0=%d", cases[i].w0);
		EXPECT_EQ(0, c->decompress(s, BUDDY_STREAM_MAX, d));
		EXPECT_EQ(0, memcmp(d, e, 128));
	}
}

/* The size code of the Buddy paper, at every boundary. */
TEST(size_code)
{
	EXPECT_EQ(BUDDY_CODE_C8, buddy_code_of_bits(1));
	EXPECT_EQ(BUDDY_CODE_C8, buddy_code_of_bits(64));
	EXPECT_EQ(BUDDY_CODE_C32, buddy_code_of_bits(65));
	EXPECT_EQ(BUDDY_CODE_C32, buddy_code_of_bits(256));
	EXPECT_EQ(BUDDY_CODE_C64, buddy_code_of_bits(257));
	EXPECT_EQ(BUDDY_CODE_C64, buddy_code_of_bits(512));
	EXPECT_EQ(BUDDY_CODE_C96, buddy_code_of_bits(513));
	EXPECT_EQ(BUDDY_CODE_C96, buddy_code_of_bits(768));
	EXPECT_EQ(BUDDY_CODE_RAW, buddy_code_of_bits(769));
	EXPECT_EQ(BUDDY_CODE_RAW, buddy_code_of_bits(1089));
	EXPECT_EQ(0, buddy_code_bytes(BUDDY_CODE_ZERO));
	EXPECT_EQ(8, buddy_code_bytes(BUDDY_CODE_C8));
	EXPECT_EQ(32, buddy_code_bytes(BUDDY_CODE_C32));
	EXPECT_EQ(64, buddy_code_bytes(BUDDY_CODE_C64));
	EXPECT_EQ(96, buddy_code_bytes(BUDDY_CODE_C96));
	EXPECT_EQ(128, buddy_code_bytes(BUDDY_CODE_RAW));
}

/*
 * ZERO is decided by content for every codec, in every implementation;
 * RAW stores the plain bytes.
 */
TEST(entry_encode_states)
{
	u8 e[128], out[BUDDY_STREAM_MAX], d[128];
	unsigned int i, impl;

	for (i = 0; buddy_codecs[i]; i++)
	for (impl = 0; impl < BUDDY_IMPL_NR; impl++) {
		const struct buddy_codec *c =
			buddy_codec_impl(buddy_codecs[i], impl);
		u32 x = 88172645u;

		if (!buddy_impl_usable(impl))
			continue;
		unsigned int j;

		memset(e, 0, sizeof(e));
		EXPECT_EQ(BUDDY_CODE_ZERO, buddy_entry_encode(c, e, out));
		EXPECT_EQ(BUDDY_CODE_ZERO, buddy_entry_classify(c, e));
		memset(d, 0xff, sizeof(d));
		EXPECT_EQ(0, buddy_entry_decode(c, BUDDY_CODE_ZERO, out, d));
		EXPECT_EQ(0, memcmp(d, e, 128));

		for (j = 0; j < 128; j += 4) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			put_unaligned_le32(x | 0x01010101u, e + j);
		}
		EXPECT_EQ(BUDDY_CODE_RAW, buddy_entry_encode(c, e, out))
			TH_LOG("%s %s", c->name, buddy_impl_name(impl));
		EXPECT_EQ(BUDDY_CODE_RAW, buddy_entry_classify(c, e));
		EXPECT_EQ(0, memcmp(out, e, 128));
		EXPECT_EQ(0, buddy_entry_decode(c, BUDDY_CODE_RAW, out, d));
		EXPECT_EQ(0, memcmp(d, e, 128));
		EXPECT_EQ(-EINVAL, buddy_entry_decode(c, BUDDY_CODE_NR, out, d));
		EXPECT_EQ(-EINVAL, buddy_entry_decode(c, 15, out, d));
	}
}

TEST(codec_table)
{
	const struct buddy_codec *bpc =
		buddy_codec_impl(&buddy_codec_bpc, buddy_codec_impl_default());

	EXPECT_EQ(bpc, buddy_codec_by_id(BUDDY_CODEC_DEFAULT));
	EXPECT_EQ(bpc, buddy_codec_by_id(BUDDY_CODEC_BPC));
	EXPECT_EQ(BUDDY_CODEC_BPC, bpc->id);
	EXPECT_EQ(&buddy_codec_none, buddy_codec_by_id(BUDDY_CODEC_NONE));
	EXPECT_EQ(NULL, buddy_codec_by_id(BUDDY_CODEC_NR));
	EXPECT_EQ(&buddy_codec_fpc, buddy_codec_by_name("fpc"));
	EXPECT_EQ(NULL, buddy_codec_by_name("lz4"));
}

/* Implementations: names, the scalar reference, vector forms where any. */
TEST(implementations)
{
	unsigned int impl;

	EXPECT_STREQ("scalar", buddy_impl_name(BUDDY_IMPL_SCALAR));
	EXPECT_STREQ("avx2", buddy_impl_name(BUDDY_IMPL_AVX2));
	EXPECT_STREQ("gfni", buddy_impl_name(BUDDY_IMPL_GFNI));
	EXPECT_EQ(NULL, buddy_impl_name(BUDDY_IMPL_NR));
	EXPECT_EQ(BUDDY_IMPL_AVX2, buddy_impl_by_name("avx2"));
	EXPECT_EQ(BUDDY_IMPL_GFNI, buddy_impl_by_name("gfni"));
	EXPECT_EQ(-EINVAL, buddy_impl_by_name("sse"));
	EXPECT_TRUE(buddy_impl_usable(BUDDY_IMPL_SCALAR));
	EXPECT_FALSE(buddy_impl_usable(BUDDY_IMPL_NR));
	EXPECT_TRUE(buddy_impl_usable(buddy_impl_best()));
	/* the best is the highest this CPU runs; GFNI's needs AVX2 */
	for (impl = buddy_impl_best() + 1; impl < BUDDY_IMPL_NR; impl++)
		EXPECT_FALSE(buddy_impl_usable(impl));
	if (buddy_impl_usable(BUDDY_IMPL_GFNI))
		EXPECT_TRUE(buddy_impl_usable(BUDDY_IMPL_AVX2));
	EXPECT_TRUE(buddy_impl_usable(buddy_codec_impl_default()));
	for (impl = 0; impl < BUDDY_IMPL_NR; impl++) {
		const struct buddy_codec *bpc =
			buddy_codec_impl(&buddy_codec_bpc, impl);

		/* back to the reference from any form */
		EXPECT_EQ(&buddy_codec_bpc,
			  buddy_codec_impl(bpc, BUDDY_IMPL_SCALAR));
		EXPECT_EQ(BUDDY_CODEC_BPC, bpc->id);
		EXPECT_STREQ("bpc", bpc->name);
		/* no vector form: the scalar codec itself */
		EXPECT_EQ(&buddy_codec_zvc,
			  buddy_codec_impl(&buddy_codec_zvc, impl));
	}
#ifdef BUDDY_HAVE_AVX2
	EXPECT_EQ(&buddy_codec_bpc_avx2,
		  buddy_codec_impl(&buddy_codec_bpc, BUDDY_IMPL_AVX2));
	EXPECT_EQ(BUDDY_IMPL_AVX2, buddy_codec_bpc_avx2.impl);
	EXPECT_EQ(&buddy_codec_bpc_gfni,
		  buddy_codec_impl(&buddy_codec_bpc, BUDDY_IMPL_GFNI));
	EXPECT_EQ(BUDDY_IMPL_GFNI, buddy_codec_bpc_gfni.impl);
	/* past the last: the fastest there is */
	EXPECT_EQ(&buddy_codec_bpc_gfni,
		  buddy_codec_impl(&buddy_codec_bpc, BUDDY_IMPL_NR));
#endif
}

TEST_HARNESS_MAIN
