// SPDX-License-Identifier: GPL-2.0
/*
 * profile_table.c - the profile half of libbuddyprof.so: a followed
 * process's table of its live tracked allocations in the region shared with
 * `buddyctl profile` (profile_shm.h), with their call stacks, and the
 * snapshots the program asks for.
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
 *
 * Python sites.  In a CPython program the Python line that made the
 * allocation (python_site.c) goes into the region's table of Python sites,
 * entered once per distinct string; the slot keeps its index.
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

#include "interposer.h"
#include "profile_shm.h"

static struct bprof_hdr *hdr;		/* non-NULL: this process is followed */

static struct bprof_proc *me;		/* its process slot, once claimed */

static struct bprof_slot *slots;	/* its table */

static uint32_t slot_mask;

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
	set_name(h->not_followed, sizeof(h->not_followed), base);
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

static void attach_region(void)
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
	hook_min_size = h->min_size ? h->min_size : 1;
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

/*
 * 1 + the index of Python site @site in the region's table (profile_shm.h),
 * entered when new; 0 when the table has no room (counted).
 */
static uint16_t pysite_index(const char *site, size_t n)
{
	struct bprof_pysite *t = BPROF_PYSITES_AT(hdr);
	uint32_t h = (uint32_t)bprof_fnv(BPROF_FNV_INIT, site, n), i;
	uint32_t nsites = BPROF_NPYSITES(hdr->nslots);

	for (i = 0; i < nsites; i++) {
		uint32_t k = (h + i) % nsites;
		struct bprof_pysite *e = &t[k];
		uint32_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);

		if (st == BPROF_LIVE && e->hash == h && !strcmp(e->site, site))
			return k + 1;
		if (st != BPROF_EMPTY)
			continue;	/* another string, or one being written */
		if (!__atomic_compare_exchange_n(&e->state, &st, BPROF_BUSY,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		e->hash = h;
		memcpy(e->site, site, n + 1);
		__atomic_store_n(&e->state, BPROF_LIVE, __ATOMIC_RELEASE);
		return k + 1;
	}
	__atomic_add_fetch(&hdr->nr_pysite_full, 1, __ATOMIC_RELAXED);
	return 0;
}

/* The calling thread's Python site, as pysite_index(); 0: none. */
static uint16_t capture_pysite(void)
{
	char site[BPROF_PYSITE_LEN];
	size_t n = py_site(site, sizeof(site));

	return n ? pysite_index(site, n) : 0;
}

static void insert(uint64_t addr, uint64_t size, unsigned int kind,
		   const uint64_t *frames, unsigned int nframes,
		   uint16_t pysite)
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
		s->pysite = pysite;
		s->seq = __atomic_add_fetch(&hdr->seq, 1, __ATOMIC_RELAXED);
		s->addr = addr;
		s->size = size;
		memcpy(s->frames, frames, nframes * sizeof(uint64_t));
		__atomic_store_n(&s->state, BPROF_LIVE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&me->nr_alloc, 1, __ATOMIC_RELAXED);
		live_peak_add(&me->live_bytes, &me->peak_live_bytes, size);
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
 * The progress schedule (profile_shm.h): a snapshot from the allocation that
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
 * Before a free of @p (profile_shm.h, free_bytes): a snapshot while a tracked
 * allocation of at least free_bytes still holds the data of its last
 * phase.  @len: the bytes munmap() unmaps (SIZE_MAX for free()); a partial
 * unmap takes none.
 */
void free_snapshot(void *p, size_t len)
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
void track(void *p, size_t size, unsigned int kind, uintptr_t ra)
{
	uint64_t frames[BPROF_FRAMES], t0;
	unsigned int n;
	uint16_t pysite;

	if (!p || size < hook_min_size || in_hook || !hdr)
		return;
	in_hook++;
	if (!owner() && !claim_slot()) {
		in_hook--;
		return;
	}
	t0 = now_ns();
	n = capture(frames, ra);
	pysite = capture_pysite();
	insert((uintptr_t)p, size, kind, frames, n, pysite);
	__atomic_add_fetch(&me->hook_ns, now_ns() - t0, __ATOMIC_RELAXED);
	progress(size);
	in_hook--;
}

/* Before the real free: true when @p was tracked (its slot in @old). */
bool untrack(void *p, struct bprof_slot *old)
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

/*
 * Before munmap(@addr, @len) of a tracked mapping: a snapshot when one is
 * due (free_bytes); the mapping is untracked, and when only its head goes,
 * the rest stays tracked.
 */
void track_munmap(void *addr, size_t len)
{
	struct bprof_slot old;

	free_snapshot(addr, len);
	if (untrack(addr, &old) && len < old.size) {
		/* Only the head goes: the rest stays allocated. */
		size_t cut = (len + 4095) & ~(size_t)4095;

		if (cut < old.size && old.size - cut >= hook_min_size && owner()) {
			in_hook++;
			insert(old.addr + cut, old.size - cut, old.kind,
			       old.frames, old.depth, old.pysite);
			__atomic_add_fetch(&me->nr_partial_unmap, 1,
					   __ATOMIC_RELAXED);
			in_hook--;
		}
	}
}

/*
 * mremap() of a mapping that may be tracked: untracked before, tracked
 * again at its new place and length after (at its old one when the call
 * failed).
 */
void *track_mremap(void *old_addr, size_t old_len, size_t new_len, int flags,
		   void *new_addr)
{
	struct bprof_slot old;
	bool was = untrack(old_addr, &old);
	void *p = real_mremap(old_addr, old_len, new_len, flags, new_addr);

	if (was && owner()) {
		in_hook++;
		if (p != MAP_FAILED) {
			if (new_len >= hook_min_size)
				insert((uintptr_t)p, new_len, old.kind,
				       old.frames, old.depth, old.pysite);
		} else {
			insert(old.addr, old.size, old.kind, old.frames,
			       old.depth, old.pysite);
		}
		in_hook--;
	}
	return p;
}

void prof_attach(void)
{
	attach_region();
	if (hdr)
		pthread_atfork(NULL, NULL, forked_child);
}

/* A failed realloc(): the old block, untracked before, is still there. */
void track_restore(const struct bprof_slot *old)
{
	if (!owner())
		return;
	in_hook++;
	insert(old->addr, old->size, old->kind, old->frames, old->depth,
	       old->pysite);
	in_hook--;
}
