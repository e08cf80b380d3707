// SPDX-License-Identifier: GPL-2.0
/*
 * runprog - a program for `buddyctl run`'s tests: every allocation call the
 * interposer takes over, each checked against what the C library promises
 * (zeroed calloc, realloc keeps the contents, alignment, usable size), a
 * fork whose child writes into the parent's malloc'd memory (which must
 * stay private), and an exec of itself.  Prints one checksum line per step,
 * so that a run in ordinary memory and one in buddy memory can be compared;
 * exits 1 on the first failed check.
 *
 *   runprog [all|child|fork]
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_data.h"

#define MiB	(1024 * 1024)

static int failed;

#define CHECK(c, ...) do {						\
	if (!(c)) {							\
		fprintf(stderr, "runprog: FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failed = 1;						\
	}								\
} while (0)

static __attribute__((noinline)) void *site_a(size_t n) { return malloc(n); }
static __attribute__((noinline)) void *site_b(size_t n) { return malloc(n); }

static void all(const char *self, bool do_exec)
{
	size_t n = 4 * MiB, i;
	char *a = site_a(n), *b = site_b(n), *c, *small;
	void *pm = NULL;
	double *z;

	CHECK(a && b, "malloc");
	fill(a, n, 7);
	fill(b, n, 13);
	printf("a %016llx\nb %016llx\n", (unsigned long long)sum(a, n),
	       (unsigned long long)sum(b, n));
	CHECK(malloc_usable_size(a) >= n, "usable %zu < %zu",
	      malloc_usable_size(a), n);
	/* one call site, three times: one label */
	for (i = 0; i < 3; i++) {
		char *l = site_a(n);

		CHECK(l, "malloc loop");
		memset(l, (int)i + 1, n);
		CHECK(l[n - 1] == (char)(i + 1), "loop contents");
		free(l);
	}
	z = calloc(n / sizeof(double), sizeof(double));
	CHECK(z, "calloc");
	for (i = 0; i < n / sizeof(double); i++)
		if (z[i] != 0) {
			CHECK(0, "calloc not zero at %zu", i);
			break;
		}
	free(z);
	/* realloc: grows keeping the contents, shrinks, and to small */
	c = realloc(NULL, 2 * MiB);
	CHECK(c, "realloc(NULL)");
	fill(c, 2 * MiB, 3);
	printf("c %016llx\n", (unsigned long long)sum(c, 2 * MiB));
	c = realloc(c, 6 * MiB);
	CHECK(c, "realloc grow");
	printf("c grown %016llx\n", (unsigned long long)sum(c, 2 * MiB));
	c = realloc(c, 100);
	CHECK(c, "realloc shrink");
	printf("c small %016llx\n", (unsigned long long)sum(c, 100));
	free(c);
	small = malloc(1000);
	CHECK(small, "small");
	small = realloc(small, 3 * MiB);	/* ordinary -> large */
	CHECK(small, "realloc small to large");
	memset(small, 0x5a, 3 * MiB);
	free(small);

	CHECK(!posix_memalign(&pm, 64, 2 * MiB) && !((uintptr_t)pm % 64),
	      "posix_memalign");
	fill(pm, 2 * MiB, 5);
	printf("pm %016llx\n", (unsigned long long)sum(pm, 2 * MiB));
	free(pm);
	pm = aligned_alloc(4096, 2 * MiB);
	CHECK(pm && !((uintptr_t)pm % 4096), "aligned_alloc");
	free(pm);
	pm = memalign(256, 2 * MiB);
	CHECK(pm && !((uintptr_t)pm % 256), "memalign");
	free(pm);
	pm = valloc(2 * MiB);
	CHECK(pm && !((uintptr_t)pm % 4096), "valloc");
	free(pm);

	pm = mmap(NULL, 3 * MiB, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(pm != MAP_FAILED, "mmap");
	CHECK(((char *)pm)[12345] == 0, "mmap not zero");
	fill(pm, 3 * MiB, 11);
	printf("mmap %016llx\n", (unsigned long long)sum(pm, 3 * MiB));
	pm = mremap(pm, 3 * MiB, 5 * MiB, MREMAP_MAYMOVE);
	CHECK(pm != MAP_FAILED, "mremap");
	printf("mremap %016llx\n", (unsigned long long)sum(pm, 3 * MiB));
	CHECK(!munmap(pm, 5 * MiB), "munmap");

	/* fork: the child's writes must not reach the parent's memory */
	{
		uint64_t before = sum(a, n);
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			char *x = malloc(2 * MiB + 1);	/* the child allocates too */
			int bad;

			memset(a, 0xee, n);
			bad = a[n - 1] != (char)0xee;
			if (x) {
				memset(x, 1, 2 * MiB + 1);
				bad |= sum(x, 2 * MiB + 1) == 0;
			}
			free(x);
			free(a);
			_exit(bad ? 3 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid &&
		      WIFEXITED(st) && !WEXITSTATUS(st), "fork child");
		CHECK(sum(a, n) == before,
		      "the forked child's writes reached the parent");
		printf("a after fork %016llx\n", (unsigned long long)sum(a, n));
	}
	free(b);
	/* a stays allocated until exit: its figures come from the exit */
	if (do_exec) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			execl(self, self, "child", (char *)NULL);
			_exit(127);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid &&
		      WIFEXITED(st) && !WEXITSTATUS(st), "exec'd child");
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "child")) {
		char *p = site_b(8 * MiB);

		CHECK(p, "child malloc");
		fill(p, 8 * MiB, 17);
		printf("child %016llx\n", (unsigned long long)sum(p, 8 * MiB));
		free(p);
	} else {
		all(argv[0], strcmp(mode, "noexec"));
	}
	return failed;
}
