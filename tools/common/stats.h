/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - order statistics of a few doubles, for the tools and
 * benchmarks that repeat a measurement: qsort()'s comparison, the median,
 * quantiles, and the judgement of a paired comparison (the median of
 * block pairs' rate ratios, with its quartiles).  Header-only; tested by
 * selftests/core/stats_test.c.
 */
#ifndef BUDDY_STATS_H
#define BUDDY_STATS_H

#include <math.h>
#include <stdlib.h>

/* qsort() comparison of two doubles, ascending. */
static inline int buddy_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median of @n (> 0) values, which it sorts in place; of an even
 * count the mean of the two middle ones.
 */
static inline double buddy_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), buddy_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The @p-quantile (0 <= @p <= 1) of @n (> 0) values already sorted
 * ascending: linear interpolation between the closest ranks (R's type 7,
 * numpy's default), so p = 0.5 is buddy_median()'s value, 0.25 and 0.75
 * the quartiles, 0 and 1 the extremes.
 */
static inline double buddy_quantile_sorted(const double *v, unsigned int n,
					   double p)
{
	double h = (n - 1) * p;
	unsigned int i = (unsigned int)h;

	if (p <= 0)
		return v[0];
	if (i >= n - 1)
		return v[n - 1];
	return v[i] + (h - i) * (v[i + 1] - v[i]);
}

/* What buddy_paired_judge() concludes of "A >= factor x B". */
struct buddy_paired {
	double median;		/* of the pairs' ratios rate_a / rate_b */
	double q1, q3;		/* the ratios' lower and upper quartile */
	unsigned int n;		/* pairs counted */
	unsigned int skipped;	/* pairs with a rate not finite and > 0 */
	int met;		/* median >= factor */
};

/*
 * Judge "A runs at least @factor x as fast as B" from @n block pairs: pair
 * i ran the same work on A and on B back to back, at rates @rate_a[i] and
 * @rate_b[i] (any unit, the same on both sides).  Each pair gives one
 * ratio, rate_a / rate_b, written to @ratio (scratch of @n doubles, left
 * sorted); the judgement is on their median, with the quartiles as the
 * spread.  A load that slows both sides of a pair leaves its ratio alone;
 * one that hits one side moves one ratio, which the median ignores.  A
 * pair with a rate that is not finite and positive (a block too short for
 * the clock, a failed timing) is skipped.  Returns 0, or -1 (@res->n 0,
 * nothing judged) when fewer than half of the pairs are left.
 */
static inline int buddy_paired_judge(const double *rate_a,
				     const double *rate_b, unsigned int n,
				     double factor, double *ratio,
				     struct buddy_paired *res)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (isfinite(rate_a[i]) && rate_a[i] > 0 &&
		    isfinite(rate_b[i]) && rate_b[i] > 0)
			ratio[k++] = rate_a[i] / rate_b[i];
	res->skipped = n - k;
	res->n = 0;
	res->met = 0;
	res->median = res->q1 = res->q3 = 0;
	if (!k || 2 * k < n)
		return -1;
	res->n = k;
	res->median = buddy_median(ratio, k);	/* sorts ratio[] */
	res->q1 = buddy_quantile_sorted(ratio, k, 0.25);
	res->q3 = buddy_quantile_sorted(ratio, k, 0.75);
	res->met = res->median >= factor;
	return 0;
}

#endif
