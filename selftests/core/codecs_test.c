// SPDX-License-Identifier: GPL-2.0
/*
 * codecs_test.c - exact stream sizes of ZVC, BDI, FPC and none on hand-made
 * entries with known answers (the sizes are normative: shared/spec/bpc.md,
 * section "Other codecs"), plus the few stream bits that identify the choice
 * (BDI tag, FPC prefixes, ZVC mask), and the bit writer and reader of
 * bitstream.h the other codecs share.
 */
#include <stdlib.h>

#include <kselftest_harness.h>

#include "core/codec.h"
#include "core/bitstream.h"

static void put32(u8 *e, unsigned int i, u32 v)
{
	put_unaligned_le32(v, e + 4 * i);
}

static void put64(u8 *e, unsigned int i, u64 v)
{
	put_unaligned_le32((u32)v, e + 8 * i);
	put_unaligned_le32((u32)(v >> 32), e + 8 * i + 4);
}

static void put16(u8 *e, unsigned int i, u16 v)
{
	e[2 * i] = (u8)v;
	e[2 * i + 1] = (u8)(v >> 8);
}

static void fill32(u8 *e, u32 v)
{
	unsigned int i;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		put32(e, i, v);
}

/*
 * Compress @e with @c and check everything that must agree: size() equals
 * compress(), the stream fits BUDDY_STREAM_MAX, and it decodes back to @e
 * from a buffer of exactly its length.  Returns the length in bits, with
 * the stream in @stream (BUDDY_STREAM_MAX bytes) when not NULL.
 */
static unsigned int check_entry(struct __test_metadata *_metadata,
				const struct buddy_codec *c, const u8 *e,
				u8 *stream)
{
	u8 buf[BUDDY_STREAM_MAX + 8], out[BUDDY_ENTRY_BYTES];
	unsigned int bits, sbits, len;
	u8 *exact;
	int ret;

	memset(buf, 0xa5, sizeof(buf));
	bits = c->compress(e, buf);
	sbits = c->size(e);
	EXPECT_EQ(bits, sbits) TH_LOG("%s: size() != compress()", c->name);
	len = DIV_ROUND_UP(bits, 8);
	EXPECT_TRUE(len <= BUDDY_STREAM_MAX);
	/* Nothing written past the stream. */
	EXPECT_EQ(0xa5, buf[BUDDY_STREAM_MAX]);
	exact = malloc(len ? len : 1);
	memcpy(exact, buf, len);
	ret = c->decompress(exact, len, out);
	EXPECT_EQ(0, ret) TH_LOG("%s: decode of own stream failed", c->name);
	EXPECT_EQ(0, memcmp(out, e, BUDDY_ENTRY_BYTES))
		TH_LOG("%s: round trip differs", c->name);
	free(exact);
	if (stream)
		memcpy(stream, buf, BUDDY_STREAM_MAX);
	return bits;
}

#define BITS(c, e)	check_entry(_metadata, &(c), (e), NULL)

/* ---------------------------------------------------------------- none */

TEST(none_sizes)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(e); i++)
		e[i] = (u8)(i * 37 + 1);
	EXPECT_EQ(1024, check_entry(_metadata, &buddy_codec_none, e, s));
	EXPECT_EQ(0, memcmp(s, e, sizeof(e)));
	memset(e, 0, sizeof(e));
	EXPECT_EQ(1024, BITS(buddy_codec_none, e));
	EXPECT_STREQ("none", buddy_codec_none.name);
	EXPECT_EQ(BUDDY_CODEC_NONE, buddy_codec_none.id);
}

/* ----------------------------------------------------------------- ZVC */

TEST(zvc_sizes)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int i;

	EXPECT_STREQ("zvc", buddy_codec_zvc.name);
	EXPECT_EQ(BUDDY_CODEC_ZVC, buddy_codec_zvc.id);

	memset(e, 0, sizeof(e));
	EXPECT_EQ(32, check_entry(_metadata, &buddy_codec_zvc, e, s));
	EXPECT_EQ(0, s[0] | s[1] | s[2] | s[3]);

	fill32(e, 1);
	EXPECT_EQ(1056, BITS(buddy_codec_zvc, e));
	fill32(e, 0xffffffff);
	EXPECT_EQ(1056, BITS(buddy_codec_zvc, e));

	/* Five non-zero words: mask LE first, then the words in order. */
	memset(e, 0, sizeof(e));
	put32(e, 0, 0x11111111);
	put32(e, 3, 0x22222222);
	put32(e, 8, 0x33333333);
	put32(e, 30, 0x44444444);
	put32(e, 31, 0x80);
	EXPECT_EQ(32 + 5 * 32, check_entry(_metadata, &buddy_codec_zvc, e, s));
	EXPECT_EQ((1u << 0) | (1u << 3) | (1u << 8) | (1u << 30) | (1u << 31),
		  get_unaligned_le32(s));
	EXPECT_EQ(0x11111111, get_unaligned_le32(s + 4));
	EXPECT_EQ(0x22222222, get_unaligned_le32(s + 8));
	EXPECT_EQ(0x33333333, get_unaligned_le32(s + 12));
	EXPECT_EQ(0x44444444, get_unaligned_le32(s + 16));
	EXPECT_EQ(0x80, get_unaligned_le32(s + 20));

	/* A single non-zero byte makes its word non-zero. */
	memset(e, 0, sizeof(e));
	e[127] = 1;
	EXPECT_EQ(64, BITS(buddy_codec_zvc, e));

	/* -0.0f (0x80000000) is non-zero bitwise and round-trips. */
	memset(e, 0, sizeof(e));
	for (i = 0; i < BUDDY_ENTRY_WORDS; i += 2)
		put32(e, i, 0x80000000);
	EXPECT_EQ(32 + 16 * 32, BITS(buddy_codec_zvc, e));
	fill32(e, 0x80000000);
	EXPECT_EQ(1056, BITS(buddy_codec_zvc, e));
}

/* ----------------------------------------------------------------- BDI */

#define T_ZEROS	0x0
#define T_REP8	0x1
#define T_B8D1	0x2
#define T_B8D2	0x3
#define T_B8D4	0x4
#define T_B4D1	0x5
#define T_B4D2	0x6
#define T_B2D1	0x7
#define T_RAW	0xf

static unsigned int bdi_bits(struct __test_metadata *_metadata, const u8 *e,
			     unsigned int *tag)
{
	u8 s[BUDDY_STREAM_MAX];
	unsigned int bits = check_entry(_metadata, &buddy_codec_bdi, e, s);

	*tag = s[0] >> 4;
	return bits;
}

TEST(bdi_zeros_rep8_raw)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int i, tag;

	EXPECT_STREQ("bdi", buddy_codec_bdi.name);
	EXPECT_EQ(BUDDY_CODEC_BDI, buddy_codec_bdi.id);

	memset(e, 0, sizeof(e));
	EXPECT_EQ(12, check_entry(_metadata, &buddy_codec_bdi, e, s));
	EXPECT_EQ(0, s[0]);
	EXPECT_EQ(0, s[1] & 0xf0);

	for (i = 0; i < 16; i++)
		put64(e, i, 0x0123456789abcdefull);
	EXPECT_EQ(68, check_entry(_metadata, &buddy_codec_bdi, e, s));
	EXPECT_EQ(T_REP8, s[0] >> 4);
	/* tag 0001, then the value MSB first */
	EXPECT_EQ(0x10, s[0]);
	EXPECT_EQ(0x12, s[1]);
	EXPECT_EQ(0xf0, s[8]);

	/* Repeated 8-byte value made of two different words is rep8 too. */
	for (i = 0; i < 32; i++)
		put32(e, i, i & 1 ? 0xdeadbeef : 7);
	EXPECT_EQ(68, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_REP8, tag);

	/* Repeated small value: rep8 (68) beats B8D1 (212). */
	for (i = 0; i < 16; i++)
		put64(e, i, 1);
	EXPECT_EQ(68, bdi_bits(_metadata, e, &tag));

	/* Random bytes: raw, 4 + 1024 bits, the bytes in order after tag. */
	for (i = 0; i < sizeof(e); i++)
		e[i] = (u8)(i * 151 + 89) ^ (u8)(i >> 3) * 29;
	EXPECT_EQ(1028, check_entry(_metadata, &buddy_codec_bdi, e, s));
	EXPECT_EQ(T_RAW, s[0] >> 4);
	EXPECT_EQ(e[0] >> 4, s[0] & 0xf);
	EXPECT_EQ((u8)(e[0] << 4 | e[1] >> 4), s[1]);
}

TEST(bdi_b8d1)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int i, tag;

	/* One base, deltas 0..15. */
	for (i = 0; i < 16; i++)
		put64(e, i, 0x1122334455667700ull + i);
	EXPECT_EQ(212, check_entry(_metadata, &buddy_codec_bdi, e, s));
	EXPECT_EQ(T_B8D1, s[0] >> 4);
	/* mask all ones: tag 0010, 16 ones */
	EXPECT_EQ(0x2f, s[0]);
	EXPECT_EQ(0xff, s[1]);
	EXPECT_EQ(0xf1, s[2]);

	/* Immediates (zero base) interleaved with base-relative elements. */
	for (i = 0; i < 16; i++)
		put64(e, i, i & 1 ? 0x5000000000000000ull + i :
				    (u64)-(s64)i);
	EXPECT_EQ(212, check_entry(_metadata, &buddy_codec_bdi, e, s));
	EXPECT_EQ(T_B8D1, s[0] >> 4);
	/* mask 0101...: element 0 is an immediate */
	EXPECT_EQ(0x25, s[0]);
	EXPECT_EQ(0x55, s[1]);
	EXPECT_EQ(0x50, s[2] & 0xf0);

	/* Deltas -128..127 around the base, base not the first element. */
	put64(e, 0, 0);
	put64(e, 1, 0x7000000000000000ull);
	for (i = 2; i < 16; i++)
		put64(e, i, 0x7000000000000000ull + (i * 37 % 256) - 128);
	put64(e, 2, 0x7000000000000000ull + 127);
	put64(e, 3, 0x7000000000000000ull - 128);
	EXPECT_EQ(212, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D1, tag);

	/* Delta 128 from the base does not fit one byte: B8D2. */
	put64(e, 0, 0x7000000000000000ull);
	for (i = 1; i < 16; i++)
		put64(e, i, 0x7000000000000000ull + 1);
	put64(e, 15, 0x7000000000000000ull + 128);
	EXPECT_EQ(340, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D2, tag);
	/* ... and -128 does. */
	put64(e, 15, 0x7000000000000000ull - 128);
	EXPECT_EQ(212, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D1, tag);

	/*
	 * Differences are taken modulo 2^64: 0x7fff...ff and 0x8000...00 are
	 * one apart (k-byte two's-complement wrap, like BDI hardware).
	 */
	for (i = 0; i < 16; i++)
		put64(e, i, i & 1 ? 0x8000000000000000ull :
				    0x7fffffffffffffffull);
	EXPECT_EQ(212, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D1, tag);
}

TEST(bdi_b4d1)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	/* 4-byte elements one apart: 8-byte deltas are 2 + 2^33, too big. */
	for (i = 0; i < 32; i++)
		put32(e, i, 0x11223300 + i);
	EXPECT_EQ(324, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B4D1, tag);

	/* Wrap modulo 2^32: 0x7fffffff and 0x80000000 (and immediates). */
	for (i = 0; i < 32; i++)
		put32(e, i, i % 3 == 0 ? 0x7fffffff : i % 3 == 1 ?
		      0x80000005 : (u32)-3);
	EXPECT_EQ(324, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B4D1, tag);
}

TEST(bdi_b8d2)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	for (i = 0; i < 16; i++)
		put64(e, i, 0x1122334455660000ull + i * 1000);
	EXPECT_EQ(340, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D2, tag);

	/* Immediates up to 2 bytes signed next to a far base. */
	for (i = 0; i < 16; i++)
		put64(e, i, i & 1 ? 0xffff800000000000ull - i * 2000 :
				    (u64)(s64)(-32768 + (s64)i * 4000));
	EXPECT_EQ(340, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D2, tag);
}

TEST(bdi_b4d2)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	for (i = 0; i < 32; i++)
		put32(e, i, 0x11220000 + i * 1000);
	EXPECT_EQ(580, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B4D2, tag);
}

TEST(bdi_b2d1)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	for (i = 0; i < 64; i++)
		put16(e, i, 0x1100 + i);
	EXPECT_EQ(596, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B2D1, tag);

	/* Wrap modulo 2^16 with immediates. */
	for (i = 0; i < 64; i++)
		put16(e, i, !(i & 1) ? (u16)-100 : i % 3 == 0 ? 0x7ff0 :
			    0x8010 + (i & 7));
	EXPECT_EQ(596, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B2D1, tag);
}

TEST(bdi_b8d4)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	for (i = 0; i < 16; i++)
		put64(e, i, 0x1122334400000000ull + i * 0x01000000ull);
	EXPECT_EQ(596, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D4, tag);

	/* Pointers: one region, strides beyond 64 KiB. */
	for (i = 0; i < 16; i++)
		put64(e, i, i == 5 ? 0 : 0x00007f1234560000ull +
		      (u64)i * 0x123450);
	EXPECT_EQ(596, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D4, tag);

	/* One delta of 2^31 is too far: raw. */
	put64(e, 15, 0x00007f1234560000ull + 0x80000000ull);
	EXPECT_EQ(1028, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_RAW, tag);
}

/* A base-relative element may not be immediate; smallest encoding wins. */
TEST(bdi_smallest_wins)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i, tag;

	/* Small 4-byte values: B8D1 fails (upper words), B4D1 applies. */
	for (i = 0; i < 32; i++)
		put32(e, i, i * 3);
	EXPECT_EQ(324, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B4D1, tag);

	/* Small 8-byte values, all immediates: B8D1 with base 0. */
	for (i = 0; i < 16; i++)
		put64(e, i, i * 5);
	EXPECT_EQ(212, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B8D1, tag);

	/* 1.0f everywhere but one word: 4-byte D1 with base 0x3f800000. */
	for (i = 0; i < 32; i++)
		put32(e, i, 0x3f800000);
	put32(e, 7, 0x3f800010);
	EXPECT_EQ(324, bdi_bits(_metadata, e, &tag));
	EXPECT_EQ(T_B4D1, tag);
}

/* ----------------------------------------------------------------- FPC */

/* Prefixes of the first @n tokens of an FPC stream. */
static void fpc_prefixes(const u8 *s, unsigned int n, unsigned int *pfx)
{
	static const u8 plen[8] = { 3, 4, 8, 16, 16, 16, 8, 32 };
	struct bitr r;
	unsigned int i;

	bitr_init(&r, s, BUDDY_STREAM_MAX);
	for (i = 0; i < n; i++) {
		pfx[i] = bitr_get(&r, 3);
		bitr_get(&r, plen[pfx[i]]);
	}
}

static unsigned int fpc_one(struct __test_metadata *_metadata, u32 w,
			    unsigned int *pfx)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int bits;

	fill32(e, w);
	bits = check_entry(_metadata, &buddy_codec_fpc, e, s);
	fpc_prefixes(s, 1, pfx);
	return bits;
}

TEST(fpc_sizes)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX];
	unsigned int pfx[16];

	EXPECT_STREQ("fpc", buddy_codec_fpc.name);
	EXPECT_EQ(BUDDY_CODEC_FPC, buddy_codec_fpc.id);

	/* All-ones is 32 x (001, -1): 224 bits; 0011111 repeated. */
	fill32(e, 0xffffffff);
	EXPECT_EQ(224, check_entry(_metadata, &buddy_codec_fpc, e, s));
	EXPECT_EQ(0x3e, s[0]);
	EXPECT_EQ(0x7c, s[1]);

	/* All zero: four runs of 8, 24 bits = 000111 x 4. */
	memset(e, 0, sizeof(e));
	EXPECT_EQ(24, check_entry(_metadata, &buddy_codec_fpc, e, s));
	EXPECT_EQ(0x1c, s[0]);
	EXPECT_EQ(0x71, s[1]);
	EXPECT_EQ(0xc7, s[2]);

	/* Every class once. */
	memset(e, 0, sizeof(e));
	put32(e, 3, 5);			/* 001: 7 */
	put32(e, 4, (u32)-100);		/* 010: 11 */
	put32(e, 5, 0x12121212);	/* 110: 11 */
	put32(e, 6, (u32)-30000);	/* 011: 19 */
	put32(e, 7, 0x12340000);	/* 100: 19 */
	put32(e, 8, 0x007fff80);	/* 101: 19 */
	put32(e, 9, 0x12345678);	/* 111: 35 */
	/* runs 3 (0..2) and 22 = 8 + 8 + 6 (10..31): 4 runs, 24 bits */
	EXPECT_EQ(24 + 7 + 11 + 11 + 19 + 19 + 19 + 35,
		  check_entry(_metadata, &buddy_codec_fpc, e, s));
	fpc_prefixes(s, 11, pfx);
	EXPECT_EQ(0, pfx[0]);
	EXPECT_EQ(1, pfx[1]);
	EXPECT_EQ(2, pfx[2]);
	EXPECT_EQ(6, pfx[3]);
	EXPECT_EQ(3, pfx[4]);
	EXPECT_EQ(4, pfx[5]);
	EXPECT_EQ(5, pfx[6]);
	EXPECT_EQ(7, pfx[7]);
	EXPECT_EQ(0, pfx[8]);
	EXPECT_EQ(0, pfx[9]);
	EXPECT_EQ(0, pfx[10]);
}

TEST(fpc_boundaries)
{
	unsigned int pfx;

	/* 4-bit sign-extended: -8..7 */
	EXPECT_EQ(32 * 7, fpc_one(_metadata, 7, &pfx));
	EXPECT_EQ(1, pfx);
	EXPECT_EQ(32 * 7, fpc_one(_metadata, (u32)-8, &pfx));
	EXPECT_EQ(1, pfx);
	EXPECT_EQ(32 * 7, fpc_one(_metadata, 1, &pfx));
	/* 8-bit: -128..127 */
	EXPECT_EQ(32 * 11, fpc_one(_metadata, 8, &pfx));
	EXPECT_EQ(2, pfx);
	EXPECT_EQ(32 * 11, fpc_one(_metadata, (u32)-9, &pfx));
	EXPECT_EQ(2, pfx);
	EXPECT_EQ(32 * 11, fpc_one(_metadata, 127, &pfx));
	EXPECT_EQ(32 * 11, fpc_one(_metadata, (u32)-128, &pfx));
	EXPECT_EQ(2, pfx);
	/* 128 and 255 are not 8-bit signed: 16-bit */
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 128, &pfx));
	EXPECT_EQ(3, pfx);
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 255, &pfx));
	EXPECT_EQ(3, pfx);
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 32767, &pfx));
	EXPECT_EQ(32 * 19, fpc_one(_metadata, (u32)-32768, &pfx));
	EXPECT_EQ(3, pfx);
	/* 32768 = 0x00008000: halfwords 0x0000 and 0x8000: raw */
	EXPECT_EQ(32 * 35, fpc_one(_metadata, 32768, &pfx));
	EXPECT_EQ(7, pfx);
	/* four equal bytes, cheaper than 16-bit */
	EXPECT_EQ(32 * 11, fpc_one(_metadata, 0x80808080, &pfx));
	EXPECT_EQ(6, pfx);
	EXPECT_EQ(32 * 11, fpc_one(_metadata, 0x01010101, &pfx));
	EXPECT_EQ(6, pfx);
	/* low halfword zero beats two halfwords on the tie (100 < 101) */
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 0x00010000, &pfx));
	EXPECT_EQ(4, pfx);
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 0xffff0000, &pfx));
	EXPECT_EQ(4, pfx);
	/* two halfwords, sign-extended bytes */
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 0xff80007f, &pfx));
	EXPECT_EQ(5, pfx);
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 0x0001ffff, &pfx));
	EXPECT_EQ(5, pfx);
	/* two halfwords, both negative (not 16-bit signed as a word) */
	EXPECT_EQ(32 * 19, fpc_one(_metadata, 0xff80ff80, &pfx));
	EXPECT_EQ(5, pfx);
	EXPECT_EQ(32 * 35, fpc_one(_metadata, 0x00800001, &pfx));
	EXPECT_EQ(7, pfx);
}

TEST(fpc_zero_runs)
{
	u8 e[BUDDY_ENTRY_BYTES];
	unsigned int i;

	/* 9 zeros then 23 ones: runs 8 + 1, then 23 x 7 bits. */
	fill32(e, 1);
	for (i = 0; i < 9; i++)
		put32(e, i, 0);
	EXPECT_EQ(12 + 23 * 7, BITS(buddy_codec_fpc, e));

	/* Alternating zero / one: 16 runs of 1 and 16 x 7. */
	for (i = 0; i < 32; i++)
		put32(e, i, i & 1);
	EXPECT_EQ(16 * 6 + 16 * 7, BITS(buddy_codec_fpc, e));

	/* One non-zero word at the end: 31 zeros = 8 + 8 + 8 + 7. */
	memset(e, 0, sizeof(e));
	put32(e, 31, 0x12345678);
	EXPECT_EQ(4 * 6 + 35, BITS(buddy_codec_fpc, e));

	/* 16 zeros, 16 raw: 2 runs. */
	for (i = 0; i < 32; i++)
		put32(e, i, i < 16 ? 0 : 0x9abcdef0 + i);
	EXPECT_EQ(2 * 6 + 16 * 35, BITS(buddy_codec_fpc, e));

	/* Longest stream: all raw, 1120 bits, 140 bytes. */
	for (i = 0; i < 32; i++)
		put32(e, i, 0x12345678 * (i + 1) | 0x01000100);
	EXPECT_EQ(1120, BITS(buddy_codec_fpc, e));
}

/* Trailing zero padding after a stream is accepted by every codec. */
TEST(padding_accepted)
{
	u8 e[BUDDY_ENTRY_BYTES], s[BUDDY_STREAM_MAX], out[BUDDY_ENTRY_BYTES];
	const struct buddy_codec *cs[] = {
		&buddy_codec_zvc, &buddy_codec_bdi, &buddy_codec_fpc,
		&buddy_codec_none,
	};
	unsigned int i, k, bits;

	for (i = 0; i < sizeof(e); i++)
		e[i] = i < 40 ? (u8)i : 0;
	for (k = 0; k < ARRAY_SIZE(cs); k++) {
		memset(s, 0, sizeof(s));
		bits = cs[k]->compress(e, s);
		EXPECT_TRUE(bits <= 8 * BUDDY_STREAM_MAX);
		EXPECT_EQ(0, cs[k]->decompress(s, BUDDY_STREAM_MAX, out));
		EXPECT_EQ(0, memcmp(out, e, sizeof(e))) TH_LOG("%s", cs[k]->name);
	}
}

/* ----------------------------------------------------------- bitstream */

/* The 64 bits from bit @bit of the @len bytes at @s, zeros past the end. */
static u64 ref_bits(const u8 *s, unsigned int len, unsigned int bit)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < 64; i++, bit++)
		if (bit / 8 < len && (s[bit / 8] >> (7 - bit % 8) & 1))
			v |= 1ull << (63 - i);
	return v;
}

/* The writer and the reader agree, and the reader never invents bits. */
TEST(bitstream)
{
	static const u64 pat = 0x9e3779b97f4a7c15ull;
	static const unsigned int lens[] = { 0, 1, 3, 7, 8, 9, 16, 20, 100 };
	u8 s[BUDDY_STREAM_MAX + 8];
	unsigned int i, k, n, step;
	struct bitw w;
	struct bitr r;

	/* Puts of 1..8 bits, each followed by 64 bits, then 56 bits. */
	memset(s, 0xa5, sizeof(s));
	bitw_init(&w, s);
	for (i = 1; i <= 8; i++) {
		bitw_put(&w, (pat >> i) & ((1u << i) - 1), i);
		bitw_put64(&w, pat ^ i);
	}
	bitw_put(&w, pat >> 8, 56);
	EXPECT_EQ(36 + 8 * 64 + 56, bitw_finish(&w));
	EXPECT_EQ(0, s[75] & 0x0f);		/* 604 bits: padded with 0 */
	EXPECT_EQ(0xa5, s[BUDDY_STREAM_MAX]);

	bitr_init(&r, s, 76);
	for (i = 1; i <= 8; i++) {
		EXPECT_EQ((pat >> i) & ((1u << i) - 1), bitr_get(&r, i));
		EXPECT_EQ(pat ^ i, bitr_peek(&r));
		bitr_skip64(&r);
	}
	EXPECT_EQ(pat >> 8, bitr_get(&r, 56));
	EXPECT_EQ(0, bitr_get(&r, 4));		/* the padding */
	EXPECT_FALSE(bitr_over(&r));
	EXPECT_EQ(0, bitr_get(&r, 1));		/* past the end */
	EXPECT_TRUE(bitr_over(&r));
	EXPECT_EQ(0, bitr_get(&r, 1));
	EXPECT_TRUE(bitr_over(&r));

	/* Bytes after the stream are not read: they peek as zero. */
	memset(s, 0xff, sizeof(s));
	bitr_init(&r, s, 3);
	EXPECT_EQ(0xffffff0000000000ull, bitr_peek(&r));
	bitr_skip(&r, 20);
	EXPECT_EQ(0xf000000000000000ull, bitr_peek(&r));
	bitr_skip(&r, 4);
	EXPECT_FALSE(bitr_over(&r));
	EXPECT_EQ(0, bitr_peek(&r));
	bitr_skip(&r, 1);
	EXPECT_TRUE(bitr_over(&r));

	/*
	 * Windows at every bit of streams of every kind of length, moved on
	 * by every skip: the same as bit by bit, zeros past the end.
	 */
	for (i = 0; i < sizeof(s); i++)
		s[i] = (u8)(pat >> (i % 57));
	for (k = 0; k < ARRAY_SIZE(lens); k++) {
		for (step = 1; step <= 57; step++) {
			/* 57 stands for bitr_skip64() */
			unsigned int adv = step < 57 ? step : 64;

			bitr_init(&r, s, lens[k]);
			for (n = 0; n <= 8 * lens[k] + 64; n += adv) {
				if (bitr_peek(&r) != ref_bits(s, lens[k], n)) {
					EXPECT_EQ(ref_bits(s, lens[k], n),
						  bitr_peek(&r))
						TH_LOG("len %u bit %u step %u",
						       lens[k], n, adv);
					break;
				}
				EXPECT_EQ(n > 8 * lens[k], bitr_over(&r));
				if (adv == 64)
					bitr_skip64(&r);
				else
					bitr_skip(&r, adv);
			}
		}
	}
}

/* Hand-made malformed streams each decoder must reject. */
TEST(malformed_known)
{
	u8 s[BUDDY_STREAM_MAX], out[BUDDY_ENTRY_BYTES];
	struct bitw w;
	unsigned int tag;

	/* FPC: runs 8 + 8 + 8, word 1, then a run of 8 would end at 33. */
	memset(s, 0, sizeof(s));
	bitw_init(&w, s);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 0x11, 7);
	bitw_put(&w, 7, 6);
	bitw_finish(&w);
	EXPECT_EQ(-EINVAL, buddy_codec_fpc.decompress(s, sizeof(s), out));
	/* ... a run of 7 ends at 32 exactly. */
	memset(s, 0, sizeof(s));
	bitw_init(&w, s);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 7, 6);
	bitw_put(&w, 0x11, 7);
	bitw_put(&w, 6, 6);
	EXPECT_EQ(31, bitw_finish(&w));
	EXPECT_EQ(0, buddy_codec_fpc.decompress(s, 4, out));
	EXPECT_EQ(1, get_unaligned_le32(out + 4 * 24));
	EXPECT_EQ(-EINVAL, buddy_codec_fpc.decompress(s, 3, out));
	/* A raw word cut short. */
	memset(s, 0xff, sizeof(s));
	EXPECT_EQ(-EINVAL, buddy_codec_fpc.decompress(s, 4, out));
	EXPECT_EQ(0, buddy_codec_fpc.decompress(s, 140, out));
	EXPECT_EQ(-EINVAL, buddy_codec_fpc.decompress(s, 139, out));

	/* BDI: reserved tags; a zeros body that is not zero; short streams. */
	memset(s, 0, sizeof(s));
	for (tag = 8; tag < 15; tag++) {
		s[0] = tag << 4;
		EXPECT_EQ(-EINVAL, buddy_codec_bdi.decompress(s, sizeof(s), out));
	}
	s[0] = 0x00;
	s[1] = 0x10;
	EXPECT_EQ(-EINVAL, buddy_codec_bdi.decompress(s, sizeof(s), out));
	s[1] = 0x08;	/* padding after the 12 bits: fine */
	EXPECT_EQ(0, buddy_codec_bdi.decompress(s, 2, out));
	EXPECT_EQ(-EINVAL, buddy_codec_bdi.decompress(s, 1, out));
	s[0] = 0xf0;	/* raw needs 129 bytes */
	EXPECT_EQ(-EINVAL, buddy_codec_bdi.decompress(s, 128, out));
	EXPECT_EQ(0, buddy_codec_bdi.decompress(s, 129, out));
	s[0] = 0x20;	/* B8D1 needs 27 bytes */
	EXPECT_EQ(-EINVAL, buddy_codec_bdi.decompress(s, 26, out));
	EXPECT_EQ(0, buddy_codec_bdi.decompress(s, 27, out));

	/* ZVC: the mask promises more words than the stream holds. */
	memset(s, 0, sizeof(s));
	put_unaligned_le32(0xffffffff, s);
	EXPECT_EQ(-EINVAL, buddy_codec_zvc.decompress(s, 131, out));
	EXPECT_EQ(0, buddy_codec_zvc.decompress(s, 132, out));
	put_unaligned_le32(0x80000001, s);
	EXPECT_EQ(-EINVAL, buddy_codec_zvc.decompress(s, 11, out));
	EXPECT_EQ(0, buddy_codec_zvc.decompress(s, 12, out));
	EXPECT_EQ(-EINVAL, buddy_codec_zvc.decompress(s, 3, out));

	/* none: exactly 128 bytes. */
	EXPECT_EQ(-EINVAL, buddy_codec_none.decompress(s, 127, out));
	EXPECT_EQ(0, buddy_codec_none.decompress(s, 128, out));
}

TEST_HARNESS_MAIN
