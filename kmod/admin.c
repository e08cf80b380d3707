// SPDX-License-Identifier: GPL-2.0
/*
 * The administrator's view of /dev/buddy (CAP_SYS_ADMIN, checked by the
 * dispatcher): every live allocation by id, any allocation's code map, and
 * setting the target and codec of a live allocation.
 *
 * Nothing here holds a device-wide lock across long work or a user copy:
 * an allocation is looked up by id and a reference taken, and the work
 * runs under the allocation's own locks.
 *
 * Re-targeting re-stripes one chunk at a time under that chunk's semaphore,
 * so I/O on the other chunks goes on, and readers and writers of the chunk
 * itself wait for a consistent one.  The old extents are kept until the
 * whole re-target commits, so the pools must hold old plus new at the peak:
 * the new bytes are reserved up front (else -ENOSPC and nothing changed).
 * Should genalloc still fail half-way (fragmentation), or a fatal signal
 * arrive (-EINTR, checked between chunks), the chunks already moved are put
 * back into their old extents: by swapping the extents back when the chunk
 * was not written since, else by moving the entries back.  Either way the
 * allocation, its size-code histogram and the pools are as they were.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "buddy.h"
#include "buddy_trace.h"

long buddy_admin_stat(struct file *file, void *kdata, struct file **install)
{
	struct buddy_alloc_stat *st = kdata;
	struct buddy_allocation *a = buddy_alloc_get(st->id);

	if (!a)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	buddy_fill_stat(a, st);
	buddy_alloc_put(a);
	return 0;
}

long buddy_admin_map(struct file *file, void *kdata, struct file **install)
{
	struct buddy_map *m = kdata;
	struct buddy_allocation *a = buddy_alloc_get(m->id);
	long ret;

	if (!a)
		return -ENOENT;
	ret = buddy_map_codes(a, m);
	buddy_alloc_put(a);
	return ret;
}

/*
 * LIST's steps: the first live allocation whose id is >= *id, looked up
 * under the xarray's lock and read under its own reference, no lock held.
 */
static int list_next(void *ctx, u64 *id, bool want, struct buddy_alloc_stat *st)
{
	struct buddy_allocation *a;
	unsigned long i = *id;

	xa_lock(&buddy_dev->allocs);
	a = xa_find(&buddy_dev->allocs, &i, ULONG_MAX, XA_PRESENT);
	if (a)
		kref_get(&a->ref);
	xa_unlock(&buddy_dev->allocs);
	if (!a)
		return -ENOENT;
	*id = i;
	if (want)
		buddy_fill_stat(a, st);
	buddy_alloc_put(a);
	return 0;
}

static int list_copy(void *ctx, unsigned int idx,
		     const struct buddy_alloc_stat *st, size_t len, size_t size)
{
	u8 __user *out = (u8 __force __user *)ctx + (size_t)idx * size;

	if (copy_to_user(out, st, len) || clear_user(out + len, size - len))
		return -EFAULT;
	return 0;
}

static const struct buddy_list_ops list_ops = {
	.next = list_next,
	.copy = list_copy,
	.check = buddy_walk_check,
};

long buddy_admin_list(struct file *file, void *kdata, struct file **install)
{
	struct buddy_list *l = kdata;
	struct buddy_alloc_stat *st;
	long ret;

	if (buddy_list_check(l))
		return -EINVAL;
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	ret = buddy_list_walk(l, &list_ops,
			      (void __force *)u64_to_user_ptr(l->stats_ptr), st);
	kfree(st);
	return ret;
}

long buddy_admin_set_target(struct file *file, void *kdata,
			    struct file **install)
{
	struct buddy_set_target *req = kdata;
	struct buddy_device *bd = buddy_dev;
	const struct buddy_codec *codec;
	unsigned int old_target;
	struct buddy_allocation *a;
	struct buddy_chunk_ext *old = NULL;
	u64 new_dev, new_bud, cur_dev, cur_bud, fin_dev, fin_bud;
	bool mixed = false;
	long ret = buddy_set_target_check(req);

	if (ret)
		return ret;

	a = buddy_alloc_get(req->id);
	if (!a)
		return -ENOENT;
	ret = down_write_killable(&a->rt_sem);
	if (ret)
		goto out_put;
	if (READ_ONCE(a->dead)) {
		ret = -ENOENT;
		goto out_unlock;
	}
	/* dirty window pages first, so that the new stripes hold them */
	buddy_win_writeback(a, 0, ULONG_MAX);
	codec = req->codec == BUDDY_CODEC_DEFAULT ? a->codec :
		buddy_codec_by_id(req->codec);
	if (req->target == a->target && codec == a->codec && !a->mixed)
		goto out_unlock;

	/* what the chunks that change need at the new target */
	buddy_retarget_need(&buddy_chunk_ops, a, a->nr_chunks, req->target,
			    codec, &cur_dev, &cur_bud, &new_dev, &new_bud);
	if (!buddy_space_could_fit(&bd->space, new_dev, new_bud)) {
		ret = -E2BIG;
		goto out_unlock;
	}
	old = kvcalloc(a->nr_chunks, sizeof(*old), GFP_KERNEL_ACCOUNT);
	if (!old) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* the old extents stay until the end: old plus new at the peak */
	ret = mutex_lock_killable(&bd->lock);
	if (ret)
		goto out_unlock;
	ret = buddy_space_reserve(&bd->space, new_dev, new_bud);
	mutex_unlock(&bd->lock);
	if (ret) {
		trace_buddy_enospc(a->id, req->target, new_dev, new_bud);
		goto out_unlock;
	}

	old_target = a->target;
	ret = buddy_retarget_run(&buddy_chunk_ops, a, a->nr_chunks,
				 req->target, codec, old, &mixed);
	if (ret == -ENOSPC)
		trace_buddy_enospc(a->id, req->target, new_dev, new_bud);
	if (!ret) {
		/* commit: give the old extents back */
		buddy_retarget_commit(&buddy_chunk_ops, a, a->nr_chunks, old);
		WRITE_ONCE(a->target, req->target);
		WRITE_ONCE(a->codec, codec);
		WRITE_ONCE(a->codec_id, codec->id);
		WRITE_ONCE(a->target_source, BUDDY_SRC_EXPLICIT);
		WRITE_ONCE(a->mixed, false);
	} else if (mixed) {
		WRITE_ONCE(a->mixed, true);
	}
	buddy_chunks_bytes(&buddy_chunk_ops, a, a->nr_chunks, &fin_dev,
			   &fin_bud);
	/*
	 * The reservation held current plus new; keep what the chunks hold
	 * now (new on success, current after a rollback).
	 */
	mutex_lock(&bd->lock);
	buddy_space_release(&bd->space, cur_dev + new_dev - fin_dev,
			    cur_bud + new_bud - fin_bud);
	buddy_user_adjust(a, (s64)(fin_dev + fin_bud) - (s64)(cur_dev + cur_bud));
	WRITE_ONCE(a->dev_bytes, fin_dev);
	WRITE_ONCE(a->bud_bytes, fin_bud);
	mutex_unlock(&bd->lock);
	trace_buddy_retarget(a, old_target, req->target, ret);
out_unlock:
	up_write(&a->rt_sem);
out_put:
	kvfree(old);
	buddy_alloc_put(a);
	return ret;
}
