/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * calib.h - CSWAP's codec-time model (Chen et al., "CSWAP", Section IV-C):
 * a linear regression of a codec's time (or output size) on the size and
 * the sparsity of a tensor, and its relative absolute error (userspace).
 *
 * The model is y = c0 + c1 * size + c2 * sparsity + c3 * size * sparsity:
 * time grows with size at a per-byte cost that sparsity changes (ZVC and
 * CSR write less for sparser data).  "buddyctl calibrate" fits one per
 * codec and direction and writes them as JSON; a policy evaluates them with
 * calib_predict() (or the same four products in another language).
 */
#ifndef BUDDY_TOOLS_CALIB_H
#define BUDDY_TOOLS_CALIB_H

#include <stddef.h>

#define CALIB_NFEAT	4

/* One timed run: tensor size in bytes, fraction of zeros, the measure. */
struct calib_sample {
	double size;
	double sparsity;
	double y;
};

/**
 * struct calib_model - a fitted model.
 * @coef:	c0..c3 as in the header comment.
 * @rae:	relative absolute error of the model fitted on the even-numbered
 *		samples, measured on the odd-numbered ones (held out), as CSWAP
 *		defines it: sum |pred - y| / sum |mean(y) - y|.  NAN when the
 *		held-out measures are all equal.
 * @n:		number of samples; @coef is fitted on all of them.
 */
struct calib_model {
	double coef[CALIB_NFEAT];
	double rae;
	size_t n;
};

double calib_predict(const double coef[CALIB_NFEAT], double size,
		     double sparsity);

/*
 * Least squares of @n samples into @coef.  -EINVAL for fewer than
 * CALIB_NFEAT samples, -EDOM when they do not determine the model (fewer
 * than two sizes or two sparsities).
 */
int calib_fit(const struct calib_sample *s, size_t n,
	      double coef[CALIB_NFEAT]);

/* CSWAP's RAE of @coef over @n samples; NAN if all measures are equal. */
double calib_rae(const struct calib_sample *s, size_t n,
		 const double coef[CALIB_NFEAT]);

/*
 * Fit on the even samples, RAE on the odd ones, then fit on all: @m.
 * Errors as calib_fit() (needs the even half to determine the model).
 */
int calib_model_fit(const struct calib_sample *s, size_t n,
		    struct calib_model *m);

#endif /* BUDDY_TOOLS_CALIB_H */
