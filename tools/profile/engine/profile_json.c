// SPDX-License-Identifier: GPL-2.0
/*
 * profile_json.c - the profile report as JSON, the profile file (-p) and
 * the dump index (-k); prof_report() writes what the options ask for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <json-c/json.h>

#include "lib/libbuddy.h"
#include "profile_priv.h"
#include "tools/common/json.h"
#include "tools/common/replace_file.h"
#include "tools/policy/heur_json.h"
#include "tools/policy/profile_file.h"

/* ---- JSON ------------------------------------------------------------------------- */

/* JSON strings made valid UTF-8; exits without memory. */
static struct json_object *jstring(const char *s)
{
	return bjson_string_or_exit(s, "buddyctl: profile");
}

/* A heuristic result, with the profiler's keys of the previous release. */
static struct json_object *jresult(const struct buddy_heur_result *res)
{
	return buddy_heur_result_json(res, BUDDY_HEUR_JSON_PROFILER);
}

/* The interposer's counters of @c, of the process that has them. */
static void json_counters(struct json_object *o, const struct bprof_proc *c)
{
	json_object_object_add(o, "allocations", json_object_new_int64(c->nr_alloc));
	json_object_object_add(o, "frees", json_object_new_int64(c->nr_free));
	json_object_object_add(o, "dropped", json_object_new_int64(c->nr_dropped));
	json_object_object_add(o, "short_stacks", json_object_new_int64(c->nr_unwind_short));
	json_object_object_add(o, "exec_resets", json_object_new_int64(c->nr_exec_reset));
	json_object_object_add(o, "partial_unmaps", json_object_new_int64(c->nr_partial_unmap));
}

/* @rp's labels, in the report's order, into @root's "labels". */
static void json_labels(struct json_object *root, struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	struct json_object *arr, *x;
	unsigned int s, c, k;
	size_t i;

	json_object_object_add(root, "nr_labels", json_object_new_int64(rp->nlab_used));
	arr = json_object_new_array();
	for (i = 0; i < rp->nlab_used; i++) {
		unsigned int li = rp->order[i];
		struct prof_label *l = &r->labels[li];
		struct json_object *st = json_object_new_array();
		struct json_object *by = json_object_new_array();
		struct json_object *ra = json_object_new_array();
		char sym[256];

		x = json_object_new_object();
		json_object_object_add(x, "label", json_object_new_string(l->name));
		json_object_object_add(x, "size", json_object_new_int64(l->size));
		json_object_object_add(x, "kind", json_object_new_string(l->kind == BPROF_KIND_MMAP ? "mmap" : "heap"));
		json_object_object_add(x, "allocations", json_object_new_int(l->nallocs));
		json_object_object_add(x, "target", json_object_new_string(buddy_target_name(l->target)));
		json_object_object_add(x, "codec", json_object_new_string(prof_codecs[l->codec]->name));
		json_object_object_add(x, "buddy_frac", bjson_num(l->buddy_frac, "%.6f"));
		json_object_object_add(x, "buddy_frac_err", bjson_num(l->buddy_frac_err, "%.6f"));
		for (k = 0; k < l->nframes; k++) {
			prof_symbolize(r, &l->frames[k], sym, sizeof(sym));
			json_object_array_add(st, json_object_new_string(sym));
		}
		json_object_object_add(x, "stack", st);
		json_object_object_add(x, "site_frame",
			json_object_new_int(prof_native_site(r, l, sym, sizeof(sym))));
		json_object_object_add(x, "native_site", json_object_new_string(sym));
		prof_site(r, l, sym, sizeof(sym));
		json_object_object_add(x, "site", json_object_new_string(sym));
		for (s = 0; s < rp->nsnap; s++) {
			size_t q = (size_t)li * rp->nsnap + s;

			json_object_array_add(by, json_object_new_int64(rp->lab_bytes[q]));
			json_object_array_add(ra, rp->lab_pairs[q] ?
				bjson_num(prof_ratio_of(128 * rp->lab_pairs[q], rp->lab_fig3[q]), "%.4f") :
				NULL);
		}
		{
			static const char *const hk[BUDDY_CODE_NR] = {
				"zero", "c8", "c32", "c64", "c96", "raw",
			};
			struct json_object *hs = json_object_new_object();

			for (c = 0; c < PROF_NC; c++) {
				struct json_object *hc = json_object_new_object();
				unsigned int q;

				for (q = 0; q < BUDDY_CODE_NR; q++)
					json_object_object_add(hc, hk[q], json_object_new_int64(
						rp->lab_hist[li][c][q]));
				json_object_object_add(hs, prof_codecs[c]->name, hc);
			}
			json_object_object_add(x, "histogram", hs);
		}
		json_object_object_add(x, "bytes_per_snapshot", by);
		json_object_object_add(x, "fig3_per_snapshot", ra);
		json_object_array_add(arr, x);
	}
	json_object_object_add(root, "labels", arr);
}

/*
 * The snapshots, figures and labels of @rp into @root: the report's top
 * level for the main process, and each entry of "processes".
 */
static void json_figures(struct json_object *root, struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	struct json_object *o, *arr, *x;
	static const char *const thr_names[] = { "10", "20", "30", "40" };
	unsigned int s, c, k;

	arr = json_object_new_array();
	for (s = 0; s < r->nsnaps; s++) {
		struct prof_snap *sn = &r->snaps[s];
		struct prof_psnap pp = prof_snap_proc(sn, rp->proc);

		x = json_object_new_object();
		json_object_object_add(x, "index", json_object_new_int(rp->final_of[s]));
		json_object_object_add(x, "t_s", bjson_num(sn->t, "%.6f"));
		json_object_object_add(x, "cpu_s", bjson_num(sn->cpu, "%.6f"));
		json_object_object_add(x, "kept", json_object_new_boolean(rp->final_of[s] >= 0));
		json_object_object_add(x, "requested", json_object_new_boolean(sn->requested));
		json_object_object_add(x, "allocations", json_object_new_int64(pp.allocs));
		json_object_object_add(x, "bytes", json_object_new_int64(pp.bytes));
		json_object_object_add(x, "readable_bytes", json_object_new_int64(pp.readable));
		json_object_object_add(x, "sampled_bytes", json_object_new_int64(pp.sampled));
		json_object_object_add(x, "stride", json_object_new_int64(pp.stride));
		json_object_object_add(x, "stale", json_object_new_int64(pp.stale));
		json_object_object_add(x, "unread_bytes", json_object_new_int64(pp.unread));
		json_object_object_add(x, "not_stopped", json_object_new_int(pp.not_stopped));
		json_object_object_add(x, "stopped_ms", bjson_num(sn->stopped_ms, "%.6f"));
		json_object_object_add(x, "classify_ms", bjson_num(sn->classify_ms, "%.6f"));
		if (rp->final_of[s] >= 0) {
			k = rp->final_of[s];
			json_object_object_add(x, "fig3", bjson_num(prof_ratio_of(128 * rp->snap_pairs[k],
							rp->snap_fig3[k]), "%.4f"));
			json_object_object_add(x, "buddy_frac", bjson_num(rp->series[k].frac, "%.6f"));
		}
		json_object_array_add(arr, x);
	}
	json_object_object_add(root, "snapshots", arr);

	o = json_object_new_object();
	for (c = 0; c < PROF_NC; c++)
		json_object_object_add(o, prof_codecs[c]->name, bjson_num(prof_ratio_of(128 * rp->pairs, rp->fig3[c]), "%.4f"));
	json_object_object_add(o, "best_codec", bjson_num(prof_ratio_of(128 * rp->pairs, rp->fig3_best), "%.4f"));
	json_object_object_add(o, "buddy_sizes", bjson_num(rp->cmp.ideal_ratio, "%.4f"));
	json_object_object_add(o, "pairs", json_object_new_int64(rp->pairs));
	json_object_object_add(root, "fig3", o);

	o = json_object_new_object();
	x = jresult(&rp->cmp.naive);
	json_object_object_add(x, "target", json_object_new_string(buddy_target_name(rp->cmp.naive_target)));
	json_object_object_add(o, "naive", x);
	json_object_object_add(o, "per_allocation", jresult(&rp->cmp.per_alloc));
	json_object_object_add(o, "plus16x", jresult(&rp->cmp.plus16x));
	json_object_object_add(root, "fig7", o);

	o = json_object_new_object();
	for (s = 0; s < BUDDY_HEUR_SWEEP_NR; s++)
		json_object_object_add(o, thr_names[s], jresult(&rp->sweep[s]));
	json_object_object_add(o, "best", jresult(&rp->cmp.best));
	json_object_object_add(root, "fig10", o);

	arr = json_object_new_array();
	for (s = 0; s < rp->nsnap; s++) {
		x = json_object_new_object();
		json_object_object_add(x, "pairs", json_object_new_int64(rp->series[s].pairs));
		json_object_object_add(x, "over", json_object_new_int64(rp->series[s].over));
		json_object_object_add(x, "buddy_frac", bjson_num(rp->series[s].frac, "%.6f"));
		json_object_array_add(arr, x);
	}
	json_object_object_add(root, "fig9", arr);

	o = json_object_new_object();
	for (c = 0; c < PROF_NC; c++)
		json_object_object_add(o, prof_codecs[c]->name, jresult(&rp->final_codec[c]));
	json_object_object_add(o, "best_per_allocation", jresult(&rp->best_alloc));
	json_object_object_add(o, "per_label_best", jresult(&rp->per_label));
	if (prof_per_label_below(rp)) {
		char why[512];

		prof_per_label_why(rp, why, sizeof(why));
		json_object_object_add(o, "per_label_below",
				       json_object_new_string(why));
	}
	json_object_object_add(root, "codecs", o);

	if (rp->with_all) {
		o = json_object_new_object();
		json_object_object_add(o, "labels", json_object_new_int64(rp->nexcluded));
		json_object_object_add(o, "bytes_share", bjson_num(rp->all_bytes ? (double)rp->excluded_bytes /
					     rp->all_bytes : 0, "%.6f"));
		json_object_object_add(o, "fig3", bjson_num(prof_ratio_of(128 * rp->all_pairs, rp->all_fig3), "%.4f"));
		json_object_object_add(o, "naive", jresult(&rp->all_naive));
		json_object_object_add(o, "plus16x", jresult(&rp->all_final));
		json_object_object_add(root, "with_excluded", o);
	}
	json_labels(root, rp);
}

/*
 * The JSON report: the top level is the main process's (prof_main_proc()),
 * as it has always been with one process; "processes" has one entry per
 * process with a table (its pid, executable, counters, and the same
 * snapshots, figures and labels as the top level, of its own).
 */
int prof_report_json(FILE *f, struct prof_run *r)
{
	const struct bprof_hdr *h = &r->final;
	struct json_object *root = json_object_new_object(), *o, *arr, *x;
	int m = prof_main_proc(r), err;
	struct bprof_proc c;
	struct prof_rep rp;
	unsigned int s, p;
	char **av;

	err = prof_rep_make(r, m, &rp);
	if (err) {
		prof_free_rep(&rp);
		json_object_put(root);
		return err;
	}
	arr = json_object_new_array();
	for (av = r->o->argv; *av; av++)
		json_object_array_add(arr, json_object_new_string(*av));
	json_object_object_add(root, "command", arr);
	json_object_object_add(root, "pid", json_object_new_int(r->child));
	json_object_object_add(root, "exit_status", json_object_new_int(
		WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status)));
	json_object_object_add(root, "duration_s", bjson_num(r->t_end - r->t_start, "%.6f"));
	json_object_object_add(root, "cpu_s", bjson_num(r->cpu_s, "%.6f"));
	json_object_object_add(root, "cpu_cover", bjson_num(prof_cpu_cover(&rp), "%.4f"));
	json_object_object_add(root, "maxrss_kib", json_object_new_int64(r->maxrss_kib));
	{
		double stop = 0;

		for (s = 0; s < r->nsnaps; s++)
			stop += r->snaps[s].stopped_ms;
		json_object_object_add(root, "stopped_s", bjson_num(stop / 1e3, "%.6f"));
		json_object_object_add(root, "max_stopped",
			bjson_num(prof_max_stopped(r->o), "%.6f"));
		json_object_object_add(root, "skipped_snapshots",
			json_object_new_int(r->nskipped));
	}
	json_object_object_add(root, "min_size", json_object_new_int64(r->o->min_size));
	if (r->cuda)
		json_object_object_add(root, "cuda", prof_cuda_json(r));
	json_object_object_add(root, "codec", json_object_new_string(prof_codecs[rp.main]->name));
	json_object_object_add(root, "threshold", bjson_num(r->o->threshold_ppm / 1e6, "%.6f"));

	o = json_object_new_object();
	prof_proc_counters(r, m, &c);
	json_counters(o, &c);
	json_object_object_add(o, "free_snapshots", json_object_new_int64(h->nr_free_snaps));
	json_object_object_add(o, "hook_s", bjson_num(c.hook_ns / 1e9, "%.6f"));
	json_object_object_add(o, "owner_pid", json_object_new_int(m >= 0 ? r->procs[m].pid : 0));
	json_object_object_add(o, "not_followed", json_object_new_int64(h->nr_not_followed));
	json_object_object_add(o, "forked", json_object_new_int64(h->nr_forked));
	json_object_object_add(o, "pysite_full", json_object_new_int64(h->nr_pysite_full));
	{
		char first[sizeof(h->not_followed) + 1], why[512];

		memcpy(first, h->not_followed, sizeof(h->not_followed));
		first[sizeof(h->not_followed)] = 0;
		json_object_object_add(o, "not_followed_first", jstring(first));
		json_object_object_add(o, "empty_reason", prof_empty_reason(r, why, sizeof(why)) ?
		     jstring(why) : NULL);
		json_object_object_add(o, "processes", json_object_new_int(prof_nr_tables(r)));
		json_object_object_add(o, "process_slots", json_object_new_int(h->nprocs));
		json_object_object_add(o, "no_slot", json_object_new_int64(h->nr_no_slot));
		memcpy(first, h->no_slot, sizeof(h->no_slot));
		first[sizeof(h->no_slot)] = 0;
		json_object_object_add(o, "no_slot_first", jstring(first));
		json_object_object_add(o, "no_slot_pid", json_object_new_int(h->no_slot_pid));
	}
	json_object_object_add(root, "interposer", o);
	json_figures(root, &rp);
	prof_free_rep(&rp);

	arr = json_object_new_array();
	for (p = 0; p < r->nprocs; p++) {
		struct prof_proc *pr = &r->procs[p];

		if (!pr->pid)
			continue;
		err = prof_rep_make(r, p, &rp);
		if (err) {
			prof_free_rep(&rp);
			json_object_put(arr);
			json_object_put(root);
			return err;
		}
		x = json_object_new_object();
		json_object_object_add(x, "pid", json_object_new_int(pr->pid));
		json_object_object_add(x, "exe", jstring(pr->final.exe));
		json_object_object_add(x, "main", json_object_new_boolean((int)p == m));
		json_object_object_add(x, "exited", json_object_new_boolean(pr->gone));
		o = json_object_new_object();
		json_counters(o, &pr->final);
		json_object_object_add(o, "hook_s", bjson_num(pr->final.hook_ns / 1e9, "%.6f"));
		json_object_object_add(o, "forked", json_object_new_int64(pr->final.nr_forked));
		json_object_object_add(o, "peak_live_bytes",
		     json_object_new_int64(pr->final.peak_live_bytes));
		json_object_object_add(x, "interposer", o);
		json_object_object_add(x, "codec", json_object_new_string(prof_codecs[rp.main]->name));
		json_figures(x, &rp);
		prof_free_rep(&rp);
		json_object_array_add(arr, x);
	}
	json_object_object_add(root, "processes", arr);

	bjson_write(f, root, BJSON_PRETTY);
	json_object_put(root);
	return 0;
}

/* ---- files ------------------------------------------------------------------------ */

static int write_profile(struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	size_t n = rp->nlab_used < BUDDY_PROFILE_MAX ? rp->nlab_used :
		   BUDDY_PROFILE_MAX, i;
	struct buddy_profile_entry *e = calloc(n + 1, sizeof(*e));
	char cmd[512], comment[1600], rt[16], procs[160] = "", why[512] = "";
	time_t now = time(NULL);
	unsigned int np = prof_nr_tables(r);
	int err;

	if (!e)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct prof_label *l = &r->labels[rp->order[i]];

		e[i].uid = r->o->uid;
		e[i].target = l->target;
		e[i].codec = prof_codecs[l->codec]->id;
		memcpy(e[i].label, l->name, BUDDY_LABEL_LEN);
	}
	prof_fmt_cmd(cmd, sizeof(cmd), r->o->argv);
	prof_fmt_ratio(rt, sizeof(rt), rp->per_label.ratio);
	if (prof_per_label_below(rp))
		prof_per_label_why(rp, why, sizeof(why));
	if (np > 1)
		snprintf(procs, sizeof(procs),
			 "the labels of %u processes; a label in several: one decision over all its allocations\n",
			 np);
	snprintf(comment, sizeof(comment),
		 "buddyctl profile of: %s\n"
		 "%s%s"
		 "Buddy Threshold %.0f%%, mostly-zero %.0f%%; %u snapshots; %zu labels%s\n"
		 "expected ratio %sx, %.2f%% buddy accesses\n"
		 "%s%s"
		 "uid<TAB>label<TAB>target<TAB>codec (buddyd's state-file format)",
		 cmd, ctime(&now), procs, r->o->threshold_ppm / 1e4,
		 r->o->zero_ppm / 1e4, rp->nsnap, rp->nlab_used,
		 n < rp->nlab_used ? " (the largest 4096 kept)" : "", rt,
		 rp->per_label.buddy_frac * 100, why, *why ? "\n" : "");
	err = buddy_profile_save(r->o->profile_out, e, n, comment);
	free(e);
	return err;
}

static int write_index(struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	char path[4096];
	size_t i, j;
	FILE *f;

	if (prof_mkdir_p(r->o->dumps))
		return -errno;
	snprintf(path, sizeof(path), "%s/index.tsv", r->o->dumps);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "snapshot\tt_s\tseq\tlabel\tkind\taddr\tsize\tstride\tfile\n");
	for (i = 0; i < rp->n; i++) {
		struct prof_alloc *a = &r->allocs[rp->idx[i]];

		for (j = 0; j < a->nobs; j++) {
			int fs = rp->final_of[a->obs[j].snap];
			struct prof_snap *sn = &r->snaps[a->obs[j].snap];

			if (fs < 0)
				continue;
			fprintf(f, "%d\t%.3f\t%llu\t%s\t%s\t0x%llx\t%llu\t%llu\tsnap-%03u/%llu.bin\n",
				fs, sn->t, (unsigned long long)a->seq,
				r->labels[a->label].name,
				a->kind == BPROF_KIND_MMAP ? "mmap" : "heap",
				(unsigned long long)a->addr,
				(unsigned long long)a->size,
				(unsigned long long)sn->stride, sn->id,
				(unsigned long long)a->seq);
		}
	}
	return fclose(f) ? -errno : 0;
}

int prof_report(struct prof_run *r)
{
	struct buddy_replace out;
	bool json_dash = r->o->json_out && !strcmp(r->o->json_out, "-");
	/* stdout is the JSON's alone when it goes there */
	FILE *f = json_dash && !r->o->json ? stderr : stdout;
	struct prof_rep rp;
	int err, ret = 0;

	if (r->o->out) {
		err = buddy_replace_open(&out, r->o->out);
		if (err) {
			prof_err("%s: %s", r->o->out, strerror(-err));
			return -1;
		}
		f = out.f;
	}
	if (r->o->json)
		err = prof_report_json(f, r);
	else
		err = prof_report_text(f, r);
	if (err) {
		prof_err("%s", strerror(-err));
		if (r->o->out)
			buddy_replace_abort(&out);
		return -1;
	}
	if (r->o->out) {
		/* a failed write leaves the old report as it was */
		err = buddy_replace_commit(&out);
		if (err) {
			prof_err("%s: %s", r->o->out, strerror(-err));
			ret = -1;
		}
	} else if (fflush(f) || ferror(f)) {
		prof_err("writing the report: %s", strerror(errno));
		ret = -1;
	}
	if (json_dash && (r->o->out || !r->o->json)) {
		err = prof_report_json(stdout, r);
		if (err || fflush(stdout) || ferror(stdout)) {
			prof_err("writing the JSON report: %s",
				 strerror(err ? -err : errno));
			ret = -1;
		}
	} else if (r->o->json_out && !json_dash) {
		err = buddy_replace_open(&out, r->o->json_out);
		if (!err) {
			err = prof_report_json(out.f, r);
			if (err)
				buddy_replace_abort(&out);
			else
				err = buddy_replace_commit(&out);
		}
		if (err) {
			prof_err("%s: %s", r->o->json_out,
				     strerror(-err));
			ret = -1;
		}
	}
	if (!r->o->profile_out && !r->o->dumps)
		return ret;
	/* The profile file: the labels of all processes, pooled by label. */
	err = prof_rep_make(r, -1, &rp);
	if (err) {
		prof_err("%s", strerror(-err));
		prof_free_rep(&rp);
		return -1;
	}
	if (r->o->profile_out) {
		err = write_profile(&rp);
		if (err) {
			prof_err("%s: %s", r->o->profile_out,
				     strerror(-err));
			ret = -1;
		} else {
			prof_msg(r, "profile of %zu labels written to %s",
			       rp.nlab_used < BUDDY_PROFILE_MAX ? rp.nlab_used :
			       (size_t)BUDDY_PROFILE_MAX, r->o->profile_out);
		}
	}
	if (r->o->dumps) {
		err = write_index(&rp);
		if (err) {
			prof_err("%s/index.tsv: %s", r->o->dumps,
				     strerror(-err));
			ret = -1;
		}
	}
	prof_free_rep(&rp);
	return ret;
}
