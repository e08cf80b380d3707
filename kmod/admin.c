// SPDX-License-Identifier: GPL-2.0
/*
 * The administrator's view of /dev/buddy (CAP_SYS_ADMIN, checked by the
 * dispatcher): every live allocation by id, any allocation's code map, and
 * setting the target and codec of a live allocation.
 *
 * Re-targeting re-stripes one chunk at a time under that chunk's semaphore,
 * so I/O on the other chunks goes on, and readers and writers of the chunk
 * itself wait for a consistent one.  Whether the pools can take it is
 * decided up front from the net change in device and buddy bytes plus one
 * chunk of headroom; should genalloc still fail half-way (fragmentation),
 * the chunks already done are put back, and the allocation is untouched.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "buddy.h"

/* Caller holds buddy_dev->lock. */
static struct buddy_allocation *find_alloc(u64 id)
{
	struct buddy_allocation *a;

	list_for_each_entry(a, &buddy_dev->allocs, node)
		if (a->id == id)
			return a;
	return NULL;
}

long buddy_admin_stat(struct file *file, void *kdata, struct file **install)
{
	struct buddy_alloc_stat *st = kdata;
	struct buddy_allocation *a;
	long ret = -ENOENT;

	mutex_lock(&buddy_dev->lock);
	a = find_alloc(st->id);
	if (a) {
		memset(st, 0, sizeof(*st));
		buddy_fill_stat(a, st);
		ret = 0;
	}
	mutex_unlock(&buddy_dev->lock);
	return ret;
}

long buddy_admin_map(struct file *file, void *kdata, struct file **install)
{
	struct buddy_map *m = kdata;
	struct buddy_allocation *a;
	long ret = -ENOENT;

	mutex_lock(&buddy_dev->lock);
	a = find_alloc(m->id);
	if (a)
		ret = buddy_map_codes(a, m);
	mutex_unlock(&buddy_dev->lock);
	return ret;
}

long buddy_admin_list(struct file *file, void *kdata, struct file **install)
{
	struct buddy_list *l = kdata;
	u8 __user *out = u64_to_user_ptr(l->stats_ptr);
	struct buddy_alloc_stat *st;
	struct buddy_allocation *a;
	unsigned int written = 0;
	u64 total = 0;
	long ret = 0;

	if (l->stat_size < offsetofend(struct buddy_alloc_stat, counters))
		return -EINVAL;
	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	mutex_lock(&buddy_dev->lock);
	/* the list is in id order: allocations are appended as made */
	list_for_each_entry(a, &buddy_dev->allocs, node) {
		size_t n = min_t(size_t, l->stat_size, sizeof(*st));

		if (a->id < l->start_id)
			continue;
		total++;
		if (written == l->count)
			continue;
		memset(st, 0, sizeof(*st));
		buddy_fill_stat(a, st);
		if (copy_to_user(out, st, n) ||
		    clear_user(out + n, l->stat_size - n)) {
			ret = -EFAULT;
			break;
		}
		out += l->stat_size;
		written++;
	}
	mutex_unlock(&buddy_dev->lock);
	kfree(st);
	l->count = written;
	l->total = total;
	return ret;
}

/* Bytes one chunk of @n entries needs at @target. */
static void chunk_need(unsigned int n, unsigned int target, u64 *dev, u64 *bud)
{
	*dev = PAGE_ALIGN(buddy_extent_dev_bytes(n, target));
	*bud = PAGE_ALIGN(buddy_extent_bud_bytes(n, target));
}

/* Re-stripe one chunk to @target and @codec; -ENOSPC leaves it as it was. */
static int restripe_chunk(struct buddy_allocation *a, struct buddy_chunk *ch,
			  unsigned int target, const struct buddy_codec *codec,
			  s64 *codes)
{
	struct buddy_device *bd = buddy_dev;
	struct buddy_chunk old;
	struct buddy_extent nx;
	unsigned int i, n = ch->x.nr_entries;
	u64 dev_bytes, bud_bytes;
	u8 *dev, *bud = NULL;
	int ret = 0;

	chunk_need(n, target, &dev_bytes, &bud_bytes);
	dev = buddy_pool_alloc(&bd->device, dev_bytes);
	if (!dev)
		return -ENOSPC;
	if (bud_bytes) {
		bud = buddy_pool_alloc(&bd->buddy, bud_bytes);
		if (!bud) {
			buddy_pool_free(&bd->device, dev, dev_bytes);
			return -ENOSPC;
		}
	}
	buddy_extent_init(&nx, dev, bud, target, n, codec);
	memset(nx.meta, 0, DIV_ROUND_UP(n, 2));

	down_write(&ch->sem);
	for (i = 0; i < n && !ret; i++) {
		ret = buddy_stripe_move(&ch->x, i, &nx, i, codes);
		if (!(i & 1023))
			cond_resched();
	}
	if (ret) {
		up_write(&ch->sem);
		pr_err("allocation %llu: corrupt entry %u while re-striping\n",
		       a->id, i - 1);
		buddy_pool_free(&bd->device, dev, dev_bytes);
		buddy_pool_free(&bd->buddy, bud, bud_bytes);
		return ret;
	}
	old.x = ch->x;
	old.dev_bytes = ch->dev_bytes;
	old.bud_bytes = ch->bud_bytes;
	ch->x = nx;
	ch->dev_bytes = dev_bytes;
	ch->bud_bytes = bud_bytes;
	up_write(&ch->sem);
	buddy_free_extent(&old);
	return 0;
}

long buddy_admin_set_target(struct file *file, void *kdata,
			    struct file **install)
{
	struct buddy_set_target *req = kdata;
	struct buddy_device *bd = buddy_dev;
	const struct buddy_codec *codec, *old_codec;
	unsigned int c, done, old_target;
	struct buddy_allocation *a;
	u64 new_dev = 0, new_bud = 0, head_dev = 0, head_bud = 0;
	s64 codes[BUDDY_CODE_NR] = {};
	long ret = 0;

	if (req->flags || req->reserved || !buddy_target_valid(req->target) ||
	    req->codec >= BUDDY_CODEC_NR)
		return -EINVAL;

	mutex_lock(&bd->lock);
	a = find_alloc(req->id);
	if (!a) {
		ret = -ENOENT;
		goto out_unlock;
	}
	codec = req->codec == BUDDY_CODEC_DEFAULT ? a->codec :
		buddy_codec_by_id(req->codec);
	if (req->target == a->target && codec == a->codec)
		goto out_unlock;

	for (c = 0; c < a->nr_chunks; c++) {
		u64 d, b;

		chunk_need(a->chunks[c].x.nr_entries, req->target, &d, &b);
		new_dev += d;
		new_bud += b;
		head_dev = max(head_dev, d);
		head_bud = max(head_bud, b);
	}
	if (new_dev > buddy_pool_bytes(&bd->device) ||
	    new_bud > buddy_pool_bytes(&bd->buddy)) {
		ret = -E2BIG;
		goto out_unlock;
	}
	/* net change plus one chunk of headroom must be free now */
	if ((s64)(new_dev - a->dev_bytes) + (s64)head_dev >
	    (s64)(buddy_pool_bytes(&bd->device) - atomic64_read(&bd->device.used)) ||
	    (s64)(new_bud - a->bud_bytes) + (s64)head_bud >
	    (s64)(buddy_pool_bytes(&bd->buddy) - atomic64_read(&bd->buddy.used))) {
		ret = -ENOSPC;
		goto out_unlock;
	}

	old_target = a->target;
	old_codec = a->codec;
	for (done = 0; done < a->nr_chunks; done++) {
		ret = restripe_chunk(a, &a->chunks[done], req->target, codec,
				     codes);
		if (ret)
			break;
	}
	if (ret) {
		/* put the chunks already done back; their old space is free */
		for (c = 0; c < done; c++)
			if (restripe_chunk(a, &a->chunks[c], old_target,
					   old_codec, codes))
				pr_err("allocation %llu: chunk %u stays at target %u\n",
				       a->id, c, req->target);
	} else {
		WRITE_ONCE(a->target, req->target);
		WRITE_ONCE(a->codec, codec);
		WRITE_ONCE(a->codec_id, codec->id);
		WRITE_ONCE(a->target_source, BUDDY_SRC_EXPLICIT);
	}
	new_dev = new_bud = 0;
	for (c = 0; c < a->nr_chunks; c++) {
		new_dev += a->chunks[c].dev_bytes;
		new_bud += a->chunks[c].bud_bytes;
	}
	WRITE_ONCE(a->dev_bytes, new_dev);
	WRITE_ONCE(a->bud_bytes, new_bud);
	for (c = 0; c < BUDDY_CODE_NR; c++) {
		atomic64_add(codes[c], &a->codes[c]);
		atomic64_add(codes[c], &bd->codes[c]);
	}
out_unlock:
	mutex_unlock(&bd->lock);
	return ret;
}
