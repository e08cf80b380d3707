// SPDX-License-Identifier: GPL-2.0
/*
 * calib_test.c - the fit of CSWAP's codec-time model (tools/common/calib.c):
 * synthetic timings drawn from a known model are fitted back to it, with
 * and without noise; RAE is CSWAP's definition; samples that do not
 * determine the model are refused.
 */
#include <math.h>

#include <kselftest_harness.h>

#include "tools/common/calib.h"
#include "tools/common/datagen.h"

/* 20 us fixed, 0.3 ns/byte, -10 us at full sparsity, -0.2 ns/byte more. */
static const double known[CALIB_NFEAT] = { 2e-5, 3e-10, -1e-5, -2e-10 };

/* A grid of 8 sizes x 6 sparsities, twice, y = model * (1 + noise). */
static size_t grid(struct calib_sample *s, double noise, u64 seed)
{
	static const double sizes[] = { 65536, 131072, 262144, 1 << 20,
					3 << 20, 1 << 23, 5 << 22, 1 << 25 };
	static const double sps[] = { 0.2, 0.35, 0.5, 0.65, 0.8, 0.9 };
	struct datagen_rng r;
	size_t i, j, k, n = 0;

	datagen_seed(&r, seed);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		for (j = 0; j < ARRAY_SIZE(sps); j++)
			for (k = 0; k < 2; k++, n++) {
				double u = datagen_below(&r, 2000001) / 1e6 - 1.0;

				s[n].size = sizes[i];
				s[n].sparsity = sps[j];
				s[n].y = calib_predict(known, sizes[i], sps[j]) *
					 (1.0 + noise * u);
			}
	return n;
}

TEST(exact_timings_recover_the_model)
{
	struct calib_sample s[96];
	struct calib_model m;
	size_t n = grid(s, 0, 1);
	int i;

	ASSERT_EQ(96, n);
	ASSERT_EQ(0, calib_model_fit(s, n, &m));
	for (i = 0; i < CALIB_NFEAT; i++)
		EXPECT_LE(fabs(m.coef[i] - known[i]), 1e-9 * fabs(known[i]))
			TH_LOG("c%d = %g, want %g", i, m.coef[i], known[i]);
	EXPECT_LE(m.rae, 1e-9);
	EXPECT_EQ(96, m.n);
}

TEST(noisy_timings_recover_it_within_the_noise)
{
	struct calib_sample s[96];
	struct calib_model m;
	size_t n = grid(s, 0.05, 2);	/* +-5% uniform noise */

	ASSERT_EQ(0, calib_model_fit(s, n, &m));
	/* The per-byte terms dominate large tensors: within 5%. */
	EXPECT_LE(fabs(m.coef[1] - known[1]), 0.05 * fabs(known[1]));
	EXPECT_LE(fabs(m.coef[3] - known[3]), 0.05 * fabs(known[3]));
	/* Prediction at an unseen point within the noise. */
	EXPECT_LE(fabs(calib_predict(m.coef, 2e7, 0.6) -
		       calib_predict(known, 2e7, 0.6)),
		  0.05 * calib_predict(known, 2e7, 0.6));
	/* Held-out RAE is small, but not zero: noise is not fitted. */
	EXPECT_GT(m.rae, 0.001);
	EXPECT_LT(m.rae, 0.1);
}

/* RAE = sum |pred - y| / sum |mean - y|: here (1 + 1) / (2 + 2). */
TEST(rae_is_cswaps_definition)
{
	const double zero[CALIB_NFEAT] = { 0 };
	const double two[CALIB_NFEAT] = { 2, 0, 0, 0 };
	struct calib_sample s[2] = { { 1, 0.5, 1 }, { 1, 0.5, 5 } };

	/* Predict 2 for both: |2-1| + |2-5| = 4; mean 3: |3-1| + |3-5| = 4. */
	EXPECT_EQ(1.0, calib_rae(s, 2, two));
	/* Predict 0: (1 + 5) / 4. */
	EXPECT_EQ(1.5, calib_rae(s, 2, zero));
	s[1].y = 1;
	EXPECT_TRUE(isnan(calib_rae(s, 2, zero)));
}

TEST(undetermined_samples_refused)
{
	struct calib_sample s[96];
	double c[CALIB_NFEAT];
	size_t n = grid(s, 0, 3), k;

	ASSERT_EQ(-EINVAL, calib_fit(s, 3, c));
	for (k = 0; k < n; k++)		/* one sparsity only */
		s[k].sparsity = 0.5;
	ASSERT_EQ(-EDOM, calib_fit(s, n, c));
	n = grid(s, 0, 3);
	for (k = 0; k < n; k++)		/* one size only */
		s[k].size = 4096;
	ASSERT_EQ(-EDOM, calib_fit(s, n, c));
	n = grid(s, 0, 3);
	for (k = 0; k < n; k++)		/* sparsity always 0: a zero column */
		s[k].sparsity = 0;
	ASSERT_EQ(-EDOM, calib_fit(s, n, c));
}

TEST_HARNESS_MAIN
