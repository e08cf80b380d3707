// SPDX-License-Identifier: GPL-2.0
/*
 * libbuddyprof.so - records a program's large allocations for
 * `buddyctl profile` (LD_PRELOAD; the shared table is in tools/profile/interposer/profshm.h).
 *
 * Hooked: malloc, free, calloc, realloc, reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, and anonymous mmap, mmap64,
 * munmap, mremap.  C++ operator new and the allocators of Python, NumPy and
 * PyTorch (c10::alloc_cpu uses posix_memalign) all end in one of those.
 *
 * Two modes.  With BUDDYPROF_SHM (buddyctl profile) it records; with
 * BUDDYRUN_SHM (buddyctl run) the hooks hand every allocation of at least
 * the threshold to interpose_run.c, which makes it a buddy allocation
 * mapped into the program, and interpose malloc_usable_size() too.
 *
 * Fast path: an allocation below the threshold costs one compare; free()
 * costs one malloc_usable_size() (only pointers whose usable size reaches the
 * threshold can be tracked).  Nothing is recorded unless BUDDYPROF_SHM names
 * a region; each followed process records into a table of its own
 * (profshm.h: a forked child claims a slot of its own, an exec keeps it).
 *
 * Call stacks.  Frame 0 is __builtin_return_address(0) of the hook, always
 * right.  The frames above it come from libgcc's _Unwind_Backtrace(), which
 * walks the .eh_frame unwind tables (every Debian binary has them; frame
 * pointers are not needed, so this works in code built without them, unlike
 * a frame-pointer walk).  It is called directly (glibc's backtrace() would
 * dlopen libgcc_s and allocate on first use); libgcc_s is linked in, so no
 * lazy loading happens, and this library is linked -z now, so no lazy PLT
 * resolution does either.  The unwinder takes the dynamic loader's lock in
 * dl_iterate_phdr() and allocates nothing; a thread-local guard makes any
 * allocation made under a hook go straight to the real function.  The walk
 * stops after the configured depth.  Nothing is symbolised here: the
 * profiler maps the addresses through /proc/PID/maps while the program is
 * stopped, and to symbols from the ELF files after the run.
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
#include <unwind.h>

#include "interpose.h"
#include "profshm.h"

#define EXPORT	__attribute__((visibility("default")))

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

static struct bprof_hdr *hdr;		/* non-NULL: this process is followed */
static struct bprof_proc *me;		/* its process slot, once claimed */
static struct bprof_slot *slots;	/* its table */
static uint32_t slot_mask;
static size_t min_size = SIZE_MAX;	/* SIZE_MAX: tracking off */
static unsigned int depth;
static bool unwind;

/*
 * The pid of the process that owns @me, 0 before it claimed a slot.  The
 * page is MADV_WIPEONFORK: in a child made by fork() or clone() without
 * CLONE_VM it reads as zero, so no child writes into its parent's table:
 * it claims a slot of its own at its first tracked allocation, without a
 * getpid() system call per allocation (the fallback, when the kernel lacks
 * MADV_WIPEONFORK).  @no_slot_pid: the process found no free slot.
 */
static volatile int32_t *owner_tag;
static bool tag_by_pid;
static int32_t no_slot_pid;
static int claim_lock;		/* threads racing to the first allocation */

/* Whether this process has its slot (and @me, @slots are its). */
static inline bool owner(void)
{
	int32_t tag;

	if (!hdr)
		return false;
	/* acquire: @me and @slots were set before the tag (take_slot()) */
	tag = __atomic_load_n(owner_tag, __ATOMIC_ACQUIRE);
	return tag && (!tag_by_pid || tag == (int32_t)getpid());
}

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

/* The basename of /proc/self/exe in @buf ("" when unknown). */
static const char *exe_base(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	const char *base;

	if (n <= 0)
		n = 0;
	buf[n] = 0;
	base = strrchr(buf, '/');
	return base ? base + 1 : buf;
}

/* Prefix match of @want against the basename of /proc/self/exe. */
static bool exe_matches(const char *want)
{
	char exe[PATH_MAX];
	const char *base;

	if (!*want)
		return true;
	base = exe_base(exe, sizeof(exe));
	return *base &&
	       !strncmp(base, want, strnlen(want, sizeof(((struct bprof_hdr *)0)->match)));
}

/* @src's first @len - 1 bytes into @dst, which stays NUL-terminated. */
static void set_name(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

/* A process that is not followed: counted, the first one named. */
static void not_followed(struct bprof_hdr *h)
{
	char exe[PATH_MAX];
	const char *base;

	if (__atomic_fetch_add(&h->nr_not_followed, 1, __ATOMIC_RELAXED))
		return;
	base = exe_base(exe, sizeof(exe));
	strncpy(h->not_followed, base, sizeof(h->not_followed) - 1);
}

/* Make @i this process's slot (@pid's); its table is @slots from now on. */
static void take_slot(struct bprof_hdr *h, uint32_t i, int32_t pid)
{
	char exe[PATH_MAX];

	me = &BPROF_PROCS(h)[i];
	set_name(me->exe, sizeof(me->exe), exe_base(exe, sizeof(exe)));
	slots = BPROF_SLOTS(h, i);
	__atomic_store_n(owner_tag, pid, __ATOMIC_RELEASE);
}

/*
 * A followed process's first tracked allocation (or a forked child's):
 * claim a free process slot.  false when none is left: the process is
 * counted once (the first one named) and tracks nothing.
 */
static bool claim_slot(void)
{
	int32_t pid = getpid(), zero;
	char exe[PATH_MAX];
	uint32_t i;

	while (__atomic_exchange_n(&claim_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	if (no_slot_pid == pid || owner()) {
		/* no slot left, or another thread has just claimed it */
		__atomic_store_n(&claim_lock, 0, __ATOMIC_RELEASE);
		return no_slot_pid != pid;
	}
	for (i = 0; i < hdr->nprocs; i++) {
		zero = 0;
		if (__atomic_load_n(&BPROF_PROCS(hdr)[i].pid, __ATOMIC_RELAXED))
			continue;
		if (__atomic_compare_exchange_n(&BPROF_PROCS(hdr)[i].pid, &zero,
						pid, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			take_slot(hdr, i, pid);
			__atomic_store_n(&claim_lock, 0, __ATOMIC_RELEASE);
			return true;
		}
	}
	no_slot_pid = pid;
	for (i = 0; i < BPROF_NO_SLOT_PIDS; i++) {
		zero = 0;
		if (__atomic_load_n(&hdr->no_slot_pids[i], __ATOMIC_RELAXED) == pid)
			goto out;	/* counted before its exec */
		if (__atomic_compare_exchange_n(&hdr->no_slot_pids[i], &zero,
						pid, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	if (!__atomic_fetch_add(&hdr->nr_no_slot, 1, __ATOMIC_RELAXED)) {
		set_name(hdr->no_slot, sizeof(hdr->no_slot),
			 exe_base(exe, sizeof(exe)));
		hdr->no_slot_pid = pid;
	}
out:
	__atomic_store_n(&claim_lock, 0, __ATOMIC_RELEASE);
	return false;
}

void *shm_region_attach(const char *env, size_t hdr_bytes,
			uint64_t (*region_bytes)(const void *head),
			uint64_t *bytes)
{
	const char *path = getenv(env);
	void *h = NULL, *m;
	int fd;

	if (!path || !*path)
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	m = real_mmap(NULL, hdr_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto out;
	*bytes = region_bytes(m);
	real_munmap(m, hdr_bytes);
	if (!*bytes)
		goto out;
	m = real_mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED)
		h = m;
out:
	close(fd);
	return h;
}

/* The profile region's size, 0 when its header is not valid. */
static uint64_t prof_region_bytes(const void *head)
{
	const struct bprof_hdr *h = head;

	if (h->magic != BPROF_MAGIC || h->version != BPROF_VERSION ||
	    h->hdr_bytes != BPROF_HDR_BYTES ||
	    h->slot_bytes != sizeof(struct bprof_slot) || !h->nslots ||
	    (h->nslots & (h->nslots - 1)) ||
	    h->proc_bytes != sizeof(struct bprof_proc) || !h->nprocs ||
	    h->nprocs > BPROF_MAX_PROCS)
		return 0;
	return BPROF_REGION_BYTES(h->nprocs, h->nslots);
}

/* An exec'd process's old table: its image's allocations are gone. */
static void clear_table(struct bprof_hdr *h, uint32_t i)
{
	struct bprof_slot *t = BPROF_SLOTS(h, i);
	uint64_t bytes = BPROF_TABLE_BYTES(h->nslots);

	/* shmem: the pages go, and read as zero (EMPTY) again */
	if (madvise(t, bytes, MADV_REMOVE))
		memset(t, 0, bytes);
}

static void attach(void)
{
	struct bprof_hdr *h;
	uint64_t bytes;
	int32_t pid = getpid(), zero = 0;
	char exe[PATH_MAX];
	int mine = -1;
	uint32_t i;

	h = shm_region_attach(BPROF_ENV_SHM, BPROF_HDR_BYTES,
			      prof_region_bytes, &bytes);
	if (!h)
		return;

	for (i = 0; i < h->nprocs; i++)
		if (__atomic_load_n(&BPROF_PROCS(h)[i].pid, __ATOMIC_ACQUIRE) == pid)
			mine = i;
	if (mine >= 0) {
		/* It exec'd: it keeps its slot, cleared. */
		struct bprof_proc *p = &BPROF_PROCS(h)[mine];

		clear_table(h, mine);
		__atomic_store_n(&p->live_bytes, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&p->nr_exec_reset, 1, __ATOMIC_RELAXED);
	} else if (!exe_matches(h->match)) {
		/* Not ours: stay a pass-through. */
		not_followed(h);
		real_munmap(h, bytes);
		return;
	} else if (__atomic_load_n(&h->first_pid, __ATOMIC_ACQUIRE) != pid) {
		__atomic_add_fetch(&h->nr_followed, 1, __ATOMIC_RELAXED);
	}
	if (__atomic_compare_exchange_n(&h->first_pid, &zero, pid, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
	    zero == pid)
		set_name(h->first_exe, sizeof(h->first_exe),
			 exe_base(exe, sizeof(exe)));
	owner_tag = real_mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (owner_tag == MAP_FAILED) {
		static int32_t fallback;

		owner_tag = &fallback;
		tag_by_pid = true;
	} else if (madvise((void *)owner_tag, 4096, MADV_WIPEONFORK)) {
		tag_by_pid = true;
	}
	*owner_tag = 0;
	if (mine >= 0)
		take_slot(h, mine, pid);
	slot_mask = h->nslots - 1;
	depth = h->depth < 1 ? 1 : h->depth > BPROF_FRAMES ? BPROF_FRAMES : h->depth;
	unwind = h->flags & BPROF_F_UNWIND;
	__atomic_store_n(&hdr, h, __ATOMIC_RELEASE);
	min_size = h->min_size ? h->min_size : 1;
}

/*
 * In a child forked by a followed process: followed too, with a slot of
 * its own from its first tracked allocation (its owner tag reads zero; it
 * is cleared here for the getpid() fallback).  Counted, with its parent.
 */
static void forked_child(void)
{
	struct bprof_hdr *h = __atomic_load_n(&hdr, __ATOMIC_ACQUIRE);

	if (!h)
		return;
	if (me)
		__atomic_add_fetch(&me->nr_forked, 1, __ATOMIC_RELAXED);
	*owner_tag = 0;
	me = NULL;
	claim_lock = 0;		/* the forking thread is the only one left */
	__atomic_add_fetch(&h->nr_forked, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor(101))) static void buddyprof_init(void)
{
	ensure_resolved();
	in_hook++;
	min_size = run_attach();
	if (!run_mode)
		attach();
	if (hdr)
		pthread_atfork(NULL, NULL, forked_child);
	in_hook--;
}

/* ---- the table ------------------------------------------------------------ */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct unwind_arg {
	uint64_t *out;
	unsigned int n, max, walked;
	uintptr_t ra;
	bool found;
};

static _Unwind_Reason_Code unwind_cb(struct _Unwind_Context *ctx, void *p)
{
	struct unwind_arg *u = p;
	uintptr_t ip = _Unwind_GetIP(ctx);

	if (!ip || ++u->walked > u->max + 8)
		return _URC_END_OF_STACK;
	if (!u->found) {
		if (ip != u->ra)
			return _URC_NO_REASON;
		u->found = true;
	}
	u->out[u->n++] = ip;
	return u->n >= u->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

__attribute__((noinline)) unsigned int
bp_backtrace(uint64_t *frames, unsigned int max, uintptr_t ra, bool do_unwind,
	     bool *short_walk)
{
	struct unwind_arg u = { .out = frames, .max = max, .ra = ra };

	*short_walk = false;
	if (do_unwind && max > 1) {
		_Unwind_Backtrace(unwind_cb, &u);
		if (u.found && u.n > 1)
			return u.n;
		*short_walk = true;
	}
	frames[0] = ra;
	return 1;
}

static unsigned int capture(uint64_t *frames, uintptr_t ra)
{
	bool short_walk;
	unsigned int n = bp_backtrace(frames, depth, ra, unwind, &short_walk);

	if (short_walk)
		__atomic_add_fetch(&me->nr_unwind_short, 1, __ATOMIC_RELAXED);
	return n;
}

/* @size more live tracked bytes; the peak follows. */
static void live_add(uint64_t size)
{
	uint64_t now = __atomic_add_fetch(&me->live_bytes, size,
					  __ATOMIC_RELAXED);
	uint64_t peak = __atomic_load_n(&me->peak_live_bytes, __ATOMIC_RELAXED);

	while (now > peak &&
	       !__atomic_compare_exchange_n(&me->peak_live_bytes, &peak, now,
					    true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static void insert(uint64_t addr, uint64_t size, unsigned int kind,
		   const uint64_t *frames, unsigned int nframes)
{
	uint32_t h = bprof_hash(addr, slot_mask), i;

	for (i = 0; i < BPROF_MAX_PROBE && i <= slot_mask; i++) {
		struct bprof_slot *s = &slots[(h + i) & slot_mask];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (st != BPROF_EMPTY && st != BPROF_TOMB)
			continue;
		if (!__atomic_compare_exchange_n(&s->state, &st, BPROF_BUSY,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		s->depth = nframes;
		s->kind = kind;
		s->seq = __atomic_add_fetch(&hdr->seq, 1, __ATOMIC_RELAXED);
		s->addr = addr;
		s->size = size;
		memcpy(s->frames, frames, nframes * sizeof(uint64_t));
		__atomic_store_n(&s->state, BPROF_LIVE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&me->nr_alloc, 1, __ATOMIC_RELAXED);
		live_add(size);
		return;
	}
	__atomic_add_fetch(&me->nr_dropped, 1, __ATOMIC_RELAXED);
}

/* The live slot of @addr, or NULL. */
static struct bprof_slot *find_slot(uint64_t addr)
{
	uint32_t h = bprof_hash(addr, slot_mask), i;

	for (i = 0; i < BPROF_MAX_PROBE && i <= slot_mask; i++) {
		struct bprof_slot *s = &slots[(h + i) & slot_mask];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (st == BPROF_EMPTY)
			return NULL;
		if (st == BPROF_LIVE && s->addr == addr)
			return s;
	}
	return NULL;
}

/* Remove @addr; a copy of its slot goes to @old when given.  true if found. */
static bool remove_addr(uint64_t addr, struct bprof_slot *old)
{
	struct bprof_slot *s;
	uint64_t size;

	/* a slot that stops being live meanwhile: look again */
	while ((s = find_slot(addr))) {
		uint32_t st = BPROF_LIVE;

		if (old)
			memcpy(old, s, sizeof(*old));
		size = s->size;		/* before the slot can be reused */
		if (__atomic_compare_exchange_n(&s->state, &st, BPROF_TOMB,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch(&me->nr_free, 1, __ATOMIC_RELAXED);
			__atomic_sub_fetch(&me->live_bytes, size, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

EXPORT int buddyprof_snapshot(void);

/*
 * The progress schedule (profshm.h): a snapshot from the allocation that
 * reaches the next multiple of every_allocs allocations or every_bytes
 * bytes (counted over all followed processes).  Called by a followed
 * process after the allocation is in its table, so the snapshot sees it.
 */
static void progress(uint64_t size)
{
	uint64_t ea = hdr->every_allocs, eb = hdr->every_bytes, n, b;
	bool due;

	if (!ea && !eb)
		return;
	n = __atomic_add_fetch(&hdr->progress_allocs, 1, __ATOMIC_RELAXED);
	b = __atomic_add_fetch(&hdr->progress_bytes, size, __ATOMIC_RELAXED);
	due = (ea && n % ea == 0) || (eb && b / eb != (b - size) / eb);
	if (due) {
		__atomic_add_fetch(&hdr->nr_progress_snaps, 1, __ATOMIC_RELAXED);
		buddyprof_snapshot();
	}
}

/*
 * Before a free of @p (profshm.h, free_bytes): a snapshot while a tracked
 * allocation of at least free_bytes still holds the data of its last
 * phase.  @len: the bytes munmap() unmaps (SIZE_MAX for free()); a partial
 * unmap takes none.
 */
static void free_snapshot(void *p, size_t len)
{
	uint64_t fb = hdr ? hdr->free_bytes : 0;
	struct bprof_slot *s;
	uint64_t size;

	if (!fb || in_hook || !owner())
		return;
	in_hook++;
	s = find_slot((uintptr_t)p);
	size = s ? s->size : 0;
	if (s && size >= fb && len >= size) {
		__atomic_add_fetch(&hdr->nr_free_snaps, 1, __ATOMIC_RELAXED);
		buddyprof_snapshot();
	}
	in_hook--;
}

/* The slow path of every allocation function. */
static void track(void *p, size_t size, unsigned int kind, uintptr_t ra)
{
	uint64_t frames[BPROF_FRAMES], t0;
	unsigned int n;

	if (!p || size < min_size || in_hook || !hdr)
		return;
	in_hook++;
	if (!owner() && !claim_slot()) {
		in_hook--;
		return;
	}
	t0 = now_ns();
	n = capture(frames, ra);
	insert((uintptr_t)p, size, kind, frames, n);
	__atomic_add_fetch(&me->hook_ns, now_ns() - t0, __ATOMIC_RELAXED);
	progress(size);
	in_hook--;
}

/* Before the real free: true when @p was tracked (its slot in @old). */
static bool untrack(void *p, struct bprof_slot *old)
{
	uint64_t t0;
	bool found;

	if (in_hook || !owner())
		return false;
	in_hook++;
	t0 = now_ns();
	found = remove_addr((uintptr_t)p, old);
	__atomic_add_fetch(&me->hook_ns, now_ns() - t0, __ATOMIC_RELAXED);
	in_hook--;
	return found;
}

static inline bool heap_maybe_tracked(void *p)
{
	return p && min_size != SIZE_MAX && !is_boot(p) && real_usable &&
	       real_usable(p) >= min_size;
}

/* ---- the malloc family ------------------------------------------------------ */

/*
 * buddyctl run: a buddy allocation for @size >= min_size (falling back to
 * the real allocator, counted), the real allocator below it.  @align 0 is
 * malloc's.
 */
static void *run_or_real(size_t size, size_t align, uintptr_t ra)
{
	void *p;

	if (size >= min_size && !in_hook) {
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
	if (size < min_size) {
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
	if (__builtin_expect(size >= min_size, 0))
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
	if (run_mode && bytes >= min_size && !in_hook) {
		p = run_alloc(bytes, 0, BPROF_KIND_HEAP,
			      (uintptr_t)__builtin_return_address(0));
		if (p)
			return p;	/* a new allocation reads as zeros */
	} else if (run_mode && !in_hook) {
		run_small(bytes);
	}
	p = real_calloc(n, size);
	if (__builtin_expect(bytes >= min_size, 0))
		track(p, bytes, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

/*
 * buddyctl run's realloc: a buddy block moves to a new block (buddy or
 * not) of @size; an ordinary one that grows to min_size moves into buddy
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
	if (p && size >= min_size && !in_hook) {
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
		if (was && owner()) {	/* the old block is still there */
			in_hook++;
			insert(old.addr, old.size, old.kind, old.frames, old.depth);
			in_hook--;
		}
		return NULL;
	}
	if (size >= min_size)
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
	if (run_mode && size >= min_size && !in_hook && align_ok(align) &&
	    !(align % sizeof(void *))) {
		void *p = run_alloc(size, align, BPROF_KIND_HEAP,
				    (uintptr_t)__builtin_return_address(0));

		if (p) {
			*out = p;
			return 0;
		}
	} else if (run_mode && !in_hook && size < min_size) {
		run_small(size);
	}
	r = real_posix_memalign(out, align, size);
	if (!r && size >= min_size)
		track(*out, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return r;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(size, align);
	if (run_mode && align_ok(align) && (p = run_aligned(size, align,
			(uintptr_t)__builtin_return_address(0))))
		return p;
	p = real_aligned_alloc(align, size);
	if (size >= min_size)
		track(p, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(size, align);
	if (run_mode && align_ok(align) && (p = run_aligned(size, align,
			(uintptr_t)__builtin_return_address(0))))
		return p;
	p = real_memalign(align, size);
	if (size >= min_size)
		track(p, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

EXPORT void *valloc(size_t size)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc(size, 4096);
	if (run_mode && (p = run_aligned(size, 4096,
			(uintptr_t)__builtin_return_address(0))))
		return p;
	p = real_valloc(size);
	if (size >= min_size)
		track(p, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
}

EXPORT void *pvalloc(size_t size)
{
	void *p;

	ensure_resolved();
	if (__builtin_expect(init_state != INIT_DONE, 0))
		return boot_alloc((size + 4095) & ~(size_t)4095, 4096);
	if (run_mode && (p = run_aligned(size, 4096,
			(uintptr_t)__builtin_return_address(0))))
		return p;
	p = real_pvalloc(size);
	if (size >= min_size)
		track(p, size, BPROF_KIND_HEAP,
		      (uintptr_t)__builtin_return_address(0));
	return p;
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
	       (prot & PROT_READ) && !(prot & PROT_EXEC) && len >= min_size;
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
	struct bprof_slot old;

	if (__builtin_expect(init_state != INIT_DONE, 0) || !real_munmap)
		return syscall(SYS_munmap, addr, len);
	if (run_mode) {
		size_t have;

		/* the whole mapping: the allocation goes; a part: just that */
		if (run_owns(addr, &have) && len >= have && run_free(addr))
			return 0;
		return real_munmap(addr, len);
	}
	if (min_size != SIZE_MAX)
		free_snapshot(addr, len);
	if (min_size != SIZE_MAX && untrack(addr, &old) && len < old.size) {
		/* Only the head goes: the rest stays allocated. */
		size_t cut = (len + 4095) & ~(size_t)4095;

		if (cut < old.size && old.size - cut >= min_size && owner()) {
			in_hook++;
			insert(old.addr + cut, old.size - cut, old.kind,
			       old.frames, old.depth);
			__atomic_add_fetch(&me->nr_partial_unmap, 1,
					   __ATOMIC_RELAXED);
			in_hook--;
		}
	}
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
	struct bprof_slot old;
	void *new_addr = NULL, *p;
	bool was = false;
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
	if (min_size != SIZE_MAX)
		was = untrack(old_addr, &old);
	p = real_mremap(old_addr, old_len, new_len, flags, new_addr);
	if (was && owner()) {
		in_hook++;
		if (p != MAP_FAILED) {
			if (new_len >= min_size)
				insert((uintptr_t)p, new_len, old.kind,
				       old.frames, old.depth);
		} else {
			insert(old.addr, old.size, old.kind, old.frames,
			       old.depth);
		}
		in_hook--;
	}
	return p;
}

/* ---- snapshots the program asks for ------------------------------------------- */

/**
 * buddyprof_snapshot() - ask the profiler for a snapshot now and wait until
 * it has been taken (at most 60 s).  A program finds it with
 * dlsym(RTLD_DEFAULT, "buddyprof_snapshot") or ctypes.CDLL(None); without
 * the profiler it returns -1 at once.
 *
 * A snapshot covers every followed process.
 *
 * Return: 0 once the snapshot is taken, -1 when not profiled (or not
 * followed: --match) or on timeout.
 */
EXPORT int buddyprof_snapshot(void)
{
	uint32_t want, done;
	uint64_t deadline;

	if (!hdr || hdr->profiler_pid <= 0)
		return -1;
	want = __atomic_add_fetch(&hdr->snap_req, 1, __ATOMIC_ACQ_REL);
	if (kill(hdr->profiler_pid, SIGUSR2))
		return -1;
	deadline = now_ns() + 60000000000ULL;
	for (;;) {
		struct timespec ts = { 0, 100000000 };

		done = __atomic_load_n(&hdr->snap_done, __ATOMIC_ACQUIRE);
		if ((int32_t)(done - want) >= 0)
			return 0;
		if (now_ns() > deadline)
			return -1;
		syscall(SYS_futex, &hdr->snap_done, FUTEX_WAIT, done, &ts,
			NULL, 0);
	}
}

/**
 * buddyprof_live_bytes() - the bytes of the allocations the interposer
 * tracks live in this process now (those of at least the profiler's
 * --min-size), and their peak so far in *@peak when @peak is not NULL.
 * A program finds it as buddyprof_snapshot(); buddy.live_bytes() in
 * Python calls it.  Lock-free: two atomic loads.
 * @peak: where the peak goes, or NULL.
 *
 * Return: the live tracked bytes (0 before its first tracked allocation),
 * or -1 when this process is not followed (not started by buddyctl
 * profile, or not selected by its --match, or no process slot was left).
 */
EXPORT long long buddyprof_live_bytes(unsigned long long *peak)
{
	if (!hdr || no_slot_pid == (int32_t)getpid())
		return -1;
	if (!owner()) {
		if (peak)
			*peak = 0;
		return 0;
	}
	if (peak)
		*peak = __atomic_load_n(&me->peak_live_bytes, __ATOMIC_RELAXED);
	return (long long)__atomic_load_n(&me->live_bytes, __ATOMIC_RELAXED);
}
