// SPDX-License-Identifier: GPL-2.0
/*
 * prof_report.c - the profiler's report: from the classified snapshots to the
 * decisions (tools/policy/heuristic.h), the report and the profile file.
 *
 * Figures, all over the kept snapshots (every (entry, snapshot) pair counts
 * once; sampled counts are scaled):
 *
 *   Fig. 3   optimistic ratio: 128 B per pair / Fig. 3 bytes (0, 8, 16, 32,
 *            64, 80, 96, 128 B), per codec, and with each allocation's best
 *            codec (the one with the fewest Fig. 3 bytes over its series).
 *   Fig. 7   buddy_heur_compare(): naive (one target for the program),
 *            per-allocation targets, + 16x for mostly-zero allocations (the
 *            final design), each with its expected buddy-access fraction.
 *   Fig. 10  buddy_heur_sweep() at 10, 20, 30, 40 % and "best" (no
 *            threshold).
 *   Fig. 9   buddy_heur_series(): the buddy-access fraction per snapshot at
 *            the final design's targets.
 *   Best codec: per allocation (and per label for the profile) the codec of
 *            BPC, ZVC, BDI, FPC whose decision is the most aggressive target,
 *            then the fewest pairs over it; ties go to the main codec.
 *
 * Each allocation is its own decision unit, as in the paper.  The profile
 * file has one decision per label (allocations pooled by label, since an
 * AUTO allocation is matched by label), so its ratio is reported too.
 * The series of an allocation is aligned to the run's snapshots: a snapshot
 * in which it was not live is an empty row (no pairs).
 *
 * Snapshot and codec statistics are exact when nothing was sampled; with
 * sampling (stride > 1) every count is the sampled count times the stride.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "tools/policy/heuristic.h"
#include "lib/libbuddy.h"
#include "buddyprof.h"
#include "tools/policy/profile_file.h"
#include "tools/common/replace_file.h"
#include "tools/common/utf8.h"

#define MIB	(1024.0 * 1024.0)

/* ---- symbols ---------------------------------------------------------------- */

struct sym {
	uint64_t value, size;
	const char *name;
};

struct elfsyms {
	void *map;
	size_t len;
	struct sym *syms;
	size_t n;
	Elf64_Phdr load[16];
	int nload;
	bool failed;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

static void add_symtab(struct elfsyms *es, const Elf64_Ehdr *eh,
		       const Elf64_Shdr *sh, unsigned int type)
{
	const char *base = es->map;
	unsigned int i;

	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = &sh[i], *strs;
		const Elf64_Sym *sym;
		size_t k, nsym;

		if (s->sh_type != type || s->sh_link >= eh->e_shnum ||
		    s->sh_offset + s->sh_size > es->len || !s->sh_entsize)
			continue;
		strs = &sh[s->sh_link];
		if (strs->sh_offset + strs->sh_size > es->len)
			continue;
		sym = (const Elf64_Sym *)(base + s->sh_offset);
		nsym = s->sh_size / sizeof(*sym);
		es->syms = realloc(es->syms, (es->n + nsym) * sizeof(struct sym));
		if (!es->syms) {
			es->n = 0;
			return;
		}
		for (k = 0; k < nsym; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
			    !sym[k].st_value || sym[k].st_shndx == SHN_UNDEF ||
			    sym[k].st_name >= strs->sh_size)
				continue;
			es->syms[es->n].value = sym[k].st_value;
			es->syms[es->n].size = sym[k].st_size;
			es->syms[es->n].name = base + strs->sh_offset + sym[k].st_name;
			es->n++;
		}
	}
}

static struct elfsyms *elf_load(const char *path)
{
	struct elfsyms *es = calloc(1, sizeof(*es));
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat stb;
	int fd, i;

	if (!es)
		return NULL;
	es->failed = true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return es;
	if (fstat(fd, &stb) || stb.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return es;
	}
	es->len = stb.st_size;
	es->map = mmap(NULL, es->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (es->map == MAP_FAILED) {
		es->map = NULL;
		return es;
	}
	eh = es->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > es->len ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > es->len)
		return es;
	ph = (const Elf64_Phdr *)((char *)es->map + eh->e_phoff);
	for (i = 0; i < eh->e_phnum && es->nload < 16; i++)
		if (ph[i].p_type == PT_LOAD)
			es->load[es->nload++] = ph[i];
	if (eh->e_shnum) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)((char *)es->map +
							    eh->e_shoff);

		add_symtab(es, eh, sh, SHT_SYMTAB);
		if (!es->n)
			add_symtab(es, eh, sh, SHT_DYNSYM);
	}
	qsort(es->syms, es->n, sizeof(*es->syms), cmp_sym);
	es->failed = false;
	return es;
}

/* "module!symbol+0xoff", or "module+0xoff" without a symbol. */
static void symbolize(struct pf_run *r, const struct pf_frame *f, char *buf,
		      size_t len)
{
	struct pf_module *m;
	struct elfsyms *es;
	uint64_t va = 0;
	bool have_va = false;
	int i;

	if (f->mod < 0) {
		snprintf(buf, len, "?+0x%llx", (unsigned long long)f->off);
		return;
	}
	m = &r->mods[f->mod];
	if (!m->elf)
		m->elf = elf_load(m->path);
	es = m->elf;
	if (es && !es->failed) {
		for (i = 0; i < es->nload; i++) {
			const Elf64_Phdr *p = &es->load[i];

			if (f->off >= p->p_offset &&
			    f->off < p->p_offset + p->p_filesz) {
				va = f->off - p->p_offset + p->p_vaddr;
				have_va = true;
				break;
			}
		}
	}
	if (have_va && es->n) {
		size_t lo = 0, hi = es->n;

		/* last symbol with value <= va - 1 (va is a return address) */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (es->syms[mid].value <= va - 1)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) {
			const struct sym *s = &es->syms[lo - 1];

			if (!s->size || va - 1 < s->value + s->size) {
				snprintf(buf, len, "%s!%s+0x%llx", m->base,
					 s->name,
					 (unsigned long long)(va - s->value));
				return;
			}
		}
	}
	snprintf(buf, len, "%s+0x%llx", m->base, (unsigned long long)f->off);
}

/* ---- the decisions ------------------------------------------------------------- */

struct rep {
	struct pf_run *r;
	int proc;			/* the process's (run->procs), -1: all */
	bool all;			/* also the --exclude'd allocations */
	unsigned int nsnap;		/* kept snapshots */
	int *final_of;			/* internal snapshot id -> kept index */
	unsigned int *snap_of;		/* kept index -> internal id */
	size_t n;			/* allocations with a kept observation */
	size_t *idx;			/* -> run->allocs */
	uint64_t (*rows[PF_NC])[BUDDY_CODE_NR];	/* n * nsnap rows per codec */
	struct buddy_heur_alloc *ha[PF_NC];
	struct buddy_heur_alloc *mix;
	struct buddy_heur_choice *ch;
	struct buddy_heur_params p;	/* per allocation, main threshold */
	unsigned int main;

	/* results */
	bool with_all;			/* --exclude: the figures without it */
	uint64_t all_pairs, all_fig3, all_bytes, excluded_bytes;
	struct buddy_heur_result all_final, all_naive;
	uint64_t pairs, fig3[PF_NC], fig3_best;
	struct buddy_heur_cmp cmp;
	struct buddy_heur_result sweep[BUDDY_HEUR_SWEEP_NR];
	struct buddy_heur_point *series;
	struct buddy_heur_result final_codec[PF_NC];
	struct buddy_heur_result best_alloc;	/* best codec per allocation */
	struct buddy_heur_result per_label;	/* profile: pooled, best codec */
	uint64_t *snap_pairs, *snap_fig3;	/* main codec, per kept snapshot */
	/* per label, per kept snapshot */
	uint64_t *lab_bytes, *lab_pairs, *lab_fig3;
	uint64_t (*lab_hist)[PF_NC][BUDDY_CODE_NR];	/* per label, all snapshots */
	unsigned int *order;		/* labels by bytes, descending */
	size_t nlab_used;
	size_t nexcluded;		/* labels left out by --exclude */
};

static double ratio_of(uint64_t logical, uint64_t stored)
{
	return stored ? (double)logical / stored : INFINITY;
}

static int pick_codec(const struct rep *rp, const unsigned int *tg,
		      const uint64_t *over)
{
	int best = rp->main, c;

	for (c = 0; c < PF_NC; c++) {
		if (tg[c] < tg[best] || (tg[c] == tg[best] && over[c] < over[best]))
			best = c;
	}
	return best;
}

static int decide(struct rep *rp)
{
	struct pf_run *r = rp->r;
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
		unsigned int (*tg)[PF_NC] = calloc(rp->n + 1, sizeof(*tg));
		uint64_t (*ov)[PF_NC] = calloc(rp->n + 1, sizeof(*ov));

		if (!tg || !ov)
			return -ENOMEM;
		for (c = 0; c < PF_NC; c++) {
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
			unsigned int (*ltg)[PF_NC] = calloc(r->nlabels + 1, sizeof(*ltg));
			uint64_t (*lov)[PF_NC] = calloc(r->nlabels + 1, sizeof(*lov));

			if (!ltg || !lov)
				return -ENOMEM;
			for (c = 0; c < PF_NC; c++) {
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
	const struct pf_run *r = arg;
	const struct pf_label *x = &r->labels[*(const unsigned int *)a];
	const struct pf_label *y = &r->labels[*(const unsigned int *)b];

	if (x->bytes_total != y->bytes_total)
		return x->bytes_total > y->bytes_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int build(struct rep *rp)
{
	struct pf_run *r = rp->r;
	unsigned int s, c, k = 0;
	size_t i, j;

	rp->main = r->o->codec;
	rp->final_of = calloc(r->nsnaps + 1, sizeof(int));
	rp->snap_of = calloc(r->nsnaps + 1, sizeof(unsigned int));
	if (!rp->final_of || !rp->snap_of)
		return -ENOMEM;
	for (s = 0; s < r->nsnaps; s++) {
		bool kept = pf_snap_kept(r, s, rp->proc);

		rp->final_of[s] = kept ? (int)k : -1;
		if (kept)
			rp->snap_of[k++] = s;
	}
	rp->nsnap = k;

	rp->idx = calloc(r->nallocs + 1, sizeof(size_t));
	if (!rp->idx)
		return -ENOMEM;
	for (i = 0; i < r->nallocs; i++) {
		struct pf_alloc *a = &r->allocs[i];

		for (j = 0; j < a->nobs; j++)
			if (rp->final_of[a->obs[j].snap] >= 0)
				break;
		if (rp->proc >= 0 && a->proc != rp->proc)
			continue;
		if (j < a->nobs && (rp->all || !r->labels[a->label].excluded))
			rp->idx[rp->n++] = i;
	}
	for (c = 0; c < PF_NC; c++) {
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
		struct pf_alloc *a = &r->allocs[rp->idx[i]];
		struct pf_label *lab = &r->labels[a->label];
		unsigned int last = 0;
		uint64_t best = UINT64_MAX, f3[PF_NC] = { 0 };

		uint64_t bl = 0, bl_read = 0;

		lab->nallocs++;
		for (j = 0; j < a->nobs; j++) {
			struct pf_obs *ob = &a->obs[j];
			int fs = rp->final_of[ob->snap];
			uint64_t pairs = 0;
			size_t li;

			if (fs < 0)
				continue;
			bl += ob->blocks;
			bl_read += ob->blocks_read;
			for (c = 0; c < PF_NC; c++) {
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
		for (c = 0; c < PF_NC; c++)
			if (f3[c] < best)
				best = f3[c];
		rp->fig3_best += best;
		for (c = 0; c < PF_NC; c++) {
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

static void free_rep(struct rep *rp)
{
	unsigned int c;

	free(rp->final_of);
	free(rp->snap_of);
	free(rp->idx);
	for (c = 0; c < PF_NC; c++) {
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
 * free_rep() it either way.  Each build sets the labels' decisions
 * (run->labels) for its own allocations: use one before building another.
 */
static int rep_make(struct pf_run *r, int proc, struct rep *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->r = r;
	rp->proc = proc;
	if (r->o->nexclude) {
		/* The figures with every allocation, excluded ones too. */
		struct rep all = { .r = r, .proc = proc, .all = true };
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
		free_rep(&all);
	}
	return build(rp);
}

/* ---- text ------------------------------------------------------------------------- */

static void fmt_ratio(char *buf, size_t len, double v)
{
	if (isinf(v))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.2f", v);
}

static void fmt_cmd(char *buf, size_t len, char **argv)
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

	fmt_ratio(r, sizeof(r), res->ratio);
	fprintf(f, "  %-34s %6sx  %6.2f%% buddy accesses%s\n", name, r,
		res->buddy_frac * 100,
		res->err == -ENOSPC ? " (capacity cap not met)" : "");
}

/* The interposer's counters of process @proc, or summed over all (-1). */
static void proc_counters(const struct pf_run *r, int proc,
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
static struct pf_psnap snap_proc(const struct pf_snap *sn, int proc)
{
	struct pf_psnap z = { .stride = 1 };

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
static unsigned int nr_tables(const struct pf_run *r)
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

static void print_labels_line(FILE *f, struct rep *rp)
{
	struct pf_run *r = rp->r;

	fprintf(f, "  labels: %zu (allocations %zu); main codec %s, Buddy Threshold %.0f%%, mostly-zero %.0f%%, overall cap %s\n\n",
		rp->nlab_used, rp->n, pf_codecs[rp->main]->name,
		r->o->threshold_ppm / 1e4, r->o->zero_ppm / 1e4,
		r->o->max_ratio > 0 ? "4x-style carve-out" : "none");
}

/*
 * The head of the text report: the run, the interposer (over all
 * processes), the snapshots; @multi: the processes followed, else (one
 * table, as it has always been) the labels line of @rp.
 */
static void report_head(FILE *f, struct rep *rp, bool multi)
{
	struct pf_run *r = rp->r;
	const struct bprof_hdr *h = &r->final;
	double run = r->t_end - r->t_start, stop_sum = 0, stop_max = 0;
	struct bprof_proc c;
	char cmd[256];
	unsigned int s;

	fmt_cmd(cmd, sizeof(cmd), r->o->argv);
	for (s = 0; s < r->nsnaps; s++) {
		stop_sum += r->snaps[s].stopped_ms;
		if (r->snaps[s].stopped_ms > stop_max)
			stop_max = r->snaps[s].stopped_ms;
	}
	fprintf(f, "buddyctl profile: %s\n", cmd);
	fprintf(f, "  pid %d, exit status %d, %.2f s (%.2f s CPU, %.0f MiB max RSS); tracking allocations >= %llu B\n",
		(int)r->child,
		WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status),
		run, r->cpu_s, r->maxrss_kib / 1024.0,
		(unsigned long long)r->o->min_size);
	proc_counters(r, -1, &c);
	print_interposer(f, &c, run);
	fprintf(f, "  snapshots: %u kept of %u taken; program stopped %.1f ms per snapshot on average, %.1f ms at most, %.3f%% of the run\n",
		rp->nsnap, r->nsnaps, r->nsnaps ? stop_sum / r->nsnaps : 0,
		stop_max, run > 0 ? stop_sum / 1e3 / run * 100 : 0);
	if (r->o->free_bytes)
		fprintf(f, "  before frees of >= %llu B: %llu snapshots (kept)\n",
			(unsigned long long)r->o->free_bytes,
			(unsigned long long)h->nr_free_snaps);
	if (multi) {
		int m = pf_main_proc(r);

		fprintf(f, "  processes: %u followed, one table each below; the main one (JSON's top level) pid %d (%.63s)\n",
			nr_tables(r), m >= 0 ? (int)r->procs[m].pid : 0,
			m >= 0 ? r->procs[m].final.exe : "");
	}
	if (h->nr_no_slot)
		fprintf(f, "  not followed: %u process%s found no process slot left (%u: --processes), the first pid %d (%.63s)\n",
			h->nr_no_slot, h->nr_no_slot == 1 ? "" : "es",
			h->nprocs, (int)h->no_slot_pid, h->no_slot);
	if (multi)
		fprintf(f, "  labels of all processes: %zu (allocations %zu)\n",
			rp->nlab_used, rp->n);
	else
		print_labels_line(f, rp);
	{
		char why[512];

		if (pf_empty_reason(r, why, sizeof(why)))
			fprintf(f, "  empty: %s\n\n", why);
	}
}

/* The figures and labels of @rp, after the head or a process's title. */
static void report_body(FILE *f, struct rep *rp)
{
	struct pf_run *r = rp->r;
	char cmd[256], a[16], b[16];
	unsigned int s, c, shown;
	size_t i;
	static const char *const thr_names[] = { "10%", "20%", "30%", "40%" };

	if (rp->with_all) {
		uint64_t ex = rp->excluded_bytes, tot = rp->all_bytes;

		fmt_ratio(a, sizeof(a), ratio_of(128 * rp->all_pairs, rp->all_fig3));
		fmt_ratio(b, sizeof(b), rp->all_final.ratio);
		fprintf(f, "  --exclude: %zu labels, %.1f%% of the bytes, left out of the figures; with them: Fig. 3 %s, final %sx at %.2f%% buddy accesses\n\n",
			rp->nexcluded, tot ? 100.0 * ex / tot : 0, a, b,
			rp->all_final.buddy_frac * 100);
	}
	if (r->o->max_ratio > 0 && r->o->max_ratio != 4)
		fprintf(f, "  (overall cap %.2fx)\n\n", r->o->max_ratio);

	fprintf(f, "%4s %8s %7s %9s %9s %6s %8s %6s %9s\n", "snap", "t(s)",
		"allocs", "MiB", "read-MiB", "stride", "stop-ms", "fig3", "Fig.9");
	for (s = 0; s < rp->nsnap; s++) {
		struct pf_snap *sn = &r->snaps[rp->snap_of[s]];
		struct pf_psnap pp = snap_proc(sn, rp->proc);

		fmt_ratio(a, sizeof(a), ratio_of(128 * rp->snap_pairs[s],
						 rp->snap_fig3[s]));
		fprintf(f, "%4u %8.2f %7llu %9.1f %9.1f %6llu %8.1f %6s %8.2f%%%s\n",
			s, sn->t, (unsigned long long)pp.allocs, pp.bytes / MIB,
			pp.sampled / MIB, (unsigned long long)pp.stride,
			sn->stopped_ms, a, rp->series[s].frac * 100,
			sn->requested ? "  (requested)" :
			sn->dropped ? "  (its last, dropped for the others)" : "");
	}

	fprintf(f, "\nFig. 3  optimistic ratio (entry sizes 0/8/16/32/64/80/96/128 B):\n ");
	for (c = 0; c < PF_NC; c++) {
		fmt_ratio(a, sizeof(a), ratio_of(128 * rp->pairs, rp->fig3[c]));
		fprintf(f, " %s %s", pf_codecs[c]->name, a);
	}
	fmt_ratio(a, sizeof(a), ratio_of(128 * rp->pairs, rp->fig3_best));
	fprintf(f, "  best-codec-per-allocation %s\n", a);
	fmt_ratio(a, sizeof(a), rp->cmp.ideal_ratio);
	fprintf(f, "        with Buddy's sizes (0/8/32/64/96/128 B), %s: %s\n",
		pf_codecs[rp->main]->name, a);
	fprintf(f, "Fig. 7  design steps (%s, threshold %.0f%%):\n",
		pf_codecs[rp->main]->name, r->o->threshold_ppm / 1e4);
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
	for (c = 0; c < PF_NC; c++)
		print_result(f, pf_codecs[c]->name, &rp->final_codec[c]);
	print_result(f, "best codec per allocation", &rp->best_alloc);
	print_result(f, "per label, best codec (profile file)", &rp->per_label);

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
		struct pf_label *l = &r->labels[rp->order[i]];
		uint64_t lp = 0, lf = 0;
		char site[160], s0[96] = "", s1[96] = "";

		for (s = 0; s < rp->nsnap; s++) {
			lp += rp->lab_pairs[(size_t)rp->order[i] * rp->nsnap + s];
			lf += rp->lab_fig3[(size_t)rp->order[i] * rp->nsnap + s];
		}
		fmt_ratio(a, sizeof(a), ratio_of(128 * lp, lf));
		if (l->nframes > 0)
			symbolize(r, &l->frames[0], s0, sizeof(s0));
		/* the caller, and the outermost frame kept (the most specific) */
		if (l->nframes > 1)
			symbolize(r, &l->frames[l->nframes - 1], s1, sizeof(s1));
		snprintf(site, sizeof(site), "%s%s%s", s0,
			 *s1 ? (l->nframes > 2 ? " <..< " : " < ") : "", s1);
		if (l->buddy_frac_err > 0)
			snprintf(b, sizeof(b), "%.2f+-%.2f%%", l->buddy_frac * 100,
				 l->buddy_frac_err * 100);
		else
			snprintf(b, sizeof(b), "%.2f%%", l->buddy_frac * 100);
		fprintf(f, "%-15s %6u %10llu %8.1f %8s %5s %5s %14s  %.100s\n",
			l->name, l->nallocs, (unsigned long long)l->size,
			rp->nsnap ? l->bytes_total / MIB / rp->nsnap : 0, a,
			target_short(l->target), pf_codecs[l->codec]->name,
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
				fmt_ratio(b, sizeof(b), ratio_of(128 * rp->lab_pairs[li],
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
static int report_text(FILE *f, struct pf_run *r)
{
	double run = r->t_end - r->t_start;
	unsigned int p, k = 0, n = nr_tables(r);
	int m = pf_main_proc(r), err;
	struct rep rp;

	if (n <= 1) {
		err = rep_make(r, m, &rp);
		if (!err) {
			report_head(f, &rp, false);
			report_body(f, &rp);
		}
		free_rep(&rp);
		return err;
	}
	err = rep_make(r, -1, &rp);
	if (!err)
		report_head(f, &rp, true);
	free_rep(&rp);
	for (p = 0; p < r->nprocs && !err; p++) {
		struct pf_proc *pr = &r->procs[p];

		if (!pr->pid)
			continue;
		err = rep_make(r, p, &rp);
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
		free_rep(&rp);
	}
	return err;
}

/* ---- JSON ------------------------------------------------------------------------- */

static struct json_object *jratio(double v)
{
	char s[32];

	if (isinf(v))
		return json_object_new_string("inf");
	snprintf(s, sizeof(s), "%.4f", v);
	return json_object_new_double_s(v, s);
}

static struct json_object *jfrac(double v)
{
	char s[32];

	snprintf(s, sizeof(s), "%.6f", v);
	return json_object_new_double_s(v, s);
}

static struct json_object *jresult(const struct buddy_heur_result *res)
{
	struct json_object *o = json_object_new_object();
	struct json_object *nt = json_object_new_object();
	static const char *const tn[] = { "16x", "4x", "2x", "4/3x", "1x" };
	int i;

	json_object_object_add(o, "ratio", jratio(res->ratio));
	json_object_object_add(o, "buddy_frac", jfrac(res->buddy_frac));
	json_object_object_add(o, "threshold", jfrac(res->threshold_ppm / 1e6));
	json_object_object_add(o, "logical_bytes", json_object_new_int64(res->logical_bytes));
	json_object_object_add(o, "device_bytes", json_object_new_int64(res->device_bytes));
	json_object_object_add(o, "steps", json_object_new_int(res->steps));
	json_object_object_add(o, "error", json_object_new_int(res->err));
	for (i = 0; i < BUDDY_HEUR_NR_TARGETS; i++)
		json_object_object_add(nt, tn[i], json_object_new_int(res->nr_by_target[i]));
	json_object_object_add(o, "allocations_by_target", nt);
	return o;
}

/* A JSON string of @s made valid UTF-8; exits without memory. */
static struct json_object *jstring(const char *s)
{
	struct json_object *o = buddy_json_string(s);

	if (!o) {
		pf_err("%s", strerror(ENOMEM));
		exit(1);
	}
	return o;
}

static void jadd(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

/* The interposer's counters of @c, of the process that has them. */
static void json_counters(struct json_object *o, const struct bprof_proc *c)
{
	jadd(o, "allocations", json_object_new_int64(c->nr_alloc));
	jadd(o, "frees", json_object_new_int64(c->nr_free));
	jadd(o, "dropped", json_object_new_int64(c->nr_dropped));
	jadd(o, "short_stacks", json_object_new_int64(c->nr_unwind_short));
	jadd(o, "exec_resets", json_object_new_int64(c->nr_exec_reset));
	jadd(o, "partial_unmaps", json_object_new_int64(c->nr_partial_unmap));
}

/*
 * The snapshots, figures and labels of @rp into @root: the report's top
 * level for the main process, and each entry of "processes".
 */
static void json_figures(struct json_object *root, struct rep *rp)
{
	struct pf_run *r = rp->r;
	struct json_object *o, *arr, *x;
	static const char *const thr_names[] = { "10", "20", "30", "40" };
	unsigned int s, c, k;
	size_t i;

	arr = json_object_new_array();
	for (s = 0; s < r->nsnaps; s++) {
		struct pf_snap *sn = &r->snaps[s];
		struct pf_psnap pp = snap_proc(sn, rp->proc);

		x = json_object_new_object();
		jadd(x, "index", json_object_new_int(rp->final_of[s]));
		jadd(x, "t_s", jfrac(sn->t));
		jadd(x, "kept", json_object_new_boolean(rp->final_of[s] >= 0));
		jadd(x, "requested", json_object_new_boolean(sn->requested));
		jadd(x, "allocations", json_object_new_int64(pp.allocs));
		jadd(x, "bytes", json_object_new_int64(pp.bytes));
		jadd(x, "readable_bytes", json_object_new_int64(pp.readable));
		jadd(x, "sampled_bytes", json_object_new_int64(pp.sampled));
		jadd(x, "stride", json_object_new_int64(pp.stride));
		jadd(x, "stale", json_object_new_int64(pp.stale));
		jadd(x, "unread_bytes", json_object_new_int64(pp.unread));
		jadd(x, "not_stopped", json_object_new_int(pp.not_stopped));
		jadd(x, "stopped_ms", jfrac(sn->stopped_ms));
		jadd(x, "classify_ms", jfrac(sn->classify_ms));
		if (rp->final_of[s] >= 0) {
			k = rp->final_of[s];
			jadd(x, "fig3", jratio(ratio_of(128 * rp->snap_pairs[k],
							rp->snap_fig3[k])));
			jadd(x, "buddy_frac", jfrac(rp->series[k].frac));
		}
		json_object_array_add(arr, x);
	}
	jadd(root, "snapshots", arr);

	o = json_object_new_object();
	for (c = 0; c < PF_NC; c++)
		jadd(o, pf_codecs[c]->name, jratio(ratio_of(128 * rp->pairs, rp->fig3[c])));
	jadd(o, "best_codec", jratio(ratio_of(128 * rp->pairs, rp->fig3_best)));
	jadd(o, "buddy_sizes", jratio(rp->cmp.ideal_ratio));
	jadd(o, "pairs", json_object_new_int64(rp->pairs));
	jadd(root, "fig3", o);

	o = json_object_new_object();
	x = jresult(&rp->cmp.naive);
	jadd(x, "target", json_object_new_string(buddy_target_name(rp->cmp.naive_target)));
	jadd(o, "naive", x);
	jadd(o, "per_allocation", jresult(&rp->cmp.per_alloc));
	jadd(o, "plus16x", jresult(&rp->cmp.plus16x));
	jadd(root, "fig7", o);

	o = json_object_new_object();
	for (s = 0; s < BUDDY_HEUR_SWEEP_NR; s++)
		jadd(o, thr_names[s], jresult(&rp->sweep[s]));
	jadd(o, "best", jresult(&rp->cmp.best));
	jadd(root, "fig10", o);

	arr = json_object_new_array();
	for (s = 0; s < rp->nsnap; s++) {
		x = json_object_new_object();
		jadd(x, "pairs", json_object_new_int64(rp->series[s].pairs));
		jadd(x, "over", json_object_new_int64(rp->series[s].over));
		jadd(x, "buddy_frac", jfrac(rp->series[s].frac));
		json_object_array_add(arr, x);
	}
	jadd(root, "fig9", arr);

	o = json_object_new_object();
	for (c = 0; c < PF_NC; c++)
		jadd(o, pf_codecs[c]->name, jresult(&rp->final_codec[c]));
	jadd(o, "best_per_allocation", jresult(&rp->best_alloc));
	jadd(o, "per_label_best", jresult(&rp->per_label));
	jadd(root, "codecs", o);

	if (rp->with_all) {
		o = json_object_new_object();
		jadd(o, "labels", json_object_new_int64(rp->nexcluded));
		jadd(o, "bytes_share", jfrac(rp->all_bytes ? (double)rp->excluded_bytes /
					     rp->all_bytes : 0));
		jadd(o, "fig3", jratio(ratio_of(128 * rp->all_pairs, rp->all_fig3)));
		jadd(o, "naive", jresult(&rp->all_naive));
		jadd(o, "plus16x", jresult(&rp->all_final));
		jadd(root, "with_excluded", o);
	}
	jadd(root, "nr_labels", json_object_new_int64(rp->nlab_used));
	arr = json_object_new_array();
	for (i = 0; i < rp->nlab_used; i++) {
		unsigned int li = rp->order[i];
		struct pf_label *l = &r->labels[li];
		struct json_object *st = json_object_new_array();
		struct json_object *by = json_object_new_array();
		struct json_object *ra = json_object_new_array();
		char sym[256];

		x = json_object_new_object();
		jadd(x, "label", json_object_new_string(l->name));
		jadd(x, "size", json_object_new_int64(l->size));
		jadd(x, "kind", json_object_new_string(l->kind == BPROF_KIND_MMAP ? "mmap" : "heap"));
		jadd(x, "allocations", json_object_new_int(l->nallocs));
		jadd(x, "target", json_object_new_string(buddy_target_name(l->target)));
		jadd(x, "codec", json_object_new_string(pf_codecs[l->codec]->name));
		jadd(x, "buddy_frac", jfrac(l->buddy_frac));
		jadd(x, "buddy_frac_err", jfrac(l->buddy_frac_err));
		for (k = 0; k < l->nframes; k++) {
			symbolize(r, &l->frames[k], sym, sizeof(sym));
			json_object_array_add(st, json_object_new_string(sym));
		}
		jadd(x, "stack", st);
		for (s = 0; s < rp->nsnap; s++) {
			size_t q = (size_t)li * rp->nsnap + s;

			json_object_array_add(by, json_object_new_int64(rp->lab_bytes[q]));
			json_object_array_add(ra, rp->lab_pairs[q] ?
				jratio(ratio_of(128 * rp->lab_pairs[q], rp->lab_fig3[q])) :
				NULL);
		}
		{
			static const char *const hk[BUDDY_CODE_NR] = {
				"zero", "c8", "c32", "c64", "c96", "raw",
			};
			struct json_object *hs = json_object_new_object();

			for (c = 0; c < PF_NC; c++) {
				struct json_object *hc = json_object_new_object();
				unsigned int q;

				for (q = 0; q < BUDDY_CODE_NR; q++)
					jadd(hc, hk[q], json_object_new_int64(
						rp->lab_hist[li][c][q]));
				jadd(hs, pf_codecs[c]->name, hc);
			}
			jadd(x, "histogram", hs);
		}
		jadd(x, "bytes_per_snapshot", by);
		jadd(x, "fig3_per_snapshot", ra);
		json_object_array_add(arr, x);
	}
	jadd(root, "labels", arr);
}

/*
 * The JSON report: the top level is the main process's (pf_main_proc()),
 * as it has always been with one process; "processes" has one entry per
 * process with a table (its pid, executable, counters, and the same
 * snapshots, figures and labels as the top level, of its own).
 */
static int report_json(FILE *f, struct pf_run *r)
{
	const struct bprof_hdr *h = &r->final;
	struct json_object *root = json_object_new_object(), *o, *arr, *x;
	int m = pf_main_proc(r), err;
	struct bprof_proc c;
	struct rep rp;
	unsigned int s, p;
	char **av;

	err = rep_make(r, m, &rp);
	if (err) {
		free_rep(&rp);
		json_object_put(root);
		return err;
	}
	arr = json_object_new_array();
	for (av = r->o->argv; *av; av++)
		json_object_array_add(arr, json_object_new_string(*av));
	jadd(root, "command", arr);
	jadd(root, "pid", json_object_new_int(r->child));
	jadd(root, "exit_status", json_object_new_int(
		WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status)));
	jadd(root, "duration_s", jfrac(r->t_end - r->t_start));
	jadd(root, "cpu_s", jfrac(r->cpu_s));
	jadd(root, "maxrss_kib", json_object_new_int64(r->maxrss_kib));
	{
		double stop = 0;

		for (s = 0; s < r->nsnaps; s++)
			stop += r->snaps[s].stopped_ms;
		jadd(root, "stopped_s", jfrac(stop / 1e3));
	}
	jadd(root, "min_size", json_object_new_int64(r->o->min_size));
	jadd(root, "codec", json_object_new_string(pf_codecs[rp.main]->name));
	jadd(root, "threshold", jfrac(r->o->threshold_ppm / 1e6));

	o = json_object_new_object();
	proc_counters(r, m, &c);
	json_counters(o, &c);
	jadd(o, "free_snapshots", json_object_new_int64(h->nr_free_snaps));
	jadd(o, "hook_s", jfrac(c.hook_ns / 1e9));
	jadd(o, "owner_pid", json_object_new_int(m >= 0 ? r->procs[m].pid : 0));
	jadd(o, "not_followed", json_object_new_int64(h->nr_not_followed));
	jadd(o, "forked", json_object_new_int64(h->nr_forked));
	{
		char first[sizeof(h->not_followed) + 1], why[512];

		memcpy(first, h->not_followed, sizeof(h->not_followed));
		first[sizeof(h->not_followed)] = 0;
		jadd(o, "not_followed_first", jstring(first));
		jadd(o, "empty_reason", pf_empty_reason(r, why, sizeof(why)) ?
		     jstring(why) : NULL);
		jadd(o, "processes", json_object_new_int(nr_tables(r)));
		jadd(o, "process_slots", json_object_new_int(h->nprocs));
		jadd(o, "no_slot", json_object_new_int64(h->nr_no_slot));
		memcpy(first, h->no_slot, sizeof(h->no_slot));
		first[sizeof(h->no_slot)] = 0;
		jadd(o, "no_slot_first", jstring(first));
		jadd(o, "no_slot_pid", json_object_new_int(h->no_slot_pid));
	}
	jadd(root, "interposer", o);
	json_figures(root, &rp);
	free_rep(&rp);

	arr = json_object_new_array();
	for (p = 0; p < r->nprocs; p++) {
		struct pf_proc *pr = &r->procs[p];

		if (!pr->pid)
			continue;
		err = rep_make(r, p, &rp);
		if (err) {
			free_rep(&rp);
			json_object_put(arr);
			json_object_put(root);
			return err;
		}
		x = json_object_new_object();
		jadd(x, "pid", json_object_new_int(pr->pid));
		jadd(x, "exe", jstring(pr->final.exe));
		jadd(x, "main", json_object_new_boolean((int)p == m));
		jadd(x, "exited", json_object_new_boolean(pr->gone));
		o = json_object_new_object();
		json_counters(o, &pr->final);
		jadd(o, "hook_s", jfrac(pr->final.hook_ns / 1e9));
		jadd(o, "forked", json_object_new_int64(pr->final.nr_forked));
		jadd(o, "peak_live_bytes",
		     json_object_new_int64(pr->final.peak_live_bytes));
		jadd(x, "interposer", o);
		jadd(x, "codec", json_object_new_string(pf_codecs[rp.main]->name));
		json_figures(x, &rp);
		free_rep(&rp);
		json_object_array_add(arr, x);
	}
	jadd(root, "processes", arr);

	fprintf(f, "%s\n", json_object_to_json_string_ext(root,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}

/* ---- files ------------------------------------------------------------------------ */

static int write_profile(struct rep *rp)
{
	struct pf_run *r = rp->r;
	size_t n = rp->nlab_used < BUDDY_PROFILE_MAX ? rp->nlab_used :
		   BUDDY_PROFILE_MAX, i;
	struct buddy_profile_entry *e = calloc(n + 1, sizeof(*e));
	char cmd[512], comment[1024], rt[16], procs[160] = "";
	time_t now = time(NULL);
	unsigned int np = nr_tables(r);
	int err;

	if (!e)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct pf_label *l = &r->labels[rp->order[i]];

		e[i].uid = r->o->uid;
		e[i].target = l->target;
		e[i].codec = pf_codecs[l->codec]->id;
		memcpy(e[i].label, l->name, BUDDY_LABEL_LEN);
	}
	fmt_cmd(cmd, sizeof(cmd), r->o->argv);
	fmt_ratio(rt, sizeof(rt), rp->per_label.ratio);
	if (np > 1)
		snprintf(procs, sizeof(procs),
			 "the labels of %u processes; a label in several: one decision over all its allocations\n",
			 np);
	snprintf(comment, sizeof(comment),
		 "buddyctl profile of: %s\n"
		 "%s%s"
		 "Buddy Threshold %.0f%%, mostly-zero %.0f%%; %u snapshots; %zu labels%s\n"
		 "expected ratio %sx, %.2f%% buddy accesses\n"
		 "uid<TAB>label<TAB>target<TAB>codec (buddyd's state-file format)",
		 cmd, ctime(&now), procs, r->o->threshold_ppm / 1e4,
		 r->o->zero_ppm / 1e4, rp->nsnap, rp->nlab_used,
		 n < rp->nlab_used ? " (the largest 4096 kept)" : "", rt,
		 rp->per_label.buddy_frac * 100);
	err = buddy_profile_save(r->o->profile_out, e, n, comment);
	free(e);
	return err;
}

static int write_index(struct rep *rp)
{
	struct pf_run *r = rp->r;
	char path[4096];
	size_t i, j;
	FILE *f;

	if (pf_mkdir_p(r->o->dumps))
		return -errno;
	snprintf(path, sizeof(path), "%s/index.tsv", r->o->dumps);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "snapshot\tt_s\tseq\tlabel\tkind\taddr\tsize\tstride\tfile\n");
	for (i = 0; i < rp->n; i++) {
		struct pf_alloc *a = &r->allocs[rp->idx[i]];

		for (j = 0; j < a->nobs; j++) {
			int fs = rp->final_of[a->obs[j].snap];
			struct pf_snap *sn = &r->snaps[a->obs[j].snap];

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

int pf_report(struct pf_run *r)
{
	struct buddy_replace out;
	FILE *f = stdout;
	struct rep rp;
	int err, ret = 0;

	if (r->o->out) {
		err = buddy_replace_open(&out, r->o->out);
		if (err) {
			pf_err("%s: %s", r->o->out, strerror(-err));
			return -1;
		}
		f = out.f;
	}
	if (r->o->json)
		err = report_json(f, r);
	else
		err = report_text(f, r);
	if (err) {
		pf_err("%s", strerror(-err));
		if (f != stdout)
			buddy_replace_abort(&out);
		return -1;
	}
	if (f != stdout) {
		/* a failed write leaves the old report as it was */
		err = buddy_replace_commit(&out);
		if (err) {
			pf_err("%s: %s", r->o->out, strerror(-err));
			ret = -1;
		}
	} else if (fflush(f) || ferror(f)) {
		pf_err("writing the report: %s", strerror(errno));
		ret = -1;
	}
	if (r->o->json_out) {
		err = buddy_replace_open(&out, r->o->json_out);
		if (!err) {
			err = report_json(out.f, r);
			if (err)
				buddy_replace_abort(&out);
			else
				err = buddy_replace_commit(&out);
		}
		if (err) {
			pf_err("%s: %s", r->o->json_out,
				     strerror(-err));
			ret = -1;
		}
	}
	if (!r->o->profile_out && !r->o->dumps)
		return ret;
	/* The profile file: the labels of all processes, pooled by label. */
	err = rep_make(r, -1, &rp);
	if (err) {
		pf_err("%s", strerror(-err));
		free_rep(&rp);
		return -1;
	}
	if (r->o->profile_out) {
		err = write_profile(&rp);
		if (err) {
			pf_err("%s: %s", r->o->profile_out,
				     strerror(-err));
			ret = -1;
		} else {
			pf_msg(r, "profile of %zu labels written to %s",
			       rp.nlab_used < BUDDY_PROFILE_MAX ? rp.nlab_used :
			       (size_t)BUDDY_PROFILE_MAX, r->o->profile_out);
		}
	}
	if (r->o->dumps) {
		err = write_index(&rp);
		if (err) {
			pf_err("%s/index.tsv: %s", r->o->dumps,
				     strerror(-err));
			ret = -1;
		}
	}
	free_rep(&rp);
	return ret;
}
