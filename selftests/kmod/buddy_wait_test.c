// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: who waits, and where.
 *
 *   - an io_uring READ that meets a re-target goes to io-wq: submit
 *     returns before the read completes (the read's destination is a page
 *     that blocks in userfaultfd, so an inline read could not return);
 *     the submit latencies of 64 KiB reads during re-targets are printed;
 *   - link_delay: a fault waits its modeled link time with mmap_lock
 *     dropped (another thread's mmap() goes on meanwhile), and the time of
 *     a dirty page written back by an eviction is waited by the
 *     allocation's own next call, not by the task whose fault evicted it;
 *   - an RWF_NOWAIT write stores all of its bytes or none;
 *   - an RWF_NOWAIT call parked on a userfaultfd page holds no lock a
 *     re-target waits for;
 *   - a fatal signal stops a window_mb shrink.
 *
 * The timed checks compare with what the old behaviour cannot go below
 * (a wait of tens of milliseconds), with margins of several times the
 * work itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define PG		4096UL

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* This thread's CPU time: what it did not spend asleep. */
static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

FIXTURE(wait) {
	int fd;
	struct buddy_info info;
	long long window_mb, link_delay, link_latency_ns;
};

FIXTURE_SETUP(wait)
{
	self->fd = -1;
	self->window_mb = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	self->window_mb = kparam("window_mb");
	self->link_delay = kparam("link_delay");
	self->link_latency_ns = kparam("link_latency_ns");
	ASSERT_LT(0, self->window_mb);
	ASSERT_LE(0, self->link_delay);
	ASSERT_LE(0, self->link_latency_ns);
}

FIXTURE_TEARDOWN(wait)
{
	if (self->window_mb > 0) {
		kparam_write("link_delay", self->link_delay);
		kparam_write("link_latency_ns", self->link_latency_ns);
		kparam_write("window_mb", self->window_mb);
	}
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- io_uring during a re-target ---------------------------------------- */

#define MAX_EDGES	256

/* Re-targets one after the other, each start and end time kept. */
struct retargeter {
	pthread_t th;
	int devfd;
	uint64_t id;
	unsigned int t1, t2, c1, c2;
	int stop;
	unsigned int n;
	double edge[MAX_EDGES];
	int err;
};

static void *retarget_loop(void *arg)
{
	struct retargeter *r = arg;
	unsigned int i;

	for (i = 0; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); i++) {
		int e;

		r->edge[__atomic_fetch_add(&r->n, 1, __ATOMIC_ACQ_REL) % MAX_EDGES] = now_ms();
		e = buddy_set_target(r->devfd, r->id, i % 2 ? r->t1 : r->t2,
				     i % 2 ? r->c1 : r->c2);
		r->edge[__atomic_fetch_add(&r->n, 1, __ATOMIC_ACQ_REL) % MAX_EDGES] = now_ms();
		if (e) {
			r->err = e;
			break;
		}
	}
	return NULL;
}

/* True when a re-target started or ended in [@t0, @t1]. */
static bool retarget_edge(struct retargeter *r, double t0, double t1)
{
	unsigned int n = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE), i;

	for (i = n > MAX_EDGES ? n - MAX_EDGES : 0; i < n; i++)
		if (r->edge[i % MAX_EDGES] >= t0 && r->edge[i % MAX_EDGES] <= t1)
			return true;
	return false;
}

/* Wait until a re-target holds the allocation (RWF_NOWAIT meets EAGAIN). */
static bool retarget_running(int afd)
{
	struct iovec v;
	uint8_t b;
	int i;

	v.iov_base = &b;
	v.iov_len = 1;
	for (i = 0; i < 20000; i++) {
		if (preadv2(afd, &v, 1, 0, RWF_NOWAIT) < 0 && errno == EAGAIN)
			return true;
		usleep(100);
	}
	return false;
}

struct filler {
	pthread_t th;
	struct uffd_page *u;
	double fault_ms;
	int ret;
};

/* Fill the page 300 ms after the first fault on it. */
static void *fill_later(void *arg)
{
	struct filler *f = arg;
	uint8_t zero[PG];

	f->ret = uffd_page_wait(f->u, 60000);
	f->fault_ms = now_ms();
	if (f->ret)
		return NULL;
	usleep(300000);
	memset(zero, 0, sizeof(zero));
	f->ret = uffd_page_fill(f->u, zero);
	return NULL;
}

/*
 * Set up a re-target loop on a fresh allocation of random bytes, as large
 * as the pools let (at most 16 MiB): its fd, or -1 after a SKIP.
 */
static int retarget_setup(struct __test_metadata *_metadata, int fd,
			  const struct buddy_info *info, struct retargeter *r)
{
	unsigned int t2 = info->buddy_bytes ? BUDDY_TARGET_2X : BUDDY_TARGET_1X;
	uint64_t size = max_fitting_size(BUDDY_TARGET_1X, info->chunk_bytes,
					 info->device_bytes / 3,
					 info->buddy_bytes / 3);
	struct buddy_alloc a;
	struct buddy_alloc_stat st;
	uint8_t *buf;
	uint64_t off;

	size = size > (16u << 20) ? 16u << 20 : size & ~(PG - 1);
	if (size < (1u << 20))
		SKIP(return -1, "pools too small for a long re-target");
	a = alloc_req(size, BUDDY_TARGET_1X, BUDDY_CODEC_BPC);
	ASSERT_EQ(0, ioctl(fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	buf = malloc(1 << 20);
	ASSERT_NE(NULL, buf);
	for (off = 0; off < size; off += 1 << 20) {
		size_t n = size - off < (1u << 20) ? size - off : 1u << 20;

		datagen_fill(DATAGEN_RANDOM, off, buf, n);
		ASSERT_EQ((ssize_t)n, pwrite(a.fd, buf, n, off));
	}
	free(buf);
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(a.fd, &st));
	r->devfd = fd;
	r->id = st.id;
	/* without a carve-out, the codec changes (a re-stripe all the same) */
	r->t1 = BUDDY_TARGET_1X;
	r->t2 = t2;
	r->c1 = BUDDY_CODEC_BPC;
	r->c2 = info->buddy_bytes ? BUDDY_CODEC_BPC : BUDDY_CODEC_ZVC;
	ASSERT_EQ(0, pthread_create(&r->th, NULL, retarget_loop, r));
	return a.fd;
}

static void retarget_stop(struct retargeter *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(r->th, NULL);
}

/*
 * An io_uring READ submitted while a re-target holds the allocation: the
 * non-blocking attempt meets the re-target (-EAGAIN) and the read must go
 * to io-wq, so io_uring_submit() returns while the read waits.  The
 * read's destination is a page that blocks in userfaultfd for 300 ms
 * after it is first touched: a read retried inline (the IOCB_WAITQ path
 * of a file that claims FMODE_BUF_RASYNC) would keep submit waiting that
 * long and complete inside it.  A trial in which a re-target began or
 * ended between the check and submit's start proves nothing and is tried
 * again.
 */
TEST_F_TIMEOUT(wait, uring_read_goes_to_io_wq_during_a_retarget, 600)
{
	struct retargeter r = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned int trial, conclusive = 0, inline_reads = 0;
	double lat[100], sum = 0, max = 0;
	unsigned int done_at_submit = 0, i;
	uint8_t *buf;
	int afd, ret;

	SETUP_DONE();
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		SKIP(return, "io_uring: %s", strerror(-ret));
	afd = retarget_setup(_metadata, self->fd, &self->info, &r);
	for (trial = 0; trial < 8 && conclusive < 3; trial++) {
		struct uffd_page u;
		struct filler f = { 0 };
		struct io_uring_sqe *sqe;
		double tp, t0, t1;
		bool ready;

		ret = uffd_page_init(&u);
		if (ret) {
			TH_LOG("no userfaultfd (%s): latencies only", strerror(-ret));
			break;
		}
		f.u = &u;
		ASSERT_EQ(0, pthread_create(&f.th, NULL, fill_later, &f));
		ASSERT_TRUE(retarget_running(afd)) TH_LOG("no re-target seen");
		tp = now_ms();
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, afd, u.page, PG, 0);
		t0 = now_ms();
		ASSERT_EQ(1, io_uring_submit(&ring));
		t1 = now_ms();
		ready = io_uring_peek_cqe(&ring, &cqe) == 0;
		/* the non-blocking attempt runs first thing in submit */
		if (!retarget_edge(&r, tp, t0 + 1)) {
			conclusive++;
			inline_reads += ready;
			TH_LOG("trial %u: submit %.3f ms, %s", trial, t1 - t0,
			       ready ? "completed inside submit" : "sent to io-wq");
		}
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ((int)PG, cqe->res) TH_LOG("READ: %s", strerror(-cqe->res));
		io_uring_cqe_seen(&ring, cqe);
		pthread_join(f.th, NULL);
		EXPECT_EQ(0, f.ret);
		uffd_page_free(&u);
	}
	if (conclusive) {
		EXPECT_EQ(0, inline_reads)
			TH_LOG("%u of %u reads met the re-target and completed inside io_uring_submit()",
			       inline_reads, conclusive);
	}
	/* the figures: 64 KiB reads into ordinary memory */
	buf = malloc(64 << 10);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < 100; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		double t0;

		retarget_running(afd);
		io_uring_prep_read(sqe, afd, buf, 64 << 10, (uint64_t)(i % 16) << 16);
		t0 = now_ms();
		ASSERT_EQ(1, io_uring_submit(&ring));
		lat[i] = now_ms() - t0;
		done_at_submit += io_uring_peek_cqe(&ring, &cqe) == 0;
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		EXPECT_EQ(64 << 10, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		sum += lat[i];
		if (lat[i] > max)
			max = lat[i];
	}
	TH_LOG("100 x 64 KiB io_uring READs during re-targets: submit %.3f ms mean, %.3f ms max; %u completed inside submit",
	       sum / 100, max, done_at_submit);
	retarget_stop(&r);
	EXPECT_EQ(0, r.err) TH_LOG("SET_TARGET: %s", strerror(-r.err));
	EXPECT_LT(0, conclusive) TH_LOG("no trial met a re-target cleanly");
	free(buf);
	io_uring_queue_exit(&ring);
	close(afd);
}

/* ---- link_delay ------------------------------------------------------------- */

/*
 * A 4x allocation of @pages pages of random bytes (each spills: a link
 * request per page); the caller checked that there is a carve-out.
 */
static int spill_alloc(struct __test_metadata *_metadata, int fd,
		       unsigned int pages)
{
	struct buddy_alloc a = alloc_req(pages * PG, BUDDY_TARGET_4X,
					 BUDDY_CODEC_BPC);
	uint8_t buf[PG];
	unsigned int p;

	ASSERT_EQ(0, ioctl(fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	for (p = 0; p < pages; p++) {
		datagen_fill(DATAGEN_RANDOM, p, buf, PG);
		ASSERT_EQ((ssize_t)PG, pwrite(a.fd, buf, PG, p * PG));
	}
	return a.fd;
}

struct faulter {
	pthread_t th;
	pid_t tid;
	volatile uint8_t *addr;
	double start, ms;
};

static void *fault_once(void *arg)
{
	struct faulter *f = arg;

	f->tid = syscall(SYS_gettid);
	f->start = now_ms();
	(void)*f->addr;
	f->ms = now_ms() - f->start;
	return NULL;
}

/* State letter of thread @tid of this process ('D': uninterruptible). */
static char task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

/*
 * With link_delay on and a 100 ms link latency, a fault on a page that
 * spills into the carve-out waits 100 ms.  It must wait with mmap_lock
 * dropped: another thread's mmap() (mmap_lock for writing), made while
 * the faulting thread sleeps, returns at once instead of after the wait.
 */
TEST_F_TIMEOUT(wait, link_delay_waits_outside_mmap_lock, 300)
{
	unsigned int trial, conclusive = 0, quick = 0;
	uint8_t *map;
	int afd;

	SETUP_DONE();
	if (!self->info.buddy_bytes)
		SKIP(return, "no carve-out: no link requests");
	afd = spill_alloc(_metadata, self->fd, 4);
	map = mmap(NULL, 4 * PG, PROT_READ, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, kparam_write("link_latency_ns", 100000000));
	for (trial = 0; trial < 10 && quick < 2; trial++) {
		struct faulter f = { .addr = map + (trial % 4) * PG };
		double seen = 0, t0, d, left;
		int i;

		/* the page out of the window, then the wait on */
		ASSERT_EQ(0, kparam_write("link_delay", 0));
		ASSERT_EQ(0, window_flush(self->fd, 300));
		ASSERT_EQ(0, kparam_write("link_delay", 1));
		ASSERT_EQ(0, pthread_create(&f.th, NULL, fault_once, &f));
		for (i = 0; i < 5000 && !seen; i++) {
			if (f.tid && task_state(f.tid) == 'D')
				seen = now_ms();
			else
				usleep(200);
		}
		t0 = now_ms();
		void *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		d = now_ms() - t0;
		ASSERT_NE(MAP_FAILED, p);
		munmap(p, PG);
		pthread_join(f.th, NULL);
		/*
		 * The fault really waited, and we saw it with a good part of
		 * the wait left: under mmap_lock, mmap() would wait all of it.
		 */
		left = f.start + f.ms - t0;
		if (seen && f.ms >= 95 && left >= 30) {
			conclusive++;
			quick += d < left / 2;
			TH_LOG("trial %u: fault %.1f ms, mmap() %.1f ms while %.1f ms of it were left",
			       trial, f.ms, d, left);
		}
	}
	ASSERT_EQ(0, kparam_write("link_delay", 0));
	EXPECT_LT(0, conclusive) TH_LOG("never saw a fault wait");
	EXPECT_LT(0, quick) TH_LOG("mmap() waited for a fault's link_delay: mmap_lock held across it");
	munmap(map, 4 * PG);
	close(afd);
}

/*
 * Dirty pages of allocation X (each written back is a link request of
 * 80 ms) are evicted by another task's faults on Y (1x zeros: no link
 * request): those faults must not wait X's write-backs (40 x 80 ms): the
 * time they spend off the CPU (wall time less CPU time, so that a slow
 * kernel's own work does not count) stays under half of it; X's next
 * call waits them instead (at most 100 ms a call): an fsync of X that
 * writes nothing back takes that long.
 */
TEST_F_TIMEOUT(wait, link_delay_charged_to_the_allocation_written_back, 300)
{
	const unsigned int nx = 40;
	double t0, c0, ty, cy, tx;
	uint8_t *mx;
	int xfd;

	SETUP_DONE();
	if (!self->info.buddy_bytes)
		SKIP(return, "no carve-out: no link requests");
	xfd = spill_alloc(_metadata, self->fd, nx);
	ASSERT_EQ(0, kparam_write("window_mb", 1));
	mx = mmap(NULL, nx * PG, PROT_READ | PROT_WRITE, MAP_SHARED, xfd, 0);
	ASSERT_NE(MAP_FAILED, mx);
	for (unsigned int p = 0; p < nx; p++)
		mx[p * PG + 1] ^= 0x5a;
	ASSERT_EQ(0, kparam_write("link_latency_ns", 80000000));
	ASSERT_EQ(0, kparam_write("link_delay", 1));
	t0 = now_ms();
	c0 = cpu_ms();
	ASSERT_EQ(0, window_flush(self->fd, 300));
	ty = now_ms() - t0;
	cy = cpu_ms() - c0;
	t0 = now_ms();
	ASSERT_EQ(0, fsync(xfd));
	tx = now_ms() - t0;
	ASSERT_EQ(0, kparam_write("link_delay", 0));
	TH_LOG("faults evicting %u dirty pages: %.0f ms, %.0f of them off the CPU; the owner's fsync after: %.0f ms",
	       nx, ty, ty - cy, tx);
	EXPECT_GT(nx * 80 / 2, ty - cy) TH_LOG("the evicting task waited the write-backs");
	EXPECT_LE(90, tx) TH_LOG("the owner did not wait its write-backs");
	munmap(mx, nx * PG);
	close(xfd);
}

/* ---- RWF_NOWAIT writes --------------------------------------------------- */

struct hammer {
	pthread_t th;
	int afd;
	uint64_t off;
	int stop;
};

static void *hammer_page(void *arg)
{
	struct hammer *h = arg;
	uint8_t b = 0;

	while (!__atomic_load_n(&h->stop, __ATOMIC_RELAXED)) {
		b++;
		if (pwrite(h->afd, &b, 1, h->off) != 1)
			break;
	}
	return NULL;
}

/*
 * An RWF_NOWAIT write of 16 pages while another thread keeps the mutex of
 * the last page busy (page 79 shares page 15's): each write stores all
 * of its 16 pages or, with EAGAIN, none.  A write of more pages than an
 * RWF_NOWAIT write may span is EAGAIN, storing nothing.
 */
TEST_F_TIMEOUT(wait, nowait_write_all_or_nothing, 300)
{
	const size_t len = 16 * PG;
	struct buddy_alloc a = alloc_req(80 * PG, BUDDY_TARGET_1X,
					 BUDDY_CODEC_BPC);
	struct hammer h = { 0 };
	unsigned int i, stored = 0, again = 0, bad = 0;
	uint8_t *data, *cur, *got;
	struct iovec v;

	SETUP_DONE();
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	data = malloc(len + PG);
	cur = calloc(1, len);
	got = malloc(len + PG);
	ASSERT_TRUE(data && cur && got);
	h.afd = a.fd;
	h.off = 79 * PG;
	ASSERT_EQ(0, pthread_create(&h.th, NULL, hammer_page, &h));
	for (i = 0; i < 3000 && (again < 20 || stored < 20); i++) {
		ssize_t r;

		memset(data, 1 + i % 250, len);
		v.iov_base = data;
		v.iov_len = len;
		r = pwritev2(a.fd, &v, 1, 0, RWF_NOWAIT);
		if (r == (ssize_t)len) {
			stored++;
			memcpy(cur, data, len);
		} else if (r < 0 && errno == EAGAIN) {
			again++;
		} else {
			bad++;
			TH_LOG("RWF_NOWAIT write: %zd (%s)", r, strerror(errno));
			break;
		}
		ASSERT_EQ((ssize_t)len, pread(a.fd, got, len, 0));
		if (first_diff(cur, got, len) >= 0) {
			bad++;
			TH_LOG("after %s: byte %ld is 0x%02x, want 0x%02x",
			       r < 0 ? "EAGAIN" : "a full write",
			       first_diff(cur, got, len),
			       got[first_diff(cur, got, len)],
			       cur[first_diff(cur, got, len)]);
			break;
		}
	}
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
	pthread_join(h.th, NULL);
	TH_LOG("%u writes: %u stored, %u EAGAIN", i, stored, again);
	EXPECT_EQ(0, bad);
	EXPECT_LT(0, again) TH_LOG("the page mutex was never busy");
	EXPECT_LT(0, stored);
	/* one page more than a NOWAIT write may span: EAGAIN, nothing stored */
	memset(data, 0xee, len + PG);
	v.iov_len = len + PG;
	EXPECT_ERRNO(EAGAIN, pwritev2(a.fd, &v, 1, 0, RWF_NOWAIT));
	ASSERT_EQ((ssize_t)len, pread(a.fd, got, len, 0));
	EXPECT_EQ(-1, first_diff(cur, got, len));
	free(data);
	free(cur);
	free(got);
	close(a.fd);
}

/* A thread's RWF_NOWAIT read or write through a userfaultfd page. */
struct nowait_io {
	pthread_t th;
	int afd;
	bool write;
	void *page;
	size_t len;
	ssize_t ret;
	int err;
};

static void *nowait_io_run(void *arg)
{
	struct nowait_io *n = arg;
	struct iovec v = { n->page, n->len };

	n->ret = n->write ? pwritev2(n->afd, &v, 1, PG, RWF_NOWAIT) :
			    preadv2(n->afd, &v, 1, PG, RWF_NOWAIT);
	n->err = errno;
	return NULL;
}

/* A re-target in a thread of its own, with its end flagged. */
struct retarget_once {
	pthread_t th;
	int devfd;
	uint64_t id;
	unsigned int target, codec;
	int err;
	int done;
};

static void *retarget_once_run(void *arg)
{
	struct retarget_once *r = arg;

	r->err = buddy_set_target(r->devfd, r->id, r->target, r->codec);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * An RWF_NOWAIT call may fault on the user's memory like any file's, but
 * holds no lock of the allocation meanwhile: a userfaultfd page may stay
 * missing as long as its owner likes, and a re-target must not wait
 * behind it.  A read into such a page (a whole page: pinned for the
 * direct path; the rest of one: the bounce buffer's copy) and a write out
 * of one park on it; a re-target of the allocation then completes, and
 * once the page is filled each call completes with the right bytes.
 */
TEST_F_TIMEOUT(wait, nowait_io_parked_on_a_user_page_holds_no_lock, 120)
{
	struct buddy_alloc a = alloc_req(4 * PG, BUDDY_TARGET_1X,
					 BUDDY_CODEC_BPC);
	uint8_t *data = malloc(4 * PG), *got = malloc(4 * PG), *fill = malloc(PG);
	unsigned int k, i;

	SETUP_DONE();
	ASSERT_TRUE(data && got && fill);
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	for (k = 0; k < 4 * PG; k++)
		data[k] = k % 7 ? k / 64 : 0;
	ASSERT_EQ((ssize_t)(4 * PG), pwrite(a.fd, data, 4 * PG, 0));
	for (k = 0; k < 3; k++) {
		struct nowait_io n = { .afd = a.fd, .write = k == 2 };
		struct retarget_once r = {
			.devfd = self->fd, .id = a.id, .target = BUDDY_TARGET_1X,
			.codec = k & 1 ? BUDDY_CODEC_BPC : BUDDY_CODEC_ZVC,
		};
		const char *what = k == 2 ? "write" : k ? "part-page read" : "read";
		unsigned int off = k == 1 ? 64 : 0;
		struct uffd_page u;
		int ret = uffd_page_init(&u);

		if (ret)
			SKIP(break, "no userfaultfd: %s", strerror(-ret));
		for (i = 0; i < PG; i++)
			fill[i] = i * 13 + k;
		n.page = u.page + off;
		n.len = PG - off;
		ASSERT_EQ(0, pthread_create(&n.th, NULL, nowait_io_run, &n));
		ret = uffd_page_wait(&u, 10000);
		EXPECT_EQ(0, ret) TH_LOG("RWF_NOWAIT %s: no fault on the user's page (%s)",
					 what, strerror(-ret));
		ASSERT_EQ(0, pthread_create(&r.th, NULL, retarget_once_run, &r));
		for (i = 0; i < 1000 && !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE); i++)
			usleep(10 * 1000);
		EXPECT_TRUE(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE))
			TH_LOG("a re-target waited 10 s behind an RWF_NOWAIT %s parked on a user page",
			       what);
		if (!ret)
			ASSERT_EQ(0, uffd_page_fill(&u, fill));
		pthread_join(r.th, NULL);
		pthread_join(n.th, NULL);
		EXPECT_EQ(0, r.err) TH_LOG("SET_TARGET: %s", strerror(-r.err));
		EXPECT_EQ((ssize_t)n.len, n.ret) TH_LOG("RWF_NOWAIT %s: %zd (%s)", what,
							n.ret, strerror(n.err));
		if (n.write && n.ret == (ssize_t)n.len)
			memcpy(data + PG, fill, PG);
		else if (!n.write && n.ret == (ssize_t)n.len)
			EXPECT_EQ(-1, first_diff(data + PG, u.page + off, n.len));
		uffd_page_free(&u);
	}
	ASSERT_EQ((ssize_t)(4 * PG), pread(a.fd, got, 4 * PG, 0));
	EXPECT_EQ(-1, first_diff(data, got, 4 * PG));
	free(data);
	free(got);
	free(fill);
	close(a.fd);
}

/* ---- window_mb ------------------------------------------------------------- */

/*
 * Shrinking window_mb evicts down to it, writing dirty pages back: with
 * 8192 dirty pages of random bytes at 4x that takes a while.  A fatal
 * signal stops it: the writer killed 50 ms into it is reaped while most
 * pages are still resident (the rest are evicted by the next faults).
 */
TEST_F_TIMEOUT(wait, window_shrink_stops_on_a_fatal_signal, 300)
{
	const unsigned int n = 8192;
	unsigned int t = self->info.buddy_bytes ? BUDDY_TARGET_4X :
			 BUDDY_TARGET_1X;
	struct buddy_alloc a = alloc_req(n * PG, t, BUDDY_CODEC_BPC);
	uint64_t ws[8];
	double t0, reaped;
	uint8_t *map;
	unsigned int p;
	int go[2], st;
	pid_t pid;
	char c;

	SETUP_DONE();
	if (need_device(n * PG, t, self->info.chunk_bytes) >
	    self->info.device_bytes - self->info.device_used ||
	    need_buddy(n * PG, t, self->info.chunk_bytes) >
	    self->info.buddy_bytes - self->info.buddy_used)
		SKIP(return, "pools too small for %u pages at target %u", n, t);
	/* the writer, forked first: no mapping of its own to write back */
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(read(go[0], &c, 1) != 1 || kparam_write("window_mb", 1) ? 1 : 0);
	ASSERT_EQ(0, kparam_write("window_mb", 64));
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &a)) TH_LOG("ALLOC: %s", strerror(errno));
	map = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (p = 0; p < n; p++)
		datagen_fill(DATAGEN_RANDOM, p, map + p * PG, 256);
	ASSERT_LE(2, sysfs_u64s("window_stat", ws, 8));
	ASSERT_LE(n, ws[1]);
	ASSERT_EQ(1, write(go[1], "g", 1));
	usleep(50000);
	t0 = now_ms();
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	reaped = now_ms() - t0;
	ASSERT_LE(2, sysfs_u64s("window_stat", ws, 8));
	TH_LOG("killed 50 ms into the shrink, reaped %.0f ms later with %llu pages resident",
	       reaped, (unsigned long long)ws[1]);
	EXPECT_TRUE(WIFSIGNALED(st)) TH_LOG("the shrink was over before the kill");
	EXPECT_LT(n / 2, ws[1]) TH_LOG("the killed shrink went on");
	munmap(map, n * PG);
	close(a.fd);
	close(go[0]);
	close(go[1]);
}

TEST_HARNESS_MAIN
