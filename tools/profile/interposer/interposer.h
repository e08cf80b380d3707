/* SPDX-License-Identifier: GPL-2.0 */
/*
 * interposer.h - what the files of libbuddyprof.so share (everything here
 * is hidden in the library, -fvisibility=hidden):
 *
 *   hooks.c          the malloc family and the anonymous mappings
 *   profile_table.c  `buddyctl profile`'s half: the table of tracked
 *                    allocations in the shared region (profile_shm.h)
 *   run_alloc.c      `buddyctl run`'s half: allocations in buddy memory
 *                    (run_shm.h)
 *   python_site.c    the Python line that made an allocation
 */
#ifndef BUDDY_INTERPOSER_H
#define BUDDY_INTERPOSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The functions the hooks call through (resolved with dlsym(RTLD_NEXT)). */
extern void *(*real_malloc)(size_t);
extern void (*real_free)(void *);
extern void *(*real_calloc)(size_t, size_t);
extern void *(*real_realloc)(void *, size_t);
extern int (*real_posix_memalign)(void **, size_t, size_t);
extern void *(*real_aligned_alloc)(size_t, size_t);
extern void *(*real_memalign)(size_t, size_t);
extern void *(*real_valloc)(size_t);
extern void *(*real_pvalloc)(size_t);
extern size_t (*real_usable)(void *);
extern void *(*real_mmap)(void *, size_t, int, int, int, off_t);
extern int (*real_munmap)(void *, size_t);
extern void *(*real_mremap)(void *, size_t, size_t, int, ...);

/* Non-zero while a hook runs: allocations go straight to the real ones. */
extern __thread int in_hook __attribute__((tls_model("initial-exec")));

/* Allocations of at least this many bytes are handed over; SIZE_MAX: none. */
extern size_t hook_min_size;

/* What the program may call: buddyprof_snapshot(), buddyprof_live_bytes(). */
#define EXPORT	__attribute__((visibility("default")))

/*
 * bp_backtrace() - up to @max return addresses into @frames, innermost
 * first, starting at @ra (the hook's caller); with @unwind false or when
 * the unwinder does not find @ra, just @ra.  Sets *@short_walk then.
 */
unsigned int bp_backtrace(uint64_t *frames, unsigned int max, uintptr_t ra,
			  bool unwind, bool *short_walk);

/*
 * py_site() - in a CPython program (the version of the headers the library
 * was built with), the calling thread's Python site: "basename:line
 * function" of its innermost Python frame outside the interpreter's and
 * installed packages' directories (else of its innermost frame), into
 * @buf, cut to @len - 1 bytes.  Allocates nothing.  Returns its length,
 * 0 (an empty @buf) when there is none.
 */
size_t py_site(char *buf, size_t len);

/*
 * shm_region_attach() - map the shared region whose path is in $@env, as
 * buddyctl profile and buddyctl run hand it over: its header of
 * @hdr_bytes first, which @region_bytes checks (magic, version, sizes)
 * and turns into the whole region's size (0: not a valid header), then
 * the whole region.  NULL when @env is unset or the file cannot be opened,
 * mapped or is not valid; else the mapping, *@bytes its size.  The file
 * is closed either way.
 */
void *shm_region_attach(const char *env, size_t hdr_bytes,
			uint64_t (*region_bytes)(const void *head),
			uint64_t *bytes);

/* ---- buddyctl profile (profile_table.c) ------------------------------------ */

struct bprof_slot;

/* Attach to the profile region, when there is one, and follow forks. */
void prof_attach(void);
/* The slow path of every allocation of at least hook_min_size bytes. */
void track(void *p, size_t size, unsigned int kind, uintptr_t ra);
/* Before the real free: true when @p was tracked (its slot in @old). */
bool untrack(void *p, struct bprof_slot *old);
/* A failed realloc(): track the old block @old again. */
void track_restore(const struct bprof_slot *old);
/* Before a free (@len SIZE_MAX) or munmap of @p: a snapshot when due. */
void free_snapshot(void *p, size_t len);
/* munmap(@addr, @len) of what may be a tracked mapping, before the real. */
void track_munmap(void *addr, size_t len);
/* mremap() of what may be a tracked mapping, the real call included. */
void *track_mremap(void *old_addr, size_t old_len, size_t new_len, int flags,
		   void *new_addr);

/* ---- buddyctl run (run_alloc.c) ---------------------------------------- */

/* True in a process started by `buddyctl run` (BUDDYRUN_SHM set). */
extern bool run_mode;

/* Attach to the run region; sets run_mode and returns the size threshold. */
size_t run_attach(void);

/*
 * run_alloc() - a buddy allocation of @size bytes mapped into the process,
 * zero-filled and page-aligned (@align up to 4096 is met), labelled by the
 * call stack above @ra.  NULL when it fell back (counted): the caller then
 * uses ordinary memory.
 */
void *run_alloc(size_t size, size_t align, unsigned int kind, uintptr_t ra);

/* Count an allocation below the threshold. */
void run_small(size_t size);

/* If @p starts a buddy allocation: its usable length in *@len, true. */
bool run_owns(const void *p, size_t *len);

/* Free the buddy allocation at @p; false when @p is not one. */
bool run_free(void *p);

/* A buddy mapping at @p shrank in place to @len bytes. */
void run_shrunk(void *p, size_t len);

/* *@live grows by @size (shared, atomic); *@peak follows it up. */
static inline void live_peak_add(uint64_t *live, uint64_t *peak, uint64_t size)
{
	uint64_t now = __atomic_add_fetch(live, size, __ATOMIC_RELAXED);
	uint64_t old = __atomic_load_n(peak, __ATOMIC_RELAXED);

	while (now > old &&
	       !__atomic_compare_exchange_n(peak, &old, now, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

#endif /* BUDDY_INTERPOSER_H */
