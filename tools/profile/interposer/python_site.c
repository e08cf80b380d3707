// SPDX-License-Identifier: GPL-2.0
/*
 * python_site.c - the Python line that made an allocation, read from the
 * calling thread's interpreter frames the way in-process sampling profilers
 * read them: in place, allocating nothing, without the GIL.
 *
 * Only for the CPython this file was compiled against (the minor version of
 * its headers, checked against the interpreter's Py_Version): the frame
 * layout (struct _PyInterpreterFrame, an internal header) changes between
 * minor versions.  Built without those headers (PYSITE_CPYTHON undefined),
 * py_site() finds nothing and the native site stands.
 *
 * Nothing is linked against libpython: the three functions and the version
 * are looked up with dlsym(RTLD_DEFAULT), so the library still loads into
 * any program.  The lookup happens at a tracked allocation, again only when
 * the program has loaded more objects since the last try (dl_iterate_phdr's
 * dlpi_adds), so that a program that dlopens libpython later gets Python
 * sites from then on.
 *
 * Why the walk is safe without the GIL: the frames read are the calling
 * thread's own (its thread state, found through the interpreter's TSS key),
 * which only this thread changes, and it is inside the allocation; each
 * frame holds a strong reference to its code object, and the code object
 * to its names.  PyCode_Addr2Line() decodes the code's line table in place.
 * Strings are read only when they are compact ASCII (their bytes follow the
 * object header), never converted.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "interposer.h"

#ifdef PYSITE_CPYTHON
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <dlfcn.h>
#include <link.h>

#define MAX_FRAMES	32	/* Python frames walked at most */

static PyThreadState *(*get_tstate)(void);
static int (*addr2line)(PyCodeObject *, int);
static int lookup_done;		/* 1: found; checked at every try */
static unsigned long long lookup_adds = ~0ULL;	/* objects loaded then */

static int count_adds(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	*(unsigned long long *)p = info->dlpi_adds;
	return 1;
}

/* Whether this process runs the CPython of the headers (looked up once). */
static bool have_python(void)
{
	const unsigned long *version;
	unsigned long long adds = 0;
	void *t, *a;

	if (__atomic_load_n(&lookup_done, __ATOMIC_ACQUIRE))
		return true;
	dl_iterate_phdr(count_adds, &adds);
	if (adds == __atomic_load_n(&lookup_adds, __ATOMIC_RELAXED))
		return false;		/* nothing new since the last try */
	__atomic_store_n(&lookup_adds, adds, __ATOMIC_RELAXED);
	version = dlsym(RTLD_DEFAULT, "Py_Version");
	if (!version || (*version >> 16) != (PY_VERSION_HEX >> 16))
		return false;
	t = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	a = dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
	if (!t || !a)
		return false;
	get_tstate = (PyThreadState *(*)(void))t;
	addr2line = (int (*)(PyCodeObject *, int))a;
	__atomic_store_n(&lookup_done, 1, __ATOMIC_RELEASE);
	return true;
}

/* @o's characters when it is a compact ASCII str, else NULL. */
static const char *ascii_of(PyObject *o, size_t *n)
{
	if (!o || !PyUnicode_Check(o) || !PyUnicode_IS_COMPACT_ASCII(o))
		return NULL;
	*n = ((PyASCIIObject *)o)->length;
	return (const char *)((PyASCIIObject *)o + 1);
}

/*
 * Whether @path is the interpreter's or an installed package's: the
 * standard library (.../lib/python3.N/), site-packages and Debian's
 * dist-packages.
 */
static bool in_library(const char *path, size_t n)
{
	static const char *const dirs[] = {
		"/site-packages/", "/dist-packages/", "/lib/python3.",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (memmem(path, n, dirs[i], strlen(dirs[i])))
			return true;
	return false;
}

size_t py_site(char *buf, size_t len)
{
	_PyInterpreterFrame *f, *pick = NULL, *inner = NULL;
	const char *file, *name, *base;
	PyThreadState *ts;
	size_t nf, nn, nb;
	unsigned int walked = 0;
	int line, k;

	if (len < 2 || !have_python())
		return 0;
	ts = get_tstate();
	if (!ts || !ts->cframe)
		return 0;
	for (f = ts->cframe->current_frame; f && walked < MAX_FRAMES;
	     f = f->previous, walked++) {
		if (!f->f_code || _PyFrame_IsIncomplete(f))
			continue;
		file = ascii_of(f->f_code->co_filename, &nf);
		if (!file)
			continue;
		if (!inner)
			inner = f;
		if (nf && file[0] != '<' && !in_library(file, nf)) {
			pick = f;
			break;
		}
	}
	if (!pick)
		pick = inner;
	if (!pick)
		return 0;
	file = ascii_of(pick->f_code->co_filename, &nf);
	name = ascii_of(pick->f_code->co_name, &nn);
	if (!name) {
		name = "?";
		nn = 1;
	}
	base = memrchr(file, '/', nf);
	base = base ? base + 1 : file;
	nb = nf - (base - file);
	line = addr2line(pick->f_code, _PyInterpreterFrame_LASTI(pick) *
			 (int)sizeof(_Py_CODEUNIT));
	/* snprintf() allocates nothing for these conversions */
	k = snprintf(buf, len, "%.*s:%d %.*s", (int)nb, base, line, (int)nn,
		     name);
	return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

#else /* !PYSITE_CPYTHON */

size_t py_site(char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	return 0;
}

#endif
