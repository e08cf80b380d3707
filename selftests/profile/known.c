// SPDX-License-Identifier: GPL-2.0
/*
 * known - allocations of known content for the profile tests.
 *
 *   known [SNAPSHOTS]
 *
 * Makes, each through its own allocation function (so each gets its own
 * label), and fills with content of known compressibility:
 *
 *   zero    1 MiB  calloc          all zero              -> 16x (mostly zero)
 *   random  1 MiB  malloc          xorshift bytes        -> 1x, raw
 *   ramp    1 MiB  posix_memalign  uint32 i              -> BPC c8, 4x
 *   sparse  1 MiB  mmap            float32, 1 in 64 words non-zero
 *   small   1 KiB  malloc          (below the threshold: never tracked)
 *   freed   1 MiB  malloc, freed before the first snapshot (never seen)
 *
 * then asks for SNAPSHOTS (default 3) snapshots with buddyprof_snapshot()
 * (looked up with dlsym, so the program also runs without the interposer),
 * and prints a checksum of its data, the same with or without profiling.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MIB	(1u << 20)

static uint64_t xs = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

static __attribute__((noinline)) void *make_zero(void)
{
	return calloc(1, MIB);
}

static __attribute__((noinline)) void *make_random(void)
{
	uint64_t *p = malloc(MIB);

	for (size_t i = 0; p && i < MIB / 8; i++)
		p[i] = next();
	return p;
}

static __attribute__((noinline)) void *make_ramp(void)
{
	uint32_t *p;

	if (posix_memalign((void **)&p, 64, MIB))
		return NULL;
	for (size_t i = 0; i < MIB / 4; i++)
		p[i] = i;
	return p;
}

static __attribute__((noinline)) void *make_sparse(void)
{
	float *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < MIB / 4; i += 64)
		p[i] = 1.0f + (float)(next() % 1000) / 7.0f;
	return p;
}

static uint64_t sum(const void *p, size_t len)
{
	const uint64_t *w = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len / 8; i++)
		s = s * 31 + w[i];
	return s;
}

int main(int argc, char **argv)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						 "buddyprof_snapshot");
	int n = argc > 1 ? atoi(argv[1]) : 3, i, took = 0;
	void *zero = make_zero(), *rnd = make_random(), *ramp = make_ramp();
	void *sparse = make_sparse();
	char *small = malloc(1024), *freed = malloc(MIB);

	if (!zero || !rnd || !ramp || !sparse || !small || !freed)
		return 1;
	memset(small, 0x5a, 1024);
	memset(freed, 0x33, MIB);
	free(freed);

	for (i = 0; i < n; i++)
		if (snap && !snap())
			took++;
	printf("known: zero %016llx random %016llx ramp %016llx sparse %016llx small %016llx\n",
	       (unsigned long long)sum(zero, MIB), (unsigned long long)sum(rnd, MIB),
	       (unsigned long long)sum(ramp, MIB), (unsigned long long)sum(sparse, MIB),
	       (unsigned long long)sum(small, 1024));
	fprintf(stderr, "known: %d snapshots taken\n", took);
	munmap(sparse, MIB);
	free(zero);
	free(rnd);
	free(ramp);
	free(small);
	return 0;
}
