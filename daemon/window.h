/* SPDX-License-Identifier: GPL-2.0 */
/*
 * window.h - the last W snapshots of every decision unit, and the decision
 * taken on them with the Buddy Threshold heuristic (tools/policy/heuristic.h).
 *
 * A snapshot is one BUDDY_IOC_LIST of every live allocation.  Allocations
 * are grouped into units ("keys"): all allocations of one owner uid with
 * one non-empty label form one unit (the paper's per-allocation targets,
 * pooled by label within a uid, so that a framework re-allocating under the
 * same label keeps one history); an unlabelled allocation is a unit of its
 * own.  For every unit the window keeps, per snapshot, the sum of its
 * members' size-code histograms (struct buddy_alloc_stat.codes), their
 * logical bytes and their number.  Snapshot rows form a ring of W rows: the
 * row of snapshot s (1-based) is (s - 1) % W, so a unit's rows always
 * describe the last min(s, W) snapshots (a row from before it existed, or
 * in which it had no live member, is all zero).  A unit without a member in
 * any of the last W snapshots is dropped.
 *
 * A unit is *ready* once W snapshots were taken and it had live members in
 * every one of the last W (a freshly made allocation reads as all ZERO, so
 * deciding on fewer snapshots would hand 16x to anything new).  Only ready
 * units are decided; the others are *pending*.
 *
 * The decision feeds one struct buddy_heur_alloc per ready unit to
 * buddy_heur_decide() without the heuristic's own pooling (the units are
 * already pooled): its series are the unit's rows, oldest first, its size
 * the members' logical bytes in the newest snapshot.
 */
#ifndef BUDDYD_WINDOW_H
#define BUDDYD_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/policy/heuristic.h"
#include "uapi/linux/buddy.h"

struct bd_key {
	uint32_t uid;
	uint64_t id;			/* 0, or the allocation of an unlabelled unit */
	char label[BUDDY_LABEL_LEN];
	uint64_t (*rows)[BUDDY_CODE_NR];	/* W rows (ring) */
	uint64_t *size;			/* W: members' logical bytes */
	uint32_t *members;		/* W: live members */
	/* the newest snapshot with members (valid when cur_seq != 0): */
	uint64_t cur_seq;
	uint64_t cur_size;
	uint32_t cur_members;
	uint64_t cur_device_bytes;	/* pool bytes the members hold */
	uint64_t cur_buddy_bytes;
	uint64_t codec_entries[BUDDY_CODEC_NR];	/* entries per codec */
	unsigned int target_mask;	/* bit heur index of each member's target */
	struct buddy_counters counters;	/* summed */
	/*
	 * the codec of the unit's rows (bd_key_codec() when they were last
	 * reset); a snapshot whose members mostly use another codec (a live
	 * codec change) clears the older rows: see bd_window_end()
	 */
	unsigned int rows_codec;
	/* free for the caller (buddyd: the last target it logged, 0 none) */
	unsigned int logged_target;
};

struct bd_window {
	unsigned int w;
	uint64_t seq;			/* snapshots begun */
	uint64_t *t_us;			/* W: time of each row's snapshot */
	struct bd_key *keys;
	size_t n, cap;
};

int bd_window_init(struct bd_window *win, unsigned int w);
void bd_window_free(struct bd_window *win);

/* Start snapshot seq + 1, taken at @t_us: clears its row in every unit. */
void bd_window_begin(struct bd_window *win, uint64_t t_us);
/* Count one allocation into the current snapshot. Return 0 or -ENOMEM. */
int bd_window_add(struct bd_window *win, const struct buddy_alloc_stat *st);
/*
 * Finish the snapshot: drops the units without members in the window, and
 * clears every row but the newest of a unit whose codec (bd_key_codec())
 * changed since its rows began, so that a unit's rows never mix two
 * codecs' size codes: it is pending again until W snapshots in its new
 * codec were taken.
 */
void bd_window_end(struct bd_window *win);

/* Rows in use: min(seq, W). */
unsigned int bd_window_rows(const struct bd_window *win);
/* Snapshots of the window in which @k had live members. */
unsigned int bd_key_present(const struct bd_window *win, const struct bd_key *k);
bool bd_key_ready(const struct bd_window *win, const struct bd_key *k);
/* @k's rows, oldest first, into @out (bd_window_rows() rows). */
void bd_key_series(const struct bd_window *win, const struct bd_key *k,
		   uint64_t (*out)[BUDDY_CODE_NR]);
/* Time of the i-th row, oldest first. */
uint64_t bd_window_time(const struct bd_window *win, unsigned int i);
/* The codec most of @k's entries use (newest snapshot); BPC when none. */
unsigned int bd_key_codec(const struct bd_key *k);

/* The unit of an allocation: index into win->keys, or -1. */
long bd_window_find(const struct bd_window *win, uint32_t uid,
		    const char *label, uint64_t id);
long bd_window_find_stat(const struct bd_window *win,
			 const struct buddy_alloc_stat *st);

/*
 * struct bd_decision - the heuristic's input and output for the ready units.
 * @n:		ready units.
 * @key:	@n indexes into win->keys.
 * @a:		@n heuristic inputs (labels point into win->keys: valid until
 *		the window changes).
 * @rows:	@n * @nr_rows histogram rows backing @a.
 * @nr_rows:	rows per unit (W).
 * @ch:		@n choices of buddy_heur_decide().
 * @res:	its totals.
 * @err:	its return value (0, or -ENOSPC with @ch describing the state
 *		reached; -EINVAL/-EOVERFLOW leave @ch unspecified).
 * @pending:	units not ready.
 * @pending_device: pool bytes the pending units' members hold now.
 * @pending_buddy: carve-out bytes they hold.
 * @params:	the parameters the heuristic ran with (capacity net of the
 *		pending units), for the report's comparison points.
 * @codec:	@n codecs chosen per unit by bd_choose_codecs():
 *		BUDDY_CODEC_DEFAULT (bd_decide()'s default) keeps each
 *		member's codec and the heuristic's target (@ch).
 * @codec_target: @n targets that go with a chosen @codec (decided with it).
 */
struct bd_decision {
	size_t n;
	size_t *key;
	struct buddy_heur_alloc *a;
	uint64_t (*rows)[BUDDY_CODE_NR];
	unsigned int nr_rows;
	struct buddy_heur_choice *ch;
	struct buddy_heur_result res;
	int err;
	size_t pending;
	uint64_t pending_device;
	uint64_t pending_buddy;
	struct buddy_heur_params params;
	unsigned int *codec;
	unsigned int *codec_target;
};

/*
 * bd_decide() - decide the ready units.
 * @p:	heuristic parameters: threshold, zero share, allow_16x and the
 *	capacity as the caller sees it (pool_labels is ignored: the units are
 *	pooled already).  The capacity the pending units hold is subtracted
 *	from non-zero limits (never below 1 byte).
 * Return: 0 or -ENOMEM (then @d is empty); the heuristic's own result is in
 * @d->err.  Free @d with bd_decision_free().
 */
int bd_decide(const struct bd_window *win, const struct buddy_heur_params *p,
	      struct bd_decision *d);
void bd_decision_free(struct bd_decision *d);

struct buddy_profile_table;

/*
 * bd_choose_codecs() - the codec of each ready unit, from the profiles.
 *
 * The window holds each unit's size codes in one codec only (the module
 * measures the codec in force), so buddyd cannot compare codecs itself:
 * the per-codec Buddy Threshold decision is the profiler's (`buddyctl
 * profile -p`, tools/profile/engine/profile_decide.c: for each label the codec whose
 * threshold target is the most aggressive, then the fewest buddy accesses),
 * recorded as the codec and target of the label's profile.  For a labelled
 * unit whose profile in @t names a codec (not BUDDY_CODEC_DEFAULT) that
 * differs from bd_key_codec(), @d->codec is that codec and @d->codec_target
 * the profile's target; every other unit keeps BUDDY_CODEC_DEFAULT.
 * Return: the number of units given a new codec.
 */
size_t bd_choose_codecs(const struct bd_window *win, struct bd_decision *d,
			const struct buddy_profile_table *t);

/*
 * struct bd_move - one re-targeting of a live allocation.
 */
struct bd_move {
	uint64_t id;
	unsigned int from, to;
	unsigned int from_codec;	/* the allocation's codec now */
	unsigned int codec;		/* new codec, or BUDDY_CODEC_DEFAULT */
	size_t unit;			/* index into the decision */
};

/*
 * bd_plan_live() - the SET_TARGET calls that bring the live allocations
 * @st (one snapshot) to their units' decided targets: one per allocation of
 * a ready unit whose target differs, or, for a unit given a codec by
 * bd_choose_codecs(), whose codec differs (then to @d->codec_target with
 * that codec, re-encoded by SET_TARGET).  Moves to a more aggressive target
 * (fewer device bytes) come first, so that the device bytes they give back
 * are free for the moves that need more; within each group in id order.
 * @moves: room for @n moves.
 * Return: the number of moves.
 */
size_t bd_plan_live(const struct bd_window *win, const struct bd_decision *d,
		    const struct buddy_alloc_stat *st, size_t n,
		    struct bd_move *moves);

#endif /* BUDDYD_WINDOW_H */
