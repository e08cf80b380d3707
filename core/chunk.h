/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * chunk.h - what an allocation is made of, and the rules both backends
 * apply to it: buddy.ko and libbuddy's in-process device compile this same
 * code (Documentation/design.rst, "Two backends, one core").
 *
 *  - the ABI checks of every request (same input, same errno);
 *  - the chunk table: each chunk's extents and the bytes they hold;
 *  - the data path of one stripe: entry by entry through core/stripe.c;
 *  - next-fit extent reservation over a pool's granule bitmap;
 *  - re-targeting with rollback: new extents for the chunks that change,
 *    old ones kept until the whole re-target commits, moved chunks put back
 *    on failure.
 *
 * What differs between the backends (locks, memory, signals, user copies)
 * comes in through struct buddy_chunk_ops; nothing here sleeps or locks.
 */
#ifndef BUDDY_CORE_CHUNK_H
#define BUDDY_CORE_CHUNK_H

#include "core/layout.h"

/* The largest allocation ALLOC considers before the pools (else E2BIG). */
#define BUDDY_SIZE_MAX		(1ULL << 50)
/* Entries re-striped between two calls of buddy_chunk_ops.check(). */
#define BUDDY_MOVE_BATCH	1024

/* ---- ABI checks ---- */

/* 0-31 printable ASCII bytes without '/', NUL-terminated, rest zero. */
bool buddy_label_valid(const char *label);

/*
 * BUDDY_IOC_ALLOC's request as the caller sent it: 0, -EINVAL (a field),
 * or -E2BIG (larger than any pool could be).  The pools decide the rest.
 */
int buddy_alloc_check(const struct buddy_alloc *req);

/*
 * What an ALLOC of @req gets: its own target and codec, or for AUTO the
 * profile's (@found: the backend's lookup of the caller's uid and label
 * gave @ptarget and @pcodec; the profile's codec only when @req asks for
 * DEFAULT), else @auto_target.  *@codec may still be DEFAULT (BPC).
 */
void buddy_alloc_resolve(const struct buddy_alloc *req, bool found,
			 unsigned int ptarget, unsigned int pcodec,
			 unsigned int auto_target, unsigned int *target,
			 unsigned int *codec, unsigned int *source);

/* BUDDY_IOC_SET_TARGET: 0 or -EINVAL. */
int buddy_set_target_check(const struct buddy_set_target *req);

/* One BUDDY_IOC_PROFILE_SET entry (the uid is the backend's): 0 or -EINVAL. */
int buddy_profile_entry_check(const struct buddy_profile_entry *e);

/* BUDDY_IOC_PROFILE_SET / _GET headers: 0, -EINVAL or -ENOSPC. */
int buddy_profile_req_check(const struct buddy_profile *req, bool set);

/* BUDDY_IOC_GET_MAP's range against @nr_entries: 0 or -EINVAL. */
int buddy_map_check(const struct buddy_map *m, u64 nr_entries);

/* BUDDY_IOC_LIST's element size: 0 or -EINVAL. */
int buddy_list_check(const struct buddy_list *l);

/*
 * ABI version 1's size of the argument of BUDDY_IOC_* command @cmd (matched
 * by number and direction, as the dispatchers do): the smallest _IOC_SIZE a
 * caller may pass (else -EINVAL); 0 for a command the ABI does not have.
 */
unsigned int buddy_ioctl_min_size(unsigned int cmd);

/* ---- the chunk table ---- */

/**
 * struct buddy_chunk_ext - where one chunk of an allocation lives.
 * @x:		its extents (core/stripe.h).
 * @dev_bytes:	granule-rounded bytes of the device extent.
 * @bud_bytes:	granule-rounded bytes of the buddy extent (0 at 1x).
 * @written:	set by every write; a re-target clears it when it moves the
 *		chunk, so that an unwritten chunk is put back by swapping.
 */
struct buddy_chunk_ext {
	struct buddy_extent x;
	u64 dev_bytes;
	u64 bud_bytes;
	bool written;
};

/* The two pools, as struct buddy_chunk_ops names them. */
enum buddy_pool_id { BUDDY_POOL_DEVICE, BUDDY_POOL_BUDDY };

/**
 * struct buddy_chunk_ops - what a backend lends the shared chunk code.
 * @chunk:	chunk @c of the allocation.
 * @pool_alloc:	carve @bytes (granule-aligned by the callee) out of a pool,
 *		next fit from *@cursor; NULL when no run is long enough.
 * @pool_free:	give an extent back (NULL or 0 bytes: nothing).
 * @lock:	take chunk @c exclusively (no I/O on it meanwhile).
 * @unlock:	release it.
 * @check:	between batches of work: 0 to go on, -EINTR (a fatal signal)
 *		or -ENOENT (the allocation is being freed) to stop.
 * @codes_add:	add a histogram change (BUDDY_CODE_SLOTS, sums to 0).
 * @warn:	report chunk @c failing with @err (@restore: putting it back).
 */
struct buddy_chunk_ops {
	struct buddy_chunk_ext *(*chunk)(void *ctx, unsigned int c);
	void *(*pool_alloc)(void *ctx, enum buddy_pool_id pool, u64 bytes,
			    unsigned long *cursor);
	void (*pool_free)(void *ctx, enum buddy_pool_id pool, void *addr,
			  u64 bytes);
	void (*lock)(void *ctx, unsigned int c);
	void (*unlock)(void *ctx, unsigned int c);
	int (*check)(void *ctx);
	void (*codes_add)(void *ctx, const s64 *delta);
	void (*warn)(void *ctx, unsigned int c, int err, bool restore);
};

/* Entries of chunk @c of an allocation of @nr_entries, @chunk_entries each. */
static inline unsigned int buddy_chunk_entries(u64 nr_entries,
					       u64 chunk_entries,
					       unsigned int c)
{
	u64 first = (u64)c * chunk_entries;

	return nr_entries - first < chunk_entries ? nr_entries - first :
						    chunk_entries;
}

/*
 * Carve out extents for chunks 0..@nr_chunks-1 at @target with @codec (the
 * bytes are already reserved) and clear their metadata.  0, or -ENOSPC
 * (fragmentation) / the error of ops->check(), with everything carved so
 * far given back.
 */
int buddy_chunks_reserve(const struct buddy_chunk_ops *ops, void *ctx,
			 unsigned int nr_chunks, u64 nr_entries,
			 u64 chunk_entries, unsigned int target,
			 const struct buddy_codec *codec);

/* Give back the extents of chunks 0..@nr_chunks-1. */
void buddy_chunks_free(const struct buddy_chunk_ops *ops, void *ctx,
		       unsigned int nr_chunks);

/* ---- the data path ---- */

/* buddy_stripe_rw() (core/stripe.h) runs the stripes located here. */

/* Where logical byte @pos is: chunk, entry in the chunk, offset in it. */
static inline void buddy_locate(u64 pos, u64 chunk_entries, unsigned int *c,
				unsigned int *i, unsigned int *off)
{
	u64 entry = pos / BUDDY_ENTRY_BYTES;

	*c = entry / chunk_entries;
	*i = entry % chunk_entries;
	*off = pos % BUDDY_ENTRY_BYTES;
}

/* End of the stripe that @pos is in, clipped to @end. */
static inline u64 buddy_stripe_end(u64 pos, u64 end)
{
	u64 bytes = BUDDY_STRIPE_ENTRIES * BUDDY_ENTRY_BYTES;
	u64 e = pos - pos % bytes + bytes;

	return e < end ? e : end;
}

/* Add @acct's counters to @dst (struct buddy_counters as 64-bit words). */
static inline void buddy_counters_add(struct buddy_counters *dst,
				      const struct buddy_counters *src)
{
	u64 *d = (u64 *)dst;
	const u64 *s = (const u64 *)src;
	unsigned int k;

	for (k = 0; k < sizeof(*dst) / sizeof(u64); k++)
		d[k] += s[k];
}

/* ---- extent reservation over a granule bitmap ---- */

/*
 * Next fit: the first run of @nr clear bits of @map (@size bits) at or
 * after max(@start, *@cursor), wrapping once to the runs that start before
 * it.  The bit, with *@cursor moved past the run; or @size when none.
 */
unsigned long buddy_next_fit(unsigned long *map, unsigned long size,
			     unsigned long start, unsigned int nr,
			     unsigned long *cursor);

/* ---- re-targeting ---- */

/*
 * Bytes the chunks hold now (@cur_*) and the new extents of the chunks not
 * at @target with @codec yet would need (@new_*).
 */
void buddy_retarget_need(const struct buddy_chunk_ops *ops, void *ctx,
			 unsigned int nr_chunks, unsigned int target,
			 const struct buddy_codec *codec, u64 *cur_dev,
			 u64 *cur_bud, u64 *new_dev, u64 *new_bud);

/*
 * Re-stripe every chunk not at @target and @codec yet into new extents
 * (bytes already reserved), keeping the old ones in @old[0..nr_chunks-1]
 * (zeroed by the caller).  0: commit with buddy_retarget_commit().
 * Otherwise the moved chunks were put back and the error is returned;
 * *@mixed is set if one could not be (corrupt data): it stays at @target.
 */
int buddy_retarget_run(const struct buddy_chunk_ops *ops, void *ctx,
		       unsigned int nr_chunks, unsigned int target,
		       const struct buddy_codec *codec,
		       struct buddy_chunk_ext *old, bool *mixed);

/* Free the old extents a successful buddy_retarget_run() kept. */
void buddy_retarget_commit(const struct buddy_chunk_ops *ops, void *ctx,
			   unsigned int nr_chunks, struct buddy_chunk_ext *old);

/* Device and buddy bytes the chunks hold now. */
void buddy_chunks_bytes(const struct buddy_chunk_ops *ops, void *ctx,
			unsigned int nr_chunks, u64 *dev, u64 *bud);

#endif /* BUDDY_CORE_CHUNK_H */
