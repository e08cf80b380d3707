// SPDX-License-Identifier: GPL-2.0
/*
 * hooks.c - libbuddyprof.so's entry points: the malloc family and the
 * anonymous mappings, which hand a large allocation to the profile half
 * (profile_table.c, `buddyctl profile`) or the run half (run_alloc.c,
 * `buddyctl run`); everything else goes to the C library
 * (Documentation/profiler.rst, "The interposer").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "interposer.h"
#include "profile_shm.h"



void *(*real_malloc)(size_t);
void (*real_free)(void *);
void *(*real_calloc)(size_t, size_t);
void *(*real_realloc)(void *, size_t);
int (*real_posix_memalign)(void **, size_t, size_t);
void *(*real_aligned_alloc)(size_t, size_t);
void *(*real_memalign)(size_t, size_t);
void *(*real_valloc)(size_t);
void *(*real_pvalloc)(size_t);
size_t (*real_usable)(void *);
void *(*real_mmap)(void *, size_t, int, int, int, off_t);
int (*real_munmap)(void *, size_t);
void *(*real_mremap)(void *, size_t, size_t, int, ...);


enum { INIT_NONE, INIT_BUSY, INIT_DONE };
static int init_state;

size_t hook_min_size = SIZE_MAX;


__thread int in_hook __attribute__((tls_model("initial-exec")));

/* ---- allocations made while dlsym() resolves the real functions -------- */

static char boot_buf[1 << 16] __attribute__((aligned(64)));

static size_t boot_off;

static bool is_boot(const void *p)
{
	return (const char *)p >= boot_buf &&
	       (const char *)p < boot_buf + sizeof(boot_buf);
}

/* 16-byte header holding the size, so that realloc() can copy. */
static void *boot_alloc(size_t size, size_t align)
{
	size_t off;

	if (align < 16)
		align = 16;
	off = (boot_off + 16 + align - 1) & ~(align - 1);
	if (off + size > sizeof(boot_buf))
		return NULL;
	*(size_t *)(boot_buf + off - 16) = size;
	boot_off = off + size;
	return boot_buf + off;	/* static storage: already zero */
}

/* ---- setup ---------------------------------------------------------------- */

static void resolve(void)
{
	init_state = INIT_BUSY;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_valloc = dlsym(RTLD_NEXT, "valloc");
	real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	real_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	real_mremap = dlsym(RTLD_NEXT, "mremap");
	init_state = INIT_DONE;
}

static inline void ensure_resolved(void)
{
	if (__builtin_expect(init_state != INIT_DONE, 0) &&
	    init_state == INIT_NONE)
		resolve();
}

__attribute__((constructor(101))) static void buddyprof_init(void)
{
	ensure_resolved();
	in_hook++;
	hook_min_size = run_attach();
	if (!run_mode)
		prof_attach();
	in_hook--;
}

static inline bool heap_maybe_tracked(void *p)
{
	return p && hook_min_size != SIZE_MAX && !is_boot(p) && real_usable &&
	       real_usable(p) >= hook_min_size;
}

/* ---- the malloc family ------------------------------------------------------ */

/*
 * buddyctl run: a buddy allocation for @size >= hook_min_size (falling back to
 * the real allocator, counted), the real allocator below it.  @align 0 is
 * malloc's.
 */
static void *run_or_real(size_t size, size_t align, uintptr_t ra)
{
	void *p;

	if (size >= hook_min_size && !in_hook) {
		p = run_alloc(size, align, BPROF_KIND_HEAP, ra);
		if (p)
			return p;
	} else if (!in_hook) {
		run_small(size);
	}
	if (!align)
		return real_malloc(size);
	return real_aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

/* Whether @align is one the C library takes (a power of two). */
static inline bool align_ok(size_t align)
{
	return align && !(align & (align - 1));
}

/* The aligned family in buddyctl run: a buddy block, or NULL (counted). */
static void *run_aligned(size_t size, size_t align, uintptr_t ra)
{
	if (in_hook)
		return NULL;
	if (size < hook_min_size) {
		run_small(size);
		return NULL;
	}
	return run_alloc(size, align, BPROF_KIND_HEAP, ra);
}

/**
 * malloc_usable_size() - a buddy block's usable size is its whole pages
 * (the allocation is made that large); anything else is the C library's.
 * @p: a block of the malloc family, or NULL.
 *
 * Return: the bytes usable at @p.
 */
EXPORT size_t malloc_usable_size(void *p)
{
	size_t len;

	if (!p)
		return 0;
	if (is_boot(p))
		return *(size_t *)((char *)p - 16);
	ensure_resolved();
	if (run_mode && run_owns(p, &len))
		return len;
	return real_usable ? real_usable(p) : 0;
}

EXPORT void *malloc(size_t size)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(size, 16);
	if (run_mode)
		return run_or_real(size, 0, (uintptr_t)__builtin_return_address(0));
	p = real_malloc(size);
	if (__builtin_expect(size >= hook_min_size, 0))
		track(p, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

EXPORT void free(void *p)
{
	if (!p || is_boot(p))
		return;
	ensure_resolved();
	if (run_mode && run_free(p))
		return;
	if (heap_maybe_tracked(p)) {
		free_snapshot(p, SIZE_MAX);
		untrack(p, NULL);
	}
	real_free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(bytes, 16);
	if (run_mode && bytes >= hook_min_size && !in_hook) {
		p = run_alloc(bytes, 0, BPROF_KIND_HEAP,
			      (uintptr_t)__builtin_return_address(0));
		if (p)
			return p;	/* a new allocation reads as zeros */
	} else if (run_mode && !in_hook) {
		run_small(bytes);
	}
	p = real_calloc(n, size);
	if (__builtin_expect(bytes >= hook_min_size, 0))
		track(p, bytes, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

/*
 * buddyctl run's realloc: a buddy block moves to a new block (buddy or
 * not) of @size; an ordinary one that grows to hook_min_size moves into buddy
 * memory; anything else is the real realloc.
 */
static void *run_realloc(void *p, size_t size, uintptr_t ra)
{
	size_t had, keep;
	void *q;

	if (run_owns(p, &had)) {
		if (!size) {
			run_free(p);
			return NULL;
		}
		q = run_or_real(size, 0, ra);
		if (!q)
			return NULL;
		keep = had < size ? had : size;
		memcpy(q, p, keep);
		run_free(p);
		return q;
	}
	if (p && size >= hook_min_size && !in_hook) {
		q = run_alloc(size, 0, BPROF_KIND_HEAP, ra);
		if (q) {
			had = real_usable(p);
			memcpy(q, p, had < size ? had : size);
			real_free(p);
			return q;
		}
		return real_realloc(p, size);
	}
	if (!p)
		return run_or_real(size, 0, ra);
	return real_realloc(p, size);
}

static void *do_realloc(void *p, size_t size, uintptr_t ra)
{
	struct bprof_slot old;
	bool was = false;
	void *q;

	ensure_resolved();
	if (is_boot(p)) {
		size_t had = *(size_t *)((char *)p - 16);

		if (init_state != INIT_DONE)
			return boot_alloc(size, 16);
		q = real_malloc(size);
		if (q)
			memcpy(q, p, had < size ? had : size);
		return q;
	}
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(size, 16);
	if (run_mode)
		return run_realloc(p, size, ra);
	if (heap_maybe_tracked(p))
		was = untrack(p, &old);
	q = real_realloc(p, size);
	if (!q && size) {
		if (was)	/* the old block is still there */
			track_restore(&old);
		return NULL;
	}
	if (size >= hook_min_size)
		track(q, size, BPROF_KIND_HEAP, ra);
	return q;
}

EXPORT void *realloc(void *p, size_t size)
{
	return do_realloc(p, size, (uintptr_t)__builtin_return_address(0));
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, bytes, (uintptr_t)__builtin_return_address(0));
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int r;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0)) {
		*out = boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	if (run_mode && size >= hook_min_size && !in_hook && align_ok(align) &&
	    !(align % sizeof(void *))) {
		void *p = run_alloc(size, align, BPROF_KIND_HEAP,
				    (uintptr_t)__builtin_return_address(0));

		if (p) {
			*out = p;
			return 0;
		}
	} else if (run_mode && !in_hook && size < hook_min_size) {
		run_small(size);
	}
	r = real_posix_memalign(out, align, size);
	if (!r && size >= hook_min_size)
		track(*out, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return r;
}

/* The aligned family's real functions. */
enum aligned_fn { AF_ALIGNED_ALLOC, AF_MEMALIGN, AF_VALLOC, AF_PVALLOC };

/*
 * aligned_alloc(), memalign(), valloc() and pvalloc() (@fn): before the
 * real functions are resolved from the boot buffer (@boot bytes), in
 * buddyctl run a buddy block when it takes it, else the real function's
 * block, tracked; @ra the caller's return address.
 */
static void *aligned_hook(enum aligned_fn fn, size_t align, size_t size,
			  size_t boot, uintptr_t ra)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(boot, align);
	if (run_mode && align_ok(align) && (p = run_aligned(size, align, ra)))
		return p;
	switch (fn) {
	case AF_ALIGNED_ALLOC:
		p = real_aligned_alloc(align, size);
		break;
	case AF_MEMALIGN:
		p = real_memalign(align, size);
		break;
	case AF_VALLOC:
		p = real_valloc(size);
		break;
	default:
		p = real_pvalloc(size);
		break;
	}
	if (size >= hook_min_size)
		track(p, size, BPROF_KIND_HEAP, ra);
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return aligned_hook(AF_ALIGNED_ALLOC, align, size, size,
			    (uintptr_t)__builtin_return_address(0));
}

EXPORT void *memalign(size_t align, size_t size)
{
	return aligned_hook(AF_MEMALIGN, align, size, size,
			    (uintptr_t)__builtin_return_address(0));
}

EXPORT void *valloc(size_t size)
{
	return aligned_hook(AF_VALLOC, 4096, size, size,
			    (uintptr_t)__builtin_return_address(0));
}

EXPORT void *pvalloc(size_t size)
{
	return aligned_hook(AF_PVALLOC, 4096, size,
			    (size + 4095) & ~(size_t)4095,
			    (uintptr_t)__builtin_return_address(0));
}

/* ---- anonymous mappings ------------------------------------------------------- */

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/*
 * Tracked: anonymous, readable, not executable, not MAP_FIXED (a fixed
 * mapping lands inside a range some allocator reserved: that allocator's own
 * allocations are what matters, and they are not visible here).
 */
static inline bool mmap_tracked(size_t len, int prot, int flags)
{
	return (flags & MAP_ANONYMOUS) && !(flags & MAP_FIXED) &&
#ifdef MAP_FIXED_NOREPLACE
	       !(flags & MAP_FIXED_NOREPLACE) &&
#endif
	       (prot & PROT_READ) && !(prot & PROT_EXEC) && len >= hook_min_size;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	void *p;

	if (__builtin_expect(init_state != INIT_DONE, 0) || !real_mmap)
		return sys_mmap(addr, len, prot, flags, fd, off);
	if (run_mode && !in_hook && mmap_tracked(len, prot, flags) &&
	    (flags & MAP_TYPE) == MAP_PRIVATE &&
	    !(flags & (MAP_STACK | MAP_GROWSDOWN | MAP_HUGETLB))) {
		p = run_alloc(len, 4096, BPROF_KIND_MMAP,
			      (uintptr_t)__builtin_return_address(0));
		if (p) {
			if (!(prot & PROT_WRITE))
				mprotect(p, len, prot);
			return p;
		}
	}
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && mmap_tracked(len, prot, flags))
		track(p, len, BPROF_KIND_MMAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
	if (__builtin_expect(init_state != INIT_DONE, 0) || !real_munmap)
		return syscall(SYS_munmap, addr, len);
	if (run_mode) {
		size_t have;

		/* the whole mapping: the allocation goes; a part: just that */
		if (run_owns(addr, &have) && len >= have && run_free(addr))
			return 0;
		return real_munmap(addr, len);
	}
	if (hook_min_size != SIZE_MAX)
		track_munmap(addr, len);
	return real_munmap(addr, len);
}

/*
 * buddyctl run's mremap of a buddy mapping: shrinking in place is the
 * kernel's; growing or moving makes a new block (buddy or anonymous) and
 * copies, when MREMAP_MAYMOVE allows, else ENOMEM (a buddy mapping is
 * VM_DONTEXPAND).  Other mappings: the real mremap.
 */
static void *run_mremap(void *old_addr, size_t old_len, size_t new_len,
			int flags, void *new_addr)
{
	size_t have;
	void *p;

	if (!run_owns(old_addr, &have) || old_len != have)
		return real_mremap(old_addr, old_len, new_len, flags, new_addr);
	if (new_len <= old_len && !(flags & MREMAP_FIXED)) {
		p = real_mremap(old_addr, old_len, new_len, flags);
		if (p != MAP_FAILED)
			run_shrunk(old_addr, new_len);
		return p;
	}
	if (!(flags & MREMAP_MAYMOVE) || (flags & MREMAP_FIXED) || !new_len) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = run_alloc(new_len, 4096, BPROF_KIND_MMAP,
		      (uintptr_t)__builtin_return_address(0));
	if (!p) {
		p = real_mmap(NULL, new_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return p;
	}
	memcpy(p, old_addr, old_len < new_len ? old_len : new_len);
	run_free(old_addr);
	return p;
}

EXPORT void *mremap(void *old_addr, size_t old_len, size_t new_len, int flags,
		    ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (__builtin_expect(init_state != INIT_DONE, 0) || !real_mremap)
		return (void *)syscall(SYS_mremap, old_addr, old_len, new_len,
				       flags, new_addr);
	if (run_mode)
		return run_mremap(old_addr, old_len, new_len, flags, new_addr);
	if (hook_min_size == SIZE_MAX)
		return real_mremap(old_addr, old_len, new_len, flags, new_addr);
	return track_mremap(old_addr, old_len, new_len, flags, new_addr);
}
