// SPDX-License-Identifier: GPL-2.0
/*
 * fakepy - a C program that exports the names the interposer looks up to
 * find CPython (built with -rdynamic, so dlsym(RTLD_DEFAULT) finds them),
 * for the checks around the Python-site walk.
 *
 *   fakepy VERSION
 *
 * Py_Version is set to VERSION (hex, PY_VERSION_HEX's form) before the
 * first large allocation; PyGILState_GetThisThreadState() counts its calls
 * and returns NULL (no thread state: no Python site); PyCode_Addr2Line()
 * must never be called.  Allocates 1 MiB, asks for a snapshot, prints
 * "fakepy: thread state asked N times".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long Py_Version;

static int asked;

void *PyGILState_GetThisThreadState(void);
void *PyGILState_GetThisThreadState(void)
{
	asked++;
	return NULL;
}

int PyCode_Addr2Line(void *code, int addr);
int PyCode_Addr2Line(void *code, int addr)
{
	abort();
}

int main(int argc, char **argv)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "buddyprof_snapshot");
	char *p;

	if (argc != 2) {
		fprintf(stderr, "usage: fakepy VERSION\n");
		return 2;
	}
	Py_Version = strtoul(argv[1], NULL, 16);
	p = malloc(1 << 20);
	if (!p)
		return 1;
	memset(p, 1, 1 << 20);
	if (snap)
		snap();
	printf("fakepy: thread state asked %d times\n", asked);
	free(p);
	return 0;
}
