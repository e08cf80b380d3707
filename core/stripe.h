/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * stripe.h - Buddy Compression's sector striping of one chunk.
 *
 * A chunk of an allocation is stored in two extents (paper, Fig. 4):
 *
 *   device extent:  nr_entries device slots of @target bytes each, then the
 *                   4-bit size codes, two per byte (entry 2i in the low
 *                   nibble of byte i);
 *   buddy extent:   nr_entries buddy slots of 128 - @target bytes each
 *                   (none at 1x).
 *
 * Entry i's stored form (buddy_entry_encode()) keeps its first
 * min(stored, target) bytes in device slot i and spills the rest into buddy
 * slot i.  At 1x (target 128) the entry is classified by the size-only path
 * and stored plain.  Changes of compressibility never move a slot.
 *
 * Callers serialise access to an entry's metadata byte: a lock that covers
 * BUDDY_STRIPE_ENTRIES aligned entries covers whole metadata bytes.
 */
#ifndef BUDDY_CORE_STRIPE_H
#define BUDDY_CORE_STRIPE_H

#include "core/codec.h"

/* Entries per lock stripe: 32 entries = 4 KiB logical, 16 metadata bytes. */
#define BUDDY_STRIPE_ENTRIES	32

/**
 * struct buddy_extent - where one chunk lives.
 * @dev:	device extent: slots, then metadata.
 * @meta:	the 4-bit codes, inside the device extent.
 * @bud:	buddy extent (NULL at 1x).
 * @target:	device bytes per entry (BUDDY_TARGET_*, never AUTO).
 * @nr_entries:	entries in the chunk.
 * @codec:	the codec of the allocation.
 */
struct buddy_extent {
	u8 *dev;
	u8 *meta;
	u8 *bud;
	unsigned int target;
	unsigned int nr_entries;
	const struct buddy_codec *codec;
};

/**
 * struct buddy_io_acct - what a run of entry accesses did, for the caller
 * to add to its counters in one go.
 * @c:		access counters (see struct buddy_counters).
 * @codes:	change of the size-code histogram.
 * @link_requests: requests over the buddy link: stripes whose accesses
 *		touched a buddy sector (counted by buddy_stripe_rw_link() in
 *		core/link_model.h, never by buddy_stripe_rw() itself).
 */
struct buddy_io_acct {
	struct buddy_counters c;
	s64 codes[BUDDY_CODE_NR];
	u64 link_requests;
};

static inline bool buddy_target_valid(unsigned int target)
{
	return target == BUDDY_TARGET_1X || target == BUDDY_TARGET_4_3X ||
	       target == BUDDY_TARGET_2X || target == BUDDY_TARGET_4X ||
	       target == BUDDY_TARGET_16X;
}

/* Bytes of the device extent and of the buddy extent of a chunk. */
static inline u64 buddy_extent_dev_bytes(u64 nr_entries, unsigned int target)
{
	return nr_entries * target + DIV_ROUND_UP(nr_entries, 2);
}

static inline u64 buddy_extent_bud_bytes(u64 nr_entries, unsigned int target)
{
	return nr_entries * (BUDDY_ENTRY_BYTES - target);
}

static inline unsigned int buddy_meta_get(const u8 *meta, unsigned int i)
{
	return (meta[i / 2] >> (4 * (i & 1))) & 0xf;
}

static inline void buddy_meta_set(u8 *meta, unsigned int i, unsigned int code)
{
	u8 *b = &meta[i / 2];
	unsigned int shift = 4 * (i & 1);

	*b = (*b & ~(0xf << shift)) | (code << shift);
}

/* Bytes stored for an entry of @code at @target: plain 128 at 1x. */
static inline unsigned int buddy_stored_bytes(unsigned int target,
					      unsigned int code)
{
	if (code == BUDDY_CODE_ZERO)
		return 0;
	if (target == BUDDY_TARGET_1X)
		return BUDDY_ENTRY_BYTES;
	return buddy_code_bytes(code);
}

/* Point @x at a chunk whose device extent is @dev and buddy extent @bud. */
void buddy_extent_init(struct buddy_extent *x, u8 *dev, u8 *bud,
		       unsigned int target, unsigned int nr_entries,
		       const struct buddy_codec *codec);

/*
 * Read (or write) @len bytes at byte @off of entry @i of @x from or into
 * @buf, a stripe of BUDDY_STRIPE_ENTRIES entries at a time: the stripe's
 * metadata bytes are read once (and written back once), whole entries are
 * decoded straight into @buf (a 1x run in one copy), only a partial entry
 * goes through a bounce entry, and the counters are added up per stripe.
 * The caller holds the locks of the stripes the range touches.  0, or
 * -EIO for corrupt metadata (the entries before it are done and counted).
 */
int buddy_stripe_rw(const struct buddy_extent *x, unsigned int i,
		    unsigned int off, u8 *buf, unsigned int len, bool write,
		    struct buddy_io_acct *acct);

/* Read entry @i into @entry (128 bytes).  0, or -EIO for corrupt metadata. */
int buddy_stripe_read(const struct buddy_extent *x, unsigned int i, u8 *entry,
		      struct buddy_io_acct *acct);

/* Store the 128 bytes at @entry as entry @i. */
void buddy_stripe_write(const struct buddy_extent *x, unsigned int i,
			const u8 *entry, struct buddy_io_acct *acct);

/*
 * Write @len bytes at byte @off of entry @i: a whole entry is a plain write,
 * anything less reads, modifies and writes the entry (one read, one write).
 */
int buddy_stripe_update(const struct buddy_extent *x, unsigned int i,
			const u8 *src, unsigned int off, unsigned int len,
			struct buddy_io_acct *acct);

/* Copy entry @i of @from into entry @j of @to (re-striping); no counters. */
int buddy_stripe_move(const struct buddy_extent *from, unsigned int i,
		      const struct buddy_extent *to, unsigned int j,
		      s64 *codes_delta);

/*
 * Re-stripe entries @first..@first+@n-1 of @from into the same entries of
 * @to.  All or nothing for the histogram: @codes_delta gets the change of
 * the size codes only when every entry moved; on -EIO (corrupt metadata)
 * it is left exactly as it was.  @codes_delta has BUDDY_CODE_SLOTS entries.
 */
int buddy_extent_move(const struct buddy_extent *from,
		      const struct buddy_extent *to, unsigned int first,
		      unsigned int n, s64 *codes_delta);

/* Add the size-code histogram of @x's entries to @hist (BUDDY_CODE_SLOTS). */
void buddy_extent_codes(const struct buddy_extent *x, s64 *hist);

#endif /* BUDDY_CORE_STRIPE_H */
