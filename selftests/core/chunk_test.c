// SPDX-License-Identifier: GPL-2.0
/*
 * chunk_test - the shared chunk code (core/chunk.c) both backends run:
 * next-fit extent search, the ABI checks, and re-targeting with its
 * rollback, driven through struct buddy_chunk_ops with pools that fail
 * on demand and a "writer" that changes a moved chunk before the failure.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "chunk.h"
#include "datagen.h"

#define NR_CHUNKS	4
#define CHUNK_ENTRIES	64

struct mock {
	struct buddy_chunk_ext ch[NR_CHUNKS];
	int allocs_left;	/* pool_alloc calls that succeed; -1: all */
	long live;		/* extents handed out and not given back */
	int locks;
	s64 codes[BUDDY_CODE_SLOTS];
	void (*on_alloc)(struct mock *m);
};

static struct buddy_chunk_ext *m_chunk(void *ctx, unsigned int c)
{
	return &((struct mock *)ctx)->ch[c];
}

static void *m_alloc(void *ctx, enum buddy_pool_id id, u64 bytes,
		     unsigned long *cursor)
{
	struct mock *m = ctx;

	if (m->on_alloc)
		m->on_alloc(m);
	if (!m->allocs_left)
		return NULL;
	if (m->allocs_left > 0)
		m->allocs_left--;
	m->live++;
	return calloc(1, bytes);
}

static void m_free(void *ctx, enum buddy_pool_id id, void *addr, u64 bytes)
{
	if (!addr || !bytes)
		return;
	((struct mock *)ctx)->live--;
	free(addr);
}

static void m_lock(void *ctx, unsigned int c)
{
	((struct mock *)ctx)->locks++;
}

static void m_unlock(void *ctx, unsigned int c)
{
	((struct mock *)ctx)->locks--;
}

static int m_check(void *ctx)
{
	return 0;
}

static void m_codes(void *ctx, const s64 *d)
{
	unsigned int i;

	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		((struct mock *)ctx)->codes[i] += d[i];
}

static void m_warn(void *ctx, unsigned int c, int err, bool restore)
{
}

static const struct buddy_chunk_ops ops = {
	m_chunk, m_alloc, m_free, m_lock, m_unlock, m_check, m_codes, m_warn,
};

static u8 data[NR_CHUNKS * CHUNK_ENTRIES * 128];

/* Reserve @m's chunks at @target and fill them with data[]. */
static void fill(struct mock *m, unsigned int target)
{
	struct buddy_io_acct acct;
	unsigned int c, i;

	memset(m, 0, sizeof(*m));
	m->allocs_left = -1;
	datagen_fill(DATAGEN_MIXED, 3, data, sizeof(data));
	buddy_chunks_reserve(&ops, m, NR_CHUNKS, NR_CHUNKS * CHUNK_ENTRIES,
			     CHUNK_ENTRIES, target, buddy_codec_by_id(1));
	memset(&acct, 0, sizeof(acct));
	for (c = 0; c < NR_CHUNKS; c++)
		for (i = 0; i < CHUNK_ENTRIES; i++)
			buddy_stripe_write(&m->ch[c].x, i,
				data + (c * CHUNK_ENTRIES + i) * 128, &acct);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		m->codes[i] = acct.codes[i];
	/* the writes' deltas start from every entry ZERO */
	m->codes[BUDDY_CODE_ZERO] += NR_CHUNKS * CHUNK_ENTRIES;
}

/* Every entry reads back as data[]; the histogram matches the metadata. */
static bool intact(struct mock *m)
{
	s64 hist[BUDDY_CODE_SLOTS] = { 0 };
	struct buddy_io_acct acct;
	u8 e[128];
	unsigned int c, i;

	memset(&acct, 0, sizeof(acct));
	for (c = 0; c < NR_CHUNKS; c++) {
		buddy_extent_codes(&m->ch[c].x, hist);
		for (i = 0; i < CHUNK_ENTRIES; i++)
			if (buddy_stripe_read(&m->ch[c].x, i, e, &acct) ||
			    memcmp(e, data + (c * CHUNK_ENTRIES + i) * 128, 128))
				return false;
	}
	/* m->codes only ever holds deltas that sum to the entries */
	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		if (hist[i] != m->codes[i])
			return false;
	return true;
}

TEST(next_fit)
{
	unsigned long map[2] = { 0 }, cur = 0;

	EXPECT_EQ(0, buddy_next_fit(map, 100, 0, 10, &cur));
	EXPECT_EQ(10, cur);
	bitmap_set(map, 0, 10);
	EXPECT_EQ(10, buddy_next_fit(map, 100, 0, 10, &cur));
	bitmap_set(map, 10, 10);
	/* a run crossing the word boundary */
	bitmap_set(map, 20, 40);
	EXPECT_EQ(60, buddy_next_fit(map, 100, 0, 10, &cur));
	bitmap_set(map, 60, 10);
	/* nothing of 31 after the cursor or before it: a miss */
	EXPECT_EQ(100, buddy_next_fit(map, 100, 0, 31, &cur));
	EXPECT_EQ(70, cur);
	/* wrap: 5 free at 0..4 once freed, cursor at 70 and 30 free after */
	bitmap_clear(map, 0, 5);
	bitmap_set(map, 70, 30);
	EXPECT_EQ(0, buddy_next_fit(map, 100, 0, 5, &cur));
	EXPECT_EQ(5, cur);
	EXPECT_EQ(100, buddy_next_fit(map, 100, 0, 6, &cur));
}

TEST(abi_checks)
{
	struct buddy_alloc a = { .size = 1, .target = 64 };
	struct buddy_map m = { .first = 3, .count = 5 };
	/* ABI version 1's stat, before link_ns and the window counters */
	struct buddy_list l = {
		.stat_size = offsetofend(struct buddy_alloc_stat, counters),
	};

	EXPECT_EQ(0, buddy_alloc_check(&a));
	a.size = (1ULL << 50) + 1;
	EXPECT_EQ(-E2BIG, buddy_alloc_check(&a));
	a.size = 1;
	a.label[31] = 'x';
	EXPECT_EQ(-EINVAL, buddy_alloc_check(&a));
	EXPECT_EQ(0, buddy_map_check(&m, 8));
	EXPECT_EQ(-EINVAL, buddy_map_check(&m, 7));
	m.first = ~0ULL;
	EXPECT_EQ(-EINVAL, buddy_map_check(&m, 8));
	EXPECT_EQ(0, buddy_list_check(&l));
	l.stat_size--;
	EXPECT_EQ(-EINVAL, buddy_list_check(&l));
	EXPECT_EQ(sizeof(struct buddy_alloc),
		  buddy_ioctl_min_size(BUDDY_IOC_ALLOC));
	EXPECT_EQ(offsetofend(struct buddy_alloc_stat, counters),
		  buddy_ioctl_min_size(BUDDY_IOC_ALLOC_STAT));
	EXPECT_EQ(0, buddy_ioctl_min_size(_IOR(BUDDY_IOC_MAGIC, 0x30, int)));
}

TEST(retarget_commit)
{
	static struct mock m;
	struct buddy_chunk_ext old[NR_CHUNKS];
	bool mixed = false;
	u64 cd, cb, nd, nb, fd, fb;

	fill(&m, BUDDY_TARGET_2X);
	buddy_retarget_need(&ops, &m, NR_CHUNKS, BUDDY_TARGET_4X,
			    buddy_codec_by_id(1), &cd, &cb, &nd, &nb);
	/* 64 entries at 2x: 4096 + 32 bytes, two granules a chunk */
	EXPECT_EQ(NR_CHUNKS * BUDDY_GRANULE_BYTES * 2ULL, cd);
	memset(old, 0, sizeof(old));
	ASSERT_EQ(0, buddy_retarget_run(&ops, &m, NR_CHUNKS, BUDDY_TARGET_4X,
					buddy_codec_by_id(1), old, &mixed));
	EXPECT_EQ(4 * NR_CHUNKS, m.live);	/* old and new held */
	buddy_retarget_commit(&ops, &m, NR_CHUNKS, old);
	EXPECT_EQ(2 * NR_CHUNKS, m.live);
	buddy_chunks_bytes(&ops, &m, NR_CHUNKS, &fd, &fb);
	EXPECT_EQ(nd, fd);
	EXPECT_EQ(nb, fb);
	EXPECT_EQ(BUDDY_TARGET_4X, m.ch[3].x.target);
	EXPECT_EQ(0, m.locks);
	EXPECT_TRUE(intact(&m));
	buddy_chunks_free(&ops, &m, NR_CHUNKS);
	EXPECT_EQ(0, m.live);
}

/* The third chunk's extents cannot be had: chunks 0 and 1 go back. */
TEST(retarget_rollback_swap)
{
	static struct mock m;
	struct buddy_chunk_ext old[NR_CHUNKS];
	bool mixed = false;

	fill(&m, BUDDY_TARGET_2X);
	m.allocs_left = 4;	/* two chunks' device and buddy extents */
	memset(old, 0, sizeof(old));
	ASSERT_EQ(-ENOSPC, buddy_retarget_run(&ops, &m, NR_CHUNKS,
					      BUDDY_TARGET_16X,
					      buddy_codec_by_id(2), old,
					      &mixed));
	EXPECT_FALSE(mixed);
	EXPECT_EQ(2 * NR_CHUNKS, m.live);	/* only the original extents */
	EXPECT_EQ(BUDDY_TARGET_2X, m.ch[0].x.target);
	EXPECT_EQ(BUDDY_TARGET_2X, m.ch[1].x.target);
	EXPECT_EQ(0, m.locks);
	EXPECT_TRUE(intact(&m));
	buddy_chunks_free(&ops, &m, NR_CHUNKS);
}

/* A writer changes moved chunk 0 before the failure: it is moved back. */
static void writer(struct mock *m)
{
	struct buddy_io_acct acct;
	unsigned int i;

	if (m->ch[0].x.target != BUDDY_TARGET_4X || m->ch[0].written)
		return;
	memset(&acct, 0, sizeof(acct));
	datagen_fill(DATAGEN_RANDOM, 9, data, 5 * 128);
	for (i = 0; i < 5; i++)
		buddy_stripe_write(&m->ch[0].x, i, data + i * 128, &acct);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		m->codes[i] += acct.codes[i];
	m->ch[0].written = true;
}

TEST(retarget_rollback_move)
{
	static struct mock m;
	struct buddy_chunk_ext old[NR_CHUNKS];
	bool mixed = false;

	fill(&m, BUDDY_TARGET_1X);
	m.allocs_left = 6;	/* three chunks' extents */
	m.on_alloc = writer;
	memset(old, 0, sizeof(old));
	ASSERT_EQ(-ENOSPC, buddy_retarget_run(&ops, &m, NR_CHUNKS,
					      BUDDY_TARGET_4X,
					      buddy_codec_by_id(1), old,
					      &mixed));
	m.on_alloc = NULL;
	EXPECT_FALSE(mixed);
	EXPECT_EQ(NR_CHUNKS, m.live);	/* 1x: device extents only */
	EXPECT_EQ(BUDDY_TARGET_1X, m.ch[0].x.target);
	EXPECT_EQ(0, m.locks);
	/* the writer's entries survived the move back */
	EXPECT_TRUE(intact(&m));
	buddy_chunks_free(&ops, &m, NR_CHUNKS);
	EXPECT_EQ(0, m.live);
}

TEST_HARNESS_MAIN
