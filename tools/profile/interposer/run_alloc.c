// SPDX-License-Identifier: GPL-2.0
/*
 * run_alloc.c - `buddyctl run`'s half of libbuddyprof.so: the program's
 * large allocations become buddy allocations mapped into it.
 *
 * With BUDDYRUN_SHM set (tools/profile/interposer/run_shm.h), every malloc-family or
 * anonymous-mmap allocation of at least min_size bytes that the hooks of
 * hooks.c see is made here instead:
 *
 *   - the call stack is labelled exactly as `buddyctl profile` labels it
 *     (bprof_fnv() over module basename and file offset per frame, the
 *     Python site in a CPython program, and the size), so a profile file
 *     written by `profile -p` picks its target;
 *   - BUDDY_IOC_ALLOC with that label and target (AUTO: the kernel looks
 *     the label up in buddyd's table), rounded up to whole pages, and
 *     mmap(MAP_SHARED) of the allocation fd: the program runs on the
 *     module's resident window;
 *   - on a device without mmap (the in-process device of libbuddy), the
 *     program's memory is ordinary memory, and its contents are written
 *     into the device allocation when it is freed or at exit, so that the
 *     device and buddy bytes and sectors are those of the final data; the
 *     window counters stay zero (BRUN_R_NATIVE);
 *   - an alignment above the page size (posix_memalign, aligned_alloc,
 *     memalign: 64 KiB, 2 MiB, up to BRUN_MAX_ALIGN) is served by
 *     reserving len + align of address space and mapping the allocation at
 *     its aligned address inside it; the rest is unmapped again;
 *   - when the device refuses (pools full, over a limit) the caller falls
 *     back to ordinary memory, and the fallback is recorded with its errno.
 *
 * Free (free, realloc, munmap, mremap) unmaps, which writes dirty window
 * pages back, takes BUDDY_IOC_ALLOC_STAT into the allocation's record and
 * closes the fd.  At exit the allocations still live are msync'd and
 * stat'd, not unmapped (a later destructor may still use them).
 *
 * fork(): a MAP_SHARED mapping would make malloc'd memory shared between
 * parent and child.  The child's atfork handler therefore replaces every
 * buddy mapping by a private anonymous copy at the same address (reading
 * it through the window, so the copy counts in the parent's allocation)
 * and closes the child's allocation fds; the child frees those copies with
 * munmap.  The cost is a copy of all live buddy memory per fork();
 * posix_spawn() and vfork() run no atfork handler and copy nothing.
 * Children and exec'd programs take part with allocations of their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interposer.h"
#include "lib/libbuddy.h"
#include "profile_shm.h"
#include "run_shm.h"

#define PAGE		4096UL
#define TBL_SLOTS	(1u << 16)	/* live buddy allocations per process */
#define TBL_TOMB	1ULL

bool run_mode;

static struct brun_hdr *rh;
static struct brun_rec *recs;
static const struct brun_profile *profs;

/* This process's live buddy allocations, keyed by address. */
struct run_ent {
	uint64_t addr;		/* 0 empty, TBL_TOMB deleted */
	uint64_t len;		/* mapped bytes (whole pages) */
	uint64_t size;		/* bytes asked for: live_bytes's share */
	int32_t afd;		/* -1: a private copy in a forked child */
	int32_t rec;		/* record index, -1: none */
	uint32_t flags;		/* BRUN_R_NATIVE */
};

static struct run_ent *tbl;
static pthread_mutex_t tbl_lock = PTHREAD_MUTEX_INITIALIZER;
static int dev_fd = -1;
static bool dev_native;
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- labels ---------------------------------------------------------------- */

struct mod_cache {
	uintptr_t addr;		/* dlpi_addr; the main program's is often 0 */
	const void *phdr;	/* dlpi_phdr: tells objects apart */
	char base[64];
};

static struct mod_cache mods[128];
static unsigned int nmods;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;

struct find_arg {
	uintptr_t ip;
	uint64_t off;
	uintptr_t addr;
	const void *phdr;
	char name[PATH_MAX];
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *p)
{
	struct find_arg *f = p;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || f->ip < lo ||
		    f->ip >= lo + ph->p_memsz)
			continue;
		/* the file offset, as /proc/PID/maps gives it */
		f->off = f->ip - lo + ph->p_offset;
		f->addr = info->dlpi_addr;
		f->phdr = info->dlpi_phdr;
		snprintf(f->name, sizeof(f->name), "%s",
			 info->dlpi_name && *info->dlpi_name ? info->dlpi_name :
			 "/proc/self/exe");
		f->found = true;
		return 1;
	}
	return 0;
}

/* Basename of the file @ip is in (as maps shows it), or NULL. */
static const char *module_of(uintptr_t ip, uint64_t *off)
{
	struct find_arg f = { .ip = ip };
	char real[PATH_MAX];
	const char *base = NULL, *slash;
	unsigned int i;

	dl_iterate_phdr(find_cb, &f);
	if (!f.found)
		return NULL;
	*off = f.off;
	pthread_mutex_lock(&mod_lock);
	for (i = 0; i < nmods; i++)
		if (mods[i].addr == f.addr && mods[i].phdr == f.phdr) {
			base = mods[i].base;
			goto out;
		}
	/* maps names the file by its real path: no symlink, no vdso */
	if (!realpath(f.name, real) || real[0] != '/')
		goto out;
	slash = strrchr(real, '/');
	if (nmods < sizeof(mods) / sizeof(mods[0])) {
		mods[nmods].addr = f.addr;
		mods[nmods].phdr = f.phdr;
		snprintf(mods[nmods].base, sizeof(mods[nmods].base), "%s", slash + 1);
		base = mods[nmods++].base;
	}
out:
	pthread_mutex_unlock(&mod_lock);
	return base;
}

static void label_of(size_t size, uintptr_t ra, char *name)
{
	uint64_t frames[BPROF_FRAMES], h = BPROF_FNV_INIT, sz = size;
	char site[BPROF_PYSITE_LEN];
	unsigned int n, i;
	bool short_walk;
	size_t ns;

	n = bp_backtrace(frames, rh->depth, ra, rh->flags & BRUN_F_UNWIND,
			 &short_walk);
	for (i = 0; i < n; i++) {
		uint64_t off = frames[i];
		const char *base = module_of(frames[i], &off);

		if (base) {
			h = bprof_fnv(h, base, strlen(base) + 1);
		} else {
			off = frames[i];
			h = bprof_fnv(h, "?", 2);
		}
		h = bprof_fnv(h, &off, sizeof(off));
	}
	ns = py_site(site, sizeof(site));
	if (ns)
		h = bprof_fnv(h, site, ns + 1);
	h = bprof_fnv(h, &sz, sizeof(sz));
	snprintf(name, BUDDY_LABEL_LEN, BPROF_LABEL_FMT, BPROF_LABEL_ARG(h));
}

/* ---- records ---------------------------------------------------------------- */

static int new_rec(const char *label, size_t size, unsigned int kind,
		   unsigned int target, uint32_t flags, int err)
{
	uint64_t i = __atomic_fetch_add(&rh->next_rec, 1, __ATOMIC_RELAXED);
	struct brun_rec *r;

	if (i >= rh->nrecs) {
		__atomic_add_fetch(&rh->nr_rec_dropped, 1, __ATOMIC_RELAXED);
		return -1;
	}
	r = &recs[i];
	r->flags = flags;
	r->pid = getpid();
	r->err = err;
	r->kind = kind;
	r->target = target;
	r->size = size;
	memcpy(r->label, label, BUDDY_LABEL_LEN);
	__atomic_store_n(&r->state, flags & BRUN_R_FALLBACK ? BRUN_FINAL :
			 BRUN_LIVE, __ATOMIC_RELEASE);
	return (int)i;
}

/* Write back (native: the contents), stat into the record. */
static void finish(struct run_ent *e, bool unmap)
{
	struct brun_rec *r = e->rec >= 0 ? &recs[e->rec] : NULL;

	if (e->afd < 0) {
		if (unmap)
			real_munmap((void *)(uintptr_t)e->addr, e->len);
		return;
	}
	if (e->flags & BRUN_R_NATIVE)
		buddy_pwrite(e->afd, (void *)(uintptr_t)e->addr, e->len, 0);
	if (unmap)
		real_munmap((void *)(uintptr_t)e->addr, e->len);	/* writes back */
	else if (!(e->flags & BRUN_R_NATIVE))
		msync((void *)(uintptr_t)e->addr, e->len, MS_SYNC);
	if (r) {
		memset(&r->st, 0, sizeof(r->st));
		if (!buddy_alloc_stat(e->afd, &r->st))
			r->flags |= BRUN_R_STAT;
		__atomic_store_n(&r->state, BRUN_FINAL, __ATOMIC_RELEASE);
	}
	if (unmap)
		buddy_close(e->afd);
}

/* ---- the table ------------------------------------------------------------------ */

static uint32_t tbl_hash(uint64_t addr)
{
	return (uint32_t)(((addr >> 12) * 0x9e3779b97f4a7c15ULL) >> 40) &
	       (TBL_SLOTS - 1);
}

/* Under tbl_lock. */
static struct run_ent *tbl_find(uint64_t addr)
{
	uint32_t h = tbl_hash(addr), i;

	for (i = 0; i < TBL_SLOTS; i++) {
		struct run_ent *e = &tbl[(h + i) & (TBL_SLOTS - 1)];

		if (!e->addr)
			return NULL;
		if (e->addr == addr)
			return e;
	}
	return NULL;
}

static bool tbl_insert(const struct run_ent *n)
{
	uint32_t h = tbl_hash(n->addr), i;
	bool ok = false;

	pthread_mutex_lock(&tbl_lock);
	for (i = 0; i < TBL_SLOTS; i++) {
		struct run_ent *e = &tbl[(h + i) & (TBL_SLOTS - 1)];

		if (e->addr && e->addr != TBL_TOMB)
			continue;
		*e = *n;
		ok = true;
		break;
	}
	pthread_mutex_unlock(&tbl_lock);
	return ok;
}

bool run_owns(const void *p, size_t *len)
{
	struct run_ent *e;

	if (!run_mode || !p || ((uintptr_t)p & (PAGE - 1)))
		return false;
	pthread_mutex_lock(&tbl_lock);
	e = tbl_find((uintptr_t)p);
	if (e)
		*len = e->len;
	pthread_mutex_unlock(&tbl_lock);
	return e != NULL;
}

bool run_free(void *p)
{
	struct run_ent *e, copy;

	if (!run_mode || !p || ((uintptr_t)p & (PAGE - 1)))
		return false;
	pthread_mutex_lock(&tbl_lock);
	e = tbl_find((uintptr_t)p);
	if (e) {
		copy = *e;
		e->addr = TBL_TOMB;
	}
	pthread_mutex_unlock(&tbl_lock);
	if (!e)
		return false;
	if (copy.afd >= 0)
		__atomic_sub_fetch(&rh->live_bytes, copy.size, __ATOMIC_RELAXED);
	in_hook++;
	finish(&copy, true);
	in_hook--;
	return true;
}

void run_shrunk(void *p, size_t len)
{
	struct run_ent *e;

	pthread_mutex_lock(&tbl_lock);
	e = tbl_find((uintptr_t)p);
	if (e)
		e->len = (len + PAGE - 1) & ~(PAGE - 1);
	pthread_mutex_unlock(&tbl_lock);
}

/* ---- allocating ----------------------------------------------------------------- */

/* The device, opened once per process; -errno when it cannot be. */
static int device(void)
{
	int fd;

	pthread_mutex_lock(&dev_lock);
	if (dev_fd == -1) {
		fd = buddy_open(rh->device[0] ? rh->device : NULL);
		if (fd < 0) {
			int32_t zero = 0;

			__atomic_add_fetch(&rh->nr_dev_open_failed, 1,
					   __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&rh->dev_open_err, &zero,
						    -fd, false, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED);
			dev_fd = fd;
		} else {
			dev_fd = fd;
			dev_native = buddy_is_inproc(fd);
			if (dev_native)
				__atomic_add_fetch(&rh->nr_dev_inproc, 1,
						   __ATOMIC_RELAXED);
		}
	}
	fd = dev_fd;
	pthread_mutex_unlock(&dev_lock);
	return fd;
}

static void target_of(const char *label, unsigned int *target,
		      unsigned int *codec, uint32_t *flags)
{
	uint32_t i;

	*target = rh->target;
	*codec = rh->codec;
	for (i = 0; i < rh->nprofiles && i < BRUN_MAX_PROFILES; i++)
		if (!strcmp(profs[i].label, label)) {
			*target = profs[i].target;
			*codec = profs[i].codec;
			*flags |= BRUN_R_PROFILE;
			return;
		}
}

void run_small(size_t size)
{
	if (!rh)
		return;
	__atomic_add_fetch(&rh->nr_small, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&rh->bytes_small, size, __ATOMIC_RELAXED);
}

/*
 * @len bytes of @fd (-1: anonymous private memory) mapped at an address
 * aligned to @align (a power of two): mapped at any address when @align is
 * at most a page, else inside a reservation of @len + @align, whose head
 * and tail are unmapped again.  MAP_FAILED with errno set when it fails.
 */
static void *map_aligned(uint64_t len, uint64_t align, int fd)
{
	int flags = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
	uintptr_t res, at;
	uint64_t span;
	void *p;

	if (align <= PAGE)
		return real_mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	span = len + align - PAGE;
	p = real_mmap(NULL, span, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return p;
	res = (uintptr_t)p;
	at = (res + align - 1) & ~(uintptr_t)(align - 1);
	if (real_mmap((void *)at, len, PROT_READ | PROT_WRITE,
		      flags | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int err = errno;

		real_munmap(p, span);
		errno = err;
		return MAP_FAILED;
	}
	if (at > res)
		real_munmap(p, at - res);
	if (res + span > at + len)
		real_munmap((void *)(at + len), res + span - (at + len));
	return (void *)at;
}

void *run_alloc(size_t size, size_t align, unsigned int kind, uintptr_t ra)
{
	char label[BUDDY_LABEL_LEN];
	uint64_t len = ((uint64_t)size + PAGE - 1) & ~(PAGE - 1);
	unsigned int target, codec;
	uint32_t flags = 0;
	struct run_ent e = { 0 };
	int dev, afd, err = 0;
	void *p = MAP_FAILED;

	if (!run_mode || in_hook || !size)
		return NULL;
	in_hook++;
	label_of(size, ra, label);
	target_of(label, &target, &codec, &flags);
	if (align > BRUN_MAX_ALIGN) {
		err = EINVAL;
		goto fallback;
	}
	dev = device();
	if (dev < 0) {
		err = -dev;
		goto fallback;
	}
	afd = buddy_alloc_simple(dev, len, target, codec, label, NULL);
	if (afd < 0) {
		err = -afd;
		goto fallback;
	}
	if (dev_native)
		flags |= BRUN_R_NATIVE;
	p = map_aligned(len, align, dev_native ? -1 : afd);
	if (p == MAP_FAILED) {
		err = errno;
		buddy_close(afd);
		goto fallback;
	}
	e.addr = (uintptr_t)p;
	e.len = len;
	e.size = size;
	e.afd = afd;
	e.flags = flags;
	e.rec = new_rec(label, size, kind, target, flags, 0);
	if (!tbl_insert(&e)) {
		e.addr = 0;
		finish(&e, true);
		err = ENFILE;
		goto fallback;
	}
	live_peak_add(&rh->live_bytes, &rh->peak_live_bytes, size);
	in_hook--;
	return p;

fallback:
	new_rec(label, size, kind, target, flags | BRUN_R_FALLBACK, err);
	in_hook--;
	return NULL;
}

/* ---- fork and exit ---------------------------------------------------------------- */

/* No lock of ours may be held by another thread across fork(). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&mod_lock);
	pthread_mutex_lock(&dev_lock);
	pthread_mutex_lock(&tbl_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&tbl_lock);
	pthread_mutex_unlock(&dev_lock);
	pthread_mutex_unlock(&mod_lock);
	__atomic_add_fetch(&rh->nr_forks, 1, __ATOMIC_RELAXED);
}

/* The child gets a private copy of every buddy mapping (see the top). */
static void atfork_child(void)
{
	uint32_t i;

	in_hook++;
	for (i = 0; i < TBL_SLOTS; i++) {
		struct run_ent *e = &tbl[i];
		void *copy;

		if (e->addr <= TBL_TOMB || e->afd < 0)
			continue;
		if (!(e->flags & BRUN_R_NATIVE)) {
			copy = real_mmap(NULL, e->len, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (copy == MAP_FAILED)
				abort();	/* no way to keep it private */
			memcpy(copy, (void *)(uintptr_t)e->addr, e->len);
			if (real_mremap(copy, e->len, e->len,
					MREMAP_MAYMOVE | MREMAP_FIXED,
					(void *)(uintptr_t)e->addr) == MAP_FAILED)
				abort();
			__atomic_add_fetch(&rh->nr_private_copies, 1,
					   __ATOMIC_RELAXED);
			__atomic_add_fetch(&rh->bytes_private_copies, e->len,
					   __ATOMIC_RELAXED);
		}
		buddy_close(e->afd);
		e->afd = -1;
		e->rec = -1;
	}
	in_hook--;
	pthread_mutex_unlock(&tbl_lock);
	pthread_mutex_unlock(&dev_lock);
	pthread_mutex_unlock(&mod_lock);
}

__attribute__((destructor(101))) static void run_exit(void)
{
	uint32_t i;

	if (!run_mode)
		return;
	in_hook++;
	pthread_mutex_lock(&tbl_lock);
	for (i = 0; i < TBL_SLOTS; i++)
		if (tbl[i].addr > TBL_TOMB)
			finish(&tbl[i], false);
	pthread_mutex_unlock(&tbl_lock);
	in_hook--;
}

/* The run region's size, 0 when its header is not valid. */
static uint64_t run_region_bytes(const void *head)
{
	const struct brun_hdr *h = head;

	if (h->magic != BRUN_MAGIC || h->version != BRUN_VERSION ||
	    h->hdr_bytes != BRUN_HDR_BYTES ||
	    h->rec_bytes != sizeof(struct brun_rec) || !h->nrecs ||
	    h->nprofiles > BRUN_MAX_PROFILES)
		return 0;
	return BRUN_REGION_BYTES(h->nrecs);
}

size_t run_attach(void)
{
	struct brun_hdr *h;
	uint64_t bytes;

	h = shm_region_attach(BRUN_ENV_SHM, BRUN_HDR_BYTES, run_region_bytes,
			      &bytes);
	if (!h)
		return SIZE_MAX;
	tbl = real_mmap(NULL, TBL_SLOTS * sizeof(*tbl), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tbl == MAP_FAILED) {
		real_munmap(h, bytes);
		return SIZE_MAX;
	}
	rh = h;
	recs = BRUN_RECS(h);
	profs = BRUN_PROFILES(h);
	__atomic_add_fetch(&h->nr_procs, 1, __ATOMIC_RELAXED);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	run_mode = true;
	return h->min_size ? h->min_size : 1;
}
