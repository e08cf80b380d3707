// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * inproc_ioctl.c - the in-process device's ioctls: the reports (GET_MAP,
 * LIST), re-targeting, the profile table, and the dispatcher, kmod/main.c's
 * buddy_ioctl_dispatch() over the same core/ checks.
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

/* GET_MAP's chunks, all held by the re-target lock taken around the walk. */
struct map_ctx {
	struct alloc *a;
	u8 *out;
};

static const u8 *map_chunk(void *ctx, unsigned int c, int *err)
{
	return ((struct map_ctx *)ctx)->a->chunks[c].x.meta;
}

static void map_unchunk(void *ctx, unsigned int c)
{
}

static int map_copy(void *ctx, u64 off, const u8 *buf, unsigned int len)
{
	memcpy(((struct map_ctx *)ctx)->out + off, buf, len);
	return 0;
}

static const struct buddy_map_ops map_ops = {
	.chunk = map_chunk,
	.unchunk = map_unchunk,
	.copy = map_copy,
};

long inproc_map_codes(struct alloc *a, struct buddy_map *m)
{
	struct map_ctx mc = { a, (u8 *)(uintptr_t)m->codes_ptr };
	int ret = buddy_map_check(m, a->nr_entries);
	u8 buf[64];

	if (ret)
		return ret;
	if (!m->count)
		return 0;
	if (!mc.out)
		return -EFAULT;
	pthread_rwlock_rdlock(&a->rt);
	ret = buddy_map_walk(m, a->chunk_entries, &map_ops, &mc, buf,
			     sizeof(buf));
	pthread_rwlock_unlock(&a->rt);
	return ret;
}

/* ---- admin: list, re-target, profiles ---- */

/* LIST's steps: the list is in id order and d->lock is held throughout. */
struct list_ctx {
	struct alloc *a;	/* the next one to look at */
	u8 *out;
};

static int list_next(void *ctx, u64 *id, bool want, struct buddy_alloc_stat *st)
{
	struct list_ctx *lc = ctx;
	struct alloc *a = lc->a;

	while (a && a->id < *id)
		a = a->next;
	if (!a)
		return -ENOENT;
	*id = a->id;
	if (want)
		inproc_fill_stat(a, st);
	lc->a = a->next;
	return 0;
}

static int list_copy(void *ctx, unsigned int idx,
		     const struct buddy_alloc_stat *st, size_t len, size_t size)
{
	u8 *out = ((struct list_ctx *)ctx)->out;

	if (!out)
		return -EFAULT;	/* a bad pointer other than NULL faults */
	out += (size_t)idx * size;
	memcpy(out, st, len);
	memset(out + len, 0, size - len);
	return 0;
}

static const struct buddy_list_ops list_ops = {
	.next = list_next,
	.copy = list_copy,
};

static long dev_list(struct dev *d, struct buddy_list *l)
{
	struct list_ctx lc = { NULL, (u8 *)(uintptr_t)l->stats_ptr };
	struct buddy_alloc_stat st;
	long ret = buddy_list_check(l);

	if (ret)
		return ret;
	pthread_mutex_lock(&d->lock);
	lc.a = d->allocs;
	ret = buddy_list_walk(l, &list_ops, &lc, &st);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

static long dev_set_target(struct dev *d, struct buddy_set_target *req)
{
	const struct buddy_codec *codec;
	struct buddy_chunk_ext *old = NULL;
	u64 cur_dev, cur_bud, new_dev, new_bud, fin_dev, fin_bud;
	struct alloc *a;
	bool mixed = false;
	long ret = buddy_set_target_check(req);

	if (ret)
		return ret;
	/* inproc_files_lock held: @a is not freed meanwhile */
	pthread_mutex_lock(&d->lock);
	a = inproc_find_id(d, req->id);
	pthread_mutex_unlock(&d->lock);
	if (!a)
		return -ENOENT;
	pthread_rwlock_wrlock(&a->rt);
	codec = req->codec == BUDDY_CODEC_DEFAULT ? a->codec :
		buddy_codec_by_id(req->codec);
	if (req->target == a->target && codec == a->codec && !a->mixed)
		goto out_unlock;
	buddy_retarget_need(&inproc_chunk_ops, a, a->nr_chunks, req->target, codec,
			    &cur_dev, &cur_bud, &new_dev, &new_bud);
	if (!buddy_space_could_fit(&d->space, new_dev, new_bud)) {
		ret = -E2BIG;
		goto out_unlock;
	}
	old = calloc(a->nr_chunks, sizeof(*old));
	if (!old) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* the old extents stay until the end: old plus new at the peak */
	pthread_mutex_lock(&d->lock);
	ret = buddy_space_reserve(&d->space, new_dev, new_bud);
	pthread_mutex_unlock(&d->lock);
	if (ret)
		goto out_unlock;
	ret = buddy_retarget_run(&inproc_chunk_ops, a, a->nr_chunks, req->target,
				 codec, old, &mixed);
	if (!ret) {
		buddy_retarget_commit(&inproc_chunk_ops, a, a->nr_chunks, old);
		a->target = req->target;
		a->codec = codec;
		a->codec_id = codec->id;
		a->target_source = BUDDY_SRC_EXPLICIT;
		a->mixed = false;
	} else if (mixed) {
		a->mixed = true;
	}
	buddy_chunks_bytes(&inproc_chunk_ops, a, a->nr_chunks, &fin_dev, &fin_bud);
	pthread_mutex_lock(&d->lock);
	buddy_space_release(&d->space, cur_dev + new_dev - fin_dev,
			    cur_bud + new_bud - fin_bud);
	d->held += (fin_dev + fin_bud) - (cur_dev + cur_bud);
	a->dev_bytes = fin_dev;
	a->bud_bytes = fin_bud;
	pthread_mutex_unlock(&d->lock);
out_unlock:
	pthread_rwlock_unlock(&a->rt);
	free(old);
	return ret;
}

static bool same_profile(const struct buddy_profile_entry *x,
			 const struct buddy_profile_entry *y)
{
	return x->uid == y->uid && !strncmp(x->label, y->label,
					    BUDDY_LABEL_LEN);
}

static struct buddy_profile_entry *profile_find(struct dev *d,
					const struct buddy_profile_entry *e)
{
	unsigned int k;

	for (k = 0; k < d->nr_profiles; k++)
		if (same_profile(&d->profiles[k], e))
			return &d->profiles[k];
	return NULL;
}

/* buddy_profile_admit()'s view of a request (d->lock held). */
struct profile_ctx {
	struct dev *d;
	const struct buddy_profile_entry *ent;
	bool replace;		/* the table counts as empty */
};

static bool ent_in_table(void *ctx, unsigned int i)
{
	struct profile_ctx *pc = ctx;

	return !pc->replace && profile_find(pc->d, &pc->ent[i]);
}

static bool ent_same(void *ctx, unsigned int k, unsigned int i)
{
	struct profile_ctx *pc = ctx;

	return same_profile(&pc->ent[k], &pc->ent[i]);
}

static long dev_profile_set(struct dev *d, struct buddy_profile *req)
{
	const struct buddy_profile_entry *ent =
		(const void *)(uintptr_t)req->entries_ptr;
	struct profile_ctx pc = { d, ent, false };
	unsigned int i, nr;
	long ret = buddy_profile_req_check(req, true);

	if (ret)
		return ret;
	if (req->count && !ent)
		return -EFAULT;
	/* validate everything before changing anything */
	for (i = 0; i < req->count; i++) {
		/* (uid_t)-1 maps to no kernel uid: make_kuid() fails */
		if (ent[i].uid == (u32)-1 ||
		    buddy_profile_entry_check(&ent[i]))
			return -EINVAL;
	}
	pthread_mutex_lock(&d->lock);
	if (!d->profiles) {
		d->profiles = calloc(BUDDY_PROFILE_MAX, sizeof(*d->profiles));
		if (!d->profiles) {
			pthread_mutex_unlock(&d->lock);
			return -ENOMEM;
		}
	}
	pc.replace = req->flags & BUDDY_PROFILE_REPLACE;
	nr = pc.replace ? 0 : d->nr_profiles;
	ret = buddy_profile_admit(req->count, nr, ent_in_table, ent_same, &pc);
	if (ret) {
		pthread_mutex_unlock(&d->lock);
		return ret;
	}
	d->nr_profiles = nr;
	for (i = 0; i < req->count; i++) {
		struct buddy_profile_entry *e = profile_find(d, &ent[i]);

		if (!e) {
			e = &d->profiles[d->nr_profiles++];
			*e = ent[i];
		}
		e->target = ent[i].target;
		e->codec = ent[i].codec;
	}
	req->total = d->nr_profiles;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static long dev_profile_get(struct dev *d, struct buddy_profile *req)
{
	struct buddy_profile_entry *out = (void *)(uintptr_t)req->entries_ptr;
	unsigned int n;
	long ret = buddy_profile_req_check(req, false);

	if (ret)
		return ret;
	pthread_mutex_lock(&d->lock);
	n = req->count < d->nr_profiles ? req->count : d->nr_profiles;
	if (n && !out) {
		pthread_mutex_unlock(&d->lock);
		return -EFAULT;
	}
	if (n)
		memcpy(out, d->profiles, n * sizeof(*out));
	req->total = d->nr_profiles;
	pthread_mutex_unlock(&d->lock);
	req->count = n;
	return 0;
}

/* ---- the ioctl dispatcher: kmod/main.c's buddy_ioctl_dispatch() ---- */

/* The commands; their ABI version 1 sizes are core/chunk.c's. */
static const struct ioc {
	unsigned int cmd;
	bool on_alloc;		/* also on an allocation's descriptor */
} iocs[] = {

	{ BUDDY_IOC_GET_INFO, false },
	{ BUDDY_IOC_ALLOC, false },
	{ BUDDY_IOC_ALLOC_STAT, true },
	{ BUDDY_IOC_GET_MAP, true },
	{ BUDDY_IOC_LIST, false },
	{ BUDDY_IOC_SET_TARGET, false },
	{ BUDDY_IOC_PROFILE_SET, false },
	{ BUDDY_IOC_PROFILE_GET, false },
};

static long run_alloc_cmd(struct alloc *a, unsigned int cmd, void *k)
{
	if (cmd == BUDDY_IOC_ALLOC_STAT) {
		struct buddy_alloc_stat *st = k;

		if (st->id && st->id != a->id)
			return -EINVAL;
		inproc_fill_stat(a, st);
		return 0;
	}
	if (((struct buddy_map *)k)->id &&
	    ((struct buddy_map *)k)->id != a->id)
		return -EINVAL;
	return inproc_map_codes(a, k);
}

static long run_dev_cmd(struct dev *d, unsigned int cmd, void *k)
{
	struct alloc *a;
	long ret;

	switch (cmd) {
	case BUDDY_IOC_GET_INFO:
		inproc_fill_info(d, k);
		return 0;
	case BUDDY_IOC_ALLOC:
		return inproc_dev_alloc(d, k);
	case BUDDY_IOC_ALLOC_STAT:
	case BUDDY_IOC_GET_MAP:
		/* both structs start with the id */
		pthread_mutex_lock(&d->lock);
		a = inproc_find_id(d, *(u64 *)k);
		if (a && cmd == BUDDY_IOC_ALLOC_STAT)
			inproc_fill_stat(a, k);
		pthread_mutex_unlock(&d->lock);
		if (!a)
			return -ENOENT;
		if (cmd == BUDDY_IOC_ALLOC_STAT)
			return 0;
		ret = inproc_map_codes(a, k);
		return ret;
	case BUDDY_IOC_LIST:
		return dev_list(d, k);
	case BUDDY_IOC_SET_TARGET:
		return dev_set_target(d, k);
	case BUDDY_IOC_PROFILE_SET:
		return dev_profile_set(d, k);
	default:
		return dev_profile_get(d, k);
	}
}

int inproc_ioctl(int fd, unsigned long cmd, void *arg)
{
	unsigned int usize = _IOC_SIZE(cmd), ksize, i;
	const struct ioc *d = NULL;
	struct file *f = inproc_file_of(fd);
	union {
		struct buddy_info info;
		struct buddy_alloc alloc;
		struct buddy_alloc_stat stat;
		struct buddy_map map;
		struct buddy_list list;
		struct buddy_set_target st;
		struct buddy_profile prof;
	} k;
	long ret;

	if (!f)
		return -EBADF;
	if (_IOC_TYPE(cmd) != BUDDY_IOC_MAGIC)
		return -ENOTTY;
	for (i = 0; i < ARRAY_SIZE(iocs); i++) {
		if (_IOC_NR(iocs[i].cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(iocs[i].cmd) == _IOC_DIR(cmd) &&
		    (!f->a || iocs[i].on_alloc)) {
			d = &iocs[i];
			break;
		}
	}
	if (!d)
		return -ENOTTY;
	if (usize < buddy_ioctl_min_size(d->cmd))
		return -EINVAL;
	ksize = _IOC_SIZE(d->cmd);
	memset(&k, 0, sizeof(k));
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		/* copy_struct_from_user(): a longer struct's tail must be 0 */
		const u8 *u = arg;

		if (!arg)
			return -EFAULT;
		for (i = ksize; i < usize; i++)
			if (u[i])
				return -E2BIG;
		memcpy(&k, arg, usize < ksize ? usize : ksize);
	}
	if (f->a) {
		ret = run_alloc_cmd(f->a, d->cmd, &k);
	} else {
		/*
		 * Calls on the device see every allocation: free those whose
		 * descriptor was closed first, and keep any from being freed
		 * meanwhile.
		 */
		pthread_mutex_lock(&inproc_files_lock);
		inproc_sweep();
		ret = run_dev_cmd(f->d, d->cmd, &k);
		pthread_mutex_unlock(&inproc_files_lock);
	}
	if (ret < 0)
		return ret;
	if (_IOC_DIR(cmd) & _IOC_READ) {
		if (!arg)
			return -EFAULT;	/* only GET_INFO is read-only */
		memcpy(arg, &k, usize < ksize ? usize : ksize);
	}
	return ret;
}
