/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * layout.h - how many pool bytes an allocation needs, and the admission
 * rule that decides whether the pools (and the caller's quota) can take it.
 *
 * Shared by buddy.ko and userspace: the pools hand out 4 KiB granules
 * (BUDDY_GRANULE_BYTES, whatever the CPU's page size), every chunk's device
 * and buddy extent is rounded up to whole granules, and a request is
 * admitted when the bytes it needs fit what is not yet *reserved*.  The
 * reservation counters are taken (and given back) under the caller's lock;
 * the extents themselves are carved out afterwards, outside it.
 */
#ifndef BUDDY_CORE_LAYOUT_H
#define BUDDY_CORE_LAYOUT_H

#include "core/stripe.h"

#define BUDDY_GRANULE_SHIFT	12
#define BUDDY_GRANULE_BYTES	(1u << BUDDY_GRANULE_SHIFT)

static inline u64 buddy_granule_align(u64 bytes)
{
	return (bytes + BUDDY_GRANULE_BYTES - 1) &
	       ~(u64)(BUDDY_GRANULE_BYTES - 1);
}

/* Granule-aligned bytes of the device and buddy extents of one chunk. */
static inline void buddy_chunk_need(u64 nr_entries, unsigned int target,
				    u64 *dev, u64 *bud)
{
	*dev = buddy_granule_align(buddy_extent_dev_bytes(nr_entries, target));
	*bud = buddy_granule_align(buddy_extent_bud_bytes(nr_entries, target));
}

/**
 * struct buddy_layout - the chunks of one allocation and what they need.
 * @nr_entries:		128-byte entries.
 * @chunk_entries:	entries per chunk (the last chunk may hold fewer).
 * @nr_chunks:		chunks.
 * @dev_bytes:		device pool bytes of all chunks at @target.
 * @bud_bytes:		buddy carve-out bytes of all chunks at @target.
 */
struct buddy_layout {
	u64 nr_entries;
	u64 chunk_entries;
	u64 nr_chunks;
	u64 dev_bytes;
	u64 bud_bytes;
};

static inline void buddy_layout_init(struct buddy_layout *l, u64 nr_entries,
				     u64 chunk_entries, unsigned int target)
{
	u64 full = nr_entries / chunk_entries;
	u64 last = nr_entries - full * chunk_entries;
	u64 d, b, ld, lb;

	buddy_chunk_need(chunk_entries, target, &d, &b);
	buddy_chunk_need(last, target, &ld, &lb);
	l->nr_entries = nr_entries;
	l->chunk_entries = chunk_entries;
	l->nr_chunks = full + (last != 0);
	l->dev_bytes = full * d + ld;
	l->bud_bytes = full * b + lb;
}

/**
 * struct buddy_space - the reservation counters of the two pools.
 * @dev_total:	bytes of the device pool.
 * @bud_total:	bytes of the buddy carve-out.
 * @dev_resv:	device bytes promised: every live allocation's extents, plus
 *		the new extents of re-targets in progress.
 * @bud_resv:	likewise for the carve-out.
 */
struct buddy_space {
	u64 dev_total;
	u64 bud_total;
	u64 dev_resv;
	u64 bud_resv;
};

/* Could the pools ever hold @dev and @bud bytes (else E2BIG)? */
static inline bool buddy_space_could_fit(const struct buddy_space *s,
					 u64 dev, u64 bud)
{
	return dev <= s->dev_total && bud <= s->bud_total;
}

/*
 * Reserve @dev and @bud bytes if both fit what is not reserved yet:
 * 0, or -ENOSPC with nothing changed.  Caller serialises.
 */
static inline int buddy_space_reserve(struct buddy_space *s, u64 dev, u64 bud)
{
	if (dev > s->dev_total - s->dev_resv ||
	    bud > s->bud_total - s->bud_resv)
		return -ENOSPC;
	s->dev_resv += dev;
	s->bud_resv += bud;
	return 0;
}

static inline void buddy_space_release(struct buddy_space *s, u64 dev, u64 bud)
{
	s->dev_resv -= dev;
	s->bud_resv -= bud;
}

/*
 * The per-user share: a user who holds @held bytes (device plus carve-out,
 * of all live allocations) may add @need more when @limit is 0 (no limit)
 * or the sum stays within it.
 */
static inline bool buddy_quota_allows(u64 held, u64 need, u64 limit)
{
	return !limit || (held <= limit && need <= limit - held);
}

#endif /* BUDDY_CORE_LAYOUT_H */
