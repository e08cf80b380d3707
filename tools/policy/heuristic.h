/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * heuristic.h - per-allocation target compression ratios from profiling
 * snapshots (the Buddy Compression paper, section III-B; Figs. 7, 9, 10).
 *
 * A pure library: no I/O, no globals, no memory allocation.  The caller owns
 * every array; inputs are never modified.  Every function that can fail
 * returns 0 or a negative errno value.  The rules it follows (decision
 * units, the threshold target, capacity steps, results) are in
 * Documentation/design.rst, "The Buddy Threshold heuristic".
 */
#ifndef BUDDY_TOOLS_HEURISTIC_H
#define BUDDY_TOOLS_HEURISTIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/buddy.h"

#define BUDDY_HEUR_PPM			1000000u
#define BUDDY_HEUR_DEF_THRESHOLD_PPM	300000u	/* Buddy Threshold 30% */
#define BUDDY_HEUR_DEF_ZERO_PPM		900000u	/* mostly zero: >= 90% */

/* The five targets, most aggressive first (index 0 = 16x ... 4 = 1x). */
#define BUDDY_HEUR_NR_TARGETS		5

/* The Fig. 10 sweep: Buddy Thresholds 10, 20, 30 and 40%. */
#define BUDDY_HEUR_SWEEP_NR		4
#define BUDDY_HEUR_SWEEP_PPM		{ 100000u, 200000u, 300000u, 400000u }

/**
 * struct buddy_heur_params - knobs of the heuristic.
 * @threshold_ppm:	Buddy Threshold, parts per million of (entry, snapshot)
 *			pairs, 0..1000000.
 * @zero_ppm:		mostly-zero share for 16x, parts per million of the
 *			entries of each snapshot, 0..1000000.
 * @device_bytes:	device pool bytes available, 0 = unlimited.
 * @carveout_bytes:	buddy carve-out bytes available, 0 = unlimited.
 * @pool_labels:	decide once per label (see "Decision unit").
 * @allow_16x:		consider 16x for mostly-zero units.
 * @sampling_margin:	a sampled unit must clear the threshold by its
 *			sampling error (see "Threshold target").
 */
struct buddy_heur_params {
	uint32_t threshold_ppm;
	uint32_t zero_ppm;
	uint64_t device_bytes;
	uint64_t carveout_bytes;
	bool pool_labels;
	bool allow_16x;
	bool sampling_margin;
};

/**
 * struct buddy_heur_alloc - one profiled allocation (input only).
 * @label:	label, or NULL; compared with strcmp when pooling.
 * @size:	logical size in bytes, > 0.
 * @nr_snaps:	snapshots in @hist (may be 0: then 1x).
 * @hist:	@nr_snaps rows; @hist[s][c] entries of size code c
 *		(BUDDY_CODE_*) in snapshot s.
 * @sampled:	0 when every entry was read; otherwise the independent
 *		sampling units (a profiler's 4 KiB blocks) read, over all
 *		snapshots, ...
 * @population:	... out of this many (>= @sampled; equal: exact).
 */
struct buddy_heur_alloc {
	const char *label;
	uint64_t size;
	unsigned int nr_snaps;
	const uint64_t (*hist)[BUDDY_CODE_NR];
	uint64_t sampled;
	uint64_t population;
};

/**
 * struct buddy_heur_choice - the decision for one allocation (output).
 * @target:		final target (BUDDY_TARGET_*: device bytes per entry).
 * @threshold_target:	target chosen by the Buddy Threshold, before any
 *			capacity step.
 * @mostly_zero:	its unit passed the mostly-zero test (whether or not
 *			16x was allowed or chosen).
 * @unit:		index of the first allocation of its decision unit
 *			(itself unless pooled with an earlier one).
 * @next:		index of the next allocation of the same unit, or
 *			(size_t)-1 after the last one.
 * @entries:		ceil(size / 128).
 * @over_at:		this allocation's own pairs over each target, index
 *			0 = 16x (t = 8) ... 4 = 1x (t = 128, always 0).
 * @device_need:	entries * target.
 * @buddy_need:		entries * (128 - target).
 * @pairs:		this allocation's own counted (entry, snapshot) pairs.
 * @over:		of those, the pairs over the final target.
 * @buddy_frac:		@over / @pairs (0 when @pairs is 0): this
 *			allocation's own expected buddy-access fraction.
 * @ratio:		size / @device_need.
 * @err_ppm:		its unit's sampling error at the threshold (0: exact
 *			or no margin asked for).
 */
struct buddy_heur_choice {
	unsigned int target;
	unsigned int threshold_target;
	bool mostly_zero;
	size_t unit;
	size_t next;
	uint64_t entries;
	uint64_t over_at[BUDDY_HEUR_NR_TARGETS];
	uint64_t device_need;
	uint64_t buddy_need;
	uint64_t pairs;
	uint64_t over;
	double buddy_frac;
	double ratio;
	uint32_t err_ppm;
};

/**
 * struct buddy_heur_result - totals of one decision.
 * @err:		0, or the negative errno value the decision returned.
 * @threshold_ppm:	the Buddy Threshold used.
 * @logical_bytes:	sum of sizes.
 * @device_bytes:	sum of device needs at the final targets.
 * @buddy_bytes:	sum of carve-out needs at the final targets.
 * @pairs:		counted (entry, snapshot) pairs of all allocations.
 * @over:		of those, over the final target.
 * @ratio:		@logical_bytes / @device_bytes (0 without allocations).
 * @buddy_frac:		@over / @pairs (0 without pairs).
 * @steps:		capacity steps taken.
 * @nr_by_target:	allocations per final target, index 0 = 16x, 1 = 4x,
 *			2 = 2x, 3 = 4/3x, 4 = 1x.
 */
struct buddy_heur_result {
	int err;
	uint32_t threshold_ppm;
	uint64_t logical_bytes;
	uint64_t device_bytes;
	uint64_t buddy_bytes;
	uint64_t pairs;
	uint64_t over;
	double ratio;
	double buddy_frac;
	unsigned int steps;
	unsigned int nr_by_target[BUDDY_HEUR_NR_TARGETS];
};

/**
 * struct buddy_heur_cmp - the paper's comparison points (Figs. 7 and 10), on
 * the same snapshots and capacity limits.
 * @ideal_ratio:	the program's compressibility with Buddy's stored sizes:
 *			128 * pairs / sum of buddy_code_bytes() over all pairs;
 *			INFINITY when that sum is 0, 0 without pairs.
 * @naive_target:	the whole-program target of @naive before any capacity
 *			step (@naive.steps says how many followed).
 * @naive:		one target for every allocation: the largest ratio of
 *			1, 4/3, 2, 4 (never 16x) not above @ideal_ratio
 *			(exactly: smallest t in {32, 64, 96, 128} with
 *			sum bytes <= pairs * t; 1x without pairs), stepped
 *			down as a whole while the capacity limits fail.
 * @per_alloc:		buddy_heur_decide() without 16x.
 * @plus16x:		buddy_heur_decide() with 16x (the final design).
 * @best:		no Buddy Threshold: threshold 100% with 16x for
 *			mostly-zero units, so every unit takes the most
 *			aggressive target the mostly-zero rule and the capacity
 *			limits permit (4x, or 16x).  An upper bound of the
 *			ratio over every threshold (without capacity limits).
 * The per-allocation schemes use the caller's threshold (except @best),
 * zero_ppm, capacity limits and pool_labels; @naive uses only the capacity
 * limits; the caller's allow_16x is ignored.
 */
struct buddy_heur_cmp {
	double ideal_ratio;
	unsigned int naive_target;
	struct buddy_heur_result naive;
	struct buddy_heur_result per_alloc;
	struct buddy_heur_result plus16x;
	struct buddy_heur_result best;
};

/**
 * struct buddy_heur_point - one snapshot index of the Fig. 9 series.
 * @pairs:	counted entries at this snapshot index, all allocations that
 *		have it.
 * @over:	of those, over their allocation's target.
 * @frac:	@over / @pairs (0 when @pairs is 0).
 */
struct buddy_heur_point {
	uint64_t pairs;
	uint64_t over;
	double frac;
};

/**
 * buddy_heur_default_params() - the paper's evaluated design.
 * @p: filled with threshold 30%, mostly-zero 90%, unlimited capacity, no
 *     pooling, 16x allowed.
 */
void buddy_heur_default_params(struct buddy_heur_params *p);

/**
 * buddy_heur_decide() - choose a target for every allocation.
 * @p:		parameters.
 * @a:		@n allocations.
 * @n:		number of allocations (0 is fine).
 * @choices:	@n decisions, written in allocation order.
 * @res:	totals, or NULL.
 *
 * Return: 0; -EINVAL for a NULL array with @n > 0, a threshold or zero share
 * above 1000000 ppm, a zero size, or snapshots without @hist; -EOVERFLOW when
 * the entries add up to more than 2^55 (sizes beyond 4 EiB) or the pair
 * counts of all allocations add up to more than 2^64 - 1; -ENOSPC when the capacity limits cannot be met (see the rule
 * above; @choices and @res then describe the state reached).  On -EINVAL and
 * -EOVERFLOW @choices is unspecified and @res only carries @err.
 */
int buddy_heur_decide(const struct buddy_heur_params *p,
		      const struct buddy_heur_alloc *a, size_t n,
		      struct buddy_heur_choice *choices,
		      struct buddy_heur_result *res);

/**
 * buddy_heur_compare() - naive, per-allocation, +16x and best on the same
 * snapshots.
 * @p:		parameters (see struct buddy_heur_cmp for how each is used).
 * @a:		@n allocations.
 * @n:		number of allocations.
 * @choices:	@n decisions of scratch space; on return those of @plus16x.
 * @cmp:	the comparison points.
 *
 * Return: 0, or the first non-zero error of the four schemes in the order
 * naive, per_alloc, best, plus16x (each scheme's own in its .err).
 */
int buddy_heur_compare(const struct buddy_heur_params *p,
		       const struct buddy_heur_alloc *a, size_t n,
		       struct buddy_heur_choice *choices,
		       struct buddy_heur_cmp *cmp);

/**
 * buddy_heur_sweep() - buddy_heur_decide() at several Buddy Thresholds.
 * @p:		parameters; threshold_ppm is replaced by each of @thr_ppm.
 * @a:		@n allocations.
 * @n:		number of allocations.
 * @thr_ppm:	@nr thresholds (BUDDY_HEUR_SWEEP_PPM for Fig. 10).
 * @nr:		number of thresholds.
 * @choices:	@n decisions of scratch space; on return those of the last
 *		threshold.
 * @res:	@nr results, one per threshold.
 *
 * Without capacity limits the ratio never decreases as the threshold grows;
 * with limits the greedy step-down does not guarantee it.
 *
 * Return: 0, or the first non-zero error (each threshold's own in its .err).
 */
int buddy_heur_sweep(const struct buddy_heur_params *p,
		     const struct buddy_heur_alloc *a, size_t n,
		     const uint32_t *thr_ppm, size_t nr,
		     struct buddy_heur_choice *choices,
		     struct buddy_heur_result *res);

/**
 * buddy_heur_series() - the buddy-access fraction in each snapshot (Fig. 9).
 * @a:		@n allocations.
 * @n:		number of allocations.
 * @choices:	their targets (from buddy_heur_decide()).
 * @pts:	@nr_pts points: pts[s] for snapshot index s, summed over the
 *		allocations that have a snapshot s; may be NULL if @nr_pts is 0.
 * @nr_pts:	size of @pts; points beyond the longest series are zeroed.
 *
 * Return: the number of snapshot indexes, the longest @nr_snaps (call with
 * @nr_pts 0 to size @pts).
 */
unsigned int buddy_heur_series(const struct buddy_heur_alloc *a, size_t n,
			       const struct buddy_heur_choice *choices,
			       struct buddy_heur_point *pts,
			       unsigned int nr_pts);

/**
 * buddy_heur_sample_err_ppm() - sampling error of an over-share fraction.
 * @a:			one allocation.
 * @threshold_ppm:	the fraction the estimate is compared with.
 *
 * Half-width of the ~95% interval of a fraction near @threshold_ppm
 * estimated from @a->sampled of @a->population units drawn without
 * replacement: 2 * sqrt(p (1 - p) (1 - n / N) / n) with p the threshold
 * (the error that matters is the one at the decision boundary), n
 * @a->sampled and N @a->population.  The entries of a unit (32 in a 4 KiB
 * block) are counted as one draw, since neighbours are alike.
 *
 * Return: the error in ppm, 0 for an exactly counted allocation (@sampled
 * 0 or >= @population), at most 1000000.
 */
uint32_t buddy_heur_sample_err_ppm(const struct buddy_heur_alloc *a,
				   uint32_t threshold_ppm);

/**
 * buddy_heur_target_index() - position of a target in the ladder.
 * @target:	BUDDY_TARGET_16X ... BUDDY_TARGET_1X.
 *
 * Return: 0 (16x) ... 4 (1x), or -1 for any other value.
 */
int buddy_heur_target_index(unsigned int target);

#endif /* BUDDY_TOOLS_HEURISTIC_H */
