// SPDX-License-Identifier: GPL-2.0
/*
 * core/layout.h: the bytes an allocation needs and the admission rules the
 * module (and the userspace device) apply under their lock.
 */
#include <kselftest_harness.h>
#include "core/layout.h"

static const unsigned int targets[] = { 128, 96, 64, 32, 8 };

/* The whole layout is the sum of its chunks, each in 4 KiB granules. */
TEST(layout_is_sum_of_chunks)
{
	static const u64 entries[] = { 1, 31, 32, 33, 16384, 16385, 100000 };
	static const u64 per_chunk[] = { 32, 512, 16384 };
	unsigned int t, e, c;

	for (t = 0; t < ARRAY_SIZE(targets); t++)
		for (e = 0; e < ARRAY_SIZE(entries); e++)
			for (c = 0; c < ARRAY_SIZE(per_chunk); c++) {
				struct buddy_layout l;
				u64 dev = 0, bud = 0, first, d, b;

				buddy_layout_init(&l, entries[e], per_chunk[c],
						  targets[t]);
				for (first = 0; first < entries[e];
				     first += per_chunk[c]) {
					u64 n = entries[e] - first;

					if (n > per_chunk[c])
						n = per_chunk[c];
					buddy_chunk_need(n, targets[t], &d, &b);
					EXPECT_EQ(0, d % BUDDY_GRANULE_BYTES);
					EXPECT_EQ(0, b % BUDDY_GRANULE_BYTES);
					dev += d;
					bud += b;
				}
				EXPECT_EQ(dev, l.dev_bytes);
				EXPECT_EQ(bud, l.bud_bytes);
				EXPECT_EQ((entries[e] + per_chunk[c] - 1) /
					  per_chunk[c], l.nr_chunks);
			}
}

/* 2 MiB chunk at 1x: 2 MiB of slots + 8 KiB of codes, as the docs say. */
TEST(paper_chunk)
{
	u64 d, b;

	buddy_chunk_need(16384, 128, &d, &b);
	EXPECT_EQ(2097152 + 8192, d);
	EXPECT_EQ(0, b);
	buddy_chunk_need(16384, 64, &d, &b);
	EXPECT_EQ(1048576 + 8192, d);
	EXPECT_EQ(1048576, b);
}

TEST(reservation_counters)
{
	struct buddy_space s = { .dev_total = 100, .bud_total = 50 };

	EXPECT_TRUE(buddy_space_could_fit(&s, 100, 50));
	EXPECT_FALSE(buddy_space_could_fit(&s, 101, 0));
	EXPECT_EQ(0, buddy_space_reserve(&s, 60, 10));
	/* all or nothing: the device part fits, the carve-out part not */
	EXPECT_EQ(-ENOSPC, buddy_space_reserve(&s, 40, 41));
	EXPECT_EQ(60, s.dev_resv);
	EXPECT_EQ(10, s.bud_resv);
	EXPECT_EQ(0, buddy_space_reserve(&s, 40, 40));
	EXPECT_EQ(-ENOSPC, buddy_space_reserve(&s, 1, 0));
	buddy_space_release(&s, 100, 50);
	EXPECT_EQ(0, s.dev_resv);
	EXPECT_EQ(0, s.bud_resv);
}

TEST(quota)
{
	EXPECT_TRUE(buddy_quota_allows(1000, 1000000, 0));	/* no limit */
	EXPECT_TRUE(buddy_quota_allows(0, 8, 8));
	EXPECT_TRUE(buddy_quota_allows(4, 4, 8));
	EXPECT_FALSE(buddy_quota_allows(4, 5, 8));
	/* held over a lowered limit: nothing more, no wrap-around */
	EXPECT_FALSE(buddy_quota_allows(10, 1, 8));
	EXPECT_FALSE(buddy_quota_allows(1, ~0ULL, 8));
}

TEST_HARNESS_MAIN
