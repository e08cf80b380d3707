// SPDX-License-Identifier: GPL-2.0
/*
 * buddy_twin - one scripted workload on two devices, everything compared.
 *
 *   buddy_twin DEVICE_A DEVICE_B
 *
 * Each DEVICE is a path (/dev/buddy) or "inproc:OPTS".  The workload makes
 * allocations at every target with every codec, writes and reads them
 * (whole, unaligned, partial entries, across the end), re-targets two of
 * them, runs into -ENOSPC and -E2BIG, makes AUTO allocations with and
 * without a profile and frees some.  At each of its checkpoints it takes
 * every allocation's ALLOC_STAT (histogram, counters, pool bytes, target,
 * codec, source), GET_INFO (pool usage, logical bytes, ratio) and the
 * device-wide counters and histogram (sysfs io_stat/code_stat, or the
 * in-process device's), and the errno of every call.  link_ns (the link
 * model, core/link_model.h) is compared like the counters; the window counters
 * are compared too, 0 on both since nothing is mapped; BUDDY_FEAT_MMAP is
 * the one feature bit the in-process device lacks.  The two runs must
 * agree on all of it: one TAP line per checkpoint and kind.
 *
 * `make check-lib` runs it in the guest on a freshly loaded buddy.ko
 * against the in-process device with the module's parameters;
 * `make check-inproc` runs it on two in-process devices.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "lib/libbuddy.h"

#define MAX_CHECKS	8
#define MAX_ALLOCS	64
#define MAX_RESULTS	512

struct snap {
	struct buddy_info info;
	struct buddy_counters io;
	uint64_t codes[BUDDY_CODE_NR];
	unsigned int nr;
	struct buddy_alloc_stat st[MAX_ALLOCS];
};

struct run {
	const char *name;
	int devfd;
	struct snap snap[MAX_CHECKS];
	unsigned int nr_snaps;
	long results[MAX_RESULTS];	/* every call's return value */
	unsigned int nr_results;
	int fds[MAX_ALLOCS];
	uint64_t ids[MAX_ALLOCS];
	unsigned int nr_fds;
	int failed;
};

static void note(struct run *r, long v)
{
	if (r->nr_results < MAX_RESULTS)
		r->results[r->nr_results++] = v;
}

static void checkpoint(struct run *r)
{
	struct snap *s = &r->snap[r->nr_snaps++];
	uint64_t total;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = buddy_get_info(r->devfd, &s->info);
	ret = ret ? ret : buddy_device_stats(r->devfd, &s->io, s->codes);
	ret = ret ? ret : buddy_list(r->devfd, 0, s->st, MAX_ALLOCS, &s->nr,
				     &total);
	if (ret) {
		fprintf(stderr, "buddy_twin: %s: %s\n", r->name, strerror(-ret));
		r->failed = 1;
	}
}

static int alloc(struct run *r, uint64_t size, unsigned int target,
		 unsigned int codec, const char *label)
{
	uint64_t id = 0;
	int fd = buddy_alloc_simple(r->devfd, size, target, codec, label, &id);

	note(r, fd < 0 ? fd : 0);
	if (fd >= 0) {
		r->fds[r->nr_fds] = fd;
		r->ids[r->nr_fds++] = id;
	}
	return fd;
}

/* The workload: the same calls in the same order on any device. */
static void workload(struct run *r)
{
	static const unsigned int targets[] = {
		BUDDY_TARGET_1X, BUDDY_TARGET_4_3X, BUDDY_TARGET_2X,
		BUDDY_TARGET_4X, BUDDY_TARGET_16X,
	};
	static const unsigned int codecs[] = {
		BUDDY_CODEC_BPC, BUDDY_CODEC_ZVC, BUDDY_CODEC_BDI,
		BUDDY_CODEC_FPC, BUDDY_CODEC_NONE,
	};
	size_t max = 600 * 1024;
	uint8_t *buf = malloc(max), *back = malloc(max);
	struct buddy_profile_entry pe;
	struct buddy_alloc res;
	unsigned int t, c, k = 0;
	int fd;

	/* every target with every codec; mixed I/O */
	for (t = 0; t < 5; t++) {
		for (c = 0; c < 5; c++, k++) {
			uint64_t size = 100 * 1024 + k * 1000 + 77;
			char label[16];

			snprintf(label, sizeof(label), "w%u", k);
			fd = alloc(r, size, targets[t], codecs[c], label);
			if (fd < 0)
				continue;
			datagen_fill(k % DATAGEN_NR, k, buf, size);
			note(r, buddy_pwrite(fd, buf, size, 0));
			/* unaligned, partial entries, across the end */
			datagen_fill((k + 3) % DATAGEN_NR, k + 100, buf, 5000);
			note(r, buddy_pwrite(fd, buf, 3333, 1001 + k * 13));
			note(r, buddy_pwrite(fd, buf, 5000, size - 2000));
			note(r, buddy_pwrite(fd, buf, 1, size));
			note(r, buddy_pread(fd, back, size, 0));
			note(r, buddy_pread(fd, back, 777, 129 + k));
			note(r, buddy_pread(fd, back, 100, size + 5));
		}
	}
	checkpoint(r);

	/* re-targets: one to 4x with ZVC, one to 1x, one no-op */
	note(r, buddy_set_target(r->devfd, r->ids[12], BUDDY_TARGET_4X,
				 BUDDY_CODEC_ZVC));
	note(r, buddy_set_target(r->devfd, r->ids[20], BUDDY_TARGET_1X, 0));
	note(r, buddy_set_target(r->devfd, r->ids[3], BUDDY_TARGET_1X, 0));
	note(r, buddy_set_target(r->devfd, r->ids[3], BUDDY_TARGET_1X, 0));
	note(r, buddy_pwrite(r->fds[12], buf, 4096, 8192));
	note(r, buddy_pread(r->fds[20], back, 64 * 1024, 0));
	checkpoint(r);

	/* out of room: the pools, a re-target, could never fit */
	fd = alloc(r, 9 << 20, BUDDY_TARGET_1X, BUDDY_CODEC_BPC, "big");
	if (fd >= 0) {
		datagen_fill(DATAGEN_FLOAT32, 9, buf, max);
		note(r, buddy_pwrite(fd, buf, max, 3 << 20));
		/* old and new extents at once do not fit: -ENOSPC */
		note(r, buddy_set_target(r->devfd, r->ids[r->nr_fds - 1],
					 BUDDY_TARGET_4_3X, 0));
	}
	note(r, alloc(r, 8 << 20, BUDDY_TARGET_1X, BUDDY_CODEC_BPC, "nospc"));
	note(r, buddy_set_target(r->devfd, r->ids[24], BUDDY_TARGET_1X, 0));
	note(r, alloc(r, 1ULL << 40, BUDDY_TARGET_2X, 0, "e2big"));
	note(r, buddy_set_target(r->devfd, 999, BUDDY_TARGET_2X, 0));
	note(r, buddy_set_target(r->devfd, r->ids[0], 100, 0));
	checkpoint(r);

	/* AUTO with and without a profile */
	memset(&pe, 0, sizeof(pe));
	pe.uid = getuid();
	pe.target = BUDDY_TARGET_2X;
	pe.codec = BUDDY_CODEC_FPC;
	strcpy(pe.label, "auto-p");
	note(r, buddy_profile_set(r->devfd, &pe, 1, BUDDY_PROFILE_REPLACE));
	fd = buddy_alloc_auto(r->devfd, 50000, "auto-p", &res);
	note(r, fd < 0 ? fd : (long)(res.target << 8 | res.codec << 4 |
				     res.target_source));
	if (fd >= 0) {
		note(r, buddy_pwrite(fd, buf, 50000, 0));
		r->fds[r->nr_fds++] = fd;
	}
	fd = buddy_alloc_auto(r->devfd, 7000, "auto-none", &res);
	note(r, fd < 0 ? fd : (long)(res.target << 8 | res.codec << 4 |
				     res.target_source));
	if (fd >= 0)
		r->fds[r->nr_fds++] = fd;
	note(r, buddy_profile_set(r->devfd, NULL, 0, BUDDY_PROFILE_REPLACE));
	checkpoint(r);

	/* free every other allocation */
	for (k = 0; k < r->nr_fds; k += 2)
		note(r, buddy_close(r->fds[k]));
	checkpoint(r);
	for (k = 1; k < r->nr_fds; k += 2)
		buddy_close(r->fds[k]);
	free(buf);
	free(back);
}

static unsigned int tap_n, tap_fail;

static void tap(bool ok, const char *fmt, unsigned int cp)
{
	printf("%s %u ", ok ? "ok" : "not ok", ++tap_n);
	printf(fmt, cp);
	putchar('\n');
	tap_fail += !ok;
}

/* Compare two stats field by field; say which differs. */
static bool same_stat(const struct buddy_alloc_stat *a,
		      const struct buddy_alloc_stat *b, unsigned int cp)
{
	const uint64_t *ca = (const uint64_t *)&a->counters;
	const uint64_t *cb = (const uint64_t *)&b->counters;
	bool ok = true;
	unsigned int k;

#define F(f) do {							\
		if (a->f != b->f) {					\
			printf("# checkpoint %u, allocation %llu: %s %llu != %llu\n", \
			       cp, (unsigned long long)a->id, #f,	\
			       (unsigned long long)a->f,		\
			       (unsigned long long)b->f);		\
			ok = false;					\
		}							\
	} while (0)
	F(id); F(size); F(target); F(codec); F(owner_uid); F(owner_pid);
	F(device_bytes); F(buddy_bytes); F(nr_entries); F(target_source);
	/*
	 * The link model is one formula over the counters (core/link_model.h).
	 * The in-process device has no mmap and the workload maps nothing:
	 * the window counters are 0 on both (a pread/pwrite counts a window
	 * hit only for a resident page).
	 */
	F(link_ns); F(window_faults); F(window_hits); F(window_writebacks);
	F(window_evictions); F(window_resident); F(link_requests);
	for (k = 0; k < BUDDY_CODE_SLOTS; k++)
		F(codes[k]);
#undef F
	for (k = 0; k < sizeof(a->counters) / 8; k++) {
		if (ca[k] != cb[k]) {
			printf("# checkpoint %u, allocation %llu: counter %u %llu != %llu\n",
			       cp, (unsigned long long)a->id, k,
			       (unsigned long long)ca[k],
			       (unsigned long long)cb[k]);
			ok = false;
		}
	}
	if (strncmp(a->label, b->label, BUDDY_LABEL_LEN)) {
		printf("# checkpoint %u: labels differ\n", cp);
		ok = false;
	}
	return ok;
}

static void compare(struct run *a, struct run *b)
{
	unsigned int cp, k;

	tap(a->nr_results == b->nr_results &&
	    !memcmp(a->results, b->results,
		    a->nr_results * sizeof(a->results[0])),
	    "every call returned the same (%u calls)", a->nr_results);
	for (k = 0; k < a->nr_results && k < b->nr_results; k++)
		if (a->results[k] != b->results[k])
			printf("# call %u: %ld != %ld\n", k, a->results[k],
			       b->results[k]);
	for (cp = 0; cp < a->nr_snaps; cp++) {
		struct snap *x = &a->snap[cp], *y = &b->snap[cp];
		bool ok = x->nr == y->nr && x->nr > 0;
		struct buddy_info *i = &x->info, *j = &y->info;

		for (k = 0; k < x->nr && k < y->nr; k++)
			ok &= same_stat(&x->st[k], &y->st[k], cp);
		tap(ok, "checkpoint %u: every allocation's histogram, counters, pool bytes, target, codec",
		    cp);
		ok = i->device_bytes == j->device_bytes &&
		     i->buddy_bytes == j->buddy_bytes &&
		     i->device_used == j->device_used &&
		     i->buddy_used == j->buddy_used &&
		     i->logical_bytes == j->logical_bytes &&
		     i->ratio_milli == j->ratio_milli &&
		     i->nr_allocs == j->nr_allocs &&
		     i->chunk_bytes == j->chunk_bytes &&
		     i->max_ratio == j->max_ratio &&
		     /* mmap is buddy.ko's alone (userspace-api.rst) */
		     (i->features & ~BUDDY_FEAT_MMAP) ==
		     (j->features & ~BUDDY_FEAT_MMAP) &&
		     (i->features & BUDDY_FEAT_LINK_MODEL) &&
		     i->codecs == j->codecs;
		if (!ok)
			printf("# checkpoint %u: device used %llu/%llu buddy used %llu/%llu logical %llu/%llu allocs %u/%u\n",
			       cp, (unsigned long long)i->device_used,
			       (unsigned long long)j->device_used,
			       (unsigned long long)i->buddy_used,
			       (unsigned long long)j->buddy_used,
			       (unsigned long long)i->logical_bytes,
			       (unsigned long long)j->logical_bytes,
			       i->nr_allocs, j->nr_allocs);
		tap(ok, "checkpoint %u: GET_INFO pool usage, logical bytes, ratio",
		    cp);
		ok = !memcmp(&x->io, &y->io, sizeof(x->io)) &&
		     !memcmp(x->codes, y->codes, sizeof(x->codes));
		for (k = 0; k < sizeof(x->io) / 8; k++)
			if (((uint64_t *)&x->io)[k] != ((uint64_t *)&y->io)[k])
				printf("# checkpoint %u: io_stat column %u: %llu != %llu\n",
				       cp, k,
				       (unsigned long long)((uint64_t *)&x->io)[k],
				       (unsigned long long)((uint64_t *)&y->io)[k]);
		tap(ok, "checkpoint %u: device counters and histogram (io_stat, code_stat)",
		    cp);
	}
}

static int open_run(struct run *r, const char *name)
{
	r->name = name;
	r->devfd = buddy_open(name);
	if (r->devfd < 0) {
		printf("# %s: %s\n", name,
		       buddy_strerror(r->devfd, BUDDY_OP_OPEN));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct run a, b;

	if (argc != 3) {
		fprintf(stderr, "usage: buddy_twin DEVICE_A DEVICE_B\n");
		return 2;
	}
	printf("TAP version 13\n");
	if (open_run(&a, argv[1]) || (workload(&a), buddy_close(a.devfd),
				      open_run(&b, argv[2]))) {
		printf("not ok 1 open both devices\n1..1\n");
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	workload(&b);
	buddy_close(b.devfd);
	printf("# %s vs %s\n", argv[1], argv[2]);
	tap(!a.failed && !b.failed && a.nr_snaps == b.nr_snaps,
	    "both runs took every snapshot (%u)", a.nr_snaps);
	{
		unsigned int k, nospc = 0, big = 0;

		for (k = 0; k < a.nr_results; k++) {
			nospc += a.results[k] == -ENOSPC;
			big += a.results[k] == -E2BIG;
		}
		/* pwrite at the end (25), ALLOC and the re-target of "big" */
		tap(nospc >= 25 + 2 && big >= 1,
		    "the workload met -ENOSPC and -E2BIG (%u)", nospc + big);
	}
	{
		/* the link model saw the traffic: every written allocation */
		const struct snap *s = &a.snap[0];
		unsigned int k, timed = 0, written = 0;

		for (k = 0; k < s->nr; k++) {
			if (!s->st[k].counters.device_sectors_written)
				continue;
			written++;
			timed += s->st[k].link_ns > 0;
		}
		tap(written > 0 && timed == written,
		    "link_ns > 0 for every allocation written (%u)", timed);
	}
	compare(&a, &b);
	printf("1..%u\n", tap_n);
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:0 error:0\n",
	       tap_n - tap_fail, tap_fail);
	return tap_fail ? 1 : 0;
}
