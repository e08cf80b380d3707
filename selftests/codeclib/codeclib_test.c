// SPDX-License-Identifier: GPL-2.0
/*
 * codeclib_test.c - libbuddycodec (tools/codeclib/buddycodec.h) against
 * core's codecs: every datagen class, cut into ranges of many lengths,
 * sized on 1, 3 and 8 threads, must give exactly the histograms and Fig. 3
 * bytes that core's size-only path gives entry by entry; the per-entry
 * call the codes and bits; bad arguments their errno.  The code is linked
 * in (so that the sanitizers see it), and the built shared object, named
 * by $CODECLIB_SO, is loaded and compared as well.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <kselftest_harness.h>

#include "tools/codeclib/buddycodec.h"
#include "core/codec.h"
#include "tools/common/datagen.h"
#include "tools/policy/fig3.h"

static const struct buddy_codec *const ref_codecs[BUDDY_SIZING_NC] = {
	&buddy_codec_bpc, &buddy_codec_zvc, &buddy_codec_bdi, &buddy_codec_fpc,
};

/*
 * Under TSan (ten times slower) every fourth class is enough: what it looks
 * for is a race in the pool, the other builds check every class.
 */
#ifdef __SANITIZE_THREAD__
#define CLASS_STEP	4
#else
#define CLASS_STEP	1
#endif

/* Range lengths in entries: empty, one, odd, more than a work item. */
static const unsigned int range_ents[] = {
	0, 1, 7, 4095, 4096, 4097, 300, 0, 9000, 33, 2,
};
#define NRANGES	(sizeof(range_ents) / sizeof(range_ents[0]))

static uint64_t total_ents(void)
{
	uint64_t t = 0;

	for (size_t i = 0; i < NRANGES; i++)
		t += range_ents[i];
	return t;
}

/* The reference: core's calls, entry by entry, codec by codec. */
static void reference(const uint8_t *buf, uint64_t ents, uint32_t mask,
		      struct buddy_size_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->entries = ents;
	for (uint64_t e = 0; e < ents; e++) {
		const uint8_t *p = buf + e * BUDDY_ENTRY_BYTES;

		for (unsigned int c = 0; c < BUDDY_SIZING_NC; c++) {
			if (!(mask & (1u << c)))
				continue;
			st->hist[c][buddy_entry_classify(ref_codecs[c], p)]++;
			if (!buddy_entry_is_zero(p))
				st->fig3_bytes[c] +=
					buddy_fig3_bytes(ref_codecs[c]->size(p));
		}
	}
}

static uint8_t *class_buffer(enum datagen_class c, uint64_t ents)
{
	uint8_t *buf = malloc(ents * BUDDY_ENTRY_BYTES + 1);

	if (buf)
		datagen_fill(c, 0x5eed + c, buf, ents * BUDDY_ENTRY_BYTES);
	return buf;
}

static void expect_same(struct __test_metadata *_metadata,
			const struct buddy_size_stat *want,
			const struct buddy_size_stat *got, const char *what,
			size_t range)
{
	EXPECT_EQ(want->entries, got->entries)
		TH_LOG("%s, range %zu: entries", what, range);
	for (unsigned int c = 0; c < BUDDY_SIZING_NC; c++) {
		for (unsigned int q = 0; q < BUDDY_CODE_NR; q++) {
			EXPECT_EQ(want->hist[c][q], got->hist[c][q])
				TH_LOG("%s, range %zu, %s: code %u", what, range,
				       ref_codecs[c]->name, q);
		}
		EXPECT_EQ(want->fig3_bytes[c], got->fig3_bytes[c])
			TH_LOG("%s, range %zu, %s: Fig. 3 bytes", what, range,
			       ref_codecs[c]->name);
	}
}

typedef int (*ranges_fn)(struct buddy_sizing *, const void *,
			 const uint64_t *, size_t, uint32_t,
			 struct buddy_size_stat *);

/* Every class, every range, against the reference, with @fn on @s. */
static void check_classes(struct __test_metadata *_metadata,
			  struct buddy_sizing *s, ranges_fn fn, uint32_t mask)
{
	uint64_t ents = total_ents(), lens[NRANGES];
	struct buddy_size_stat got[NRANGES], want;

	for (size_t i = 0; i < NRANGES; i++)
		lens[i] = (uint64_t)range_ents[i] * BUDDY_ENTRY_BYTES;
	for (int c = 0; c < DATAGEN_NR; c += CLASS_STEP) {
		uint8_t *buf = class_buffer(c, ents);
		uint64_t off = 0;

		ASSERT_NE(NULL, buf);
		ASSERT_EQ(0, fn(s, buf, lens, NRANGES, mask, got));
		for (size_t i = 0; i < NRANGES; i++) {
			reference(buf + off * BUDDY_ENTRY_BYTES, range_ents[i],
				  mask, &want);
			expect_same(_metadata, &want, &got[i],
				    datagen_class_name(c), i);
			off += range_ents[i];
		}
		free(buf);
	}
}

TEST(ranges_agree_with_core_on_every_class_and_thread_count)
{
	static const unsigned int threads[] = { 1, 3, 8 };

	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct buddy_sizing *s = buddy_sizing_new(threads[t]);

		ASSERT_NE(NULL, s);
		EXPECT_EQ(threads[t], buddy_sizing_threads(s));
		check_classes(_metadata, s, buddy_sizing_ranges,
			      BUDDY_SIZING_ALL);
		buddy_sizing_free(s);
	}
}

TEST(a_codec_mask_computes_only_its_codecs)
{
	struct buddy_sizing *s = buddy_sizing_new(2);

	ASSERT_NE(NULL, s);
	check_classes(_metadata, s, buddy_sizing_ranges, 1u << 0);
	check_classes(_metadata, s, buddy_sizing_ranges, (1u << 1) | (1u << 3));
	buddy_sizing_free(s);
}

TEST(entries_give_core_codes_and_bits)
{
	uint64_t ents = 9000;
	uint8_t *codes = malloc(ents);
	uint16_t *bits = malloc(ents * sizeof(*bits));
	struct buddy_sizing *s = buddy_sizing_new(4);

	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, codes);
	ASSERT_NE(NULL, bits);
	for (int c = 0; c < DATAGEN_NR; c += CLASS_STEP) {
		uint8_t *buf = class_buffer(c, ents);

		ASSERT_NE(NULL, buf);
		for (unsigned int k = 0; k < BUDDY_SIZING_NC; k++) {
			const struct buddy_codec *rc = ref_codecs[k];

			memset(codes, 0xcc, ents);
			memset(bits, 0xcc, ents * sizeof(*bits));
			ASSERT_EQ(0, buddy_sizing_entries(s, buf,
					ents * BUDDY_ENTRY_BYTES, k, codes, bits));
			for (uint64_t e = 0; e < ents; e++) {
				const uint8_t *p = buf + e * BUDDY_ENTRY_BYTES;
				unsigned int want = buddy_entry_is_zero(p) ?
						    0 : rc->size(p);

				ASSERT_EQ(buddy_entry_classify(rc, p), codes[e])
					TH_LOG("%s %s entry %llu",
					       datagen_class_name(c), rc->name,
					       (unsigned long long)e);
				ASSERT_EQ(want, bits[e]);
			}
			/* either output may be left out */
			ASSERT_EQ(0, buddy_sizing_entries(s, buf,
					ents * BUDDY_ENTRY_BYTES, k, NULL, bits));
			ASSERT_EQ(0, buddy_sizing_entries(s, buf,
					ents * BUDDY_ENTRY_BYTES, k, codes, NULL));
		}
		free(buf);
	}
	free(codes);
	free(bits);
	buddy_sizing_free(s);
}

TEST(bad_arguments_are_refused_with_their_errno)
{
	struct buddy_sizing *s = buddy_sizing_new(2);
	uint8_t buf[4 * BUDDY_ENTRY_BYTES] = { 0 };
	uint64_t lens[2] = { BUDDY_ENTRY_BYTES, 2 * BUDDY_ENTRY_BYTES };
	uint64_t huge[2] = { UINT64_MAX - 127, 256 };
	uint64_t odd = 100;
	struct buddy_size_stat out[2];
	uint8_t code;

	ASSERT_NE(NULL, s);
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(NULL, buf, lens, 2, 1, out));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, buf, NULL, 2, 1, out));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, buf, lens, 2, 1, NULL));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, NULL, lens, 2, 1, out));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, buf, lens, 2, 0, out));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, buf, lens, 2, 1u << 4, out));
	EXPECT_EQ(-EINVAL, buddy_sizing_ranges(s, buf, &odd, 1, 1, out));
	EXPECT_EQ(-EOVERFLOW, buddy_sizing_ranges(s, buf, huge, 2, 1, out));
	/* nothing to size: no buffer needed */
	EXPECT_EQ(0, buddy_sizing_ranges(s, NULL, NULL, 0, 1, NULL));
	lens[0] = lens[1] = 0;
	EXPECT_EQ(0, buddy_sizing_ranges(s, NULL, lens, 2, 1, out));
	EXPECT_EQ(0, out[0].entries + out[1].entries);

	EXPECT_EQ(-EINVAL, buddy_sizing_entries(NULL, buf, 128, 0, &code, NULL));
	EXPECT_EQ(-EINVAL, buddy_sizing_entries(s, NULL, 128, 0, &code, NULL));
	EXPECT_EQ(-EINVAL, buddy_sizing_entries(s, buf, 100, 0, &code, NULL));
	EXPECT_EQ(-EINVAL, buddy_sizing_entries(s, buf, 128, 4, &code, NULL));
	EXPECT_EQ(0, buddy_sizing_entries(s, NULL, 0, 0, NULL, NULL));

	errno = 0;
	EXPECT_EQ(NULL, buddy_sizing_new(BUDDY_SIZING_MAX_THREADS + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0u, buddy_sizing_threads(NULL));
	EXPECT_EQ(NULL, buddy_sizing_codec_name(BUDDY_SIZING_NC));
	EXPECT_STREQ("bpc", buddy_sizing_codec_name(0));
	EXPECT_STREQ("fpc", buddy_sizing_codec_name(3));
	buddy_sizing_free(NULL);
	buddy_sizing_free(s);
}

TEST(zero_threads_means_one_per_allowed_cpu)
{
	struct buddy_sizing *s = buddy_sizing_new(0);
	cpu_set_t set;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	EXPECT_EQ((unsigned int)CPU_COUNT(&set), buddy_sizing_threads(s));
	buddy_sizing_free(s);
}

struct caller {
	struct buddy_sizing *s;
	const uint8_t *buf;
	uint64_t len;
	struct buddy_size_stat out;
	int ret;
};

static void *call_ranges(void *arg)
{
	struct caller *c = arg;

	for (int i = 0; i < 5 && !c->ret; i++)
		c->ret = buddy_sizing_ranges(c->s, c->buf, &c->len, 1,
					     BUDDY_SIZING_ALL, &c->out);
	return NULL;
}

TEST(concurrent_calls_on_one_context_wait_for_each_other)
{
	struct buddy_sizing *s = buddy_sizing_new(3);
	uint64_t ents = 20000;
	uint8_t *a = class_buffer(DATAGEN_RELU50, ents);
	uint8_t *b = class_buffer(DATAGEN_FLOAT32, ents);
	struct caller ca = { .s = s, .buf = a, .len = ents * BUDDY_ENTRY_BYTES };
	struct caller cb = { .s = s, .buf = b, .len = ents * BUDDY_ENTRY_BYTES };
	struct buddy_size_stat want;
	pthread_t t;

	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, pthread_create(&t, NULL, call_ranges, &ca));
	call_ranges(&cb);
	pthread_join(t, NULL);
	ASSERT_EQ(0, ca.ret);
	ASSERT_EQ(0, cb.ret);
	reference(a, ents, BUDDY_SIZING_ALL, &want);
	expect_same(_metadata, &want, &ca.out, "relu50", 0);
	reference(b, ents, BUDDY_SIZING_ALL, &want);
	expect_same(_metadata, &want, &cb.out, "float32", 0);
	free(a);
	free(b);
	buddy_sizing_free(s);
}

/* The built shared object: its exports, and the same answers. */
TEST(the_shared_object_exports_the_api_only_and_agrees)
{
	const char *path = getenv("CODECLIB_SO");
	struct buddy_sizing *(*new_fn)(unsigned int);
	void (*free_fn)(struct buddy_sizing *);
	unsigned int (*abi_fn)(void);
	struct buddy_sizing *s;
	ranges_fn fn;
	void *h;

	if (!path)
		SKIP(return, "CODECLIB_SO does not name the built library");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, h) TH_LOG("%s", dlerror());
	abi_fn = (unsigned int (*)(void))dlsym(h, "buddy_sizing_abi");
	new_fn = (struct buddy_sizing *(*)(unsigned int))
		 dlsym(h, "buddy_sizing_new");
	free_fn = (void (*)(struct buddy_sizing *))dlsym(h, "buddy_sizing_free");
	fn = (ranges_fn)dlsym(h, "buddy_sizing_ranges");
	ASSERT_NE(NULL, abi_fn);
	ASSERT_NE(NULL, new_fn);
	ASSERT_NE(NULL, free_fn);
	ASSERT_NE(NULL, fn);
	ASSERT_NE(NULL, dlsym(h, "buddy_sizing_entries"));
	EXPECT_EQ(BUDDY_SIZING_ABI, abi_fn());
	/* core stays inside: a program's own core is never interposed */
	EXPECT_EQ(NULL, dlsym(h, "buddy_codec_bpc"));
	EXPECT_EQ(NULL, dlsym(h, "buddy_entry_classify"));
	s = new_fn(4);
	ASSERT_NE(NULL, s);
	check_classes(_metadata, s, fn, BUDDY_SIZING_ALL);
	free_fn(s);
	dlclose(h);
}

TEST_HARNESS_MAIN
