// SPDX-License-Identifier: GPL-2.0
/*
 * malformed_test.c - every decoder of buddy_codecs[] against truncated,
 * corrupted and random streams.
 *
 * A decoder must return 0 or -EINVAL, never read past @srclen bytes (each
 * stream is copied into a malloc'd buffer of exactly @srclen bytes, so ASan
 * catches an overread) nor write past 128 bytes of @dst (also malloc'd), and
 * must fail when it is given fewer bytes than its own stream needs: missing
 * bytes are not zeros.  Whatever a decoder accepts must survive a round
 * trip through its encoder.
 */
#include <stdlib.h>

#include <kselftest_harness.h>

#include "core/codec.h"
#include "tools/common/datagen.h"

/* Entries whose streams get truncated: every class, a few seeds each. */
#define TRUNC_SEEDS	24
/* Random and corrupted streams per codec. */
#define FUZZ_ROUNDS	60000

/* Decode @len bytes of @stream from an exact-size heap copy. */
static int decode_exact(const struct buddy_codec *c, const u8 *stream,
			unsigned int len, u8 *dst)
{
	u8 *copy = malloc(len ? len : 1);
	int ret;

	if (len)
		memcpy(copy, stream, len);
	/* For len 0, point past the 1-byte block: any read is caught. */
	ret = c->decompress(len ? copy : copy + 1, len, dst);
	free(copy);
	return ret;
}

/*
 * A stream that a decoder accepted decodes to @out; encoding @out again
 * must decode back to @out.
 */
static void check_reencode(struct __test_metadata *_metadata,
			   const struct buddy_codec *c, const u8 *out)
{
	u8 s[BUDDY_STREAM_MAX], back[BUDDY_ENTRY_BYTES];
	unsigned int bits = c->compress(out, s);

	ASSERT_TRUE(bits <= 8 * BUDDY_STREAM_MAX);
	ASSERT_EQ(0, decode_exact(c, s, DIV_ROUND_UP(bits, 8), back));
	ASSERT_EQ(0, memcmp(back, out, BUDDY_ENTRY_BYTES))
		TH_LOG("%s: accepted stream does not re-encode", c->name);
}

static void truncations(struct __test_metadata *_metadata,
			const struct buddy_codec *c, const u8 *e,
			unsigned long *nr)
{
	u8 s[BUDDY_STREAM_MAX], *dst = malloc(BUDDY_ENTRY_BYTES);
	unsigned int bits, len, n;
	int ret;

	memset(s, 0, sizeof(s));
	bits = c->compress(e, s);
	ASSERT_TRUE(bits > 0 && bits <= 8 * BUDDY_STREAM_MAX);
	len = DIV_ROUND_UP(bits, 8);
	/* Bytes after the stream are scratch to compress(): pad with zeros. */
	memset(s + len, 0, BUDDY_STREAM_MAX - len);
	for (n = 0; n <= BUDDY_STREAM_MAX; n++) {
		ret = decode_exact(c, s, n, dst);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL)
			TH_LOG("%s: returned %d", c->name, ret);
		if (n * 8 < bits) {
			ASSERT_EQ(-EINVAL, ret)
				TH_LOG("%s: %u-bit stream decoded from %u bytes",
				       c->name, bits, n);
		} else {
			/* n >= len: the whole stream, then zero padding. */
			ASSERT_EQ(0, ret) TH_LOG("%s: len %u of %u", c->name,
						 n, len);
			ASSERT_EQ(0, memcmp(dst, e, BUDDY_ENTRY_BYTES));
		}
		(*nr)++;
	}
	free(dst);
}

TEST(truncated_streams)
{
	u8 *e = malloc(BUDDY_ENTRY_BYTES);
	unsigned long nr = 0;
	unsigned int k, cls, seed, i;

	for (k = 0; buddy_codecs[k]; k++) {
		const struct buddy_codec *c = buddy_codecs[k];

		for (cls = 0; cls < DATAGEN_NR; cls++) {
			for (seed = 0; seed < TRUNC_SEEDS; seed++) {
				datagen_fill(cls, seed, e, BUDDY_ENTRY_BYTES);
				truncations(_metadata, c, e, &nr);
			}
		}
		/* Hand-made extremes. */
		for (i = 0; i < BUDDY_ENTRY_BYTES; i++)
			e[i] = (u8)(i * 73 + 11);
		truncations(_metadata, c, e, &nr);
		memset(e, 0xff, BUDDY_ENTRY_BYTES);
		truncations(_metadata, c, e, &nr);
		memset(e, 0, BUDDY_ENTRY_BYTES);
		truncations(_metadata, c, e, &nr);
		e[127] = 0x80;
		truncations(_metadata, c, e, &nr);
	}
	ksft_print_msg("%lu truncated/padded decodes\n", nr);
	fflush(stdout);
	free(e);
}

/*
 * Random and damaged streams: pure random bytes, sparse bytes (mostly
 * zero, the prefixes/tags/masks codecs use most), valid streams with bits
 * flipped, bytes overwritten or cut short, and all-0xff.
 */
static unsigned int make_stream(struct datagen_rng *r,
				const struct buddy_codec *c, u8 *s)
{
	unsigned int kind = datagen_below(r, 5), len, i;
	u8 e[BUDDY_ENTRY_BYTES];

	len = datagen_below(r, BUDDY_STREAM_MAX + 1);
	switch (kind) {
	case 0:
		for (i = 0; i < len; i++)
			s[i] = (u8)datagen_next(r);
		break;
	case 1:
		for (i = 0; i < len; i++)
			s[i] = datagen_below(r, 4) ? 0 :
			       (u8)(1u << datagen_below(r, 8));
		break;
	case 2:
	case 3: {
		unsigned int bits, flips, cls = datagen_below(r, DATAGEN_NR);

		datagen_fill(cls, datagen_next(r), e, sizeof(e));
		memset(s, 0, BUDDY_STREAM_MAX);
		bits = c->compress(e, s);
		len = DIV_ROUND_UP(bits, 8);
		flips = 1 + datagen_below(r, 4);
		while (flips--) {
			unsigned int at = datagen_below(r, len ? len : 1);

			if (kind == 2)
				s[at] ^= 1u << datagen_below(r, 8);
			else
				s[at] = (u8)datagen_next(r);
		}
		if (datagen_below(r, 3) == 0)
			len = datagen_below(r, len + 1);
		else if (datagen_below(r, 3) == 0)
			len = datagen_below(r, BUDDY_STREAM_MAX + 1);
		break;
	}
	default:
		memset(s, 0xff, len);
		break;
	}
	return len;
}

TEST(random_streams)
{
	u8 s[BUDDY_STREAM_MAX], *dst = malloc(BUDDY_ENTRY_BYTES);
	unsigned long ok = 0, bad = 0;
	struct datagen_rng r;
	unsigned int k, n;

	datagen_seed(&r, 0x6d616c66);
	for (k = 0; buddy_codecs[k]; k++) {
		const struct buddy_codec *c = buddy_codecs[k];

		for (n = 0; n < FUZZ_ROUNDS; n++) {
			unsigned int len = make_stream(&r, c, s);
			int ret = decode_exact(c, s, len, dst);

			ASSERT_TRUE(ret == 0 || ret == -EINVAL)
				TH_LOG("%s: returned %d", c->name, ret);
			if (ret) {
				bad++;
				continue;
			}
			ok++;
			check_reencode(_metadata, c, dst);
		}
	}
	ksft_print_msg("%lu random streams accepted, %lu rejected\n", ok, bad);
	fflush(stdout);
	free(dst);
}

/* Short streams exhaustively: every 1- and 2-byte stream, and 0 bytes. */
TEST(short_streams)
{
	u8 s[2], *dst = malloc(BUDDY_ENTRY_BYTES);
	unsigned int k, v;
	int ret;

	for (k = 0; buddy_codecs[k]; k++) {
		const struct buddy_codec *c = buddy_codecs[k];

		ret = decode_exact(c, s, 0, dst);
		ASSERT_EQ(-EINVAL, ret) TH_LOG("%s: empty stream", c->name);
		for (v = 0; v < 0x100 + 0x10000; v++) {
			unsigned int len = v < 0x100 ? 1 : 2;

			s[0] = v < 0x100 ? v : (v - 0x100) >> 8;
			s[1] = (u8)v;
			ret = decode_exact(c, s, len, dst);
			ASSERT_TRUE(ret == 0 || ret == -EINVAL);
			if (!ret)
				check_reencode(_metadata, c, dst);
		}
	}
	free(dst);
}

TEST(table)
{
	unsigned int k;

	for (k = 0; buddy_codecs[k]; k++) {
		const struct buddy_codec *c = buddy_codecs[k];

		ASSERT_TRUE(c->name && c->compress && c->size && c->decompress);
		ASSERT_EQ(BUDDY_IMPL_SCALAR, c->impl);
		/* the implementation in force, of this codec */
		ASSERT_EQ(buddy_codec_impl(c, buddy_codec_impl_default()),
			  buddy_codec_by_name(c->name));
		ASSERT_EQ(buddy_codec_impl(c, buddy_codec_impl_default()),
			  buddy_codec_by_id(c->id));
	}
	ASSERT_EQ(&buddy_codec_zvc, buddy_codec_by_name("zvc"));
	ASSERT_EQ(&buddy_codec_bdi, buddy_codec_by_name("bdi"));
	ASSERT_EQ(&buddy_codec_fpc, buddy_codec_by_name("fpc"));
	ASSERT_EQ(&buddy_codec_none, buddy_codec_by_name("none"));
}

TEST_HARNESS_MAIN
