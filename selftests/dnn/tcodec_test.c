// SPDX-License-Identifier: GPL-2.0
/*
 * tcodec_test.c - the whole-buffer codecs of lib/tcodec.h: every
 * lossless one round-trips every data class at lengths that are not whole
 * entries or rows, rejects truncated and extended streams; Binarize keeps
 * exactly (x > 0); CSR has Gist's size and refuses malformed rows; DPR
 * round-trips every code of its three formats, stays within half an ulp,
 * clamps, and is refused by tcodec_find() unless the caller opts in.
 *
 * Streams are decoded from the end of a heap block of exactly their size,
 * so ASan catches any read past them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <kselftest_harness.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "lib/tcodec.h"

static const size_t lengths[] = { 0, 4, 124, 128, 132, 1020, 1024, 1028,
				  4096, 65536 + 12 };

/* Encode, copy into an exact-size block, decode; returns 0 on a match. */
static int roundtrip(const struct tcodec *c, const u8 *in, size_t len,
		     size_t *enc_len)
{
	size_t cap = c->bound(len);
	u8 *enc = malloc(cap + 1), *exact, *out = malloc(len + 1);
	ssize_t n;
	int ret = -1;

	n = tcodec_encode(c, in, len, enc, cap);
	if (n < 0 || (size_t)n > cap)
		goto out;
	exact = malloc(n + 1);
	memcpy(exact, enc, n);
	if (!tcodec_decode(c, exact, n, out, len) && !memcmp(in, out, len))
		ret = 0;
	/* A stream one byte short or one byte long never decodes. */
	if (n > 0 && !tcodec_decode(c, exact, n - 1, out, len))
		ret = -2;
	exact[n] = 0x5a;
	if (!tcodec_decode(c, exact, n + 1, out, len))
		ret = -3;
	free(exact);
	*enc_len = n;
out:
	free(enc);
	free(out);
	return ret;
}

TEST(lossless_roundtrip_every_class_and_length)
{
	size_t maxlen = lengths[ARRAY_SIZE(lengths) - 1];
	u8 *buf = malloc(maxlen);
	unsigned int i, cls, l, checked = 0;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < tcodec_count(); i++) {
		const struct tcodec *c = tcodec_get(i);

		if (!tcodec_lossless(c))
			continue;
		for (cls = 0; cls < DATAGEN_NR; cls++) {
			for (l = 0; l < ARRAY_SIZE(lengths); l++) {
				size_t len = lengths[l], enc;
				int r;

				datagen_fill(cls, 77 + cls, buf, len);
				r = roundtrip(c, buf, len, &enc);
				if (r)
					TH_LOG("%s, class %s, %zu bytes: %s", c->name,
					       datagen_class_name(cls), len,
					       r == -1 ? "no round trip" :
					       r == -2 ? "short stream decoded" :
					       "long stream decoded");
				ASSERT_EQ(0, r);
				checked++;
			}
		}
	}
	/* 9 lossless codecs x 14 classes x 10 lengths. */
	ASSERT_EQ(9 * DATAGEN_NR * ARRAY_SIZE(lengths), checked);
	free(buf);
}

TEST(byte_codecs_take_any_length_word_codecs_refuse)
{
	u8 in[7] = { 1, 2, 3, 4, 5, 6, 7 }, enc[512];
	unsigned int i;

	for (i = 0; i < tcodec_count(); i++) {
		const struct tcodec *c = tcodec_get(i);
		size_t enc_len;

		if (c->flags & TCODEC_WORDS) {
			EXPECT_EQ(-EINVAL, tcodec_encode(c, in, 7, enc, sizeof(enc)))
				TH_LOG("%s", c->name);
		} else {
			EXPECT_EQ(0, roundtrip(c, in, 7, &enc_len))
				TH_LOG("%s", c->name);
		}
	}
}

TEST(too_small_output_is_enospc)
{
	u8 in[1024], enc[16];
	unsigned int i;

	datagen_fill(DATAGEN_RANDOM, 3, in, sizeof(in));
	for (i = 0; i < tcodec_count(); i++) {
		const struct tcodec *c = tcodec_get(i);

		EXPECT_EQ(-ENOSPC, tcodec_encode(c, in, sizeof(in), enc, sizeof(enc)))
			TH_LOG("%s", c->name);
	}
}

/* cDMA: each 32-word window costs its 4-byte mask and its non-zero words. */
TEST(zvc_is_cdma_size_and_entry_codecs_are_device_size)
{
	const struct tcodec *zvc = tcodec_find("zvc", 0);
	const struct tcodec *ent = tcodec_find("entry-bpc", 0);
	size_t len = 64 * 128, want = 0, want_ent = 64, i, w;
	u8 *buf = malloc(len), *enc = malloc(zvc->bound(len) + ent->bound(len));
	u8 stored[BUDDY_STREAM_MAX];

	ASSERT_TRUE(zvc && ent && buf && enc);
	datagen_fill(DATAGEN_RELU50, 5, buf, len);
	for (i = 0; i < len; i += 128) {
		want += 4;
		for (w = 0; w < 32; w++)
			want += get_unaligned_le32(buf + i + 4 * w) ? 4 : 0;
		want_ent += buddy_code_bytes(buddy_entry_encode(&buddy_codec_bpc,
							       buf + i, stored));
	}
	ASSERT_EQ((ssize_t)want, tcodec_encode(zvc, buf, len, enc, zvc->bound(len)));
	ASSERT_EQ((ssize_t)want_ent, tcodec_encode(ent, buf, len, enc, ent->bound(len)));
	free(buf);
	free(enc);
}

TEST(rle_long_zero_runs)
{
	const struct tcodec *c = tcodec_find("rle", 0);
	size_t n = 100000, enc_len;
	u32 *buf = calloc(n, 4);

	ASSERT_NE(NULL, buf);
	buf[50000] = 7;
	/* Zeros 0..49999: two repeat runs; 7: a literal; then one more run
	 * of 49999 zeros: two repeat runs.  5 runs, 6 + 6 + 6 + 6 + 6. */
	ASSERT_EQ(0, roundtrip(c, (u8 *)buf, 4 * n, &enc_len));
	ASSERT_EQ(30, enc_len);
	free(buf);
}

TEST(binarize_keeps_exactly_the_positive_test)
{
	const struct tcodec *c = tcodec_find("binarize", TCODEC_ALLOW_MASK);
	float in[1001], out[1001];
	u8 enc[126], exact[126];
	unsigned int i;

	ASSERT_NE(NULL, c);
	datagen_fill(DATAGEN_FLOAT32, 9, in, sizeof(in));
	for (i = 0; i < 1001; i += 3)
		in[i] = -fabsf(in[i]);
	in[5] = -0.0f;
	in[6] = NAN;
	in[7] = 0.0f;
	in[8] = 1e-45f;		/* smallest subnormal: > 0 */
	in[9] = INFINITY;
	ASSERT_EQ(126, tcodec_encode(c, in, sizeof(in), enc, sizeof(enc)));
	memcpy(exact, enc, sizeof(exact));
	ASSERT_EQ(0, tcodec_decode(c, exact, sizeof(exact), out, sizeof(out)));
	for (i = 0; i < 1001; i++) {
		EXPECT_EQ(in[i] > 0.0f, out[i] > 0.0f) TH_LOG("element %u", i);
		EXPECT_TRUE(out[i] == 0.0f || out[i] == 1.0f);
	}
	/* 1001 floats in 126 bytes: 31.8x; a bit past the end is refused. */
	exact[125] |= 0x80;
	ASSERT_EQ(-EINVAL, tcodec_decode(c, exact, sizeof(exact), out, sizeof(out)));
}

/* 2 bytes a row of 256 words plus 5 a non-zero word; pays above 20% zeros. */
TEST(csr_size_and_break_even)
{
	const struct tcodec *c = tcodec_find("csr", 0);
	size_t n = 256 * 40, i, nnz;
	u32 *buf = malloc(4 * n);
	u8 *enc = malloc(c->bound(4 * n));
	ssize_t len;

	ASSERT_TRUE(buf && enc);
	for (i = 0; i < n; i++)		/* 25% zeros */
		buf[i] = i % 4 ? 0x3f800000 + i : 0;
	nnz = n - n / 4;
	len = tcodec_encode(c, buf, 4 * n, enc, c->bound(4 * n));
	ASSERT_EQ((ssize_t)(2 * 40 + 5 * nnz), len);
	ASSERT_LT(len, (ssize_t)(4 * n));
	for (i = 0; i < n; i++)		/* 15% zeros: larger than the input */
		buf[i] = i % 20 < 3 ? 0 : 1;
	len = tcodec_encode(c, buf, 4 * n, enc, c->bound(4 * n));
	ASSERT_GT(len, (ssize_t)(4 * n));
	free(buf);
	free(enc);
}

TEST(csr_malformed_rows_refused)
{
	const struct tcodec *c = tcodec_find("csr", 0);
	u32 in[300] = { 0 }, out[300];
	u8 enc[2 * 2 + 5 * 3], bad[sizeof(enc)];

	in[3] = 1;
	in[200] = 2;
	in[299] = 3;	/* row 1, column 43 of a 44-word row */
	ASSERT_EQ((ssize_t)sizeof(enc), tcodec_encode(c, in, sizeof(in), enc, sizeof(enc)));
	ASSERT_EQ(0, tcodec_decode(c, enc, sizeof(enc), out, sizeof(out)));
	ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
	/* Row 0 holds 2, 1: columns 3 and 200.  Repeat column 3. */
	memcpy(bad, enc, sizeof(enc));
	bad[5] = 3;
	ASSERT_EQ(-EINVAL, tcodec_decode(c, bad, sizeof(bad), out, sizeof(out)));
	/* Column 44 is past the short last row. */
	memcpy(bad, enc, sizeof(enc));
	bad[6] = 44;
	ASSERT_EQ(-EINVAL, tcodec_decode(c, bad, sizeof(bad), out, sizeof(out)));
	/* A stored zero value. */
	memcpy(bad, enc, sizeof(enc));
	memset(bad + 7, 0, 4);
	ASSERT_EQ(-EINVAL, tcodec_decode(c, bad, sizeof(bad), out, sizeof(out)));
	/* A row count above the row's width. */
	memcpy(bad, enc, sizeof(enc));
	bad[2] = 45;
	ASSERT_EQ(-EINVAL, tcodec_decode(c, bad, sizeof(bad), out, sizeof(out)));
}

static const struct { unsigned int bits, mbits; const char *name; } dprs[] = {
	{ 16, 10, "dpr16" }, { 10, 4, "dpr10" }, { 8, 3, "dpr8" },
};

/* Every canonical code decodes to a float that encodes back to it. */
TEST(dpr_every_code_roundtrips)
{
	unsigned int d, code;

	for (d = 0; d < ARRAY_SIZE(dprs); d++) {
		unsigned int bits = dprs[d].bits, m = dprs[d].mbits;
		unsigned int e = bits - 1 - m, checked = 0;

		for (code = 0; code < 1U << bits; code++) {
			float x = tcodec_dpr_to_f32(code, bits);
			unsigned int ex = (code >> m) & ((1U << e) - 1);

			if (ex == 0 && (code & ((1U << m) - 1)))
				continue;	/* no subnormals: not canonical */
			if (isnan(x)) {
				EXPECT_TRUE(isnan(tcodec_dpr_to_f32(
					tcodec_dpr_from_f32(x, bits), bits)));
				continue;
			}
			EXPECT_EQ(code, tcodec_dpr_from_f32(x, bits))
				TH_LOG("%s code %#x = %g", dprs[d].name, code, x);
			checked++;
		}
		/* All but the subnormal and NaN codes. */
		ASSERT_GT(checked, (1U << bits) / 2);
	}
}

TEST(dpr_error_bound_and_clamp)
{
	unsigned int d, i;
	float v[4096];

	datagen_fill(DATAGEN_FLOAT32, 21, v, sizeof(v));
	for (d = 0; d < ARRAY_SIZE(dprs); d++) {
		unsigned int bits = dprs[d].bits, m = dprs[d].mbits;
		unsigned int e = bits - 1 - m, bias = (1U << (e - 1)) - 1;
		float maxf = ldexpf(2.0f - ldexpf(1.0f, -(int)m), (int)bias);
		float minn = ldexpf(1.0f, 1 - (int)bias);

		for (i = 0; i < 4096; i++) {
			float x = v[i] * 3.0f;
			float y = tcodec_dpr_to_f32(tcodec_dpr_from_f32(x, bits), bits);

			if (fabsf(x) < minn || fabsf(x) > maxf)
				continue;
			/* Round to nearest: within half a unit in the last place. */
			EXPECT_LE(fabsf(y - x), fabsf(x) * ldexpf(1.0f, -(int)m - 1))
				TH_LOG("%s: %g -> %g", dprs[d].name, x, y);
		}
		EXPECT_EQ(maxf, tcodec_dpr_to_f32(tcodec_dpr_from_f32(1e30f, bits), bits));
		EXPECT_EQ(-maxf, tcodec_dpr_to_f32(tcodec_dpr_from_f32(-1e30f, bits), bits));
		EXPECT_EQ(INFINITY, tcodec_dpr_to_f32(tcodec_dpr_from_f32(INFINITY, bits), bits));
		EXPECT_EQ(minn, tcodec_dpr_to_f32(tcodec_dpr_from_f32(minn * 0.6f, bits), bits));
		EXPECT_EQ(0.0f, tcodec_dpr_to_f32(tcodec_dpr_from_f32(minn * 0.4f, bits), bits));
		EXPECT_TRUE(signbit(tcodec_dpr_to_f32(tcodec_dpr_from_f32(-0.0f, bits), bits)));
	}
	/* FP16 is IEEE half: 1.0 is 0x3c00, 65504 the largest, 1/3 0x3555. */
	EXPECT_EQ(0x3c00, tcodec_dpr_from_f32(1.0f, 16));
	EXPECT_EQ(0x7bff, tcodec_dpr_from_f32(65504.0f, 16));
	EXPECT_EQ(0x3555, tcodec_dpr_from_f32(1.0f / 3.0f, 16));
	/* Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10. */
	EXPECT_EQ(0x3c00, tcodec_dpr_from_f32(1.0f + ldexpf(1.0f, -11), 16));
	EXPECT_EQ(0x3c02, tcodec_dpr_from_f32(1.0f + 3 * ldexpf(1.0f, -11), 16));
}

TEST(dpr_stream_packing)
{
	unsigned int d;
	float in[7] = { 1, -2, 0.5f, 3, 0, -0.25f, 96 }, out[7];
	u8 enc[16], exact[16];
	const size_t want[] = { 16, 12, 8 };	/* 2, 3, 4 values a word */

	for (d = 0; d < ARRAY_SIZE(dprs); d++) {
		const struct tcodec *c = tcodec_find(dprs[d].name, TCODEC_ALLOW_LOSSY);
		unsigned int i;

		ASSERT_NE(NULL, c);
		ASSERT_TRUE(c->flags & TCODEC_LOSSY);
		ASSERT_EQ((ssize_t)want[d], tcodec_encode(c, in, sizeof(in), enc, sizeof(enc)));
		memcpy(exact, enc, want[d]);
		ASSERT_EQ(0, tcodec_decode(c, exact, want[d], out, sizeof(out)));
		for (i = 0; i < 7; i++)	/* all exactly representable */
			EXPECT_EQ(in[i], out[i]) TH_LOG("%s [%u]", c->name, i);
		/* Set a bit no value uses: the last word's top bit. */
		exact[want[d] - 1] |= 0x80;
		EXPECT_EQ(-EINVAL, tcodec_decode(c, exact, want[d], out, sizeof(out)))
			TH_LOG("%s", c->name);
	}
}

/* Lossy and mask codecs are opt-in and none of them is a kernel codec. */
TEST(lossy_codecs_are_opt_in_and_not_kernel_codecs)
{
	unsigned int i, lossy = 0;

	errno = 0;
	ASSERT_EQ(NULL, tcodec_find("dpr8", 0));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(NULL, tcodec_find("binarize", TCODEC_ALLOW_LOSSY));
	ASSERT_EQ(EPERM, errno);
	ASSERT_EQ(NULL, tcodec_find("dpr8", TCODEC_ALLOW_MASK));
	ASSERT_EQ(NULL, tcodec_find("nosuch", ~0U));
	ASSERT_EQ(ENOENT, errno);
	ASSERT_NE(NULL, tcodec_find("zvc", 0));
	for (i = 0; i < tcodec_count(); i++) {
		const struct tcodec *c = tcodec_get(i);

		if (tcodec_lossless(c))
			continue;
		lossy++;
		EXPECT_EQ(NULL, buddy_codec_by_name(c->name)) TH_LOG("%s", c->name);
	}
	ASSERT_EQ(4, lossy);
	ASSERT_EQ(NULL, tcodec_get(tcodec_count()));
}

TEST_HARNESS_MAIN
