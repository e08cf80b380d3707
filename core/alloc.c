// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * How both backends report an allocation and the device through the ABI:
 * ALLOC_STAT and GET_INFO fields, GET_MAP's nibble packing, LIST's walk and
 * PROFILE_SET's capacity rule.  See alloc.h.
 */
#include "core/alloc.h"

void buddy_alloc_core_init(struct buddy_alloc_core *a,
			   const struct buddy_alloc *req, bool found,
			   unsigned int ptarget, unsigned int pcodec,
			   unsigned int auto_target)
{
	a->size = req->size;
	a->nr_entries = DIV_ROUND_UP(req->size, BUDDY_ENTRY_BYTES);
	buddy_alloc_resolve(req, found, ptarget, pcodec, auto_target,
			    &a->target, &a->codec_id, &a->target_source);
	a->codec = buddy_codec_by_id(a->codec_id);
	a->codec_id = a->codec->id;
	memcpy(a->label, req->label, BUDDY_LABEL_LEN);
}

void buddy_alloc_reply_fill(const struct buddy_alloc_core *a,
			    struct buddy_alloc *req)
{
	req->target = a->target;
	req->codec = a->codec_id;
	req->id = a->id;
	req->target_source = a->target_source;
}

void buddy_stat_fill(const struct buddy_alloc_core *a,
		     struct buddy_alloc_stat *st)
{
	st->id = a->id;
	st->size = a->size;
	/* a re-target changes these under the allocation's own lock */
	st->target = READ_ONCE(a->target);
	st->codec = READ_ONCE(a->codec_id);
	st->device_bytes = READ_ONCE(a->dev_bytes);
	st->buddy_bytes = READ_ONCE(a->bud_bytes);
	st->target_source = READ_ONCE(a->target_source);
	memcpy(st->label, a->label, sizeof(st->label));
	memcpy(st->comm, a->comm, sizeof(st->comm));
	st->nr_entries = a->nr_entries;
}

void buddy_info_fill(struct buddy_info *info, unsigned int max_ratio,
		     unsigned int chunk_kb, u64 features)
{
	unsigned int n;

	info->abi_version = BUDDY_ABI_VERSION;
	info->max_ratio = max_ratio;
	info->features = BUDDY_FEAT_RW | BUDDY_FEAT_IO_URING |
			 BUDDY_FEAT_GET_MAP | BUDDY_FEAT_AUTO |
			 BUDDY_FEAT_ADMIN | BUDDY_FEAT_URING_CMD |
			 BUDDY_FEAT_LINK_MODEL | BUDDY_FEAT_LINK_REQUESTS |
			 features;
	for (n = 0; buddy_codecs[n]; n++)
		info->codecs |= 1ULL << buddy_codecs[n]->id;
	info->chunk_bytes = chunk_kb * 1024;
}

void buddy_info_ratio(struct buddy_info *info)
{
	info->ratio_milli = info->device_used ?
		div64_u64(info->logical_bytes * 1000, info->device_used) : 0;
}

void buddy_map_pack(u8 *buf, u64 k, const u8 *meta, u64 i, u64 n)
{
	for (; n; n--, k++, i++) {
		/* a writer may change the other nibble: each is a snapshot */
		buf[k / 2] |= data_race(buddy_meta_get(meta, i)) <<
			      (4 * (k & 1));
	}
}

int buddy_map_walk(const struct buddy_map *m, u64 chunk_entries,
		   const struct buddy_map_ops *ops, void *ctx, u8 *buf,
		   unsigned int bufsz)
{
	u64 e = m->first, end = m->first + m->count, off = 0;
	int ret = 0;

	while (e < end) {
		u64 k = 0, want = end - e;

		if (want > 2ULL * bufsz)
			want = 2ULL * bufsz;
		memset(buf, 0, bufsz);
		while (k < want) {
			unsigned int c = div64_u64(e, chunk_entries);
			u64 i = e - c * chunk_entries;
			u64 n = chunk_entries - i;
			const u8 *meta;

			if (n > want - k)
				n = want - k;
			meta = ops->chunk(ctx, c, &ret);
			if (!meta)
				return ret;
			buddy_map_pack(buf, k, meta, i, n);
			ops->unchunk(ctx, c);
			k += n;
			e += n;
		}
		ret = ops->copy(ctx, off, buf, DIV_ROUND_UP(k, 2));
		if (ret)
			return ret;
		off += DIV_ROUND_UP(k, 2);
		if (ops->check && e < end) {
			ret = ops->check(ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int buddy_list_walk(struct buddy_list *l, const struct buddy_list_ops *ops,
		    void *ctx, struct buddy_alloc_stat *st)
{
	size_t n = l->stat_size < sizeof(*st) ? l->stat_size : sizeof(*st);
	unsigned int written = 0;
	u64 id = l->start_id, total = 0;
	int ret;

	for (;; id++) {
		bool want = written < l->count;

		memset(st, 0, sizeof(*st));
		ret = ops->next(ctx, &id, want, st);
		if (ret == -ENOENT) {
			ret = 0;
			break;
		}
		if (ret)
			break;
		total++;
		if (want) {
			ret = ops->copy(ctx, written, st, n, l->stat_size);
			if (ret)
				break;
			written++;
		}
		if (ops->check) {
			ret = ops->check(ctx);
			if (ret)
				break;
		}
		if (id == (u64)-1)
			break;
	}
	l->count = written;
	l->total = total;
	return ret;
}

int buddy_profile_admit(unsigned int count, unsigned int nr,
			bool (*in_table)(void *ctx, unsigned int i),
			bool (*same)(void *ctx, unsigned int k, unsigned int i),
			void *ctx)
{
	unsigned int i, k, added = 0;

	for (i = 0; i < count; i++) {
		bool dup = in_table(ctx, i);

		for (k = 0; k < i && !dup; k++)
			dup = same(ctx, k, i);
		added += !dup;
	}
	return nr + added > BUDDY_PROFILE_MAX ? -ENOSPC : 0;
}
