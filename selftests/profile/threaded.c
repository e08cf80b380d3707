// SPDX-License-Identifier: GPL-2.0
/*
 * threaded - threads that allocate, fill and free while being snapshotted.
 *
 *   threaded [SECONDS] [THREADS] [MIN_ALLOCS]
 *   threaded --check DIR       check the dumps of buddyctl profile -k DIR
 *
 * Every thread keeps a ring of 8 live allocations of 64..304 KiB made by
 * malloc, calloc, posix_memalign or anonymous mmap in turn, replacing one
 * at a time.  Each allocation of SIZE bytes is filled with the words
 *
 *	0x5a5a000000000000 | (SIZE / 1024) << 24 | word index
 *
 * so that a dump of it holds, at word i, either 0 (not written yet: the
 * memory comes fresh from mmap, M_MMAP_THRESHOLD is 64 KiB) or exactly that
 * word.  Anything else means a snapshot showed content that this allocation
 * never held.  Prints one line that does not depend on timing.
 *
 * Each thread runs for SECONDS and until it has made MIN_ALLOCS allocations
 * (default 64), so that a loaded machine slows the run down instead of
 * shrinking the work the test counts on.
 *
 * --check reads DIR/index.tsv and verifies every dump that way; it prints
 * "checked N dumps, M words, K bad" and exits 1 if any word is bad.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define RING	8

static double seconds = 2;
static unsigned long min_allocs = 64;

struct slot {
	void *p;
	size_t size;
	int how;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void release(struct slot *s)
{
	if (!s->p)
		return;
	if (s->how == 3)
		munmap(s->p, s->size);
	else
		free(s->p);
	s->p = NULL;
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919 + 1;
	struct slot ring[RING] = { { 0 } };
	double end = now() + seconds;
	unsigned long n = 0;
	int i = 0;

	while (now() < end || n < min_allocs) {
		struct slot *s = &ring[i++ % RING];
		size_t size = (64 + (rand_r(&seed) % 16) * 16) << 10;
		uint64_t *w;

		release(s);
		s->size = size;
		s->how = n++ % 4;
		switch (s->how) {
		case 0:
			s->p = malloc(size);
			break;
		case 1:
			s->p = calloc(1, size);
			break;
		case 2:
			if (posix_memalign(&s->p, 64, size))
				s->p = NULL;
			break;
		default:
			s->p = mmap(NULL, size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (s->p == MAP_FAILED)
				s->p = NULL;
			break;
		}
		if (!s->p)
			abort();
		w = s->p;
		for (size_t k = 0; k < size / 8; k++)
			w[k] = 0x5a5a000000000000ULL |
			       (uint64_t)(size >> 10) << 24 | k;
	}
	for (i = 0; i < RING; i++)
		release(&ring[i]);
	return (void *)n;
}

static int check(const char *dir)
{
	char path[4096], line[1024];
	unsigned long files = 0, words = 0, bad = 0;
	FILE *idx;

	snprintf(path, sizeof(path), "%s/index.tsv", dir);
	idx = fopen(path, "r");
	if (!idx) {
		perror(path);
		return 1;
	}
	if (!fgets(line, sizeof(line), idx))	/* header */
		return 1;
	while (fgets(line, sizeof(line), idx)) {
		unsigned long long size, stride;
		char file[512], fpath[4700];
		uint64_t w;
		size_t k = 0;
		FILE *f;

		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %llu %llu %511s",
			   &size, &stride, file) != 3)
			return 1;
		if (stride != 1) {
			fprintf(stderr, "%s: sampled (stride %llu)\n", file, stride);
			return 1;
		}
		snprintf(fpath, sizeof(fpath), "%s/%s", dir, file);
		f = fopen(fpath, "r");
		if (!f) {
			perror(fpath);
			return 1;
		}
		while (fread(&w, 8, 1, f) == 1) {
			uint64_t want = 0x5a5a000000000000ULL |
					(uint64_t)(size >> 10) << 24 | k;

			if (w && (k >= size / 8 || w != want)) {
				if (bad++ < 5)
					fprintf(stderr, "%s: word %zu is %016llx, not 0 or %016llx\n",
						file, k, (unsigned long long)w,
						(unsigned long long)want);
			}
			k++;
			words++;
		}
		fclose(f);
		files++;
	}
	fclose(idx);
	printf("checked %lu dumps, %lu words, %lu bad\n", files, words, bad);
	return bad != 0 || !files;
}

int main(int argc, char **argv)
{
	int nt = argc > 2 ? atoi(argv[2]) : 4, i;
	pthread_t t[64];
	unsigned long total = 0;

	if (argc > 2 && !strcmp(argv[1], "--check"))
		return check(argv[2]);
	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 3)
		min_allocs = strtoul(argv[3], NULL, 0);
	if (nt < 1 || nt > 64)
		return 2;
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	for (i = 0; i < nt; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
			return 1;
	for (i = 0; i < nt; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (unsigned long)r;
	}
	fprintf(stderr, "threaded: %lu allocations\n", total);
	printf("threaded: %d threads done\n", nt);
	return 0;
}
