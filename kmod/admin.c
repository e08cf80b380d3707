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

/* A reference to the first live allocation whose id is >= *id, or NULL. */
static struct buddy_allocation *get_next(unsigned long *id)
{
	struct buddy_allocation *a;

	xa_lock(&buddy_dev->allocs);
	a = xa_find(&buddy_dev->allocs, id, ULONG_MAX, XA_PRESENT);
	if (a)
		kref_get(&a->ref);
	xa_unlock(&buddy_dev->allocs);
	return a;
}

long buddy_admin_list(struct file *file, void *kdata, struct file **install)
{
	struct buddy_list *l = kdata;
	u8 __user *out = u64_to_user_ptr(l->stats_ptr);
	size_t n = min_t(size_t, l->stat_size, sizeof(struct buddy_alloc_stat));
	struct buddy_alloc_stat *st;
	struct buddy_allocation *a;
	unsigned int written = 0;
	unsigned long id;
	u64 total = 0;
	long ret = 0;

	if (l->stat_size < offsetofend(struct buddy_alloc_stat, counters))
		return -EINVAL;
	if (l->start_id > ULONG_MAX)
		goto out;
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	/* in id order; each one under its own reference, no lock held */
	for (id = l->start_id; (a = get_next(&id)); id++) {
		total++;
		if (written < l->count) {
			memset(st, 0, sizeof(*st));
			buddy_fill_stat(a, st);
		}
		buddy_alloc_put(a);
		if (written < l->count) {
			if (copy_to_user(out, st, n) ||
			    clear_user(out + n, l->stat_size - n)) {
				ret = -EFAULT;
				break;
			}
			out += l->stat_size;
			written++;
		}
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
		if (id == ULONG_MAX)
			break;
	}
	kfree(st);
out:
	l->count = written;
	l->total = total;
	return ret;
}

/* Where a chunk was before a re-target moved it; dev NULL if not moved. */
struct old_extent {
	struct buddy_extent x;
	u64 dev_bytes;
	u64 bud_bytes;
};

#define MOVE_BATCH	1024	/* entries between cond_resched() */

/*
 * Move every entry of @ch into @nx (a new extent), keeping the old one in
 * @old.  0; -EIO on corrupt metadata, -EINTR on a fatal signal, both with
 * @ch and the histogram as they were.  Caller holds a->rt_sem for writing.
 */
static int restripe_chunk(struct buddy_allocation *a, struct buddy_chunk *ch,
			  struct buddy_extent *nx, u64 dev_bytes, u64 bud_bytes,
			  struct old_extent *old)
{
	s64 delta[BUDDY_CODE_SLOTS] = {};
	unsigned int i, n = ch->x.nr_entries;
	int ret = 0;

	down_write(&ch->sem);
	for (i = 0; i < n && !ret; i += MOVE_BATCH) {
		ret = buddy_extent_move(&ch->x, nx, i, min(n - i, MOVE_BATCH),
					delta);
		if (!ret && i + MOVE_BATCH < n) {
			cond_resched();
			if (fatal_signal_pending(current))
				ret = -EINTR;
		}
	}
	if (ret) {
		up_write(&ch->sem);
		if (ret == -EIO)
			pr_err("allocation %llu: corrupt entry in entries %u..%u while re-striping\n",
			       a->id, i - MOVE_BATCH, min(i, n) - 1);
		return ret;
	}
	old->x = ch->x;
	old->dev_bytes = ch->dev_bytes;
	old->bud_bytes = ch->bud_bytes;
	ch->x = *nx;
	ch->dev_bytes = dev_bytes;
	ch->bud_bytes = bud_bytes;
	ch->written = false;
	buddy_codes_add(a, delta);
	up_write(&ch->sem);
	return 0;
}

/*
 * Put a moved chunk back into @old and free the extent it moved to.  An
 * unwritten chunk swaps back (its old extent still holds its data);
 * a written one moves back, which cannot run out of space.
 */
static int restore_chunk(struct buddy_allocation *a, struct buddy_chunk *ch,
			 struct old_extent *old)
{
	s64 delta[BUDDY_CODE_SLOTS] = {};
	struct buddy_chunk gone;
	unsigned int i, n = ch->x.nr_entries;
	int ret = 0;

	down_write(&ch->sem);
	if (ch->written) {
		memset(old->x.meta, 0, DIV_ROUND_UP(n, 2));
		for (i = 0; i < n && !ret; i += MOVE_BATCH) {
			ret = buddy_extent_move(&ch->x, &old->x, i,
						min(n - i, MOVE_BATCH), delta);
			cond_resched();
		}
		if (ret) {
			up_write(&ch->sem);
			return ret;
		}
	} else {
		/* the histogram goes back to the old extent's codes */
		buddy_extent_codes(&old->x, delta);
		for (i = 0; i < n; i++)
			delta[buddy_meta_get(ch->x.meta, i)]--;
	}
	gone.x = ch->x;
	gone.dev_bytes = ch->dev_bytes;
	gone.bud_bytes = ch->bud_bytes;
	ch->x = old->x;
	ch->dev_bytes = old->dev_bytes;
	ch->bud_bytes = old->bud_bytes;
	buddy_codes_add(a, delta);
	up_write(&ch->sem);
	buddy_free_extent(&gone);
	return 0;
}

static void free_old_extent(struct old_extent *old)
{
	struct buddy_chunk ch = {
		.x = old->x, .dev_bytes = old->dev_bytes,
		.bud_bytes = old->bud_bytes,
	};

	buddy_free_extent(&ch);
}

/*
 * Re-stripe every chunk of @a that is not at @target and @codec yet.  The
 * bytes of the new extents are reserved by the caller.  On failure the
 * moved chunks are put back; returns 0 or the error.
 */
static int restripe_all(struct buddy_allocation *a, unsigned int target,
			const struct buddy_codec *codec, struct old_extent *old)
{
	struct buddy_device *bd = buddy_dev;
	unsigned long dcur = 0, bcur = 0;
	unsigned int c, k;
	int ret = 0;

	for (c = 0; c < a->nr_chunks; c++) {
		struct buddy_chunk *ch = &a->chunks[c];
		unsigned int n = ch->x.nr_entries;
		struct buddy_extent nx;
		u64 dev_bytes, bud_bytes;
		u8 *dev, *bud = NULL;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (READ_ONCE(a->dead)) {
			ret = -ENOENT;
			break;
		}
		if (ch->x.target == target && ch->x.codec == codec)
			continue;
		buddy_chunk_need(n, target, &dev_bytes, &bud_bytes);
		dev = buddy_pool_alloc(&bd->device, dev_bytes, &dcur);
		if (dev && bud_bytes) {
			bud = buddy_pool_alloc(&bd->buddy, bud_bytes, &bcur);
			if (!bud) {
				buddy_pool_free(&bd->device, dev, dev_bytes);
				dev = NULL;
			}
		}
		if (!dev) {
			ret = -ENOSPC;
			break;
		}
		buddy_extent_init(&nx, dev, bud, target, n, codec);
		memset(nx.meta, 0, DIV_ROUND_UP(n, 2));
		ret = restripe_chunk(a, ch, &nx, dev_bytes, bud_bytes, &old[c]);
		if (ret) {
			buddy_pool_free(&bd->device, dev, dev_bytes);
			buddy_pool_free(&bd->buddy, bud, bud_bytes);
			break;
		}
		cond_resched();
	}
	if (!ret)
		return 0;
	for (k = 0; k < c; k++) {
		if (!old[k].x.dev)
			continue;
		if (restore_chunk(a, &a->chunks[k], &old[k])) {
			/* cannot happen short of memory corruption */
			pr_err("allocation %llu: chunk %u stays at target %u\n",
			       a->id, k, target);
			free_old_extent(&old[k]);
			WRITE_ONCE(a->mixed, true);
		}
		old[k].x.dev = NULL;
	}
	return ret;
}

long buddy_admin_set_target(struct file *file, void *kdata,
			    struct file **install)
{
	struct buddy_set_target *req = kdata;
	struct buddy_device *bd = buddy_dev;
	const struct buddy_codec *codec;
	unsigned int c, old_target;
	struct buddy_allocation *a;
	struct old_extent *old = NULL;
	u64 new_dev = 0, new_bud = 0, cur_dev = 0, cur_bud = 0;
	u64 fin_dev = 0, fin_bud = 0;
	long ret = 0;

	if (req->flags || req->reserved || !buddy_target_valid(req->target) ||
	    req->codec >= BUDDY_CODEC_NR)
		return -EINVAL;

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
	for (c = 0; c < a->nr_chunks; c++) {
		struct buddy_chunk *ch = &a->chunks[c];
		u64 d, b;

		cur_dev += ch->dev_bytes;
		cur_bud += ch->bud_bytes;
		if (ch->x.target == req->target && ch->x.codec == codec)
			continue;
		buddy_chunk_need(ch->x.nr_entries, req->target, &d, &b);
		new_dev += d;
		new_bud += b;
	}
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
	ret = restripe_all(a, req->target, codec, old);
	if (ret == -ENOSPC)
		trace_buddy_enospc(a->id, req->target, new_dev, new_bud);
	if (!ret) {
		/* commit: give the old extents back */
		for (c = 0; c < a->nr_chunks; c++) {
			if (old[c].x.dev)
				free_old_extent(&old[c]);
			if (!(c & 255))
				cond_resched();
		}
		WRITE_ONCE(a->target, req->target);
		WRITE_ONCE(a->codec, codec);
		WRITE_ONCE(a->codec_id, codec->id);
		WRITE_ONCE(a->target_source, BUDDY_SRC_EXPLICIT);
		WRITE_ONCE(a->mixed, false);
	}
	for (c = 0; c < a->nr_chunks; c++) {
		fin_dev += a->chunks[c].dev_bytes;
		fin_bud += a->chunks[c].bud_bytes;
	}
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
