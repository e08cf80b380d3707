// SPDX-License-Identifier: GPL-2.0
/*
 * fakepy - a C program that exports the names the interposer looks up to
 * find CPython (built with -rdynamic, so dlsym(RTLD_DEFAULT) finds them),
 * for the checks around the Python-site walk.
 *
 *   fakepy VERSION
 *   fakepy late VERSION
 *
 * Py_Version is set to VERSION (hex, PY_VERSION_HEX's form) before the
 * first large allocation; PyGILState_GetThisThreadState() counts its calls
 * and returns NULL (no thread state: no Python site); PyCode_Addr2Line()
 * must never be called.  Allocates 1 MiB, asks for a snapshot, prints
 * "fakepy: thread state asked N times".
 *
 * late: as a program that loads its interpreter after it started.  The
 * first allocation finds Py_Version 0 (not CPython); then Py_Version
 * becomes VERSION and a second allocation follows with no object loaded
 * since (the interposer must not look again), then a third after
 * dlopen() of a library not loaded yet (it must).  Prints "fakepy: late:
 * asked A before the dlopen, B after".
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

/* A tracked allocation (1 MiB, touched), freed. */
static int alloc_once(void)
{
	char *p = malloc(1 << 20);

	if (!p)
		return -1;
	memset(p, 1, 1 << 20);
	free(p);
	return 0;
}

static int late(const char *version)
{
	int before;

	if (alloc_once())
		return 1;
	Py_Version = strtoul(version, NULL, 16);
	if (alloc_once())
		return 1;
	before = asked;
	/* glibc's libutil is a stub nothing here links: loading it adds one */
	if (!dlopen("libutil.so.1", RTLD_NOW)) {
		fprintf(stderr, "fakepy: %s\n", dlerror());
		return 1;
	}
	if (alloc_once())
		return 1;
	printf("fakepy: late: asked %d before the dlopen, %d after\n", before,
	       asked - before);
	return 0;
}

int main(int argc, char **argv)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "buddyprof_snapshot");
	char *p;

	if (argc == 3 && !strcmp(argv[1], "late"))
		return late(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: fakepy [late] VERSION\n");
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
