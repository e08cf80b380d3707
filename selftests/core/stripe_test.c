// SPDX-License-Identifier: GPL-2.0
/*
 * The striping and metadata code (core/stripe.c) natively: layout, exact
 * sector and access counters, growth and shrink, re-striping between
 * targets and codecs, and concurrent writers on neighbouring stripes under
 * the kernel's locking rule (one lock per BUDDY_STRIPE_ENTRIES aligned
 * entries), which ThreadSanitizer checks in the tsan build.
 */
#include <pthread.h>
#include <stdlib.h>
#include <kselftest_harness.h>
#include "core/stripe.h"

#define NR	256	/* entries per test chunk */

static const unsigned int targets[] = { 128, 96, 64, 32, 8 };

struct chunk {
	u8 *dev, *bud;
	struct buddy_extent x;
};

static void chunk_init(struct chunk *c, unsigned int target,
		       const struct buddy_codec *codec)
{
	c->dev = malloc(buddy_extent_dev_bytes(NR, target));
	c->bud = malloc(buddy_extent_bud_bytes(NR, target) ?: 1);
	memset(c->dev, 0xee, buddy_extent_dev_bytes(NR, target));
	buddy_extent_init(&c->x, c->dev, c->bud, target, NR, codec);
	memset(c->x.meta, 0, DIV_ROUND_UP(NR, 2));
}

static void chunk_free(struct chunk *c)
{
	free(c->dev);
	free(c->bud);
}

static u32 rng(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* entries of every size class: zero, C8, C32, C64, C96-ish, random */
static void make_entry(u8 *e, unsigned int kind, u32 *s)
{
	unsigned int i;

	for (i = 0; i < 32; i++) {
		u32 w;

		switch (kind % 6) {
		case 0: w = 0; break;
		case 1: w = 0x12345678; break;
		case 2: w = i * 3 + (rng(s) & 1); break;
		case 3: w = i * 1000 + (rng(s) & 0xff); break;
		case 4: w = i * 100000 + (rng(s) & 0x3fff); break;
		default: w = rng(s); break;
		}
		put_unaligned_le32(w, e + 4 * i);
	}
}

TEST(layout)
{
	EXPECT_EQ(16384 * 64 + 8192, buddy_extent_dev_bytes(16384, 64));
	EXPECT_EQ(16384 * 64, buddy_extent_bud_bytes(16384, 64));
	EXPECT_EQ(0, buddy_extent_bud_bytes(100, 128));
	EXPECT_EQ(3 * 8 + 2, buddy_extent_dev_bytes(3, 8));
	/* a stripe covers whole metadata bytes */
	EXPECT_EQ(0, BUDDY_STRIPE_ENTRIES % 2);
	EXPECT_EQ(0, buddy_stored_bytes(128, BUDDY_CODE_ZERO));
	EXPECT_EQ(128, buddy_stored_bytes(128, BUDDY_CODE_C8));
	EXPECT_EQ(8, buddy_stored_bytes(8, BUDDY_CODE_C8));
	EXPECT_EQ(96, buddy_stored_bytes(32, BUDDY_CODE_C96));
}

TEST(metadata_nibbles)
{
	u8 meta[4] = {};
	unsigned int i;

	for (i = 0; i < 8; i++)
		buddy_meta_set(meta, i, (i * 5 + 3) & 0xf);
	for (i = 0; i < 8; i++)
		EXPECT_EQ((i * 5 + 3) & 0xf, buddy_meta_get(meta, i));
	EXPECT_EQ(0x83, meta[0]);	/* entry 0 in the low nibble */
	buddy_meta_set(meta, 1, 0);
	EXPECT_EQ(3, meta[0]);
}

/* Round trip of every size class at every target and codec. */
TEST(round_trip_all)
{
	unsigned int t, c, i;

	for (t = 0; t < ARRAY_SIZE(targets); t++) {
		for (c = 0; buddy_codecs[c]; c++) {
			struct buddy_io_acct acct = {};
			struct chunk ch;
			u32 s = 1 + t * 7 + c;
			u8 *want = malloc(NR * 128), got[128];

			chunk_init(&ch, targets[t], buddy_codecs[c]);
			for (i = 0; i < NR; i++) {
				make_entry(want + i * 128, i, &s);
				buddy_stripe_write(&ch.x, i, want + i * 128,
						   &acct);
			}
			for (i = 0; i < NR; i++) {
				ASSERT_EQ(0, buddy_stripe_read(&ch.x, i, got,
							       &acct));
				ASSERT_EQ(0, memcmp(got, want + i * 128, 128))
					TH_LOG("t=%u %s entry %u", targets[t],
					       buddy_codecs[c]->name, i);
				ASSERT_EQ(buddy_entry_classify(buddy_codecs[c],
							       want + i * 128),
					  buddy_meta_get(ch.x.meta, i));
			}
			EXPECT_EQ(NR, acct.c.entry_writes);
			EXPECT_EQ(NR, acct.c.entry_reads);
			chunk_free(&ch);
			free(want);
		}
	}
}

/*
 * Exact counters: one entry grows from ZERO to C8 to RAW and shrinks back,
 * at 2x: sectors 0, 1, 2+2, 1; one overflow; buddy accesses only for RAW.
 */
TEST(grow_and_shrink_counters)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	struct buddy_io_acct a = {};
	u8 zero[128] = {}, c8[128], raw[128], got[128];
	struct chunk ch;
	u32 s = 99;
	unsigned int i;

	for (i = 0; i < 32; i++) {
		put_unaligned_le32(0x12345678, c8 + 4 * i);
		put_unaligned_le32(rng(&s) | 0x01010101, raw + 4 * i);
	}
	chunk_init(&ch, BUDDY_TARGET_2X, bpc);

	buddy_stripe_write(&ch.x, 5, zero, &a);
	EXPECT_EQ(1, a.c.entry_writes);
	EXPECT_EQ(0, a.c.device_sectors_written);
	EXPECT_EQ(BUDDY_CODE_ZERO, buddy_meta_get(ch.x.meta, 5));

	buddy_stripe_write(&ch.x, 5, c8, &a);
	EXPECT_EQ(1, a.c.device_sectors_written);
	EXPECT_EQ(0, a.c.buddy_sectors_written);
	EXPECT_EQ(0, a.c.overflows);
	EXPECT_EQ(BUDDY_CODE_C8, buddy_meta_get(ch.x.meta, 5));

	buddy_stripe_write(&ch.x, 5, raw, &a);		/* C8 -> RAW: spills */
	EXPECT_EQ(3, a.c.device_sectors_written);
	EXPECT_EQ(2, a.c.buddy_sectors_written);
	EXPECT_EQ(1, a.c.buddy_accesses);
	EXPECT_EQ(1, a.c.overflows);

	ASSERT_EQ(0, buddy_stripe_read(&ch.x, 5, got, &a));
	EXPECT_EQ(0, memcmp(got, raw, 128));
	EXPECT_EQ(2, a.c.device_sectors_read);
	EXPECT_EQ(2, a.c.buddy_sectors_read);
	EXPECT_EQ(2, a.c.buddy_accesses);

	buddy_stripe_write(&ch.x, 5, raw, &a);		/* RAW -> RAW: no new overflow */
	EXPECT_EQ(1, a.c.overflows);
	buddy_stripe_write(&ch.x, 5, c8, &a);		/* shrink */
	EXPECT_EQ(1, a.c.overflows);
	EXPECT_EQ(3, a.c.buddy_accesses);
	ASSERT_EQ(0, buddy_stripe_read(&ch.x, 5, got, &a));
	EXPECT_EQ(0, memcmp(got, c8, 128));
	EXPECT_EQ(3, a.c.buddy_accesses);		/* C8 read stays on device */

	/* histogram: ZERO -1 (first write from fresh ZERO counted +1 -1) */
	EXPECT_EQ(0, a.codes[BUDDY_CODE_ZERO] + 1);
	EXPECT_EQ(1, a.codes[BUDDY_CODE_C8]);
	EXPECT_EQ(0, a.codes[BUDDY_CODE_RAW]);
	EXPECT_EQ(5, a.c.entry_writes);
	EXPECT_EQ(2, a.c.entry_reads);
	chunk_free(&ch);
}

/* 16x: the 8-byte device part counts one sector; C32 spills 24 bytes. */
TEST(sixteen_x_sectors)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	struct buddy_io_acct a = {};
	u8 e[128], got[128];
	struct chunk ch;
	unsigned int i;

	chunk_init(&ch, BUDDY_TARGET_16X, bpc);
	for (i = 0; i < 32; i++)
		put_unaligned_le32(i * 100 + (i * i * 7) % 13, e + 4 * i);
	ASSERT_EQ(BUDDY_CODE_C32, buddy_entry_classify(bpc, e));
	buddy_stripe_write(&ch.x, 0, e, &a);
	EXPECT_EQ(1, a.c.device_sectors_written);
	EXPECT_EQ(1, a.c.buddy_sectors_written);
	EXPECT_EQ(1, a.c.overflows);
	ASSERT_EQ(0, buddy_stripe_read(&ch.x, 0, got, &a));
	EXPECT_EQ(0, memcmp(got, e, 128));
	chunk_free(&ch);
}

/* 1x classifies by the size-only path but stores plain: 4 sectors. */
TEST(one_x_plain)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	struct buddy_io_acct a = {};
	u8 e[128], got[128];
	struct chunk ch;
	unsigned int i;

	chunk_init(&ch, BUDDY_TARGET_1X, bpc);
	for (i = 0; i < 32; i++)
		put_unaligned_le32(0x12345678, e + 4 * i);
	buddy_stripe_write(&ch.x, 3, e, &a);
	EXPECT_EQ(BUDDY_CODE_C8, buddy_meta_get(ch.x.meta, 3));
	EXPECT_EQ(0, memcmp(ch.dev + 3 * 128, e, 128));
	EXPECT_EQ(4, a.c.device_sectors_written);
	EXPECT_EQ(0, a.c.buddy_accesses);
	ASSERT_EQ(0, buddy_stripe_read(&ch.x, 3, got, &a));
	EXPECT_EQ(0, memcmp(got, e, 128));
	chunk_free(&ch);
}

/*
 * Entries @first..@first+31 of @x written from @model, then invalid code
 * @code at @first + @p: a read from a random entry at or before it stops
 * there with -EIO, the entries before it read and counted (its counters
 * returned).
 */
static struct buddy_io_acct read_to_bad_code(struct __test_metadata *_metadata,
					     const struct buddy_extent *x,
					     unsigned int first, unsigned int p,
					     unsigned int code, const u8 *model,
					     u8 *got, u32 *s)
{
	struct buddy_io_acct r = {};
	unsigned int a = p ? rng(s) % p : 0;

	EXPECT_EQ(0, buddy_stripe_rw(x, first, 0, (u8 *)model + first * 128,
				     32 * 128, true, &r));
	buddy_meta_set(x->meta, first + p, code);
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EIO, buddy_stripe_rw(x, first + a, 0, got, (32 - a) * 128,
					false, &r))
		TH_LOG("code %u at %u, from %u", code, p, a);
	EXPECT_EQ(p - a, r.c.entry_reads);
	EXPECT_EQ(0, memcmp(got, model + (first + a) * 128, (p - a) * 128));
	return r;
}

/*
 * 1x reads find runs of zero and of stored entries a metadata word at a
 * time: every layout of zero entries a stripe can have at its edges, at
 * the 16-entry word boundary and at random, read from every start, gives
 * the data and the exact sector counts; an invalid code (each of 6..15)
 * at any entry stops the read there with -EIO, what came before done.
 */
TEST(one_x_runs)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	u8 *model = malloc(NR * 128), *got = malloc(NR * 128);
	unsigned int round, i, a, b, code, p;
	struct chunk ch;
	u32 s = 99;

	chunk_init(&ch, BUDDY_TARGET_1X, bpc);
	for (round = 0; round < 200; round++) {
		struct buddy_io_acct w = {};
		u64 zeros = rng(&s) | (u64)rng(&s) << 32;

		/* structured layouts first: one zero, one stored entry */
		if (round < 64)
			zeros = round < 32 ? 1ULL << round :
				~(1ULL << (round - 32));
		else if (round < 70)
			zeros = (u64)0xffff << (round - 64) * 8;
		for (i = 0; i < 64; i++) {
			bool z = zeros >> i & 1;

			/* entries 32..95: two stripes, the first offset */
			make_entry(model + (32 + i) * 128, z ? 0 : 1 + i % 5,
				   &s);
			if (!z)
				model[(32 + i) * 128] |= 1;
		}
		ASSERT_EQ(0, buddy_stripe_rw(&ch.x, 32, 0, model + 32 * 128,
					     64 * 128, true, &w));
		for (a = 32; a < 96; a += 1 + round % 3) {
			struct buddy_io_acct r = {};
			unsigned int stored = 0;

			b = a + 1 + rng(&s) % (96 - a);
			for (i = a; i < b; i++)
				stored += !(zeros >> (i - 32) & 1);
			ASSERT_EQ(0, buddy_stripe_rw(&ch.x, a, 0, got,
						     (b - a) * 128, false, &r));
			ASSERT_EQ(0, memcmp(got, model + a * 128,
					    (b - a) * 128))
				TH_LOG("zeros %llx: read %u..%u",
				       (unsigned long long)zeros, a, b);
			EXPECT_EQ(b - a, r.c.entry_reads);
			EXPECT_EQ(4 * stored, r.c.device_sectors_read);
		}
	}
	/* 32 stored entries, then one bad code at a time */
	for (i = 0; i < 32; i++)
		make_entry(model + (64 + i) * 128, 1 + i % 5, &s);
	for (code = 6; code < 16; code++)
		for (p = 0; p < 32; p++)
			read_to_bad_code(_metadata, &ch.x, 64, p, code, model,
					 got, &s);
	chunk_free(&ch);
	free(model);
	free(got);
}

TEST(partial_update)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	struct buddy_io_acct a = {};
	u8 want[128] = {}, got[128], patch[50];
	struct chunk ch;
	unsigned int i;

	chunk_init(&ch, BUDDY_TARGET_4X, bpc);
	for (i = 0; i < sizeof(patch); i++)
		patch[i] = i * 37 + 1;
	ASSERT_EQ(0, buddy_stripe_update(&ch.x, 7, patch, 61, 50, &a));
	memcpy(want + 61, patch, 50);
	EXPECT_EQ(1, a.c.entry_reads);
	EXPECT_EQ(1, a.c.entry_writes);
	ASSERT_EQ(0, buddy_stripe_read(&ch.x, 7, got, &a));
	EXPECT_EQ(0, memcmp(got, want, 128));
	/* corrupt metadata is an error, never a wild read */
	buddy_meta_set(ch.x.meta, 7, 9);
	EXPECT_EQ(-EIO, buddy_stripe_read(&ch.x, 7, got, &a));
	EXPECT_EQ(-EIO, buddy_stripe_update(&ch.x, 7, patch, 0, 4, &a));
	chunk_free(&ch);
}

/* Re-striping between every pair of targets and codecs keeps the data. */
TEST(move_between_targets)
{
	unsigned int t1, t2, i;

	for (t1 = 0; t1 < ARRAY_SIZE(targets); t1++) {
		for (t2 = 0; t2 < ARRAY_SIZE(targets); t2++) {
			const struct buddy_codec *c1 = buddy_codecs[t1 % 5];
			const struct buddy_codec *c2 = buddy_codecs[(t2 + 2) % 5];
			struct buddy_io_acct a = {};
			s64 delta[BUDDY_CODE_NR] = {};
			struct chunk from, to;
			u8 want[128], got[128];
			u32 s = 7 + t1 * 5 + t2;

			chunk_init(&from, targets[t1], c1);
			chunk_init(&to, targets[t2], c2);
			for (i = 0; i < NR; i++) {
				make_entry(want, i, &s);
				buddy_stripe_write(&from.x, i, want, &a);
			}
			for (i = 0; i < NR; i++)
				ASSERT_EQ(0, buddy_stripe_move(&from.x, i,
							       &to.x, i, delta));
			s = 7 + t1 * 5 + t2;
			for (i = 0; i < NR; i++) {
				make_entry(want, i, &s);
				ASSERT_EQ(0, buddy_stripe_read(&to.x, i, got,
							       &a));
				ASSERT_EQ(0, memcmp(got, want, 128));
			}
			chunk_free(&from);
			chunk_free(&to);
		}
	}
}

/*
 * buddy_extent_move() is all or nothing for the histogram: a corrupt code
 * at entry k (after entries 0..k-1 moved) leaves the delta untouched; a
 * whole move's delta is the change between the two extents' histograms.
 */
TEST(extent_move_failure_keeps_codes)
{
	const struct buddy_codec *codec = buddy_codecs[0];
	s64 delta[BUDDY_CODE_SLOTS] = {}, hf[BUDDY_CODE_SLOTS] = {};
	s64 ht[BUDDY_CODE_SLOTS] = {};
	struct buddy_io_acct a = {};
	struct chunk from, to;
	unsigned int i, k = NR / 2;
	u8 e[128];
	u32 s = 99;

	chunk_init(&from, 64, codec);
	chunk_init(&to, 128, codec);
	for (i = 0; i < NR; i++) {
		make_entry(e, i, &s);
		buddy_stripe_write(&from.x, i, e, &a);
	}
	buddy_meta_set(from.x.meta, k, 0xf);	/* corrupt entry k */
	delta[3] = 5;
	ASSERT_EQ(-EIO, buddy_extent_move(&from.x, &to.x, 0, NR, delta));
	EXPECT_EQ(5, delta[3]);
	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		if (i != 3)
			EXPECT_EQ(0, delta[i]);
	/* the entries before k did move: the failure is past them */
	ASSERT_EQ(0, buddy_extent_move(&from.x, &to.x, 0, k, delta));
	buddy_meta_set(from.x.meta, k, BUDDY_CODE_RAW);
	make_entry(e, k, &s);
	buddy_stripe_write(&from.x, k, e, &a);
	memset(delta, 0, sizeof(delta));
	memset(to.x.meta, 0, DIV_ROUND_UP(NR, 2));
	ASSERT_EQ(0, buddy_extent_move(&from.x, &to.x, 0, NR, delta));
	buddy_extent_codes(&from.x, hf);
	buddy_extent_codes(&to.x, ht);
	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		EXPECT_EQ(ht[i] - hf[i], delta[i]) TH_LOG("code %u", i);
	chunk_free(&from);
	chunk_free(&to);
}

/* Concurrent writers on adjacent stripes, each under its stripe's lock. */
#define THREADS		4
#define STRIPES		(NR / BUDDY_STRIPE_ENTRIES)

static struct chunk shared;
static pthread_mutex_t stripe_lock[STRIPES];

struct worker {
	unsigned int id;
	int errors;
	struct buddy_io_acct acct;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	u32 s = 1234 + w->id;
	u8 e[128], got[128];
	unsigned int n;

	for (n = 0; n < 20000; n++) {
		/* thread k owns entries with i % THREADS == k */
		unsigned int i = (rng(&s) % (NR / THREADS)) * THREADS + w->id;
		pthread_mutex_t *l = &stripe_lock[i / BUDDY_STRIPE_ENTRIES];

		make_entry(e, rng(&s), &s);
		e[0] = i;
		pthread_mutex_lock(l);
		buddy_stripe_write(&shared.x, i, e, &w->acct);
		pthread_mutex_unlock(l);
		pthread_mutex_lock(l);
		if (buddy_stripe_read(&shared.x, i, got, &w->acct) ||
		    memcmp(got, e, 128))
			w->errors++;
		pthread_mutex_unlock(l);
	}
	return NULL;
}

TEST(threads_share_metadata_bytes)
{
	struct worker w[THREADS] = {};
	pthread_t th[THREADS];
	unsigned int i;
	u64 writes = 0;

	chunk_init(&shared, BUDDY_TARGET_2X, buddy_codec_by_name("bpc"));
	for (i = 0; i < STRIPES; i++)
		pthread_mutex_init(&stripe_lock[i], NULL);
	for (i = 0; i < THREADS; i++) {
		w[i].id = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, work, &w[i]));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].errors);
		writes += w[i].acct.c.entry_writes;
	}
	EXPECT_EQ(THREADS * 20000, writes);
	chunk_free(&shared);
}

/* Sectors of @bytes as the counters see them. */
static unsigned int sectors(unsigned int bytes)
{
	return DIV_ROUND_UP(bytes, BUDDY_SECTOR_SIZE);
}

/* What one access to an entry of @code counts, added to @c. */
static void model_count(struct buddy_counters *c, unsigned int target,
			unsigned int code, bool write)
{
	unsigned int stored = buddy_stored_bytes(target, code);
	unsigned int dev = stored < target ? stored : target;

	if (write) {
		c->entry_writes++;
		c->device_sectors_written += sectors(dev);
		c->buddy_sectors_written += sectors(stored - dev);
	} else {
		c->entry_reads++;
		c->device_sectors_read += sectors(dev);
		c->buddy_sectors_read += sectors(stored - dev);
	}
	if (stored > dev)
		c->buddy_accesses++;
}

/*
 * buddy_stripe_rw() over ranges of any offset and length, across stripe
 * boundaries, against a plain copy of the bytes: the data, every counter
 * and the histogram match an entry-by-entry model.
 */
TEST(stripe_rw_ranges)
{
	unsigned int t, c, round;

	for (t = 0; t < ARRAY_SIZE(targets); t++) {
		for (c = 0; buddy_codecs[c]; c++) {
			const struct buddy_codec *codec = buddy_codecs[c];
			struct buddy_io_acct acct = {};
			struct buddy_counters want = {};
			s64 hist[BUDDY_CODE_SLOTS] = { [0] = NR };
			u8 *model = calloc(NR, 128), *buf = malloc(NR * 128);
			u32 s = 77 + t * 13 + c;
			unsigned int i, k, code;
			struct chunk ch;

			chunk_init(&ch, targets[t], codec);
			for (round = 0; round < 400; round++) {
				u32 pos = rng(&s) % (NR * 128);
				u32 len = 1 + rng(&s) % (round & 1 ? 5000 :
							  300);
				bool write = rng(&s) % 3 != 0;
				unsigned int first = pos / 128;
				unsigned int last;

				if (len > NR * 128 - pos)
					len = NR * 128 - pos;
				last = (pos + len - 1) / 128;
				if (write) {
					for (k = 0; k < len; k += 128)
						make_entry(buf + k, rng(&s),
							   &s);
				}
				/* the model, entry by entry, before the call */
				for (i = first; i <= last; i++) {
					bool part = i * 128 < pos ||
						    (i + 1) * 128 > pos + len;

					code = buddy_meta_get(ch.x.meta, i);
					if (!write || part)
						model_count(&want, targets[t],
							    code, false);
				}
				ASSERT_EQ(0, buddy_stripe_rw(&ch.x, first,
							     pos % 128, buf,
							     len, write,
							     &acct));
				if (write)
					memcpy(model + pos, buf, len);
				else
					ASSERT_EQ(0, memcmp(buf, model + pos,
							    len))
						TH_LOG("t=%u %s read %u+%u",
						       targets[t], codec->name,
						       pos, len);
				for (i = first; write && i <= last; i++) {
					code = buddy_meta_get(ch.x.meta, i);
					ASSERT_EQ(buddy_entry_classify(codec,
							model + i * 128), code);
					model_count(&want, targets[t], code,
						    true);
				}
			}
			/* overflows are checked by grow_and_shrink_counters */
			acct.c.overflows = 0;
			EXPECT_EQ(0, memcmp(&want, &acct.c, sizeof(want)))
				TH_LOG("t=%u %s: counters", targets[t],
				       codec->name);
			for (code = 0; code < BUDDY_CODE_NR; code++)
				hist[code] += acct.codes[code];
			for (i = 0; i < NR; i++)
				hist[buddy_meta_get(ch.x.meta, i)]--;
			for (code = 0; code < BUDDY_CODE_SLOTS; code++)
				EXPECT_EQ(0, hist[code]);
			ASSERT_EQ(0, buddy_stripe_rw(&ch.x, 0, 0, buf, NR * 128,
						     false, &acct));
			EXPECT_EQ(0, memcmp(buf, model, NR * 128));
			chunk_free(&ch);
			free(model);
			free(buf);
		}
	}
}

/*
 * Reads at a compressed target copy runs of RAW entries (split between the
 * device and the buddy slot) apart from the codec, found a metadata word
 * at a time: at every compressed target, layouts of RAW, zero and
 * compressed entries (all RAW, one other entry at each place, random
 * mixes) read over byte ranges with partial first and last entries across
 * a stripe boundary give the bytes and every counter of the entry-by-entry
 * model; an invalid code inside a RAW run stops the read there with -EIO,
 * what came before read and counted.
 */
TEST(raw_runs_split)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	u8 *model = malloc(NR * 128), *got = malloc(NR * 128);
	unsigned int t, round, i, a, b, p;

	for (t = 1; t < ARRAY_SIZE(targets); t++) {
		struct chunk ch;
		u32 s = 31 + t;

		chunk_init(&ch, targets[t], bpc);
		for (round = 0; round < 150; round++) {
			struct buddy_io_acct w = {};

			/* entries 16..79: across the stripe boundary at 32 */
			for (i = 0; i < 64; i++) {
				unsigned int kind = 5;	/* random: RAW */

				if (round < 64 && round != i)
					kind = 5;
				else if (round < 64)
					kind = round % 5;	/* one other */
				else if (round >= 70)
					kind = rng(&s) % 3 ? 5 : rng(&s) % 5;
				make_entry(model + (16 + i) * 128, kind, &s);
			}
			ASSERT_EQ(0, buddy_stripe_rw(&ch.x, 16, 0,
						     model + 16 * 128,
						     64 * 128, true, &w));
			for (i = 0; i < 64 && round < 64; i++)
				ASSERT_EQ(i != round, buddy_meta_get(ch.x.meta,
						16 + i) == BUDDY_CODE_RAW)
					TH_LOG("t=%u entry %u", targets[t], i);
			for (a = 16 * 128; a < 80 * 128;
			     a += 1 + rng(&s) % 700) {
				struct buddy_io_acct r = {};
				struct buddy_counters want = {};

				b = a + 1 + rng(&s) % (80 * 128 - a);
				for (i = a / 128; i <= (b - 1) / 128; i++)
					model_count(&want, targets[t],
						    buddy_meta_get(ch.x.meta,
								   i), false);
				memset(got, 0xa5, b - a);
				ASSERT_EQ(0, buddy_stripe_rw(&ch.x, a / 128,
							     a % 128, got,
							     b - a, false,
							     &r));
				ASSERT_EQ(0, memcmp(got, model + a, b - a))
					TH_LOG("t=%u round %u: read %u..%u",
					       targets[t], round, a, b);
				ASSERT_EQ(0, memcmp(&want, &r.c, sizeof(want)))
					TH_LOG("t=%u round %u: counters %u..%u",
					       targets[t], round, a, b);
			}
		}
		/* a run of RAW entries, then one bad code at a time */
		for (i = 0; i < 32; i++)
			make_entry(model + (32 + i) * 128, 5, &s);
		for (p = 0; p < 32; p++) {
			struct buddy_io_acct r;

			r = read_to_bad_code(_metadata, &ch.x, 32, p,
					     6 + p % 10, model, got, &s);
			/* every entry read was RAW */
			EXPECT_EQ(r.c.entry_reads, r.c.buddy_accesses);
			EXPECT_EQ(r.c.entry_reads * sectors(targets[t]),
				  r.c.device_sectors_read);
			EXPECT_EQ(r.c.entry_reads * sectors(128 - targets[t]),
				  r.c.buddy_sectors_read);
		}
		chunk_free(&ch);
	}
	free(model);
	free(got);
}

/*
 * Corrupt metadata in the middle of a range: -EIO, and what came before it
 * is done and counted, a write's codes included.
 */
TEST(stripe_rw_stops_at_corrupt_entry)
{
	unsigned int t;

	for (t = 0; t < ARRAY_SIZE(targets); t++) {
		const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
		struct buddy_io_acct a = {};
		u8 buf[40 * 128], got[40 * 128];
		struct chunk ch;
		unsigned int i, zeros;
		u32 s = 5 + t;

		chunk_init(&ch, targets[t], bpc);
		for (i = 0; i < 40; i++)
			make_entry(buf + i * 128, i + 1, &s);
		ASSERT_EQ(0, buddy_stripe_rw(&ch.x, 20, 0, buf, sizeof(buf),
					     true, &a));
		buddy_meta_set(ch.x.meta, 20 + 35, 11);	/* second stripe */
		memset(&a, 0, sizeof(a));
		/* read from the middle of entry 20 */
		EXPECT_EQ(-EIO, buddy_stripe_rw(&ch.x, 20, 64, got,
						sizeof(got) - 64, false, &a));
		EXPECT_EQ(35, a.c.entry_reads);
		EXPECT_EQ(0, memcmp(got, buf + 64, 35 * 128 - 64));
		/* a write whose last entry is partial and corrupt */
		for (i = 20, zeros = 0; i < 55; i++)
			zeros += !buddy_meta_get(ch.x.meta, i);
		memset(&a, 0, sizeof(a));
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(-EIO, buddy_stripe_rw(&ch.x, 20, 0, buf,
						36 * 128 - 1, true, &a));
		EXPECT_EQ(35, a.c.entry_writes);
		EXPECT_EQ(35 - zeros, a.codes[BUDDY_CODE_ZERO]);
		for (i = 20; i < 55; i++)
			EXPECT_EQ(BUDDY_CODE_ZERO, buddy_meta_get(ch.x.meta, i));
		EXPECT_EQ(11, buddy_meta_get(ch.x.meta, 55));
		chunk_free(&ch);
	}
}

/*
 * Reads decode the compressed entries stored whole in device memory many
 * at a time (buddy_entries_decode()): at each target where some are, a
 * stripe of them with the stream of entry p made malformed (all ones:
 * more literals than the stream holds) stops a read from any entry before
 * it at p with -EIO, the entries before it read and counted.
 */
TEST(stripe_read_stops_at_malformed_stream)
{
	const struct buddy_codec *bpc = buddy_codec_by_name("bpc");
	u8 *model = malloc(NR * 128), *got = malloc(NR * 128);
	unsigned int t, i, p, code, tried = 0;

	for (t = 1; t < ARRAY_SIZE(targets); t++) {
		struct chunk ch;
		u32 s = 77 + t;

		chunk_init(&ch, targets[t], bpc);
		for (p = 0; p < 32; p++) {
			struct buddy_io_acct r = {};
			unsigned int a = p ? rng(&s) % p : 0;

			/* entries 32..63, codes C32..C96 */
			for (i = 0; i < 32; i++)
				make_entry(model + (32 + i) * 128, 2 + i % 3,
					   &s);
			ASSERT_EQ(0, buddy_stripe_rw(&ch.x, 32, 0,
						     model + 32 * 128,
						     32 * 128, true, &r));
			code = buddy_meta_get(ch.x.meta, 32 + p);
			if (code == BUDDY_CODE_ZERO || code == BUDDY_CODE_RAW ||
			    buddy_code_bytes(code) > targets[t])
				continue;
			memset(ch.dev + (size_t)(32 + p) * targets[t], 0xff,
			       buddy_code_bytes(code));
			memset(&r, 0, sizeof(r));
			EXPECT_EQ(-EIO, buddy_stripe_rw(&ch.x, 32 + a, 0, got,
							(32 - a) * 128, false,
							&r))
				TH_LOG("t=%u: entry %u, from %u", targets[t],
				       p, a);
			EXPECT_EQ(p - a, r.c.entry_reads);
			EXPECT_EQ(0, memcmp(got, model + (32 + a) * 128,
					    (p - a) * 128));
			tried++;
		}
		chunk_free(&ch);
	}
	EXPECT_LT(32, tried);
	free(model);
	free(got);
}

TEST_HARNESS_MAIN
