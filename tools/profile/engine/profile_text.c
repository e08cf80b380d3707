// SPDX-License-Identifier: GPL-2.0
/*
 * profile_text.c - the profile report as text: the run, the interposer's
 * counters, per process the figures and the label table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/libbuddy.h"
#include "launch.h"
#include "profile_priv.h"

/* ---- text ------------------------------------------------------------------------- */

void prof_fmt_ratio(char *buf, size_t len, double v)
{
	if (isinf(v))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.2f", v);
}

void prof_fmt_cmd(char *buf, size_t len, char **argv)
{
	size_t n = 0;

	buf[0] = 0;
	for (; *argv && n + 4 < len; argv++)
		n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", *argv);
	if (n >= len - 4)
		strcpy(buf + len - 4, "...");
}

static const char *target_short(unsigned int t)
{
	return buddy_target_name(t);
}

static void print_result(FILE *f, const char *name,
			 const struct buddy_heur_result *res)
{
	char r[16];

	prof_fmt_ratio(r, sizeof(r), res->ratio);
	fprintf(f, "  %-34s %6sx  %6.2f%% buddy accesses%s\n", name, r,
		res->buddy_frac * 100,
		res->err == -ENOSPC ? " (capacity cap not met)" : "");
}

/* The interposer's counters of process @proc, or summed over all (-1). */
void prof_proc_counters(const struct prof_run *r, int proc,
			  struct bprof_proc *c)
{
	unsigned int p;

	memset(c, 0, sizeof(*c));
	for (p = 0; p < r->nprocs; p++) {
		const struct bprof_proc *f = &r->procs[p].final;

		if (!r->procs[p].pid || (proc >= 0 && (unsigned int)proc != p))
			continue;
		c->pid = f->pid;
		memcpy(c->exe, f->exe, sizeof(c->exe));
		c->exe[sizeof(c->exe) - 1] = 0;
		c->nr_forked += f->nr_forked;
		c->nr_alloc += f->nr_alloc;
		c->nr_free += f->nr_free;
		c->nr_dropped += f->nr_dropped;
		c->nr_unwind_short += f->nr_unwind_short;
		c->hook_ns += f->hook_ns;
		c->nr_exec_reset += f->nr_exec_reset;
		c->nr_partial_unmap += f->nr_partial_unmap;
		c->live_bytes += f->live_bytes;
		c->peak_live_bytes += f->peak_live_bytes;
	}
}

/* A snapshot's figures for process @proc, or over all of them (-1). */
struct prof_psnap prof_snap_proc(const struct prof_snap *sn, int proc)
{
	struct prof_psnap z = { .stride = 1 };

	if (proc < 0) {
		z.read = true;
		z.not_stopped = sn->not_stopped;
		z.allocs = sn->allocs;
		z.bytes = sn->bytes;
		z.readable = sn->readable;
		z.sampled = sn->sampled;
		z.stale = sn->stale;
		z.unread = sn->unread;
		z.stride = sn->stride;
		return z;
	}
	if ((unsigned int)proc < sn->npp)
		return sn->pp[proc];
	return z;
}

/* Processes with a table. */
unsigned int prof_nr_tables(const struct prof_run *r)
{
	unsigned int p, n = 0;

	for (p = 0; p < r->nprocs; p++)
		n += r->procs[p].pid != 0;
	return n;
}

static void print_interposer(FILE *f, const struct bprof_proc *c, double run)
{
	fprintf(f, "  interposer: %llu allocations, %llu frees, %llu dropped (table full), %llu short stacks; %.3f s in its tracked path (%.2f%% of the run)\n",
		(unsigned long long)c->nr_alloc, (unsigned long long)c->nr_free,
		(unsigned long long)c->nr_dropped,
		(unsigned long long)c->nr_unwind_short, c->hook_ns / 1e9,
		run > 0 ? c->hook_ns / 1e9 / run * 100 : 0);
}

static void print_labels_line(FILE *f, struct prof_rep *rp)
{
	struct prof_run *r = rp->r;

	fprintf(f, "  labels: %zu (allocations %zu); main codec %s, Buddy Threshold %.0f%%, mostly-zero %.0f%%, overall cap %s\n\n",
		rp->nlab_used, rp->n, prof_codecs[rp->main]->name,
		r->o->threshold_ppm / 1e4, r->o->zero_ppm / 1e4,
		r->o->max_ratio > 0 ? "4x-style carve-out" : "none");
}

/*
 * The head of the text report: the run, the interposer (over all
 * processes), the snapshots; @multi: the processes followed, else (one
 * table, as it has always been) the labels line of @rp.
 */
static void report_head(FILE *f, struct prof_rep *rp, bool multi)
{
	struct prof_run *r = rp->r;
	const struct bprof_hdr *h = &r->final;
	double run = r->t_end - r->t_start, stop_sum = 0, stop_max = 0;
	struct bprof_proc c;
	char cmd[256], st[64];
	unsigned int s;

	prof_fmt_cmd(cmd, sizeof(cmd), r->o->argv);
	for (s = 0; s < r->nsnaps; s++) {
		stop_sum += r->snaps[s].stopped_ms;
		if (r->snaps[s].stopped_ms > stop_max)
			stop_max = r->snaps[s].stopped_ms;
	}
	fprintf(f, "buddyctl profile: %s\n", cmd);
	fprintf(f, "  pid %d, %s, %.2f s (%.2f s CPU, %.0f MiB max RSS)",
		(int)r->child, eng_status_text(r->status, st, sizeof(st)),
		run, r->cpu_s, r->maxrss_kib / 1024.0);
	if (r->cuda)
		fprintf(f, "; CUDA blocks of every size\n");
	else
		fprintf(f, "; tracking allocations >= %llu B\n",
			(unsigned long long)r->o->min_size);
	prof_proc_counters(r, -1, &c);
	if (r->cuda)
		prof_cuda_text(f, r);
	else
		print_interposer(f, &c, run);
	fprintf(f, "  snapshots: %u kept of %u taken; program stopped %.1f ms per snapshot on average, %.1f ms at most, %.3f%% of the run\n",
		rp->nsnap, r->nsnaps, r->nsnaps ? stop_sum / r->nsnaps : 0,
		stop_max, run > 0 ? stop_sum / 1e3 / run * 100 : 0);
	{
		double cover = prof_cpu_cover(rp);

		if (cover >= 0 && cover < 0.5)
			fprintf(f, "  warning: the snapshots kept reach only the first %.0f%% of the program's CPU time\n"
				"  (%.2f of %.2f s): the figures describe its start, maybe freshly allocated memory;\n"
				"  --clock cpu, or --free-bytes for data freed per phase\n",
				100 * cover, cover * r->cpu_s, r->cpu_s);
	}
	if (prof_max_stopped(r->o) > 0)
		fprintf(f, "  stopped at most %.0f%% of the run (--max-stopped): %u automatic snapshot%s skipped\n",
			prof_max_stopped(r->o) * 100, r->nskipped,
			r->nskipped == 1 ? "" : "s");
	if (r->o->free_bytes)
		fprintf(f, "  before frees of >= %llu B: %llu snapshots (kept)\n",
			(unsigned long long)r->o->free_bytes,
			(unsigned long long)h->nr_free_snaps);
	if (multi) {
		int m = prof_main_proc(r);

		fprintf(f, "  processes: %u followed, one table each below; the main one (JSON's top level) pid %d (%.63s)\n",
			prof_nr_tables(r), m >= 0 ? (int)r->procs[m].pid : 0,
			m >= 0 ? r->procs[m].final.exe : "");
	}
	if (h->nr_no_slot)
		fprintf(f, "  not followed: %u process%s found no process slot left (%u: --processes), the first pid %d (%.63s)\n",
			h->nr_no_slot, h->nr_no_slot == 1 ? "" : "es",
			h->nprocs, (int)h->no_slot_pid, h->no_slot);
	if (h->nr_pysite_full)
		fprintf(f, "  %llu allocations without their Python site: the table of %u Python sites was full\n",
			(unsigned long long)h->nr_pysite_full,
			BPROF_NPYSITES(h->nslots));
	if (multi)
		fprintf(f, "  labels of all processes: %zu (allocations %zu)\n",
			rp->nlab_used, rp->n);
	else
		print_labels_line(f, rp);
	{
		char why[512];

		if (prof_empty_reason(r, why, sizeof(why)))
			fprintf(f, "  empty: %s\n\n", why);
	}
}

/* The figures and labels of @rp, after the head or a process's title. */
static void report_body(FILE *f, struct prof_rep *rp)
{
	struct prof_run *r = rp->r;
	char cmd[256], a[16], b[16];
	unsigned int s, c, shown;
	size_t i;
	static const char *const thr_names[] = { "10%", "20%", "30%", "40%" };

	if (rp->with_all) {
		uint64_t ex = rp->excluded_bytes, tot = rp->all_bytes;

		prof_fmt_ratio(a, sizeof(a), prof_ratio_of(128 * rp->all_pairs, rp->all_fig3));
		prof_fmt_ratio(b, sizeof(b), rp->all_final.ratio);
		fprintf(f, "  --exclude: %zu labels, %.1f%% of the bytes, left out of the figures; with them: Fig. 3 %s, final %sx at %.2f%% buddy accesses\n\n",
			rp->nexcluded, tot ? 100.0 * ex / tot : 0, a, b,
			rp->all_final.buddy_frac * 100);
	}
	if (r->o->max_ratio > 0 && r->o->max_ratio != 4)
		fprintf(f, "  (overall cap %.2fx)\n\n", r->o->max_ratio);

	fprintf(f, "%4s %8s %7s %9s %9s %6s %8s %6s %9s\n", "snap", "t(s)",
		"allocs", "MiB", "read-MiB", "stride", "stop-ms", "fig3", "Fig.9");
	for (s = 0; s < rp->nsnap; s++) {
		struct prof_snap *sn = &r->snaps[rp->snap_of[s]];
		struct prof_psnap pp = prof_snap_proc(sn, rp->proc);

		prof_fmt_ratio(a, sizeof(a), prof_ratio_of(128 * rp->snap_pairs[s],
						 rp->snap_fig3[s]));
		fprintf(f, "%4u %8.2f %7llu %9.1f %9.1f %6llu %8.1f %6s %8.2f%%%s\n",
			s, sn->t, (unsigned long long)pp.allocs, pp.bytes / MIB,
			pp.sampled / MIB, (unsigned long long)pp.stride,
			sn->stopped_ms, a, rp->series[s].frac * 100,
			sn->requested ? "  (requested)" :
			sn->dropped ? "  (its last, dropped for the others)" : "");
	}

	fprintf(f, "\nFig. 3  optimistic ratio (entry sizes 0/8/16/32/64/80/96/128 B):\n ");
	for (c = 0; c < PROF_NC; c++) {
		prof_fmt_ratio(a, sizeof(a), prof_ratio_of(128 * rp->pairs, rp->fig3[c]));
		fprintf(f, " %s %s", prof_codecs[c]->name, a);
	}
	prof_fmt_ratio(a, sizeof(a), prof_ratio_of(128 * rp->pairs, rp->fig3_best));
	fprintf(f, "  best-codec-per-allocation %s\n", a);
	prof_fmt_ratio(a, sizeof(a), rp->cmp.ideal_ratio);
	fprintf(f, "        with Buddy's sizes (0/8/32/64/96/128 B), %s: %s\n",
		prof_codecs[rp->main]->name, a);
	fprintf(f, "Fig. 7  design steps (%s, threshold %.0f%%):\n",
		prof_codecs[rp->main]->name, r->o->threshold_ppm / 1e4);
	snprintf(cmd, sizeof(cmd), "naive (one target: %s)",
		 target_short(rp->cmp.naive_target));
	print_result(f, cmd, &rp->cmp.naive);
	print_result(f, "per-allocation targets", &rp->cmp.per_alloc);
	print_result(f, "+ 16x mostly-zero (final design)", &rp->cmp.plus16x);
	fprintf(f, "Fig. 10 Buddy Threshold sweep:\n");
	for (s = 0; s < BUDDY_HEUR_SWEEP_NR; s++)
		print_result(f, thr_names[s], &rp->sweep[s]);
	print_result(f, "best (no threshold)", &rp->cmp.best);
	fprintf(f, "Codecs  final design per codec, and the best codec:\n");
	for (c = 0; c < PROF_NC; c++)
		print_result(f, prof_codecs[c]->name, &rp->final_codec[c]);
	print_result(f, "best codec per allocation", &rp->best_alloc);
	print_result(f, "per label, best codec (profile file)", &rp->per_label);
	if (prof_per_label_below(rp)) {
		char why[512];

		prof_per_label_why(rp, why, sizeof(why));
		fprintf(f, "  (%s)\n", why);
	}

	shown = r->o->show_labels && r->o->show_labels < rp->nlab_used ?
		r->o->show_labels : rp->nlab_used;
	fprintf(f, "\nLabels (%u of %zu, by bytes over the snapshots):\n", shown,
		rp->nlab_used);
	fprintf(f, "(buddy%%: accesses to buddy memory at the label's target, +-\n"
		" its sampling error at the threshold, ~95%%; none: read whole;\n"
		" a label within the error below the threshold keeps the safer\n"
		" target)\n");
	fprintf(f, "%-15s %6s %10s %8s %8s %5s %5s %14s  %s\n", "label", "allocs",
		"size", "avg-MiB", "fig3", "tgt", "codec", "buddy%", "site");
	for (i = 0; i < shown; i++) {
		struct prof_label *l = &r->labels[rp->order[i]];
		uint64_t lp = 0, lf = 0;
		char site[320], s0[256] = "", s1[256] = "";
		int k0;

		for (s = 0; s < rp->nsnap; s++) {
			lp += rp->lab_pairs[(size_t)rp->order[i] * rp->nsnap + s];
			lf += rp->lab_fig3[(size_t)rp->order[i] * rp->nsnap + s];
		}
		prof_fmt_ratio(a, sizeof(a), prof_ratio_of(128 * lp, lf));
		/* the site, and the outermost frame kept (the most specific) */
		k0 = prof_site(r, l, s0, sizeof(s0));
		prof_short_sym(s0);
		if (k0 >= 0 && (unsigned int)k0 + 1 < l->nframes) {
			prof_symbolize(r, &l->frames[l->nframes - 1], s1, sizeof(s1));
			prof_short_sym(s1);
		}
		snprintf(site, sizeof(site), "%s%s%s", s0,
			 *s1 ? ((unsigned int)k0 + 2 < l->nframes ? " <..< " : " < ") : "", s1);
		if (l->buddy_frac_err > 0)
			snprintf(b, sizeof(b), "%.2f+-%.2f%%", l->buddy_frac * 100,
				 l->buddy_frac_err * 100);
		else
			snprintf(b, sizeof(b), "%.2f%%", l->buddy_frac * 100);
		fprintf(f, "%-15s %6u %10llu %8.1f %8s %5s %5s %14s  %.160s\n",
			l->name, l->nallocs, (unsigned long long)l->size,
			rp->nsnap ? l->bytes_total / MIB / rp->nsnap : 0, a,
			target_short(l->target), prof_codecs[l->codec]->name,
			b, site);
		fprintf(f, "%15s MiB  :", "");
		for (s = 0; s < rp->nsnap; s++) {
			uint64_t v = rp->lab_bytes[(size_t)rp->order[i] * rp->nsnap + s];

			if (v)
				fprintf(f, " %6.1f", v / MIB);
			else
				fprintf(f, " %6s", "-");
		}
		fprintf(f, "\n%15s ratio:", "");
		for (s = 0; s < rp->nsnap; s++) {
			size_t li = (size_t)rp->order[i] * rp->nsnap + s;

			if (rp->lab_pairs[li]) {
				prof_fmt_ratio(b, sizeof(b), prof_ratio_of(128 * rp->lab_pairs[li],
								 rp->lab_fig3[li]));
				fprintf(f, " %6s", b);
			} else {
				fprintf(f, " %6s", "-");
			}
		}
		fputc('\n', f);
	}
}

/*
 * The text report: with one table (one process followed, or none), as it
 * has always been; with more, the head, then each process's own figures
 * and labels under a title.
 */
int prof_report_text(FILE *f, struct prof_run *r)
{
	double run = r->t_end - r->t_start;
	unsigned int p, k = 0, n = prof_nr_tables(r);
	int m = prof_main_proc(r), err;
	struct prof_rep rp;

	if (n <= 1) {
		err = prof_rep_make(r, m, &rp);
		if (!err) {
			report_head(f, &rp, false);
			report_body(f, &rp);
		}
		prof_free_rep(&rp);
		return err;
	}
	err = prof_rep_make(r, -1, &rp);
	if (!err)
		report_head(f, &rp, true);
	prof_free_rep(&rp);
	for (p = 0; p < r->nprocs && !err; p++) {
		struct prof_proc *pr = &r->procs[p];

		if (!pr->pid)
			continue;
		err = prof_rep_make(r, p, &rp);
		if (!err) {
			fprintf(f, "\n== process %u of %u: pid %d (%.63s)%s%s%s\n",
				++k, n, (int)pr->pid, pr->final.exe,
				(int)p == m ? ", the main one" : "",
				pr->final.nr_exec_reset ? ", after exec" : "",
				pr->gone ? ", exited before the last snapshot" : "");
			print_interposer(f, &pr->final, run);
			print_labels_line(f, &rp);
			if (rp.n)
				report_body(f, &rp);
			else
				fprintf(f, "  no allocation of it was live at a kept snapshot\n");
		}
		prof_free_rep(&rp);
	}
	return err;
}
