// SPDX-License-Identifier: GPL-2.0
/*
 * family - three processes, each with buffers of its own known content,
 * all live at one snapshot, for the tests of following every process.
 *
 *   family [EXEC]    the parent: 1 MiB all zero (-> 16x); then a forked
 *                    child, 2 MiB of xorshift bytes (-> 1x); then a child
 *                    that allocates 1 MiB (kept, never freed) and execs
 *                    EXEC (default: itself) as "EXEC child R G": 3 MiB of
 *                    a uint32 ramp (-> 4x, BPC c8); its table must hold
 *                    the ramp only (an exec clears it).  Once all
 *                    three are filled, the exec'd child asks for one
 *                    snapshot with buddyprof_snapshot() (it is the one
 *                    followed in every test, --match included); then all
 *                    free and exit.  R and G are the pipes that say
 *                    "ready" (a byte) and "go" (EOF).
 *
 *   family shared    a parent and its forked child each allocate 1 MiB
 *                    at the same call site after the fork (one label in
 *                    two processes): all zero in the parent, xorshift
 *                    bytes in the child; the parent asks for one snapshot.
 *
 *   family early     a forked child allocates 2 MiB of a uint32 ramp
 *                    (-> 4x, BPC c8), says "ready" and waits; the parent
 *                    then allocates 4 MiB (the snapshot at --first-bytes
 *                    4M, the last to see the child, comes from there),
 *                    lets the child free and exit, reaps it, and goes on
 *                    with 30 more 4 MiB buffers, each zeroed and freed:
 *                    the adaptive schedule thins several times after the
 *                    child is gone.
 *
 * Each process prints a checksum of its buffer, the same with or without
 * the profiler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB	(1u << 20)

static uint64_t sum(const void *p, size_t n)
{
	const uint64_t *q = p;
	uint64_t s = 0;

	for (size_t i = 0; i < n / 8; i++)
		s = s * 31 + q[i];
	return s;
}

static __attribute__((noinline)) void *parent_zero(void)
{
	char *p = malloc(MIB);

	if (p)
		memset(p, 0, MIB);
	return p;
}

/* @bytes of xorshift64 words (incompressible), or of zeros; NULL passes */
static void *fill_random(uint64_t *p, size_t bytes, int zero)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; p && i < bytes / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = zero ? 0 : x;
	}
	return p;
}

/* @bytes of 32-bit words 0, 1, 2, ... (a ramp: 16x); NULL passes */
static void *fill_ramp(uint32_t *p, size_t bytes)
{
	for (size_t i = 0; p && i < bytes / 4; i++)
		p[i] = i;
	return p;
}

static __attribute__((noinline)) void *forked_random(void)
{
	return fill_random(malloc(2 * MIB), 2 * MIB, 0);
}

static __attribute__((noinline)) void *execd_ramp(void)
{
	return fill_ramp(malloc(3 * MIB), 3 * MIB);
}

static __attribute__((noinline)) void *before_exec(void)
{
	char *p = malloc(MIB);

	if (p)
		memset(p, 0x5a, MIB);
	return p;
}

static __attribute__((noinline)) void *shared_site(int child)
{
	return fill_random(malloc(MIB), MIB, !child);
}

static __attribute__((noinline)) void *early_ramp(void)
{
	return fill_ramp(malloc(2 * MIB), 2 * MIB);
}

static __attribute__((noinline)) void *late_chunk(void)
{
	char *p = malloc(4 * MIB);

	if (p)
		memset(p, 0, 4 * MIB);
	return p;
}

/* Wait for EOF on @fd: the parent closed "go". */
static void wait_go(int fd)
{
	char c;

	while (read(fd, &c, 1) > 0)
		;
}

static int execd_child(int rfd, int gfd)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						 "buddyprof_snapshot");
	void *p = execd_ramp();

	if (!p)
		return 1;
	if (snap)
		snap();
	printf("family: exec'd child %016llx\n",
	       (unsigned long long)sum(p, 3 * MIB));
	fflush(stdout);
	if (write(rfd, "b", 1) != 1)
		return 1;
	wait_go(gfd);
	free(p);
	return 0;
}

/*
 * Fork a child with the two pipes of the ready/go handshake (stdout
 * flushed first, so nothing buffered is printed twice): the pid, 0 in the
 * child, -1 on failure.
 */
static pid_t start_child(int ready[2], int go[2])
{
	if (pipe(ready) || pipe(go))
		return -1;
	fflush(stdout);
	return fork();
}

static int shared(void)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						 "buddyprof_snapshot");
	int ready[2], go[2], st;
	pid_t c;
	void *p;
	char b;

	c = start_child(ready, go);
	if (c < 0)
		return 1;
	p = shared_site(!c);	/* one call site in both processes */
	if (!p)
		return 1;
	printf("family: shared, %s %016llx\n", c ? "parent" : "child",
	       (unsigned long long)sum(p, MIB));
	fflush(stdout);
	if (!c) {
		/* unlike child_hold(), no free: the buffer lives to the exit */
		close(go[1]);
		if (write(ready[1], "c", 1) != 1)
			_exit(1);
		wait_go(go[0]);
		_exit(0);
	}
	if (read(ready[0], &b, 1) != 1)
		return 1;
	if (snap)
		snap();
	close(go[1]);
	waitpid(c, &st, 0);
	free(p);
	return !(WIFEXITED(st) && !WEXITSTATUS(st));
}

/*
 * A forked child's life: its buffer @p of @bytes (NULL: exit 1), its sum
 * printed as "family: WHAT %016llx", then ready, hold until go, free, exit.
 */
static __attribute__((noreturn)) void child_hold(void *p, size_t bytes,
						 const char *what, int ready,
						 int go[2])
{
	close(go[1]);
	if (!p)
		_exit(1);
	printf("family: %s %016llx\n", what, (unsigned long long)sum(p, bytes));
	fflush(stdout);
	if (write(ready, "c", 1) != 1)
		_exit(1);
	wait_go(go[0]);
	free(p);
	_exit(0);
}

static int early(void)
{
	int ready[2], go[2], st, i;
	uint64_t s = 0;
	void *p;
	pid_t c;
	char b;

	c = start_child(ready, go);
	if (c < 0)
		return 1;
	if (!c)
		child_hold(early_ramp(), 2 * MIB, "early child", ready[1], go);
	if (read(ready[0], &b, 1) != 1)
		return 1;
	p = late_chunk();	/* the child's last snapshot */
	if (!p)
		return 1;
	s = sum(p, 4 * MIB);
	free(p);
	close(go[1]);
	waitpid(c, &st, 0);
	for (i = 0; i < 30; i++) {
		p = late_chunk();
		if (!p)
			return 1;
		s += sum(p, 4 * MIB);
		free(p);
	}
	printf("family: early parent %016llx\n", (unsigned long long)s);
	return !(WIFEXITED(st) && !WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	const char *exe = argc > 1 ? argv[1] : "/proc/self/exe";
	int ready[2], go[2], st, ok = 1;
	pid_t a, b;
	char c;
	void *p;

	if (argc > 3 && !strcmp(argv[1], "child"))
		return execd_child(atoi(argv[2]), atoi(argv[3]));
	if (argc > 1 && !strcmp(argv[1], "shared"))
		return shared();
	if (argc > 1 && !strcmp(argv[1], "early"))
		return early();
	if (pipe(ready) || pipe(go))
		return 1;
	p = parent_zero();
	if (!p)
		return 1;
	fflush(stdout);

	a = fork();
	if (!a)
		child_hold(forked_random(), 2 * MIB, "forked child", ready[1], go);
	if (read(ready[0], &c, 1) != 1)
		ok = 0;

	b = fork();
	if (!b) {
		char r[16], g[16];

		close(go[1]);
		if (!before_exec())
			_exit(1);
		snprintf(r, sizeof(r), "%d", ready[1]);
		snprintf(g, sizeof(g), "%d", go[0]);
		execl(exe, "famchild", "child", r, g, (char *)NULL);
		_exit(127);
	}
	if (read(ready[0], &c, 1) != 1)
		ok = 0;
	close(go[1]);
	waitpid(a, &st, 0);
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);
	waitpid(b, &st, 0);
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);
	printf("family: parent %s %016llx\n", ok ? "ok" : "FAILED",
	       (unsigned long long)sum(p, MIB));
	free(p);
	return !ok;
}
