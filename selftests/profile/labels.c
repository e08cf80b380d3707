// SPDX-License-Identifier: GPL-2.0
/*
 * labels - allocations made for the program by the allocator libraries,
 * for the report's sites and demangled names.
 *
 *   labels
 *
 * app::grid(unsigned long) (a C function under the C++ name, so that no
 * C++ compiler is needed) allocates 1 MiB with libstdc++'s operator new;
 * copy() has libc's strdup() allocate 1 MiB.  The report's site of each
 * must be the program's function, not operator new or strdup, and the
 * names demangled.  One snapshot is asked for with buddyprof_snapshot().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB	(1u << 20)

void *_Znwm(unsigned long n);		/* operator new(unsigned long) */
void _ZdlPv(void *p);			/* operator delete(void*) */

__attribute__((noinline)) void *grid(unsigned long n) __asm__("_ZN3app4gridEm");
__attribute__((noinline)) void *grid(unsigned long n)
{
	void *p = _Znwm(n);

	memset(p, 7, n);
	return p;
}

__attribute__((noinline)) static char *copy(size_t n)
{
	char *s = malloc(n + 1), *d;

	if (!s)
		return NULL;
	memset(s, 'a', n);
	s[n] = 0;
	d = strdup(s);
	free(s);
	return d;
}

int main(void)
{
	int (*snap)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "buddyprof_snapshot");
	void *g = grid(MiB);
	char *c = copy(MiB - 1);

	if (!c)
		return 1;
	if (snap)
		snap();
	printf("labels: %d %c\n", ((unsigned char *)g)[5], c[7]);
	_ZdlPv(g);
	free(c);
	return 0;
}
