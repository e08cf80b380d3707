// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * heuristic.c - per-allocation target compression ratios from profiling
 * snapshots.  The rules are documented in heuristic.h.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/codec.h"
#include "heuristic.h"

#define NO_NEXT		((size_t)-1)
#define MAX_ENTRIES	(1ULL << 55)	/* so that entries * 128 <= 2^62 */

typedef unsigned __int128 u128;

/* Device bytes per entry of each ladder position, most aggressive first. */
static const unsigned int ladder[BUDDY_HEUR_NR_TARGETS] = {
	BUDDY_TARGET_16X, BUDDY_TARGET_4X, BUDDY_TARGET_2X,
	BUDDY_TARGET_4_3X, BUDDY_TARGET_1X,
};
#define IDX_4X	1
#define IDX_1X	(BUDDY_HEUR_NR_TARGETS - 1)

int buddy_heur_target_index(unsigned int target)
{
	for (int i = 0; i < BUDDY_HEUR_NR_TARGETS; i++)
		if (ladder[i] == target)
			return i;
	return -1;
}

void buddy_heur_default_params(struct buddy_heur_params *p)
{
	memset(p, 0, sizeof(*p));
	p->threshold_ppm = BUDDY_HEUR_DEF_THRESHOLD_PPM;
	p->zero_ppm = BUDDY_HEUR_DEF_ZERO_PPM;
	p->allow_16x = true;
	p->sampling_margin = true;
}

/* floor(sqrt(v)), in integers (no libm in this library). */
static uint64_t isqrt(uint64_t v)
{
	uint64_t r = 0, bit = 1ULL << 62;

	while (bit > v)
		bit >>= 2;
	while (bit) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

uint32_t buddy_heur_sample_err_ppm(const struct buddy_heur_alloc *a,
				   uint32_t threshold_ppm)
{
	uint64_t n = a->sampled, N = a->population, p = threshold_ppm, e;
	u128 v;

	if (!n || n >= N || p > BUDDY_HEUR_PPM)
		return 0;
	/* (2 e)^2 in ppm^2 = 4 p (10^6 - p) (N - n) / (N n) */
	v = (u128)4 * p * (BUDDY_HEUR_PPM - p) * (N - n) / ((u128)N * n);
	e = isqrt(v > UINT64_MAX ? UINT64_MAX : (uint64_t)v);
	return e > BUDDY_HEUR_PPM ? BUDDY_HEUR_PPM : (uint32_t)e;
}

/* a * BUDDY_HEUR_PPM <= ppm * b, exactly. */
static bool within_ppm(uint64_t a, uint32_t ppm, uint64_t b)
{
	return (u128)a * BUDDY_HEUR_PPM <= (u128)ppm * b;
}

static int validate(const struct buddy_heur_params *p,
		    const struct buddy_heur_alloc *a, size_t n,
		    const void *choices)
{
	if (!p || (n && (!a || !choices)))
		return -EINVAL;
	if (p->threshold_ppm > BUDDY_HEUR_PPM || p->zero_ppm > BUDDY_HEUR_PPM)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!a[i].size || (a[i].nr_snaps && !a[i].hist))
			return -EINVAL;
	return 0;
}

/*
 * Per-allocation facts that do not depend on the parameters: entries, own
 * pairs and own over-share pairs at each target.  Checks the overflow limits.
 */
static int prepare(const struct buddy_heur_alloc *a, size_t n,
		   struct buddy_heur_choice *ch)
{
	uint64_t entries = 0, pairs = 0;

	for (size_t i = 0; i < n; i++) {
		struct buddy_heur_choice *c = &ch[i];
		uint64_t tot[BUDDY_CODE_NR] = { 0 };

		memset(c, 0, sizeof(*c));
		c->unit = i;
		c->next = NO_NEXT;
		c->entries = a[i].size / BUDDY_ENTRY_SIZE +
			     !!(a[i].size % BUDDY_ENTRY_SIZE);
		entries += c->entries;
		if (entries > MAX_ENTRIES)
			return -EOVERFLOW;

		for (unsigned int s = 0; s < a[i].nr_snaps; s++)
			for (unsigned int k = 0; k < BUDDY_CODE_NR; k++) {
				uint64_t v = a[i].hist[s][k];

				if (__builtin_add_overflow(c->pairs, v, &c->pairs) ||
				    __builtin_add_overflow(pairs, v, &pairs))
					return -EOVERFLOW;
				tot[k] += v;	/* <= pairs: no overflow */
			}
		for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++)
			for (unsigned int k = 0; k < BUDDY_CODE_NR; k++)
				if (buddy_code_bytes(k) > ladder[t])
					c->over_at[t] += tot[k];
	}
	return 0;
}

/* Link allocations into decision units (see heuristic.h). */
static void build_units(const struct buddy_heur_alloc *a, size_t n,
			struct buddy_heur_choice *ch, bool pool)
{
	if (!pool)
		return;
	for (size_t i = 1; i < n; i++) {
		if (!a[i].label || !a[i].label[0])
			continue;
		/* The latest earlier member is the tail of the unit's chain. */
		for (size_t j = i; j-- > 0;) {
			if (a[j].label && !strcmp(a[j].label, a[i].label)) {
				ch[j].next = i;
				ch[i].unit = ch[j].unit;
				break;
			}
		}
	}
}

struct unit_sum {
	uint64_t entries;
	uint64_t pairs;
	uint64_t over_at[BUDDY_HEUR_NR_TARGETS];
	unsigned int max_snaps;
	u128 err_pairs;			/* sum of err_ppm * pairs */
};

static void unit_sum(const struct buddy_heur_alloc *a,
		     const struct buddy_heur_choice *ch, size_t lead,
		     uint32_t threshold_ppm, struct unit_sum *u)
{
	memset(u, 0, sizeof(*u));
	for (size_t i = lead; i != NO_NEXT; i = ch[i].next) {
		u->entries += ch[i].entries;
		u->pairs += ch[i].pairs;
		u->err_pairs += (u128)buddy_heur_sample_err_ppm(&a[i],
				threshold_ppm) * ch[i].pairs;
		for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++)
			u->over_at[t] += ch[i].over_at[t];
		if (a[i].nr_snaps > u->max_snaps)
			u->max_snaps = a[i].nr_snaps;
	}
}

/* ZERO share >= zero_ppm in every snapshot index with counted entries. */
static bool unit_mostly_zero(const struct buddy_heur_alloc *a,
			     const struct buddy_heur_choice *ch, size_t lead,
			     unsigned int max_snaps, uint32_t zero_ppm)
{
	for (unsigned int s = 0; s < max_snaps; s++) {
		uint64_t zero = 0, tot = 0;

		for (size_t i = lead; i != NO_NEXT; i = ch[i].next) {
			if (s >= a[i].nr_snaps)
				continue;
			zero += a[i].hist[s][BUDDY_CODE_ZERO];
			for (unsigned int k = 0; k < BUDDY_CODE_NR; k++)
				tot += a[i].hist[s][k];
		}
		/* (a snapshot index with tot == 0 never fails this) */
		if ((u128)zero * BUDDY_HEUR_PPM < (u128)zero_ppm * tot)
			return false;
	}
	return true;
}

static void set_unit_target(struct buddy_heur_choice *ch, size_t lead,
			    unsigned int target)
{
	for (size_t i = lead; i != NO_NEXT; i = ch[i].next)
		ch[i].target = target;
}

/* Threshold targets of every unit. */
static void threshold_targets(const struct buddy_heur_params *p,
			      const struct buddy_heur_alloc *a, size_t n,
			      struct buddy_heur_choice *ch)
{
	for (size_t lead = 0; lead < n; lead++) {
		struct unit_sum u;
		unsigned int target = BUDDY_TARGET_1X;
		uint32_t err = 0, thr = p->threshold_ppm;
		bool mz = false;
		int t;

		if (ch[lead].unit != lead)
			continue;
		unit_sum(a, ch, lead, p->threshold_ppm, &u);
		if (u.pairs) {
			if (p->sampling_margin) {
				err = (uint32_t)(u.err_pairs / u.pairs);
				thr = err < thr ? thr - err : 0;
			}
			mz = unit_mostly_zero(a, ch, lead, u.max_snaps,
					      p->zero_ppm);
			for (t = p->allow_16x && mz ? 0 : IDX_4X; t < IDX_1X; t++)
				if (within_ppm(u.over_at[t], thr, u.pairs))
					break;
			target = ladder[t];
		}
		for (size_t i = lead; i != NO_NEXT; i = ch[i].next) {
			ch[i].target = ch[i].threshold_target = target;
			ch[i].mostly_zero = mz;
			ch[i].err_ppm = err;
		}
	}
}

static void need(const struct buddy_heur_choice *ch, size_t n,
		 uint64_t *dev, uint64_t *bud)
{
	*dev = *bud = 0;
	for (size_t i = 0; i < n; i++) {
		*dev += ch[i].entries * ch[i].target;
		*bud += ch[i].entries * (BUDDY_ENTRY_SIZE - ch[i].target);
	}
}

/* The capacity step-down of heuristic.h. */
static int fit_capacity(const struct buddy_heur_params *p,
			const struct buddy_heur_alloc *a, size_t n,
			struct buddy_heur_choice *ch, unsigned int *steps)
{
	uint64_t dev, bud;

	*steps = 0;
	need(ch, n, &dev, &bud);
	if (p->device_bytes && dev > p->device_bytes)
		return -ENOSPC;
	while (p->carveout_bytes && bud > p->carveout_bytes) {
		uint64_t deficit = bud - p->carveout_bytes;
		size_t best = NO_NEXT;
		uint64_t best_freed = 0, best_drop = 0;
		bool best_clears = false;

		for (size_t lead = 0; lead < n; lead++) {
			struct unit_sum u;
			uint64_t freed, drop;
			bool clears, better;
			int t;

			if (ch[lead].unit != lead ||
			    ch[lead].target == BUDDY_TARGET_1X)
				continue;
			t = buddy_heur_target_index(ch[lead].target);
			unit_sum(a, ch, lead, p->threshold_ppm, &u);
			freed = u.entries * (ladder[t + 1] - ladder[t]);
			if (p->device_bytes && dev + freed > p->device_bytes)
				continue;
			drop = u.over_at[t] - u.over_at[t + 1];
			clears = freed >= deficit;

			if (best == NO_NEXT)
				better = true;
			else if (clears != best_clears)
				better = clears;
			else if (freed != best_freed)
				better = clears ? freed < best_freed :
						  freed > best_freed;
			else
				better = drop > best_drop;	/* else lower index */
			if (better) {
				best = lead;
				best_freed = freed;
				best_drop = drop;
				best_clears = clears;
			}
		}
		if (best == NO_NEXT)
			return -ENOSPC;
		set_unit_target(ch, best,
			ladder[buddy_heur_target_index(ch[best].target) + 1]);
		dev += best_freed;
		bud -= best_freed;
		(*steps)++;
	}
	return 0;
}

/* Per-allocation outputs and totals from the targets in @ch. */
static void finish(const struct buddy_heur_params *p,
		   const struct buddy_heur_alloc *a, size_t n,
		   struct buddy_heur_choice *ch, unsigned int steps, int err,
		   struct buddy_heur_result *res)
{
	struct buddy_heur_result r = {
		.err = err,
		.threshold_ppm = p->threshold_ppm,
		.steps = steps,
	};

	for (size_t i = 0; i < n; i++) {
		struct buddy_heur_choice *c = &ch[i];
		int t = buddy_heur_target_index(c->target);

		c->device_need = c->entries * c->target;
		c->buddy_need = c->entries * (BUDDY_ENTRY_SIZE - c->target);
		c->over = c->over_at[t];
		c->buddy_frac = c->pairs ? (double)c->over / c->pairs : 0.0;
		c->ratio = (double)a[i].size / c->device_need;

		r.logical_bytes += a[i].size;
		r.device_bytes += c->device_need;
		r.buddy_bytes += c->buddy_need;
		r.pairs += c->pairs;
		r.over += c->over;
		r.nr_by_target[t]++;
	}
	r.ratio = r.device_bytes ? (double)r.logical_bytes / r.device_bytes : 0.0;
	r.buddy_frac = r.pairs ? (double)r.over / r.pairs : 0.0;
	if (res)
		*res = r;
}

static void fail(int err, struct buddy_heur_result *res)
{
	if (res) {
		memset(res, 0, sizeof(*res));
		res->err = err;
	}
}

int buddy_heur_decide(const struct buddy_heur_params *p,
		      const struct buddy_heur_alloc *a, size_t n,
		      struct buddy_heur_choice *choices,
		      struct buddy_heur_result *res)
{
	unsigned int steps;
	int err;

	err = validate(p, a, n, choices);
	if (!err)
		err = prepare(a, n, choices);
	if (err) {
		fail(err, res);
		return err;
	}
	build_units(a, n, choices, p->pool_labels);
	threshold_targets(p, a, n, choices);
	err = fit_capacity(p, a, n, choices, &steps);
	finish(p, a, n, choices, steps, err, res);
	return err;
}

/* The naive scheme: one whole-program target. */
static int naive(const struct buddy_heur_params *p,
		 const struct buddy_heur_alloc *a, size_t n,
		 struct buddy_heur_choice *ch, struct buddy_heur_cmp *cmp)
{
	uint64_t pairs = 0, dev, bud, freed;
	u128 bytes = 0;
	unsigned int steps = 0;
	int t = IDX_1X, err;

	err = validate(p, a, n, ch);
	if (!err)
		err = prepare(a, n, ch);
	if (err) {
		cmp->ideal_ratio = 0.0;
		cmp->naive_target = BUDDY_TARGET_1X;
		fail(err, &cmp->naive);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		pairs += ch[i].pairs;
		for (unsigned int s = 0; s < a[i].nr_snaps; s++)
			for (unsigned int k = 0; k < BUDDY_CODE_NR; k++)
				bytes += (u128)a[i].hist[s][k] *
					 buddy_code_bytes(k);
	}
	if (!pairs)
		cmp->ideal_ratio = 0.0;
	else if (!bytes)
		cmp->ideal_ratio = INFINITY;
	else
		cmp->ideal_ratio = (double)pairs * BUDDY_ENTRY_SIZE / (double)bytes;

	if (pairs)
		for (t = IDX_4X; t < IDX_1X; t++)
			if (bytes <= (u128)pairs * ladder[t])
				break;
	cmp->naive_target = ladder[t];

	for (;;) {
		for (size_t i = 0; i < n; i++)
			ch[i].target = ch[i].threshold_target = ladder[t];
		need(ch, n, &dev, &bud);
		if (p->device_bytes && dev > p->device_bytes) {
			err = -ENOSPC;
			break;
		}
		if (!p->carveout_bytes || bud <= p->carveout_bytes)
			break;
		/* Step the whole program as one unit. */
		freed = 0;
		for (size_t i = 0; i < n; i++)
			freed += ch[i].entries * (ladder[t + 1] - ladder[t]);
		if (p->device_bytes && dev + freed > p->device_bytes) {
			err = -ENOSPC;
			break;
		}
		t++;
		steps++;
	}
	finish(p, a, n, ch, steps, err, &cmp->naive);
	return err;
}

int buddy_heur_compare(const struct buddy_heur_params *p,
		       const struct buddy_heur_alloc *a, size_t n,
		       struct buddy_heur_choice *choices,
		       struct buddy_heur_cmp *cmp)
{
	struct buddy_heur_params q;
	int first = 0, err;

	if (!p || !cmp)
		return -EINVAL;
	memset(cmp, 0, sizeof(*cmp));

	err = naive(p, a, n, choices, cmp);
	first = err;

	q = *p;
	q.allow_16x = false;
	err = buddy_heur_decide(&q, a, n, choices, &cmp->per_alloc);
	if (!first)
		first = err;

	q.threshold_ppm = BUDDY_HEUR_PPM;
	q.allow_16x = true;
	err = buddy_heur_decide(&q, a, n, choices, &cmp->best);
	if (!first)
		first = err;

	q = *p;
	q.allow_16x = true;
	err = buddy_heur_decide(&q, a, n, choices, &cmp->plus16x);
	if (!first)
		first = err;
	return first;
}

int buddy_heur_sweep(const struct buddy_heur_params *p,
		     const struct buddy_heur_alloc *a, size_t n,
		     const uint32_t *thr_ppm, size_t nr,
		     struct buddy_heur_choice *choices,
		     struct buddy_heur_result *res)
{
	struct buddy_heur_params q;
	int first = 0;

	if (!p || (nr && (!thr_ppm || !res)))
		return -EINVAL;
	q = *p;
	for (size_t k = 0; k < nr; k++) {
		int err;

		q.threshold_ppm = thr_ppm[k];
		err = buddy_heur_decide(&q, a, n, choices, &res[k]);
		if (!first)
			first = err;
	}
	return first;
}

unsigned int buddy_heur_series(const struct buddy_heur_alloc *a, size_t n,
			       const struct buddy_heur_choice *choices,
			       struct buddy_heur_point *pts,
			       unsigned int nr_pts)
{
	unsigned int max = 0;

	for (size_t i = 0; i < n; i++)
		if (a[i].nr_snaps > max)
			max = a[i].nr_snaps;
	if (!pts)
		return max;
	memset(pts, 0, nr_pts * sizeof(*pts));
	for (size_t i = 0; i < n; i++) {
		unsigned int target = choices[i].target;

		for (unsigned int s = 0; s < a[i].nr_snaps && s < nr_pts; s++)
			for (unsigned int k = 0; k < BUDDY_CODE_NR; k++) {
				pts[s].pairs += a[i].hist[s][k];
				if (buddy_code_bytes(k) > target)
					pts[s].over += a[i].hist[s][k];
			}
	}
	for (unsigned int s = 0; s < nr_pts; s++)
		pts[s].frac = pts[s].pairs ?
			      (double)pts[s].over / pts[s].pairs : 0.0;
	return max;
}
