// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench - throughput of /dev/buddy allocations, next to an uncompressed
 * allocation, memcpy and zram, all in the same (guest) kernel.
 *
 *   dev_bench [-m MIB] [-r KIB] [-k KIB] [-c CLASS,...] [-t TARGET,...]
 *             [-z /dev/zramN] [-a ALG] [-R ROUNDS] [-B BLOCKS] [-O OPS] [-q]
 *
 * What each cell and column measures, the goals and how they are judged:
 * Documentation/benchmarks.rst.
 *
 *   dev_bench.c        options, the order of the cells, the table
 *   dev_bench_cells.c  one cell: buddy, zram or memcpy
 *   dev_bench_goals.c  the goals against zram, in a paired pass
 *   dev_bench_mmap.c   the resident window's table
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

static void print_table(FILE *f, const char *params, const char *zram_note)
{
	int last_group = -1;
	unsigned int i, k;
	char b[32];

	fprintf(f, "=== dev_bench table ===\n");
	fprintf(f, "%s", params);
	fprintf(f, "%-16s %-8s", "system", "class");
	for (k = 0; k < C_NR; k++)
		fprintf(f, " %8s", col_names[k]);
	fprintf(f, " %7s %6s\n", "spill%", "ratio");
	for (i = 0; i < nr_rows; i++) {
		const struct row *r = &rows[i];

		if (r->group != last_group) {
			for (k = 0; k < 16 + 1 + 8 + 9 * C_NR + 8 + 7; k++)
				fputc('-', f);
			fputc('\n', f);
			last_group = r->group;
		}
		fprintf(f, "%-16s %-8s", r->sys, r->cls);
		for (k = 0; k < C_NR; k++) {
			fmt_val(b, sizeof(b), r->v[k]);
			fprintf(f, " %8s", b);
		}
		if (r->spill == NA)
			snprintf(b, sizeof(b), "-");
		else
			snprintf(b, sizeof(b), "%.1f", r->spill);
		fprintf(f, " %7s", b);
		if (r->ratio == -2)
			snprintf(b, sizeof(b), "all0");
		else if (r->ratio == NA)
			snprintf(b, sizeof(b), "-");
		else
			snprintf(b, sizeof(b), "%.2fx", r->ratio);
		fprintf(f, " %6s\n", b);
	}
	fprintf(f, "%s", zram_note);
	print_goals(f);
	fprintf(f, "=== end dev_bench table ===\n");
}

/* ---- main ---- */

enum { CELL_BUDDY, CELL_ZRAM, CELL_MEMCPY };

struct cell {
	int kind;
	unsigned int target, codec;
	enum datagen_class c;
	int group;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: dev_bench [-m MIB] [-r KIB] [-k KIB] [-c CLASS,...]\n"
		"                 [-t TARGET,...] [-z /dev/zramN] [-a ALG] [-R N]\n"
		"                 [-B BLOCKS] [-O OPS] [-q]\n"
		"  -m MIB   bytes per cell: allocation/disk size and sequential\n"
		"           volume (default 16)\n"
		"  -r KIB   volume of each 4 KiB random phase (default 8192)\n"
		"  -k KIB   volume of small random reads per cell (default 2048)\n"
		"  -c LIST  data classes (default zero,ramp,float32,relu50,random,mixed)\n"
		"  -t LIST  buddy targets (default 1x,4/3x,2x,4x,16x)\n"
		"  -z DEV   also benchmark this zram device (reset and set up here)\n"
		"  -a ALG   zram comp_algorithm (default lz4)\n"
		"  -N NODE  run on the CPUs of NUMA node NODE (libnuma)\n"
		"  -R N     measure every cell N times (at most 15), odd rounds in\n"
		"           reverse order; the table's figures are the medians\n"
		"  -B N     goals (with -z and the mixed class): N block pairs per\n"
		"           goal, buddy and zram alternating, judged on the median\n"
		"           of the pairs' rate ratios (default 128, at most 4096;\n"
		"           0: no goals)\n"
		"  -O N     ops per block (default 256): 4 KiB or small reads, or\n"
		"           N/32 sequential 128 KiB ops; (N + 1) x OPS <= 1048576\n"
		"  -q       no progress on stderr\n");
	exit(2);
}

/* Option -@opt's @arg as a whole number from @min to @max, or exit 2. */
static unsigned int opt_count(int opt, const char *arg, unsigned int min,
			      unsigned int max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < min || v > max) {
		fprintf(stderr, "dev_bench: -%c %s: not a whole number from %u to %u\n",
			opt, arg, min, max);
		exit(2);
	}
	return v;
}

struct bench_opts {
	const char *classes, *targets, *zdev, *alg;
	int node;
	enum datagen_class cls[DATAGEN_NR];
	unsigned int tgt[8], ncls, ntgt;
};

/* Comma lists of data classes and targets into @o, or exit 1. */
static void parse_lists(struct bench_opts *o)
{
	char *list, *tok, *save;

	list = strdup(o->classes);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int c = datagen_class_by_name(tok);

		if (c < 0 || o->ncls == DATAGEN_NR)
			die("unknown data class '%s'", tok);
		o->cls[o->ncls++] = c;
	}
	free(list);
	list = strdup(o->targets);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->ntgt == 8 || buddy_target_parse(tok, &o->tgt[o->ntgt]) ||
		    o->tgt[o->ntgt] == BUDDY_TARGET_AUTO)
			die("bad target '%s'", tok);
		o->ntgt++;
	}
	free(list);
}

/* The options into @o and the run's parameters, or exit 2. */
static void parse_args(int argc, char **argv, struct bench_opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "m:r:k:c:t:z:a:N:R:B:O:qh")) != -1) {
		switch (opt) {
		case 'm':
			cell_bytes = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'r':
			rand_bytes = strtoul(optarg, NULL, 0) << 10;
			break;
		case 'k':
			small_bytes = strtoul(optarg, NULL, 0) << 10;
			break;
		case 'c':
			o->classes = optarg;
			break;
		case 't':
			o->targets = optarg;
			break;
		case 'z':
			o->zdev = optarg;
			break;
		case 'a':
			o->alg = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'R':
			nr_rounds = opt_count(opt, optarg, 1, MAX_ROUNDS);
			break;
		case 'B':
			pair_blocks = opt_count(opt, optarg, 0,
						PAIR_MAX_BLOCKS);
			break;
		case 'O':
			pair_ops = opt_count(opt, optarg, 1, PAIR_MAX_OPS);
			break;
		case 'N':
			o->node = atoi(optarg);
			if (o->node < 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !cell_bytes || cell_bytes > (1ul << 30) ||
	    rand_bytes < BLK || rand_bytes > cell_bytes ||
	    small_bytes < BLK || small_bytes > cell_bytes ||
	    (size_t)(pair_blocks + 1) * pair_ops > PAIR_MAX_OPS)
		usage();
}

/* The buffers, the ring, the device (with io_uring) and zram's sysfs. */
static int setup(const struct bench_opts *o, struct buddy_info *info)
{
	int devfd, ret;

	src = xalloc(cell_bytes);
	dst = xalloc(cell_bytes);
	offs4k = calloc(rand_bytes / BLK, sizeof(*offs4k));
	offs_small = calloc(small_bytes / BUDDY_ENTRY_SIZE, sizeof(*offs_small));
	if (!offs4k || !offs_small)
		die("out of memory");
	ret = io_uring_queue_init(QD_MAX, &ring, 0);
	if (ret < 0)
		die("io_uring_queue_init: %s", strerror(-ret));

	devfd = buddy_open(NULL);
	if (devfd < 0)
		die("%s: %s", BUDDY_DEV_PATH, buddy_strerror(-devfd, BUDDY_OP_OPEN));
	ret = buddy_get_info(devfd, info);
	if (ret)
		die("BUDDY_IOC_GET_INFO: %s", buddy_strerror(-ret, BUDDY_OP_INFO));
	if (!(info->features & BUDDY_FEAT_IO_URING))
		die("the module does not announce io_uring support");

	if (o->zdev) {
		struct stat sb;
		const char *base = strrchr(o->zdev, '/');

		base = base ? base + 1 : o->zdev;
		snprintf(zram_sys, sizeof(zram_sys), "/sys/block/%s", base);
		if (stat(o->zdev, &sb) || !S_ISBLK(sb.st_mode))
			die("%s: not a block device", o->zdev);
	}
	return devfd;
}

/* The table's heading: the machine and what the columns are. */
static void describe(char *params, size_t len, const struct bench_opts *o,
		     const struct buddy_info *info)
{
	struct utsname uts;

	uname(&uts);
	snprintf(params, len,
		 "kernel %s %s; buddy pool %llu MiB device + %llu MiB carve-out\n"
		 "cell: %zu MiB, new allocation/disk per row; MB/s = 1e6 B/s of payload;\n"
		 "seq = %u KiB pread/pwrite; rd4K/wr4K and ur* = %zu random 4 KiB ops;\n"
		 "rd128 = %zu random 128 B preads (kIOPS: same run); ur1/ur32 = io_uring queue depth 1/32\n"
		 "spill%% = entries over target (in buddy memory); ratio = stored compression\n",
		 uts.release, uts.machine,
		 (unsigned long long)info->device_bytes >> 20,
		 (unsigned long long)info->buddy_bytes >> 20,
		 cell_bytes >> 20, SEQ_IO >> 10, rand_bytes / BLK,
		 small_bytes / BUDDY_ENTRY_SIZE);
	if (nr_rounds > 1)
		snprintf(params + strlen(params), len - strlen(params),
			 "each figure: the median of %u rounds (odd rounds in reverse order)\n",
			 nr_rounds);
	if (o->node >= 0)
		snprintf(params + strlen(params), len - strlen(params),
			 "on the CPUs of NUMA node %d (libnuma); pools on nodes %d and %d\n",
			 o->node, info->device_node, info->buddy_node);
}

/* The cells of one round, in the table's order; their number. */
static unsigned int make_cells(const struct bench_opts *o, struct cell *cells)
{
	unsigned int i, j, ncells = 0;
	int group = 0;

	for (i = 0; i < o->ntgt; i++, group++)
		for (j = 0; j < o->ncls; j++)
			cells[ncells++] = (struct cell){ CELL_BUDDY, o->tgt[i],
				BUDDY_CODEC_DEFAULT, o->cls[j], group };
	for (j = 0; j < o->ncls; j++)
		cells[ncells++] = (struct cell){ CELL_BUDDY, BUDDY_TARGET_1X,
			BUDDY_CODEC_NONE, o->cls[j], group };
	group++;
	for (j = 0; o->zdev && j < o->ncls; j++)
		cells[ncells++] = (struct cell){ CELL_ZRAM, 0, 0, o->cls[j], group };
	group += !!o->zdev;
	cells[ncells++] = (struct cell){ CELL_MEMCPY, 0, 0, DATAGEN_MIXED, group };
	return ncells;
}

/* Every cell, nr_rounds times, odd rounds backwards; the rows' medians. */
static void run_rounds(int devfd, const struct bench_opts *o,
		       const struct cell *cells, unsigned int ncells)
{
	for (round_idx = 0; round_idx < nr_rounds; round_idx++) {
		if (nr_rounds > 1)
			progress("# round %u of %u\n", round_idx + 1, nr_rounds);
		for (unsigned int i = 0; i < ncells; i++) {
			/* odd rounds backwards: a drift in host speed
			 * favours no row */
			const struct cell *cl = &cells[round_idx % 2 ?
						       ncells - 1 - i : i];

			datagen_fill(cl->c, SEED + cl->c, src, cell_bytes);
			if (cl->kind == CELL_BUDDY)
				bench_buddy(devfd, cl->target, cl->codec, cl->c,
					    cl->group);
			else if (cl->kind == CELL_ZRAM)
				bench_zram(o->zdev, o->alg, cl->c, cl->group);
			else
				bench_memcpy(cl->c, cl->group);
		}
	}
	round_idx = 0;
	rows_median();
}

/* With zram and the mixed class: the goals, in the order printed. */
static void run_goals(int devfd, const struct bench_opts *o)
{
	unsigned int i, j;
	double t;

	for (j = 0; o->zdev && pair_blocks && j < o->ncls; j++)
		if (o->cls[j] == DATAGEN_MIXED)
			break;
	if (!o->zdev || !pair_blocks || j == o->ncls)
		return;
	add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_SEQ_RD, 1.0);
	add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_RD4K, 1.0);
	add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_WR4K, 1.0);
	/* raised by the vector codec's goals from 0.5x and 1.0x */
	add_goal(BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT, C_RD4K, 1.0);
	add_goal(BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT, C_SEQ_WR, 2.0);
	for (i = 0; i < o->ntgt; i++)
		add_goal(o->tgt[i], BUDDY_CODEC_DEFAULT, C_KIOPS, 3.0);
	t = now();
	pair_goals(devfd, o->zdev, o->alg);
	progress("# paired pass (goals) done in %.1fs\n", now() - t);
}

/* zram's note under the table, and the device reset. */
static void zram_done(const struct bench_opts *o, char *znote, size_t len)
{
	int ret;

	snprintf(znote, len,
		 "zram: O_DIRECT on %s, comp_algorithm %s, disksize %zu MiB, reset per row.\n"
		 "  Its rd128 and kIOPS are %u-byte random reads, each decompressing a whole\n"
		 "  4 KiB page%s%s%s.\n"
		 "  ur*: 6.1's zram lacks QUEUE_FLAG_NOWAIT, so io_uring hands every op to an\n"
		 "  io-wq worker thread.\n",
		 o->zdev, o->alg, cell_bytes >> 20, zram_small,
		 zram_512_err ? " (512-byte O_DIRECT reads fail with \"" : "",
		 zram_512_err ? strerror(zram_512_err) : "",
		 zram_512_err ? "\": below the\n  device's logical block size)" : "");
	ret = zram_attr_write("reset", "1");
	if (ret)
		die("%s/reset: %s", zram_sys, strerror(-ret));
}

/* The window's table, with window_mb large enough; its window_mb. */
static unsigned int run_mmap(int devfd, const struct bench_opts *o)
{
	unsigned int old = 0, win = (cell_bytes >> 20) + 4, i, j;
	int ret;

	ret = param_swap("window_mb", win, &old);
	if (ret)
		die("%s/window_mb: %s", BUDDY_PARAM_DIR, strerror(-ret));
	for (i = 0; i < o->ntgt; i++)
		for (j = 0; j < o->ncls; j++) {
			datagen_fill(o->cls[j], SEED + o->cls[j], src, cell_bytes);
			bench_mmap(devfd, o->tgt[i], BUDDY_CODEC_DEFAULT, o->cls[j]);
		}
	for (j = 0; j < o->ncls; j++) {
		datagen_fill(o->cls[j], SEED + o->cls[j], src, cell_bytes);
		bench_mmap(devfd, BUDDY_TARGET_1X, BUDDY_CODEC_NONE, o->cls[j]);
	}
	for (j = 0; j < o->ncls; j++)
		bench_mmap(-1, 0, 0, o->cls[j]);
	param_swap("window_mb", old, NULL);
	return win;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.classes = "zero,ramp,float32,relu50,random,mixed",
		.targets = "1x,4/3x,2x,4x,16x", .alg = "lz4", .node = -1,
	};
	char params[1024], znote[512] = "";
	struct cell cells[8 * DATAGEN_NR + 2 * DATAGEN_NR + 1];
	struct buddy_info info;
	unsigned int mmap_window = 0, ncells;
	double t0 = now();
	int devfd, ret;

	parse_args(argc, argv, &o);
	ret = bench_numa_place("dev_bench", o.node);
	if (ret)
		return ret;
	parse_lists(&o);
	devfd = setup(&o, &info);
	describe(params, sizeof(params), &o, &info);
	ncells = make_cells(&o, cells);
	warmup(devfd, o.zdev, o.alg);
	run_rounds(devfd, &o, cells, ncells);
	run_goals(devfd, &o);
	if (o.zdev)
		zram_done(&o, znote, sizeof(znote));
	if (info.features & BUDDY_FEAT_MMAP)
		mmap_window = run_mmap(devfd, &o);
	io_uring_queue_exit(&ring);
	close(devfd);
	progress("# all cells done in %.1fs\n", now() - t0);
	fflush(stderr);
	print_table(stdout, params, znote);
	if (nr_mrows)
		print_mmap_table(stdout, mmap_window);
	return 0;
}
