// SPDX-License-Identifier: GPL-2.0
/*
 * bpc_vec_test.c - each implementation of BPC in core/codecs (the scalar
 * codec, bpc.c, and the vector one, bpc_avx2.c) against the reference
 * (bpc_ref.h, the scalar codec as it was before either was made faster),
 * entry by entry:
 *
 *  - compress(): the same length and the same stream, bit for bit;
 *  - size(): the same length;
 *  - each decoder on the other's stream (streams cross): the entry back;
 *  - buddy_entry_encode/classify/decode: the same size code and stored
 *    bytes, each implementation decoding the other's;
 *  - streams that are not BPC (random bytes, valid streams with bits
 *    flipped, truncated or padded): the same verdict, 0 or -EINVAL, and
 *    the same entry where both decode;
 *  - buddy_entries_decode(), which decodes many entries at once (eight
 *    side by side in the vector codec), against the reference's
 *    buddy_entry_decode() of each: batches of every size up to 64 of
 *    every class, clean and with a share of the streams broken, and
 *    batches of eight for each of the 256 combinations of valid and
 *    invalid streams; the verdict is -EINVAL exactly where the reference
 *    rejects one of them, and every entry the reference decodes is the
 *    same.
 *
 * Entries: every data class of tools/common/datagen.h (mixed included),
 * then random bit patterns of several kinds (uniform words, sparse bits,
 * small and extreme values that make 33-bit deltas, runs of equal words).
 * BPC_VEC_ENTRIES in the environment sets the entries per class and per
 * kind (default 65536: make check runs this under ASan and UBSan; make
 * check-bpc-vec runs 10 million per class, optimised).  Each entry that
 * differs is named (implementation, class, entry) and fails the test.
 * The vector variant says SKIP on a CPU without its instructions.
 */
#include <stdio.h>
#include <stdlib.h>

#include <kselftest_harness.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "selftests/core/bpc_ref.h"

#define CHUNK_ENTRIES	4096
/* The most entries handed to buddy_entries_decode() at once. */
#define BATCH_MAX	64
#define SEED		0x42756464790030ull

static unsigned long entries_per_class(void)
{
	const char *s = getenv("BPC_VEC_ENTRIES");
	unsigned long n = s ? strtoul(s, NULL, 0) : 0;

	return n ? n : 65536;
}

FIXTURE(vec) {
	const struct buddy_codec *ref, *vec;
	u8 *data;	/* CHUNK_ENTRIES entries */
	u8 *s1, *s2;	/* BUDDY_STREAM_MAX bytes each, on the heap */
	u8 *d1, *d2;	/* 128 bytes each */
	unsigned long n;
};

/* The implementation under test, against the reference. */
FIXTURE_VARIANT(vec) {
	unsigned int impl;
};

FIXTURE_VARIANT_ADD(vec, scalar) {
	.impl = BUDDY_IMPL_SCALAR,
};

FIXTURE_VARIANT_ADD(vec, avx2) {
	.impl = BUDDY_IMPL_AVX2,
};

FIXTURE_VARIANT_ADD(vec, gfni) {
	.impl = BUDDY_IMPL_GFNI,
};

FIXTURE_SETUP(vec)
{
	if (variant->impl != BUDDY_IMPL_SCALAR) {
#ifdef BUDDY_HAVE_AVX2
		if (!buddy_impl_usable(variant->impl))
			SKIP(return, "this CPU lacks AVX2, BMI1/2, LZCNT or POPCNT%s",
			     variant->impl == BUDDY_IMPL_GFNI ? ", or GFNI" : "");
#else
		SKIP(return, "no vector BPC in this build (x86-64, GCC 12 or clang)");
#endif
	}
	self->ref = &bpc_ref_codec;
	self->vec = buddy_codec_impl(&buddy_codec_bpc, variant->impl);
	ASSERT_EQ(variant->impl, self->vec->impl);
	self->data = malloc(CHUNK_ENTRIES * BUDDY_ENTRY_BYTES);
	self->s1 = malloc(BUDDY_STREAM_MAX);
	self->s2 = malloc(BUDDY_STREAM_MAX);
	self->d1 = malloc(BUDDY_ENTRY_BYTES);
	self->d2 = malloc(BUDDY_ENTRY_BYTES);
	ASSERT_TRUE(self->data && self->s1 && self->s2 && self->d1 &&
		    self->d2);
	self->n = entries_per_class();
}

FIXTURE_TEARDOWN(vec)
{
	free(self->data);
	free(self->s1);
	free(self->s2);
	free(self->d1);
	free(self->d2);
}

/*
 * Decode @len bytes of @s with both decoders from the end of a heap block
 * of that size (ASan sees a read past it); 0 when both agree.
 */
static int cross_decode(struct _test_data_vec *self, const u8 *s,
			unsigned int len, int *ret)
{
	u8 *copy = malloc(len ? len : 1);
	int r1, r2;

	if (len)
		memcpy(copy, s, len);
	memset(self->d1, 0x5a, BUDDY_ENTRY_BYTES);
	memset(self->d2, 0xa5, BUDDY_ENTRY_BYTES);
	r1 = self->ref->decompress(copy, len, self->d1);
	r2 = self->vec->decompress(copy, len, self->d2);
	free(copy);
	*ret = r1;
	if (r1 != r2 || (r1 != 0 && r1 != -EINVAL))
		return -1;
	return !r1 && memcmp(self->d1, self->d2, BUDDY_ENTRY_BYTES) ? -1 : 0;
}

/* One entry through both implementations; 0, or what differed. */
static const char *check_entry(struct _test_data_vec *self, const u8 *e)
{
	u8 o1[BUDDY_STREAM_MAX], o2[BUDDY_STREAM_MAX];
	unsigned int b1, b2, c1, c2, len;
	int ret;

	memset(self->s1, 0x11, BUDDY_STREAM_MAX);
	memset(self->s2, 0x22, BUDDY_STREAM_MAX);
	b1 = self->ref->compress(e, self->s1);
	b2 = self->vec->compress(e, self->s2);
	if (b1 != b2)
		return "compress() length";
	len = DIV_ROUND_UP(b1, 8);
	if (memcmp(self->s1, self->s2, len))
		return "compress() stream";
	if (self->vec->size(e) != b1 || self->ref->size(e) != b1)
		return "size()";
	/* the reference's stream through both decoders, then the other */
	if (cross_decode(self, self->s1, len, &ret) || ret ||
	    memcmp(self->d2, e, BUDDY_ENTRY_BYTES))
		return "decompress() of the reference's stream";
	if (cross_decode(self, self->s2, len, &ret) || ret ||
	    memcmp(self->d1, e, BUDDY_ENTRY_BYTES))
		return "decompress() of the tested stream";

	memset(o1, 0x33, sizeof(o1));
	memset(o2, 0x44, sizeof(o2));
	c1 = buddy_entry_encode(self->ref, e, o1);
	c2 = buddy_entry_encode(self->vec, e, o2);
	if (c1 != c2 || memcmp(o1, o2, buddy_code_bytes(c1)))
		return "buddy_entry_encode()";
	if (buddy_entry_classify(self->vec, e) != c1 ||
	    buddy_entry_classify(self->ref, e) != c1)
		return "buddy_entry_classify()";
	memset(self->d1, 0x5a, BUDDY_ENTRY_BYTES);
	memset(self->d2, 0xa5, BUDDY_ENTRY_BYTES);
	if (buddy_entry_decode(self->vec, c1, o1, self->d2) ||
	    buddy_entry_decode(self->ref, c2, o2, self->d1) ||
	    memcmp(self->d1, e, BUDDY_ENTRY_BYTES) ||
	    memcmp(self->d2, e, BUDDY_ENTRY_BYTES))
		return "buddy_entry_decode()";

	/*
	 * Streams that are not BPC: cut short (by a byte, and a random
	 * length) and with one bit flipped; both decoders say the same.
	 */
	if (len && cross_decode(self, self->s1, len - 1, &ret))
		return "decompress() of a stream one byte short";
	if (len > 1) {
		unsigned int bit = (e[3] * 131u + e[77]) % b1;

		self->s1[bit / 8] ^= 0x80 >> (bit % 8);
		if (cross_decode(self, self->s1, len, &ret))
			return "decompress() of a stream with a bit flipped";
		if (cross_decode(self, self->s1, e[9] % len, &ret))
			return "decompress() of a cut stream with a bit flipped";
		if (cross_decode(self, self->s1, BUDDY_STREAM_MAX, &ret))
			return "decompress() of a padded stream with a bit flipped";
	}
	return NULL;
}

/* Entries i.. of one chunk; the first that differs fails the test. */
static void check_chunk(struct __test_metadata *_metadata,
			struct _test_data_vec *self, const char *what,
			unsigned long first, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const char *err = check_entry(self, self->data +
					      (size_t)i * BUDDY_ENTRY_BYTES);

		ASSERT_EQ(NULL, err)
			TH_LOG("%s, %s entry %lu: %s differs",
			       buddy_impl_name(self->vec->impl), what,
			       first + i, err);
	}
}

/* The full run, 10 million entries a class, takes minutes: over 30 s. */
TEST_F_TIMEOUT(vec, datagen_classes, 3600)
{
	unsigned int c, n;
	unsigned long done;

	for (c = 0; c < DATAGEN_NR; c++) {
		for (done = 0; done < self->n; done += n) {
			n = self->n - done < CHUNK_ENTRIES ?
			    self->n - done : CHUNK_ENTRIES;
			datagen_fill(c, datagen_mix(SEED, done), self->data,
				     (size_t)n * BUDDY_ENTRY_BYTES);
			check_chunk(_metadata, self, datagen_class_name(c),
				    done, n);
		}
		printf("# %s, %s: %lu entries agree\n",
		       buddy_impl_name(self->vec->impl), datagen_class_name(c),
		       done);
		fflush(stdout);	/* the harness ends each test with _exit() */
	}
}

/*
 * A batch of @n entries of size codes @codes stored at @stored (each in a
 * heap block of its size) through buddy_entries_decode(), against the
 * reference decoding each; NULL, or what differed.
 */
static const char *check_batch(struct _test_data_vec *self,
			       const unsigned int *codes, u8 *const *stored,
			       unsigned int n)
{
	static u8 want[BATCH_MAX * BUDDY_ENTRY_BYTES];
	static u8 got[BATCH_MAX * BUDDY_ENTRY_BYTES];
	bool ok[BATCH_MAX];
	unsigned int k;
	int ret = 0;

	for (k = 0; k < n; k++) {
		ok[k] = !buddy_entry_decode(self->ref, codes[k], stored[k],
					    want + k * BUDDY_ENTRY_BYTES);
		if (!ok[k])
			ret = -EINVAL;
	}
	memset(got, 0x5a, sizeof(got));
	if (buddy_entries_decode(self->vec, codes,
				 (const u8 *const *)stored, got, n) != ret)
		return "buddy_entries_decode() verdict";
	for (k = 0; k < n; k++)
		if (ok[k] && memcmp(want + k * BUDDY_ENTRY_BYTES,
				    got + k * BUDDY_ENTRY_BYTES,
				    BUDDY_ENTRY_BYTES))
			return "buddy_entries_decode() entry";
	return NULL;
}

/* Entry @e encoded by the reference into a heap block of its size. */
static u8 *store_entry(struct _test_data_vec *self, const u8 *e,
		       unsigned int *code)
{
	u8 out[BUDDY_STREAM_MAX];
	unsigned int len;
	u8 *p;

	*code = buddy_entry_encode(self->ref, e, out);
	len = buddy_code_bytes(*code);
	p = malloc(len ? len : 1);
	if (p && len)
		memcpy(p, out, len);
	return p;
}

/*
 * Break the stream of a compressed entry: a bit flipped, a byte made
 * random, all of it random, or its code one size up or down (the block
 * made that size: the stream cut, or random bytes after it).
 */
static u8 *break_entry(struct datagen_rng *r, u8 *p, unsigned int *code)
{
	unsigned int len = buddy_code_bytes(*code), j, nlen;
	u64 x = datagen_next(r);
	u8 *q;

	switch (x % 4) {
	case 0:
		p[(x >> 8) % len] ^= 0x80 >> (x >> 16 & 7);
		return p;
	case 1:
		p[(x >> 8) % len] = x >> 24;
		return p;
	case 2:
		for (j = 0; j < len; j++)
			p[j] = datagen_next(r);
		return p;
	}
	*code = *code == BUDDY_CODE_C8 ? BUDDY_CODE_C32 :
		*code == BUDDY_CODE_C96 || x >> 8 & 1 ? *code - 1 : *code + 1;
	nlen = buddy_code_bytes(*code);
	q = malloc(nlen);
	if (!q)
		return p;
	for (j = 0; j < nlen; j++)
		q[j] = j < len ? p[j] : datagen_next(r);
	free(p);
	return q;
}

static void free_stored(u8 **stored, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		free(stored[k]);
}

/*
 * Entries of every class in batches of 1..BATCH_MAX, as they are and then
 * with about one compressed stream in four broken.
 */
TEST_F_TIMEOUT(vec, entries_decode, 3600)
{
	unsigned int codes[BATCH_MAX], c, k, n, pass;
	u8 *stored[BATCH_MAX];
	struct datagen_rng r;
	unsigned long done;
	const char *err;

	datagen_seed(&r, SEED + 2);
	for (c = 0; c < DATAGEN_NR; c++) {
		for (done = 0; done < self->n; done += n) {
			n = 1 + datagen_next(&r) % BATCH_MAX;
			if (n > self->n - done)
				n = self->n - done;
			datagen_fill(c, datagen_mix(SEED, done), self->data,
				     (size_t)n * BUDDY_ENTRY_BYTES);
			for (pass = 0; pass < 2; pass++) {
				for (k = 0; k < n; k++) {
					stored[k] = store_entry(self,
						self->data + (size_t)k * BUDDY_ENTRY_BYTES,
						&codes[k]);
					ASSERT_NE(NULL, stored[k]);
					if (pass && codes[k] != BUDDY_CODE_ZERO &&
					    codes[k] != BUDDY_CODE_RAW &&
					    datagen_next(&r) % 4 == 0)
						stored[k] = break_entry(&r, stored[k],
									&codes[k]);
				}
				err = check_batch(self, codes, stored, n);
				free_stored(stored, n);
				ASSERT_EQ(NULL, err)
					TH_LOG("%s, %s entries %lu..%lu%s: %s differs",
					       buddy_impl_name(self->vec->impl),
					       datagen_class_name(c), done,
					       done + n - 1,
					       pass ? " (some broken)" : "", err);
			}
		}
		printf("# %s, %s: %lu entries agree in batches\n",
		       buddy_impl_name(self->vec->impl), datagen_class_name(c),
		       done);
		fflush(stdout);
	}
}

/*
 * Eight compressed entries at once with the streams of lanes @mask
 * broken until the reference rejects them, for every @mask: whatever
 * the others do, each lane's verdict and entry are its own.
 */
TEST_F_TIMEOUT(vec, entries_decode_lanes, 3600)
{
	unsigned int codes[8], mask, k, tries, rounds, round, i = 0;
	u8 *stored[8], scratch[BUDDY_ENTRY_BYTES];
	struct datagen_rng r;
	const char *err;

	rounds = self->n / 4096 ? self->n / 4096 : 1;
	datagen_seed(&r, SEED + 3);
	datagen_fill(DATAGEN_MIXED, SEED, self->data,
		     (size_t)CHUNK_ENTRIES * BUDDY_ENTRY_BYTES);
	for (round = 0; round < rounds; round++) {
		for (mask = 0; mask < 256; mask++) {
			for (k = 0; k < 8; k++) {
				/* the next entry with a stream */
				do {
					stored[k] = store_entry(self,
						self->data + (size_t)(i++ % CHUNK_ENTRIES) *
						BUDDY_ENTRY_BYTES, &codes[k]);
					ASSERT_NE(NULL, stored[k]);
					if (codes[k] != BUDDY_CODE_ZERO &&
					    codes[k] != BUDDY_CODE_RAW)
						break;
					free(stored[k]);
				} while (1);
				if (!(mask >> k & 1))
					continue;
				for (tries = 0; tries < 64; tries++) {
					stored[k] = break_entry(&r, stored[k],
								&codes[k]);
					if (buddy_entry_decode(self->ref, codes[k],
							       stored[k], scratch))
						break;
				}
			}
			err = check_batch(self, codes, stored, 8);
			free_stored(stored, 8);
			ASSERT_EQ(NULL, err)
				TH_LOG("%s, round %u, broken lanes %#x: %s differs",
				       buddy_impl_name(self->vec->impl), round,
				       mask, err);
		}
	}
	printf("# %s: %u rounds of 256 lane combinations agree\n",
	       buddy_impl_name(self->vec->impl), rounds);
	fflush(stdout);
}

/* Bit patterns the data classes make rarely or never. */
enum { PAT_UNIFORM, PAT_SPARSE, PAT_SMALL, PAT_EXTREME, PAT_RUNS, PAT_NR };
static const char *const pat_names[PAT_NR] = {
	"uniform words", "sparse bits", "small values", "extreme values",
	"runs of equal words",
};

static u32 pattern_word(struct datagen_rng *r, unsigned int kind, u32 prev)
{
	u64 x = datagen_next(r);

	switch (kind) {
	case PAT_UNIFORM:
		return (u32)x;
	case PAT_SPARSE:	/* one or two bits set, or none */
		return (x & 3 ? 1u << (x >> 2 & 31) : 0) |
		       (x & 4 ? 1u << (x >> 8 & 31) : 0);
	case PAT_SMALL:		/* sign-extended 1..16-bit values */
		return (u32)((s32)((u32)(x >> 8) << (x & 31)) >> (x & 31)) >>
		       (x >> 40 & 15);
	case PAT_EXTREME: {	/* deltas that need 33 bits */
		static const u32 v[] = { 0x7fffffff, 0x80000000, 0, 0xffffffff,
					 0x7ffffffe, 0x80000001, 1 };

		return v[x % ARRAY_SIZE(v)];
	}
	default:		/* mostly the word before, now and then another */
		return x % 5 ? prev : (u32)(x >> 16) >> (x & 31);
	}
}

TEST_F_TIMEOUT(vec, random_patterns, 3600)
{
	struct datagen_rng r;
	unsigned int kind, i, j, n;
	unsigned long done;

	datagen_seed(&r, SEED);
	for (kind = 0; kind < PAT_NR; kind++) {
		for (done = 0; done < self->n; done += n) {
			n = self->n - done < CHUNK_ENTRIES ?
			    self->n - done : CHUNK_ENTRIES;
			for (i = 0; i < n; i++) {
				u8 *e = self->data + (size_t)i * BUDDY_ENTRY_BYTES;
				u32 w = 0;

				for (j = 0; j < BUDDY_ENTRY_WORDS; j++) {
					w = pattern_word(&r, kind, w);
					put_unaligned_le32(w, e + 4 * j);
				}
			}
			check_chunk(_metadata, self, pat_names[kind], done, n);
		}
		printf("# %s, %s: %lu entries agree\n",
		       buddy_impl_name(self->vec->impl), pat_names[kind], done);
		fflush(stdout);
	}
}

/* Random bytes as streams, of every length up to BUDDY_STREAM_MAX. */
TEST_F_TIMEOUT(vec, random_streams, 3600)
{
	struct datagen_rng r;
	unsigned long i, ok = 0;
	u8 s[BUDDY_STREAM_MAX];
	int ret;

	datagen_seed(&r, SEED + 1);
	for (i = 0; i < self->n; i++) {
		unsigned int len = i % (BUDDY_STREAM_MAX + 1), j;
		u64 x = datagen_next(&r);

		for (j = 0; j < len; j++) {
			if (j % 8 == 0)
				x = datagen_next(&r);
			s[j] = x >> (8 * (j % 8));
			/* zero bytes make runs and 00000 symbols */
			if ((i & 3) == 0 && s[j] & 1)
				s[j] &= 0x0f;
		}
		ASSERT_EQ(0, cross_decode(self, s, len, &ret))
			TH_LOG("%s, random stream %lu (%u bytes): %d from the reference",
			       buddy_impl_name(self->vec->impl), i, len, ret);
		ok += !ret;
	}
	printf("# %s: %lu random streams agree, %lu of them decode\n",
	       buddy_impl_name(self->vec->impl), i, ok);
	fflush(stdout);
}

TEST_HARNESS_MAIN
