// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The chunks of an allocation: ABI checks, extent reservation, the data
 * path of one stripe, and re-targeting with rollback.  See chunk.h.
 */
#include "core/chunk.h"

/* ---- ABI checks ---- */

bool buddy_label_valid(const char *label)
{
	unsigned int i, len = strnlen(label, BUDDY_LABEL_LEN);

	if (len == BUDDY_LABEL_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (label[i] < 0x20 || label[i] > 0x7e || label[i] == '/')
			return false;
	for (; i < BUDDY_LABEL_LEN; i++)
		if (label[i])
			return false;
	return true;
}

int buddy_alloc_check(const struct buddy_alloc *req)
{
	if (!req->size || req->flags & ~BUDDY_ALLOC_VALID_FLAGS ||
	    req->reserved || req->fd || req->id || req->target_source ||
	    req->codec >= BUDDY_CODEC_NR || !buddy_label_valid(req->label))
		return -EINVAL;
	if (req->target != BUDDY_TARGET_AUTO &&
	    !buddy_target_valid(req->target))
		return -EINVAL;
	if (req->size > BUDDY_SIZE_MAX)
		return -E2BIG;
	return 0;
}

void buddy_alloc_resolve(const struct buddy_alloc *req, bool found,
			 unsigned int ptarget, unsigned int pcodec,
			 unsigned int auto_target, unsigned int *target,
			 unsigned int *codec, unsigned int *source)
{
	*target = req->target;
	*codec = req->codec;
	*source = BUDDY_SRC_EXPLICIT;
	if (req->target != BUDDY_TARGET_AUTO)
		return;
	if (found) {
		*target = ptarget;
		*source = BUDDY_SRC_PROFILE;
		if (req->codec == BUDDY_CODEC_DEFAULT)
			*codec = pcodec;
	} else {
		*target = auto_target;
		*source = BUDDY_SRC_DEFAULT;
	}
}

int buddy_set_target_check(const struct buddy_set_target *req)
{
	if (req->flags || req->reserved || !buddy_target_valid(req->target) ||
	    req->codec >= BUDDY_CODEC_NR)
		return -EINVAL;
	return 0;
}

int buddy_profile_entry_check(const struct buddy_profile_entry *e)
{
	if (e->reserved || !buddy_target_valid(e->target) ||
	    e->codec >= BUDDY_CODEC_NR || !buddy_label_valid(e->label))
		return -EINVAL;
	return 0;
}

int buddy_profile_req_check(const struct buddy_profile *req, bool set)
{
	if (req->reserved || req->total)
		return -EINVAL;
	if (!set)
		return req->flags ? -EINVAL : 0;
	if (req->flags & ~BUDDY_PROFILE_VALID_FLAGS)
		return -EINVAL;
	return req->count > BUDDY_PROFILE_MAX ? -ENOSPC : 0;
}

int buddy_map_check(const struct buddy_map *m, u64 nr_entries)
{
	if (m->count > nr_entries || m->first > nr_entries - m->count)
		return -EINVAL;
	return 0;
}

int buddy_list_check(const struct buddy_list *l)
{
	return l->stat_size < offsetofend(struct buddy_alloc_stat, counters) ?
	       -EINVAL : 0;
}

unsigned int buddy_ioctl_min_size(unsigned int cmd)
{
	static const struct {
		unsigned int cmd;
		unsigned int size;
	} v1[] = {
		{ BUDDY_IOC_GET_INFO,
		  offsetofend(struct buddy_info, buddy_node_pages) },
		{ BUDDY_IOC_ALLOC, offsetofend(struct buddy_alloc, reserved) },
		{ BUDDY_IOC_ALLOC_STAT,
		  offsetofend(struct buddy_alloc_stat, counters) },
		{ BUDDY_IOC_GET_MAP, offsetofend(struct buddy_map, codes_ptr) },
		{ BUDDY_IOC_LIST, offsetofend(struct buddy_list, total) },
		{ BUDDY_IOC_SET_TARGET,
		  offsetofend(struct buddy_set_target, reserved) },
		{ BUDDY_IOC_PROFILE_SET,
		  offsetofend(struct buddy_profile, reserved) },
		{ BUDDY_IOC_PROFILE_GET,
		  offsetofend(struct buddy_profile, reserved) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(v1); i++)
		if (_IOC_NR(v1[i].cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(v1[i].cmd) == _IOC_DIR(cmd))
			return v1[i].size;
	return 0;
}

/* ---- the chunk table ---- */

void buddy_chunks_free(const struct buddy_chunk_ops *ops, void *ctx,
		       unsigned int nr_chunks)
{
	unsigned int c;

	for (c = 0; c < nr_chunks; c++) {
		struct buddy_chunk_ext *ch = ops->chunk(ctx, c);

		ops->pool_free(ctx, BUDDY_POOL_DEVICE, ch->x.dev, ch->dev_bytes);
		ops->pool_free(ctx, BUDDY_POOL_BUDDY, ch->x.bud, ch->bud_bytes);
		ch->x.dev = NULL;
		ch->x.bud = NULL;
		if (!(c & 255))
			ops->check(ctx);
	}
}

/* New extents for @n entries at @target: 0 or -ENOSPC, nothing kept. */
static int extent_get(const struct buddy_chunk_ops *ops, void *ctx,
		      unsigned int n, unsigned int target,
		      const struct buddy_codec *codec, unsigned long *dcur,
		      unsigned long *bcur, struct buddy_chunk_ext *e)
{
	u8 *dev, *bud = NULL;

	buddy_chunk_need(n, target, &e->dev_bytes, &e->bud_bytes);
	dev = ops->pool_alloc(ctx, BUDDY_POOL_DEVICE, e->dev_bytes, dcur);
	if (!dev)
		return -ENOSPC;
	if (e->bud_bytes) {
		bud = ops->pool_alloc(ctx, BUDDY_POOL_BUDDY, e->bud_bytes, bcur);
		if (!bud) {
			ops->pool_free(ctx, BUDDY_POOL_DEVICE, dev, e->dev_bytes);
			return -ENOSPC;
		}
	}
	buddy_extent_init(&e->x, dev, bud, target, n, codec);
	memset(e->x.meta, 0, DIV_ROUND_UP(n, 2));
	e->written = false;
	return 0;
}

static void extent_put(const struct buddy_chunk_ops *ops, void *ctx,
		       struct buddy_chunk_ext *e)
{
	ops->pool_free(ctx, BUDDY_POOL_DEVICE, e->x.dev, e->dev_bytes);
	ops->pool_free(ctx, BUDDY_POOL_BUDDY, e->x.bud, e->bud_bytes);
	e->x.dev = NULL;
	e->x.bud = NULL;
}

int buddy_chunks_reserve(const struct buddy_chunk_ops *ops, void *ctx,
			 unsigned int nr_chunks, u64 nr_entries,
			 u64 chunk_entries, unsigned int target,
			 const struct buddy_codec *codec)
{
	unsigned long dcur = 0, bcur = 0;
	unsigned int c;
	int ret = 0;

	for (c = 0; c < nr_chunks; c++) {
		unsigned int n = buddy_chunk_entries(nr_entries, chunk_entries,
						     c);

		if (!(c & 255)) {
			ret = ops->check(ctx);
			if (ret)
				break;
		}
		ret = extent_get(ops, ctx, n, target, codec, &dcur, &bcur,
				 ops->chunk(ctx, c));
		if (ret)
			break;
	}
	if (ret)
		buddy_chunks_free(ops, ctx, c);
	return ret;
}

void buddy_chunks_bytes(const struct buddy_chunk_ops *ops, void *ctx,
			unsigned int nr_chunks, u64 *dev, u64 *bud)
{
	unsigned int c;

	*dev = 0;
	*bud = 0;
	for (c = 0; c < nr_chunks; c++) {
		struct buddy_chunk_ext *ch = ops->chunk(ctx, c);

		*dev += ch->dev_bytes;
		*bud += ch->bud_bytes;
	}
}

/* ---- extent reservation ---- */

unsigned long buddy_next_fit(unsigned long *map, unsigned long size,
			     unsigned long start, unsigned int nr,
			     unsigned long *cursor)
{
	unsigned long from = start > *cursor ? start : *cursor, bit;

	if (from >= size)
		from = 0;
	bit = bitmap_find_next_zero_area(map, size, from, nr, 0);
	if (bit >= size && from) {
		/*
		 * wrap: runs that start before @from (a miss is reported as
		 * a position past the window, which may be inside the map)
		 */
		unsigned long lim = size < from + nr - 1 ? size : from + nr - 1;

		bit = bitmap_find_next_zero_area(map, lim, 0, nr, 0);
		if (bit + nr > lim)
			bit = size;
	}
	if (bit < size)
		*cursor = bit + nr;
	return bit;
}

/* ---- re-targeting ---- */

void buddy_retarget_need(const struct buddy_chunk_ops *ops, void *ctx,
			 unsigned int nr_chunks, unsigned int target,
			 const struct buddy_codec *codec, u64 *cur_dev,
			 u64 *cur_bud, u64 *new_dev, u64 *new_bud)
{
	unsigned int c;

	*cur_dev = *cur_bud = *new_dev = *new_bud = 0;
	for (c = 0; c < nr_chunks; c++) {
		struct buddy_chunk_ext *ch = ops->chunk(ctx, c);
		u64 d, b;

		*cur_dev += ch->dev_bytes;
		*cur_bud += ch->bud_bytes;
		if (ch->x.target == target && ch->x.codec == codec)
			continue;
		buddy_chunk_need(ch->x.nr_entries, target, &d, &b);
		*new_dev += d;
		*new_bud += b;
	}
}

/* Move every entry of @from into @to in batches; @delta collects codes. */
static int move_entries(const struct buddy_chunk_ops *ops, void *ctx,
			const struct buddy_extent *from,
			const struct buddy_extent *to, s64 *delta)
{
	unsigned int i, n = from->nr_entries;
	int ret = 0;

	for (i = 0; i < n && !ret; i += BUDDY_MOVE_BATCH) {
		unsigned int k = n - i < BUDDY_MOVE_BATCH ? n - i :
			BUDDY_MOVE_BATCH;

		ret = buddy_extent_move(from, to, i, k, delta);
		if (!ret && i + BUDDY_MOVE_BATCH < n)
			ret = ops->check(ctx);
	}
	return ret;
}

/*
 * Move chunk @c into @nx, keeping its extents in @old.  0, or an error
 * with the chunk and the histogram as they were.
 */
static int restripe_chunk(const struct buddy_chunk_ops *ops, void *ctx,
			  unsigned int c, struct buddy_chunk_ext *nx,
			  struct buddy_chunk_ext *old)
{
	struct buddy_chunk_ext *ch = ops->chunk(ctx, c);
	s64 delta[BUDDY_CODE_SLOTS] = { 0 };
	int ret;

	ops->lock(ctx, c);
	ret = move_entries(ops, ctx, &ch->x, &nx->x, delta);
	if (ret) {
		ops->unlock(ctx, c);
		return ret;
	}
	*old = *ch;
	*ch = *nx;
	ch->written = false;
	ops->codes_add(ctx, delta);
	ops->unlock(ctx, c);
	return 0;
}

/*
 * Put a moved chunk back into @old and free the extent it moved to.  An
 * unwritten chunk swaps back (its old extent still holds its data); a
 * written one moves back, which cannot run out of space.
 */
static int restore_chunk(const struct buddy_chunk_ops *ops, void *ctx,
			 unsigned int c, struct buddy_chunk_ext *old)
{
	struct buddy_chunk_ext *ch = ops->chunk(ctx, c);
	s64 delta[BUDDY_CODE_SLOTS] = { 0 };
	struct buddy_chunk_ext gone;
	unsigned int i, n = ch->x.nr_entries;
	int ret = 0;

	ops->lock(ctx, c);
	if (ch->written) {
		memset(old->x.meta, 0, DIV_ROUND_UP(n, 2));
		for (i = 0; i < n && !ret; i += BUDDY_MOVE_BATCH)
			ret = buddy_extent_move(&ch->x, &old->x, i,
						n - i < BUDDY_MOVE_BATCH ?
						n - i : BUDDY_MOVE_BATCH,
						delta);
		if (ret) {
			ops->unlock(ctx, c);
			return ret;
		}
	} else {
		/* the histogram goes back to the old extent's codes */
		buddy_extent_codes(&old->x, delta);
		for (i = 0; i < n; i++)
			delta[buddy_meta_get(ch->x.meta, i)]--;
	}
	gone = *ch;
	ch->x = old->x;
	ch->dev_bytes = old->dev_bytes;
	ch->bud_bytes = old->bud_bytes;
	ops->codes_add(ctx, delta);
	ops->unlock(ctx, c);
	extent_put(ops, ctx, &gone);
	return 0;
}

int buddy_retarget_run(const struct buddy_chunk_ops *ops, void *ctx,
		       unsigned int nr_chunks, unsigned int target,
		       const struct buddy_codec *codec,
		       struct buddy_chunk_ext *old, bool *mixed)
{
	unsigned long dcur = 0, bcur = 0;
	unsigned int c, k;
	int ret = 0;

	for (c = 0; c < nr_chunks; c++) {
		struct buddy_chunk_ext *ch = ops->chunk(ctx, c);
		struct buddy_chunk_ext nx;

		ret = ops->check(ctx);
		if (ret)
			break;
		if (ch->x.target == target && ch->x.codec == codec)
			continue;
		ret = extent_get(ops, ctx, ch->x.nr_entries, target, codec,
				 &dcur, &bcur, &nx);
		if (ret)
			break;
		ret = restripe_chunk(ops, ctx, c, &nx, &old[c]);
		if (ret) {
			ops->warn(ctx, c, ret, false);
			extent_put(ops, ctx, &nx);
			break;
		}
	}
	if (!ret)
		return 0;
	for (k = 0; k < c; k++) {
		if (!old[k].x.dev)
			continue;
		if (restore_chunk(ops, ctx, k, &old[k])) {
			/* cannot happen short of memory corruption */
			ops->warn(ctx, k, -EIO, true);
			extent_put(ops, ctx, &old[k]);
			*mixed = true;
		}
		old[k].x.dev = NULL;
	}
	return ret;
}

void buddy_retarget_commit(const struct buddy_chunk_ops *ops, void *ctx,
			   unsigned int nr_chunks, struct buddy_chunk_ext *old)
{
	unsigned int c;

	for (c = 0; c < nr_chunks; c++) {
		if (old[c].x.dev)
			extent_put(ops, ctx, &old[c]);
		if (!(c & 255))
			ops->check(ctx);
	}
}
