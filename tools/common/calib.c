// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * calib.c - least-squares fit of CSWAP's codec-time model (calib.h).
 *
 * Four unknowns: the normal equations, with every feature scaled by its
 * largest magnitude first (sizes are ~1e6, sparsities ~1), solved by
 * Gaussian elimination with partial pivoting.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "calib.h"

static void features(double size, double sparsity, double f[CALIB_NFEAT])
{
	f[0] = 1.0;
	f[1] = size;
	f[2] = sparsity;
	f[3] = size * sparsity;
}

double calib_predict(const double coef[CALIB_NFEAT], double size,
		     double sparsity)
{
	double f[CALIB_NFEAT], y = 0;
	int i;

	features(size, sparsity, f);
	for (i = 0; i < CALIB_NFEAT; i++)
		y += coef[i] * f[i];
	return y;
}

int calib_fit(const struct calib_sample *s, size_t n,
	      double coef[CALIB_NFEAT])
{
	double a[CALIB_NFEAT][CALIB_NFEAT + 1] = { { 0 } };
	double scale[CALIB_NFEAT] = { 0 }, f[CALIB_NFEAT];
	size_t k;
	int i, j, r;

	if (n < CALIB_NFEAT)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		features(s[k].size, s[k].sparsity, f);
		for (i = 0; i < CALIB_NFEAT; i++)
			if (fabs(f[i]) > scale[i])
				scale[i] = fabs(f[i]);
	}
	for (i = 0; i < CALIB_NFEAT; i++)
		if (!(scale[i] > 0))
			return -EDOM;	/* a feature that is always zero */
	for (k = 0; k < n; k++) {
		features(s[k].size, s[k].sparsity, f);
		for (i = 0; i < CALIB_NFEAT; i++)
			f[i] /= scale[i];
		for (i = 0; i < CALIB_NFEAT; i++) {
			for (j = 0; j < CALIB_NFEAT; j++)
				a[i][j] += f[i] * f[j];
			a[i][CALIB_NFEAT] += f[i] * s[k].y;
		}
	}
	for (i = 0; i < CALIB_NFEAT; i++) {
		int p = i;

		for (r = i + 1; r < CALIB_NFEAT; r++)
			if (fabs(a[r][i]) > fabs(a[p][i]))
				p = r;
		/* Scaled features: a pivot this small means collinear ones. */
		if (fabs(a[p][i]) < 1e-9 * n)
			return -EDOM;
		for (j = 0; j <= CALIB_NFEAT; j++) {
			double t = a[i][j];

			a[i][j] = a[p][j];
			a[p][j] = t;
		}
		for (r = 0; r < CALIB_NFEAT; r++) {
			double m;

			if (r == i)
				continue;
			m = a[r][i] / a[i][i];
			for (j = i; j <= CALIB_NFEAT; j++)
				a[r][j] -= m * a[i][j];
		}
	}
	for (i = 0; i < CALIB_NFEAT; i++)
		coef[i] = a[i][CALIB_NFEAT] / a[i][i] / scale[i];
	return 0;
}

double calib_rae(const struct calib_sample *s, size_t n,
		 const double coef[CALIB_NFEAT])
{
	double mean = 0, num = 0, den = 0;
	size_t k;

	if (!n)
		return NAN;
	for (k = 0; k < n; k++)
		mean += s[k].y;
	mean /= n;
	for (k = 0; k < n; k++) {
		num += fabs(calib_predict(coef, s[k].size, s[k].sparsity) - s[k].y);
		den += fabs(mean - s[k].y);
	}
	return den > 0 ? num / den : NAN;
}

int calib_model_fit(const struct calib_sample *s, size_t n,
		    struct calib_model *m)
{
	struct calib_sample *even, *odd;
	size_t k, ne = 0, no = 0;
	double c[CALIB_NFEAT];
	int ret;

	even = malloc((n / 2 + 1) * sizeof(*even));
	odd = malloc((n / 2 + 1) * sizeof(*odd));
	if (!even || !odd) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++) {
		if (k % 2)
			odd[no++] = s[k];
		else
			even[ne++] = s[k];
	}
	ret = calib_fit(even, ne, c);
	if (ret)
		goto out;
	m->rae = calib_rae(odd, no, c);
	m->n = n;
	ret = calib_fit(s, n, m->coef);
out:
	free(even);
	free(odd);
	return ret;
}
