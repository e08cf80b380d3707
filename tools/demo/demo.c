// SPDX-License-Identifier: GPL-2.0
/*
 * buddy-demo - Buddy Compression end to end: store more logical bytes than
 * the device pool holds, read them all back, and show where they went.
 *
 *   buddy-demo [-d DEV] [-t PCT] [-n] [-v] [LABEL:SOURCE:PATH]...
 *
 * Each LABEL:SOURCE:PATH argument is a real data file (SOURCE names where it
 * came from, e.g. its Debian package); the demo adds synthetic data classes
 * of its own (tools/common/datagen).  Every data set becomes its own allocation.
 *
 * Per allocation, as the paper's profiling pass does (section III-B), the
 * demo samples the data's 128-byte entries, sizes them with every codec the
 * module offers (the codecs' size-only path, shared with buddy.ko), and picks
 * the most aggressive target ratio whose expected share of entries that
 * spill into buddy memory stays within the Buddy Threshold (-t, default the
 * paper's 30%), using the codec that reaches it with the fewest spills.  A
 * 1x allocation stores entries plain and gets the "none" codec.
 *
 * Then it allocates, writes everything, reads everything back in pieces of
 * another size and compares byte for byte, and prints one table row per
 * allocation from BUDDY_IOC_ALLOC_STAT plus the pools from BUDDY_IOC_GET_INFO.
 * It closes every allocation and checks that the pools are empty again.
 *
 * -n profiles and prints the plan only: no device is opened, so it runs
 * natively on the host.  -v also prints each codec's profiled spill share at
 * every target.
 *
 * Exit status: 0 all data verified and every check passed; 1 a mismatch or
 * a failed check; 2 a usage error or a data file that cannot be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "lib/libbuddy.h"

#define MIB		(1024.0 * 1024.0)
#define WRITE_PIECE	(1u << 20)		/* bytes per pwrite */
#define READ_PIECE	((1u << 20) - 4096 + 200)	/* not entry-aligned */
#define PROFILE_MAX	16384			/* entries sampled per data set */
#define MAX_SETS	32

/* One data set: a file or a synthetic class, and then its allocation. */
struct dataset {
	char label[BUDDY_LABEL_LEN];
	const char *source;		/* Debian package, or "datagen CLASS" */
	const char *path;		/* NULL for synthetic */
	int dclass;			/* datagen class for synthetic */
	u64 seed;
	u64 size;
	u8 *data;
	/* plan */
	unsigned int target;
	unsigned int codec;
	double spill;			/* profiled share of spilling entries */
	/* allocation */
	int fd;
	u64 id;
	struct buddy_alloc_stat st;
};

/* The synthetic classes the demo always adds: the paper's data types. */
static const struct {
	const char *label;
	int dclass;
	u64 size;
} synthetic[] = {
	{ "zero-init",		DATAGEN_ZERO,		32u << 20 },	/* zeroed buffer */
	{ "relu-activations",	DATAGEN_RELU90,		16u << 20 },	/* 90% zeros */
	{ "float32-field",	DATAGEN_FLOAT32,	 4u << 20 },	/* smooth + noise */
	{ "int32-deltas",	DATAGEN_ALTSIGN,	 2u << 20 },	/* small, +/- */
	{ "random",		DATAGEN_RANDOM,		 1u << 20 },
};

static const unsigned int targets[] = {	/* most aggressive first */
	BUDDY_TARGET_16X, BUDDY_TARGET_4X, BUDDY_TARGET_2X, BUDDY_TARGET_4_3X,
};

static struct dataset sets[MAX_SETS];
static unsigned int nr_sets;
static bool verbose;

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "buddy-demo: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die(1, "out of memory (%zu bytes)", n);
	return p;
}

static void load_file(struct dataset *d)
{
	struct stat sb;
	u64 done = 0;
	int fd;

	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0)
		die(2, "%s: %s", d->path, strerror(errno));
	if (!S_ISREG(sb.st_mode) || sb.st_size == 0)
		die(2, "%s: not a non-empty regular file", d->path);
	d->size = sb.st_size;
	d->data = xmalloc(d->size);
	while (done < d->size) {
		ssize_t n = read(fd, d->data + done, d->size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(2, "%s: read: %s", d->path,
			    n ? strerror(errno) : "unexpected end of file");
		done += n;
	}
	close(fd);
}

static void add_file(const char *arg)
{
	const char *c1 = strchr(arg, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct dataset *d = &sets[nr_sets];
	size_t llen;

	if (!c1 || !c2 || c1 == arg || c2 == c1 + 1 || !c2[1])
		die(2, "'%s': expected LABEL:SOURCE:PATH", arg);
	llen = c1 - arg;
	if (llen >= BUDDY_LABEL_LEN)
		die(2, "'%s': label longer than %d bytes", arg,
		    BUDDY_LABEL_LEN - 1);
	if (nr_sets == MAX_SETS)
		die(2, "too many data files");
	memcpy(d->label, arg, llen);
	d->source = strndup(c1 + 1, c2 - c1 - 1);
	d->path = c2 + 1;
	d->dclass = -1;
	nr_sets++;
}

static void add_synthetic(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(synthetic); i++) {
		struct dataset *d = &sets[nr_sets++];

		char src[40];

		snprintf(d->label, sizeof(d->label), "%s", synthetic[i].label);
		snprintf(src, sizeof(src), "datagen %s",
			 datagen_class_name(synthetic[i].dclass));
		d->source = strdup(src);
		d->dclass = synthetic[i].dclass;
		d->seed = 0xb0dd1e5eedull + i;
		d->size = synthetic[i].size;
	}
}

static void load(struct dataset *d)
{
	if (d->path) {
		load_file(d);
		return;
	}
	d->data = xmalloc(d->size);
	datagen_fill(d->dclass, d->seed, d->data, d->size);
}

/* ---- profiling: the paper's per-allocation target selection ---- */

/* Entry @i of @d, the tail zero-padded to a whole entry. */
static const u8 *entry_at(const struct dataset *d, u64 i, u8 *pad)
{
	u64 off = i * BUDDY_ENTRY_BYTES;

	if (off + BUDDY_ENTRY_BYTES <= d->size)
		return d->data + off;
	memset(pad, 0, BUDDY_ENTRY_BYTES);
	memcpy(pad, d->data + off, d->size - off);
	return pad;
}

static void profile(struct dataset *d, u64 codecs, double threshold)
{
	u64 nr = DIV_ROUND_UP(d->size, BUDDY_ENTRY_BYTES);
	u64 step = nr > PROFILE_MAX ? nr / PROFILE_MAX : 1;
	unsigned int best_t = BUDDY_TARGET_1X, best_c = BUDDY_CODEC_NONE;
	double best_spill = 0;
	unsigned int c, t;
	u8 pad[BUDDY_ENTRY_BYTES];

	for (c = BUDDY_CODEC_BPC; c < BUDDY_CODEC_NR; c++) {
		const struct buddy_codec *codec = buddy_codec_by_id(c);
		u64 hist[BUDDY_CODE_NR] = { 0 }, n = 0, i;

		if (c == BUDDY_CODEC_NONE || !(codecs & (1ull << c)) || !codec)
			continue;
		for (i = 0; i < nr; i += step, n++)
			hist[buddy_entry_classify(codec,
						  entry_at(d, i, pad))]++;
		if (verbose) {
			printf("  profile %-16s %-4s", d->label, codec->name);
			for (t = 0; t < ARRAY_SIZE(targets); t++) {
				u64 spill = 0;
				unsigned int k;

				for (k = 0; k < BUDDY_CODE_NR; k++)
					if (buddy_code_bytes(k) > targets[t])
						spill += hist[k];
				printf("  %s %5.1f%%", buddy_target_name(targets[t]),
				       100.0 * spill / n);
			}
			printf("\n");
		}
		for (t = 0; t < ARRAY_SIZE(targets); t++) {
			u64 spill = 0;
			unsigned int k;
			double f;

			for (k = 0; k < BUDDY_CODE_NR; k++)
				if (buddy_code_bytes(k) > targets[t])
					spill += hist[k];
			f = (double)spill / n;
			if (f > threshold)
				continue;
			/* Fewer device bytes first, then fewer spills. */
			if (targets[t] < best_t ||
			    (targets[t] == best_t && f < best_spill)) {
				best_t = targets[t];
				best_c = c;
				best_spill = f;
			}
			break;
		}
	}
	d->target = best_t;
	d->codec = best_c;
	d->spill = best_spill;
}

/* Device and buddy bytes an allocation will reserve (kmod/alloc.c). */
static u64 page_align(u64 v)
{
	return (v + 4095) & ~4095ull;
}

static void reserve_estimate(const struct dataset *d, u64 chunk_bytes,
			     u64 *dev, u64 *bud)
{
	u64 ce = chunk_bytes / BUDDY_ENTRY_BYTES;
	u64 nr = DIV_ROUND_UP(d->size, BUDDY_ENTRY_BYTES);
	u64 full = nr / ce, last = nr - full * ce;

	*dev = full * page_align(ce * d->target + DIV_ROUND_UP(ce, 2)) +
	       page_align(last * d->target + DIV_ROUND_UP(last, 2));
	*bud = full * page_align(ce * (BUDDY_ENTRY_BYTES - d->target)) +
	       page_align(last * (BUDDY_ENTRY_BYTES - d->target));
}

static const char *ratio_name(unsigned int target)
{
	return buddy_target_name(target);
}

#define ROW_FMT	"%-16s %-21s %8.2f  %-6s %-5s %10.2f %9.2f"
#define HEAD_FMT "%-16s %-21s %8s  %-6s %-5s %10s %9s"

static void print_plan(double threshold, u64 chunk_bytes)
{
	u64 tl = 0, td = 0, tb = 0;
	unsigned int i;

	printf("Plan: profiling pass over <= %d sampled entries per data set, Buddy Threshold %.0f%%\n",
	       PROFILE_MAX, threshold * 100);
	printf(HEAD_FMT " %9s\n", "label", "source", "size MiB", "target",
	       "codec", "device MiB", "buddy MiB", "spill");
	for (i = 0; i < nr_sets; i++) {
		const struct dataset *d = &sets[i];
		u64 dev, bud;

		reserve_estimate(d, chunk_bytes, &dev, &bud);
		tl += d->size;
		td += dev;
		tb += bud;
		printf(ROW_FMT " %8.1f%%\n", d->label, d->source, d->size / MIB,
		       ratio_name(d->target), buddy_codec_name(d->codec),
		       dev / MIB, bud / MIB, d->spill * 100);
	}
	printf(ROW_FMT "\n", "total", "", tl / MIB, "", "", td / MIB, tb / MIB);
	printf("spill = profiled share of entries whose compressed size exceeds the target\n\n");
}

/* ---- the device run ---- */

static void write_all(struct dataset *d)
{
	u64 off;

	for (off = 0; off < d->size; off += WRITE_PIECE) {
		size_t n = d->size - off < WRITE_PIECE ? d->size - off :
							 WRITE_PIECE;
		ssize_t r = buddy_pwrite(d->fd, d->data + off, n, off);

		if (r != (ssize_t)n)
			die(1, "%s: write at %" PRIu64 ": %s", d->label, off,
			    r < 0 ? buddy_strerror(r, BUDDY_OP_WRITE) :
				    "short write");
	}
}

/* Read @d back in READ_PIECE pieces; returns the mismatching bytes. */
static u64 verify(struct dataset *d, u8 *buf)
{
	u64 off, bad = 0, first_bad = UINT64_MAX;

	for (off = 0; off < d->size; off += READ_PIECE) {
		size_t n = d->size - off < READ_PIECE ? d->size - off :
							READ_PIECE;
		ssize_t r = buddy_pread(d->fd, buf, n, off);
		size_t i;

		if (r != (ssize_t)n)
			die(1, "%s: read at %" PRIu64 ": %s", d->label, off,
			    r < 0 ? buddy_strerror(r, BUDDY_OP_READ) :
				    "short read");
		if (!memcmp(buf, d->data + off, n))
			continue;
		for (i = 0; i < n; i++) {
			if (buf[i] == d->data[off + i])
				continue;
			if (first_bad == UINT64_MAX)
				first_bad = off + i;
			bad++;
		}
	}
	/* Nothing past the end. */
	if (buddy_pread(d->fd, buf, 1, d->size) != 0) {
		fprintf(stderr, "buddy-demo: %s: read past the end returned data\n",
			d->label);
		bad++;
	}
	if (bad)
		fprintf(stderr, "buddy-demo: %s: MISMATCH: %" PRIu64
			" bytes differ, first at offset %" PRIu64 "\n",
			d->label, bad, first_bad);
	return bad;
}

static double frac(u64 a, u64 b)
{
	return b ? (double)a / b : 0;
}

static void print_row(const char *label, const char *source, u64 size,
		      const char *target, const char *codec, u64 dev, u64 bud,
		      u64 buddy_acc, u64 acc)
{
	printf(ROW_FMT " %8.2fx %8.2f%%\n", label, source, size / MIB, target,
	       codec, dev / MIB, bud / MIB, frac(size, dev),
	       100 * frac(buddy_acc, acc));
}

static void print_table(void)
{
	u64 tl = 0, td = 0, tb = 0, tacc = 0, tbud = 0;
	unsigned int i;
	char line[128];
	int w;

	w = printf(HEAD_FMT " %9s %9s\n", "label", "source", "size MiB",
		   "target", "codec", "device MiB", "buddy MiB", "expansion",
		   "buddy-acc") - 1;
	memset(line, '-', w);
	line[w] = 0;
	printf("%s\n", line);
	for (i = 0; i < nr_sets; i++) {
		const struct buddy_alloc_stat *st = &sets[i].st;
		u64 acc = st->counters.entry_reads + st->counters.entry_writes;

		print_row(sets[i].label, sets[i].source, st->size,
			  buddy_target_name(st->target),
			  buddy_codec_name(st->codec), st->device_bytes,
			  st->buddy_bytes, st->counters.buddy_accesses, acc);
		tl += st->size;
		td += st->device_bytes;
		tb += st->buddy_bytes;
		tacc += acc;
		tbud += st->counters.buddy_accesses;
	}
	printf("%s\n", line);
	print_row("total", "", tl, "", "", td, tb, tbud, tacc);
	printf("expansion = logical / device bytes (metadata and page rounding included);\n"
	       "buddy-acc = buddy_accesses / (entry_reads + entry_writes), from BUDDY_IOC_ALLOC_STAT\n");
}

/* "pages on node 0: 8192, node 1: 0" of a pool, in a static buffer. */
static const char *node_pages(const struct buddy_info *in, const __u64 *pages)
{
	static char buf[256];
	unsigned int n, len = 0;

	len += snprintf(buf, sizeof(buf), "pages");
	for (n = 0; n < in->nr_nodes && n < BUDDY_MAX_NODES; n++)
		if (len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len,
					"%s node %u: %llu", n ? "," : " on", n,
					(unsigned long long)pages[n]);
	return buf;
}

static void print_info(const struct buddy_info *in)
{
	printf("device pool:      %7.2f / %7.2f MiB used, node %d (%s)\n",
	       in->device_used / MIB, in->device_bytes / MIB, in->device_node,
	       node_pages(in, in->device_node_pages));
	printf("buddy carve-out:  %7.2f / %7.2f MiB used, node %d (%s), max ratio %ux\n",
	       in->buddy_used / MIB, in->buddy_bytes / MIB, in->buddy_node,
	       node_pages(in, in->buddy_node_pages), in->max_ratio);
	printf("logical bytes:    %7.2f MiB in %u allocations = %.2fx the device pool\n",
	       in->logical_bytes / MIB, in->nr_allocs,
	       frac(in->logical_bytes, in->device_bytes));
	printf("overall expansion (ratio_milli / 1000): %u.%03ux\n",
	       in->ratio_milli / 1000, in->ratio_milli % 1000);
}

static int check(bool ok, const char *what)
{
	printf("  %s  %s\n", ok ? "ok  " : "FAIL", what);
	return ok ? 0 : 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: buddy-demo [-d DEV] [-t PCT] [-n] [-v] [LABEL:SOURCE:PATH]...\n"
		"  -d DEV   control device (default " BUDDY_DEV_PATH ")\n"
		"  -t PCT   Buddy Threshold: largest profiled share of entries that may\n"
		"           spill into buddy memory (default 30, the paper's)\n"
		"  -n       profile and print the plan only (no device)\n"
		"  -v       print every codec's profiled spill share per target\n"
		"Each LABEL:SOURCE:PATH is a real data file, stored as its own allocation\n"
		"next to the demo's synthetic data classes.\n");
}

/* Allocate and write every data set; read each back and compare. */
static u64 store_and_verify(int devfd, u64 logical)
{
	double t0, t1, t2;
	u64 bad = 0;
	unsigned int i;
	u8 *buf;

	t0 = now();
	for (i = 0; i < nr_sets; i++) {
		struct dataset *d = &sets[i];

		d->fd = buddy_alloc_simple(devfd, d->size, d->target, d->codec,
					   d->label, &d->id);
		if (d->fd < 0)
			die(1, "%s: ALLOC %.2f MiB at %s: %s", d->label,
			    d->size / MIB, ratio_name(d->target),
			    buddy_strerror(d->fd, BUDDY_OP_ALLOC));
		write_all(d);
	}
	t1 = now();

	/* Read everything back, in pieces of another size, and compare. */
	buf = xmalloc(READ_PIECE);
	for (i = 0; i < nr_sets; i++)
		bad += verify(&sets[i], buf);
	t2 = now();
	free(buf);
	printf("wrote %.2f MiB in %.1f s, read back and compared in %.1f s: %s\n\n",
	       logical / MIB, t1 - t0, t2 - t1,
	       bad ? "MISMATCH" : "all bytes identical");
	return bad;
}

static void get_info(int devfd, struct buddy_info *info)
{
	int ret = buddy_get_info(devfd, info);

	if (ret)
		die(1, "GET_INFO: %s", buddy_strerror(ret, BUDDY_OP_INFO));
}

/* The checks of a run: the number that failed. */
static int run_checks(u64 bad, u64 logical, const struct buddy_info *before,
		      const struct buddy_info *info,
		      const struct buddy_info *after)
{
	int fails = 0;

	printf("\nchecks:\n");
	fails += check(!bad, "every byte read back equals the byte written");
	fails += check(info->logical_bytes - before->logical_bytes == logical &&
		       info->nr_allocs - before->nr_allocs == nr_sets,
		       "GET_INFO counts every allocation and logical byte");
	fails += check(logical > info->device_bytes,
		       "more logical bytes stored than the device pool holds");
	fails += check(info->device_used <= info->device_bytes &&
		       info->buddy_used <= info->buddy_bytes,
		       "both pools within their sizes");
	fails += check(after->nr_allocs == before->nr_allocs &&
		       after->device_used == before->device_used &&
		       after->buddy_used == before->buddy_used,
		       "closing the allocations returns every pool byte");
	return fails;
}

/* The options; the data sets named on the command line are added. */
static void parse_args(int argc, char **argv, const char **dev,
		       double *threshold, bool *plan_only)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:t:nvh")) != -1) {
		switch (opt) {
		case 'd':
			*dev = optarg;
			break;
		case 't': {
			char *end;

			*threshold = strtod(optarg, &end) / 100;
			if (*end || end == optarg || *threshold < 0 ||
			    *threshold > 1)
				die(2, "-t: a percentage from 0 to 100");
			break;
		}
		case 'n':
			*plan_only = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	for (int i = optind; i < argc; i++)
		add_file(argv[i]);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	double threshold = 0.30;
	struct buddy_info info, before, after;
	u64 codecs, chunk_bytes, logical = 0, bad, dev_need = 0, bud_need = 0;
	bool plan_only = false;
	unsigned int i;
	int devfd = -1, ret, fails;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv, &dev, &threshold, &plan_only);
	add_synthetic();

	if (plan_only) {
		codecs = ~0ull;
		chunk_bytes = 2u << 20;
	} else {
		devfd = buddy_open(dev);
		if (devfd < 0)
			die(1, "%s: %s", dev ? dev : BUDDY_DEV_PATH,
			    buddy_strerror(devfd, BUDDY_OP_OPEN));
		get_info(devfd, &before);
		codecs = before.codecs;
		chunk_bytes = before.chunk_bytes;
		printf("buddy.ko ABI %u: device pool %.0f MiB on node %d, buddy carve-out %.0f MiB on node %d, max ratio %ux\n\n",
		       before.abi_version, before.device_bytes / MIB,
		       before.device_node, before.buddy_bytes / MIB,
		       before.buddy_node, before.max_ratio);
	}

	for (i = 0; i < nr_sets; i++) {
		u64 d, b;

		load(&sets[i]);
		profile(&sets[i], codecs, threshold);
		reserve_estimate(&sets[i], chunk_bytes, &d, &b);
		logical += sets[i].size;
		dev_need += d;
		bud_need += b;
	}
	print_plan(threshold, chunk_bytes);
	if (plan_only)
		return 0;

	if (dev_need > before.device_bytes - before.device_used ||
	    bud_need > before.buddy_bytes - before.buddy_used)
		die(1, "the plan needs %.2f MiB of device pool and %.2f MiB of carve-out; %.2f and %.2f MiB are free",
		    dev_need / MIB, bud_need / MIB,
		    (before.device_bytes - before.device_used) / MIB,
		    (before.buddy_bytes - before.buddy_used) / MIB);

	bad = store_and_verify(devfd, logical);
	for (i = 0; i < nr_sets; i++) {
		ret = buddy_alloc_stat(sets[i].fd, &sets[i].st);
		if (ret)
			die(1, "%s: ALLOC_STAT: %s", sets[i].label,
			    buddy_strerror(ret, BUDDY_OP_STAT));
	}
	get_info(devfd, &info);
	print_table();
	printf("\n");
	print_info(&info);

	for (i = 0; i < nr_sets; i++)
		close(sets[i].fd);
	get_info(devfd, &after);
	fails = run_checks(bad, logical, &before, &info, &after);
	close(devfd);
	if (fails || bad) {
		printf("buddy-demo: FAILED (%d checks)\n", fails);
		return 1;
	}
	printf("buddy-demo: PASS\n");
	return 0;
}
