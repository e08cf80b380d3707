// SPDX-License-Identifier: GPL-2.0
/*
 * The target heuristic (tools/policy/heuristic.h) on hand-made profiles with
 * known answers: the Buddy Threshold boundary, every target, the mostly-zero
 * 16x rule, capacity step-down, pooled labels, the comparison points, the
 * threshold sweep and the Fig. 9 series.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <kselftest_harness.h>
#include "core/codec.h"
#include "tools/common/datagen.h"
#include "tools/policy/heuristic.h"

#define MAXS	16	/* snapshots per profile */
#define E	BUDDY_ENTRY_SIZE

enum {
	Z = BUDDY_CODE_ZERO, C8 = BUDDY_CODE_C8, C32 = BUDDY_CODE_C32,
	C64 = BUDDY_CODE_C64, C96 = BUDDY_CODE_C96, RAW = BUDDY_CODE_RAW,
};

typedef unsigned __int128 u128;

struct prof {
	uint64_t h[MAXS][BUDDY_CODE_NR];
};

/* Every one of @snaps snapshots: @n entries of code @code... (pairs). */
static void every(struct prof *p, unsigned int snaps, unsigned int code,
		  uint64_t n)
{
	for (unsigned int s = 0; s < snaps; s++)
		p->h[s][code] += n;
}

static struct buddy_heur_alloc mk(const char *label, uint64_t entries,
				  unsigned int snaps, const struct prof *p)
{
	return (struct buddy_heur_alloc){
		.label = label, .size = entries * E, .nr_snaps = snaps,
		.hist = p->h,
	};
}

static struct buddy_heur_params params(uint32_t thr)
{
	struct buddy_heur_params p;

	buddy_heur_default_params(&p);
	p.threshold_ppm = thr;
	return p;
}

#define NEAR(a, b)	(fabs((double)(a) - (double)(b)) < 1e-12)

/* One allocation alone: its target under @p. */
static unsigned int one(const struct buddy_heur_params *p,
			const struct buddy_heur_alloc *a)
{
	struct buddy_heur_choice c;

	if (buddy_heur_decide(p, a, 1, &c, NULL))
		return 0;
	return c.target;
}

TEST(defaults)
{
	struct buddy_heur_params p;

	memset(&p, 0xff, sizeof(p));
	buddy_heur_default_params(&p);
	ASSERT_EQ(300000u, p.threshold_ppm);
	ASSERT_EQ(900000u, p.zero_ppm);
	ASSERT_EQ(0u, p.device_bytes);
	ASSERT_EQ(0u, p.carveout_bytes);
	ASSERT_FALSE(p.pool_labels);
	ASSERT_TRUE(p.allow_16x);
	ASSERT_TRUE(p.sampling_margin);
	ASSERT_EQ(0, buddy_heur_target_index(BUDDY_TARGET_16X));
	ASSERT_EQ(4, buddy_heur_target_index(BUDDY_TARGET_1X));
	ASSERT_EQ(-1, buddy_heur_target_index(0));
	ASSERT_EQ(-1, buddy_heur_target_index(100));
}

/* 10 entries x 10 snapshots: exactly 30 pairs over 2x qualify, 31 do not. */
TEST(threshold_boundary)
{
	struct buddy_heur_params p = params(300000);
	struct prof a30 = { 0 }, a31 = { 0 };
	struct buddy_heur_alloc a;
	struct buddy_heur_choice c;
	struct buddy_heur_result r;

	every(&a30, 10, C96, 3);
	every(&a30, 10, C64, 7);
	a = mk("x", 10, 10, &a30);
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, &r));
	ASSERT_EQ(BUDDY_TARGET_2X, c.target);
	ASSERT_EQ(100u, c.pairs);
	ASSERT_EQ(30u, c.over);
	ASSERT_TRUE(NEAR(c.buddy_frac, 0.3));
	ASSERT_TRUE(NEAR(c.ratio, 2.0));
	ASSERT_EQ(100u, c.over_at[1]);	/* everything is over 4x */
	ASSERT_EQ(30u, r.over);
	ASSERT_TRUE(NEAR(r.buddy_frac, 0.3));
	ASSERT_TRUE(NEAR(r.ratio, 2.0));

	/* One ppm less: 30% no longer qualifies. */
	p.threshold_ppm = 299999;
	ASSERT_EQ(BUDDY_TARGET_4_3X, one(&p, &a));

	/* The 31st over-share pair, in one snapshot only. */
	p.threshold_ppm = 300000;
	a31 = a30;
	a31.h[4][C96]++;
	a31.h[4][C64]--;
	a = mk("x", 10, 10, &a31);
	ASSERT_EQ(BUDDY_TARGET_4_3X, one(&p, &a));
	p.threshold_ppm = 310000;
	ASSERT_EQ(BUDDY_TARGET_2X, one(&p, &a));

	/* The same at 4x, with RAW entries over-share at every target. */
	memset(&a31, 0, sizeof(a31));
	every(&a31, 10, RAW, 3);
	every(&a31, 10, C32, 7);
	a = mk("x", 10, 10, &a31);
	p.threshold_ppm = 300000;
	ASSERT_EQ(BUDDY_TARGET_4X, one(&p, &a));
	a31.h[9][RAW]++;
	a31.h[9][C32]--;
	ASSERT_EQ(BUDDY_TARGET_1X, one(&p, &a));

	/* Threshold 0: only a perfect fit; 100%: everything is 4x. */
	p.threshold_ppm = 0;
	a = mk("x", 10, 10, &a30);
	ASSERT_EQ(BUDDY_TARGET_4_3X, one(&p, &a));
	p.threshold_ppm = 1000000;
	ASSERT_EQ(BUDDY_TARGET_4X, one(&p, &a));
}

/*
 * The sampling error: 2 sqrt(p (1 - p) (1 - n/N) / n) at the threshold,
 * 0 when exact; a sampled unit within the error below the threshold keeps
 * the safer target, one clear of it does not, an exact one never does.
 */
TEST(sampling_margin)
{
	struct buddy_heur_params p = params(300000);
	struct prof pr = { 0 };
	struct buddy_heur_alloc a, b[2];
	struct buddy_heur_choice c, cb[2];

	/* 28% over 2x: 28 of 100 pairs (10 entries x 10 snapshots) */
	every(&pr, 10, C96, 2);
	every(&pr, 10, C64, 8);
	pr.h[0][C96] += 8;
	pr.h[0][C64] -= 8;
	a = mk("x", 10, 10, &pr);

	/* exact (sampled 0, or everything read): no error, 2x */
	ASSERT_EQ(0u, buddy_heur_sample_err_ppm(&a, 300000));
	a.sampled = a.population = 400;
	ASSERT_EQ(0u, buddy_heur_sample_err_ppm(&a, 300000));
	ASSERT_EQ(BUDDY_TARGET_2X, one(&p, &a));

	/* 100 of 400 blocks: 2 sqrt(0.21 * 0.75 / 100) = 0.0794 */
	a.sampled = 100;
	ASSERT_EQ(79372u, buddy_heur_sample_err_ppm(&a, 300000));
	/* 0.28 + 0.079 > 0.30: the safer 4/3x, with its error reported */
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, NULL));
	ASSERT_EQ(BUDDY_TARGET_4_3X, c.target);
	ASSERT_EQ(79372u, c.err_ppm);
	/* without the margin the estimate alone decides: 2x */
	p.sampling_margin = false;
	ASSERT_EQ(BUDDY_TARGET_2X, one(&p, &a));
	p.sampling_margin = true;
	/* 4000 of 16000 blocks: error 0.0125, 0.2925 <= 0.30: 2x */
	a.sampled = 4000;
	a.population = 16000;
	ASSERT_EQ(12549u, buddy_heur_sample_err_ppm(&a, 300000));
	ASSERT_EQ(BUDDY_TARGET_2X, one(&p, &a));
	/* the error is taken at each threshold of a sweep: at 40%, 2x */
	a.sampled = 100;
	a.population = 400;
	p.threshold_ppm = 400000;
	ASSERT_EQ(BUDDY_TARGET_2X, one(&p, &a));
	p.threshold_ppm = 300000;

	/* pooled: pairs-weighted error of the members (exact + sampled) */
	b[0] = mk("L", 10, 10, &pr);
	b[1] = mk("L", 10, 10, &pr);
	b[1].sampled = 100;
	b[1].population = 400;
	p.pool_labels = true;
	ASSERT_EQ(0, buddy_heur_decide(&p, b, 2, cb, NULL));
	ASSERT_EQ(79372u / 2, cb[0].err_ppm);
	/* 0.28 + 0.0397 > 0.30: both keep the safer target */
	ASSERT_EQ(BUDDY_TARGET_4_3X, cb[0].target);
	ASSERT_EQ(BUDDY_TARGET_4_3X, cb[1].target);
}

TEST(every_target)
{
	static const struct { unsigned int code, t16, t4; } cases[] = {
		{ Z,   BUDDY_TARGET_16X,  BUDDY_TARGET_4X },
		{ C8,  BUDDY_TARGET_4X,   BUDDY_TARGET_4X },	/* not zero */
		{ C32, BUDDY_TARGET_4X,   BUDDY_TARGET_4X },
		{ C64, BUDDY_TARGET_2X,   BUDDY_TARGET_2X },
		{ C96, BUDDY_TARGET_4_3X, BUDDY_TARGET_4_3X },
		{ RAW, BUDDY_TARGET_1X,   BUDDY_TARGET_1X },
	};
	struct buddy_heur_params p = params(300000);

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof pr = { 0 };
		struct buddy_heur_alloc a;
		struct buddy_heur_choice c;

		every(&pr, 10, cases[i].code, 10);
		a = mk("x", 10, 10, &pr);
		p.allow_16x = true;
		ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, NULL));
		ASSERT_EQ(cases[i].t16, c.target) TH_LOG("code %u", i);
		ASSERT_EQ(cases[i].t16, c.threshold_target);
		ASSERT_EQ(cases[i].code == Z, c.mostly_zero);
		ASSERT_EQ(0u, c.over);
		ASSERT_TRUE(NEAR(c.ratio, 128.0 / c.target));
		ASSERT_EQ(10u * c.target, c.device_need);
		ASSERT_EQ(10u * (128 - c.target), c.buddy_need);
		p.allow_16x = false;
		ASSERT_EQ(cases[i].t4, one(&p, &a)) TH_LOG("code %u", i);
	}
}

/* 16x only when >= 90% zero in EVERY snapshot, and within the threshold. */
TEST(mostly_zero)
{
	struct buddy_heur_params p = params(300000);
	struct prof pr = { 0 };
	struct buddy_heur_alloc a;
	struct buddy_heur_choice c;

	every(&pr, 10, Z, 90);
	every(&pr, 10, C8, 10);
	a = mk("z", 100, 10, &pr);
	ASSERT_EQ(BUDDY_TARGET_16X, one(&p, &a));

	/* One snapshot at 89%. */
	pr.h[6][Z]--;
	pr.h[6][C8]++;
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, NULL));
	ASSERT_EQ(BUDDY_TARGET_4X, c.target);
	ASSERT_FALSE(c.mostly_zero);
	p.zero_ppm = 890000;
	ASSERT_EQ(BUDDY_TARGET_16X, one(&p, &a));
	p.zero_ppm = 890001;
	ASSERT_EQ(BUDDY_TARGET_4X, one(&p, &a));
	p.zero_ppm = 900000;

	/* 10% RAW: mostly zero, 10% over 16x <= 30%. */
	memset(&pr, 0, sizeof(pr));
	every(&pr, 10, Z, 90);
	every(&pr, 10, RAW, 10);
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, NULL));
	ASSERT_EQ(BUDDY_TARGET_16X, c.target);
	ASSERT_TRUE(NEAR(c.buddy_frac, 0.1));
	ASSERT_TRUE(NEAR(c.ratio, 16.0));
	/* ... but it must pass the threshold at 16x too. */
	p.threshold_ppm = 99999;
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, NULL));
	ASSERT_EQ(BUDDY_TARGET_1X, c.target);
	ASSERT_TRUE(c.mostly_zero);
	p.threshold_ppm = 100000;
	ASSERT_EQ(BUDDY_TARGET_16X, one(&p, &a));

	/* Mostly zero overall but not in one snapshot (zero share 50%). */
	memset(&pr, 0, sizeof(pr));
	every(&pr, 10, Z, 100);
	pr.h[0][Z] = 50;
	pr.h[0][C8] = 50;
	ASSERT_EQ(BUDDY_TARGET_4X, one(&p, &a));

	/* Snapshots without any counted entry are skipped. */
	memset(&pr, 0, sizeof(pr));
	every(&pr, 10, Z, 100);
	memset(pr.h[3], 0, sizeof(pr.h[3]));
	ASSERT_EQ(BUDDY_TARGET_16X, one(&p, &a));
}

TEST(no_data_and_odd_sizes)
{
	struct buddy_heur_params p = params(300000);
	struct prof pr = { 0 };
	struct buddy_heur_alloc a[2];
	struct buddy_heur_choice c[2];
	struct buddy_heur_result r;

	every(&pr, 1, C32, 2);
	a[0] = (struct buddy_heur_alloc){ .label = "odd", .size = 200,
					  .nr_snaps = 1, .hist = pr.h };
	a[1] = (struct buddy_heur_alloc){ .label = "none", .size = 256 };
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 2, c, &r));
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(2u, c[0].entries);
	ASSERT_EQ(64u, c[0].device_need);
	ASSERT_EQ(192u, c[0].buddy_need);
	ASSERT_TRUE(NEAR(c[0].ratio, 200.0 / 64));
	ASSERT_EQ(BUDDY_TARGET_1X, c[1].target);	/* no snapshots */
	ASSERT_EQ(0u, c[1].pairs);
	ASSERT_EQ(456u, r.logical_bytes);
	ASSERT_EQ(64u + 256u, r.device_bytes);
	ASSERT_TRUE(NEAR(r.ratio, 456.0 / 320));
	ASSERT_EQ(1u, r.nr_by_target[1]);
	ASSERT_EQ(1u, r.nr_by_target[4]);

	/* Nothing at all. */
	ASSERT_EQ(0, buddy_heur_decide(&p, NULL, 0, NULL, &r));
	ASSERT_EQ(0u, r.device_bytes);
	ASSERT_TRUE(r.ratio == 0.0 && r.buddy_frac == 0.0);
}

TEST(invalid)
{
	struct buddy_heur_params p = params(300000);
	struct prof pr = { 0 };
	struct buddy_heur_alloc a = mk("x", 1, 1, &pr);
	struct buddy_heur_choice c;
	struct buddy_heur_result r;

	p.threshold_ppm = 1000001;
	ASSERT_EQ(-EINVAL, buddy_heur_decide(&p, &a, 1, &c, &r));
	ASSERT_EQ(-EINVAL, r.err);
	p.threshold_ppm = 300000;
	p.zero_ppm = 1000001;
	ASSERT_EQ(-EINVAL, buddy_heur_decide(&p, &a, 1, &c, &r));
	p.zero_ppm = 900000;
	a.size = 0;
	ASSERT_EQ(-EINVAL, buddy_heur_decide(&p, &a, 1, &c, &r));
	a.size = 128;
	a.hist = NULL;
	ASSERT_EQ(-EINVAL, buddy_heur_decide(&p, &a, 1, &c, &r));
	ASSERT_EQ(-EINVAL, buddy_heur_decide(&p, NULL, 1, &c, &r));
	ASSERT_EQ(-EINVAL, buddy_heur_decide(NULL, &a, 0, &c, &r));

	/* Sizes beyond 4 EiB, counts beyond 2^64. */
	a = mk("x", 1, 1, &pr);
	a.size = UINT64_MAX;
	ASSERT_EQ(-EOVERFLOW, buddy_heur_decide(&p, &a, 1, &c, &r));
	a.size = 128;
	pr.h[0][RAW] = UINT64_MAX;
	pr.h[0][Z] = 1;
	ASSERT_EQ(-EOVERFLOW, buddy_heur_decide(&p, &a, 1, &c, &r));
	ASSERT_EQ(-EOVERFLOW, r.err);
	/* Just below: fine, and the 128-bit threshold test holds. */
	pr.h[0][Z] = 0;
	ASSERT_EQ(0, buddy_heur_decide(&p, &a, 1, &c, &r));
	ASSERT_EQ(BUDDY_TARGET_1X, c.target);
}

/*
 * The capacity fixture: B (20 entries, 2x), A (10, 4x), C (5, 4/3x), in that
 * order.  Device need 1280 + 320 + 480 = 2080, carve-out need
 * 1280 + 960 + 160 = 2400.  One step frees B 640, A 320, C 160.
 */
struct cap {
	struct prof pb, pa, pc;
	struct buddy_heur_alloc a[3];
	struct buddy_heur_choice c[3];
	struct buddy_heur_result r;
};

static void cap_init(struct cap *k)
{
	memset(k, 0, sizeof(*k));
	every(&k->pb, 10, C64, 20);
	every(&k->pa, 10, C32, 10);
	every(&k->pc, 10, C96, 5);
	k->a[0] = mk("B", 20, 10, &k->pb);
	k->a[1] = mk("A", 10, 10, &k->pa);
	k->a[2] = mk("C", 5, 10, &k->pc);
}

static int cap_run(struct cap *k, uint64_t dev, uint64_t carve)
{
	struct buddy_heur_params p = params(300000);

	p.device_bytes = dev;
	p.carveout_bytes = carve;
	return buddy_heur_decide(&p, k->a, 3, k->c, &k->r);
}

TEST(capacity_one_step)
{
	struct cap k;

	cap_init(&k);
	ASSERT_EQ(0, cap_run(&k, 0, 0));
	ASSERT_EQ(2080u, k.r.device_bytes);
	ASSERT_EQ(2400u, k.r.buddy_bytes);
	ASSERT_EQ(0u, k.r.steps);
	ASSERT_EQ(0, cap_run(&k, 2080, 2400));	/* exactly fits */
	ASSERT_EQ(0u, k.r.steps);

	/* Deficit 1: every step clears it; the smallest (C, index 2) wins. */
	ASSERT_EQ(0, cap_run(&k, 0, 2399));
	ASSERT_EQ(1u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, k.c[1].target);
	ASSERT_EQ(BUDDY_TARGET_1X, k.c[2].target);
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.c[2].threshold_target);
	ASSERT_EQ(2240u, k.r.device_bytes);
	ASSERT_EQ(2240u, k.r.buddy_bytes);

	/* Deficit 200: C (160) no longer clears; A (320) beats B (640). */
	ASSERT_EQ(0, cap_run(&k, 0, 2200));
	ASSERT_EQ(1u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[0].target);
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[1].target);
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.c[2].target);
	ASSERT_EQ(2400u, k.r.device_bytes);
	ASSERT_EQ(2080u, k.r.buddy_bytes);

	/* Deficit 400: only B clears. */
	ASSERT_EQ(0, cap_run(&k, 0, 2000));
	ASSERT_EQ(1u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, k.c[1].target);
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.c[2].target);

	/* Deficit 1 but the device pool only has room for C's 160. */
	ASSERT_EQ(0, cap_run(&k, 2240, 2399));
	ASSERT_EQ(BUDDY_TARGET_1X, k.c[2].target);
	/* Deficit 200 with room for 320: A, not B. */
	ASSERT_EQ(0, cap_run(&k, 2400, 2200));
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[1].target);
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[0].target);
}

TEST(capacity_ties)
{
	struct buddy_heur_params p = params(300000);
	struct prof px = { 0 }, py = { 0 };
	struct buddy_heur_alloc a[3];
	struct buddy_heur_choice c[3];
	struct buddy_heur_result r;

	/* X: all C32.  Y: 20% C64, still 4x; its step removes 20 accesses. */
	every(&px, 10, C32, 10);
	every(&py, 10, C32, 8);
	every(&py, 10, C64, 2);
	a[0] = mk("X", 10, 10, &px);
	a[1] = mk("Y", 10, 10, &py);
	a[2] = mk("X2", 10, 10, &px);
	/* Need 3 * 320 device, 3 * 960 carve-out; deficit 1. */
	p.carveout_bytes = 3 * 960 - 1;
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 3, c, &r));
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_2X, c[1].target);
	ASSERT_EQ(BUDDY_TARGET_4X, c[2].target);
	ASSERT_EQ(20u, c[1].over_at[1]);
	ASSERT_EQ(0u, c[1].over);
	ASSERT_EQ(0u, r.over);

	/* Equal freed bytes and drop: the lowest index. */
	a[1] = mk("X1", 10, 10, &px);
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 3, c, &r));
	ASSERT_EQ(BUDDY_TARGET_2X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, c[1].target);
	ASSERT_EQ(BUDDY_TARGET_4X, c[2].target);
}

TEST(capacity_several_steps)
{
	struct cap k;

	cap_init(&k);
	/*
	 * Deficit 700: none clears, the largest (B, 640) first; then the
	 * deficit 60 is cleared by the smallest step, C (160).
	 */
	ASSERT_EQ(0, cap_run(&k, 0, 1700));
	ASSERT_EQ(2u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, k.c[1].target);
	ASSERT_EQ(BUDDY_TARGET_1X, k.c[2].target);
	ASSERT_EQ(2080u + 640 + 160, k.r.device_bytes);
	ASSERT_TRUE(k.r.buddy_bytes <= 1700);

	/* Deficit 1280: B (640) twice, then nothing left. */
	ASSERT_EQ(0, cap_run(&k, 0, 1120));
	ASSERT_EQ(2u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_1X, k.c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, k.c[1].target);
	ASSERT_EQ(1120u, k.r.buddy_bytes);

	/* A 1-byte carve-out: everything to 1x, 2 + 3 + 1 steps. */
	ASSERT_EQ(0, cap_run(&k, 0, 1));
	ASSERT_EQ(6u, k.r.steps);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(BUDDY_TARGET_1X, k.c[i].target);
	ASSERT_EQ(0u, k.r.buddy_bytes);
	ASSERT_EQ(35u * 128, k.r.device_bytes);
	ASSERT_TRUE(NEAR(k.r.ratio, 1.0));
	ASSERT_EQ(0u, k.r.over);
	ASSERT_EQ(3u, k.r.nr_by_target[4]);
}

TEST(capacity_infeasible)
{
	struct cap k;

	cap_init(&k);
	/* The threshold targets alone overflow the device pool. */
	ASSERT_EQ(-ENOSPC, cap_run(&k, 2079, 0));
	ASSERT_EQ(-ENOSPC, k.r.err);
	ASSERT_EQ(0u, k.r.steps);
	ASSERT_EQ(BUDDY_TARGET_2X, k.c[0].target);	/* state reached */
	ASSERT_EQ(2080u, k.r.device_bytes);

	/* Deficit 1, but no step fits the 100 spare device bytes. */
	ASSERT_EQ(-ENOSPC, cap_run(&k, 2180, 2399));
	ASSERT_EQ(0u, k.r.steps);

	/* Logical 4480 > device 3000 + carve-out 1000: never fits. */
	ASSERT_EQ(-ENOSPC, cap_run(&k, 3000, 1000));
	ASSERT_TRUE(k.r.device_bytes <= 3000);
	ASSERT_TRUE(k.r.steps > 0);
	/* All-1x fits the device pool: some assignment always works. */
	ASSERT_EQ(0, cap_run(&k, 4480, 1));
	ASSERT_EQ(4480u, k.r.device_bytes);
}

/* Two allocations with one label take the pooled decision. */
TEST(pooled_labels)
{
	struct buddy_heur_params p = params(300000);
	struct prof px = { 0 }, py = { 0 }, pz = { 0 };
	struct buddy_heur_alloc a[4];
	struct buddy_heur_choice c[4];
	struct buddy_heur_result r;

	every(&px, 10, C32, 10);	/* alone 4x */
	every(&py, 10, C64, 6);		/* alone: 40% over 2x and 4/3x: 1x */
	every(&py, 10, RAW, 4);
	every(&pz, 10, RAW, 10);
	a[0] = mk("act", 10, 10, &px);
	a[1] = mk("w", 10, 10, &pz);
	a[2] = mk("act", 10, 10, &py);
	a[3] = mk(NULL, 10, 10, &py);

	ASSERT_EQ(0, buddy_heur_decide(&p, a, 4, c, &r));
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_1X, c[2].target);
	ASSERT_EQ(2u, c[2].unit);

	/* Pooled: 50% C32, 30% C64, 20% RAW: 20% over 2x. */
	p.pool_labels = true;
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 4, c, &r));
	ASSERT_EQ(BUDDY_TARGET_2X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_2X, c[2].target);
	ASSERT_EQ(BUDDY_TARGET_1X, c[1].target);
	ASSERT_EQ(BUDDY_TARGET_1X, c[3].target);	/* NULL: alone */
	ASSERT_EQ(0u, c[0].unit);
	ASSERT_EQ(0u, c[2].unit);
	ASSERT_EQ(2u, c[0].next);
	ASSERT_EQ((size_t)-1, c[2].next);
	ASSERT_EQ(1u, c[1].unit);
	ASSERT_EQ(3u, c[3].unit);
	/* Own fractions: X none over 2x, Y its 40 RAW pairs. */
	ASSERT_EQ(0u, c[0].over);
	ASSERT_EQ(40u, c[2].over);
	ASSERT_TRUE(NEAR(c[2].buddy_frac, 0.4));
	ASSERT_EQ(40u, r.over);
	ASSERT_EQ(400u, r.pairs);
	ASSERT_TRUE(NEAR(r.buddy_frac, 0.1));

	/* Empty labels are never pooled either. */
	a[0].label = "";
	a[2].label = "";
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 4, c, &r));
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_1X, c[2].target);
}

/* Series of different lengths: snapshot i sums the members that have it. */
TEST(pooled_lengths_and_series)
{
	struct buddy_heur_params p = params(300000);
	struct prof px = { 0 };
	/* Exactly one row on the heap: ASan catches a read of a second. */
	uint64_t (*py)[BUDDY_CODE_NR] = calloc(1, sizeof(*py));
	struct buddy_heur_alloc a[2];
	struct buddy_heur_choice c[2];
	struct buddy_heur_point pts[5];

	ASSERT_NE(NULL, py);
	every(&px, 3, Z, 10);
	py[0][Z] = 8;
	py[0][RAW] = 2;
	a[0] = mk("buf", 10, 3, &px);
	a[1] = (struct buddy_heur_alloc){ .label = "buf", .size = 10 * E,
					  .nr_snaps = 1, .hist = py };

	/* Alone: Y is 80% zero, 20% over 4x: 4x. */
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 2, c, NULL));
	ASSERT_EQ(BUDDY_TARGET_16X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, c[1].target);

	/* Pooled: snapshot 0 is 18/20 = 90% zero, 1 and 2 are X only. */
	p.pool_labels = true;
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 2, c, NULL));
	ASSERT_EQ(BUDDY_TARGET_16X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_16X, c[1].target);
	ASSERT_TRUE(c[1].mostly_zero);
	ASSERT_TRUE(NEAR(c[1].buddy_frac, 0.2));

	/* Fig. 9: per snapshot index, over / pairs at the final targets. */
	memset(pts, 0x55, sizeof(pts));
	ASSERT_EQ(3u, buddy_heur_series(a, 2, c, NULL, 0));
	ASSERT_EQ(3u, buddy_heur_series(a, 2, c, pts, 5));
	ASSERT_EQ(20u, pts[0].pairs);
	ASSERT_EQ(2u, pts[0].over);
	ASSERT_TRUE(NEAR(pts[0].frac, 0.1));
	ASSERT_EQ(10u, pts[1].pairs);
	ASSERT_EQ(0u, pts[1].over);
	ASSERT_TRUE(pts[1].frac == 0.0);
	ASSERT_EQ(10u, pts[2].pairs);
	ASSERT_EQ(0u, pts[3].pairs);	/* beyond: zeroed */
	ASSERT_TRUE(pts[4].frac == 0.0);

	/* One snapshot 1 entry short of 90%: no 16x for either. */
	py[0][Z] = 7;
	py[0][RAW] = 3;
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 2, c, NULL));
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4X, c[1].target);
	free(py);
}

TEST(series_values)
{
	struct buddy_heur_params p = params(300000);
	struct prof pa = { 0 }, pb = { 0 };
	struct buddy_heur_alloc a[2];
	struct buddy_heur_choice c[2];
	struct buddy_heur_point pts[4];
	struct buddy_heur_result r;
	/* A at 2x: over pairs 1, 3, 2, 0 of 10 (C96/RAW vs C32/C64). */
	static const unsigned int over_a[4] = { 1, 3, 2, 0 };

	for (int s = 0; s < 4; s++) {
		pa.h[s][C96] = over_a[s] > 1 ? 1 : over_a[s];
		pa.h[s][RAW] = over_a[s] > 1 ? over_a[s] - 1 : 0;
		pa.h[s][C64] = 10 - over_a[s] - 2;
		pa.h[s][C32] = 2;
		/* B: 30 entries, all C96 (4/3x): never over. */
		pb.h[s][C96] = 30;
	}
	a[0] = mk("a", 10, 4, &pa);
	a[1] = mk("b", 30, 4, &pb);
	ASSERT_EQ(0, buddy_heur_decide(&p, a, 2, c, &r));
	ASSERT_EQ(BUDDY_TARGET_2X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_4_3X, c[1].target);
	ASSERT_EQ(4u, buddy_heur_series(a, 2, c, pts, 4));
	for (int s = 0; s < 4; s++) {
		ASSERT_EQ(40u, pts[s].pairs);
		ASSERT_EQ(over_a[s], pts[s].over);
		ASSERT_TRUE(NEAR(pts[s].frac, over_a[s] / 40.0));
	}
	ASSERT_EQ(6u, r.over);
	ASSERT_TRUE(NEAR(r.buddy_frac, 6.0 / 160));
	/* 10 * 128 + 30 * 128 logical over 10 * 64 + 30 * 96 device. */
	ASSERT_TRUE(NEAR(r.ratio, 5120.0 / 3520));
}

/* The comparison points on a known program. */
TEST(compare_known)
{
	struct buddy_heur_params p = params(300000);
	struct prof pa = { 0 }, pb = { 0 }, pz = { 0 };
	struct buddy_heur_alloc a[3];
	struct buddy_heur_choice c[3];
	struct buddy_heur_cmp k;

	every(&pa, 1, C32, 10);
	every(&pb, 1, RAW, 10);
	a[0] = mk("a", 10, 1, &pa);
	a[1] = mk("b", 10, 1, &pb);

	/* Stored 320 + 1280 of 2560: ideal 1.6, naive 4/3x. */
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 2, c, &k));
	ASSERT_TRUE(NEAR(k.ideal_ratio, 1.6));
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.naive_target);
	ASSERT_TRUE(NEAR(k.naive.ratio, 2560.0 / 1920));
	ASSERT_TRUE(NEAR(k.naive.buddy_frac, 0.5));
	ASSERT_TRUE(NEAR(k.per_alloc.ratio, 1.6));
	ASSERT_TRUE(k.per_alloc.buddy_frac == 0.0);
	ASSERT_TRUE(NEAR(k.plus16x.ratio, 1.6));
	ASSERT_TRUE(NEAR(k.best.ratio, 4.0));
	ASSERT_TRUE(NEAR(k.best.buddy_frac, 0.5));
	ASSERT_EQ(1000000u, k.best.threshold_ppm);
	ASSERT_EQ(300000u, k.plus16x.threshold_ppm);
	/* choices are the final design's */
	ASSERT_EQ(BUDDY_TARGET_4X, c[0].target);
	ASSERT_EQ(BUDDY_TARGET_1X, c[1].target);

	/* + a zero allocation: ideal 3840 / 1600 = 2.4, naive 2x. */
	every(&pz, 1, Z, 10);
	a[2] = mk("z", 10, 1, &pz);
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 3, c, &k));
	ASSERT_TRUE(NEAR(k.ideal_ratio, 2.4));
	ASSERT_EQ(BUDDY_TARGET_2X, k.naive_target);
	ASSERT_TRUE(NEAR(k.naive.ratio, 2.0));
	ASSERT_TRUE(NEAR(k.naive.buddy_frac, 1.0 / 3));
	ASSERT_TRUE(NEAR(k.per_alloc.ratio, 3840.0 / 1920));
	ASSERT_EQ(0u, k.per_alloc.nr_by_target[0]);
	ASSERT_TRUE(NEAR(k.plus16x.ratio, 3840.0 / 1680));
	ASSERT_EQ(1u, k.plus16x.nr_by_target[0]);
	ASSERT_TRUE(k.plus16x.buddy_frac == 0.0);
	ASSERT_TRUE(NEAR(k.best.ratio, 3840.0 / 720));
	ASSERT_TRUE(NEAR(k.best.buddy_frac, 1.0 / 3));
	ASSERT_EQ(BUDDY_TARGET_16X, c[2].target);

	/* Exactly at a boundary: stored == pairs * 64 is 2x. */
	memset(&pa, 0, sizeof(pa));
	every(&pa, 1, C32, 5);
	every(&pa, 1, C96, 5);
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 1, c, &k));
	ASSERT_TRUE(NEAR(k.ideal_ratio, 2.0));
	ASSERT_EQ(BUDDY_TARGET_2X, k.naive_target);
	pa.h[0][C96]++;		/* 736 stored bytes > 11 pairs * 64 */
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 1, c, &k));
	ASSERT_EQ(BUDDY_TARGET_4_3X, k.naive_target);

	/* All zero: infinite, naive 4x (never 16x). */
	ASSERT_EQ(0, buddy_heur_compare(&p, &a[2], 1, c, &k));
	ASSERT_TRUE(isinf(k.ideal_ratio));
	ASSERT_EQ(BUDDY_TARGET_4X, k.naive_target);
	ASSERT_TRUE(NEAR(k.plus16x.ratio, 16.0));

	/* No pairs: 1x, ideal 0. */
	a[0].nr_snaps = 0;
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 1, c, &k));
	ASSERT_TRUE(k.ideal_ratio == 0.0);
	ASSERT_EQ(BUDDY_TARGET_1X, k.naive_target);
}

/* The paper's capacity: carve-out 3x the device pool. */
TEST(compare_capacity)
{
	struct buddy_heur_params p = params(300000);
	struct prof pz = { 0 }, pr = { 0 };
	struct buddy_heur_alloc a[5];
	struct buddy_heur_choice c[5];
	struct buddy_heur_cmp k;

	every(&pz, 10, Z, 100);
	every(&pr, 10, C32, 100);
	for (int i = 0; i < 4; i++)
		a[i] = mk("z", 100, 10, &pz);
	a[4] = mk("c", 100, 10, &pr);
	/* 500 entries = 64000 logical; device 16000, carve-out 48000. */
	p.device_bytes = 16000;
	p.carveout_bytes = 48000;
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 5, c, &k));
	/* 16x where possible needs 57600 carve-out: steps. */
	ASSERT_TRUE(k.plus16x.steps > 0);
	ASSERT_TRUE(k.plus16x.buddy_bytes <= 48000);
	ASSERT_TRUE(k.plus16x.device_bytes <= 16000);
	ASSERT_TRUE(k.plus16x.ratio >= k.per_alloc.ratio);
	/* 4x everywhere needs exactly 16000 + 48000. */
	ASSERT_EQ(0u, k.per_alloc.steps);
	ASSERT_TRUE(NEAR(k.per_alloc.ratio, 4.0));
	ASSERT_EQ(BUDDY_TARGET_4X, k.naive_target);
	ASSERT_TRUE(NEAR(k.naive.ratio, 4.0));
	ASSERT_TRUE(NEAR(k.best.ratio, 4.0));	/* capacity-limited */

	/* A smaller carve-out steps the naive target as a whole. */
	p.carveout_bytes = 47999;
	p.device_bytes = 0;
	ASSERT_EQ(0, buddy_heur_compare(&p, a, 5, c, &k));
	ASSERT_EQ(BUDDY_TARGET_4X, k.naive_target);
	ASSERT_EQ(1u, k.naive.steps);
	ASSERT_EQ(5u, k.naive.nr_by_target[2]);
	/* The per-allocation design steps a single allocation. */
	ASSERT_EQ(1u, k.per_alloc.steps);
	ASSERT_EQ(1u, k.per_alloc.nr_by_target[2]);

	/* Too small a device pool: every scheme fails. */
	p.device_bytes = 100;
	ASSERT_EQ(-ENOSPC, buddy_heur_compare(&p, a, 5, c, &k));
	ASSERT_EQ(-ENOSPC, k.naive.err);
	ASSERT_EQ(-ENOSPC, k.per_alloc.err);
	ASSERT_EQ(-ENOSPC, k.plus16x.err);
	ASSERT_EQ(-ENOSPC, k.best.err);
}

/* Random profiles: a higher threshold never lowers ratio or buddy accesses. */
TEST(sweep_monotone)
{
	enum { N = 40, S = 10 };
	static const uint32_t fig10[BUDDY_HEUR_SWEEP_NR] = BUDDY_HEUR_SWEEP_PPM;
	static struct prof pr[N];
	struct buddy_heur_alloc a[N];
	struct buddy_heur_choice c[N], d[N];
	struct buddy_heur_result res[BUDDY_HEUR_SWEEP_NR], r, prev;
	struct buddy_heur_params p = params(0);
	struct buddy_heur_cmp k;
	struct datagen_rng rng;
	static const char *const labels[] = { "a", "b", "c", "d", "e", NULL };

	datagen_seed(&rng, 42);
	for (int i = 0; i < N; i++) {
		uint32_t w[BUDDY_CODE_NR];
		unsigned int entries = 1 + datagen_below(&rng, 200), sum = 0;

		memset(&pr[i], 0, sizeof(pr[i]));
		/* skewed mixtures: one dominant code per allocation */
		for (int k2 = 0; k2 < BUDDY_CODE_NR; k2++)
			sum += w[k2] = datagen_below(&rng, 10);
		w[datagen_below(&rng, BUDDY_CODE_NR)] += 40;
		sum += 40;
		for (int s = 0; s < S; s++) {
			unsigned int left = entries;

			for (int e = 0; e < (int)entries && left; e++) {
				uint32_t x = datagen_below(&rng, sum);
				int k2 = 0;

				while (x >= w[k2])
					x -= w[k2++];
				pr[i].h[s][k2]++;
				left--;
			}
		}
		a[i] = mk(labels[i % 6], entries, 1 + i % S, &pr[i]);
	}

	for (int pool = 0; pool < 2; pool++) {
		p.pool_labels = pool;
		memset(&prev, 0, sizeof(prev));
		for (uint32_t thr = 0; thr <= 1000000; thr += 25000) {
			p.threshold_ppm = thr;
			ASSERT_EQ(0, buddy_heur_decide(&p, a, N, c, &r));
			ASSERT_TRUE(r.ratio >= prev.ratio)
				TH_LOG("thr %u pool %d", thr, pool);
			ASSERT_TRUE(r.over >= prev.over);
			for (int i = 0; i < N && !pool; i++)
				ASSERT_TRUE((u128)c[i].over * 1000000 <=
					    (u128)thr * c[i].pairs);
			prev = r;
		}

		/* The Fig. 10 helper matches single decisions. */
		p.threshold_ppm = 0;
		ASSERT_EQ(0, buddy_heur_sweep(&p, a, N, fig10,
					      BUDDY_HEUR_SWEEP_NR, d, res));
		for (int t = 0; t < BUDDY_HEUR_SWEEP_NR; t++) {
			p.threshold_ppm = fig10[t];
			ASSERT_EQ(0, buddy_heur_decide(&p, a, N, c, &r));
			ASSERT_EQ(fig10[t], res[t].threshold_ppm);
			ASSERT_EQ(r.device_bytes, res[t].device_bytes);
			ASSERT_EQ(r.over, res[t].over);
			if (t)
				ASSERT_TRUE(res[t].ratio >= res[t - 1].ratio);
		}
		ASSERT_EQ(0, memcmp(c, d, sizeof(c)));	/* last threshold */

		/* best bounds every threshold; +16x never below per_alloc. */
		p.threshold_ppm = 300000;
		ASSERT_EQ(0, buddy_heur_compare(&p, a, N, c, &k));
		ASSERT_TRUE(k.best.ratio >= res[BUDDY_HEUR_SWEEP_NR - 1].ratio);
		ASSERT_TRUE(k.best.ratio >= prev.ratio);	/* 100% */
		ASSERT_TRUE(k.plus16x.ratio >= k.per_alloc.ratio);
		ASSERT_TRUE(NEAR(k.plus16x.ratio, res[2].ratio));
	}
}

TEST_HARNESS_MAIN
