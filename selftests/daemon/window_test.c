// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's snapshot windows (daemon/window.c): units by (uid, label), the
 * ring of the last W snapshots, readiness, dropping dead units, the
 * decision fed to the heuristic, and the order of live re-targeting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kselftest_harness.h>
#include "daemon/window.h"

enum { Z = BUDDY_CODE_ZERO, C8 = BUDDY_CODE_C8, C32 = BUDDY_CODE_C32,
       C64 = BUDDY_CODE_C64, C96 = BUDDY_CODE_C96, RAW = BUDDY_CODE_RAW };

/* A stat as BUDDY_IOC_LIST would return it: @n entries all of @code. */
static struct buddy_alloc_stat st(uint64_t id, uint32_t uid, const char *label,
				  uint64_t n, unsigned int code,
				  unsigned int target)
{
	struct buddy_alloc_stat s;

	memset(&s, 0, sizeof(s));
	s.id = id;
	s.owner_uid = uid;
	strncpy(s.label, label, sizeof(s.label) - 1);
	s.size = n * BUDDY_ENTRY_SIZE;
	s.nr_entries = n;
	s.codes[code] = n;
	s.target = target;
	s.codec = BUDDY_CODEC_BPC;
	s.device_bytes = n * target;
	s.buddy_bytes = n * (128 - target);
	return s;
}

static void snap(struct bd_window *w, const struct buddy_alloc_stat *s, int n)
{
	bd_window_begin(w, w->seq * 1000);
	for (int i = 0; i < n; i++)
		if (bd_window_add(w, &s[i]))
			abort();
	bd_window_end(w);
}

static const struct bd_key *key(const struct bd_window *w, uint32_t uid,
				const char *label, uint64_t id)
{
	long i = bd_window_find(w, uid, label, id);

	return i < 0 ? NULL : &w->keys[i];
}

TEST(units_pool_by_uid_and_label)
{
	struct bd_window w;
	struct buddy_alloc_stat s[] = {
		st(1, 0, "act", 10, C32, 128),
		st(2, 0, "act", 30, RAW, 128),	/* same unit as 1 */
		st(3, 1000, "act", 5, Z, 128),	/* other uid: other unit */
		st(4, 0, "", 7, C64, 128),	/* unlabelled: alone */
		st(5, 0, "", 9, C96, 128),	/* unlabelled: alone */
	};
	const struct bd_key *k;

	ASSERT_EQ(0, bd_window_init(&w, 3));
	snap(&w, s, 5);
	EXPECT_EQ(4, w.n);
	k = key(&w, 0, "act", 0);
	ASSERT_NE(NULL, k);
	EXPECT_EQ(2, k->cur_members);
	EXPECT_EQ(40 * 128, k->cur_size);
	EXPECT_EQ(10, k->rows[0][C32]);
	EXPECT_EQ(30, k->rows[0][RAW]);
	EXPECT_EQ(0, k->id);
	/* looking it up by any member's id finds the unit */
	EXPECT_EQ(bd_window_find(&w, 0, "act", 0), bd_window_find(&w, 0, "act", 2));
	ASSERT_NE(NULL, key(&w, 1000, "act", 0));
	EXPECT_EQ(5, key(&w, 1000, "act", 0)->rows[0][Z]);
	ASSERT_NE(NULL, key(&w, 0, "", 4));
	ASSERT_NE(NULL, key(&w, 0, "", 5));
	EXPECT_EQ(NULL, key(&w, 0, "", 6));
	EXPECT_EQ(7, key(&w, 0, "", 4)->rows[0][C64]);
	EXPECT_EQ(bd_window_find(&w, 0, "act", 0), bd_window_find_stat(&w, &s[1]));
	bd_window_free(&w);
}

TEST(label_uses_at_most_31_bytes)
{
	struct bd_window w;
	struct buddy_alloc_stat s = st(1, 0, "x", 1, Z, 128);

	memset(s.label, 'a', sizeof(s.label));	/* no NUL from a broken kernel */
	ASSERT_EQ(0, bd_window_init(&w, 1));
	snap(&w, &s, 1);
	ASSERT_EQ(1, w.n);
	EXPECT_EQ(31, strlen(w.keys[0].label));
	bd_window_free(&w);
}

TEST(ready_after_w_snapshots_present_in_all)
{
	struct bd_window w;
	struct buddy_alloc_stat a = st(1, 0, "a", 4, C8, 128);
	struct buddy_alloc_stat b = st(2, 0, "b", 4, C8, 128);
	struct buddy_alloc_stat both[2] = { a, b };

	ASSERT_EQ(0, bd_window_init(&w, 4));
	snap(&w, &a, 1);
	snap(&w, both, 2);
	snap(&w, both, 2);
	EXPECT_FALSE(bd_key_ready(&w, key(&w, 0, "a", 0)));	/* 3 < W */
	snap(&w, both, 2);
	EXPECT_TRUE(bd_key_ready(&w, key(&w, 0, "a", 0)));
	EXPECT_FALSE(bd_key_ready(&w, key(&w, 0, "b", 0)));	/* 3 of 4 */
	EXPECT_EQ(3, bd_key_present(&w, key(&w, 0, "b", 0)));
	snap(&w, both, 2);
	EXPECT_TRUE(bd_key_ready(&w, key(&w, 0, "b", 0)));
	/* a gap makes a unit pending again until the gap leaves the window */
	snap(&w, &b, 1);
	EXPECT_FALSE(bd_key_ready(&w, key(&w, 0, "a", 0)));
	for (int i = 0; i < 3; i++) {
		snap(&w, both, 2);
		EXPECT_FALSE(bd_key_ready(&w, key(&w, 0, "a", 0)));
	}
	snap(&w, both, 2);
	EXPECT_TRUE(bd_key_ready(&w, key(&w, 0, "a", 0)));
	bd_window_free(&w);
}

TEST(ring_keeps_the_last_w_oldest_first)
{
	struct bd_window w;
	uint64_t rows[3][BUDDY_CODE_NR];

	ASSERT_EQ(0, bd_window_init(&w, 3));
	for (uint64_t s = 1; s <= 7; s++) {
		struct buddy_alloc_stat a = st(1, 0, "a", s, C32, 128);

		snap(&w, &a, 1);
	}
	EXPECT_EQ(7, w.seq);
	EXPECT_EQ(3, bd_window_rows(&w));
	bd_key_series(&w, key(&w, 0, "a", 0), rows);
	EXPECT_EQ(5, rows[0][C32]);
	EXPECT_EQ(6, rows[1][C32]);
	EXPECT_EQ(7, rows[2][C32]);
	EXPECT_EQ(4000, bd_window_time(&w, 0));	/* snap() stamps seq-1 * 1000 */
	EXPECT_EQ(6000, bd_window_time(&w, 2));
	EXPECT_EQ(7 * 128, key(&w, 0, "a", 0)->cur_size);
	bd_window_free(&w);
}

TEST(partial_window_series)
{
	struct bd_window w;
	uint64_t rows[5][BUDDY_CODE_NR];
	struct buddy_alloc_stat a = st(1, 0, "a", 2, RAW, 128);

	ASSERT_EQ(0, bd_window_init(&w, 5));
	snap(&w, NULL, 0);
	snap(&w, &a, 1);
	EXPECT_EQ(2, bd_window_rows(&w));
	bd_key_series(&w, key(&w, 0, "a", 0), rows);
	EXPECT_EQ(0, rows[0][RAW]);	/* before it existed */
	EXPECT_EQ(2, rows[1][RAW]);
	bd_window_free(&w);
}

TEST(dead_units_leave_after_w_empty_snapshots)
{
	struct bd_window w;
	struct buddy_alloc_stat a = st(1, 0, "a", 2, RAW, 128);
	struct buddy_alloc_stat b = st(2, 0, "b", 2, RAW, 128);

	ASSERT_EQ(0, bd_window_init(&w, 3));
	snap(&w, &a, 1);
	snap(&w, &b, 1);
	EXPECT_EQ(2, w.n);
	snap(&w, &b, 1);
	EXPECT_EQ(2, w.n);		/* a's row is still in the window */
	snap(&w, &b, 1);
	EXPECT_EQ(1, w.n);
	EXPECT_EQ(NULL, key(&w, 0, "a", 0));
	/* a comes back: a new unit, with no history */
	snap(&w, &a, 1);
	ASSERT_NE(NULL, key(&w, 0, "a", 0));
	EXPECT_EQ(1, bd_key_present(&w, key(&w, 0, "a", 0)));
	bd_window_free(&w);
}

TEST(latest_figures_and_codec)
{
	struct bd_window w;
	struct buddy_alloc_stat s[3] = {
		st(1, 0, "m", 10, C32, 128), st(2, 0, "m", 30, C32, 32),
		st(3, 0, "m", 5, C32, 32),
	};

	s[1].codec = BUDDY_CODEC_ZVC;
	s[2].codec = BUDDY_CODEC_ZVC;
	s[0].counters.entry_reads = 10;
	s[1].counters.entry_reads = 5;
	s[1].counters.buddy_accesses = 3;
	ASSERT_EQ(0, bd_window_init(&w, 2));
	snap(&w, s, 3);
	snap(&w, s, 2);		/* the newest snapshot counts */
	const struct bd_key *k = key(&w, 0, "m", 0);

	ASSERT_NE(NULL, k);
	EXPECT_EQ(2, k->cur_members);
	EXPECT_EQ(40 * 128, k->cur_size);
	EXPECT_EQ(BUDDY_CODEC_ZVC, bd_key_codec(k));	/* 30 of 40 entries */
	EXPECT_EQ(15, k->counters.entry_reads);
	EXPECT_EQ(3, k->counters.buddy_accesses);
	EXPECT_EQ((1u << 4) | (1u << 1), k->target_mask);	/* 1x and 4x */
	EXPECT_EQ(10 * 128 + 30 * 32, k->cur_device_bytes);
	bd_window_free(&w);
}

/* A unit's decision over W snapshots of a fixed mix. */
static unsigned int decide_mix(struct __test_metadata *_metadata,
			       const uint64_t mix[BUDDY_CODE_NR],
			       uint32_t thr_ppm)
{
	struct buddy_heur_params p;
	struct bd_decision d;
	struct bd_window w;
	struct buddy_alloc_stat s = st(1, 0, "u", 0, Z, 128);
	unsigned int t;

	memcpy(s.codes, mix, sizeof(uint64_t) * BUDDY_CODE_NR);
	s.nr_entries = 0;
	for (int c = 0; c < BUDDY_CODE_NR; c++)
		s.nr_entries += mix[c];
	s.size = s.nr_entries * 128;
	buddy_heur_default_params(&p);
	p.threshold_ppm = thr_ppm;
	if (bd_window_init(&w, 4))
		abort();
	for (int i = 0; i < 4; i++)
		snap(&w, &s, 1);
	if (bd_decide(&w, &p, &d) || d.n != 1 || d.err)
		abort();
	t = d.ch[0].target;
	EXPECT_EQ(4 * s.nr_entries, d.ch[0].pairs);
	bd_decision_free(&d);
	bd_window_free(&w);
	return t;
}

TEST(decisions_of_known_mixes)
{
	static const struct {
		uint64_t mix[BUDDY_CODE_NR];	/* Z C8 C32 C64 C96 RAW */
		uint32_t thr;
		unsigned int want;
	} v[] = {
		{ { 100, 0, 0, 0, 0, 0 }, 300000, BUDDY_TARGET_16X },
		{ { 95, 5, 0, 0, 0, 0 }, 300000, BUDDY_TARGET_16X },
		{ { 92, 0, 8, 0, 0, 0 }, 300000, BUDDY_TARGET_16X },
		{ { 85, 15, 0, 0, 0, 0 }, 300000, BUDDY_TARGET_4X },
		{ { 0, 100, 0, 0, 0, 0 }, 300000, BUDDY_TARGET_4X },
		{ { 0, 0, 100, 0, 0, 0 }, 300000, BUDDY_TARGET_4X },
		{ { 0, 0, 0, 100, 0, 0 }, 300000, BUDDY_TARGET_2X },
		{ { 0, 0, 0, 0, 100, 0 }, 300000, BUDDY_TARGET_4_3X },
		{ { 0, 0, 0, 0, 0, 100 }, 300000, BUDDY_TARGET_1X },
		{ { 50, 0, 0, 0, 0, 50 }, 300000, BUDDY_TARGET_1X },
		{ { 0, 0, 70, 0, 0, 30 }, 300000, BUDDY_TARGET_4X },	/* = 30% */
		{ { 0, 0, 69, 2, 0, 29 }, 300000, BUDDY_TARGET_2X },	/* 31% */
		{ { 0, 0, 80, 0, 0, 20 }, 300000, BUDDY_TARGET_4X },
		{ { 0, 0, 80, 0, 0, 20 }, 100000, BUDDY_TARGET_1X },
		{ { 0, 0, 80, 0, 0, 20 }, 200000, BUDDY_TARGET_4X },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		EXPECT_EQ(v[i].want, decide_mix(_metadata, v[i].mix, v[i].thr))
			TH_LOG("case %zu", i);
	}
}

TEST(pooled_unit_decides_for_all_members)
{
	struct buddy_heur_params p;
	struct bd_decision d;
	struct bd_window w;
	struct buddy_alloc_stat s[3] = {
		st(1, 0, "pool", 800, C32, 128),
		st(2, 0, "pool", 200, RAW, 128),	/* alone: 1x */
		st(3, 7, "pool", 100, RAW, 128),	/* other uid */
	};

	buddy_heur_default_params(&p);
	ASSERT_EQ(0, bd_window_init(&w, 2));
	snap(&w, s, 3);
	snap(&w, s, 3);
	ASSERT_EQ(0, bd_decide(&w, &p, &d));
	ASSERT_EQ(2, d.n);
	EXPECT_EQ(0, d.err);
	for (size_t u = 0; u < d.n; u++) {
		const struct bd_key *k = &w.keys[d.key[u]];

		EXPECT_EQ(k->uid ? BUDDY_TARGET_1X : BUDDY_TARGET_4X, d.ch[u].target);
		EXPECT_EQ(k->uid ? 100 * 128 : 1000 * 128, d.a[u].size);
	}
	bd_decision_free(&d);
	bd_window_free(&w);
}

TEST(pending_units_are_left_out_and_hold_capacity)
{
	struct buddy_heur_params p;
	struct bd_decision d;
	struct bd_window w;
	struct buddy_alloc_stat old = st(1, 0, "old", 100, C32, 128);
	struct buddy_alloc_stat both[2] = { old, st(2, 0, "new", 50, RAW, 64) };

	buddy_heur_default_params(&p);
	p.device_bytes = 1 << 20;
	p.carveout_bytes = 3 << 20;
	ASSERT_EQ(0, bd_window_init(&w, 2));
	snap(&w, &old, 1);
	snap(&w, both, 2);
	ASSERT_EQ(0, bd_decide(&w, &p, &d));
	EXPECT_EQ(1, d.n);
	EXPECT_EQ(1, d.pending);
	EXPECT_EQ(50 * 64, d.pending_device);
	EXPECT_EQ(50 * 64, d.pending_buddy);
	EXPECT_EQ((1 << 20) - 50 * 64, d.params.device_bytes);
	EXPECT_EQ((3 << 20) - 50 * 64, d.params.carveout_bytes);
	EXPECT_STREQ("old", d.a[0].label);
	bd_decision_free(&d);
	/* before W snapshots nothing is decided */
	bd_window_free(&w);
	ASSERT_EQ(0, bd_window_init(&w, 2));
	snap(&w, &old, 1);
	ASSERT_EQ(0, bd_decide(&w, &p, &d));
	EXPECT_EQ(0, d.n);
	EXPECT_EQ(1, d.pending);
	bd_decision_free(&d);
	bd_window_free(&w);
}

TEST(capacity_enospc_is_reported_not_fatal)
{
	struct buddy_heur_params p;
	struct bd_decision d;
	struct bd_window w;
	struct buddy_alloc_stat a = st(1, 0, "r", 1000, RAW, 32);

	buddy_heur_default_params(&p);
	p.device_bytes = 1000 * 64;	/* 1x cannot fit */
	ASSERT_EQ(0, bd_window_init(&w, 1));
	snap(&w, &a, 1);
	ASSERT_EQ(0, bd_decide(&w, &p, &d));
	EXPECT_EQ(-ENOSPC, d.err);
	EXPECT_EQ(BUDDY_TARGET_1X, d.ch[0].target);	/* the state reached */
	bd_decision_free(&d);
	bd_window_free(&w);
}

TEST(plan_gives_back_device_bytes_first)
{
	struct buddy_heur_params p;
	struct bd_decision d;
	struct bd_window w;
	struct bd_move mv[6];
	struct buddy_alloc_stat s[6] = {
		st(1, 0, "rand", 100, RAW, 32),	/* 4x -> 1x: needs device */
		st(2, 0, "zero", 100, Z, 128),	/* 1x -> 16x: gives back */
		st(3, 0, "c64", 100, C64, 64),	/* 2x already: no move */
		st(4, 0, "zero", 100, Z, 32),	/* 4x -> 16x: gives back */
		st(5, 0, "", 100, C96, 128),	/* 1x -> 4/3x: gives back */
		st(6, 0, "late", 100, Z, 128),	/* pending: no move */
	};
	size_t n;

	buddy_heur_default_params(&p);
	ASSERT_EQ(0, bd_window_init(&w, 2));
	snap(&w, s, 5);
	snap(&w, s, 6);
	ASSERT_EQ(0, bd_decide(&w, &p, &d));
	n = bd_plan_live(&w, &d, s, 6, mv);
	ASSERT_EQ(4, n);
	EXPECT_EQ(2, mv[0].id);
	EXPECT_EQ(BUDDY_TARGET_16X, mv[0].to);
	EXPECT_EQ(4, mv[1].id);
	EXPECT_EQ(BUDDY_TARGET_16X, mv[1].to);
	EXPECT_EQ(5, mv[2].id);
	EXPECT_EQ(BUDDY_TARGET_4_3X, mv[2].to);
	EXPECT_EQ(1, mv[3].id);
	EXPECT_EQ(BUDDY_TARGET_4X, mv[3].from);
	EXPECT_EQ(BUDDY_TARGET_1X, mv[3].to);
	bd_decision_free(&d);
	bd_window_free(&w);
}

TEST_HARNESS_MAIN
