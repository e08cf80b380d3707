// SPDX-License-Identifier: GPL-2.0
/*
 * roundtrip_test.c - every codec of buddy_codecs[] on 1,003,520 entries
 * (14 data classes x 140 chunks of 512 entries): decompress(compress(x)) ==
 * x, size(x) == the bits compress() returns, and the same entry through the
 * storage format (buddy_entry_encode/classify/decode).
 *
 * Streams and stored entries are decoded from the end of a heap block, so
 * ASan catches any read past them.  Each chunk of data is generated once
 * and run through every codec; a failure names codec, class, chunk, entry.
 */
#include <stdlib.h>

#include <kselftest_harness.h>

#include "core/codec.h"
#include "tools/common/datagen.h"

#define CHUNK_ENTRIES	512
#define CHUNKS_PER_CLASS 140	/* 14 classes: 1,003,520 entries per codec */

FIXTURE(rt) {
	u8 *data;	/* CHUNK_ENTRIES entries */
	u8 *sbuf;	/* BUDDY_STREAM_MAX bytes, streams end-aligned */
	u8 *dst;	/* 128 bytes */
};

FIXTURE_SETUP(rt)
{
	self->data = malloc(CHUNK_ENTRIES * BUDDY_ENTRY_BYTES);
	self->sbuf = malloc(BUDDY_STREAM_MAX);
	self->dst = malloc(BUDDY_ENTRY_BYTES);
	ASSERT_TRUE(self->data && self->sbuf && self->dst);
}

FIXTURE_TEARDOWN(rt)
{
	free(self->data);
	free(self->sbuf);
	free(self->dst);
}

struct rt_stats {
	unsigned long n, bits, codes[BUDDY_CODE_NR];
};

static void check_one(struct __test_metadata *_metadata,
		      struct _test_data_rt *self, const struct buddy_codec *c,
		      const u8 *e, struct rt_stats *st, unsigned int cls,
		      unsigned int chunk, unsigned int i)
{
	u8 s[BUDDY_STREAM_MAX], out[BUDDY_STREAM_MAX], *at;
	unsigned int bits, len, code, want, sz;

	bits = c->compress(e, s);
	ASSERT_EQ(bits, c->size(e))
		TH_LOG("%s %s chunk %u entry %u: size() != compress()",
		       c->name, datagen_class_name(cls), chunk, i);
	ASSERT_TRUE(bits > 0 && bits <= 8 * BUDDY_STREAM_MAX);
	len = DIV_ROUND_UP(bits, 8);
	at = self->sbuf + BUDDY_STREAM_MAX - len;
	memcpy(at, s, len);
	ASSERT_EQ(0, c->decompress(at, len, self->dst))
		TH_LOG("%s %s chunk %u entry %u: decode failed",
		       c->name, datagen_class_name(cls), chunk, i);
	ASSERT_EQ(0, memcmp(self->dst, e, BUDDY_ENTRY_BYTES))
		TH_LOG("%s %s chunk %u entry %u: round trip differs",
		       c->name, datagen_class_name(cls), chunk, i);

	/* The storage format. */
	code = buddy_entry_encode(c, e, out);
	ASSERT_TRUE(code < BUDDY_CODE_NR);
	ASSERT_EQ(code, buddy_entry_classify(c, e));
	want = buddy_entry_is_zero(e) ? BUDDY_CODE_ZERO :
					buddy_code_of_bits(bits);
	ASSERT_EQ(want, code);
	sz = buddy_code_bytes(code);
	at = self->sbuf + BUDDY_STREAM_MAX - sz;
	memcpy(at, out, sz);
	ASSERT_EQ(0, buddy_entry_decode(c, code, at, self->dst))
		TH_LOG("%s %s chunk %u entry %u: entry decode failed",
		       c->name, datagen_class_name(cls), chunk, i);
	ASSERT_EQ(0, memcmp(self->dst, e, BUDDY_ENTRY_BYTES))
		TH_LOG("%s %s chunk %u entry %u: code %u differs",
		       c->name, datagen_class_name(cls), chunk, i, code);
	st->codes[code]++;
	st->bits += bits;
	st->n++;
}

#define MAX_CODECS	16

TEST_F_TIMEOUT(rt, all_codecs, 300)
{
	struct rt_stats st[MAX_CODECS];
	unsigned int cls, chunk, i, k, nr;

	for (nr = 0; buddy_codecs[nr]; nr++)
		;
	ASSERT_TRUE(nr > 0 && nr <= MAX_CODECS);
	memset(st, 0, sizeof(st));

	for (cls = 0; cls < DATAGEN_NR; cls++) {
		for (chunk = 0; chunk < CHUNKS_PER_CLASS; chunk++) {
			datagen_fill(cls, 1000 + chunk, self->data,
				     CHUNK_ENTRIES * BUDDY_ENTRY_BYTES);
			for (k = 0; k < nr; k++) {
				for (i = 0; i < CHUNK_ENTRIES; i++) {
					check_one(_metadata, self,
						  buddy_codecs[k],
						  self->data +
						  i * BUDDY_ENTRY_BYTES,
						  &st[k], cls, chunk, i);
					if (!_metadata->passed)
						return;
				}
			}
		}
	}
	for (k = 0; k < nr; k++) {
		ksft_print_msg("%-4s %lu entries, %lu stream bits, codes zero %lu c8 %lu c32 %lu c64 %lu c96 %lu raw %lu\n",
			       buddy_codecs[k]->name, st[k].n, st[k].bits,
			       st[k].codes[0], st[k].codes[1], st[k].codes[2],
			       st[k].codes[3], st[k].codes[4], st[k].codes[5]);
		ASSERT_TRUE(st[k].n >= 1000000);
	}
	fflush(stdout);
}

TEST_HARNESS_MAIN
