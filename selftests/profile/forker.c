// SPDX-License-Identifier: GPL-2.0
/*
 * forker - fork and exec children under the interposer.
 *
 *   forker            the parent: two tracked buffers (1 MiB, 2 MiB), then
 *                     a forked child that frees both inherited buffers and
 *                     allocates 3 MiB ones, a child that execs "forker
 *                     child", and system("true") (posix_spawn, CLONE_VM);
 *                     then it asks for a snapshot, which must still show
 *                     both of its own buffers and none of 3 MiB.
 *   forker child      allocates and frees 3 MiB buffers, prints a line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB	(1u << 20)

static void churn(void)
{
	for (int i = 0; i < 50; i++) {
		char *p = malloc(3 * MIB);

		if (!p)
			exit(1);
		memset(p, i, 3 * MIB);
		free(p);
	}
}

int main(int argc, char **argv)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						 "buddyprof_snapshot");
	char *a, *b;
	int st, ok = 1;
	pid_t p;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		churn();
		printf("forker: exec'd child done\n");
		return 0;
	}
	a = malloc(MIB);
	b = malloc(2 * MIB);
	if (!a || !b)
		return 1;
	memset(a, 1, MIB);
	memset(b, 2, 2 * MIB);
	fflush(stdout);

	p = fork();
	if (!p) {
		free(a);	/* the parent's: must stay in its table */
		free(b);
		churn();
		printf("forker: forked child done\n");
		fflush(stdout);
		_exit(0);
	}
	waitpid(p, &st, 0);
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);

	p = fork();
	if (!p) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(p, &st, 0);
	ok &= WIFEXITED(st) && !WEXITSTATUS(st);
	fflush(stdout);
	ok &= system("true") == 0;

	if (snap)
		snap();
	printf("forker: parent %s, a[7]=%d b[7]=%d\n", ok ? "ok" : "FAILED",
	       a[7], b[7]);
	free(a);
	free(b);
	return !ok;
}
