// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * inproc.c - the in-process Buddy Compression device behind libbuddy
 * (BUDDY_DEVICE=inproc:..., buddy_open_inproc()): what the kernel gets from
 * its own environment, here from the process's: memory, locks,
 * descriptors, the pools' bitmaps; everything else is core/'s
 * (Documentation/design.rst, "Two backends, one core").  The reports,
 * re-targeting, profiles and the dispatcher are inproc_ioctl.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/link_model.h"
#include "inproc_dev.h"

#define CACHE_LINE	64

/*
 * Zeroed memory of whole cache lines of its own: an allocation's state
 * (its locks, its counters, its chunks' extents) is written by every call
 * on it, and two allocations used by two threads must not share a line,
 * as two calloc()s side by side do.
 */
static void *zalloc_lines(size_t bytes)
{
	size_t n = (bytes + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
	void *p = aligned_alloc(CACHE_LINE, n ? n : CACHE_LINE);

	if (p)
		memset(p, 0, n);
	return p;
}

void *_Atomic *inproc_files;

/* Taken by every call that adds, frees or looks up allocations by id. */
pthread_mutex_t inproc_files_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int live_fds[INPROC_MAX_FD];

static unsigned int nr_live;

struct file *inproc_file_of(int fd)
{
	return inproc_owns(fd) ? inproc_files[fd] : NULL;
}

/* ---- pools: the kernel's genalloc, as a bitmap of 4 KiB granules ---- */

static int pool_init(struct pool *p, u64 bytes)
{
	p->bytes = bytes;
	p->nbits = bytes >> BUDDY_GRANULE_SHIFT;
	p->used = 0;
	if (!bytes)
		return 0;
	p->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->base == MAP_FAILED) {
		p->base = NULL;
		return -ENOMEM;
	}
	p->map = calloc(DIV_ROUND_UP(p->nbits, BUDDY_BITS_PER_LONG),
			sizeof(unsigned long));
	if (!p->map) {
		munmap(p->base, bytes);
		return -ENOMEM;
	}
	return 0;
}

static void pool_destroy(struct pool *p)
{
	if (p->base)
		munmap(p->base, p->bytes);
	free(p->map);
}

/* ---- the chunk table's environment (struct buddy_chunk_ops) ---- */

static struct buddy_chunk_ext *op_chunk(void *ctx, unsigned int c)
{
	return &((struct alloc *)ctx)->chunks[c];
}

static void *op_pool_alloc(void *ctx, enum buddy_pool_id id, u64 bytes,
			   unsigned long *cursor)
{
	struct dev *d = ((struct alloc *)ctx)->d;
	struct pool *p = &d->pool[id];
	unsigned long nr, bit;
	void *addr = NULL;

	bytes = buddy_granule_align(bytes);
	if (!bytes || !p->nbits)
		return NULL;
	nr = bytes >> BUDDY_GRANULE_SHIFT;
	pthread_mutex_lock(&d->lock);
	bit = buddy_next_fit(p->map, p->nbits, 0, nr, cursor);
	if (bit < p->nbits) {
		bitmap_set(p->map, bit, nr);
		p->used += bytes;
		addr = p->base + (bit << BUDDY_GRANULE_SHIFT);
	}
	pthread_mutex_unlock(&d->lock);
	return addr;
}

static void op_pool_free(void *ctx, enum buddy_pool_id id, void *addr,
			 u64 bytes)
{
	struct dev *d = ((struct alloc *)ctx)->d;
	struct pool *p = &d->pool[id];

	bytes = buddy_granule_align(bytes);
	if (!addr || !bytes)
		return;
	pthread_mutex_lock(&d->lock);
	bitmap_clear(p->map, ((u8 *)addr - p->base) >> BUDDY_GRANULE_SHIFT,
		     bytes >> BUDDY_GRANULE_SHIFT);
	p->used -= bytes;
	pthread_mutex_unlock(&d->lock);
}

/* A re-target holds the allocation's rt lock for writing: no I/O runs. */
static void op_lock(void *ctx, unsigned int c)
{
}

static int op_check(void *ctx)
{
	return 0;
}

static void codes_add(struct alloc *a, const s64 *delta)
{
	unsigned int i;

	pthread_mutex_lock(&a->stat_lock);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		a->codes[i] += delta[i];
	pthread_mutex_unlock(&a->stat_lock);
}

static void op_codes_add(void *ctx, const s64 *delta)
{
	codes_add(ctx, delta);
}

static void op_warn(void *ctx, unsigned int c, int err, bool restore)
{
	struct alloc *a = ctx;

	fprintf(stderr, "libbuddy: allocation %llu: chunk %u: %s while %s\n",
		(unsigned long long)a->id, c, strerror(-err),
		restore ? "putting it back (it stays at the new target)" :
			  "re-striping");
}

const struct buddy_chunk_ops inproc_chunk_ops = {
	.chunk = op_chunk,
	.pool_alloc = op_pool_alloc,
	.pool_free = op_pool_free,
	.lock = op_lock,
	.unlock = op_lock,
	.check = op_check,
	.codes_add = op_codes_add,
	.warn = op_warn,
};

/* ---- descriptors ---- */

/* A new memfd standing for @d (and @a); -errno. */
static int file_new(struct dev *d, struct alloc *a, bool cloexec)
{
	struct file *f = calloc(1, sizeof(*f));
	struct stat st;
	int fd;

	if (!f)
		return -ENOMEM;
	fd = memfd_create(a ? "buddy-alloc" : "buddy-inproc",
			  cloexec ? MFD_CLOEXEC : 0);
	if (fd < 0) {
		free(f);
		return -errno;
	}
	if (fd >= INPROC_MAX_FD || fstat(fd, &st)) {
		close(fd);
		free(f);
		return -EMFILE;
	}
	f->fd = fd;
	f->st_dev = st.st_dev;
	f->st_ino = st.st_ino;
	f->d = d;
	f->a = a;
	pthread_mutex_lock(&inproc_files_lock);
	if (!inproc_files) {
		void *_Atomic *t = calloc(INPROC_MAX_FD, sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&inproc_files_lock);
			close(fd);
			free(f);
			return -ENOMEM;
		}
		inproc_files = t;
	}
	inproc_files[fd] = f;
	live_fds[nr_live++] = fd;
	pthread_mutex_unlock(&inproc_files_lock);
	return fd;
}

static void alloc_free(struct alloc *a);
static void dev_put(struct dev *d);

/* Forget @f (inproc_files_lock held) and free what it stood for. */
static void file_drop(struct file *f)
{
	unsigned int k;

	inproc_files[f->fd] = NULL;
	for (k = 0; k < nr_live; k++) {
		if (live_fds[k] == f->fd) {
			live_fds[k] = live_fds[--nr_live];
			break;
		}
	}
	if (f->a) {
		alloc_free(f->a);
	} else {
		pthread_mutex_lock(&f->d->lock);
		f->d->nr_files--;
		pthread_mutex_unlock(&f->d->lock);
	}
	dev_put(f->d);
	free(f);
}

/* Free whatever stands for a descriptor closed behind libbuddy's back. */
void inproc_sweep(void)
{
	unsigned int k;
	struct stat st;

	pthread_mutex_lock(&inproc_files_lock);
	for (k = 0; k < nr_live; ) {
		struct file *f = inproc_files[live_fds[k]];

		if (fstat(f->fd, &st) || st.st_dev != f->st_dev ||
		    st.st_ino != f->st_ino) {
			file_drop(f);	/* moves the last entry to k */
			continue;
		}
		k++;
	}
	pthread_mutex_unlock(&inproc_files_lock);
}

int inproc_close(int fd)
{
	struct file *f;

	pthread_mutex_lock(&inproc_files_lock);
	f = inproc_file_of(fd);
	if (!f) {
		pthread_mutex_unlock(&inproc_files_lock);
		return -EBADF;
	}
	file_drop(f);
	pthread_mutex_unlock(&inproc_files_lock);
	return close(fd) ? -errno : 0;
}

/* ---- the device ---- */

static struct dev *shared_dev;	/* inproc_files_lock */

/* Destroy @d once no descriptor and no allocation is left (inproc_files_lock). */
static void dev_put(struct dev *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->nr_files || d->nr_allocs) {
		pthread_mutex_unlock(&d->lock);
		return;
	}
	pthread_mutex_unlock(&d->lock);
	if (shared_dev == d)
		shared_dev = NULL;
	pool_destroy(&d->pool[0]);
	pool_destroy(&d->pool[1]);
	free(d->profiles);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* "key=N" options; -EINVAL for anything the module would refuse. */
static int parse_opts(struct dev *d, const char *opts)
{
	char buf[sizeof(d->opts)], *tok, *save = NULL;

	d->device_mb = 64;
	d->max_ratio = 4;
	d->chunk_kb = 2048;
	d->user_limit_mb = 0;
	d->auto_target = BUDDY_TARGET_1X;
	d->link_gbps = BUDDY_LINK_GBPS_DEFAULT;
	d->link_latency_ns = BUDDY_LINK_LATENCY_NS_DEFAULT;
	d->device_gbps = BUDDY_DEVICE_GBPS_DEFAULT;
	if (strlen(opts) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, opts);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		static const char *const keys[] = {
			"device_mb", "max_ratio", "chunk_kb", "user_limit_mb",
			"auto_target", "link_gbps", "link_latency_ns",
			"device_gbps",
		};
		unsigned int *vals[] = {
			&d->device_mb, &d->max_ratio, &d->chunk_kb,
			&d->user_limit_mb, &d->auto_target, &d->link_gbps,
			&d->link_latency_ns, &d->device_gbps,
		};
		char *eq = strchr(tok, '='), *end;
		unsigned long v;
		unsigned int k;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || v > UINT_MAX)
			return -EINVAL;
		for (k = 0; k < ARRAY_SIZE(keys); k++)
			if (!strcmp(tok, keys[k]))
				break;
		if (k == ARRAY_SIZE(keys))
			return -EINVAL;
		*vals[k] = v;
	}
	/* the module's load-time checks (kmod/main.c, check_params()) */
	if (!d->device_mb || d->device_mb > (1U << 20) || !d->max_ratio ||
	    d->max_ratio > 16 || d->chunk_kb < 4 || d->chunk_kb % 4 ||
	    d->chunk_kb > (1U << 20) || !buddy_target_valid(d->auto_target) ||
	    !buddy_link_gbps_valid(d->link_gbps) ||
	    !buddy_link_gbps_valid(d->device_gbps))
		return -EINVAL;
	return 0;
}

int inproc_open(const char *opts, bool shared)
{
	struct dev *d;
	u64 bytes;
	int ret, fd;

	pthread_mutex_lock(&inproc_files_lock);
	inproc_sweep();
	d = shared ? shared_dev : NULL;
	if (d && strcmp(d->opts, opts)) {
		fd = -EBUSY;	/* BUDDY_DEVICE changed under a live device */
		goto out;
	}
	if (!d) {
		d = calloc(1, sizeof(*d));
		fd = -ENOMEM;
		if (!d)
			goto out;
		fd = parse_opts(d, opts);
		if (fd) {
			free(d);
			goto out;
		}
		strcpy(d->opts, opts);
		bytes = (u64)d->device_mb << 20;
		ret = pool_init(&d->pool[BUDDY_POOL_DEVICE], bytes);
		if (!ret)
			ret = pool_init(&d->pool[BUDDY_POOL_BUDDY],
					bytes * (d->max_ratio - 1));
		if (ret) {
			pool_destroy(&d->pool[BUDDY_POOL_DEVICE]);
			free(d);
			fd = ret;
			goto out;
		}
		d->space.dev_total = d->pool[BUDDY_POOL_DEVICE].bytes;
		d->space.bud_total = d->pool[BUDDY_POOL_BUDDY].bytes;
		d->tail = &d->allocs;
		d->shared = shared;
		pthread_mutex_init(&d->lock, NULL);
	}
	pthread_mutex_lock(&d->lock);
	d->nr_files++;
	pthread_mutex_unlock(&d->lock);
	fd = file_new(d, NULL, true);
	if (fd < 0) {
		pthread_mutex_lock(&d->lock);
		d->nr_files--;
		pthread_mutex_unlock(&d->lock);
		dev_put(d);
	} else if (shared) {
		shared_dev = d;
	}
out:
	pthread_mutex_unlock(&inproc_files_lock);
	return fd;
}

void inproc_fill_info(struct dev *d, struct buddy_info *info)
{
	buddy_info_fill(info, d->max_ratio, d->chunk_kb, 0); /* no MMAP */
	pthread_mutex_lock(&d->lock);
	info->device_bytes = d->pool[BUDDY_POOL_DEVICE].bytes;
	info->device_used = d->pool[BUDDY_POOL_DEVICE].used;
	info->buddy_bytes = d->pool[BUDDY_POOL_BUDDY].bytes;
	info->buddy_used = d->pool[BUDDY_POOL_BUDDY].used;
	info->logical_bytes = d->logical_bytes;
	info->nr_allocs = d->nr_allocs;
	pthread_mutex_unlock(&d->lock);
	buddy_info_ratio(info);
	info->device_node = -1;
	info->buddy_node = -1;
	info->nr_nodes = 1;
	info->device_node_pages[0] = info->device_bytes / 4096;
	info->buddy_node_pages[0] = info->buddy_bytes / 4096;
}

/* ---- allocations ---- */

static const char *comm_name(void)
{
	return program_invocation_short_name;	/* <errno.h>, _GNU_SOURCE */
}

static bool profile_lookup(struct dev *d, u32 uid, const char *label,
			   unsigned int *target, unsigned int *codec)
{
	unsigned int k;

	for (k = 0; k < d->nr_profiles; k++) {
		struct buddy_profile_entry *e = &d->profiles[k];

		if (e->uid == uid &&
		    !strncmp(e->label, label, BUDDY_LABEL_LEN)) {
			*target = e->target;
			*codec = e->codec;
			return true;
		}
	}
	return false;
}

static void alloc_destroy(struct alloc *a)
{
	unsigned int i;

	for (i = 0; i < NR_LOCKS; i++)
		pthread_mutex_destroy(&a->locks[i]);
	pthread_mutex_destroy(&a->stat_lock);
	pthread_rwlock_destroy(&a->rt);
	free(a->chunks);
	free(a);
}

/* The last reference (its descriptor) is gone: give everything back. */
static void alloc_free(struct alloc *a)
{
	struct dev *d = a->d;

	pthread_rwlock_wrlock(&a->rt);
	buddy_chunks_free(&inproc_chunk_ops, a, a->nr_chunks);
	pthread_rwlock_unlock(&a->rt);
	pthread_mutex_lock(&d->lock);
	*a->pprev = a->next;
	if (a->next)
		a->next->pprev = a->pprev;
	else
		d->tail = a->pprev;
	buddy_space_release(&d->space, a->dev_bytes, a->bud_bytes);
	d->held -= a->dev_bytes + a->bud_bytes;
	d->nr_allocs--;
	d->logical_bytes -= a->size;
	buddy_counters_add(&d->dead, &a->cnt);
	pthread_mutex_unlock(&d->lock);
	alloc_destroy(a);
}

long inproc_dev_alloc(struct dev *d, struct buddy_alloc *req)
{
	unsigned int ptarget = 0, pcodec = 0;
	struct buddy_layout l;
	bool found;
	struct alloc *a;
	u64 limit;
	unsigned int i;
	int ret, fd;

	ret = buddy_alloc_check(req);
	if (ret)
		return ret;
	a = zalloc_lines(sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->d = d;
	a->uid = getuid();
	a->pid = getpid();
	pthread_mutex_lock(&d->lock);
	found = req->target == BUDDY_TARGET_AUTO &&
		profile_lookup(d, a->uid, req->label, &ptarget, &pcodec);
	pthread_mutex_unlock(&d->lock);
	buddy_alloc_core_init(&a->core, req, found, ptarget, pcodec,
			      d->auto_target);
	strncpy(a->comm, comm_name(), sizeof(a->comm) - 1);
	pthread_rwlock_init(&a->rt, NULL);
	pthread_mutex_init(&a->stat_lock, NULL);
	for (i = 0; i < NR_LOCKS; i++)
		pthread_mutex_init(&a->locks[i], NULL);
	a->codes[BUDDY_CODE_ZERO] = a->nr_entries;

	a->chunk_entries = d->chunk_kb * 1024 / BUDDY_ENTRY_BYTES;
	buddy_layout_init(&l, a->nr_entries, a->chunk_entries, a->target);
	if (!buddy_space_could_fit(&d->space, l.dev_bytes, l.bud_bytes)) {
		ret = -E2BIG;
		goto err_free;
	}
	a->nr_chunks = l.nr_chunks;
	a->dev_bytes = l.dev_bytes;
	a->bud_bytes = l.bud_bytes;
	a->chunks = zalloc_lines((size_t)l.nr_chunks * sizeof(*a->chunks));
	if (!a->chunks) {
		ret = -ENOMEM;
		goto err_free;
	}
	pthread_mutex_lock(&d->lock);
	limit = (u64)d->user_limit_mb << 20;
	if (!buddy_quota_allows(d->held, l.dev_bytes + l.bud_bytes, limit)) {
		pthread_mutex_unlock(&d->lock);
		ret = -EDQUOT;
		goto err_free;
	}
	ret = buddy_space_reserve(&d->space, l.dev_bytes, l.bud_bytes);
	if (!ret)
		d->held += l.dev_bytes + l.bud_bytes;
	pthread_mutex_unlock(&d->lock);
	if (ret)
		goto err_free;
	ret = buddy_chunks_reserve(&inproc_chunk_ops, a, a->nr_chunks, a->nr_entries,
				   a->chunk_entries, a->target, a->codec);
	if (ret)
		goto err_unreserve;

	pthread_mutex_lock(&d->lock);
	a->id = ++d->next_id;
	a->pprev = d->tail;
	*d->tail = a;
	d->tail = &a->next;
	d->nr_allocs++;
	d->logical_bytes += a->size;
	pthread_mutex_unlock(&d->lock);
	fd = file_new(d, a, req->flags & BUDDY_ALLOC_CLOEXEC);
	if (fd < 0) {
		alloc_free(a);
		return fd;
	}
	req->fd = fd;
	buddy_alloc_reply_fill(&a->core, req);
	return 0;

err_unreserve:
	pthread_mutex_lock(&d->lock);
	buddy_space_release(&d->space, l.dev_bytes, l.bud_bytes);
	d->held -= l.dev_bytes + l.bud_bytes;
	pthread_mutex_unlock(&d->lock);
err_free:
	alloc_destroy(a);
	return ret;
}

void inproc_fill_stat(struct alloc *a, struct buddy_alloc_stat *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	buddy_stat_fill(&a->core, st);
	st->owner_uid = a->uid;
	st->owner_pid = a->pid;
	pthread_mutex_lock(&a->stat_lock);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		st->codes[i] = a->codes[i];
	st->counters = a->cnt;
	st->link_ns = a->link_ps / 1000;
	st->link_requests = a->link_requests;
	pthread_mutex_unlock(&a->stat_lock);
	/* no mmap, no resident window: the window_* fields stay zero */
}

struct alloc *inproc_find_id(struct dev *d, u64 id)
{
	struct alloc *a;

	for (a = d->allocs; a; a = a->next)
		if (a->id == id)
			return a;
	return NULL;
}

/* ---- the data path ---- */

ssize_t inproc_rw(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	struct file *f = inproc_file_of(fd);
	struct buddy_io_acct acct;
	struct alloc *a;
	u8 *p = buf;
	u64 pos = off, end;
	unsigned int k;
	int ret = 0;

	if (!f)
		return -EBADF;
	a = f->a;
	if (!a)
		return -EINVAL;		/* /dev/buddy has no read or write */
	if (len > MAX_RW)
		len = MAX_RW;
	if ((s64)off < 0 || (s64)(off + len) < 0)
		return -EINVAL;
	if (!len)
		return 0;
	if (off >= a->size)
		return write ? -ENOSPC : 0;
	if (!buf)
		return -EFAULT;
	end = off + len < a->size ? off + len : a->size;
	memset(&acct, 0, sizeof(acct));

	pthread_rwlock_rdlock(&a->rt);
	while (pos < end) {
		u64 stop = buddy_stripe_end(pos, end);
		unsigned int c, i, o;
		pthread_mutex_t *lock;
		struct buddy_chunk_ext *ch;

		buddy_locate(pos, a->chunk_entries, &c, &i, &o);
		ch = &a->chunks[c];
		lock = &a->locks[(pos / BUDDY_ENTRY_BYTES /
				  BUDDY_STRIPE_ENTRIES) % NR_LOCKS];
		pthread_mutex_lock(lock);
		if (write && !ch->written)	/* no store on every call */
			ch->written = true;
		ret = buddy_stripe_rw_link(&ch->x, i, o, p, stop - pos,
					   write, &acct);
		pthread_mutex_unlock(lock);
		if (ret)
			break;
		p += stop - pos;
		pos = stop;
	}
	pthread_rwlock_unlock(&a->rt);

	pthread_mutex_lock(&a->stat_lock);
	buddy_counters_add(&a->cnt, &acct.c);
	/* the module's parameters are read once per call, as it does */
	a->link_ps += buddy_link_ps(&acct.c, acct.link_requests,
				    a->d->link_gbps, a->d->link_latency_ns,
				    a->d->device_gbps);
	a->link_requests += acct.link_requests;
	for (k = 0; k < BUDDY_CODE_NR; k++)
		a->codes[k] += acct.codes[k];
	pthread_mutex_unlock(&a->stat_lock);
	return pos > off ? (ssize_t)(pos - off) : ret;
}

/* ---- device-wide counters: sysfs io_stat and code_stat ---- */

int inproc_stats(int fd, struct buddy_counters *io, uint64_t *codes)
{
	struct file *f = inproc_file_of(fd);
	struct dev *d;
	struct alloc *a;
	unsigned int i;

	if (!f)
		return -EBADF;
	if (f->a)
		return -ENOTTY;
	pthread_mutex_lock(&inproc_files_lock);
	inproc_sweep();
	d = f->d;
	pthread_mutex_lock(&d->lock);
	*io = d->dead;
	for (i = 0; i < BUDDY_CODE_NR; i++)
		codes[i] = 0;
	for (a = d->allocs; a; a = a->next) {
		pthread_mutex_lock(&a->stat_lock);
		buddy_counters_add(io, &a->cnt);
		for (i = 0; i < BUDDY_CODE_NR; i++)
			codes[i] += a->codes[i];
		pthread_mutex_unlock(&a->stat_lock);
	}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&inproc_files_lock);
	return 0;
}
