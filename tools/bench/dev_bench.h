/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dev_bench.h - what the files of dev_bench share: the table's rows and
 * columns, the run's parameters, the I/O helpers.
 */
#ifndef BUDDY_DEV_BENCH_H
#define BUDDY_DEV_BENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <liburing.h>

#include "core/codec.h"
#include "lib/libbuddy.h"
#include "numa_place.h"
#include "tools/common/datagen.h"
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

extern const char *const col_names[C_NR];

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
extern struct row rows[MAX_ROWS];
extern unsigned int nr_rows;

/* the run's parameters (options) */
extern size_t cell_bytes, rand_bytes, small_bytes;
extern unsigned int nr_rounds, round_idx;
extern bool quiet;
extern unsigned int zram_small;	/* small-read size used on zram */
extern int zram_512_err;	/* errno of a 512-byte O_DIRECT read, 0: ok */
extern char zram_sys[PATH_MAX];	/* /sys/block/zramN */

/* the data of a cell, the offsets of its random phases, the ring */
extern u8 *src, *dst;
extern u64 *offs4k, *offs_small;
extern struct io_uring ring;

/* dev_bench_cells.c */
void die(const char *fmt, ...);
void progress(const char *fmt, ...);
double now(void);
double mbps(size_t bytes, double secs);
void *xalloc(size_t len);
void gen_offsets(u64 *o, size_t n, size_t align, u64 seed);
void check(const u64 *o, size_t n, size_t len, const char *what);
void io_full(int fd, bool write, u8 *buf, size_t len, u64 off,
		    const char *what);
double run_seq(int fd, bool write);
double read_back(int fd, const char *sys, const char *cls);
double run_rand(int fd, bool write, const u64 *o, size_t n, size_t len);
double run_uring(int fd, bool write, unsigned int qd, const u64 *o,
			size_t n);
struct row *new_row(const char *sys, enum datagen_class c, int group);
void row_keep(struct row *r);
void rows_median(void);
void measure_fd(struct row *r, int fd, size_t small);
void bench_buddy(int devfd, unsigned int target, unsigned int codec,
			enum datagen_class c, int group);
int param_swap(const char *name, unsigned int val, unsigned int *old);
int zram_attr_write(const char *attr, const char *val);
int zram_attr_read(const char *attr, char *buf, size_t len);
void zram_setup(const char *alg);
void bench_zram(const char *dev, const char *alg, enum datagen_class c,
		       int group);
double memcpy_seq(void);
double memcpy_rand(const u64 *o, size_t n, size_t len);
void bench_memcpy(enum datagen_class c, int group);
void warmup(int devfd, const char *zdev, const char *alg);

/* dev_bench_goals.c */
#define PAIR_MAX_BLOCKS	4096
#define PAIR_MAX_OPS	(1u << 20)	/* (blocks + 1) x ops */
extern unsigned int pair_blocks, pair_ops;
void add_goal(unsigned int target, unsigned int codec, unsigned int col,
	      double factor);
void pair_goals(int devfd, const char *zdev, const char *alg);
void fmt_val(char *b, size_t len, double v);
void print_goals(FILE *f);

/* dev_bench_mmap.c */
extern unsigned int nr_mrows;
void bench_mmap(int devfd, unsigned int target, unsigned int codec,
		enum datagen_class c);
void print_mmap_table(FILE *f, unsigned int window_mb);

#endif /* BUDDY_DEV_BENCH_H */
