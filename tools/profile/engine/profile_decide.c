// SPDX-License-Identifier: GPL-2.0
/*
 * profile_decide.c - from the classified snapshots of one process (or of
 * all) to the decisions and the paper's figures a report prints: each
 * allocation its own unit, per codec and with each allocation's best one,
 * and per label for the profile file (Documentation/profiler.rst,
 * "The report").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile_priv.h"

double prof_ratio_of(uint64_t logical, uint64_t stored)
{
	return stored ? (double)logical / stored : INFINITY;
}

static int pick_codec(const struct prof_rep *rp, const unsigned int *tg,
		      const uint64_t *over)
{
	int best = rp->main, c;

	for (c = 0; c < PROF_NC; c++) {
		if (tg[c] < tg[best] || (tg[c] == tg[best] && over[c] < over[best]))
			best = c;
	}
	return best;
}

/*
 * Each label's codec picked by the targets it gets alone can pool worse
 * than the main codec for every label: the profile file then takes the
 * main codec throughout, never less than its pooled figure.  @ch2 holds
 * the choices of the result kept.
 */
static void keep_main_if_better(struct prof_rep *rp,
				const struct buddy_heur_params *p,
				struct buddy_heur_choice *ch2, int *lab_codec)
{
	struct buddy_heur_result res;
	size_t i, l;

	buddy_heur_decide(p, rp->ha[rp->main], rp->n, ch2, &res);
	if (res.ratio > rp->per_label.ratio) {
		for (l = 0; l < rp->r->nlabels; l++)
			lab_codec[l] = rp->main;
		for (i = 0; i < rp->n; i++)
			rp->mix[i] = rp->ha[rp->main][i];
		rp->per_label = res;
	} else {
		buddy_heur_decide(p, rp->mix, rp->n, ch2, &rp->per_label);
	}
}

/*
 * The labels whose allocations the final design (rp->ch) gives different
 * targets: a profile file names one target per label, which the least
 * compressible of them must fit, so it delivers less than the final
 * design's figure; the report says so.
 */
static void mixed_labels(struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	unsigned int *lo = calloc(r->nlabels + 1, sizeof(*lo));
	unsigned int *hi = calloc(r->nlabels + 1, sizeof(*hi));
	size_t i, l;

	rp->nmixed = 0;
	rp->mixed_label = -1;
	if (!lo || !hi)
		goto out;
	for (i = 0; i < rp->n; i++) {
		int lab = r->allocs[rp->idx[i]].label;
		unsigned int t = rp->ch[i].target;

		if (!hi[lab] || t < lo[lab])
			lo[lab] = t;
		if (t > hi[lab])
			hi[lab] = t;
	}
	for (l = 0; l < r->nlabels; l++) {
		if (lo[l] == hi[l])
			continue;
		rp->nmixed++;
		if (rp->mixed_label < 0 || r->labels[l].bytes_total >
		    r->labels[rp->mixed_label].bytes_total) {
			rp->mixed_label = l;
			rp->mixed_lo = lo[l];
			rp->mixed_hi = hi[l];
		}
	}
out:
	free(lo);
	free(hi);
}

static int decide(struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	struct buddy_heur_params p;
	struct buddy_heur_choice *ch2;
	static const uint32_t thr[] = BUDDY_HEUR_SWEEP_PPM;
	uint64_t entries = 0;
	size_t i, l;
	unsigned int c;
	int *lab_codec;

	buddy_heur_default_params(&rp->p);
	rp->p.threshold_ppm = r->o->threshold_ppm;
	rp->p.zero_ppm = r->o->zero_ppm;
	for (i = 0; i < rp->n; i++)
		entries += (r->allocs[rp->idx[i]].size + BUDDY_ENTRY_BYTES - 1) /
			   BUDDY_ENTRY_BYTES;
	if (r->o->max_ratio > 0) {
		/* carve-out C forces device >= 128 E - C = 128 E / R */
		double cb = entries * 128.0 * (1 - 1 / r->o->max_ratio);

		rp->p.carveout_bytes = cb < 1 ? 1 : (uint64_t)cb;
	}
	p = rp->p;
	rp->ch = calloc(rp->n + 1, sizeof(*rp->ch));
	ch2 = calloc(rp->n + 1, sizeof(*ch2));
	rp->mix = calloc(rp->n + 1, sizeof(*rp->mix));
	rp->series = calloc(rp->nsnap + 1, sizeof(*rp->series));
	lab_codec = calloc(r->nlabels + 1, sizeof(int));
	if (!rp->ch || !ch2 || !rp->mix || !rp->series || !lab_codec)
		return -ENOMEM;

	buddy_heur_sweep(&p, rp->ha[rp->main], rp->n, thr, BUDDY_HEUR_SWEEP_NR,
			 rp->ch, rp->sweep);
	buddy_heur_compare(&p, rp->ha[rp->main], rp->n, rp->ch, &rp->cmp);
	/* rp->ch: the final design's (+16x) choices */
	buddy_heur_series(rp->ha[rp->main], rp->n, rp->ch, rp->series,
			  rp->nsnap);

	/* Best codec per allocation, each allocation its own unit. */
	{
		unsigned int (*tg)[PROF_NC] = calloc(rp->n + 1, sizeof(*tg));
		uint64_t (*ov)[PROF_NC] = calloc(rp->n + 1, sizeof(*ov));

		if (!tg || !ov)
			return -ENOMEM;
		for (c = 0; c < PROF_NC; c++) {
			buddy_heur_decide(&p, rp->ha[c], rp->n, ch2,
					  &rp->final_codec[c]);
			for (i = 0; i < rp->n; i++) {
				tg[i][c] = ch2[i].target;
				ov[i][c] = ch2[i].over;
			}
		}
		for (i = 0; i < rp->n; i++)
			rp->mix[i] = rp->ha[pick_codec(rp, tg[i], ov[i])][i];
		buddy_heur_decide(&p, rp->mix, rp->n, ch2, &rp->best_alloc);

		/* Per label (pooled), for the profile file. */
		p.pool_labels = true;
		{
			unsigned int (*ltg)[PROF_NC] = calloc(r->nlabels + 1, sizeof(*ltg));
			uint64_t (*lov)[PROF_NC] = calloc(r->nlabels + 1, sizeof(*lov));

			if (!ltg || !lov)
				return -ENOMEM;
			for (c = 0; c < PROF_NC; c++) {
				struct buddy_heur_result res;

				buddy_heur_decide(&p, rp->ha[c], rp->n, ch2, &res);
				for (l = 0; l < r->nlabels; l++)
					ltg[l][c] = BUDDY_TARGET_1X;
				for (i = 0; i < rp->n; i++) {
					int lab = r->allocs[rp->idx[i]].label;

					ltg[lab][c] = ch2[i].target;
					lov[lab][c] += ch2[i].over;
				}
			}
			for (l = 0; l < r->nlabels; l++)
				lab_codec[l] = pick_codec(rp, ltg[l], lov[l]);
			free(ltg);
			free(lov);
		}
		for (i = 0; i < rp->n; i++)
			rp->mix[i] = rp->ha[lab_codec[r->allocs[rp->idx[i]].label]][i];
		buddy_heur_decide(&p, rp->mix, rp->n, ch2, &rp->per_label);
		keep_main_if_better(rp, &p, ch2, lab_codec);
		mixed_labels(rp);
		for (l = 0; l < r->nlabels; l++) {
			r->labels[l].codec = lab_codec[l];
			r->labels[l].target = BUDDY_TARGET_1X;
		}
		{
			uint64_t *lp = calloc(r->nlabels + 1, sizeof(uint64_t));
			uint64_t *lo = calloc(r->nlabels + 1, sizeof(uint64_t));

			if (!lp || !lo)
				return -ENOMEM;
			for (i = 0; i < rp->n; i++) {
				int lab = r->allocs[rp->idx[i]].label;

				r->labels[lab].target = ch2[i].target;
				r->labels[lab].buddy_frac_err = ch2[i].err_ppm /
					(double)BUDDY_HEUR_PPM;
				lp[lab] += ch2[i].pairs;
				lo[lab] += ch2[i].over;
			}
			for (l = 0; l < r->nlabels; l++)
				r->labels[l].buddy_frac = lp[l] ?
					(double)lo[l] / lp[l] : 0;
			free(lp);
			free(lo);
		}
		free(tg);
		free(ov);
	}
	free(ch2);
	free(lab_codec);
	return 0;
}

static int cmp_label_bytes(const void *a, const void *b, void *arg)
{
	const struct prof_run *r = arg;
	const struct prof_label *x = &r->labels[*(const unsigned int *)a];
	const struct prof_label *y = &r->labels[*(const unsigned int *)b];

	if (x->bytes_total != y->bytes_total)
		return x->bytes_total > y->bytes_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int build(struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	unsigned int s, c, k = 0;
	size_t i, j;

	rp->main = r->o->codec;
	rp->final_of = calloc(r->nsnaps + 1, sizeof(int));
	rp->snap_of = calloc(r->nsnaps + 1, sizeof(unsigned int));
	if (!rp->final_of || !rp->snap_of)
		return -ENOMEM;
	for (s = 0; s < r->nsnaps; s++) {
		bool kept = prof_snap_kept(r, s, rp->proc);

		rp->final_of[s] = kept ? (int)k : -1;
		if (kept)
			rp->snap_of[k++] = s;
	}
	rp->nsnap = k;

	rp->idx = calloc(r->nallocs + 1, sizeof(size_t));
	if (!rp->idx)
		return -ENOMEM;
	for (i = 0; i < r->nallocs; i++) {
		struct prof_alloc *a = &r->allocs[i];

		for (j = 0; j < a->nobs; j++)
			if (rp->final_of[a->obs[j].snap] >= 0)
				break;
		if (rp->proc >= 0 && a->proc != rp->proc)
			continue;
		if (j < a->nobs && (rp->all || !r->labels[a->label].excluded))
			rp->idx[rp->n++] = i;
	}
	for (c = 0; c < PROF_NC; c++) {
		rp->rows[c] = calloc((rp->n * (size_t)rp->nsnap) + 1,
				     sizeof(*rp->rows[c]));
		rp->ha[c] = calloc(rp->n + 1, sizeof(*rp->ha[c]));
		if (!rp->rows[c] || !rp->ha[c])
			return -ENOMEM;
	}
	rp->snap_pairs = calloc(rp->nsnap + 1, sizeof(uint64_t));
	rp->snap_fig3 = calloc(rp->nsnap + 1, sizeof(uint64_t));
	rp->lab_bytes = calloc((size_t)r->nlabels * rp->nsnap + 1, sizeof(uint64_t));
	rp->lab_pairs = calloc((size_t)r->nlabels * rp->nsnap + 1, sizeof(uint64_t));
	rp->lab_fig3 = calloc((size_t)r->nlabels * rp->nsnap + 1, sizeof(uint64_t));
	rp->lab_hist = calloc(r->nlabels + 1, sizeof(*rp->lab_hist));
	if (!rp->snap_pairs || !rp->snap_fig3 || !rp->lab_bytes ||
	    !rp->lab_pairs || !rp->lab_fig3 || !rp->lab_hist)
		return -ENOMEM;
	for (i = 0; i < r->nlabels; i++) {
		r->labels[i].nallocs = 0;
		r->labels[i].bytes_total = 0;
	}

	for (i = 0; i < rp->n; i++) {
		struct prof_alloc *a = &r->allocs[rp->idx[i]];
		struct prof_label *lab = &r->labels[a->label];
		unsigned int last = 0;
		uint64_t best = UINT64_MAX, f3[PROF_NC] = { 0 };

		uint64_t bl = 0, bl_read = 0;

		lab->nallocs++;
		for (j = 0; j < a->nobs; j++) {
			struct prof_obs *ob = &a->obs[j];
			int fs = rp->final_of[ob->snap];
			uint64_t pairs = 0;
			size_t li;

			if (fs < 0)
				continue;
			bl += ob->blocks;
			bl_read += ob->blocks_read;
			for (c = 0; c < PROF_NC; c++) {
				unsigned int q;

				for (q = 0; q < BUDDY_CODE_NR; q++)
					rp->lab_hist[a->label][c][q] += ob->hist[c][q];
				memcpy(rp->rows[c][i * rp->nsnap + fs], ob->hist[c],
				       sizeof(ob->hist[c]));
				f3[c] += ob->fig3[c];
				rp->fig3[c] += ob->fig3[c];
			}
			for (c = 0; c < BUDDY_CODE_NR; c++)
				pairs += ob->hist[rp->main][c];
			rp->pairs += pairs;
			rp->snap_pairs[fs] += pairs;
			rp->snap_fig3[fs] += ob->fig3[rp->main];
			li = (size_t)a->label * rp->nsnap + fs;
			rp->lab_bytes[li] += a->size;
			rp->lab_pairs[li] += pairs;
			rp->lab_fig3[li] += ob->fig3[rp->main];
			lab->bytes_total += a->size;
			if ((unsigned int)fs + 1 > last)
				last = fs + 1;
		}
		for (c = 0; c < PROF_NC; c++)
			if (f3[c] < best)
				best = f3[c];
		rp->fig3_best += best;
		for (c = 0; c < PROF_NC; c++) {
			rp->ha[c][i].label = lab->name;
			rp->ha[c][i].size = a->size;
			rp->ha[c][i].nr_snaps = last;
			rp->ha[c][i].hist = (const uint64_t (*)[BUDDY_CODE_NR])
					    &rp->rows[c][i * rp->nsnap];
			/* sampled: the heuristic's margin, the error shown */
			rp->ha[c][i].sampled = bl_read < bl ? bl_read : 0;
			rp->ha[c][i].population = bl;
		}
	}
	rp->order = calloc(r->nlabels + 1, sizeof(unsigned int));
	if (!rp->order)
		return -ENOMEM;
	for (i = 0; i < r->nlabels; i++)
		if (r->labels[i].nallocs)
			rp->order[rp->nlab_used++] = i;
		else if (r->labels[i].excluded)
			rp->nexcluded++;
	qsort_r(rp->order, rp->nlab_used, sizeof(unsigned int), cmp_label_bytes, r);
	return decide(rp);
}

void prof_free_rep(struct prof_rep *rp)
{
	unsigned int c;

	free(rp->final_of);
	free(rp->snap_of);
	free(rp->idx);
	for (c = 0; c < PROF_NC; c++) {
		free(rp->rows[c]);
		free(rp->ha[c]);
	}
	free(rp->mix);
	free(rp->ch);
	free(rp->series);
	free(rp->snap_pairs);
	free(rp->snap_fig3);
	free(rp->lab_bytes);
	free(rp->lab_pairs);
	free(rp->lab_fig3);
	free(rp->lab_hist);
	free(rp->order);
}

/*
 * The report of process @proc (-1: of all processes) in @rp: with
 * --exclude also the figures with the excluded allocations.  0 or -errno;
 * prof_free_rep() it either way.  Each build sets the labels' decisions
 * (run->labels) for its own allocations: use one before building another.
 */
int prof_rep_make(struct prof_run *r, int proc, struct prof_rep *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->r = r;
	rp->proc = proc;
	if (r->o->nexclude) {
		/* The figures with every allocation, excluded ones too. */
		struct prof_rep all = { .r = r, .proc = proc, .all = true };
		int err = build(&all);

		if (!err) {
			size_t l;

			for (l = 0; l < r->nlabels; l++) {
				rp->all_bytes += r->labels[l].bytes_total;
				if (r->labels[l].excluded)
					rp->excluded_bytes += r->labels[l].bytes_total;
			}
			rp->with_all = true;
			rp->all_pairs = all.pairs;
			rp->all_fig3 = all.fig3[all.main];
			rp->all_final = all.cmp.plus16x;
			rp->all_naive = all.cmp.naive;
		}
		prof_free_rep(&all);
	}
	return build(rp);
}
