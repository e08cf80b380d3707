/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test_data.h - what the test programs of buddyctl run (runprog.c,
 * hpcprog.c) write and check: a checksum that a run in ordinary memory
 * and one in buddy memory must agree on, and compressible data.
 */
#ifndef BUDDY_PROFILE_TEST_DATA_H
#define BUDDY_PROFILE_TEST_DATA_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over @n bytes. */
static inline uint64_t sum(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *s++) * 1099511628211ULL;
	return h;
}

/* Compressible but not trivial: small integers as doubles. */
static inline void fill(void *p, size_t n, unsigned int seed)
{
	double *d = p;

	for (size_t i = 0; i < n / sizeof(double); i++)
		d[i] = (double)((i * seed) % 1000);
}

#endif /* BUDDY_PROFILE_TEST_DATA_H */
