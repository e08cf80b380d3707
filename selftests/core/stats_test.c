// SPDX-License-Identifier: GPL-2.0
/*
 * tools/common/stats.h: the median, the interpolated quantiles, and the
 * paired judgement dev_bench's goals use (the median of block pairs' rate
 * ratios with its quartiles, "met" at or above the factor), on values with
 * known answers: exact quartiles of odd and even counts, a load that slows
 * both sides of a pair, an outlier on one side, pairs without a valid
 * rate, and the boundary of "met".
 */
#include <math.h>
#include <kselftest_harness.h>
#include "tools/common/stats.h"

#define NEAR(a, b)	(fabs((a) - (b)) < 1e-9)

TEST(median_odd_even)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 4, 1, 3, 2 };
	double one[] = { 7 };

	ASSERT_TRUE(NEAR(3, buddy_median(odd, 5)));
	ASSERT_TRUE(NEAR(2.5, buddy_median(even, 4)));
	ASSERT_TRUE(NEAR(7, buddy_median(one, 1)));
	/* sorted in place */
	ASSERT_TRUE(NEAR(1, odd[0]) && NEAR(5, odd[4]));
}

TEST(quantiles)
{
	const double five[] = { 1, 2, 3, 4, 5 }, four[] = { 1, 2, 3, 4 };
	const double one[] = { 7 }, two[] = { 10, 20 };

	ASSERT_TRUE(NEAR(1, buddy_quantile_sorted(five, 5, 0)));
	ASSERT_TRUE(NEAR(2, buddy_quantile_sorted(five, 5, 0.25)));
	ASSERT_TRUE(NEAR(3, buddy_quantile_sorted(five, 5, 0.5)));
	ASSERT_TRUE(NEAR(4, buddy_quantile_sorted(five, 5, 0.75)));
	ASSERT_TRUE(NEAR(5, buddy_quantile_sorted(five, 5, 1)));
	/* between ranks: (n - 1) p = 0.75, 1.5, 2.25 */
	ASSERT_TRUE(NEAR(1.75, buddy_quantile_sorted(four, 4, 0.25)));
	ASSERT_TRUE(NEAR(2.5, buddy_quantile_sorted(four, 4, 0.5)));
	ASSERT_TRUE(NEAR(3.25, buddy_quantile_sorted(four, 4, 0.75)));
	ASSERT_TRUE(NEAR(12.5, buddy_quantile_sorted(two, 2, 0.25)));
	ASSERT_TRUE(NEAR(7, buddy_quantile_sorted(one, 1, 0.25)));
	ASSERT_TRUE(NEAR(7, buddy_quantile_sorted(one, 1, 1)));
}

/* The quantile at 0.5 is the median, for every count up to 40. */
TEST(quantile_half_is_median)
{
	double v[40], w[40];
	unsigned int n, i, s = 12345;

	for (n = 1; n <= 40; n++) {
		for (i = 0; i < n; i++) {
			s = s * 1103515245u + 12345u;
			v[i] = w[i] = (s >> 16) % 1000 / 10.0;
		}
		qsort(w, n, sizeof(*w), buddy_cmp_double);
		ASSERT_TRUE(NEAR(buddy_median(v, n),
				 buddy_quantile_sorted(w, n, 0.5)));
	}
}

/* Ratios rate_a / rate_b, median and quartiles of the pairs. */
TEST(paired_ratios)
{
	/* ratios 0.4 0.5 0.5 0.6 0.7 (A is the slower side) */
	const double a[] = { 60, 50, 40, 70, 62.5 };
	const double b[] = { 100, 100, 100, 100, 125 };
	double scratch[5];
	struct buddy_paired r;

	ASSERT_EQ(0, buddy_paired_judge(a, b, 5, 0.5, scratch, &r));
	ASSERT_EQ(5u, r.n);
	ASSERT_EQ(0u, r.skipped);
	ASSERT_TRUE(NEAR(0.5, r.median));
	ASSERT_TRUE(NEAR(0.5, r.q1));
	ASSERT_TRUE(NEAR(0.6, r.q3));
	ASSERT_TRUE(r.met);		/* 0.5 >= 0.5: the boundary is met */

	ASSERT_EQ(0, buddy_paired_judge(a, b, 5, 0.501, scratch, &r));
	ASSERT_FALSE(r.met);

	/* the other way round: B / A */
	ASSERT_EQ(0, buddy_paired_judge(b, a, 5, 2.0, scratch, &r));
	ASSERT_TRUE(NEAR(2.0, r.median));
	ASSERT_TRUE(NEAR(100.0 / 60, r.q1));
	ASSERT_TRUE(r.met);
}

/*
 * A host load that slows both blocks of some pairs to a tenth (the case
 * per-round ratios of cells far apart cannot survive) changes nothing;
 * one block slowed alone moves one ratio, which the median rides out.
 */
TEST(paired_load)
{
	double a[9], b[9], scratch[9];
	struct buddy_paired r, q;
	unsigned int i;

	for (i = 0; i < 9; i++) {
		b[i] = 1000;
		a[i] = 3000 + 10.0 * i;		/* ratios 3.00 .. 3.08 */
	}
	ASSERT_EQ(0, buddy_paired_judge(a, b, 9, 3.0, scratch, &r));
	ASSERT_TRUE(NEAR(3.04, r.median));
	ASSERT_TRUE(NEAR(3.02, r.q1));
	ASSERT_TRUE(NEAR(3.06, r.q3));
	for (i = 0; i < 9; i += 2) {
		a[i] /= 10;
		b[i] /= 10;
	}
	ASSERT_EQ(0, buddy_paired_judge(a, b, 9, 3.0, scratch, &q));
	ASSERT_TRUE(NEAR(r.median, q.median));
	ASSERT_TRUE(NEAR(r.q1, q.q1) && NEAR(r.q3, q.q3));
	ASSERT_TRUE(q.met);

	a[8] /= 20;				/* A's block 8 interrupted */
	ASSERT_EQ(0, buddy_paired_judge(a, b, 9, 3.0, scratch, &q));
	ASSERT_TRUE(NEAR(3.03, q.median));
	ASSERT_TRUE(q.met);
	b[3] /= 20;				/* B's block 3 interrupted */
	ASSERT_EQ(0, buddy_paired_judge(a, b, 9, 3.0, scratch, &q));
	ASSERT_TRUE(NEAR(3.04, q.median));
	ASSERT_TRUE(NEAR(3.01, q.q1) && NEAR(3.06, q.q3));
}

/* Pairs without a finite positive rate on both sides are skipped. */
TEST(paired_skipped)
{
	const double a[] = { 2, 0, 4, INFINITY, 6, 8 };
	const double b[] = { 1, 1, 2, 1, NAN, 4 };
	const double c[] = { 0, -1, 4, NAN };
	const double d[] = { 1, 1, 2, 1 };
	double scratch[6];
	struct buddy_paired r;

	ASSERT_EQ(0, buddy_paired_judge(a, b, 6, 2.0, scratch, &r));
	ASSERT_EQ(3u, r.n);		/* 2/1, 4/2, 8/4 */
	ASSERT_EQ(3u, r.skipped);
	ASSERT_TRUE(NEAR(2.0, r.median) && NEAR(2.0, r.q1) &&
		    NEAR(2.0, r.q3));
	ASSERT_TRUE(r.met);

	/* one valid pair of four: fewer than half, nothing judged */
	r.met = 1;
	ASSERT_EQ(-1, buddy_paired_judge(c, d, 4, 1.0, scratch, &r));
	ASSERT_EQ(0u, r.n);
	ASSERT_EQ(3u, r.skipped);
	ASSERT_FALSE(r.met);

	ASSERT_EQ(-1, buddy_paired_judge(a, b, 0, 1.0, scratch, &r));
	ASSERT_EQ(0u, r.n);
	ASSERT_FALSE(r.met);
}

TEST_HARNESS_MAIN
