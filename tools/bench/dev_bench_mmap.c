// SPDX-License-Identifier: GPL-2.0
/*
 * dev_bench_mmap.c - dev_bench's second table: the resident window's
 * fault-in and write-back rates per target and class, next to a 1x
 * allocation and an anonymous mapping.
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

/* ---- mmap: the resident window ---- */

struct mrow {
	char sys[24];
	char cls[12];
	double fault_ps;	/* pages/s */
	double wb_ps;		/* pages/s, NA: none */
};

static struct mrow mrows[MAX_ROWS];

unsigned int nr_mrows;

void bench_mmap(int devfd, unsigned int target, unsigned int codec,
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

void print_mmap_table(FILE *f, unsigned int window_mb)
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
