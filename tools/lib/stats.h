/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - order statistics of a few doubles, for the tools and
 * benchmarks that repeat a measurement: qsort()'s comparison, and the
 * median.  Header-only.
 */
#ifndef BUDDY_STATS_H
#define BUDDY_STATS_H

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

#endif
