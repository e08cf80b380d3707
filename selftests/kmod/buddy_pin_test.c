// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the resident window under held pages, forks and
 * closes (Documentation/design.rst, "The resident window").
 *
 *   - a window page held by a copy (process_vm_writev; an O_DIRECT read
 *     from a RAM disk) stays in the window through evictions and msync
 *     with a 1 MiB window, and the bytes the copy stores afterwards are
 *     kept;
 *   - a copy that lets go of its page while an msync writes it back;
 *   - close and munmap while a copy holds a page: the page becomes an
 *     orphan, the copy finishes into it, the orphan is freed;
 *   - an administrator's call holding an allocation across its close
 *     while its pages are evicted;
 *   - page-aligned direct reads while another thread forks and a re-stripe
 *     holds the read between taking its pages and decoding into them;
 *   - user_limit_mb bounds the window pages and orphans of one user;
 *   - the clock gives a page used since its hand passed a second chance.
 *
 * A copy is held with userfaultfd: its source (or a second iovec segment)
 * is a page whose first touch blocks until the test fills it, by which
 * time the copy holds the window page.  The use-after-free the inode's
 * reference prevents is seen by the debug kernel (make check-debug runs
 * this test under KASAN, with the module's DEBUG_VM check of the inode);
 * Debian's kernel only sees the data.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define PG		4096UL
#define RAM_DISK	"/dev/ram0"
#define HOLD_PIPE	64	/* pages a test's pipe holds */

/* window_stat: limit resident orphans faults hits writebacks evictions held */
enum { WS_LIMIT, WS_RESIDENT, WS_ORPHANS, WS_FAULTS, WS_HITS, WS_WB,
       WS_EVICT, WS_HELD, WS_NR };

FIXTURE(pin) {
	int fd;
	struct buddy_info info;
	long long window_mb;
	long long user_limit_mb;
	struct uffd_page u;
};

FIXTURE_SETUP(pin)
{
	uint64_t ws[WS_NR];
	int i, r;

	self->fd = -1;
	self->u.uffd = -1;
	self->u.page = MAP_FAILED;
	self->window_mb = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	if (!(self->info.features & BUDDY_FEAT_MMAP))
		SKIP(return, "module without BUDDY_FEAT_MMAP");
	self->window_mb = kparam("window_mb");
	self->user_limit_mb = kparam("user_limit_mb");
	ASSERT_LT(0, self->window_mb);
	ASSERT_LE(0, self->user_limit_mb);
	r = uffd_page_init(&self->u);
	if (r)
		SKIP(return, "no userfaultfd: %s", strerror(-r));
	/* an earlier test's files may still be in their delayed release */
	for (i = 0; i < 100; i++) {
		ASSERT_LE(WS_HELD, sysfs_u64s("window_stat", ws, WS_NR));
		if (!ws[WS_RESIDENT] && !ws[WS_ORPHANS])
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, ws[WS_RESIDENT]) TH_LOG("pages left resident by an earlier test");
}

FIXTURE_TEARDOWN(pin)
{
	uffd_page_free(&self->u);
	if (self->window_mb > 0)
		kparam_write("window_mb", self->window_mb);
	if (self->user_limit_mb >= 0)
		kparam_write("user_limit_mb", self->user_limit_mb);
	if (self->fd >= 0)
		close(self->fd);
}

static void window_stat(struct __test_metadata *_metadata, uint64_t *ws)
{
	ws[WS_HELD] = 0;
	ASSERT_LE(WS_HELD, sysfs_u64s("window_stat", ws, WS_NR));
}

/* An allocation of @pages pages at 1x filled with @byte, mapped: its fd. */
static int map_alloc(struct __test_metadata *_metadata, int fd,
		     unsigned int pages, int byte, uint8_t **map)
{
	struct buddy_alloc a = alloc_req(pages * PG, BUDDY_TARGET_1X,
					 BUDDY_CODEC_BPC);
	uint8_t buf[PG];
	unsigned int p;

	strcpy(a.label, "pin");
	*map = MAP_FAILED;
	ASSERT_EQ(0, ioctl(fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	memset(buf, byte, PG);
	for (p = 0; p < pages; p++)
		ASSERT_EQ((ssize_t)PG, pwrite(a.fd, buf, PG, p * PG));
	*map = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE, MAP_SHARED,
		    a.fd, 0);
	ASSERT_NE(MAP_FAILED, *map);
	return a.fd;
}

/* ---- a copy that holds a window page ---------------------------------- */

enum copy_how {
	COPY_PVM_WRITE,		/* process_vm_writev(self): src -> dst */
	COPY_DIRECT_READ,	/* O_DIRECT preadv of the RAM disk -> dst, src */
};

struct copy {
	pthread_t th;
	enum copy_how how;
	uint8_t *dst;		/* the window page */
	uint8_t *src;		/* the userfaultfd page */
	int ramfd;
	ssize_t ret;
	int err;
};

static void *copy_run(void *arg)
{
	struct copy *c = arg;
	struct iovec l = { c->src, PG }, r = { c->dst, PG };
	struct iovec v[2] = { { c->dst, PG }, { c->src, PG } };

	if (c->how == COPY_PVM_WRITE)
		c->ret = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	else
		c->ret = preadv(c->ramfd, v, 2, 0);
	c->err = errno;
	return NULL;
}

/* Start @c and wait until it holds its window page (it met the source). */
static void copy_start(struct __test_metadata *_metadata, struct copy *c,
		       struct uffd_page *u)
{
	c->src = u->page;
	ASSERT_EQ(0, pthread_create(&c->th, NULL, copy_run, c));
	ASSERT_EQ(0, uffd_page_wait(u, 20000))
		TH_LOG("the copy never reached its source page");
}

/* Let @c go on with @data as its source page; its result. */
static ssize_t copy_finish(struct copy *c, struct uffd_page *u,
			   const uint8_t *data)
{
	if (uffd_page_fill(u, data))
		return -1;
	pthread_join(c->th, NULL);
	errno = c->err;
	return c->ret;
}

static int open_ram_disk(void)
{
	return open(RAM_DISK, O_RDWR | O_DIRECT | O_CLOEXEC);
}

/*
 * process_vm_writev() into a mapped page holds (pins) the page while it
 * waits for its source; meanwhile another allocation's faults go through
 * a 1 MiB window, which evicts everything else.  The held page must stay,
 * and the bytes the copy stores after the evictions must be read back,
 * from the window and, once it is released and evicted, from the entries.
 */
TEST_F(pin, pvm_write_into_a_page_under_eviction)
{
	uint8_t want[PG], buf[PG], *map;
	struct copy c = { .how = COPY_PVM_WRITE };
	struct buddy_alloc_stat st;
	uint64_t ws0[WS_NR], ws1[WS_NR];
	int afd;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	afd = map_alloc(_metadata, self->fd, 8, 0x11, &map);
	EXPECT_EQ(0x11, map[0]);	/* resident, clean */
	window_stat(_metadata, ws0);
	c.dst = map;
	copy_start(_metadata, &c, &self->u);
	ASSERT_EQ(0, window_flush(self->fd, 300));
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(1, st.window_resident) TH_LOG("the held page was evicted");
	window_stat(_metadata, ws1);
	EXPECT_LT(ws0[WS_HELD], ws1[WS_HELD]);
	memset(want, 0x5a, PG);
	EXPECT_EQ((ssize_t)PG, copy_finish(&c, &self->u, want))
		TH_LOG("process_vm_writev: %s", strerror(errno));
	ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
	EXPECT_EQ(-1, first_diff(want, buf, PG)) TH_LOG("pread: the copy's bytes are lost");
	EXPECT_EQ(-1, first_diff(want, map, PG)) TH_LOG("the mapping: the copy's bytes are lost");
	ASSERT_EQ(0, munmap(map, 8 * PG));
	ASSERT_EQ(0, window_flush(self->fd, 300));
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(0, st.window_resident);
	ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
	EXPECT_EQ(-1, first_diff(want, buf, PG)) TH_LOG("the entries: the copy's bytes are lost");
	close(afd);
}

/*
 * A write-back (msync) while a copy holds a dirty page: the page stays
 * dirty, since the copy stores after it, and the munmap and the eviction
 * that follow write the copy's bytes back.
 */
TEST_F(pin, msync_while_a_copy_holds_a_page)
{
	uint8_t want[PG], buf[PG], *map;
	struct copy c = { .how = COPY_PVM_WRITE };
	int afd;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	afd = map_alloc(_metadata, self->fd, 8, 0x22, &map);
	memset(map, 0x33, 100);		/* dirty */
	c.dst = map;
	copy_start(_metadata, &c, &self->u);
	ASSERT_EQ(0, msync(map, 8 * PG, MS_SYNC));
	memset(want, 0x5b, PG);
	EXPECT_EQ((ssize_t)PG, copy_finish(&c, &self->u, want))
		TH_LOG("process_vm_writev: %s", strerror(errno));
	ASSERT_EQ(0, munmap(map, 8 * PG));
	ASSERT_EQ(0, window_flush(self->fd, 300));
	ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
	EXPECT_EQ(-1, first_diff(want, buf, PG))
		TH_LOG("the copy's bytes after msync were not written back (byte 0 is 0x%02x)",
		       buf[0]);
	close(afd);
}

/* msync(MS_SYNC) of one page over and over until told to stop. */
struct msync_loop {
	uint8_t *map;
	volatile int stop;
	unsigned long n;
};

/* The calling thread on CPU @cpu, when there is one. */
static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *msync_run(void *arg)
{
	struct msync_loop *m = arg;

	on_cpu(0);
	while (!m->stop) {
		if (msync(m->map, PG, MS_SYNC))
			break;
		m->n++;
	}
	return NULL;
}

/*
 * A copy that finishes and lets go of its page while an msync compresses
 * that page: the page was held when the write-back began, so it stays
 * dirty, and the copy's bytes reach the entries at the munmap.  A held
 * dirty page is written back by every msync, so the copy (on another CPU
 * than the msyncs) often releases it inside one of them; a write-back
 * that took the page as clean once the pin was gone (unpin takes no page
 * lock on a dirty page) stored some of the old bytes and dropped the new
 * ones.  A race: a kernel with that fault fails some of the rounds.
 */
TEST_F_TIMEOUT(pin, copy_released_during_a_write_back, 600)
{
	uint8_t want[PG], buf[PG], *map;
	unsigned int i;
	int afd;

	SETUP_DONE();
	on_cpu(1);
	for (i = 0; i < 64; i++) {
		struct copy c = { .how = COPY_PVM_WRITE };
		struct msync_loop m = {};
		pthread_t th;

		if (i) {
			uffd_page_free(&self->u);
			ASSERT_EQ(0, uffd_page_init(&self->u));
		}
		afd = map_alloc(_metadata, self->fd, 1, 0x22, &map);
		/* dirty, with bytes that take a while to compress */
		datagen_fill(DATAGEN_FLOAT32, i, map, PG);
		c.dst = map;
		copy_start(_metadata, &c, &self->u);
		m.map = map;
		ASSERT_EQ(0, pthread_create(&th, NULL, msync_run, &m));
		while (m.n < 2 + i % 4)
			sched_yield();
		for (volatile unsigned int k = 0; k < i * 97 % 2000; k++)
			;
		memset(want, 0x40 + i, PG);
		EXPECT_EQ((ssize_t)PG, copy_finish(&c, &self->u, want))
			TH_LOG("process_vm_writev: %s", strerror(errno));
		m.stop = 1;
		pthread_join(th, NULL);
		ASSERT_EQ(0, munmap(map, PG));
		ASSERT_EQ(0, window_flush(self->fd, 300));
		ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
		close(afd);
		ASSERT_EQ(-1, first_diff(want, buf, PG))
			TH_LOG("round %u: the copy's bytes are not in the entries (byte %ld is 0x%02x)",
			       i, first_diff(want, buf, PG),
			       buf[first_diff(want, buf, PG)]);
	}
}

/*
 * O_DIRECT read from a RAM disk into a mapped page and a second, held
 * segment: the block layer takes a reference to the window page and
 * copies into it only once every segment's page is in hand.
 */
TEST_F(pin, direct_read_into_a_page_under_eviction)
{
	struct copy c = { .how = COPY_DIRECT_READ };
	uint8_t *disk, buf[PG], *map;
	struct buddy_alloc_stat st;
	int afd, ramfd;

	SETUP_DONE();
	ramfd = open_ram_disk();
	if (ramfd < 0)
		SKIP(return, "%s: %s (no brd)", RAM_DISK, strerror(errno));
	disk = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, disk);
	datagen_fill(DATAGEN_RANDOM, 77, disk, 2 * PG);
	ASSERT_EQ((ssize_t)(2 * PG), pwrite(ramfd, disk, 2 * PG, 0))
		TH_LOG("O_DIRECT write of %s: %s", RAM_DISK, strerror(errno));
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	afd = map_alloc(_metadata, self->fd, 8, 0x44, &map);
	EXPECT_EQ(0x44, map[0]);
	c.dst = map;
	c.ramfd = ramfd;
	copy_start(_metadata, &c, &self->u);
	ASSERT_EQ(0, window_flush(self->fd, 300));
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(1, st.window_resident) TH_LOG("the held page was evicted");
	memset(buf, 0, PG);
	EXPECT_EQ((ssize_t)(2 * PG), copy_finish(&c, &self->u, buf))
		TH_LOG("O_DIRECT preadv: %s", strerror(errno));
	ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
	EXPECT_EQ(-1, first_diff(disk, buf, PG)) TH_LOG("pread: the O_DIRECT read's bytes are lost");
	EXPECT_EQ(-1, first_diff(disk + PG, self->u.page, PG));
	ASSERT_EQ(0, munmap(map, 8 * PG));
	ASSERT_EQ(0, window_flush(self->fd, 300));
	ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, 0));
	EXPECT_EQ(-1, first_diff(disk, buf, PG)) TH_LOG("the entries: the O_DIRECT read's bytes are lost");
	close(afd);
	close(ramfd);
	munmap(disk, 2 * PG);
}

/*
 * munmap and close while a copy holds a page: the allocation goes, the
 * page is an orphan until the copy lets it go (set_page_dirty_lock()
 * through its mapping: the inode must still be there), then a fault frees
 * it.
 */
TEST_F(pin, close_and_munmap_while_a_copy_holds_a_page)
{
	struct copy c = { .how = COPY_PVM_WRITE };
	uint64_t ws0[WS_NR], ws1[WS_NR];
	struct buddy_info info;
	uint8_t data[PG], *map;
	int afd, i;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	window_stat(_metadata, ws0);
	afd = map_alloc(_metadata, self->fd, 4, 0x55, &map);
	map[1] = 0x66;
	c.dst = map;
	copy_start(_metadata, &c, &self->u);
	ASSERT_EQ(0, munmap(map, 4 * PG));
	close(afd);
	/* the file's release may finish a moment later */
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, buddy_get_info(self->fd, &info));
		if (!info.nr_allocs)
			break;
		usleep(20000);
	}
	EXPECT_EQ(0, info.nr_allocs);
	window_stat(_metadata, ws1);
	EXPECT_EQ(ws0[WS_ORPHANS] + 1, ws1[WS_ORPHANS]);
	/* an RCU grace period: a freed inode would be gone by now */
	usleep(300000);
	memset(data, 0x77, PG);
	EXPECT_EQ((ssize_t)PG, copy_finish(&c, &self->u, data))
		TH_LOG("process_vm_writev: %s", strerror(errno));
	/* the next fault reaps it */
	ASSERT_EQ(0, window_flush(self->fd, 300));
	window_stat(_metadata, ws1);
	EXPECT_EQ(ws0[WS_ORPHANS], ws1[WS_ORPHANS]);
}

struct map_call {
	pthread_t th;
	int devfd;
	struct buddy_map m;
	int ret, err;
};

static void *map_call_run(void *arg)
{
	struct map_call *mc = arg;

	mc->ret = ioctl(mc->devfd, BUDDY_IOC_GET_MAP, &mc->m);
	mc->err = errno;
	return NULL;
}

/*
 * An administrator's GET_MAP by id holds the allocation while it copies
 * the codes out (here into a page that blocks); meanwhile the owner
 * unmaps and closes it, and another allocation's faults evict its pages:
 * the evictions unmap them through the allocation's inode, which the
 * file's release must not have taken along.
 */
TEST_F(pin, admin_reference_across_close)
{
	struct map_call mc = { 0 };
	struct buddy_alloc_stat st;
	struct buddy_info info;
	uint8_t zero[PG], *map;
	unsigned int p;
	int afd;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	afd = map_alloc(_metadata, self->fd, 64, 0x12, &map);
	for (p = 0; p < 64; p++)
		map[p * PG + 3] = (uint8_t)p;
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	mc.devfd = self->fd;
	mc.m.id = st.id;
	mc.m.first = 0;
	mc.m.count = st.nr_entries;
	mc.m.codes_ptr = (uintptr_t)self->u.page;
	ASSERT_EQ(0, pthread_create(&mc.th, NULL, map_call_run, &mc));
	ASSERT_EQ(0, uffd_page_wait(&self->u, 20000)) TH_LOG("GET_MAP never copied out");
	/* the pages stay resident after munmap; the file goes with close */
	ASSERT_EQ(0, munmap(map, 64 * PG));
	close(afd);
	usleep(300000);
	ASSERT_EQ(0, window_flush(self->fd, 300));
	memset(zero, 0, PG);
	ASSERT_EQ(0, uffd_page_fill(&self->u, zero));
	pthread_join(mc.th, NULL);
	EXPECT_EQ(0, mc.ret) TH_LOG("GET_MAP: %s", strerror(mc.err));
	usleep(100000);
	ASSERT_EQ(0, buddy_get_info(self->fd, &info));
	EXPECT_EQ(0, info.nr_allocs);
}

struct forker {
	pthread_t th, rt_th;
	volatile uint64_t *word;	/* on the reader's last page */
	int stop;
	unsigned long forks;
	int devfd;
	uint64_t id;
	unsigned int target[2], codec[2];
	unsigned long retargets;
	int rt_err;
};

/*
 * Fork, and store into the word at once: a page the fork left shared
 * copy-on-write moves to a copy right then.
 */
static void *fork_loop(void *arg)
{
	struct forker *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		(*f->word)++;
		if (pid > 0) {
			waitpid(pid, NULL, 0);
			f->forks++;
		}
	}
	return NULL;
}

/*
 * Re-stripe the allocation back and forth: a read meeting a re-stripe of
 * its chunk waits for it between taking its pages and decoding into them,
 * long enough for forks to happen meanwhile.
 */
static void *restripe_loop(void *arg)
{
	struct forker *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		unsigned int k = f->retargets++ % 2;

		f->rt_err = buddy_set_target(f->devfd, f->id, f->target[k],
					     f->codec[k]);
		if (f->rt_err)
			break;
	}
	return NULL;
}

/*
 * Page-aligned preads straight into anonymous memory (the reader's pages
 * are pinned and decoded into) while another thread forks and, right
 * after each fork, stores into a word on the buffer's last page, and a
 * third re-stripes the allocation (the read waits for it, its pages
 * taken).  A fork while the read holds those pages by a mere reference
 * would share them copy-on-write; that store would then move the reader's
 * last page to a copy and leave its decode in the page the child had
 * shared.  Every read must return the allocation's bytes, into a
 * page-aligned buffer (the word its last 8 bytes, not compared) and into
 * one 64 bytes short of it (the word just past its end, each stripe across
 * two pages), in turn.
 */
TEST_F_TIMEOUT(pin, fork_beside_direct_reads, 300)
{
	const size_t len = 4 * PG, size = 256 * PG;
	const unsigned int t = self->info.buddy_bytes ? BUDDY_TARGET_2X :
			       BUDDY_TARGET_1X;
	struct buddy_alloc a = alloc_req(size, BUDDY_TARGET_1X, BUDDY_CODEC_BPC);
	struct buddy_alloc_stat st;
	struct forker f = { 0 };
	unsigned int i, bad[2] = { 0 }, reads = 0;
	uint8_t *want, *region;
	long first = -1;
	time_t t0;

	SETUP_DONE();
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	want = malloc(len);
	ASSERT_NE(NULL, want);
	for (i = 0; i < len / PG; i++)
		datagen_fill(i % 2 ? DATAGEN_FLOAT32 : DATAGEN_RELU50, i,
			     want + i * PG, PG);
	ASSERT_EQ((ssize_t)len, pwrite(a.fd, want, len, 0));
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(a.fd, &st));
	region = mmap(NULL, len + 2 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, region);
	f.word = (volatile uint64_t *)(region + PG + len - 8);
	f.devfd = self->fd;
	f.id = st.id;
	/* without a carve-out, the codec changes (a re-stripe all the same) */
	f.target[0] = BUDDY_TARGET_1X;
	f.target[1] = t;
	f.codec[0] = BUDDY_CODEC_BPC;
	f.codec[1] = self->info.buddy_bytes ? BUDDY_CODEC_BPC : BUDDY_CODEC_ZVC;
	ASSERT_EQ(0, pthread_create(&f.th, NULL, fork_loop, &f));
	ASSERT_EQ(0, pthread_create(&f.rt_th, NULL, restripe_loop, &f));
	t0 = time(NULL);
	while (reads < 4000 && time(NULL) - t0 < 60) {
		unsigned int odd = reads % 2;
		uint8_t *buf = region + PG - (odd ? 64 : 0);
		size_t cmp = odd ? len : len - 8;
		long d;

		memset(buf, 0, cmp);
		if (pread(a.fd, buf, len, 0) != (ssize_t)len) {
			bad[odd]++;
			break;
		}
		reads++;
		d = first_diff(want, buf, cmp);
		if (d >= 0) {
			bad[odd]++;
			if (first < 0)
				first = d;
		}
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(f.th, NULL);
	pthread_join(f.rt_th, NULL);
	TH_LOG("%u reads beside %lu forks and %lu re-stripes: %u wrong page-aligned, %u wrong unaligned (first at byte %ld)",
	       reads, f.forks, f.retargets, bad[0], bad[1], first);
	EXPECT_EQ(0, bad[0] + bad[1]);
	EXPECT_LT(10, f.forks);
	EXPECT_EQ(0, f.rt_err) TH_LOG("SET_TARGET: %s", strerror(-f.rt_err));
	close(a.fd);
	munmap(region, len + 2 * PG);
	free(want);
}

static sigjmp_buf bus_jump;

static void on_bus(int sig)
{
	siglongjmp(bus_jump, 1);
}

/* 1 when a load from @addr raises SIGBUS. */
static int load_raises_sigbus(volatile uint8_t *addr)
{
	struct sigaction sa = { .sa_handler = on_bus }, old;
	int ret = 0;

	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(bus_jump, 1))
		(void)*addr;
	else
		ret = 1;
	sigaction(SIGBUS, &old, NULL);
	return ret;
}

/* A pipe that holds (vmsplice) up to @pages pages: its fds in @p. */
static void hold_pipe(struct __test_metadata *_metadata, int p[2],
		      unsigned int pages)
{
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
	ASSERT_LE((long)(pages * PG), fcntl(p[1], F_SETPIPE_SZ, pages * PG));
}

/* Hold @pages mapped pages at @map with the pipe @p. */
static void hold(struct __test_metadata *_metadata, int p[2], uint8_t *map,
		 unsigned int pages)
{
	struct iovec v = { map, pages * PG };

	while (v.iov_len) {
		ssize_t r = vmsplice(p[1], &v, 1, SPLICE_F_NONBLOCK);

		ASSERT_LT(0, r) TH_LOG("vmsplice: %s (the pipe holds %zu bytes)",
				       strerror(errno), v.iov_len);
		v.iov_base = (uint8_t *)v.iov_base + r;
		v.iov_len -= r;
	}
}

/* Let go of what the pipe @p holds. */
static void hold_drain(int p[2])
{
	uint8_t buf[PG];

	while (read(p[0], buf, sizeof(buf)) > 0)
		;
	close(p[0]);
	close(p[1]);
}

/* Bytes of an allocation of @pages pages at 1x in the pools. */
static uint64_t pool_bytes(const struct buddy_info *info, unsigned int pages)
{
	return need_device(pages * PG, BUDDY_TARGET_1X, info->chunk_bytes) +
	       need_buddy(pages * PG, BUDDY_TARGET_1X, info->chunk_bytes);
}

/*
 * The largest allocation (pages) that leaves @room pages of @limit after
 * @used pool bytes and @win window pages; 0 if none.
 */
static unsigned int fill_pages(const struct buddy_info *info, uint64_t limit,
			       uint64_t used, unsigned int win,
			       unsigned int room)
{
	unsigned int n = 0;

	while (used + pool_bytes(info, n + 1) + (uint64_t)(win + room) * PG <=
	       limit)
		n++;
	return n;
}

/*
 * Touch pages of @map one by one, each held by @p after its fault: the
 * index of the first whose fault raised SIGBUS, or @pages (at most the
 * HOLD_PIPE pages the pipe holds).
 */
static unsigned int touch_and_hold(struct __test_metadata *_metadata,
				   uint8_t *map, unsigned int pages, int p[2])
{
	unsigned int i;

	if (pages > HOLD_PIPE)
		pages = HOLD_PIPE;
	for (i = 0; i < pages; i++) {
		if (load_raises_sigbus(map + i * PG))
			return i;
		hold(_metadata, p, map + i * PG, 1);
	}
	return pages;
}

/*
 * user_limit_mb counts the window pages and orphans of a user's
 * allocations with their pool bytes.  With everything of the user's held
 * (by pipes, through vmsplice) or orphaned, exactly the pages that fit
 * the share can be faulted in and the next one raises SIGBUS; once they
 * are let go the faults work again, and with nothing held a user over the
 * limit evicts its own pages instead.
 */
TEST_F_TIMEOUT(pin, user_limit_bounds_held_pages_and_orphans, 300)
{
	const unsigned int na = 128, limit_mb = 2;
	uint64_t limit = (uint64_t)limit_mb << 20, ws0[WS_NR], ws1[WS_NR];
	unsigned int nb, nc, fit, p;
	int fa, fb, fc, ha[2], hb[2], hc[2];
	struct buddy_alloc_stat st;
	uint8_t *ma, *mb, *mc;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 16));
	ASSERT_EQ(0, kparam_write("user_limit_mb", limit_mb));
	window_stat(_metadata, ws0);
	hold_pipe(_metadata, ha, na);
	hold_pipe(_metadata, hb, HOLD_PIPE);
	hold_pipe(_metadata, hc, HOLD_PIPE);
	/* A: all of it resident and held */
	fa = map_alloc(_metadata, self->fd, na, 0x21, &ma);
	for (p = 0; p < na; p++)
		ma[p * PG] = 0x31;
	hold(_metadata, ha, ma, na);
	/* B: pool bytes that leave room for 4 pages more */
	nb = fill_pages(&self->info, limit, pool_bytes(&self->info, na), na, 4);
	ASSERT_LT(8, nb);
	fb = map_alloc(_metadata, self->fd, nb, 0x41, &mb);
	fit = (limit - pool_bytes(&self->info, na) - pool_bytes(&self->info, nb)) /
	      PG - na;
	EXPECT_EQ(fit, touch_and_hold(_metadata, mb, nb, hb))
		TH_LOG("with only held pages, %u faults fit user_limit_mb", fit);
	hold_drain(hb);
	ASSERT_EQ(0, munmap(mb, nb * PG));
	close(fb);
	/* A goes: its held pages are orphans, still in the user's share */
	ASSERT_EQ(0, munmap(ma, na * PG));
	close(fa);
	usleep(100000);
	window_stat(_metadata, ws1);
	EXPECT_EQ(ws0[WS_ORPHANS] + na, ws1[WS_ORPHANS]);
	nc = fill_pages(&self->info, limit, 0, na, 4);
	ASSERT_LT(8, nc);
	fc = map_alloc(_metadata, self->fd, nc, 0x51, &mc);
	fit = (limit - pool_bytes(&self->info, nc)) / PG - na;
	p = touch_and_hold(_metadata, mc, nc, hc);
	EXPECT_EQ(fit, p) TH_LOG("with orphans, %u faults fit user_limit_mb", fit);
	/* the orphans let go: the next fault frees them, and goes on */
	hold_drain(ha);
	EXPECT_EQ(0, load_raises_sigbus(mc + p * PG));
	/*
	 * Nothing held: over the limit, the user's own pages are evicted,
	 * and the faults free the orphans left.
	 */
	hold_drain(hc);
	for (p = 0; p < nc; p++)
		EXPECT_EQ(0x51, mc[p * PG]);
	window_stat(_metadata, ws1);
	EXPECT_EQ(ws0[WS_ORPHANS], ws1[WS_ORPHANS]);
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(fc, &st));
	EXPECT_LE(pool_bytes(&self->info, nc) + st.window_resident * PG, limit);
	EXPECT_LT(0, st.window_evictions);
	ASSERT_EQ(0, munmap(mc, nc * PG));
	close(fc);
}

/*
 * The clock: a 1 MiB window (256 pages) full of an allocation's pages
 * 0..255; page 256's fault turns the hand once round (every page loses its
 * bit and is unmapped) and evicts page 0.  Pages 1..9 are then used again
 * (each faults back in as a hit), so the next ten faults pass over them
 * and evict pages 10..19: preads of 1..9 are hits, of 10..19 are not.
 * A FIFO would have evicted 1..10.
 */
TEST_F(pin, clock_gives_a_used_page_a_second_chance)
{
	struct buddy_alloc_stat s0, s1;
	volatile uint8_t sink = 0;
	uint8_t buf[PG], *map;
	unsigned int p;
	int afd;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	afd = map_alloc(_metadata, self->fd, 300, 0x61, &map);
	for (p = 0; p < 257; p++)
		sink += map[p * PG];
	memset(&s0, 0, sizeof(s0));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s0));
	EXPECT_EQ(257, s0.window_faults);
	EXPECT_EQ(1, s0.window_evictions);
	for (p = 1; p < 10; p++)
		sink += map[p * PG];
	memset(&s1, 0, sizeof(s1));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s1));
	EXPECT_EQ(257, s1.window_faults);
	EXPECT_EQ(s0.window_hits + 9, s1.window_hits)
		TH_LOG("pages 1..9 were not unmapped by the hand");
	for (p = 257; p < 267; p++)
		sink += map[p * PG];
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s0));
	EXPECT_EQ(11, s0.window_evictions);
	for (p = 1; p < 10; p++)
		ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, p * PG));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s1));
	EXPECT_EQ(s0.window_hits + 9, s1.window_hits)
		TH_LOG("pages used since the hand passed were evicted");
	for (p = 10; p < 20; p++)
		ASSERT_EQ((ssize_t)PG, pread(afd, buf, PG, p * PG));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s0));
	EXPECT_EQ(s1.window_hits, s0.window_hits)
		TH_LOG("pages unused since the hand passed were kept");
	munmap(map, 300 * PG);
	close(afd);
	(void)sink;
}

TEST_HARNESS_MAIN
