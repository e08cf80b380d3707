// SPDX-License-Identifier: GPL-2.0
/*
 * chunk_test - the shared chunk code (core/chunk.c) both backends run:
 * next-fit extent search, the ABI checks, and re-targeting with its
 * rollback, driven through struct buddy_chunk_ops with pools that fail
 * on demand and a "writer" that changes a moved chunk before the failure;
 * and the ABI reports both backends build from core/alloc.c (GET_MAP's
 * packing, LIST's walk, PROFILE_SET's capacity rule).
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "core/alloc.h"
#include "tools/common/datagen.h"

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

/* ---- core/alloc.c ---- */

#define MAP_CHUNKS	3
#define MAP_CE		5	/* entries per chunk: odd, so chunks split bytes */
#define MAP_ENTRIES	13	/* the last chunk holds 3 */

struct map_mock {
	u8 meta[MAP_CHUNKS][(MAP_CE + 1) / 2];
	u8 out[16];
	int held;		/* chunk() calls not yet matched by unchunk() */
	int fail_copy;		/* copy() calls before one fails; -1: none */
};

static const u8 *mm_chunk(void *ctx, unsigned int c, int *err)
{
	struct map_mock *mm = ctx;

	if (c >= MAP_CHUNKS) {
		*err = -ERANGE;
		return NULL;
	}
	mm->held++;
	return mm->meta[c];
}

static void mm_unchunk(void *ctx, unsigned int c)
{
	((struct map_mock *)ctx)->held--;
}

static int mm_copy(void *ctx, u64 off, const u8 *buf, unsigned int len)
{
	struct map_mock *mm = ctx;

	if (mm->fail_copy == 0)
		return -EFAULT;
	if (mm->fail_copy > 0)
		mm->fail_copy--;
	if (off + len > sizeof(mm->out))
		return -ERANGE;
	memcpy(mm->out + off, buf, len);
	return 0;
}

static const struct buddy_map_ops mm_ops = {
	.chunk = mm_chunk, .unchunk = mm_unchunk, .copy = mm_copy,
};

/* Every range, with buffers from one byte up: the ABI's packing, per entry. */
TEST(map_walk)
{
	struct map_mock mm;
	unsigned int e, first, count, bufsz;
	u8 codes[MAP_ENTRIES], buf[8];

	memset(&mm, 0, sizeof(mm));
	for (e = 0; e < MAP_ENTRIES; e++) {
		codes[e] = (e * 7 + 3) % 16;
		buddy_meta_set(mm.meta[e / MAP_CE], e % MAP_CE, codes[e]);
	}
	for (bufsz = 1; bufsz <= sizeof(buf); bufsz++)
		for (first = 0; first <= MAP_ENTRIES; first++)
			for (count = 0; first + count <= MAP_ENTRIES; count++) {
				struct buddy_map m = { .first = first,
						       .count = count };
				u8 want[16] = { 0 };

				for (e = 0; e < count; e++)
					want[e / 2] |= codes[first + e] <<
						       (4 * (e & 1));
				memset(mm.out, 0xcc, sizeof(mm.out));
				mm.fail_copy = -1;
				ASSERT_EQ(0, buddy_map_walk(&m, MAP_CE, &mm_ops,
							    &mm, buf, bufsz));
				ASSERT_EQ(0, mm.held);
				ASSERT_EQ(0, memcmp(want, mm.out,
						    (count + 1) / 2));
				/* nothing past (count + 1) / 2 bytes */
				ASSERT_EQ(0xcc, mm.out[(count + 1) / 2]);
			}
	/* a failed copy stops the walk with its error, nothing held */
	{
		struct buddy_map m = { .first = 0, .count = MAP_ENTRIES };

		mm.fail_copy = 1;
		EXPECT_EQ(-EFAULT, buddy_map_walk(&m, MAP_CE, &mm_ops, &mm,
						  buf, 2));
		EXPECT_EQ(0, mm.held);
	}
}

struct list_mock {
	const u64 *ids;
	unsigned int n;
	unsigned int filled, copied;
	int fail_copy;		/* copy() calls before one fails; -1: none */
	u8 out[4][sizeof(struct buddy_alloc_stat) + 8];
};

static int lm_next(void *ctx, u64 *id, bool want, struct buddy_alloc_stat *st)
{
	struct list_mock *lm = ctx;
	unsigned int k;

	for (k = 0; k < lm->n; k++)
		if (lm->ids[k] >= *id) {
			*id = lm->ids[k];
			if (want) {
				st->id = lm->ids[k];
				lm->filled++;
			}
			return 0;
		}
	return -ENOENT;
}

static int lm_copy(void *ctx, unsigned int idx,
		   const struct buddy_alloc_stat *st, size_t len, size_t size)
{
	struct list_mock *lm = ctx;
	u8 *out = &lm->out[0][0] + idx * size;

	if (lm->fail_copy == 0)
		return -EFAULT;
	if (lm->fail_copy > 0)
		lm->fail_copy--;
	memcpy(out, st, len);
	memset(out + len, 0, size - len);
	lm->copied++;
	return 0;
}

static const struct buddy_list_ops lm_ops = { .next = lm_next,
					      .copy = lm_copy };

TEST(list_walk)
{
	static const u64 ids[] = { 2, 5, 9, (u64)-1 };
	struct list_mock lm = { .ids = ids, .n = 4, .fail_copy = -1 };
	struct buddy_list l = { .stat_size = sizeof(struct buddy_alloc_stat) + 8,
				.count = 2, .start_id = 3 };
	struct buddy_alloc_stat st, got;

	memset(lm.out, 0xcc, sizeof(lm.out));
	ASSERT_EQ(0, buddy_list_walk(&l, &lm_ops, &lm, &st));
	/* ids 5 and 9 written, 5, 9 and the last one counted */
	EXPECT_EQ(2, l.count);
	EXPECT_EQ(3, l.total);
	EXPECT_EQ(2, lm.filled);	/* stats only for what is copied */
	memcpy(&got, lm.out[0], sizeof(got));
	EXPECT_EQ(5, got.id);
	EXPECT_EQ(0, lm.out[0][sizeof(got)]);	/* the tail is zeroed */
	memcpy(&got, &lm.out[0][0] + l.stat_size, sizeof(got));
	EXPECT_EQ(9, got.id);

	/* a short element: stat_size bytes each, no more */
	memset(lm.out, 0xcc, sizeof(lm.out));
	l = (struct buddy_list){ .stat_size = 64, .count = 4 };
	ASSERT_EQ(0, buddy_list_walk(&l, &lm_ops, &lm, &st));
	EXPECT_EQ(4, l.count);
	EXPECT_EQ(4, l.total);
	EXPECT_EQ(0xcc, lm.out[0][4 * 64]);

	/* a failed copy: its error, what was written before it */
	l = (struct buddy_list){ .stat_size = 64, .count = 4 };
	lm.fail_copy = 1;
	EXPECT_EQ(-EFAULT, buddy_list_walk(&l, &lm_ops, &lm, &st));
	EXPECT_EQ(1, l.count);
}

static const struct buddy_profile_entry pe[] = {
	{ .uid = 1, .label = "a" }, { .uid = 1, .label = "b" },
	{ .uid = 1, .label = "a" }, { .uid = 2, .label = "a" },
};

static bool pe_in_table(void *ctx, unsigned int i)
{
	return pe[i].uid == 2;	/* the table holds (2, "a") */
}

static bool pe_same(void *ctx, unsigned int k, unsigned int i)
{
	return pe[k].uid == pe[i].uid && !strcmp(pe[k].label, pe[i].label);
}

/* Duplicates in the request and pairs already in the table add nothing. */
TEST(profile_admit)
{
	/* 2 new pairs: (1, a) and (1, b) */
	EXPECT_EQ(0, buddy_profile_admit(4, BUDDY_PROFILE_MAX - 2,
					  pe_in_table, pe_same, NULL));
	EXPECT_EQ(-ENOSPC, buddy_profile_admit(4, BUDDY_PROFILE_MAX - 1,
					       pe_in_table, pe_same, NULL));
	EXPECT_EQ(0, buddy_profile_admit(1, BUDDY_PROFILE_MAX - 1,
					 pe_in_table, pe_same, NULL));
	EXPECT_EQ(0, buddy_profile_admit(0, BUDDY_PROFILE_MAX,
					 pe_in_table, pe_same, NULL));
}

TEST_HARNESS_MAIN
