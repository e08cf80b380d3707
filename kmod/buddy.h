/* SPDX-License-Identifier: GPL-2.0 */
/*
 * buddy.ko internals: the two pools, allocations and their chunks.
 */
#ifndef BUDDY_KMOD_H
#define BUDDY_KMOD_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/kref.h>
#include <linux/pid.h>
#include <linux/seqlock.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "core/alloc.h"
#include "window.h"

static_assert(TASK_COMM_LEN == BUDDY_COMM_LEN);

#define BUDDY_NR_COUNTERS	(sizeof(struct buddy_counters) / sizeof(__u64))

/**
 * struct buddy_pool - pages taken on one NUMA node (or any), mapped into one
 * virtual range whose base is the paper's global buddy base address, and
 * handed out in 4 KiB granules (BUDDY_GRANULE_BYTES) by genalloc.
 */
struct buddy_pool {
	const char *name;
	int node;
	unsigned long nr_pages;
	struct page **pages;
	void *base;
	struct gen_pool *gp;
	atomic64_t used;
	unsigned long node_pages[BUDDY_MAX_NODES];
};

int buddy_pool_init(struct buddy_pool *p, const char *name, u64 bytes,
		    int node);
void buddy_pool_destroy(struct buddy_pool *p);
void *buddy_pool_alloc(struct buddy_pool *p, u64 bytes,
		       unsigned long *cursor);
void buddy_pool_free(struct buddy_pool *p, void *addr, u64 bytes);
static inline u64 buddy_pool_bytes(const struct buddy_pool *p)
{
	return (u64)p->nr_pages << PAGE_SHIFT;
}

/**
 * struct buddy_chunk - chunk_kb logical KiB of an allocation.
 * @e:		its extents and their bytes, as the shared chunk code
 *		(core/chunk.c) keeps them.
 * @sem:	taken for reading by I/O and for writing while the chunk is
 *		re-striped.
 */
struct buddy_chunk {
	struct buddy_chunk_ext e;
	struct rw_semaphore sem;
};

/**
 * struct buddy_allocation - one BUDDY_IOC_ALLOC: a refcounted object, found
 * by id in buddy_device.allocs.  Its file holds one reference; a lookup by
 * id takes another (under the xarray's lock) and works without any
 * device-wide lock.  The last reference frees the extents.
 * @rt_sem:	held for writing by a re-target for its whole length, and
 *		tried for reading by IOCB_NOWAIT I/O at its start and around
 *		its stripe work (never across a user copy, which may fault),
 *		which gives up with -EAGAIN instead of meeting a chunk being
 *		re-striped.
 *		Also serialises re-targets of one allocation.
 * @core:	what it is on both backends (core/alloc.h): id, size,
 *		target, codec, label, comm, its pool bytes...
 * @dead:	the file is released; a running re-target stops.
 * @codes_seq:	makes a reader see @codes as one histogram summing to
 *		@nr_entries.
 */
struct buddy_user;

struct buddy_allocation {
	BUDDY_ALLOC_CORE(core);
	struct kref ref;
	kuid_t uid;
	struct pid *pid;
	struct buddy_user *user;
	struct buddy_chunk *chunks;
	struct rw_semaphore rt_sem;
	bool dead;
	atomic64_t counters[BUDDY_NR_COUNTERS];
	seqlock_t codes_seq;
	s64 codes[BUDDY_CODE_NR];
	struct buddy_win win;
};

/**
 * struct buddy_pcpu - what each CPU keeps of the device, so that the data
 * path writes no cache line another CPU writes.
 * @counters:	the device's I/O counters, CPU by CPU; summed on read.
 * @bounce:	a spare bounce buffer of BUDDY_BOUNCE_BYTES (or NULL), taken
 *		and given back with this_cpu_xchg()/this_cpu_cmpxchg(): the
 *		owner may sleep and move, the slot is only a free list.
 * @win_counters: the resident window's device-wide counters (enum
 *		buddy_win_counter), CPU by CPU; summed on read.
 * @link_ps:	the modeled link time of every allocation, ever.
 * @codes_seq:	@codes changes as one delta, with preemption off.
 * @codes:	the size-code histogram's changes made on this CPU: the
 *		device's histogram of live entries is their sum.  Every
 *		delta sums to zero (a write moves entries between codes) or
 *		to an allocation's entries (its creation and its release),
 *		and each CPU's part is read whole, so the sum always counts
 *		the live entries exactly; a single code may lag by the
 *		deltas in flight.
 */
struct buddy_pcpu {
	u64 counters[BUDDY_NR_COUNTERS];
	u8 *bounce;
	u64 win_counters[BUDDY_WIN_NR];
	u64 link_ps;
	seqcount_t codes_seq;
	s64 codes[BUDDY_CODE_NR];
};

#define BUDDY_BOUNCE_BYTES	(4 * BUDDY_STRIPE_ENTRIES * BUDDY_ENTRY_BYTES)

/**
 * struct buddy_device - the one /dev/buddy.
 * @lock:	never held across long work or user copies: the reservation
 *		counters @space, the per-user shares @users, @nr_allocs and
 *		@logical_bytes.
 * @allocs:	live allocations by id (the xarray has its own lock).
 * @pcpu:	the per-CPU counters, size-code histograms and spare bounce
 *		buffers.
 */
struct buddy_device {
	struct miscdevice misc;
	struct buddy_pool device;
	struct buddy_pool buddy;
	struct vfsmount *mnt;
	struct mutex lock;
	struct buddy_space space;
	struct list_head users;
	unsigned int nr_allocs;
	u64 logical_bytes;
	struct xarray allocs;
	atomic64_t next_id;
	struct buddy_pcpu __percpu *pcpu;	/* counters: all, ever */
};

extern struct buddy_device *buddy_dev;
extern unsigned int buddy_chunk_kb;
extern unsigned int buddy_user_limit_mb;
extern unsigned int buddy_auto_target;
extern unsigned int buddy_max_ratio;
extern int buddy_device_node;
extern int buddy_buddy_node;

int buddy_fs_init(void);
void buddy_fs_exit(void);

/* kmod/codec_fpu.c: the codec implementation, the FPU section. */
void buddy_codec_fpu_init(void);
int buddy_stripe_rw_fpu(const struct buddy_extent *x, unsigned int i,
			unsigned int off, u8 *buf, unsigned int len, bool write,
			struct buddy_io_acct *acct);
long buddy_ioctl_alloc(struct buddy_alloc *req, struct file **filep);
long buddy_alloc_file_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg);
extern const struct file_operations buddy_alloc_fops;

/* rw.c: an allocation's data path, a stripe at a time */
ssize_t buddy_read_iter(struct kiocb *iocb, struct iov_iter *to);
ssize_t buddy_write_iter(struct kiocb *iocb, struct iov_iter *from);

void buddy_fill_stat(struct buddy_allocation *a, struct buddy_alloc_stat *st);
long buddy_map_codes(struct buddy_allocation *a, struct buddy_map *m);
int buddy_walk_check(void *ctx);
extern const struct buddy_chunk_ops buddy_chunk_ops;
struct buddy_allocation *buddy_alloc_get(u64 id);
void buddy_alloc_put(struct buddy_allocation *a);
void buddy_codes_add(struct buddy_allocation *a, const s64 *delta);
void buddy_dev_codes_add(const s64 *delta);
u64 buddy_pcpu_sum(size_t off);
void buddy_dev_codes_read(s64 *codes);
void buddy_user_adjust(struct buddy_allocation *a, s64 bytes);
bool buddy_user_window_allows(struct buddy_user *u, long pages);
void buddy_user_window_add(struct buddy_user *u, long pages);
void buddy_user_get(struct buddy_user *u);
void buddy_user_put(struct buddy_user *u);

/* admin.c: system-wide view and live re-targeting (CAP_SYS_ADMIN) */
long buddy_admin_list(struct file *file, void *kdata, struct file **install);
long buddy_admin_stat(struct file *file, void *kdata, struct file **install);
long buddy_admin_map(struct file *file, void *kdata, struct file **install);
long buddy_admin_set_target(struct file *file, void *kdata,
			    struct file **install);

/* profile.c: the (uid, label) -> target table for AUTO allocations */
bool buddy_profile_lookup(kuid_t uid, const char *label,
			  unsigned int *target, unsigned int *codec);
long buddy_profile_set(struct file *file, void *kdata, struct file **install);
long buddy_profile_get(struct file *file, void *kdata, struct file **install);
void buddy_profile_clear(void);

/* The table-driven, size-extensible ioctl dispatcher (dma-heap style). */
struct buddy_ioctl_desc {
	unsigned int cmd;
	bool admin;		/* needs CAP_SYS_ADMIN */
	long (*fn)(struct file *file, void *kdata, struct file **install);
};

long buddy_ioctl_dispatch(const struct buddy_ioctl_desc *table,
			  unsigned int n, struct file *file,
			  unsigned int cmd, unsigned long arg);
struct io_uring_cmd;
int buddy_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags,
		    long (*ioctl)(struct file *, unsigned int, unsigned long));

/* link.c: the link model, modeled nanoseconds of buddy and device traffic */
u64 buddy_acct_flush(struct buddy_allocation *a, struct buddy_io_acct *acct);
extern unsigned int buddy_link_delay_on;
void __buddy_link_delay(u64 ps);
u64 buddy_link_device_ns(void);
void buddy_link_owe(struct buddy_allocation *a, u64 ps);
u64 buddy_link_take_debt(struct buddy_allocation *a);

/**
 * buddy_link_delay() - with the link_delay parameter on, really wait @ps
 * of modeled link time (a call's own, from buddy_acct_flush(), and the
 * allocation's debt, from buddy_link_take_debt()); nothing otherwise.
 * @ps:	modeled picoseconds.
 *
 * Context: process context that may sleep, holding no lock of the module,
 * no page lock and no mmap_lock: the end of a pread/pwrite, fsync or
 * close, or a fault that dropped mmap_lock to wait (window.c).  Short
 * waits spin (ndelay), longer ones sleep killably, at most 100 ms per
 * call (LINK_DELAY_MAX_NS).  Counters and link_ns never depend on it.
 */
static inline void buddy_link_delay(u64 ps)
{
	/* off by default: no call, no division on the data path */
	if (unlikely(READ_ONCE(buddy_link_delay_on)) && ps >= 1000)
		__buddy_link_delay(ps);
}

#endif /* BUDDY_KMOD_H */
