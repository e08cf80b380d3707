// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - the report of `buddyd --once --report`, as a table or as one
 * JSON object (json-c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/libbuddy.h"
#include "tools/common/json.h"
#include "tools/policy/heur_json.h"
#include "tools/policy/profile_file.h"
#include "report.h"

#define MIB	(1024.0 * 1024.0)

static const uint32_t sweep_ppm[BUDDY_HEUR_SWEEP_NR] = BUDDY_HEUR_SWEEP_PPM;
static const unsigned int ladder[BUDDY_HEUR_NR_TARGETS] = {
	BUDDY_TARGET_16X, BUDDY_TARGET_4X, BUDDY_TARGET_2X,
	BUDDY_TARGET_4_3X, BUDDY_TARGET_1X,
};

struct figs {
	struct buddy_heur_cmp cmp;
	int cmp_err;
	struct buddy_heur_result sweep[BUDDY_HEUR_SWEEP_NR];
	int sweep_err;
	struct buddy_heur_point *pts;
	unsigned int npts;
};

/* Every snapshot of the window gets a Fig. 9 point, even without units. */
static int figs_compute(const struct bd_decision *d, unsigned int rows,
			struct figs *g)
{
	struct buddy_heur_choice *scratch = NULL;

	memset(g, 0, sizeof(*g));
	if (d->n) {
		scratch = calloc(d->n, sizeof(*scratch));
		if (!scratch)
			return -ENOMEM;
	}
	g->cmp_err = buddy_heur_compare(&d->params, d->a, d->n, scratch,
					&g->cmp);
	g->sweep_err = buddy_heur_sweep(&d->params, d->a, d->n, sweep_ppm,
					BUDDY_HEUR_SWEEP_NR, scratch, g->sweep);
	free(scratch);
	g->npts = buddy_heur_series(d->a, d->n, d->ch, NULL, 0);
	if (g->npts < rows)
		g->npts = rows;
	if (g->npts) {
		g->pts = calloc(g->npts, sizeof(*g->pts));
		if (!g->pts)
			return -ENOMEM;
		buddy_heur_series(d->a, d->n, d->ch, g->pts, g->npts);
	}
	return 0;
}

/* Targets of the members now: one name, "mixed", or "-". */
static const char *now_name(unsigned int mask)
{
	int only = -1;

	for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++) {
		if (!(mask & (1u << t)))
			continue;
		if (only >= 0)
			return "mixed";
		only = t;
	}
	return only < 0 ? "-" : buddy_target_name(ladder[only]);
}

static double measured(const struct bd_key *k)
{
	uint64_t acc = k->counters.entry_reads + k->counters.entry_writes;

	return acc ? (double)k->counters.buddy_accesses / acc : -1.0;
}

static void fmt_ratio(char *buf, size_t len, double r)
{
	if (isinf(r))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.2fx", r);
}

/* ---- the table ----------------------------------------------------------- */

static void text_result(FILE *f, const char *name, const char *target,
			const struct buddy_heur_result *res)
{
	char ratio[16];

	fmt_ratio(ratio, sizeof(ratio), res->ratio);
	fprintf(f, "%-34s %-6s %8s %9.2f%%%s%s\n", name, target, ratio,
		100.0 * res->buddy_frac, res->err ? "  " : "",
		buddy_heur_err_name(res->err));
}

int bd_report_text(FILE *f, const struct bd_report *r)
{
	const struct bd_decision *d = r->d;
	const struct bd_window *win = r->win;
	char thr[16], mz[16], iv[32], ratio[16], esc[BUDDY_LABEL_ESC_MAX];
	struct figs g;

	if (figs_compute(d, bd_window_rows(win), &g))
		return -ENOMEM;
	bd_format_percent(r->conf->threshold_ppm, thr, sizeof(thr));
	bd_format_percent(r->conf->zero_ppm, mz, sizeof(mz));
	bd_format_timespan(r->interval_us, iv, sizeof(iv));

	fprintf(f, "buddyd report: %s, %u snapshots %s apart, Buddy Threshold %s, mostly-zero %s, mode %s\n",
		r->conf->device, bd_window_rows(win), iv, thr, mz,
		bd_mode_name(r->conf->mode));
	fprintf(f, "pools: device %.2f MiB (%.2f used), carve-out %.2f MiB (%.2f used); the heuristic may use %.2f / %.2f MiB\n",
		r->info->device_bytes / MIB, r->info->device_used / MIB,
		r->info->buddy_bytes / MIB, r->info->buddy_used / MIB,
		d->params.device_bytes / MIB, d->params.carveout_bytes / MIB);
	fprintf(f, "units: %zu decided (one per uid and label; an unlabelled allocation alone), %zu pending (not live in all %u snapshots)\n\n",
		d->n, d->pending, win->w);

	fprintf(f, "Decisions\n");
	fprintf(f, "%6s %-20s %6s %9s %-5s %-5s %-6s %-6s %-4s %8s %9s %9s\n",
		"uid", "label", "allocs", "size MiB", "codec", "now", "target",
		"thresh", "zero", "ratio", "exp-acc", "meas-acc");
	for (size_t u = 0; u < d->n; u++) {
		const struct bd_key *k = &win->keys[d->key[u]];
		const struct buddy_heur_choice *c = &d->ch[u];
		char lab[BUDDY_LABEL_ESC_MAX + 32], meas[16];
		double m = measured(k);

		if (k->label[0]) {
			buddy_label_escape(k->label, esc, sizeof(esc), false);
			snprintf(lab, sizeof(lab), "%s", esc);
		} else {
			snprintf(lab, sizeof(lab), "(id %llu)",
				 (unsigned long long)k->id);
		}
		if (m < 0)
			snprintf(meas, sizeof(meas), "-");
		else
			snprintf(meas, sizeof(meas), "%.2f%%", 100.0 * m);
		fmt_ratio(ratio, sizeof(ratio), c->ratio);
		fprintf(f, "%6u %-20s %6u %9.2f %-5s %-5s %-6s %-6s %-4s %8s %8.2f%% %9s\n",
			k->uid, lab, k->cur_members, k->cur_size / MIB,
			buddy_codec_name(bd_key_codec(k)),
			now_name(k->target_mask), buddy_target_name(c->target),
			buddy_target_name(c->threshold_target),
			c->mostly_zero ? "yes" : "no", ratio,
			100.0 * c->buddy_frac, meas);
	}
	fmt_ratio(ratio, sizeof(ratio), d->res.ratio);
	fprintf(f, "%6s %-20s %6s %9.2f %-5s %-5s %-6s %-6s %-4s %8s %8.2f%%%s%s\n",
		"", "total", "", d->res.logical_bytes / MIB, "", "", "", "", "",
		ratio, 100.0 * d->res.buddy_frac, d->err ? " " : "",
		buddy_heur_err_name(d->err));
	fprintf(f, "now = targets of the live members; thresh = the Buddy Threshold's choice before capacity steps;\n"
		   "zero = mostly zero in every snapshot; ratio = logical / device bytes at the target;\n"
		   "exp-acc = expected buddy-access fraction (entries over the target, all snapshots);\n"
		   "meas-acc = buddy_accesses / (entry_reads + entry_writes) since allocation\n\n");

	fprintf(f, "Fig. 7: design optimizations, applied one after the other\n");
	fprintf(f, "%-34s %-6s %8s %10s\n", "design", "target", "ratio",
		"buddy-acc");
	text_result(f, "naive (one target for the program)",
		    buddy_target_name(g.cmp.naive_target), &g.cmp.naive);
	text_result(f, "per-allocation targets", "-", &g.cmp.per_alloc);
	text_result(f, "+ 16x for mostly-zero (final)", "-", &g.cmp.plus16x);
	fmt_ratio(ratio, sizeof(ratio), g.cmp.ideal_ratio);
	fprintf(f, "ideal compressibility (stored sizes, no targets): %s\n\n",
		g.cmp.ideal_ratio ? ratio : "-");

	fprintf(f, "Fig. 10: Buddy Threshold sweep (16x for mostly-zero units)\n");
	fprintf(f, "%-12s %8s %10s %5s %5s %5s %5s %5s %6s\n", "threshold",
		"ratio", "buddy-acc", "16x", "4x", "2x", "4/3x", "1x", "steps");
	for (int i = 0; i <= BUDDY_HEUR_SWEEP_NR; i++) {
		const struct buddy_heur_result *s =
			i < BUDDY_HEUR_SWEEP_NR ? &g.sweep[i] : &g.cmp.best;
		char name[24];

		if (i < BUDDY_HEUR_SWEEP_NR) {
			bd_format_percent(sweep_ppm[i], thr, sizeof(thr));
			snprintf(name, sizeof(name), "%s%s", thr,
				 sweep_ppm[i] == r->conf->threshold_ppm ?
				 " *" : "");
		} else {
			snprintf(name, sizeof(name), "best (none)");
		}
		fmt_ratio(ratio, sizeof(ratio), s->ratio);
		fprintf(f, "%-12s %8s %9.2f%% %5u %5u %5u %5u %5u %6u%s%s\n",
			name, ratio, 100.0 * s->buddy_frac, s->nr_by_target[0],
			s->nr_by_target[1], s->nr_by_target[2],
			s->nr_by_target[3], s->nr_by_target[4], s->steps,
			s->err ? " " : "", buddy_heur_err_name(s->err));
	}
	fprintf(f, "(* = the configured threshold; columns 16x..1x count units per target)\n\n");

	fprintf(f, "Fig. 9: buddy-access fraction per snapshot at the chosen targets\n");
	fprintf(f, "%8s %9s %12s %10s %10s\n", "snapshot", "t (s)", "entries",
		"over", "buddy-acc");
	for (unsigned int s = 0; s < g.npts; s++)
		fprintf(f, "%8u %9.3f %12llu %10llu %9.2f%%\n", s + 1,
			(bd_window_time(win, s) - bd_window_time(win, 0)) / 1e6,
			(unsigned long long)g.pts[s].pairs,
			(unsigned long long)g.pts[s].over, 100.0 * g.pts[s].frac);
	free(g.pts);
	return 0;
}

/* ---- JSON ------------------------------------------------------------- */

/* A heuristic result, with buddyd's keys of the previous release. */
static struct json_object *jresult(const struct buddy_heur_result *res)
{
	return buddy_heur_result_json(res, BUDDY_HEUR_JSON_BUDDYD);
}

int bd_report_json(FILE *f, const struct bd_report *r)
{
	const struct bd_decision *d = r->d;
	const struct bd_window *win = r->win;
	struct json_object *root, *o, *arr;
	struct figs g;

	if (figs_compute(d, bd_window_rows(win), &g))
		return -ENOMEM;
	root = json_object_new_object();

	o = json_object_new_object();
	json_object_object_add(o, "device", json_object_new_string(r->conf->device));
	json_object_object_add(o, "mode",
			       json_object_new_string(bd_mode_name(r->conf->mode)));
	json_object_object_add(o, "threshold_pct",
			       bjson_num(r->conf->threshold_ppm / 1e4, "%.4g"));
	json_object_object_add(o, "mostly_zero_pct",
			       bjson_num(r->conf->zero_ppm / 1e4, "%.4g"));
	json_object_object_add(o, "window", json_object_new_int(win->w));
	json_object_object_add(o, "snapshots",
			       json_object_new_int(bd_window_rows(win)));
	json_object_object_add(o, "interval_ms",
			       bjson_num(r->interval_us / 1e3, "%.3f"));
	json_object_object_add(o, "device_bytes",
			       json_object_new_int64(r->info->device_bytes));
	json_object_object_add(o, "device_used",
			       json_object_new_int64(r->info->device_used));
	json_object_object_add(o, "buddy_bytes",
			       json_object_new_int64(r->info->buddy_bytes));
	json_object_object_add(o, "buddy_used",
			       json_object_new_int64(r->info->buddy_used));
	json_object_object_add(o, "heuristic_device_bytes",
			       json_object_new_int64(d->params.device_bytes));
	json_object_object_add(o, "heuristic_carveout_bytes",
			       json_object_new_int64(d->params.carveout_bytes));
	json_object_object_add(o, "pending_units",
			       json_object_new_int64(d->pending));
	json_object_object_add(root, "params", o);

	arr = json_object_new_array();
	for (size_t u = 0; u < d->n; u++) {
		const struct bd_key *k = &win->keys[d->key[u]];
		const struct buddy_heur_choice *c = &d->ch[u];
		struct json_object *ju = json_object_new_object();
		struct json_object *over = json_object_new_object();
		struct json_object *now = json_object_new_array();
		double m = measured(k);

		json_object_object_add(ju, "uid", json_object_new_int64(k->uid));
		json_object_object_add(ju, "label",
				       json_object_new_string(k->label));
		json_object_object_add(ju, "id", k->id ?
				       json_object_new_int64(k->id) : NULL);
		json_object_object_add(ju, "allocations",
				       json_object_new_int(k->cur_members));
		json_object_object_add(ju, "size",
				       json_object_new_int64(k->cur_size));
		json_object_object_add(ju, "codec", json_object_new_string(
				       buddy_codec_name(bd_key_codec(k))));
		for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++)
			if (k->target_mask & (1u << t))
				json_object_array_add(now, json_object_new_string(
						buddy_target_name(ladder[t])));
		json_object_object_add(ju, "now", now);
		json_object_object_add(ju, "target", json_object_new_string(
				       buddy_target_name(c->target)));
		json_object_object_add(ju, "threshold_target",
				       json_object_new_string(
				       buddy_target_name(c->threshold_target)));
		json_object_object_add(ju, "mostly_zero",
				       json_object_new_boolean(c->mostly_zero));
		json_object_object_add(ju, "ratio", bjson_num(c->ratio, "%.4f"));
		json_object_object_add(ju, "buddy_frac",
				       bjson_num(c->buddy_frac, "%.6f"));
		json_object_object_add(ju, "pairs", json_object_new_int64(c->pairs));
		for (int t = 0; t < BUDDY_HEUR_NR_TARGETS; t++)
			json_object_object_add(over, buddy_target_name(ladder[t]),
				bjson_num(c->pairs ? (double)c->over_at[t] / c->pairs : 0,
				     "%.6f"));
		json_object_object_add(ju, "over_frac", over);
		json_object_object_add(ju, "measured_buddy_frac",
				       m < 0 ? NULL : bjson_num(m, "%.6f"));
		json_object_array_add(arr, ju);
	}
	json_object_object_add(root, "units", arr);
	json_object_object_add(root, "decision", jresult(&d->res));

	o = json_object_new_object();
	json_object_object_add(o, "ideal_ratio", g.cmp.ideal_ratio ?
			       bjson_num(g.cmp.ideal_ratio, "%.4f") : NULL);
	json_object_object_add(o, "naive_target", json_object_new_string(
			       buddy_target_name(g.cmp.naive_target)));
	json_object_object_add(o, "naive", jresult(&g.cmp.naive));
	json_object_object_add(o, "per_allocation", jresult(&g.cmp.per_alloc));
	json_object_object_add(o, "plus_16x", jresult(&g.cmp.plus16x));
	json_object_object_add(root, "fig7", o);

	arr = json_object_new_array();
	for (int i = 0; i <= BUDDY_HEUR_SWEEP_NR; i++) {
		o = jresult(i < BUDDY_HEUR_SWEEP_NR ? &g.sweep[i] : &g.cmp.best);
		json_object_object_add(o, "threshold_pct",
				       i < BUDDY_HEUR_SWEEP_NR ?
				       bjson_num(sweep_ppm[i] / 1e4, "%.4g") : NULL);
		json_object_object_add(o, "best", json_object_new_boolean(
				       i == BUDDY_HEUR_SWEEP_NR));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "fig10", arr);

	arr = json_object_new_array();
	for (unsigned int s = 0; s < g.npts; s++) {
		o = json_object_new_object();
		json_object_object_add(o, "snapshot", json_object_new_int(s + 1));
		json_object_object_add(o, "t_ms", bjson_num((bd_window_time(win, s) -
					bd_window_time(win, 0)) / 1e3, "%.3f"));
		json_object_object_add(o, "entries",
				       json_object_new_int64(g.pts[s].pairs));
		json_object_object_add(o, "over",
				       json_object_new_int64(g.pts[s].over));
		json_object_object_add(o, "buddy_frac",
				       bjson_num(g.pts[s].frac, "%.6f"));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "fig9", arr);

	bjson_write(f, root, BJSON_PRETTY);
	json_object_put(root);
	free(g.pts);
	return 0;
}
