// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench_cells.c - dev_bench's cells: one system and data class, each
 * run through every column of the table (Documentation/benchmarks.rst).
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

const char *const col_names[C_NR] = {
	"seq-rd", "seq-wr", "rd4K", "wr4K", "rd128",
	"ur1-rd", "ur1-wr", "ur32-rd", "ur32-wr", "kIOPS",
};


struct row rows[MAX_ROWS];

unsigned int nr_rows;

size_t cell_bytes = 16u << 20;

size_t rand_bytes = 8u << 20;

/* 16384 small reads per cell: 4096 took 20 ms in a guest, too short there */
size_t small_bytes = 2048u << 10;

unsigned int nr_rounds = 1, round_idx;

bool quiet;

unsigned int zram_small;	/* small-read size used on zram */

int zram_512_err;	/* errno of a 512-byte O_DIRECT read, 0: ok */

u8 *src, *dst;

u64 *offs4k, *offs_small;

struct io_uring ring;

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("dev_bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void progress(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double mbps(size_t bytes, double secs)
{
	return secs > 0 ? bytes / secs / 1e6 : NA;
}

void *xalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, BLK, len))
		die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

/* Random @align-aligned offsets of @len-byte ops inside the cell. */
void gen_offsets(u64 *o, size_t n, size_t align, u64 seed)
{
	struct datagen_rng r;
	u32 slots = cell_bytes / align;
	size_t i;

	datagen_seed(&r, seed);
	for (i = 0; i < n; i++)
		o[i] = (u64)datagen_below(&r, slots) * align;
}

void check(const u64 *o, size_t n, size_t len, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (memcmp(dst + o[i], src + o[i], len))
			die("%s: data mismatch at offset %llu", what,
			    (unsigned long long)o[i]);
}

/* ---- one system's measurements (pread/pwrite and io_uring on an fd) ---- */

void io_full(int fd, bool write, u8 *buf, size_t len, u64 off,
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

double run_seq(int fd, bool write)
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
double read_back(int fd, const char *sys, const char *cls)
{
	double r;

	memset(dst, 0xa5, cell_bytes);
	r = run_seq(fd, false);
	if (memcmp(dst, src, cell_bytes))
		die("%s/%s: sequential read-back differs", sys, cls);
	return r;
}

double run_rand(int fd, bool write, const u64 *o, size_t n, size_t len)
{
	double t = now();
	size_t i;

	for (i = 0; i < n; i++)
		io_full(fd, write, (write ? src : dst) + o[i], len, o[i],
			write ? "random pwrite" : "random pread");
	return mbps(n * len, now() - t);
}

double run_uring(int fd, bool write, unsigned int qd, const u64 *o,
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

struct row *new_row(const char *sys, enum datagen_class c, int group)
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
void row_keep(struct row *r)
{
	memcpy(r->rv[round_idx], r->v, sizeof(r->v));
}

/* Each cell's figure is the median of its rounds. */
void rows_median(void)
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
void measure_fd(struct row *r, int fd, size_t small)
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

void bench_buddy(int devfd, unsigned int target, unsigned int codec,
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

/* A buddy.ko parameter: read it into @old (when not NULL), write @val. */
int param_swap(const char *name, unsigned int val, unsigned int *old)
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

char zram_sys[PATH_MAX];

int zram_attr_write(const char *attr, const char *val)
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

int zram_attr_read(const char *attr, char *buf, size_t len)
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

void zram_setup(const char *alg)
{
	char s[32];
	int ret;

	ret = zram_attr_write("reset", "1");
	if (ret)
		die("%s/reset: %s", zram_sys, strerror(-ret));
	ret = zram_attr_write("comp_algorithm", alg);
	if (ret)
		die("%s/comp_algorithm=%s: %s (compressor module loaded?)",
		    zram_sys, alg, strerror(-ret));
	snprintf(s, sizeof(s), "%zu", cell_bytes);
	ret = zram_attr_write("disksize", s);
	if (ret)
		die("%s/disksize=%s: %s", zram_sys, s, strerror(-ret));
}

void bench_zram(const char *dev, const char *alg, enum datagen_class c,
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
		    zram_attr_read("queue/logical_block_size", lbs, sizeof(lbs)) == 0 &&
		    (unsigned int)atoi(lbs) > zram_small)
			zram_small = atoi(lbs);
	}
	snprintf(sys, sizeof(sys), "zram %s", alg);
	r = new_row(sys, c, group);
	progress("# %-18s %-8s ...", r->sys, r->cls);

	measure_fd(r, fd, zram_small);

	if (zram_attr_read("mm_stat", buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%llu %llu", &orig, &compr) == 2)
		r->ratio = compr ? (double)orig / compr : -2;
	close(fd);
	row_keep(r);
	progress(" %.1fs\n", now() - t);
}

/* ---- memcpy ---- */

double memcpy_seq(void)
{
	double t = now();
	size_t off;

	for (off = 0; off < cell_bytes; off += SEQ_IO)
		memcpy(dst + off, src + off, SEQ_IO);
	return mbps(cell_bytes, now() - t);
}

double memcpy_rand(const u64 *o, size_t n, size_t len)
{
	double t = now();
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(dst + o[i], src + o[i], len);
		__asm__ volatile("" ::: "memory");
	}
	return mbps(n * len, now() - t);
}

void bench_memcpy(enum datagen_class c, int group)
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
void warmup(int devfd, const char *zdev, const char *alg)
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
