// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench - throughput of /dev/buddy allocations, next to an uncompressed
 * allocation, memcpy and zram, all in the same (guest) kernel.
 *
 *   dev_bench [-m MIB] [-r KIB] [-k KIB] [-c CLASS,...] [-t TARGET,...]
 *             [-z /dev/zramN] [-a ALG] [-R ROUNDS] [-B BLOCKS] [-O OPS] [-q]
 *
 * Cells are (system, data class).  Systems: one buddy allocation of MIB MiB
 * per target (default codec, i.e. BPC), a 1x allocation with codec none,
 * zram (-z; the device is reset and given comp_algorithm ALG, default lz4,
 * and a disksize of MIB MiB per cell, and driven with O_DIRECT), and memcpy
 * between two user buffers.  Every cell starts empty and runs, in order:
 *
 *   seq-wr   the class data written front to back, 128 KiB pwrite()s
 *   seq-rd   read back front to back, 128 KiB pread()s (checked)
 *   wr4K     KIB(-r)/4 pwrite()s of 4 KiB at random 4 KiB-aligned offsets
 *            (the class data of those offsets again)
 *   rd4K     the same offsets read back with pread() (checked)
 *   rd128    KIB(-k)*8 pread()s of 128 bytes at random 128-byte-aligned
 *            offsets (checked); on zram as many reads of the device's
 *            logical block size, the O_DIRECT minimum (see the note printed)
 *   ur1-wr/ur1-rd, ur32-wr/ur32-rd
 *            KIB(-r)/4 io_uring WRITE then READ ops of 4 KiB at random
 *            offsets, queue depth 1 and 32 (liburing, one ring; checked)
 *
 * Every measurement is bounded by a byte/op count, never by wall time.
 * Throughput is payload bytes per second, MB = 1e6 bytes; kIOPS is for the
 * small random reads.  Data read is compared with what was written; a
 * mismatch or a short/failed I/O exits 1.  spill% is the share of entries
 * that do not fit their target and use the buddy carve-out; ratio is the
 * data's compression ratio as the system stored it (buddy: 128 B per entry
 * over the bytes of its size codes; zram: orig_data_size / compr_data_size
 * from mm_stat).
 *
 * The table goes to stdout between "=== dev_bench table ===" and
 * "=== end dev_bench table ===", progress to stderr.
 *
 * -R ROUNDS measures every cell of the table ROUNDS times, the cells of odd
 * rounds in reverse order, and prints each cell's median: under TCG a
 * single short cell can be off by 3x when the host's or the guest's
 * scheduler interrupts it.
 *
 * With zram and the mixed class in the run, the table ends with the goals
 * of the data path (issue 16), each "met" or "NOT met": buddy 1x/none at
 * least zram-lz4's seq-rd, rd4K and wr4K; buddy 2x/bpc at least 1.0x
 * zram's rd4K and 2.0x its seq-wr (the vector codec's goals, up from
 * 0.5x and 1.0x); every compressed buddy target's rd128
 * kIOPS at least 3x zram's kIOPS of small reads (its 4 KiB pages).  The
 * goals are not judged on the table, whose cells ran tens of seconds
 * apart under whatever load the host had then, but in a paired pass after
 * it: the buddy allocation (that target and codec) and the zram device,
 * both written with the mixed data, are open at the same time, and
 * BLOCKS (-B, default 128) block pairs alternate between them, each block
 * OPS (-O, default 256) ops of the goal's operation timed on its own:
 * block i runs on buddy then on zram, block i+1 on zram then on buddy,
 * both at the same offsets (random 4 KiB ones for rd4K/wr4K; 128-byte ones
 * for rd128, which zram reads as the 4 KiB page that holds them; for
 * seq-rd/seq-wr OPS/32 consecutive 128 KiB ops, the same bytes as OPS
 * 4 KiB ops, the blocks walking through the cell).  Each pair gives one
 * ratio, buddy's rate over zram's; the goal is judged on the median of
 * the ratios and printed with their interquartile range (stats.h,
 * buddy_paired_judge()), by the wall clock and again by the thread's CPU
 * time (which counts the kernel's work in the calls: buddy.ko's codec,
 * zram's compressor).  A load that slows both blocks of a pair leaves
 * its ratio alone, one that hits one block moves one ratio only.  One
 * untimed pair goes first.  The paired writes overwrite the data already
 * there with the same data (zram, too, was filled first).  Reads are
 * compared with what was written, and after a write goal both sides are
 * read back whole, so a wrong read exits 1 here as well.  Below the goals,
 * the same ratios from the table's cells (the median of the rounds', with
 * their range) are printed for comparison, not judged.  -B 0 skips the
 * pass and the goals.
 *
 * With BUDDY_FEAT_MMAP, a second table ("=== dev_bench mmap table ===",
 * issue 13) gives per target and class, next to a 1x allocation with codec
 * none and an ordinary anonymous mapping, the resident window's rates in
 * 4 KiB pages per second: fault-in (a mapping of a cell written with
 * pwrite, one read per page, front to back; the window, window_mb, is set
 * to the cell size plus 4 MiB for the run, so that nothing is evicted) and
 * write-back (every page dirtied by one write, then msync(MS_SYNC) timed
 * alone).  The anonymous mapping's fault-in is a first touch of a new
 * mapping (zero-filled pages); it has no write-back.  The pages read are
 * compared with what was written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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

#include <liburing.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "lib/libbuddy.h"
#include "numa_place.h"
#include "tools/common/stats.h"

#define SEED		0x42756464790002ull	/* "Buddy", 2 */
#define SEQ_IO		(128 * 1024)
#define BLK		4096
#define QD_MAX		32
#define NA		(-1.0)

enum {
	C_SEQ_RD, C_SEQ_WR, C_RD4K, C_WR4K, C_RD128,
	C_U1_RD, C_U1_WR, C_U32_RD, C_U32_WR, C_KIOPS, C_NR,
};

static const char *const col_names[C_NR] = {
	"seq-rd", "seq-wr", "rd4K", "wr4K", "rd128",
	"ur1-rd", "ur1-wr", "ur32-rd", "ur32-wr", "kIOPS",
};

#define MAX_ROUNDS	15

struct row {
	char sys[24];
	char cls[12];
	double v[C_NR];		/* MB/s (kIOPS for C_KIOPS), NA: not measured;
				 * after the last round, the median of rv */
	double rv[MAX_ROUNDS][C_NR];	/* v of each round */
	double spill;		/* percent, NA */
	double ratio;		/* NA; INFINITY-like 0 bytes stored: -2 */
	int group;
};

#define MAX_ROWS	128
static struct row rows[MAX_ROWS];
static unsigned int nr_rows;

static size_t cell_bytes = 16u << 20;
static size_t rand_bytes = 8u << 20;
/* 16384 small reads per cell: 4096 took 20 ms in a guest, too short there */
static size_t small_bytes = 2048u << 10;
static unsigned int nr_rounds = 1, round_idx;
static bool quiet;
static unsigned int zram_small;	/* small-read size used on zram */
static int zram_512_err;	/* errno of a 512-byte O_DIRECT read, 0: ok */

static u8 *src, *dst;
static u64 *offs4k, *offs_small;
static struct io_uring ring;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("dev_bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void progress(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mbps(size_t bytes, double secs)
{
	return secs > 0 ? bytes / secs / 1e6 : NA;
}

static void *xalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, BLK, len))
		die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

/* Random @align-aligned offsets of @len-byte ops inside the cell. */
static void gen_offsets(u64 *o, size_t n, size_t align, u64 seed)
{
	struct datagen_rng r;
	u32 slots = cell_bytes / align;
	size_t i;

	datagen_seed(&r, seed);
	for (i = 0; i < n; i++)
		o[i] = (u64)datagen_below(&r, slots) * align;
}

static void check(const u64 *o, size_t n, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (memcmp(dst + o[i], src + o[i], len))
			die("%s: data mismatch at offset %llu", what,
			    (unsigned long long)o[i]);
}

/* ---- one system's measurements (pread/pwrite and io_uring on an fd) ---- */

static void io_full(int fd, bool write, u8 *buf, size_t len, u64 off,
		    const char *what)
{
	ssize_t n = write ? buddy_pwrite(fd, buf, len, off) :
			    buddy_pread(fd, buf, len, off);

	if (n < 0)
		die("%s at %llu (%zu bytes): %s", what,
		    (unsigned long long)off, len, strerror((int)-n));
	if ((size_t)n != len)
		die("%s at %llu: %zd of %zu bytes", what,
		    (unsigned long long)off, n, len);
}

static double run_seq(int fd, bool write)
{
	double t = now();
	size_t off;

	for (off = 0; off < cell_bytes; off += SEQ_IO)
		io_full(fd, write, (write ? src : dst) + off, SEQ_IO, off,
			write ? "seq pwrite" : "seq pread");
	return mbps(cell_bytes, now() - t);
}

/*
 * The whole of @fd read sequentially and compared with src: MB/s; a
 * difference exits, naming the system @sys and the data class @cls.
 */
static double read_back(int fd, const char *sys, const char *cls)
{
	double r;

	memset(dst, 0xa5, cell_bytes);
	r = run_seq(fd, false);
	if (memcmp(dst, src, cell_bytes))
		die("%s/%s: sequential read-back differs", sys, cls);
	return r;
}

static double run_rand(int fd, bool write, const u64 *o, size_t n, size_t len)
{
	double t = now();
	size_t i;

	for (i = 0; i < n; i++)
		io_full(fd, write, (write ? src : dst) + o[i], len, o[i],
			write ? "random pwrite" : "random pread");
	return mbps(n * len, now() - t);
}

static double run_uring(int fd, bool write, unsigned int qd, const u64 *o,
			size_t n)
{
	size_t sub = 0, done = 0;
	unsigned int inflight = 0;
	double t = now();

	while (done < n) {
		struct io_uring_cqe *cqe;
		int ret;

		while (inflight < qd && sub < n) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				die("io_uring: no free sqe");
			if (write)
				io_uring_prep_write(sqe, fd, src + o[sub], BLK,
						    o[sub]);
			else
				io_uring_prep_read(sqe, fd, dst + o[sub], BLK,
						   o[sub]);
			sqe->user_data = sub;
			sub++;
			inflight++;
		}
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			die("io_uring_submit_and_wait: %s", strerror(-ret));
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != BLK)
				die("io_uring %s at %llu: res %d (%s)",
				    write ? "WRITE" : "READ",
				    (unsigned long long)o[cqe->user_data],
				    cqe->res,
				    cqe->res < 0 ? strerror(-cqe->res) : "short");
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			done++;
		}
	}
	return mbps(n * BLK, now() - t);
}

static struct row *new_row(const char *sys, enum datagen_class c, int group)
{
	struct row *r;
	unsigned int i;

	/* a later round measures the same cell again into the same row */
	for (i = 0; round_idx && i < nr_rows; i++)
		if (!strcmp(rows[i].sys, sys) &&
		    !strcmp(rows[i].cls, datagen_class_name(c)))
			break;
	if (round_idx && i == nr_rows)
		die("%s/%s: a cell not measured in the first round", sys,
		    datagen_class_name(c));
	if (round_idx) {
		r = &rows[i];
	} else {
		if (nr_rows == MAX_ROWS)
			die("too many rows");
		r = &rows[nr_rows++];
		memset(r, 0, sizeof(*r));
		snprintf(r->sys, sizeof(r->sys), "%s", sys);
		snprintf(r->cls, sizeof(r->cls), "%s", datagen_class_name(c));
		r->spill = NA;
		r->ratio = NA;
		r->group = group;
	}
	for (i = 0; i < C_NR; i++)
		r->v[i] = NA;
	return r;
}

/* The cell's figures are this round's. */
static void row_keep(struct row *r)
{
	memcpy(r->rv[round_idx], r->v, sizeof(r->v));
}

/* Each cell's figure is the median of its rounds. */
static void rows_median(void)
{
	double tmp[MAX_ROUNDS];
	unsigned int i, k, j;

	for (i = 0; i < nr_rows; i++)
		for (k = 0; k < C_NR; k++) {
			for (j = 0; j < nr_rounds; j++)
				tmp[j] = rows[i].rv[j][k];
			rows[i].v[k] = tmp[0] == NA ? NA :
				       buddy_median(tmp, nr_rounds);
		}
}

/*
 * The whole sequence on @fd, which starts empty (all zero) and holds
 * cell_bytes; @small is the small random read size.
 */
static void measure_fd(struct row *r, int fd, size_t small)
{
	size_t n4k = rand_bytes / BLK;
	size_t nsmall = small_bytes / BUDDY_ENTRY_SIZE;	/* same ops for all */
	double t;

	r->v[C_SEQ_WR] = run_seq(fd, true);
	r->v[C_SEQ_RD] = read_back(fd, r->sys, r->cls);

	/* each random write phase is checked by the read phase after it */
	gen_offsets(offs4k, n4k, BLK, SEED ^ 1);
	r->v[C_WR4K] = run_rand(fd, true, offs4k, n4k, BLK);
	r->v[C_RD4K] = run_rand(fd, false, offs4k, n4k, BLK);
	check(offs4k, n4k, BLK, "random 4K pwrite/pread");

	gen_offsets(offs_small, nsmall, small, SEED ^ 0x5a11);
	t = now();
	r->v[C_RD128] = run_rand(fd, false, offs_small, nsmall, small);
	t = now() - t;
	r->v[C_KIOPS] = t > 0 ? nsmall / t / 1e3 : NA;
	check(offs_small, nsmall, small, "random small pread");

	gen_offsets(offs4k, n4k, BLK, SEED ^ 2);
	r->v[C_U1_WR] = run_uring(fd, true, 1, offs4k, n4k);
	r->v[C_U1_RD] = run_uring(fd, false, 1, offs4k, n4k);
	check(offs4k, n4k, BLK, "io_uring qd1 WRITE/READ");

	gen_offsets(offs4k, n4k, BLK, SEED ^ 3);
	r->v[C_U32_WR] = run_uring(fd, true, QD_MAX, offs4k, n4k);
	r->v[C_U32_RD] = run_uring(fd, false, QD_MAX, offs4k, n4k);
	check(offs4k, n4k, BLK, "io_uring qd32 WRITE/READ");
}

/* ---- buddy ---- */

static void bench_buddy(int devfd, unsigned int target, unsigned int codec,
			enum datagen_class c, int group)
{
	struct buddy_alloc_stat st;
	char sys[24], label[32];
	struct row *r;
	u64 stored = 0, spilled = 0;
	unsigned int i;
	double t = now();
	int fd, ret;

	snprintf(label, sizeof(label), "dev_bench-%s", datagen_class_name(c));
	fd = buddy_alloc_simple(devfd, cell_bytes, target, codec, label, NULL);
	if (fd < 0)
		die("allocation of %zu bytes at %s: %s", cell_bytes,
		    buddy_target_name(target),
		    buddy_strerror(-fd, BUDDY_OP_ALLOC));
	ret = buddy_alloc_stat(fd, &st);
	if (ret)
		die("BUDDY_IOC_ALLOC_STAT: %s", buddy_strerror(-ret, BUDDY_OP_STAT));
	snprintf(sys, sizeof(sys), "buddy %s %s", buddy_target_name(st.target),
		 buddy_codec_name(st.codec));
	r = new_row(sys, c, group);
	progress("# %-18s %-8s ...", r->sys, r->cls);

	measure_fd(r, fd, BUDDY_ENTRY_SIZE);

	ret = buddy_alloc_stat(fd, &st);
	if (ret)
		die("BUDDY_IOC_ALLOC_STAT: %s", buddy_strerror(-ret, BUDDY_OP_STAT));
	for (i = 0; i < BUDDY_CODE_NR; i++) {
		stored += st.codes[i] * buddy_code_bytes(i);
		if (st.target < BUDDY_TARGET_1X &&
		    buddy_code_bytes(i) > st.target)
			spilled += st.codes[i];
	}
	if (st.target < BUDDY_TARGET_1X)
		r->spill = st.nr_entries ? 100.0 * spilled / st.nr_entries : 0;
	r->ratio = stored ? (double)st.nr_entries * BUDDY_ENTRY_SIZE / stored
			  : -2;
	close(fd);
	row_keep(r);
	progress(" %.1fs\n", now() - t);
}

/* ---- mmap: the resident window (issue 13) ---- */

struct mrow {
	char sys[24];
	char cls[12];
	double fault_ps;	/* pages/s */
	double wb_ps;		/* pages/s, NA: none */
};

static struct mrow mrows[MAX_ROWS];
static unsigned int nr_mrows;

static void bench_mmap(int devfd, unsigned int target, unsigned int codec,
		       enum datagen_class c)
{
	size_t pages = cell_bytes / BLK, p;
	struct buddy_alloc_stat st;
	struct mrow *r;
	volatile u8 sink = 0;
	double t;
	int fd = -1, ret;
	u8 *m;

	if (nr_mrows == MAX_ROWS)
		die("too many mmap rows");
	r = &mrows[nr_mrows++];
	snprintf(r->cls, sizeof(r->cls), "%s", datagen_class_name(c));
	r->wb_ps = NA;
	if (devfd < 0) {
		snprintf(r->sys, sizeof(r->sys), "anonymous");
		m = mmap(NULL, cell_bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		t = now();
		for (p = 0; p < pages; p++)
			m[p * BLK] = 1;		/* first touch */
		r->fault_ps = pages / (now() - t);
		munmap(m, cell_bytes);
		return;
	}
	fd = buddy_alloc_simple(devfd, cell_bytes, target, codec, "dev_bench-mmap",
				NULL);
	if (fd < 0)
		die("allocation of %zu bytes at %s: %s", cell_bytes,
		    buddy_target_name(target), buddy_strerror(-fd, BUDDY_OP_ALLOC));
	ret = buddy_alloc_stat(fd, &st);
	if (ret)
		die("BUDDY_IOC_ALLOC_STAT: %s", buddy_strerror(-ret, BUDDY_OP_STAT));
	snprintf(r->sys, sizeof(r->sys), "buddy %s %s", buddy_target_name(st.target),
		 buddy_codec_name(st.codec));
	progress("# mmap %-18s %-8s ...", r->sys, r->cls);
	io_full(fd, true, src, cell_bytes, 0, "mmap cell");
	m = mmap(NULL, cell_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		die("mmap of an allocation: %s", strerror(errno));
	t = now();
	for (p = 0; p < pages; p++)
		sink ^= m[p * BLK];
	r->fault_ps = pages / (now() - t);
	if (memcmp(m, src, cell_bytes))
		die("mmap %s %s: the mapping differs from what was written",
		    r->sys, r->cls);
	for (p = 0; p < pages; p++)
		m[p * BLK + 7] ^= 0x5a;		/* dirty every page */
	t = now();
	if (msync(m, cell_bytes, MS_SYNC))
		die("msync: %s", strerror(errno));
	r->wb_ps = pages / (now() - t);
	(void)sink;
	munmap(m, cell_bytes);
	close(fd);
	progress(" %.0f / %.0f pages/s\n", r->fault_ps, r->wb_ps);
}

static void print_mmap_table(FILE *f, unsigned int window_mb)
{
	unsigned int i;

	fprintf(f, "=== dev_bench mmap table ===\n");
	fprintf(f, "cell %zu MiB, window_mb %u; 4 KiB pages per second (TCG: relative figures only)\n",
		cell_bytes >> 20, window_mb);
	fprintf(f, "%-20s %-9s %12s %12s\n", "system", "class", "fault-in/s",
		"write-back/s");
	for (i = 0; i < nr_mrows; i++) {
		fprintf(f, "%-20s %-9s %12.0f ", mrows[i].sys, mrows[i].cls,
			mrows[i].fault_ps);
		if (mrows[i].wb_ps == NA)
			fprintf(f, "%12s\n", "-");
		else
			fprintf(f, "%12.0f\n", mrows[i].wb_ps);
	}
	fprintf(f, "=== end dev_bench mmap table ===\n");
}

/* A buddy.ko parameter: read it into @old (when not NULL), write @val. */
static int param_swap(const char *name, unsigned int val, unsigned int *old)
{
	char path[PATH_MAX], buf[32];
	FILE *fp;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	fp = fopen(path, "r+");
	if (!fp)
		return -errno;
	if (old && fgets(buf, sizeof(buf), fp))
		*old = strtoul(buf, NULL, 10);
	rewind(fp);
	ok = fprintf(fp, "%u\n", val) > 0;
	return fclose(fp) || !ok ? -EIO : 0;
}

/* ---- zram ---- */

static char zram_sys[PATH_MAX];

static int sysfs_write(const char *attr, const char *val)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", zram_sys, attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static int sysfs_read(const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", zram_sys, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static void zram_setup(const char *alg)
{
	char s[32];
	int ret;

	ret = sysfs_write("reset", "1");
	if (ret)
		die("%s/reset: %s", zram_sys, strerror(-ret));
	ret = sysfs_write("comp_algorithm", alg);
	if (ret)
		die("%s/comp_algorithm=%s: %s (compressor module loaded?)",
		    zram_sys, alg, strerror(-ret));
	snprintf(s, sizeof(s), "%zu", cell_bytes);
	ret = sysfs_write("disksize", s);
	if (ret)
		die("%s/disksize=%s: %s", zram_sys, s, strerror(-ret));
}

static void bench_zram(const char *dev, const char *alg, enum datagen_class c,
		       int group)
{
	unsigned long long orig = 0, compr = 0;
	char sys[24], buf[256];
	struct row *r;
	double t = now();
	int fd;

	zram_setup(alg);
	fd = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		die("open %s O_DIRECT: %s", dev, strerror(errno));
	if (!zram_small) {
		/* the smallest O_DIRECT read the device takes: 512 bytes? */
		ssize_t n = pread(fd, dst, 512, 512);
		char lbs[32] = "";

		zram_512_err = n == 512 ? 0 : n < 0 ? errno : EIO;
		zram_small = 512;
		if (zram_512_err &&
		    sysfs_read("queue/logical_block_size", lbs, sizeof(lbs)) == 0 &&
		    (unsigned int)atoi(lbs) > zram_small)
			zram_small = atoi(lbs);
	}
	snprintf(sys, sizeof(sys), "zram %s", alg);
	r = new_row(sys, c, group);
	progress("# %-18s %-8s ...", r->sys, r->cls);

	measure_fd(r, fd, zram_small);

	if (sysfs_read("mm_stat", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%llu %llu", &orig, &compr) == 2)
		r->ratio = compr ? (double)orig / compr : -2;
	close(fd);
	row_keep(r);
	progress(" %.1fs\n", now() - t);
}

/* ---- goals: buddy and zram in alternating blocks (issue 16) ---- */

static unsigned int pair_blocks = 128;	/* -B: block pairs per goal */
static unsigned int pair_ops = 256;	/* -O: ops per block */
#define PAIR_MAX_BLOCKS	4096
#define PAIR_MAX_OPS	(1u << 20)	/* (blocks + 1) x ops */

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

static void add_goal(unsigned int target, unsigned int codec,
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
static void pair_goals(int devfd, const char *zdev, const char *alg)
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

/* ---- memcpy ---- */

static double memcpy_seq(void)
{
	double t = now();
	size_t off;

	for (off = 0; off < cell_bytes; off += SEQ_IO)
		memcpy(dst + off, src + off, SEQ_IO);
	return mbps(cell_bytes, now() - t);
}

static double memcpy_rand(const u64 *o, size_t n, size_t len)
{
	double t = now();
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(dst + o[i], src + o[i], len);
		__asm__ volatile("" ::: "memory");
	}
	return mbps(n * len, now() - t);
}

static void bench_memcpy(enum datagen_class c, int group)
{
	size_t n4k = rand_bytes / BLK, nsmall = small_bytes / BUDDY_ENTRY_SIZE;
	struct row *r = new_row("memcpy", c, group);
	double t;

	memset(dst, 0, cell_bytes);
	r->v[C_SEQ_WR] = memcpy_seq();
	r->v[C_SEQ_RD] = memcpy_seq();
	gen_offsets(offs4k, n4k, BLK, SEED ^ 1);
	r->v[C_RD4K] = memcpy_rand(offs4k, n4k, BLK);
	gen_offsets(offs_small, nsmall, BUDDY_ENTRY_SIZE, SEED ^ 0x5a11);
	t = now();
	r->v[C_RD128] = memcpy_rand(offs_small, nsmall, BUDDY_ENTRY_SIZE);
	t = now() - t;
	r->v[C_KIOPS] = t > 0 ? nsmall / t / 1e3 : NA;
	r->v[C_WR4K] = memcpy_rand(offs4k, n4k, BLK);
	if (memcmp(dst, src, cell_bytes))
		die("memcpy: copy differs");
	row_keep(r);
}

/*
 * One small untimed pass through the buddy and zram paths first, so that
 * the first timed cell does not pay for TCG's code translation.
 */
static void warmup(int devfd, const char *zdev, const char *alg)
{
	size_t cb = cell_bytes, rb = rand_bytes, sb = small_bytes;
	unsigned int nr = nr_rows;

	progress("# warm-up (1 MiB, not reported)\n");
	cell_bytes = 1u << 20;
	rand_bytes = 1u << 20;
	small_bytes = 64u << 10;
	datagen_fill(DATAGEN_MIXED, SEED, src, cell_bytes);
	bench_buddy(devfd, BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT, DATAGEN_MIXED, 0);
	if (zdev)
		bench_zram(zdev, alg, DATAGEN_MIXED, 0);
	nr_rows = nr;
	cell_bytes = cb;
	rand_bytes = rb;
	small_bytes = sb;
}

/* ---- output ---- */

static void fmt_val(char *b, size_t len, double v)
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
 * The goals of issue 16, judged on the paired pass (pair_goals()); then,
 * for comparison only, the same ratios from the table's cells.
 */
static void print_goals(FILE *f)
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

int main(int argc, char **argv)
{
	const char *classes = "zero,ramp,float32,relu50,random,mixed";
	const char *targets = "1x,4/3x,2x,4x,16x";
	const char *zdev = NULL, *alg = "lz4";
	enum datagen_class cls[DATAGEN_NR];
	unsigned int tgt[8], ncls = 0, ntgt = 0, i, j;
	char *list, *tok, *save;
	char params[1024], znote[512] = "";
	struct buddy_info info;
	struct utsname uts;
	double t0 = now(), t;
	int opt, devfd, ret, group = 0, node = -1;
	unsigned int mmap_window = 0, ncells = 0;
	struct cell cells[8 * DATAGEN_NR + 2 * DATAGEN_NR + 1];

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
			classes = optarg;
			break;
		case 't':
			targets = optarg;
			break;
		case 'z':
			zdev = optarg;
			break;
		case 'a':
			alg = optarg;
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
			node = atoi(optarg);
			if (node < 0)
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
	ret = bench_numa_place("dev_bench", node);
	if (ret)
		return ret;

	list = strdup(classes);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int c = datagen_class_by_name(tok);

		if (c < 0 || ncls == DATAGEN_NR)
			die("unknown data class '%s'", tok);
		cls[ncls++] = c;
	}
	free(list);
	list = strdup(targets);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (ntgt == 8 || buddy_target_parse(tok, &tgt[ntgt]) ||
		    tgt[ntgt] == BUDDY_TARGET_AUTO)
			die("bad target '%s'", tok);
		ntgt++;
	}
	free(list);

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
	ret = buddy_get_info(devfd, &info);
	if (ret)
		die("BUDDY_IOC_GET_INFO: %s", buddy_strerror(-ret, BUDDY_OP_INFO));
	if (!(info.features & BUDDY_FEAT_IO_URING))
		die("the module does not announce io_uring support");

	if (zdev) {
		struct stat sb;
		const char *base = strrchr(zdev, '/');

		base = base ? base + 1 : zdev;
		snprintf(zram_sys, sizeof(zram_sys), "/sys/block/%s", base);
		if (stat(zdev, &sb) || !S_ISBLK(sb.st_mode))
			die("%s: not a block device", zdev);
	}

	uname(&uts);
	snprintf(params, sizeof(params),
		 "kernel %s %s; buddy pool %llu MiB device + %llu MiB carve-out\n"
		 "cell: %zu MiB, new allocation/disk per row; MB/s = 1e6 B/s of payload;\n"
		 "seq = %u KiB pread/pwrite; rd4K/wr4K and ur* = %zu random 4 KiB ops;\n"
		 "rd128 = %zu random 128 B preads (kIOPS: same run); ur1/ur32 = io_uring queue depth 1/32\n"
		 "spill%% = entries over target (in buddy memory); ratio = stored compression\n",
		 uts.release, uts.machine,
		 (unsigned long long)info.device_bytes >> 20,
		 (unsigned long long)info.buddy_bytes >> 20,
		 cell_bytes >> 20, SEQ_IO >> 10, rand_bytes / BLK,
		 small_bytes / BUDDY_ENTRY_SIZE);
	if (nr_rounds > 1)
		snprintf(params + strlen(params), sizeof(params) - strlen(params),
			 "each figure: the median of %u rounds (odd rounds in reverse order)\n",
			 nr_rounds);
	if (node >= 0)
		snprintf(params + strlen(params), sizeof(params) - strlen(params),
			 "on the CPUs of NUMA node %d (libnuma); pools on nodes %d and %d\n",
			 node, info.device_node, info.buddy_node);

	/* the cells of one round, in the table's order */
	for (i = 0; i < ntgt; i++, group++)
		for (j = 0; j < ncls; j++)
			cells[ncells++] = (struct cell){ CELL_BUDDY, tgt[i],
				BUDDY_CODEC_DEFAULT, cls[j], group };
	for (j = 0; j < ncls; j++)
		cells[ncells++] = (struct cell){ CELL_BUDDY, BUDDY_TARGET_1X,
			BUDDY_CODEC_NONE, cls[j], group };
	group++;
	for (j = 0; zdev && j < ncls; j++)
		cells[ncells++] = (struct cell){ CELL_ZRAM, 0, 0, cls[j], group };
	group += !!zdev;
	cells[ncells++] = (struct cell){ CELL_MEMCPY, 0, 0, DATAGEN_MIXED, group };

	warmup(devfd, zdev, alg);
	for (round_idx = 0; round_idx < nr_rounds; round_idx++) {
		if (nr_rounds > 1)
			progress("# round %u of %u\n", round_idx + 1, nr_rounds);
		for (i = 0; i < ncells; i++) {
			/* odd rounds backwards: a drift in host speed
			 * favours no row */
			const struct cell *cl = &cells[round_idx % 2 ?
						       ncells - 1 - i : i];

			datagen_fill(cl->c, SEED + cl->c, src, cell_bytes);
			if (cl->kind == CELL_BUDDY)
				bench_buddy(devfd, cl->target, cl->codec, cl->c,
					    cl->group);
			else if (cl->kind == CELL_ZRAM)
				bench_zram(zdev, alg, cl->c, cl->group);
			else
				bench_memcpy(cl->c, cl->group);
		}
	}
	round_idx = 0;
	rows_median();

	/* the goals of issue 16, in the order they are printed */
	for (j = 0; zdev && pair_blocks && j < ncls; j++)
		if (cls[j] == DATAGEN_MIXED)
			break;
	if (zdev && pair_blocks && j < ncls) {
		add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_SEQ_RD, 1.0);
		add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_RD4K, 1.0);
		add_goal(BUDDY_TARGET_1X, BUDDY_CODEC_NONE, C_WR4K, 1.0);
		/* raised by the vector codec's goals from 0.5x and 1.0x */
		add_goal(BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT, C_RD4K, 1.0);
		add_goal(BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT, C_SEQ_WR, 2.0);
		for (i = 0; i < ntgt; i++)
			add_goal(tgt[i], BUDDY_CODEC_DEFAULT, C_KIOPS, 3.0);
		t = now();
		pair_goals(devfd, zdev, alg);
		progress("# paired pass (goals) done in %.1fs\n", now() - t);
	}
	if (zdev) {
		snprintf(znote, sizeof(znote),
			 "zram: O_DIRECT on %s, comp_algorithm %s, disksize %zu MiB, reset per row.\n"
			 "  Its rd128 and kIOPS are %u-byte random reads, each decompressing a whole\n"
			 "  4 KiB page%s%s%s.\n"
			 "  ur*: 6.1's zram lacks QUEUE_FLAG_NOWAIT, so io_uring hands every op to an\n"
			 "  io-wq worker thread.\n",
			 zdev, alg, cell_bytes >> 20, zram_small,
			 zram_512_err ? " (512-byte O_DIRECT reads fail with \"" : "",
			 zram_512_err ? strerror(zram_512_err) : "",
			 zram_512_err ? "\": below the\n  device's logical block size)" : "");
		ret = sysfs_write("reset", "1");
		if (ret)
			die("%s/reset: %s", zram_sys, strerror(-ret));
	}

	if (info.features & BUDDY_FEAT_MMAP) {
		unsigned int old = 0, win = (cell_bytes >> 20) + 4;

		ret = param_swap("window_mb", win, &old);
		if (ret)
			die("%s/window_mb: %s", BUDDY_PARAM_DIR, strerror(-ret));
		for (i = 0; i < ntgt; i++)
			for (j = 0; j < ncls; j++) {
				datagen_fill(cls[j], SEED + cls[j], src, cell_bytes);
				bench_mmap(devfd, tgt[i], BUDDY_CODEC_DEFAULT, cls[j]);
			}
		for (j = 0; j < ncls; j++) {
			datagen_fill(cls[j], SEED + cls[j], src, cell_bytes);
			bench_mmap(devfd, BUDDY_TARGET_1X, BUDDY_CODEC_NONE, cls[j]);
		}
		for (j = 0; j < ncls; j++)
			bench_mmap(-1, 0, 0, cls[j]);
		param_swap("window_mb", old, NULL);
		mmap_window = win;
	}

	io_uring_queue_exit(&ring);
	close(devfd);
	progress("# all cells done in %.1fs\n", now() - t0);
	fflush(stderr);
	print_table(stdout, params, znote);
	if (nr_mrows)
		print_mmap_table(stdout, mmap_window);
	return 0;
}
