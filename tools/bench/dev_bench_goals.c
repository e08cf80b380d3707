// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench_goals.c - dev_bench's goals against zram, judged in a paired
 * pass after the table: buddy and zram open together, block pairs of
 * their operation alternating between them, the median of the pairs'
 * rate ratios (Documentation/benchmarks.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "dev_bench.h"

/* ---- goals: buddy and zram in alternating blocks ---- */

unsigned int pair_blocks = 128;	/* -B: block pairs per goal */

unsigned int pair_ops = 256;	/* -O: ops per block */



struct goal {
	unsigned int target, codec;	/* the buddy allocation */
	unsigned int col;		/* the operation, a column of the table */
	double factor;			/* goal: buddy >= factor x zram */
	char sys[24];			/* "buddy 2x bpc": known once allocated */
	unsigned int ops;		/* per block, on each side */
	int state;			/* G_* */
	struct buddy_paired res;	/* by the wall clock */
	struct buddy_paired cpu;	/* by the thread's CPU time */
	bool cpu_judged;
};

enum { G_TODO, G_JUDGED, G_UNMEASURED, G_SKIP };

#define MAX_GOALS	16

static struct goal goals[MAX_GOALS];

static unsigned int nr_goals;

static char pair_zsys[24];		/* "zram lz4" */

static u64 *pair_oa, *pair_ob;		/* offsets: buddy's, zram's */

static double *pair_ra, *pair_rb, *pair_ratio;

static double *pair_ca, *pair_cb;	/* the same rates by CPU time */

void add_goal(unsigned int target, unsigned int codec,
		     unsigned int col, double factor)
{
	if (nr_goals == MAX_GOALS)
		die("too many goals");
	goals[nr_goals++] = (struct goal){ .target = target, .codec = codec,
					   .col = col, .factor = factor };
}

/*
 * One block: @k ops of @len bytes at the offsets @o on @fd, timed alone;
 * a read's destination is poisoned before and checked after the clock.
 */
static double pair_block(int fd, bool write, const u64 *o, unsigned int k,
			 size_t len, const char *what, double *cpu)
{
	struct timespec c0, c1;
	unsigned int i;
	double t;

	if (!write)
		for (i = 0; i < k; i++)
			memset(dst + o[i], 0x5a, len);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	t = now();
	for (i = 0; i < k; i++)
		io_full(fd, write, (write ? src : dst) + o[i], len, o[i], what);
	t = now() - t;
	/* the kernel's work for the calls (buddy.ko's codec, zram's) is ours */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	*cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) * 1e-9;
	if (!write)
		check(o, k, len, what);
	return t;
}

/* Goal @g on the buddy allocation @bfd against zram's @zfd. */
static void pair_goal(struct goal *g, int bfd, int zfd)
{
	bool write = g->col == C_SEQ_WR || g->col == C_WR4K;
	unsigned int k = pair_ops, nb = pair_blocks, i;
	size_t la = BLK, lb = BLK, n;
	char wa[64], wb[64];
	double ta = 0, tb = 0, t = now();

	if (g->col == C_SEQ_RD || g->col == C_SEQ_WR) {
		/* the bytes of @pair_ops 4 KiB ops, front to back, wrapping */
		size_t slots = cell_bytes / SEQ_IO;

		k = pair_ops / (SEQ_IO / BLK) ? pair_ops / (SEQ_IO / BLK) : 1;
		la = lb = SEQ_IO;
		for (n = 0; n < (size_t)(nb + 1) * k; n++)
			pair_oa[n] = pair_ob[n] = n % slots * SEQ_IO;
	} else if (g->col == C_KIOPS) {
		/* 128-byte reads; zram reads the block that holds each */
		la = BUDDY_ENTRY_SIZE;
		lb = zram_small;
		gen_offsets(pair_oa, (size_t)(nb + 1) * k, BUDDY_ENTRY_SIZE,
			    SEED ^ 0x9a17ed ^ g->target);
		for (n = 0; n < (size_t)(nb + 1) * k; n++)
			pair_ob[n] = pair_oa[n] - pair_oa[n] % zram_small;
	} else {
		gen_offsets(pair_oa, (size_t)(nb + 1) * k, BLK,
			    SEED ^ 0x9a17ed ^ g->col);
		memcpy(pair_ob, pair_oa, (size_t)(nb + 1) * k * sizeof(*pair_ob));
	}
	g->ops = k;
	snprintf(wa, sizeof(wa), "paired %s on %s", col_names[g->col], g->sys);
	snprintf(wb, sizeof(wb), "paired %s on %s", col_names[g->col],
		 pair_zsys);

	/* pair 0 is untimed; then pair i: buddy first when i is odd */
	for (i = 0; i <= nb; i++) {
		const u64 *oa = pair_oa + (size_t)i * k;
		const u64 *ob = pair_ob + (size_t)i * k;
		double a, b, ca, cb;

		if (i % 2 == 0) {
			b = pair_block(zfd, write, ob, k, lb, wb, &cb);
			a = pair_block(bfd, write, oa, k, la, wa, &ca);
		} else {
			a = pair_block(bfd, write, oa, k, la, wa, &ca);
			b = pair_block(zfd, write, ob, k, lb, wb, &cb);
		}
		if (!i)
			continue;
		/* ops/s; a block the clock did not see is INFINITY: skipped */
		pair_ra[i - 1] = a > 0 ? k / a : INFINITY;
		pair_rb[i - 1] = b > 0 ? k / b : INFINITY;
		pair_ca[i - 1] = ca > 0 ? k / ca : INFINITY;
		pair_cb[i - 1] = cb > 0 ? k / cb : INFINITY;
		ta += a;
		tb += b;
	}
	if (write) {
		/* after the paired writes: both hold the mixed data still */
		read_back(bfd, wa, datagen_class_name(DATAGEN_MIXED));
		read_back(zfd, wb, datagen_class_name(DATAGEN_MIXED));
	}
	g->state = buddy_paired_judge(pair_ra, pair_rb, nb, g->factor,
				      pair_ratio, &g->res) ? G_UNMEASURED :
							      G_JUDGED;
	g->cpu_judged = !buddy_paired_judge(pair_ca, pair_cb, nb, g->factor,
					    pair_ratio, &g->cpu);
	progress("# paired %-14s %-6s: %u blocks of %u ops, %.2f / %.2f ms a block (buddy / zram), %.1fs\n",
		 g->sys, col_names[g->col], nb, k, ta / nb * 1e3, tb / nb * 1e3,
		 now() - t);
}

/*
 * The paired pass: zram set up once with the mixed data, then each buddy
 * allocation the goals name, written with the same data and kept open
 * while it runs its goals against zram.
 */
void pair_goals(int devfd, const char *zdev, const char *alg)
{
	size_t nops = (size_t)(pair_blocks + 1) * pair_ops;
	struct buddy_alloc_stat st;
	unsigned int i, j;
	int zfd, bfd, ret;

	pair_oa = calloc(nops, sizeof(*pair_oa));
	pair_ob = calloc(nops, sizeof(*pair_ob));
	pair_ra = calloc(pair_blocks, sizeof(*pair_ra));
	pair_rb = calloc(pair_blocks, sizeof(*pair_rb));
	pair_ratio = calloc(pair_blocks, sizeof(*pair_ratio));
	pair_ca = calloc(pair_blocks, sizeof(*pair_ca));
	pair_cb = calloc(pair_blocks, sizeof(*pair_cb));
	if (!pair_oa || !pair_ob || !pair_ra || !pair_rb || !pair_ratio ||
	    !pair_ca || !pair_cb)
		die("out of memory (paired pass, %zu ops)", nops);

	datagen_fill(DATAGEN_MIXED, SEED + DATAGEN_MIXED, src, cell_bytes);
	snprintf(pair_zsys, sizeof(pair_zsys), "zram %s", alg);
	zram_setup(alg);
	zfd = open(zdev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (zfd < 0)
		die("open %s O_DIRECT: %s", zdev, strerror(errno));
	run_seq(zfd, true);

	for (i = 0; i < nr_goals; i++) {
		if (goals[i].state != G_TODO)
			continue;
		bfd = buddy_alloc_simple(devfd, cell_bytes, goals[i].target,
					 goals[i].codec, "dev_bench-paired",
					 NULL);
		if (bfd < 0)
			die("allocation of %zu bytes at %s: %s", cell_bytes,
			    buddy_target_name(goals[i].target),
			    buddy_strerror(-bfd, BUDDY_OP_ALLOC));
		ret = buddy_alloc_stat(bfd, &st);
		if (ret)
			die("BUDDY_IOC_ALLOC_STAT: %s",
			    buddy_strerror(-ret, BUDDY_OP_STAT));
		run_seq(bfd, true);
		for (j = i; j < nr_goals; j++) {
			struct goal *g = &goals[j];

			if (g->state != G_TODO || g->target != goals[i].target ||
			    g->codec != goals[i].codec)
				continue;
			snprintf(g->sys, sizeof(g->sys), "buddy %s %s",
				 buddy_target_name(st.target),
				 buddy_codec_name(st.codec));
			/* the small-read goal is the compressed targets' */
			if (g->col == C_KIOPS && st.codec == BUDDY_CODEC_NONE)
				g->state = G_SKIP;
			else
				pair_goal(g, bfd, zfd);
		}
		close(bfd);
	}
	close(zfd);
}

/* ---- output ---- */

void fmt_val(char *b, size_t len, double v)
{
	if (v == NA)
		snprintf(b, len, "-");
	else if (v >= 10000)
		snprintf(b, len, "%.0f", v);
	else if (v >= 100)
		snprintf(b, len, "%.0f", v);
	else if (v >= 10)
		snprintf(b, len, "%.1f", v);
	else
		snprintf(b, len, "%.2f", v);
}

static const struct row *find_row(const char *sys, const char *cls)
{
	unsigned int i;

	for (i = 0; i < nr_rows; i++)
		if (!strcmp(rows[i].sys, sys) && !strcmp(rows[i].cls, cls))
			return &rows[i];
	return NULL;
}

/*
 * The ratio of @col of @sys to zram's @zcol in the table's cells, taken
 * within each round: their median, lowest and highest into @med, @lo and
 * @hi; the number of rounds, 0 when a cell is missing.
 */
static unsigned int table_ratio(const struct row *z, const char *sys,
				unsigned int col, unsigned int zcol,
				double *med, double *lo, double *hi)
{
	const struct row *r = find_row(sys, z->cls);
	double ratio[MAX_ROUNDS];
	unsigned int j, n = 0;

	for (j = 0; r && j < nr_rounds; j++)
		if (r->rv[j][col] != NA && z->rv[j][zcol] != NA &&
		    z->rv[j][zcol] > 0)
			ratio[n++] = r->rv[j][col] / z->rv[j][zcol];
	if (!n || n != nr_rounds)
		return 0;
	*med = buddy_median(ratio, n);		/* sorts ratio[] */
	*lo = ratio[0];
	*hi = ratio[n - 1];
	return n;
}

/* One goal's line: the paired judgement. */
static void print_goal(FILE *f, const struct goal *g)
{
	const struct buddy_paired *p = &g->res;
	char blk[32];

	if (g->col == C_SEQ_RD || g->col == C_SEQ_WR)
		snprintf(blk, sizeof(blk), "%u x %u KiB", g->ops, SEQ_IO >> 10);
	else
		snprintf(blk, sizeof(blk), "%u ops", g->ops);
	fprintf(f, "goal: %-14s %-6s >= %.1fx %s %-6s:", g->sys,
		col_names[g->col], g->factor, pair_zsys, col_names[g->col]);
	if (g->state != G_JUDGED) {
		fprintf(f, " not measured (%u of %u blocks without a rate)\n",
			p->skipped, pair_blocks);
		return;
	}
	fprintf(f, " %6.2fx  %s  (paired, %u blocks of %s: IQR %.2f-%.2fx",
		p->median, p->met ? "met" : "NOT met", p->n, blk, p->q1, p->q3);
	if (p->skipped)
		fprintf(f, "; %u skipped", p->skipped);
	fprintf(f, ")");
	if (g->cpu_judged)
		fprintf(f, "; by thread CPU time %.2fx %s (IQR %.2f-%.2fx)",
			g->cpu.median, g->cpu.met ? "met" : "NOT met",
			g->cpu.q1, g->cpu.q3);
	fprintf(f, "\n");
}

/*
 * The goals, judged on the paired pass (pair_goals()); then,
 * for comparison only, the same ratios from the table's cells.
 */
void print_goals(FILE *f)
{
	const struct row *z = NULL;
	double med, lo, hi;
	unsigned int i, n;

	if (!nr_goals) {
		fprintf(f, pair_blocks ?
			"goals: need zram (-z) and the mixed class in the run\n" :
			"goals: not judged (-B 0)\n");
		return;
	}
	fprintf(f, "goals (mixed data, against %s: %u block pairs per goal, each the same ops on\n"
		"  buddy and on zram back to back; judged on the median of the pairs' ratios):\n",
		pair_zsys, pair_blocks);
	for (i = 0; i < nr_goals; i++)
		if (goals[i].state != G_SKIP)
			print_goal(f, &goals[i]);

	for (i = 0; i < nr_rows; i++)
		if (!strcmp(rows[i].sys, pair_zsys) &&
		    !strcmp(rows[i].cls, "mixed"))
			z = &rows[i];
	if (!z)
		return;
	fprintf(f, "the same ratios from the table's cells (not judged; %s):\n",
		nr_rounds > 1 ? "the median of the rounds' ratios, their range" :
				"one round");
	for (i = 0; i < nr_goals; i++) {
		const struct goal *g = &goals[i];

		if (g->state == G_SKIP)
			continue;
		n = table_ratio(z, g->sys, g->col, g->col, &med, &lo, &hi);
		fprintf(f, "  table: %-14s %-6s / %s %-6s:", g->sys,
			col_names[g->col], z->sys, col_names[g->col]);
		if (!n)
			fprintf(f, " not in the table\n");
		else if (n > 1)
			fprintf(f, " %6.2fx  (%u rounds: %.2f-%.2fx)\n", med, n,
				lo, hi);
		else
			fprintf(f, " %6.2fx\n", med);
	}
}
