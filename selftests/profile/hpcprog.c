// SPDX-License-Identifier: GPL-2.0
/*
 * hpcprog - the allocation patterns of programs that `buddyctl run` and
 * `buddyctl profile` were not written for, small enough for a test:
 *
 *   hpcprog aligned          posix_memalign, aligned_alloc and memalign
 *                            with 64 KiB, 1 MiB and 2 MiB alignments (hash
 *                            tables, network weights), each checked
 *   hpcprog churn N MB       N steps that allocate MB MiB, fill it and free
 *                            it: N * MB allocated in all, MB live at most
 *   hpcprog upfront P MB     two arrays of MB MiB allocated up front
 *                            (malloc, calloc), then P passes of computing
 *                            that fill them with noise: all the CPU time
 *                            after the last allocation
 *   hpcprog sweep MB P       one array of MB MiB written page by page, P
 *                            times over (a working set of MB MiB)
 *   hpcprog resync MB        one array of MB MiB written, msync'd (written
 *                            back) and written again: in buddy memory the
 *                            second writes fault on resident pages (hits)
 *   hpcprog mixed            four 4 MiB arrays from one call site (one
 *                            label), two compressible, two noise, freed
 *                            together: one target per label fits the worst
 *
 * Prints one checksum line per step; a run in ordinary memory and one
 * under `buddyctl run` must print the same.  Exits 1 on a failed check.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "test_data.h"

#define MiB	(1024UL * 1024)

/* Not compressible: random mantissas (xorshift64). */
static void noise(void *p, size_t n, uint64_t *x)
{
	uint64_t *d = p;

	for (size_t i = 0; i < n / sizeof(*d); i++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		d[i] = *x;
	}
}

static int aligned(void)
{
	static const struct { const char *fn; size_t align, size; } t[] = {
		{ "posix_memalign", 64 << 10, 4 * MiB },
		{ "aligned_alloc", 2 * MiB, 8 * MiB },
		{ "memalign", 1 * MiB, 2 * MiB },
		{ "posix_memalign", 2 * MiB, 3 * MiB + 4096 },
	};
	int bad = 0;

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		void *p = NULL;

		if (!strcmp(t[i].fn, "aligned_alloc"))
			p = aligned_alloc(t[i].align, t[i].size);
		else if (!strcmp(t[i].fn, "memalign"))
			p = memalign(t[i].align, t[i].size);
		else if (posix_memalign(&p, t[i].align, t[i].size))
			p = NULL;
		if (!p || (uintptr_t)p % t[i].align) {
			fprintf(stderr, "hpcprog: %s(%zu, %zu) gave %p\n",
				t[i].fn, t[i].align, t[i].size, p);
			bad = 1;
			continue;
		}
		fill(p, t[i].size, i + 3);
		printf("aligned %s %zu %zu %016llx\n", t[i].fn, t[i].align,
		       t[i].size, (unsigned long long)sum(p, t[i].size));
		free(p);
	}
	return bad;
}

static int churn(unsigned int n, size_t mb)
{
	for (unsigned int i = 0; i < n; i++) {
		char *p = malloc(mb * MiB);

		if (!p)
			return 1;
		fill(p, mb * MiB, i + 1);
		printf("churn %u %016llx\n", i, (unsigned long long)sum(p, mb * MiB));
		free(p);
	}
	return 0;
}

static int upfront(unsigned int passes, size_t mb)
{
	char *a = malloc(mb * MiB), *b = calloc(mb, MiB);
	uint64_t x = 88172645463325252ULL;

	if (!a || !b)
		return 1;
	memset(a, 0, mb * MiB);
	for (unsigned int i = 0; i < passes; i++) {
		noise(a, mb * MiB, &x);
		noise(b, mb * MiB, &x);
	}
	printf("upfront %u %016llx %016llx\n", passes,
	       (unsigned long long)sum(a, mb * MiB),
	       (unsigned long long)sum(b, mb * MiB));
	free(a);
	free(b);
	return 0;
}

static int sweep(size_t mb, unsigned int passes)
{
	unsigned char *p = malloc(mb * MiB);

	if (!p)
		return 1;
	memset(p, 0, mb * MiB);
	for (unsigned int i = 0; i < passes; i++)
		for (size_t o = 0; o < mb * MiB; o += 4096)
			p[o + i % 4096] += i + 1;
	printf("sweep %016llx\n", (unsigned long long)sum(p, mb * MiB));
	free(p);
	return 0;
}

static int resync(size_t mb)
{
	unsigned char *p = malloc(mb * MiB);
	uintptr_t a, end;

	if (!p)
		return 1;
	memset(p, 1, mb * MiB);
	/* the whole pages inside the block (all of it in buddy memory) */
	a = ((uintptr_t)p + 4095) & ~4095UL;
	end = ((uintptr_t)p + mb * MiB) & ~4095UL;
	if (end > a && msync((void *)a, end - a, MS_SYNC))
		perror("hpcprog: msync");
	for (uintptr_t o = a; o < end; o += 4096)
		*(unsigned char *)o += 1;
	printf("resync %016llx\n", (unsigned long long)sum(p, mb * MiB));
	free(p);
	return 0;
}

static __attribute__((noinline)) void *one_site(size_t n)
{
	return malloc(n);
}

static int mixed(void)
{
	uint64_t x = 2463534242ULL;
	void *p[4];

	for (int i = 0; i < 4; i++) {
		p[i] = one_site(4 * MiB);
		if (!p[i])
			return 1;
		if (i < 2)
			fill(p[i], 4 * MiB, i + 1);
		else
			noise(p[i], 4 * MiB, &x);
	}
	for (int i = 0; i < 4; i++) {
		printf("mixed %d %016llx\n", i, (unsigned long long)sum(p[i], 4 * MiB));
		free(p[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	unsigned long a = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	unsigned long b = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(m, "aligned"))
		return aligned();
	if (!strcmp(m, "churn") && a && b)
		return churn(a, b);
	if (!strcmp(m, "upfront") && b)
		return upfront(a, b);
	if (!strcmp(m, "sweep") && a && b)
		return sweep(a, b);
	if (!strcmp(m, "resync") && a)
		return resync(a);
	if (!strcmp(m, "mixed"))
		return mixed();
	fprintf(stderr, "usage: hpcprog aligned | churn N MB | upfront P MB | sweep MB P | resync MB | mixed\n");
	return 2;
}
