// SPDX-License-Identifier: GPL-2.0
/*
 * Allocations: BUDDY_IOC_ALLOC reserves every chunk's device and buddy
 * extents up front and returns a file descriptor; the last close frees
 * everything.  Also here: the per-user byte accounting, the allocation's
 * ioctls (STAT, GET_MAP) and its file_operations.  The data path
 * (read_iter/write_iter) is in rw.c, the window behind mmap in window.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/overflow.h>
#include <linux/pseudo_fs.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "buddy.h"
#include "buddy_trace.h"
#include "core/link_model.h"

#define BUDDY_FS_MAGIC		0x42554459	/* "BUDY" */

/* ---- a pseudo filesystem, so each allocation has an inode of its own ---- */

/* An allocation's inode goes: the window checks that no page points at it. */
static void buddy_fs_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	buddy_win_inode_evicted(inode);
}

static const struct super_operations buddy_fs_ops = {
	.statfs = simple_statfs,
	.evict_inode = buddy_fs_evict_inode,
};

static int buddy_fs_init_fs_context(struct fs_context *fc)
{
	struct pseudo_fs_context *ctx = init_pseudo(fc, BUDDY_FS_MAGIC);

	if (!ctx)
		return -ENOMEM;
	ctx->ops = &buddy_fs_ops;
	return 0;
}

static struct file_system_type buddy_fs_type = {
	.name = "buddy",
	.init_fs_context = buddy_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

int buddy_fs_init(void)
{
	buddy_dev->mnt = kern_mount(&buddy_fs_type);
	return PTR_ERR_OR_ZERO(buddy_dev->mnt);
}

void buddy_fs_exit(void)
{
	kern_unmount(buddy_dev->mnt);
}

/* ---- the shared chunk code's environment (core/chunk.h) ---- */

static struct buddy_chunk_ext *kop_chunk(void *ctx, unsigned int c)
{
	return &((struct buddy_allocation *)ctx)->chunks[c].e;
}

static struct buddy_pool *kop_pool(enum buddy_pool_id id)
{
	return id == BUDDY_POOL_DEVICE ? &buddy_dev->device : &buddy_dev->buddy;
}

static void *kop_pool_alloc(void *ctx, enum buddy_pool_id id, u64 bytes,
			    unsigned long *cursor)
{
	return buddy_pool_alloc(kop_pool(id), bytes, cursor);
}

static void kop_pool_free(void *ctx, enum buddy_pool_id id, void *addr,
			  u64 bytes)
{
	buddy_pool_free(kop_pool(id), addr, bytes);
}

static void kop_lock(void *ctx, unsigned int c)
{
	down_write(&((struct buddy_allocation *)ctx)->chunks[c].sem);
}

static void kop_unlock(void *ctx, unsigned int c)
{
	up_write(&((struct buddy_allocation *)ctx)->chunks[c].sem);
}

/* Between batches: yield, stop on a fatal signal or a released file. */
static int kop_check(void *ctx)
{
	struct buddy_allocation *a = ctx;

	cond_resched();
	if (fatal_signal_pending(current))
		return -EINTR;
	return READ_ONCE(a->dead) ? -ENOENT : 0;
}

static void kop_codes_add(void *ctx, const s64 *delta)
{
	buddy_codes_add(ctx, delta);
}

static void kop_warn(void *ctx, unsigned int c, int err, bool restore)
{
	struct buddy_allocation *a = ctx;

	if (restore)
		pr_err("allocation %llu: chunk %u stays at its new target (%d)\n",
		       a->id, c, err);
	else if (err == -EIO)
		pr_err("allocation %llu: corrupt entry in chunk %u while re-striping\n",
		       a->id, c);
}

const struct buddy_chunk_ops buddy_chunk_ops = {
	.chunk = kop_chunk,
	.pool_alloc = kop_pool_alloc,
	.pool_free = kop_pool_free,
	.lock = kop_lock,
	.unlock = kop_unlock,
	.check = kop_check,
	.codes_add = kop_codes_add,
	.warn = kop_warn,
};

/**
 * struct buddy_user - one uid's share (user_limit_mb).
 * @node:	on buddy_device.users (under bd->lock).
 * @uid:	the uid.
 * @nr:		references: the uid's live allocations and the window's
 *		orphans of its freed ones (under bd->lock; the entry goes
 *		with the last).
 * @bytes:	device plus carve-out bytes of its live allocations, from
 *		reservation to free (written under bd->lock, read without by
 *		the window).
 * @win_pages:	window pages of its allocations, resident and orphans.
 */
struct buddy_user {
	struct list_head node;
	kuid_t uid;
	unsigned int nr;
	u64 bytes;
	atomic_long_t win_pages;
};

/* @uid's entry; made from *@spare (taken) if none and @spare is given. */
static struct buddy_user *user_find(kuid_t uid, struct buddy_user **spare)
{
	struct buddy_user *u;

	list_for_each_entry(u, &buddy_dev->users, node)
		if (uid_eq(u->uid, uid))
			return u;
	if (!spare || !*spare)
		return NULL;
	u = *spare;
	*spare = NULL;
	u->uid = uid;
	list_add(&u->node, &buddy_dev->users);
	return u;
}

/* Caller holds bd->lock. */
static void user_uncharge(struct buddy_user *u, u64 bytes)
{
	WRITE_ONCE(u->bytes, u->bytes - bytes);
	if (!--u->nr) {
		WARN_ON_ONCE(atomic_long_read(&u->win_pages));
		list_del(&u->node);
		kfree(u);
	}
}

void buddy_user_adjust(struct buddy_allocation *a, s64 bytes)
{
	lockdep_assert_held(&buddy_dev->lock);
	WRITE_ONCE(a->user->bytes, a->user->bytes + bytes);
}

/**
 * buddy_user_window_allows() - whether @u's share has room for @pages more
 * window pages: its pool bytes plus its window pages (resident and
 * orphans) within user_limit_mb, or no limit.  Read without bd->lock: a
 * bound that concurrent faults may pass by a page each.
 * @u:		the user.
 * @pages:	pages to add.
 *
 * Return: true when they fit.
 */
bool buddy_user_window_allows(struct buddy_user *u, long pages)
{
	u64 limit = (u64)READ_ONCE(buddy_user_limit_mb) << 20;
	long win = atomic_long_read(&u->win_pages) + pages;

	return !limit || READ_ONCE(u->bytes) + (u64)max(win, 0L) * PAGE_SIZE <=
			 limit;
}

/**
 * buddy_user_window_add() - count @pages more (or fewer) window pages in
 * @u's share.
 * @u:		the user (referenced by the allocation or the orphan).
 * @pages:	pages to add, negative to take away.
 */
void buddy_user_window_add(struct buddy_user *u, long pages)
{
	atomic_long_add(pages, &u->win_pages);
}

/**
 * buddy_user_get() - another reference to @u: an orphan of its allocation
 * keeps the entry, and its window page charged, after the allocation.
 * @u:	the user, referenced by the caller.
 */
void buddy_user_get(struct buddy_user *u)
{
	mutex_lock(&buddy_dev->lock);
	u->nr++;
	mutex_unlock(&buddy_dev->lock);
}

/**
 * buddy_user_put() - drop a reference of buddy_user_get().
 * @u:	the user; freed with its last reference.
 */
void buddy_user_put(struct buddy_user *u)
{
	mutex_lock(&buddy_dev->lock);
	user_uncharge(u, 0);
	mutex_unlock(&buddy_dev->lock);
}

static void free_allocation(struct buddy_allocation *a)
{
	put_pid(a->pid);
	kvfree(a->chunks);
	kfree(a);
}

/*
 * The device's histogram: a delta goes to this CPU's part, so that writers
 * on different CPUs share no cache line (struct buddy_pcpu).  Process
 * context only: the sequence count is this CPU's, with preemption off.
 */
void buddy_dev_codes_add(const s64 *delta)
{
	struct buddy_pcpu *p = get_cpu_ptr(buddy_dev->pcpu);
	unsigned int i;

	write_seqcount_begin(&p->codes_seq);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		p->codes[i] += delta[i];
	write_seqcount_end(&p->codes_seq);
	put_cpu_ptr(buddy_dev->pcpu);
}

/*
 * The device's total of the u64 at @off in struct buddy_pcpu (a counter):
 * every CPU's part added up, exact once the calls that add to it are done.
 */
u64 buddy_pcpu_sum(size_t off)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(u64 *)((u8 *)per_cpu_ptr(buddy_dev->pcpu,
							    cpu) + off));
	return sum;
}

/* The device's histogram of live entries: each CPU's part read whole. */
void buddy_dev_codes_read(s64 *codes)
{
	s64 part[BUDDY_CODE_NR];
	unsigned int i, seq;
	int cpu;

	memset(codes, 0, BUDDY_CODE_NR * sizeof(*codes));
	for_each_possible_cpu(cpu) {
		struct buddy_pcpu *p = per_cpu_ptr(buddy_dev->pcpu, cpu);

		do {
			seq = read_seqcount_begin(&p->codes_seq);
			memcpy(part, p->codes, sizeof(part));
		} while (read_seqcount_retry(&p->codes_seq, seq));
		for (i = 0; i < BUDDY_CODE_NR; i++)
			codes[i] += part[i];
	}
}

/* Add @delta (BUDDY_CODE_SLOTS, sums to 0) to an allocation's histogram. */
void buddy_codes_add(struct buddy_allocation *a, const s64 *delta)
{
	unsigned int i;

	write_seqlock(&a->codes_seq);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		a->codes[i] += delta[i];
	write_sequnlock(&a->codes_seq);
	buddy_dev_codes_add(delta);
}

/* The last reference: give everything back. */
static void buddy_alloc_release_ref(struct kref *ref)
{
	struct buddy_allocation *a = container_of(ref, struct buddy_allocation,
						  ref);
	struct buddy_device *bd = buddy_dev;
	s64 delta[BUDDY_CODE_SLOTS] = {};
	unsigned int i;

	trace_buddy_free(a);
	buddy_win_release(a);
	buddy_chunks_free(&buddy_chunk_ops, a, a->nr_chunks);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		delta[i] = -a->codes[i];
	buddy_dev_codes_add(delta);
	mutex_lock(&bd->lock);
	buddy_space_release(&bd->space, a->dev_bytes, a->bud_bytes);
	user_uncharge(a->user, a->dev_bytes + a->bud_bytes);
	bd->nr_allocs--;
	bd->logical_bytes -= a->size;
	mutex_unlock(&bd->lock);
	free_allocation(a);
}

/* A reference to the live allocation @id, or NULL. */
struct buddy_allocation *buddy_alloc_get(u64 id)
{
	struct buddy_allocation *a;

	if (id > ULONG_MAX)
		return NULL;
	xa_lock(&buddy_dev->allocs);
	a = xa_load(&buddy_dev->allocs, id);
	if (a)
		kref_get(&a->ref);	/* the file's reference is still held */
	xa_unlock(&buddy_dev->allocs);
	return a;
}

void buddy_alloc_put(struct buddy_allocation *a)
{
	might_sleep();
	kref_put(&a->ref, buddy_alloc_release_ref);
}

/* A new allocation for @req: resolved, nothing reserved yet; or NULL. */
static struct buddy_allocation *alloc_init(const struct buddy_alloc *req)
{
	struct buddy_allocation *a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	unsigned int ptarget = 0, pcodec = 0;
	bool found;

	if (!a)
		return NULL;
	kref_init(&a->ref);
	found = req->target == BUDDY_TARGET_AUTO &&
		buddy_profile_lookup(current_uid(), req->label, &ptarget,
				     &pcodec);
	buddy_alloc_core_init(&a->core, req, found, ptarget, pcodec,
			      buddy_auto_target);
	a->uid = current_uid();
	a->pid = get_task_pid(current, PIDTYPE_TGID);
	/* an io_uring worker (URING_CMD) stands for its process */
	get_task_comm(a->comm, current->flags & PF_IO_WORKER ?
		      current->group_leader : current);
	init_rwsem(&a->rt_sem);
	seqlock_init(&a->codes_seq);
	a->codes[BUDDY_CODE_ZERO] = a->nr_entries;
	buddy_win_init(a);
	a->chunk_entries = buddy_chunk_kb * 1024 / BUDDY_ENTRY_BYTES;
	return a;
}

/*
 * Reserve @a's device and carve-out bytes in the pools' accounts and in
 * its user's share, then every chunk's extents: 0, or -errno with nothing
 * reserved (alloc_unreserve() undoes a success).
 */
static int alloc_reserve(struct buddy_allocation *a)
{
	struct buddy_device *bd = buddy_dev;
	struct buddy_user *u, *spare;
	struct buddy_layout l;
	unsigned int i;
	u64 limit;
	int ret;

	/* Decide E2BIG from the layout before touching the pools. */
	buddy_layout_init(&l, a->nr_entries, a->chunk_entries, a->target);
	if (!buddy_space_could_fit(&bd->space, l.dev_bytes, l.bud_bytes))
		return -E2BIG;
	a->nr_chunks = l.nr_chunks;
	a->dev_bytes = l.dev_bytes;
	a->bud_bytes = l.bud_bytes;
	/* freed with the allocation */
	a->chunks = kvcalloc(l.nr_chunks, sizeof(*a->chunks),
			     GFP_KERNEL_ACCOUNT);
	if (!a->chunks)
		return -ENOMEM;
	for (i = 0; i < a->nr_chunks; i++)
		init_rwsem(&a->chunks[i].sem);

	spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
	if (!spare)
		return -ENOMEM;
	ret = mutex_lock_killable(&bd->lock);
	if (ret)
		goto err_free_spare;
	limit = (u64)READ_ONCE(buddy_user_limit_mb) << 20;
	u = user_find(a->uid, NULL);
	if (!buddy_quota_allows(u ? u->bytes : 0, l.dev_bytes + l.bud_bytes,
				limit)) {
		ret = -EDQUOT;
		goto err_unlock;
	}
	ret = buddy_space_reserve(&bd->space, l.dev_bytes, l.bud_bytes);
	if (ret) {
		trace_buddy_enospc(0, a->target, l.dev_bytes, l.bud_bytes);
		goto err_unlock;
	}
	a->user = user_find(a->uid, &spare);
	a->user->nr++;
	WRITE_ONCE(a->user->bytes, a->user->bytes + l.dev_bytes + l.bud_bytes);
	mutex_unlock(&bd->lock);
	kfree(spare);	/* NULL when it became the user's entry */

	ret = buddy_chunks_reserve(&buddy_chunk_ops, a, a->nr_chunks,
				   a->nr_entries, a->chunk_entries, a->target,
				   a->codec);
	if (ret) {
		if (ret == -ENOSPC)
			trace_buddy_enospc(0, a->target, l.dev_bytes,
					   l.bud_bytes);
		goto err_release_space;
	}
	return 0;

err_release_space:
	mutex_lock(&bd->lock);
	buddy_space_release(&bd->space, l.dev_bytes, l.bud_bytes);
	user_uncharge(a->user, l.dev_bytes + l.bud_bytes);
	mutex_unlock(&bd->lock);
	return ret;
err_unlock:
	mutex_unlock(&bd->lock);
err_free_spare:
	kfree(spare);
	return ret;
}

/* Undo a successful alloc_reserve(). */
static void alloc_unreserve(struct buddy_allocation *a)
{
	struct buddy_device *bd = buddy_dev;

	buddy_chunks_free(&buddy_chunk_ops, a, a->nr_chunks);
	mutex_lock(&bd->lock);
	buddy_space_release(&bd->space, a->dev_bytes, a->bud_bytes);
	user_uncharge(a->user, a->dev_bytes + a->bud_bytes);
	mutex_unlock(&bd->lock);
}

/*
 * @a's inode on the module's pseudo filesystem and its file: 0, or -errno
 * with neither left.  The window takes a reference to the inode of its
 * own (its pages point into it for as long as the allocation lives).
 *
 * The file honours IOCB_NOWAIT for reads and writes (FMODE_NOWAIT, and
 * FMODE_BUF_WASYNC, which generic_write_checks() wants for a non-direct
 * IOCB_NOWAIT write), but not the wait-queue retry of reads
 * (FMODE_BUF_RASYNC, IOCB_WAITQ): its waits are for mutexes and
 * semaphores, not page locks with a wake-up callback, so io_uring sends a
 * read that met -EAGAIN to io-wq instead of retrying it blocking inside
 * io_uring_enter().
 */
static int alloc_make_file(struct buddy_allocation *a, struct file **filep)
{
	struct buddy_device *bd = buddy_dev;
	struct inode *inode;
	struct file *file;
	int ret;

	inode = alloc_anon_inode(bd->mnt->mnt_sb);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	inode->i_size = a->size;
	__module_get(THIS_MODULE);	/* dropped by fops_put() in __fput() */
	file = alloc_file_pseudo(inode, bd->mnt, "buddy", O_RDWR | O_LARGEFILE,
				 &buddy_alloc_fops);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_module_inode;
	}
	file->f_mode |= FMODE_PREAD | FMODE_PWRITE | FMODE_LSEEK |
			FMODE_NOWAIT | FMODE_BUF_WASYNC | FMODE_ATOMIC_POS;
	file->private_data = a;
	buddy_win_set_inode(a, inode);
	*filep = file;
	return 0;

err_put_module_inode:
	module_put(THIS_MODULE);
	iput(inode);
	return ret;
}

long buddy_ioctl_alloc(struct buddy_alloc *req, struct file **filep)
{
	struct buddy_device *bd = buddy_dev;
	s64 delta[BUDDY_CODE_SLOTS] = {};
	struct buddy_allocation *a;
	struct file *file;
	int ret;

	ret = buddy_alloc_check(req);
	if (ret)
		return ret;
	a = alloc_init(req);
	if (!a)
		return -ENOMEM;
	ret = alloc_reserve(a);
	if (ret)
		goto err_free;
	ret = alloc_make_file(a, &file);
	if (ret)
		goto err_unreserve;

	/* the file owns the allocation now: its release undoes the rest */
	mutex_lock(&bd->lock);
	bd->nr_allocs++;
	bd->logical_bytes += a->size;
	mutex_unlock(&bd->lock);
	delta[BUDDY_CODE_ZERO] = a->nr_entries;
	buddy_dev_codes_add(delta);
	/* the ids count up, so that LIST returns them in order */
	a->id = atomic64_inc_return(&bd->next_id);
	trace_buddy_alloc(a);	/* before others can find it and change it */
	ret = xa_insert(&bd->allocs, a->id, a, GFP_KERNEL_ACCOUNT);
	if (ret) {
		fput(file);
		return ret;
	}

	buddy_alloc_reply_fill(&a->core, req);
	*filep = file;
	return 0;

err_unreserve:
	alloc_unreserve(a);
err_free:
	free_allocation(a);
	return ret;
}

static int buddy_alloc_release(struct inode *inode, struct file *file)
{
	struct buddy_allocation *a = file->private_data;

	xa_erase(&buddy_dev->allocs, a->id);
	WRITE_ONCE(a->dead, true);
	buddy_alloc_put(a);
	return 0;
}

static loff_t buddy_alloc_llseek(struct file *file, loff_t offset, int whence)
{
	struct buddy_allocation *a = file->private_data;

	return fixed_size_llseek(file, offset, whence, a->size);
}

/* ---- ioctls on an allocation ---- */

void buddy_fill_stat(struct buddy_allocation *a, struct buddy_alloc_stat *st)
{
	__u64 *c = (__u64 *)&st->counters;
	unsigned int i, seq;

	buddy_stat_fill(&a->core, st);
	st->owner_uid = from_kuid_munged(current_user_ns(), a->uid);
	st->owner_pid = pid_vnr(a->pid);
	do {
		seq = read_seqbegin(&a->codes_seq);
		for (i = 0; i < BUDDY_CODE_NR; i++)
			st->codes[i] = a->codes[i];
	} while (read_seqretry(&a->codes_seq, seq));
	for (i = 0; i < BUDDY_NR_COUNTERS; i++)
		c[i] = atomic64_read(&a->counters[i]);
	buddy_win_fill_stat(a, st);
}

static long buddy_alloc_stat(struct file *file, void *kdata,
			     struct file **install)
{
	struct buddy_allocation *a = file->private_data;
	struct buddy_alloc_stat *st = kdata;

	if (st->id && st->id != a->id)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	buddy_fill_stat(a, st);
	return 0;
}

/* GET_MAP's chunks, each read under its semaphore (re-striping swaps them). */
struct map_ctx {
	struct buddy_allocation *a;
	u8 __user *out;
};

static const u8 *map_chunk(void *ctx, unsigned int c, int *err)
{
	struct map_ctx *mc = ctx;
	struct buddy_chunk *ch = &mc->a->chunks[c];

	if (down_read_killable(&ch->sem)) {
		*err = -EINTR;
		return NULL;
	}
	return ch->e.x.meta;
}

static void map_unchunk(void *ctx, unsigned int c)
{
	struct map_ctx *mc = ctx;

	up_read(&mc->a->chunks[c].sem);
}

static int map_copy(void *ctx, u64 off, const u8 *buf, unsigned int len)
{
	struct map_ctx *mc = ctx;

	return copy_to_user(mc->out + off, buf, len) ? -EFAULT : 0;
}

/* Between buffers of GET_MAP and LIST: yield, stop on a fatal signal. */
int buddy_walk_check(void *ctx)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

static const struct buddy_map_ops map_ops = {
	.chunk = map_chunk,
	.unchunk = map_unchunk,
	.copy = map_copy,
	.check = buddy_walk_check,
};

/* Copy the codes of entries first..first+count-1 to userspace. */
long buddy_map_codes(struct buddy_allocation *a, struct buddy_map *m)
{
	struct map_ctx mc = { a, u64_to_user_ptr(m->codes_ptr) };
	u8 buf[64];

	if (buddy_map_check(m, a->nr_entries))
		return -EINVAL;
	return buddy_map_walk(m, a->chunk_entries, &map_ops, &mc, buf,
			      sizeof(buf));
}

static long buddy_get_map(struct file *file, void *kdata,
			  struct file **install)
{
	struct buddy_allocation *a = file->private_data;
	struct buddy_map *m = kdata;

	if (m->id && m->id != a->id)
		return -EINVAL;
	return buddy_map_codes(a, m);
}

static const struct buddy_ioctl_desc buddy_alloc_ioctls[] = {
	{ BUDDY_IOC_ALLOC_STAT, false, buddy_alloc_stat },
	{ BUDDY_IOC_GET_MAP, false, buddy_get_map },
};

long buddy_alloc_file_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return buddy_ioctl_dispatch(buddy_alloc_ioctls,
				    ARRAY_SIZE(buddy_alloc_ioctls), file, cmd,
				    arg);
}

static int buddy_alloc_uring_cmd(struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	return buddy_uring_cmd(cmd, issue_flags, buddy_alloc_file_ioctl);
}

static void buddy_alloc_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct buddy_allocation *a = file->private_data;

	seq_printf(m, "buddy_id:\t%llu\n", a->id);
	seq_printf(m, "buddy_size:\t%llu\n", a->size);
	seq_printf(m, "buddy_target:\t%u\n", READ_ONCE(a->target));
	seq_printf(m, "buddy_codec:\t%s\n", READ_ONCE(a->codec)->name);
	seq_printf(m, "buddy_label:\t%s\n", a->label);
	seq_printf(m, "buddy_device_bytes:\t%llu\n", READ_ONCE(a->dev_bytes));
	seq_printf(m, "buddy_buddy_bytes:\t%llu\n", READ_ONCE(a->bud_bytes));
	buddy_win_show_fdinfo(m, a);
}

const struct file_operations buddy_alloc_fops = {
	.owner = THIS_MODULE,
	.llseek = buddy_alloc_llseek,
	.read_iter = buddy_read_iter,
	.write_iter = buddy_write_iter,
	.unlocked_ioctl = buddy_alloc_file_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = buddy_alloc_uring_cmd,
	.release = buddy_alloc_release,
	.mmap = buddy_mmap,
	.fsync = buddy_fsync,
	.flush = buddy_flush,
	.show_fdinfo = buddy_alloc_show_fdinfo,
};
