// SPDX-License-Identifier: GPL-2.0
/*
 * progress - a known allocation sequence for the progress schedule's tests.
 *
 *   progress [N]
 *
 * Allocates N (default 40) zeroed buffers of 128 KiB, one after the other, from
 * one thread; buffer i has i KiB of zeros then a ramp, so every point of
 * the run has its own compressibility.  After allocating buffer i it frees
 * buffer i - 5, so at most 6 are live: a snapshot taken from within the
 * allocation of buffer i (0-based) sees min(i + 1, 6) of them.  Prints a
 * checksum, the same with or without the profiler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF	(128u << 10)
#define KEEP	5

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40, i;
	uint32_t **p;
	uint64_t sum = 0;

	if (n <= 0 || n > 100000) {
		fprintf(stderr, "progress: N must be in 1..100000\n");
		return 2;
	}
	p = calloc(n, sizeof(*p));
	if (!p)
		return 1;
	for (i = 0; i < n; i++) {
		size_t w, zeros = (size_t)(i % 128) * 1024 / 4;

		/*
		 * calloc: the snapshot taken from within this call reads
		 * the new buffer, which must not hold malloc's free-list
		 * pointers (they differ from run to run with ASLR).
		 */
		p[i] = calloc(1, BUF);
		if (!p[i])
			return 1;
		for (w = 0; w < BUF / 4; w++)
			p[i][w] = w < zeros ? 0 : (uint32_t)(w * (i + 1));
		sum += p[i][BUF / 4 - 1];
		if (i >= KEEP) {
			free(p[i - KEEP]);
			p[i - KEEP] = NULL;
		}
	}
	for (i = 0; i < n; i++)
		free(p[i]);
	free(p);
	printf("progress: %d buffers, checksum %llu\n", n,
	       (unsigned long long)sum);
	return 0;
}
