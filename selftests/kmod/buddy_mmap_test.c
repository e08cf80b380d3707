// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: mmap through the resident window, and the link model.
 *
 *   - a scripted access pattern whose faults, evictions, write-backs, hits
 *     and access counters the test computes (the clock's second chance,
 *     the userspace model of kmod_util.c for every page moved);
 *   - mmap stores, mmap loads, pread and pwrite on the same bytes from
 *     threads and from forked processes, against shadow copies;
 *   - dirty data survives eviction, msync, munmap, close, re-target, fork;
 *   - io_uring READ/WRITE are coherent with the mapping; GUP works on it
 *     (process_vm_readv/writev);
 *   - SIGBUS past the end; the partial last page reads zeros and drops
 *     writes; MAP_PRIVATE, mremap and mprotect as documented;
 *   - shrinking window_mb evicts down; unload is refused while mapped;
 *   - window pages, and the kernel memory that keeps them, are charged to
 *     the faulting task's memory cgroup;
 *   - the modeled link time equals the formula on known traffic.
 *
 * The window is shared by all allocations: the tests set window_mb and
 * expect nothing else to be resident (the harness runs tests one by one).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define PG		4096UL
#define MIB_PAGES	256UL

/* window_stat: limit resident orphans faults hits writebacks evictions */
enum { WS_LIMIT, WS_RESIDENT, WS_ORPHANS, WS_FAULTS, WS_HITS, WS_WB, WS_EVICT };

FIXTURE(mm) {
	int fd;
	struct buddy_info info;
	long long window_mb;
	int afd;
	struct model m;
};

FIXTURE_SETUP(mm)
{
	uint64_t ws[7];
	int i;

	self->fd = -1;
	self->afd = -1;
	self->window_mb = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	if (!(self->info.features & BUDDY_FEAT_MMAP))
		SKIP(return, "module without BUDDY_FEAT_MMAP");
	self->window_mb = kparam("window_mb");
	ASSERT_LT(0, self->window_mb);
	/* an earlier test's files may still be in their delayed release */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(7, sysfs_u64s("window_stat", ws, 7));
		if (!ws[WS_RESIDENT])
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, ws[WS_RESIDENT]) TH_LOG("pages left resident by an earlier test");
}

FIXTURE_TEARDOWN(mm)
{
	if (self->afd >= 0)
		close(self->afd);
	model_free(&self->m);
	if (self->window_mb > 0)
		kparam_write("window_mb", self->window_mb);
	if (self->fd >= 0)
		close(self->fd);
}

/* An allocation of @size at @target (BPC) with its model, or SKIP. */
#define OPEN_ALLOC(size, target) do {					\
	struct buddy_alloc __a = alloc_req((size), (target),		\
					   BUDDY_CODEC_BPC);		\
	if (need_device((size), (target), self->info.chunk_bytes) >	\
	    self->info.device_bytes ||					\
	    need_buddy((size), (target), self->info.chunk_bytes) >	\
	    self->info.buddy_bytes)					\
		SKIP(return, "pools too small for %llu bytes at target %u", \
		     (unsigned long long)(size), (target));		\
	strcpy(__a.label, "mmap");					\
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &__a))		\
		TH_LOG("ALLOC: %s", strerror(errno));			\
	self->afd = __a.fd;						\
	ASSERT_EQ(0, model_init(&self->m, (size), (target),		\
				BUDDY_CODEC_BPC));			\
} while (0)

static void get_stat(struct __test_metadata *_metadata, int afd,
		     struct buddy_alloc_stat *st)
{
	memset(st, 0, sizeof(*st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, st));
}

/* Page @p's bytes for version @v: a class that compresses to some degree. */
static void page_bytes(uint64_t p, unsigned int v, uint8_t *buf)
{
	static const enum datagen_class cls[] = {
		DATAGEN_ZERO, DATAGEN_RAMP, DATAGEN_FLOAT32, DATAGEN_RELU50,
		DATAGEN_RANDOM, DATAGEN_POINTER, DATAGEN_BITNOISE,
	};

	datagen_fill(cls[(p + v) % ARRAY_SIZE(cls)], p * 131 + v, buf, PG);
}

/* The model's view of a page read (a fault) or written back. */
static void model_page_read(struct model *m, uint64_t p)
{
	uint8_t buf[PG];

	model_read(m, buf, PG, p * PG);
}

static void check_all(struct __test_metadata *_metadata, int afd,
		      struct model *m)
{
	uint8_t *got = malloc(m->size), *want = malloc(m->size);
	struct buddy_counters c = m->c;

	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, want);
	ASSERT_EQ((ssize_t)m->size, pread(afd, got, m->size, 0));
	model_read(m, want, m->size, 0);
	m->c = c;	/* this read is no part of the script */
	EXPECT_EQ(-1, first_diff(want, got, m->size))
		TH_LOG("first difference at byte %ld", first_diff(want, got, m->size));
	free(got);
	free(want);
}

/*
 * Fault 300 pages of another allocation through a 1 MiB window: every page
 * resident before is evicted, so later preads read the entries.
 */
static void evict_all(struct __test_metadata *_metadata, int fd)
{
	ASSERT_EQ(0, window_flush(fd, 300));
}

/*
 * core/link_model.h's formula, written out again: latency once per link request
 * (a stripe whose accesses touched a buddy sector), bytes per sector.
 */
static uint64_t link_ns_formula(const struct buddy_counters *c, uint64_t req,
				uint64_t gbps, uint64_t lat, uint64_t dev_gbps)
{
	uint64_t bud = c->buddy_sectors_read + c->buddy_sectors_written;
	uint64_t dev = c->device_sectors_read + c->device_sectors_written;

	return (bud * 32000 / gbps + req * lat * 1000 +
		dev * 32000 / dev_gbps) / 1000;
}

/*
 * The script, with a 1 MiB window (256 pages) and 300 pages; every fault
 * sets the page's referenced bit, the clock's hand clears it and unmaps
 * the page (its next access through the mapping faults: a hit), and evicts
 * a page whose bit is clear:
 *   a. load pages 0..299 through the mapping: 300 faults; page 256's turns
 *      the hand once round (0..255 lose their bit, unmapped) and evicts 0,
 *      the next 43 evict 1..43 (clean);
 *   b. store into pages 44..53: resident but unmapped by the hand: 10
 *      hits, no fault, dirty and referenced;
 *   c. load pages 0..9: 10 faults; the hand passes over 44..53 (second
 *      chance) and evicts 54..63, clean: no write-back;
 *   d. pread page 100 and page 44: both resident (hits, no entry read);
 *   e. pwrite page 200 (a hit, dirty), load it (a hit: unmapped at a),
 *      msync: 11 write-backs (44..53 and 200);
 *   f. store into page 210 (a hit: unmapped at a), munmap: 1 write-back.
 */
TEST_F(mm, scripted_counters)
{
	const uint64_t n = 300, size = n * PG;
	struct buddy_alloc_stat s0, s1;
	uint8_t buf[PG], *map;
	volatile uint8_t sink = 0;
	uint64_t p, ws0[7], ws1[7];
	unsigned int target = self->info.buddy_bytes ? BUDDY_TARGET_2X :
				BUDDY_TARGET_1X;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	OPEN_ALLOC(size, target);
	for (p = 0; p < n; p++) {
		page_bytes(p, 0, buf);
		ASSERT_EQ((ssize_t)PG, pwrite(self->afd, buf, PG, p * PG));
		model_write(&self->m, buf, PG, p * PG);
	}
	get_stat(_metadata, self->afd, &s0);
	EXPECT_COUNTERS(&self->m.c, &s0.counters, "after the pwrites");
	EXPECT_EQ(0, s0.window_faults);
	ASSERT_EQ(7, sysfs_u64s("window_stat", ws0, 7));
	EXPECT_EQ(MIB_PAGES, ws0[WS_LIMIT]);

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	/* a */
	for (p = 0; p < n; p++) {
		sink += map[p * PG + 7];
		model_page_read(&self->m, p);
	}
	get_stat(_metadata, self->afd, &s1);
	EXPECT_EQ(n, s1.window_faults);
	EXPECT_EQ(n - MIB_PAGES, s1.window_evictions);
	EXPECT_EQ(0, s1.window_writebacks);
	EXPECT_EQ(0, s1.window_hits);
	EXPECT_EQ(MIB_PAGES, s1.window_resident);
	EXPECT_COUNTERS(&self->m.c, &s1.counters, "a: loads");
	/* b */
	for (p = 44; p < 54; p++) {
		page_bytes(p, 1, buf);
		memcpy(map + p * PG, buf, PG);
	}
	get_stat(_metadata, self->afd, &s1);
	EXPECT_EQ(n, s1.window_faults);
	EXPECT_EQ(10, s1.window_hits);
	EXPECT_COUNTERS(&self->m.c, &s1.counters, "b: stores to resident pages");
	/* c */
	for (p = 0; p < 10; p++) {
		sink += map[p * PG + 100];
		model_page_read(&self->m, p);
	}
	get_stat(_metadata, self->afd, &s1);
	EXPECT_EQ(n + 10, s1.window_faults);
	EXPECT_EQ(n - MIB_PAGES + 10, s1.window_evictions);
	EXPECT_EQ(0, s1.window_writebacks) TH_LOG("a page used since the hand passed was evicted");
	EXPECT_EQ(10, s1.window_hits);
	EXPECT_COUNTERS(&self->m.c, &s1.counters, "c: faults evicting unused pages");
	/* d */
	ASSERT_EQ((ssize_t)PG, pread(self->afd, buf, PG, 100 * PG));
	ASSERT_EQ((ssize_t)PG, pread(self->afd, buf, PG, 44 * PG));
	/* e */
	page_bytes(200, 2, buf);
	ASSERT_EQ((ssize_t)PG, pwrite(self->afd, buf, PG, 200 * PG));
	EXPECT_EQ(0, memcmp(buf, map + 200 * PG, PG)) TH_LOG("pwrite not seen through the mapping");
	ASSERT_EQ(0, msync(map, size, MS_SYNC));
	for (p = 44; p < 54; p++) {
		page_bytes(p, 1, buf);
		model_write(&self->m, buf, PG, p * PG);
	}
	page_bytes(200, 2, buf);
	model_write(&self->m, buf, PG, 200 * PG);
	get_stat(_metadata, self->afd, &s1);
	EXPECT_EQ(14, s1.window_hits);
	EXPECT_EQ(11, s1.window_writebacks);
	EXPECT_COUNTERS(&self->m.c, &s1.counters, "d, e: pread, pwrite, msync");
	/* f */
	page_bytes(210, 3, buf);
	memcpy(map + 210 * PG, buf, PG);
	model_write(&self->m, buf, PG, 210 * PG);
	ASSERT_EQ(0, munmap(map, size));
	get_stat(_metadata, self->afd, &s1);
	EXPECT_EQ(12, s1.window_writebacks);
	EXPECT_EQ(15, s1.window_hits);
	EXPECT_EQ(n + 10, s1.window_faults);
	EXPECT_COUNTERS(&self->m.c, &s1.counters, "f: munmap");
	ASSERT_EQ(7, sysfs_u64s("window_stat", ws1, 7));
	EXPECT_EQ(n + 10, ws1[WS_FAULTS] - ws0[WS_FAULTS]);
	EXPECT_EQ(12, ws1[WS_WB] - ws0[WS_WB]);
	EXPECT_EQ(MIB_PAGES, ws1[WS_RESIDENT]);
	check_all(_metadata, self->afd, &self->m);
	(void)sink;
}

/* The modeled link time is the formula on the counters' traffic. */
TEST_F(mm, link_model_formula)
{
	long long g = kparam("link_gbps"), l = kparam("link_latency_ns");
	long long d = kparam("device_gbps");
	struct buddy_alloc_stat st;
	uint64_t dev0, dev1, want, req = 0, before;
	uint8_t buf[PG];
	char val[64];
	int i;

	SETUP_DONE();
	ASSERT_LT(0, g);
	ASSERT_LE(0, l);
	ASSERT_LT(0, d);
	EXPECT_EQ(-EINVAL, kparam_write("link_gbps", 0));
	EXPECT_EQ(-EINVAL, kparam_write("device_gbps", 0));
	/* exact per I/O call: 32000 / 50 and 32000 / 800 are whole */
	ASSERT_EQ(0, kparam_write("link_gbps", 50));
	ASSERT_EQ(0, kparam_write("link_latency_ns", 100));
	ASSERT_EQ(0, kparam_write("device_gbps", 800));
	ASSERT_EQ(1, sysfs_u64s("link_stat", &dev0, 1));
	OPEN_ALLOC(64 * PG, self->info.buddy_bytes ? BUDDY_TARGET_4X :
		   BUDDY_TARGET_1X);
	/* each call is one page, one stripe: a request if it touched buddy */
	for (i = 0; i < 64; i++) {
		page_bytes(i, 5, buf);
		ASSERT_EQ((ssize_t)PG, pwrite(self->afd, buf, PG, i * PG));
		before = self->m.c.buddy_accesses;
		model_write(&self->m, buf, PG, i * PG);
		req += self->m.c.buddy_accesses != before;
	}
	for (i = 0; i < 64; i += 3) {
		ASSERT_EQ((ssize_t)PG, pread(self->afd, buf, PG, i * PG));
		before = self->m.c.buddy_accesses;
		model_page_read(&self->m, i);
		req += self->m.c.buddy_accesses != before;
	}
	get_stat(_metadata, self->afd, &st);
	EXPECT_COUNTERS(&self->m.c, &st.counters, "known traffic");
	if (self->info.buddy_bytes) {
		/* latency per entry access would give another figure */
		EXPECT_LT(0, req);
		EXPECT_LT(req, self->m.c.buddy_accesses);
	}
	EXPECT_TRUE(self->info.features & BUDDY_FEAT_LINK_REQUESTS);
	EXPECT_EQ(req, st.link_requests);
	ASSERT_EQ(0, fdinfo_value(self->afd, "buddy_link_requests", val,
				  sizeof(val)));
	EXPECT_EQ(req, strtoull(val, NULL, 10));
	want = link_ns_formula(&self->m.c, req, 50, 100, 800);
	EXPECT_LT(0, want);
	EXPECT_EQ(want, st.link_ns);
	ASSERT_EQ(0, fdinfo_value(self->afd, "buddy_link_ns", val, sizeof(val)));
	EXPECT_EQ(want, strtoull(val, NULL, 10));
	ASSERT_EQ(1, sysfs_u64s("link_stat", &dev1, 1));
	/* the device sums picoseconds: at most 1 ns of rounding apart */
	EXPECT_LE(want, dev1 - dev0 + 1);
	EXPECT_GE(want + 1, dev1 - dev0);
	kparam_write("link_gbps", g);
	kparam_write("link_latency_ns", l);
	kparam_write("device_gbps", d);
}

/*
 * The same traffic (pwrite, faults through a mapping, write-backs at
 * munmap, pread) on a fresh allocation; its final stat in @st.
 */
static void delay_traffic(struct __test_metadata *_metadata, int fd,
			  unsigned int target, struct buddy_alloc_stat *st)
{
	struct buddy_alloc b = alloc_req(16 * PG, target, BUDDY_CODEC_BPC);
	volatile uint8_t sink = 0;
	uint8_t buf[PG], *map;
	int i;

	ASSERT_EQ(0, ioctl(fd, BUDDY_IOC_ALLOC, &b));
	for (i = 0; i < 16; i++) {
		page_bytes(i, 7, buf);
		ASSERT_EQ((ssize_t)PG, pwrite(b.fd, buf, PG, i * PG));
	}
	map = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (i = 0; i < 16; i++)
		sink += map[i * PG];
	for (i = 0; i < 16; i += 2)
		map[i * PG + 5] ^= 0x5a;
	ASSERT_EQ(0, munmap(map, 16 * PG));
	(void)sink;
	get_stat(_metadata, b.fd, st);
	close(b.fd);
}

/*
 * link_delay (the opt-in real wait) is off by default, and turning it on
 * changes no counter and no modeled figure: the same traffic gives the
 * same stat either way.
 */
TEST_F(mm, link_delay_changes_no_counter)
{
	long long d0 = kparam("link_delay");
	unsigned int target = self->info.buddy_bytes ? BUDDY_TARGET_4X :
			      BUDDY_TARGET_1X;
	struct buddy_alloc_stat off, on;

	SETUP_DONE();
	EXPECT_EQ(0, d0) TH_LOG("link_delay must be off by default");
	ASSERT_EQ(0, kparam_write("link_delay", 0));
	delay_traffic(_metadata, self->fd, target, &off);
	ASSERT_EQ(0, kparam_write("link_delay", 1));
	delay_traffic(_metadata, self->fd, target, &on);
	kparam_write("link_delay", d0 < 0 ? 0 : d0);
	EXPECT_LT(0, off.link_ns);
	EXPECT_LT(0, off.window_faults);
	EXPECT_LT(0, off.window_writebacks);
	EXPECT_EQ(0, memcmp(&off.counters, &on.counters, sizeof(on.counters)));
	EXPECT_EQ(off.link_ns, on.link_ns);
	EXPECT_EQ(off.link_requests, on.link_requests);
	EXPECT_EQ(off.window_faults, on.window_faults);
	EXPECT_EQ(off.window_writebacks, on.window_writebacks);
}

static double mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * With link_delay on, a pread really waits its modeled link time (at most
 * 100 ms a call): with a 20 ms link latency, a read of a page whose
 * entries spill into buddy memory (one link request) cannot return
 * sooner.  A lower bound only, so no load can fail it.
 */
TEST_F(mm, link_delay_waits)
{
	long long d0 = kparam("link_delay");
	long long lat0 = kparam("link_latency_ns");
	struct buddy_alloc_stat st0, st1;
	struct buddy_alloc b;
	uint8_t buf[PG];
	double t0, t1, modeled;

	if (!self->info.buddy_bytes)
		SKIP(return, "no carve-out: no link requests");
	b = alloc_req(4 * PG, BUDDY_TARGET_4X, BUDDY_CODEC_BPC);
	SETUP_DONE();
	ASSERT_LE(0, d0);
	ASSERT_LE(0, lat0);
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &b));
	datagen_fill(DATAGEN_RANDOM, 3, buf, PG);	/* spills at 4x */
	ASSERT_EQ((ssize_t)PG, pwrite(b.fd, buf, PG, 0));
	ASSERT_EQ(0, kparam_write("link_latency_ns", 20000000));
	ASSERT_EQ(0, kparam_write("link_delay", 1));
	get_stat(_metadata, b.fd, &st0);
	t0 = mono_ns();
	EXPECT_EQ((ssize_t)PG, pread(b.fd, buf, PG, 0));
	t1 = mono_ns();
	get_stat(_metadata, b.fd, &st1);
	kparam_write("link_delay", d0);
	kparam_write("link_latency_ns", lat0);
	close(b.fd);
	modeled = (double)(st1.link_ns - st0.link_ns);
	EXPECT_EQ(1, st1.link_requests - st0.link_requests);
	EXPECT_LE(20e6, modeled);
	EXPECT_LE(modeled < 100e6 ? modeled : 100e6, t1 - t0)
		TH_LOG("the read took %.0f ns, its modeled link time %.0f ns",
		       t1 - t0, modeled);
}

static sigjmp_buf jump;
static volatile int got_sig;

static void on_sig(int sig)
{
	got_sig = sig;
	siglongjmp(jump, 1);
}

/* 1 when touching @addr (a store when @write) raises @sig, 0 if not. */
static int touch_raises(volatile uint8_t *addr, bool write, int sig)
{
	struct sigaction sa = { .sa_handler = on_sig }, old_bus, old_segv;
	int ret = 0;

	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	got_sig = 0;
	if (!sigsetjmp(jump, 1)) {
		if (write)
			*addr = 1;
		else
			(void)*addr;
	} else {
		ret = got_sig == sig;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return ret;
}

TEST_F(mm, past_the_end_sigbus_and_zeros)
{
	const uint64_t size = 2 * PG + 1000;
	uint8_t buf[PG], *map;

	SETUP_DONE();
	OPEN_ALLOC(size, BUDDY_TARGET_1X);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ((ssize_t)1000, pwrite(self->afd, buf, PG, 2 * PG));
	map = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(0x5a, map[2 * PG + 999]);
	EXPECT_EQ(0, map[2 * PG + 1000]) TH_LOG("the partial last page reads zeros past the end");
	EXPECT_EQ(0, map[3 * PG - 1]);
	map[2 * PG + 2000] = 0x77;	/* past the end: dropped */
	map[2 * PG + 10] = 0x66;
	EXPECT_EQ(1, touch_raises(map + 3 * PG, false, SIGBUS));
	EXPECT_EQ(1, touch_raises(map + 3 * PG + 5, true, SIGBUS));
	ASSERT_EQ(0, msync(map, 4 * PG, MS_SYNC));
	EXPECT_EQ(0, map[2 * PG + 2000]) TH_LOG("a write past the end was kept");
	ASSERT_EQ((ssize_t)1000, pread(self->afd, buf, PG, 2 * PG));
	EXPECT_EQ(0x66, buf[10]);
	ASSERT_EQ(0, munmap(map, 4 * PG));
	/* a mapping that starts past the end: every page raises SIGBUS */
	map = mmap(NULL, PG, PROT_READ, MAP_SHARED, self->afd, 8 * PG);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(1, touch_raises(map, false, SIGBUS));
	munmap(map, PG);
}

TEST_F(mm, private_mremap_mprotect)
{
	uint8_t *map, *m2;

	SETUP_DONE();
	OPEN_ALLOC(16 * PG, BUDDY_TARGET_1X);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ, MAP_PRIVATE, self->afd, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("MAP_PRIVATE: %s", strerror(errno));
	map = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	map[5] = 0x11;
	/* VM_DONTEXPAND: growing fails with EFAULT, shrinking and moving work */
	EXPECT_EQ(MAP_FAILED, mremap(map, 8 * PG, 12 * PG, MREMAP_MAYMOVE));
	EXPECT_EQ(EFAULT, errno);
	m2 = mremap(map, 8 * PG, 4 * PG, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, m2);
	EXPECT_EQ(0x11, m2[5]);
	/* read-only: a store raises SIGSEGV; writable again: it is kept */
	ASSERT_EQ(0, mprotect(m2, 4 * PG, PROT_READ));
	EXPECT_EQ(1, touch_raises(m2 + PG, true, SIGSEGV));
	EXPECT_EQ(0x11, m2[5]);
	ASSERT_EQ(0, mprotect(m2, 4 * PG, PROT_READ | PROT_WRITE));
	m2[PG + 1] = 0x22;
	ASSERT_EQ(0, munmap(m2, 4 * PG));
	{
		uint8_t b[2];

		ASSERT_EQ(1, pread(self->afd, b, 1, 5));
		ASSERT_EQ(1, pread(self->afd, b + 1, 1, PG + 1));
		EXPECT_EQ(0x11, b[0]);
		EXPECT_EQ(0x22, b[1]);
	}
	/* mlock succeeds (the kernel skips VM_DONTEXPAND mappings) */
	map = mmap(NULL, PG, PROT_READ, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(0, mlock(map, PG)) TH_LOG("mlock: %s", strerror(errno));
	munmap(map, PG);
}

/* MADV_DONTNEED drops page table entries only: the window keeps the data. */
TEST_F(mm, madv_dontneed_keeps_window_pages)
{
	struct buddy_alloc_stat st;
	uint8_t *map;

	SETUP_DONE();
	OPEN_ALLOC(4 * PG, BUDDY_TARGET_1X);
	map = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	map[PG + 9] = 0x3c;
	ASSERT_EQ(0, madvise(map, 4 * PG, MADV_DONTNEED));
	get_stat(_metadata, self->afd, &st);
	EXPECT_EQ(1, st.window_resident);
	EXPECT_EQ(0, st.window_writebacks);
	EXPECT_EQ(0x3c, map[PG + 9]);
	get_stat(_metadata, self->afd, &st);
	EXPECT_EQ(1, st.window_faults) TH_LOG("the page was faulted in again");
	EXPECT_EQ(1, st.window_hits);
	munmap(map, 4 * PG);
	get_stat(_metadata, self->afd, &st);
	EXPECT_EQ(1, st.window_writebacks);
}

/* Dirty data survives msync, munmap, close, re-target and fork. */
TEST_F(mm, dirty_survives)
{
	struct buddy_alloc_stat st;
	uint8_t buf[PG], *map;
	int afd2, status;
	pid_t pid;

	SETUP_DONE();
	OPEN_ALLOC(32 * PG, self->info.buddy_bytes ? BUDDY_TARGET_2X :
		   BUDDY_TARGET_1X);
	afd2 = dup(self->afd);
	ASSERT_LE(0, afd2);
	map = mmap(NULL, 32 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* close: the fd goes, the mapping and a dup stay */
	page_bytes(1, 7, map + PG);
	close(self->afd);
	self->afd = afd2;
	get_stat(_metadata, afd2, &st);
	EXPECT_EQ(1, st.window_writebacks) TH_LOG("close() did not write back");
	/* fork: the child's stores, without msync, reach the parent */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		page_bytes(2, 7, map + 2 * PG);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	page_bytes(2, 7, buf);
	EXPECT_EQ(0, memcmp(buf, map + 2 * PG, PG));
	/* re-target writes back first, then the page is still right */
	page_bytes(3, 7, map + 3 * PG);
	if (self->info.buddy_bytes) {
		int r = buddy_set_target(self->fd, st.id, BUDDY_TARGET_4X,
					 BUDDY_CODEC_DEFAULT);

		EXPECT_EQ(0, r) TH_LOG("SET_TARGET: %s", strerror(-r));
	}
	get_stat(_metadata, afd2, &st);
	if (self->info.buddy_bytes) {
		EXPECT_EQ(BUDDY_TARGET_4X, st.target);
		EXPECT_LE(3, st.window_writebacks);
	}
	page_bytes(4, 7, map + 4 * PG);
	ASSERT_EQ(0, munmap(map, 32 * PG));
	/* another allocation's faults evict every page: read the entries */
	evict_all(_metadata, self->fd);
	{
		uint64_t p;

		get_stat(_metadata, afd2, &st);
		EXPECT_EQ(0, st.window_resident);
		for (p = 1; p <= 4; p++) {
			uint8_t want[PG];

			page_bytes(p, 7, want);
			ASSERT_EQ((ssize_t)PG, pread(afd2, buf, PG, p * PG));
			EXPECT_EQ(0, memcmp(want, buf, PG)) TH_LOG("page %llu", (unsigned long long)p);
		}
	}
}

/*
 * pread() into a mapping of an allocation, another one's and its own: the
 * pages are no anonymous memory, so the read goes through the bounce
 * buffer and the mapping's fault handler, which tracks them dirty.  The
 * bytes must reach the entries (evicted, then read back), with no
 * deadlock when the destination is a page of the allocation being read.
 */
TEST_F(mm, pread_into_a_mapping)
{
	const unsigned int t = self->info.buddy_bytes ? BUDDY_TARGET_2X :
			       BUDDY_TARGET_1X;
	struct buddy_alloc b = alloc_req(8 * PG, t, BUDDY_CODEC_BPC);
	uint8_t buf[PG], want[PG], *src, *mb, *ma;
	volatile uint8_t sink = 0;
	uint64_t p;

	SETUP_DONE();
	OPEN_ALLOC(16 * PG, t);
	src = malloc(16 * PG);
	ASSERT_NE(NULL, src);
	for (p = 0; p < 16; p++)
		page_bytes(p, 11, src + p * PG);
	ASSERT_RET(16 * PG, pwrite(self->afd, src, 16 * PG, 0));
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &b))
		TH_LOG("ALLOC: %s", strerror(errno));
	mb = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
	ASSERT_NE(MAP_FAILED, mb);
	/* resident and clean first: the read must make them dirty */
	for (p = 0; p < 8; p++)
		sink += mb[p * PG];
	EXPECT_RET(8 * PG, pread(self->afd, mb, 8 * PG, 4 * PG));
	EXPECT_EQ(-1, first_diff(src + 4 * PG, mb, 8 * PG));
	/* a page of the allocation read into another page of its own */
	ma = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
		  self->afd, 0);
	ASSERT_NE(MAP_FAILED, ma);
	sink += ma[3 * PG];
	EXPECT_RET(2 * PG, pread(self->afd, ma + 3 * PG, 2 * PG, 9 * PG));
	EXPECT_EQ(-1, first_diff(src + 9 * PG, ma + 3 * PG, 2 * PG));
	ASSERT_EQ(0, munmap(ma, 16 * PG));
	ASSERT_EQ(0, munmap(mb, 8 * PG));
	evict_all(_metadata, self->fd);
	for (p = 0; p < 8; p++) {
		ASSERT_RET(PG, pread(b.fd, buf, PG, p * PG));
		EXPECT_EQ(0, memcmp(src + (4 + p) * PG, buf, PG))
			TH_LOG("page %llu of the other allocation lost the pread's bytes",
			       (unsigned long long)p);
	}
	for (p = 3; p < 5; p++) {
		memcpy(want, src + (6 + p) * PG, PG);
		ASSERT_RET(PG, pread(self->afd, buf, PG, p * PG));
		EXPECT_EQ(0, memcmp(want, buf, PG))
			TH_LOG("page %llu lost the pread's bytes", (unsigned long long)p);
	}
	close(b.fd);
	free(src);
	(void)sink;
}

struct syncer {
	uint8_t *map;
	size_t len;
	int stop;
	unsigned long rounds;
};

static void *syncer(void *arg)
{
	struct syncer *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		msync(s->map, s->len, MS_SYNC);
		s->rounds++;
	}
	return NULL;
}

/*
 * pread() into a mapping while another thread writes the mapping back over
 * and over: a write-back unmaps the page and marks it clean, so the bytes
 * the read stores after it must fault and dirty the page again.  Were the
 * entries decoded straight into the window's pages (rather than copied
 * through the mapping), a page written back mid-read would keep the rest
 * of the read in a clean page, lost at eviction.  Each page is read once,
 * so each read is the last word on its page.
 */
TEST_F(mm, pread_into_a_mapping_being_synced)
{
	const unsigned int np = 48;
	struct buddy_alloc b = alloc_req(np * PG, BUDDY_TARGET_1X,
					 BUDDY_CODEC_BPC);
	struct syncer s = { 0 };
	uint8_t buf[PG], *src;
	pthread_t th;
	unsigned int p;

	SETUP_DONE();
	OPEN_ALLOC(np * PG, self->info.buddy_bytes ? BUDDY_TARGET_2X :
		   BUDDY_TARGET_1X);
	src = malloc(np * PG);
	ASSERT_NE(NULL, src);
	for (p = 0; p < np; p++)
		page_bytes(p, 13, src + p * PG);
	ASSERT_RET(np * PG, pwrite(self->afd, src, np * PG, 0));
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &b))
		TH_LOG("ALLOC: %s", strerror(errno));
	s.len = np * PG;
	s.map = mmap(NULL, s.len, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
	ASSERT_NE(MAP_FAILED, s.map);
	ASSERT_EQ(0, pthread_create(&th, NULL, syncer, &s));
	for (p = 0; p < np; p++) {
		EXPECT_RET(PG, pread(self->afd, s.map + p * PG, PG, p * PG));
		usleep(1000);	/* let the syncer run a few times */
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-1, first_diff(src, s.map, np * PG));
	ASSERT_EQ(0, munmap(s.map, s.len));
	evict_all(_metadata, self->fd);
	for (p = 0; p < np; p++) {
		ASSERT_RET(PG, pread(b.fd, buf, PG, p * PG));
		EXPECT_EQ(0, memcmp(src + p * PG, buf, PG))
			TH_LOG("page %u lost the pread's bytes (%lu syncs)", p,
			       s.rounds);
	}
	close(b.fd);
	free(src);
}

/* Shrinking window_mb evicts down to it, writing dirty pages back. */
TEST_F(mm, shrink_window)
{
	const uint64_t n = 400;
	struct buddy_alloc_stat st;
	uint64_t ws[7], p;
	uint8_t *map;
	volatile uint8_t sink = 0;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 2));
	OPEN_ALLOC(n * PG, BUDDY_TARGET_1X);
	map = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (p = 0; p < n; p++)
		sink += map[p * PG];
	for (p = 0; p < 10; p++)
		map[p * PG + 3] = (uint8_t)(p + 1);
	EXPECT_EQ(-EINVAL, kparam_write("window_mb", 0));
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	ASSERT_EQ(7, sysfs_u64s("window_stat", ws, 7));
	EXPECT_EQ(MIB_PAGES, ws[WS_RESIDENT]);
	get_stat(_metadata, self->afd, &st);
	EXPECT_EQ(n - MIB_PAGES, st.window_evictions);
	EXPECT_EQ(10, st.window_writebacks);
	for (p = 0; p < 10; p++) {
		uint8_t b;

		ASSERT_EQ(1, pread(self->afd, &b, 1, p * PG + 3));
		EXPECT_EQ(p + 1, b);
		EXPECT_EQ(p + 1, map[p * PG + 3]);
	}
	munmap(map, n * PG);
	(void)sink;
}

TEST_F(mm, unload_refused_while_mapped)
{
	uint8_t *map;

	SETUP_DONE();
	OPEN_ALLOC(PG, BUDDY_TARGET_1X);
	map = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	map[0] = 1;
	close(self->afd);
	self->afd = -1;
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "buddy", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("%s", strerror(errno));
	munmap(map, PG);
}

/* Write @text to the file @path: 0 or an errno. */
static int put_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

static long long memcg_current(const char *dir)
{
	char path[256], buf[64] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/memory.current", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = 0;
	close(fd);
	return buf[0] ? atoll(buf) : -1;
}

/* The value of @key in the cgroup's memory.stat, or -1. */
static long long memcg_stat(const char *dir, const char *key)
{
	char path[256], line[256];
	long long v = -1;
	size_t k = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ' ')
			v = atoll(line + k + 1);
	fclose(f);
	return v;
}

/*
 * Window pages are charged to the memory cgroup of the task whose fault
 * brought them in (__GFP_ACCOUNT), and so is what keeps track of them (a
 * small struct per page and the xarray's nodes, GFP_KERNEL_ACCOUNT): a
 * child in a cgroup of its own faults n pages of a mapping in, and the
 * cgroup's memory.current grows by at least n pages meanwhile, its
 * slab_unreclaimable by at least 32 bytes a page (a per-CPU cache may
 * hold back up to a page of it).
 */
TEST_F(mm, window_pages_charged_to_memcg)
{
	static const char dir[] = "/sys/fs/cgroup/buddy-mmap-test";
	const uint64_t n = 256;
	long long before, after, slab0, slab1;
	int up[2], down[2], status, err;
	char c = 0;
	pid_t pid;

	SETUP_DONE();
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2 at /sys/fs/cgroup: %s", strerror(errno));
	err = put_text("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	if (err)
		SKIP(return, "no memory controller: %s", strerror(err));
	ASSERT_TRUE(!mkdir(dir, 0755) || errno == EEXIST) TH_LOG("%s: %s", dir, strerror(errno));
	ASSERT_EQ(0, kparam_write("window_mb", 2));
	OPEN_ALLOC(n * PG, BUDDY_TARGET_1X);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char path[256];
		volatile uint8_t sink = 0;
		uint8_t *map;
		uint64_t p;

		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		map = mmap(NULL, n * PG, PROT_READ, MAP_SHARED, self->afd, 0);
		if (map == MAP_FAILED || put_text(path, "0"))
			_exit(1);
		/* joined: the parent reads memory.current, then says go */
		if (write(up[1], "j", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(2);
		for (p = 0; p < n; p++)
			sink += map[p * PG];
		if (write(up[1], "f", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		munmap(map, n * PG);
		(void)sink;
		_exit(0);
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	before = memcg_current(dir);
	slab0 = memcg_stat(dir, "slab_unreclaimable");
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	after = memcg_current(dir);
	slab1 = memcg_stat(dir, "slab_unreclaimable");
	ASSERT_EQ(1, write(down[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	TH_LOG("memory.current %lld -> %lld, slab_unreclaimable %lld -> %lld for %llu window pages",
	       before, after, slab0, slab1, (unsigned long long)n);
	ASSERT_LE(0, before);
	EXPECT_LE(before + (long long)(n * PG), after);
	ASSERT_LE(0, slab0);
	EXPECT_LE(slab0 + (long long)(n * 32) - (long long)PG, slab1)
		TH_LOG("the window's bookkeeping is not charged to the memory cgroup");
	close(self->afd);
	self->afd = -1;
	/* the charges leave with the pages; an offline memcg is fine */
	rmdir(dir);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/*
 * io_uring READ/WRITE see the mapping's bytes and the other way round, and
 * get_user_pages works on a mapping (process_vm_readv/writev, as the
 * profiler uses): the window's pages are ordinary struct pages.
 */
TEST_F(mm, io_uring_and_gup)
{
	struct buddy_aio_completion c;
	struct buddy_aio *ctx;
	struct iovec lv, rv;
	uint8_t buf[PG], want[PG], *map;
	int err;

	SETUP_DONE();
	OPEN_ALLOC(8 * PG, self->info.buddy_bytes ? BUDDY_TARGET_2X :
		   BUDDY_TARGET_1X);
	map = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	page_bytes(1, 9, map + PG);
	ctx = buddy_aio_init(4, &err);
	if (ctx) {
		ASSERT_EQ(0, buddy_aio_read(ctx, self->afd, buf, PG, PG, 1));
		ASSERT_EQ(1, buddy_aio_submit(ctx));
		ASSERT_EQ(1, buddy_aio_wait(ctx, &c, 1));
		EXPECT_EQ((int64_t)PG, c.res);
		EXPECT_EQ(0, memcmp(buf, map + PG, PG)) TH_LOG("io_uring READ of a dirty mapped page");
		page_bytes(2, 9, want);
		ASSERT_EQ(0, buddy_aio_write(ctx, self->afd, want, PG, 2 * PG, 2));
		ASSERT_EQ(1, buddy_aio_submit(ctx));
		ASSERT_EQ(1, buddy_aio_wait(ctx, &c, 1));
		EXPECT_EQ((int64_t)PG, c.res);
		EXPECT_EQ(0, memcmp(want, map + 2 * PG, PG)) TH_LOG("io_uring WRITE not seen by the mapping");
		buddy_aio_exit(ctx);
	} else {
		TH_LOG("no io_uring (%s): only the GUP part", strerror(-err));
	}
	/* GUP: read and write the mapping through another "process" view */
	lv = (struct iovec){ .iov_base = buf, .iov_len = PG };
	rv = (struct iovec){ .iov_base = map + PG, .iov_len = PG };
	ASSERT_EQ((ssize_t)PG, process_vm_readv(getpid(), &lv, 1, &rv, 1, 0))
		TH_LOG("process_vm_readv: %s", strerror(errno));
	EXPECT_EQ(0, memcmp(buf, map + PG, PG));
	page_bytes(5, 9, want);
	lv.iov_base = want;
	rv.iov_base = map + 5 * PG;
	ASSERT_EQ((ssize_t)PG, process_vm_writev(getpid(), &lv, 1, &rv, 1, 0))
		TH_LOG("process_vm_writev: %s", strerror(errno));
	ASSERT_EQ(0, msync(map, 8 * PG, MS_SYNC));
	munmap(map, 8 * PG);
	/* evict everything: the bytes written through GUP reached the entries */
	evict_all(_metadata, self->fd);
	ASSERT_EQ((ssize_t)PG, pread(self->afd, buf, PG, 5 * PG));
	EXPECT_EQ(0, memcmp(want, buf, PG)) TH_LOG("process_vm_writev's bytes lost");
}

/* ---- mmap and pread/pwrite on the same bytes, against shadows ---- */

#define SLOT		48	/* bytes a worker owns per slot */
#define NR_WORKERS	4
#define NR_OPS		1500

struct worker {
	int afd;
	uint8_t *map;
	uint64_t size;
	unsigned int id;
	uint8_t *shadow;	/* the whole allocation; only own slots used */
	int bad;
};

/* Worker @id owns the slots s with s % NR_WORKERS == id: slots straddle
 * entries (48 bytes), so neighbours share entries and pages.
 */
static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t nslots = w->size / SLOT, rng = 0x9e3779b97f4a7c15ULL * (w->id + 1);
	uint8_t buf[SLOT];
	int i;

	for (i = 0; i < NR_OPS && !w->bad; i++) {
		uint64_t s, off;
		unsigned int op, k;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		s = (rng >> 20) % (nslots / NR_WORKERS) * NR_WORKERS + w->id;
		off = s * SLOT;
		op = (rng >> 8) & 3;
		for (k = 0; k < SLOT; k++)
			buf[k] = (uint8_t)(rng >> (k % 56)) ^ k;
		switch (op) {
		case 0:	/* store through the mapping */
			memcpy(w->map + off, buf, SLOT);
			memcpy(w->shadow + off, buf, SLOT);
			break;
		case 1:	/* pwrite */
			if (pwrite(w->afd, buf, SLOT, off) != SLOT)
				w->bad = 1;
			memcpy(w->shadow + off, buf, SLOT);
			break;
		case 2:	/* load through the mapping */
			if (memcmp(w->map + off, w->shadow + off, SLOT))
				w->bad = 2;
			break;
		default: /* pread */
			if (pread(w->afd, buf, SLOT, off) != SLOT ||
			    memcmp(buf, w->shadow + off, SLOT))
				w->bad = 3;
		}
	}
	return NULL;
}

/* Replay the stores of worker @w into its shadow, without any I/O. */
static void shadow_of(struct worker *w)
{
	uint64_t nslots = w->size / SLOT, rng = 0x9e3779b97f4a7c15ULL * (w->id + 1);
	int i;

	for (i = 0; i < NR_OPS; i++) {
		uint64_t s, off;
		unsigned int op, k;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		s = (rng >> 20) % (nslots / NR_WORKERS) * NR_WORKERS + w->id;
		off = s * SLOT;
		op = (rng >> 8) & 3;
		if (op < 2)
			for (k = 0; k < SLOT; k++)
				w->shadow[off + k] = (uint8_t)(rng >> (k % 56)) ^ k;
	}
}

static void interleave(struct __test_metadata *_metadata, int afd,
		       uint64_t size, bool processes)
{
	struct worker w[NR_WORKERS];
	pthread_t th[NR_WORKERS];
	pid_t pids[NR_WORKERS];
	struct timespec t0, t1;
	uint8_t *map, *shadow = calloc(1, size), *got = malloc(size);
	uint64_t s;
	int i;

	ASSERT_NE(NULL, shadow);
	ASSERT_NE(NULL, got);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < NR_WORKERS; i++) {
		w[i] = (struct worker){ .afd = afd, .map = map, .size = size,
					.id = i, .shadow = malloc(size) };
		ASSERT_NE(NULL, w[i].shadow);
		memset(w[i].shadow, 0, size);
		if (processes) {
			pid_t pid = fork();

			ASSERT_LE(0, pid);
			if (!pid) {
				work(&w[i]);
				_exit(w[i].bad);
			}
			pids[i] = pid;
		} else {
			ASSERT_EQ(0, pthread_create(&th[i], NULL, work, &w[i]));
		}
	}
	for (i = 0; i < NR_WORKERS; i++) {
		if (processes) {
			int status;

			ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
			EXPECT_TRUE(WIFEXITED(status));
			EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("worker %d", i);
			memset(w[i].shadow, 0, size);
			shadow_of(&w[i]);
		} else {
			pthread_join(th[i], NULL);
			EXPECT_EQ(0, w[i].bad) TH_LOG("worker %d", i);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%d workers x %d ops: %.1f s", NR_WORKERS, NR_OPS,
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (s = 0; s < size / SLOT; s++)
		memcpy(shadow + s * SLOT, w[s % NR_WORKERS].shadow + s * SLOT, SLOT);
	ASSERT_EQ((ssize_t)size, pread(afd, got, size, 0));
	EXPECT_EQ(-1, first_diff(shadow, got, size))
		TH_LOG("pread: first difference at %ld", first_diff(shadow, got, size));
	EXPECT_EQ(-1, first_diff(shadow, map, size))
		TH_LOG("mapping: first difference at %ld", first_diff(shadow, map, size));
	munmap(map, size);
	for (i = 0; i < NR_WORKERS; i++)
		free(w[i].shadow);
	free(shadow);
	free(got);
}

/* A 1 MiB window, 384 pages: the workers keep evicting each other's pages. */
static void interleave_small_window(struct __test_metadata *_metadata,
				    FIXTURE_DATA(mm) *self, unsigned int target,
				    bool processes)
{
	struct buddy_alloc_stat st;

	ASSERT_EQ(0, kparam_write("window_mb", 1));
	OPEN_ALLOC(384 * PG, self->info.buddy_bytes ? target : BUDDY_TARGET_1X);
	interleave(_metadata, self->afd, 384 * PG, processes);
	get_stat(_metadata, self->afd, &st);
	EXPECT_LT(0, st.window_evictions) TH_LOG("the window never filled");
}

/* TCG: thousands of faults and evictions take a while */
TEST_F_TIMEOUT(mm, interleaved_threads, 300)
{
	SETUP_DONE();
	interleave_small_window(_metadata, self, BUDDY_TARGET_4X, false);
}

TEST_F_TIMEOUT(mm, interleaved_processes, 300)
{
	SETUP_DONE();
	interleave_small_window(_metadata, self, BUDDY_TARGET_2X, true);
}

TEST_HARNESS_MAIN
