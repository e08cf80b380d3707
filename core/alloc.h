/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * alloc.h - what an allocation is on both backends, and how the ABI reports
 * it: buddy.ko's struct buddy_allocation and the in-process device's struct
 * alloc both embed struct buddy_alloc_core, and BUDDY_IOC_ALLOC_STAT,
 * GET_INFO, GET_MAP, LIST and PROFILE_SET are answered by the code below
 * (Documentation/design.rst, "Two backends, one core").
 *
 * What is not here is backend-specific: owner uid and pid (kuid_t and
 * struct pid in the kernel), counters and histogram (atomics and seqlocks
 * there, a mutex here), locks, user copies.
 */
#ifndef BUDDY_CORE_ALLOC_H
#define BUDDY_CORE_ALLOC_H

#include "core/chunk.h"

#ifndef BUDDY_COMM_LEN
#define BUDDY_COMM_LEN	16	/* TASK_COMM_LEN; struct buddy_alloc_stat.comm */
#endif

#define BUDDY_ALLOC_CORE_MEMBERS					\
	u64 id;								\
	u64 size;							\
	u64 nr_entries;							\
	u64 chunk_entries;						\
	unsigned int nr_chunks;						\
	unsigned int target;						\
	unsigned int codec_id;						\
	unsigned int target_source;					\
	const struct buddy_codec *codec;				\
	u64 dev_bytes;							\
	u64 bud_bytes;							\
	bool mixed;							\
	char label[BUDDY_LABEL_LEN];					\
	char comm[BUDDY_COMM_LEN]

/**
 * struct buddy_alloc_core - the fields every allocation has on both backends.
 * @id:			BUDDY_IOC_ALLOC's id, never reused.
 * @size:		logical bytes.
 * @nr_entries:		128-byte entries.
 * @chunk_entries:	entries per chunk.
 * @nr_chunks:		chunks.
 * @target:		BUDDY_TARGET_* (changed by a re-target).
 * @codec_id:		@codec's id.
 * @target_source:	BUDDY_SRC_*: where @target came from.
 * @codec:		the codec.
 * @dev_bytes:		device pool bytes its chunks hold.
 * @bud_bytes:		buddy carve-out bytes its chunks hold.
 * @mixed:		a rollback failed: chunks may be at other targets than
 *			@target, so a re-target is never a no-op.
 * @label:		BUDDY_IOC_ALLOC's label.
 * @comm:		the allocating task's name, NUL-padded.
 *
 * A backend embeds it with BUDDY_ALLOC_CORE(core): the fields are reached
 * directly (a->size) and the whole as &a->core, as the kernel's
 * struct_group_tagged() does.
 */
struct buddy_alloc_core {
	BUDDY_ALLOC_CORE_MEMBERS;
};

#define BUDDY_ALLOC_CORE(name)						\
	union {								\
		struct { BUDDY_ALLOC_CORE_MEMBERS; };			\
		struct buddy_alloc_core name;				\
	}

/*
 * A new allocation's core fields from BUDDY_IOC_ALLOC's @req (checked by
 * buddy_alloc_check()): size, entries, label, and target and codec as
 * buddy_alloc_resolve() decides them from the backend's profile lookup
 * (@found, @ptarget, @pcodec) and its AUTO default @auto_target.
 */
void buddy_alloc_core_init(struct buddy_alloc_core *a,
			   const struct buddy_alloc *req, bool found,
			   unsigned int ptarget, unsigned int pcodec,
			   unsigned int auto_target);

/* BUDDY_IOC_ALLOC's reply fields (the fd is the backend's): what @a got. */
void buddy_alloc_reply_fill(const struct buddy_alloc_core *a,
			    struct buddy_alloc *req);

/*
 * The ALLOC_STAT fields the core holds (@st zeroed by the caller); the
 * backend adds owner, histogram, counters, link_ns and the window.
 */
void buddy_stat_fill(const struct buddy_alloc_core *a,
		     struct buddy_alloc_stat *st);

/*
 * The GET_INFO fields that do not depend on the backend's pools (@info
 * zeroed by the caller): ABI version, @max_ratio, features (@features are
 * the backend's own, e.g. BUDDY_FEAT_MMAP), codecs, chunk bytes.
 */
void buddy_info_fill(struct buddy_info *info, unsigned int max_ratio,
		     unsigned int chunk_kb, u64 features);

/* GET_INFO's ratio_milli, once the backend has filled the byte counts. */
void buddy_info_ratio(struct buddy_info *info);

/*
 * GET_MAP: put the codes of @n entries of one chunk, from entry @i of
 * @meta on, into @buf as code number @k onwards (two per byte, the first
 * in the low nibble; @buf zeroed by the caller).  The caller holds what
 * keeps the chunk's metadata in place.  A writer may be changing the other
 * nibble of a byte: each is a snapshot.
 */
void buddy_map_pack(u8 *buf, u64 k, const u8 *meta, u64 i, u64 n);

/*
 * GET_MAP's walk over the chunks of an allocation: the codes of
 * m->first..+m->count into @out (two per byte), @bufsz bytes at a time.
 * @chunk gives chunk @c's metadata with the chunk held, @unchunk lets it
 * go; @copy copies @len bytes of @buf to @out + @off (0 or -EFAULT);
 * @check runs between buffers (0 or the error to stop with).  0 or the
 * first error; m is checked by the caller (buddy_map_check()).
 */
struct buddy_map_ops {
	const u8 *(*chunk)(void *ctx, unsigned int c, int *err);
	void (*unchunk)(void *ctx, unsigned int c);
	int (*copy)(void *ctx, u64 off, const u8 *buf, unsigned int len);
	int (*check)(void *ctx);
};

int buddy_map_walk(const struct buddy_map *m, u64 chunk_entries,
		   const struct buddy_map_ops *ops, void *ctx, u8 *buf,
		   unsigned int bufsz);

/*
 * BUDDY_IOC_LIST's walk: @next gives the first live allocation whose id is
 * >= *@id (and sets *@id to it), filling @st when @want (0, -ENOENT at the
 * end, or an error); @copy copies @len bytes of @st to element @idx of the
 * caller's array and zeroes the rest of its @size bytes (0 or -EFAULT);
 * @check runs after each (0 or the error to stop with).  l->count and
 * l->total are set; the return is 0 or the first error.
 */
struct buddy_list_ops {
	int (*next)(void *ctx, u64 *id, bool want, struct buddy_alloc_stat *st);
	int (*copy)(void *ctx, unsigned int idx, const struct buddy_alloc_stat *st,
		    size_t len, size_t size);
	int (*check)(void *ctx);
};

int buddy_list_walk(struct buddy_list *l, const struct buddy_list_ops *ops,
		    void *ctx, struct buddy_alloc_stat *st);

/*
 * PROFILE_SET's capacity rule: of @count request entries, how many add a
 * (uid, label) pair to a table of @nr pairs: neither in the table
 * (@in_table(ctx, i)) nor named by an earlier entry of the request
 * (@same(ctx, k, i), k < i).  -ENOSPC when @nr plus those exceeds
 * BUDDY_PROFILE_MAX, else 0.  With BUDDY_PROFILE_REPLACE the caller passes
 * @nr 0 and an @in_table that finds nothing.
 */
int buddy_profile_admit(unsigned int count, unsigned int nr,
			bool (*in_table)(void *ctx, unsigned int i),
			bool (*same)(void *ctx, unsigned int k, unsigned int i),
			void *ctx);

#endif /* BUDDY_CORE_ALLOC_H */
