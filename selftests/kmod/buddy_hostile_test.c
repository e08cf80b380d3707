// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the module under hostile use.  Each test
 * names the defect it guards against:
 *
 *  - alloc_on_read_only_device: BUDDY_IOC_ALLOC on /dev/buddy opened
 *    O_RDONLY is EBADF (an allocation is written through);
 *  - append_is_enospc: an O_APPEND write goes to the end, which an
 *    allocation is always at: ENOSPC, nothing written;
 *  - shared_position_is_atomic: read(2) from threads sharing one descriptor
 *    never hands two of them the same position (FMODE_ATOMIC_POS);
 *  - nowait_never_short_mid_range: RWF_NOWAIT reads and writes during a
 *    re-target either move everything or fail with EAGAIN, never a short
 *    count in the middle (a write of more than 16 pages is always EAGAIN);
 *  - nowait_never_short_beside_faults: the same, 16 pages at a time, while
 *    another thread faults pages of the allocation in through a mapping
 *    and writes them back (msync), so that the page locks are busy
 *    mid-range;
 *  - histogram_sums_to_entries: ALLOC_STAT's size-code histogram sums to
 *    nr_entries at every instant, while writers and re-targets run;
 *  - failed_retarget_leaves_all_as_it_was: a re-target that runs out of
 *    contiguous space half-way leaves the target, the histogram, the
 *    data and the pools exactly as before (tiny pools only);
 *  - owner_pid_in_pid_namespace: owner_pid is the pid the caller sees;
 *  - uring_alloc_records_process_comm: an ALLOC through IORING_OP_URING_CMD
 *    records the process's comm, not the io_uring worker's;
 *  - profile_duplicates_count_once: one PROFILE_SET naming a (uid, label)
 *    twice counts it once against BUDDY_PROFILE_MAX.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

FIXTURE(hostile) {
	int fd;
	struct buddy_info info;
};

FIXTURE_SETUP(hostile)
{
	self->fd = -1;
	OPEN_DEVICE(&self->fd, &self->info);
}

FIXTURE_TEARDOWN(hostile)
{
	if (self->fd >= 0)
		close(self->fd);
}

static uint64_t sum_codes(const struct buddy_alloc_stat *st)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		s += st->codes[i];
	return s;
}

/* A target other than 1x that this module's pools can take, or 1x. */
static unsigned int other_target(const struct buddy_info *info)
{
	return info->buddy_bytes ? BUDDY_TARGET_2X : BUDDY_TARGET_1X;
}

TEST_F(hostile, alloc_on_read_only_device)
{
	struct buddy_alloc req = alloc_req(4096, BUDDY_TARGET_1X,
					   BUDDY_CODEC_DEFAULT);
	int ro;

	SETUP_DONE();
	ro = open(BUDDY_DEV_PATH, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	EXPECT_ERRNO(EBADF, ioctl(ro, BUDDY_IOC_ALLOC, &req));
	EXPECT_EQ(0, req.fd);
	/* the read-only descriptor still answers GET_INFO */
	EXPECT_EQ(0, buddy_get_info(ro, &self->info));
	close(ro);
	EXPECT_IDLE(self->fd);
}

TEST_F(hostile, append_is_enospc)
{
	uint8_t buf[256], back[256];
	int afd;

	SETUP_DONE();
	afd = buddy_alloc_simple(self->fd, 8192, BUDDY_TARGET_1X,
				 BUDDY_CODEC_DEFAULT, NULL, NULL);
	ASSERT_LE(0, afd);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ(0, fcntl(afd, F_SETFL, O_APPEND));
	EXPECT_ERRNO(ENOSPC, write(afd, buf, sizeof(buf)));
	ASSERT_EQ(0, fcntl(afd, F_SETFL, 0));
	/* nothing was written at the old position (0) */
	ASSERT_EQ((ssize_t)sizeof(back), pread(afd, back, sizeof(back), 0));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0, memcmp(buf, back, sizeof(back)));
	close(afd);
}

#define POS_THREADS	4
#define POS_BLOCK	4096
#define POS_BLOCKS	256

struct pos_arg {
	int afd;
	atomic_int *seen;	/* per block: times read */
	atomic_int bad;
};

static void *pos_reader(void *p)
{
	struct pos_arg *a = p;
	uint8_t buf[POS_BLOCK];
	uint64_t tag;
	ssize_t r;

	while ((r = read(a->afd, buf, sizeof(buf))) > 0) {
		if (r != POS_BLOCK) {
			atomic_fetch_add(&a->bad, 1);
			continue;
		}
		memcpy(&tag, buf, sizeof(tag));
		if (tag >= POS_BLOCKS)
			atomic_fetch_add(&a->bad, 1);
		else
			atomic_fetch_add(&a->seen[tag], 1);
	}
	return NULL;
}

TEST_F(hostile, shared_position_is_atomic)
{
	static atomic_int seen[POS_BLOCKS];
	struct pos_arg arg = { .seen = seen };
	pthread_t th[POS_THREADS];
	uint8_t buf[POS_BLOCK];
	int round, i, dups = 0, missed = 0;

	SETUP_DONE();
	arg.afd = buddy_alloc_simple(self->fd, POS_BLOCK * POS_BLOCKS,
				     BUDDY_TARGET_1X, BUDDY_CODEC_DEFAULT,
				     NULL, NULL);
	ASSERT_LE(0, arg.afd);
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < POS_BLOCKS; i++) {
		uint64_t tag = i;

		memcpy(buf, &tag, sizeof(tag));
		ASSERT_EQ(POS_BLOCK, pwrite(arg.afd, buf, POS_BLOCK,
					    (off_t)i * POS_BLOCK));
	}
	for (round = 0; round < 8; round++) {
		for (i = 0; i < POS_BLOCKS; i++)
			atomic_store(&seen[i], 0);
		ASSERT_EQ(0, lseek(arg.afd, 0, SEEK_SET));
		for (i = 0; i < POS_THREADS; i++)
			ASSERT_EQ(0, pthread_create(&th[i], NULL, pos_reader, &arg));
		for (i = 0; i < POS_THREADS; i++)
			pthread_join(th[i], NULL);
		for (i = 0; i < POS_BLOCKS; i++) {
			dups += atomic_load(&seen[i]) > 1;
			missed += atomic_load(&seen[i]) == 0;
		}
	}
	EXPECT_EQ(0, atomic_load(&arg.bad));
	EXPECT_EQ(0, dups) TH_LOG("%d blocks read by two threads at once", dups);
	EXPECT_EQ(0, missed) TH_LOG("%d blocks skipped", missed);
	close(arg.afd);
}

struct retarget_arg {
	int devfd;
	uint64_t id;
	unsigned int t1, t2;
	atomic_int stop;
	atomic_int done;	/* re-targets finished */
	atomic_int err;
};

static void *retargeter(void *p)
{
	struct retarget_arg *r = p;
	int k = 0, ret;

	while (!atomic_load(&r->stop)) {
		ret = buddy_set_target(r->devfd, r->id, k++ & 1 ? r->t1 : r->t2,
				       BUDDY_CODEC_DEFAULT);
		if (ret)
			atomic_store(&r->err, ret);
		atomic_fetch_add(&r->done, 1);
	}
	return NULL;
}

/* What RWF_NOWAIT I/O of a whole allocation gave, while something else runs. */
struct nowait_tally {
	int full, again, shorts, bad_pos;
};

/*
 * Read (even @i) or write (odd @i) @size bytes at position 0 with
 * RWF_NOWAIT through the file position (offset -1), and tally the answer:
 * all of it, or EAGAIN with the position unmoved; anything else is a short
 * count in the middle of the allocation.
 */
static void nowait_round(int afd, void *buf, uint64_t size, int i,
			 struct nowait_tally *t)
{
	struct iovec iov = { buf, size };
	off_t pos;
	ssize_t n;

	if (lseek(afd, 0, SEEK_SET)) {
		t->shorts++;
		return;
	}
	n = i & 1 ? pwritev2(afd, &iov, 1, -1, RWF_NOWAIT) :
		    preadv2(afd, &iov, 1, -1, RWF_NOWAIT);
	pos = lseek(afd, 0, SEEK_CUR);
	if (n == (ssize_t)size) {
		t->full++;
		t->bad_pos += pos != (off_t)size;
	} else if (n < 0 && errno == EAGAIN) {
		t->again++;
		t->bad_pos += pos != 0;
	} else {
		t->shorts++;
		fprintf(stderr, "# %s: %zd of %llu (%s)\n", i & 1 ? "write" : "read",
			n, (unsigned long long)size, n < 0 ? strerror(errno) : "short");
	}
}

TEST_F(hostile, nowait_never_short_mid_range)
{
	struct retarget_arg r = {};
	uint64_t size;
	pthread_t th;
	uint8_t *buf;
	struct nowait_tally t = {};
	int afd, i;

	SETUP_DONE();
	if (!self->info.buddy_bytes)
		SKIP(return, "no carve-out to re-target into");
	/* several chunks, so that a re-stripe is under way mid-range */
	size = 4 * (uint64_t)self->info.chunk_bytes;
	if (size > (4u << 20))
		size = 4u << 20;
	if (need_device(size, BUDDY_TARGET_1X, self->info.chunk_bytes) * 2 >
	    self->info.device_bytes - self->info.device_used)
		size = self->info.chunk_bytes;
	buf = malloc(size);
	ASSERT_NE(NULL, buf);
	afd = buddy_alloc_simple(self->fd, size, BUDDY_TARGET_1X,
				 BUDDY_CODEC_DEFAULT, NULL, &r.id);
	ASSERT_LE(0, afd);
	fill_class(DATAGEN_MIXED, 7, buf, size);
	ASSERT_EQ((ssize_t)size, pwrite(afd, buf, size, 0));
	r.devfd = self->fd;
	r.t1 = BUDDY_TARGET_1X;
	r.t2 = other_target(&self->info);
	ASSERT_EQ(0, pthread_create(&th, NULL, retargeter, &r));
	for (i = 0; i < 400 && (i < 40 || atomic_load(&r.done) < 4); i++)
		nowait_round(afd, buf, size, i, &t);
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	TH_LOG("%d whole, %d EAGAIN, %d re-targets", t.full, t.again,
	       atomic_load(&r.done));
	EXPECT_EQ(0, t.shorts);
	EXPECT_EQ(0, t.bad_pos);
	EXPECT_EQ(0, atomic_load(&r.err));
	/*
	 * With no re-target running, an RWF_NOWAIT read goes through whole,
	 * and so does a write of at most 16 pages; a longer one (it would
	 * hold the mutexes of all its pages at once) answers EAGAIN.
	 */
	{
		struct iovec iov = { buf, size };

		EXPECT_EQ((ssize_t)size, preadv2(afd, &iov, 1, 0, RWF_NOWAIT));
		iov.iov_len = size < 16 * 4096 ? size : 16 * 4096;
		EXPECT_EQ((ssize_t)iov.iov_len,
			  pwritev2(afd, &iov, 1, 0, RWF_NOWAIT));
		if (size > 16 * 4096) {
			iov.iov_len = size;
			EXPECT_ERRNO(EAGAIN, pwritev2(afd, &iov, 1, 0, RWF_NOWAIT));
		}
	}
	close(afd);
	free(buf);
}

struct toucher_arg {
	volatile uint8_t *map;
	uint64_t size;
	atomic_int stop;
	atomic_int rounds;
	atomic_int err;
};

/* dirty every page through the mapping, write them all back, again */
static void *toucher(void *p)
{
	struct toucher_arg *t = p;
	uint8_t k = 0;

	while (!atomic_load(&t->stop)) {
		for (uint64_t off = 0; off < t->size; off += 4096)
			t->map[off] = k++;
		if (msync((void *)t->map, t->size, MS_SYNC))
			atomic_store(&t->err, errno);
		atomic_fetch_add(&t->rounds, 1);
	}
	return NULL;
}

TEST_F(hostile, nowait_never_short_beside_faults)
{
	struct toucher_arg t = {};
	uint64_t size = 16 * 4096;	/* what an RWF_NOWAIT write may span */
	struct nowait_tally n = {};
	int afd, i;
	pthread_t th;
	uint8_t *buf;
	void *map;

	SETUP_DONE();
	if (!(self->info.features & BUDDY_FEAT_MMAP))
		SKIP(return, "the module cannot map allocations");
	buf = malloc(size);
	ASSERT_NE(NULL, buf);
	afd = buddy_alloc_simple(self->fd, size, BUDDY_TARGET_1X,
				 BUDDY_CODEC_DEFAULT, NULL, NULL);
	ASSERT_LE(0, afd);
	fill_class(DATAGEN_MIXED, 11, buf, size);
	ASSERT_EQ((ssize_t)size, pwrite(afd, buf, size, 0));
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, map);
	t.map = map;
	t.size = size;
	ASSERT_EQ(0, pthread_create(&th, NULL, toucher, &t));
	for (i = 0; i < 600 && (i < 60 || atomic_load(&t.rounds) < 8); i++)
		nowait_round(afd, buf, size, i, &n);
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	TH_LOG("%d whole, %d EAGAIN, %d rounds of faults and msync", n.full,
	       n.again, atomic_load(&t.rounds));
	EXPECT_EQ(0, n.shorts);
	EXPECT_EQ(0, n.bad_pos);
	EXPECT_EQ(0, atomic_load(&t.err));
	EXPECT_EQ(0, munmap(map, size));
	close(afd);
	free(buf);
}

struct churn_arg {
	int afd;
	uint64_t size;
	atomic_int stop;
	unsigned int seed;
};

static void *churn_writer(void *p)
{
	struct churn_arg *c = p;
	uint8_t buf[4096];
	unsigned int s = c->seed;

	while (!atomic_load(&c->stop)) {
		uint64_t off = (rand_r(&s) % (c->size / 128)) * 128;
		size_t len = 128 * (1 + rand_r(&s) % 32);

		if (off + len > c->size)
			len = c->size - off;
		fill_class(rand_r(&s) % DATAGEN_NR, rand_r(&s), buf, len);
		if (pwrite(c->afd, buf, len, off) < 0)
			break;
	}
	return NULL;
}

TEST_F(hostile, histogram_sums_to_entries)
{
	struct churn_arg c[2];
	struct retarget_arg r = {};
	struct buddy_alloc_stat st;
	uint64_t code_stat[BUDDY_CODE_SLOTS];
	pthread_t th[3];
	int afd, i, k, bad = 0, bad_dev = 0, n;
	uint64_t size = 256 * 1024;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	afd = buddy_alloc_simple(self->fd, size, BUDDY_TARGET_1X,
				 BUDDY_CODEC_DEFAULT, NULL, &r.id);
	ASSERT_LE(0, afd);
	for (i = 0; i < 2; i++) {
		c[i] = (struct churn_arg){ .afd = afd, .size = size, .seed = i + 1 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, churn_writer, &c[i]));
	}
	r.devfd = self->fd;
	r.t1 = BUDDY_TARGET_1X;
	r.t2 = other_target(&self->info);
	ASSERT_EQ(0, pthread_create(&th[2], NULL, retargeter, &r));
	for (k = 0; k < 20000; k++) {
		ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
		if (sum_codes(&st) != st.nr_entries && bad++ < 3)
			TH_LOG("histogram sums to %llu, nr_entries %llu",
			       (unsigned long long)sum_codes(&st),
			       (unsigned long long)st.nr_entries);
		if (!(k % 64)) {
			uint64_t s = 0;

			n = sysfs_u64s("code_stat", code_stat, BUDDY_CODE_SLOTS);
			ASSERT_LT(0, n);
			for (i = 0; i < n; i++)
				s += code_stat[i];
			if (s != st.nr_entries && bad_dev++ < 3)
				TH_LOG("code_stat sums to %llu, want %llu",
				       (unsigned long long)s,
				       (unsigned long long)st.nr_entries);
		}
	}
	for (i = 0; i < 2; i++)
		atomic_store(&c[i].stop, 1);
	atomic_store(&r.stop, 1);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%d re-targets during 20000 reads", atomic_load(&r.done));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, bad_dev);
	EXPECT_EQ(0, atomic_load(&r.err));
	close(afd);
}

/*
 * Fragment the device pool so that the admission (enough free bytes) lets a
 * re-target from 2x to 1x start, and genalloc then fails on its second
 * chunk: only one hole is long enough for a 1x chunk.
 */
TEST_F(hostile, failed_retarget_leaves_all_as_it_was)
{
	const uint64_t chunk = self->info.chunk_bytes;
	struct buddy_alloc_stat before, after;
	struct buddy_info i0, i1;
	struct rlimit rl;
	uint64_t id, dev1x, fill, nfill, k;
	uint8_t *data, *back;
	int afd, *fds;

	SETUP_DONE();
	if (chunk != 4096 || !self->info.buddy_bytes ||
	    self->info.device_bytes > (16u << 20))
		SKIP(return, "needs chunk_kb=4, a carve-out and a small device pool");
	EXPECT_IDLE(self->fd);
	rl.rlim_cur = rl.rlim_max = 8192;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		SKIP(return, "cannot raise RLIMIT_NOFILE: %s", strerror(errno));
	/* X: 4 chunks at 2x (1 device granule each); 1x needs 2 per chunk */
	afd = buddy_alloc_simple(self->fd, 4 * chunk, BUDDY_TARGET_2X,
				 BUDDY_CODEC_BPC, NULL, &id);
	ASSERT_LE(0, afd);
	data = malloc(4 * chunk);
	back = malloc(4 * chunk);
	ASSERT_NE(NULL, data);
	ASSERT_NE(NULL, back);
	fill_class(DATAGEN_MIXED, 3, data, 4 * chunk);
	ASSERT_EQ((ssize_t)(4 * chunk), pwrite(afd, data, 4 * chunk, 0));
	dev1x = need_device(chunk, BUDDY_TARGET_1X, chunk);
	ASSERT_EQ(8192, dev1x);
	/* fill the rest with one-granule (2x, 4 KiB) allocations */
	ASSERT_EQ(0, buddy_get_info(self->fd, &i0));
	nfill = (i0.device_bytes - i0.device_used) / 4096;
	fds = calloc(nfill, sizeof(*fds));
	ASSERT_NE(NULL, fds);
	for (fill = 0; fill < nfill; fill++) {
		fds[fill] = buddy_alloc_simple(self->fd, 4096, BUDDY_TARGET_2X,
					       BUDDY_CODEC_BPC, NULL, NULL);
		if (fds[fill] < 0)
			break;
	}
	ASSERT_LT(16, fill);
	/* free every other filler (single holes) and one adjacent pair */
	for (k = 0; k + 1 < fill; k += 2) {
		close(fds[k]);
		fds[k] = -1;
	}
	close(fds[fill / 2 + 1 - (fill / 2) % 2]);
	fds[fill / 2 + 1 - (fill / 2) % 2] = -1;
	ASSERT_EQ(0, buddy_alloc_stat(afd, &before));
	ASSERT_EQ(0, buddy_get_info(self->fd, &i0));
	ASSERT_LE(4 * dev1x, i0.device_bytes - i0.device_used)
		TH_LOG("the admission would refuse before any chunk moves");

	EXPECT_EQ(-ENOSPC, buddy_set_target(self->fd, id, BUDDY_TARGET_1X,
					    BUDDY_CODEC_DEFAULT));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &after));
	ASSERT_EQ(0, buddy_get_info(self->fd, &i1));
	EXPECT_EQ(BUDDY_TARGET_2X, after.target);
	EXPECT_EQ(before.device_bytes, after.device_bytes);
	EXPECT_EQ(before.buddy_bytes, after.buddy_bytes);
	EXPECT_EQ(0, memcmp(before.codes, after.codes, sizeof(before.codes)));
	EXPECT_EQ(i0.device_used, i1.device_used);
	EXPECT_EQ(i0.buddy_used, i1.buddy_used);
	ASSERT_EQ((ssize_t)(4 * chunk), pread(afd, back, 4 * chunk, 0));
	EXPECT_EQ(-1, first_diff(data, back, 4 * chunk));

	for (k = 0; k < fill; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	/* with the space back, the same re-target goes through */
	EXPECT_EQ(0, buddy_set_target(self->fd, id, BUDDY_TARGET_1X,
				      BUDDY_CODEC_DEFAULT));
	ASSERT_EQ((ssize_t)(4 * chunk), pread(afd, back, 4 * chunk, 0));
	EXPECT_EQ(-1, first_diff(data, back, 4 * chunk));
	close(afd);
	free(fds);
	free(data);
	free(back);
	EXPECT_IDLE(self->fd);
}

TEST_F(hostile, owner_pid_in_pid_namespace)
{
	int pfd[2], status;
	pid_t child;
	long got = -1;

	SETUP_DONE();
	if (unshare(CLONE_NEWPID))
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	ASSERT_EQ(0, pipe(pfd));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct buddy_alloc_stat st;
		long v = -2;
		int afd = buddy_alloc_simple(self->fd, 4096, BUDDY_TARGET_1X,
					     BUDDY_CODEC_DEFAULT, NULL, NULL);

		if (afd >= 0 && !buddy_alloc_stat(afd, &st))
			v = st.owner_pid;
		if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
			_exit(2);
		_exit(getpid() == 1 ? 0 : 3);
	}
	close(pfd[1]);
	ASSERT_EQ((ssize_t)sizeof(got), read(pfd[0], &got, sizeof(got)));
	close(pfd[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* the child is pid 1 in its namespace: that is what it must see */
	EXPECT_EQ(1, got);
}

TEST_F(hostile, uring_alloc_records_process_comm)
{
	struct buddy_alloc req = alloc_req(4096, BUDDY_TARGET_1X,
					   BUDDY_CODEC_DEFAULT);
	struct buddy_aio_completion c;
	struct buddy_alloc_stat st;
	struct buddy_aio *ctx;
	char old[17] = "";
	int err = 0;

	SETUP_DONE();
	if (!(self->info.features & BUDDY_FEAT_URING_CMD))
		SKIP(return, "no BUDDY_FEAT_URING_CMD");
	ctx = buddy_aio_init(4, &err);
	if (!ctx)
		SKIP(return, "io_uring: %s", strerror(-err));
	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, "uring-owner");
	ASSERT_EQ(0, buddy_aio_ioctl(ctx, self->fd, BUDDY_IOC_ALLOC, &req, 1));
	ASSERT_EQ(1, buddy_aio_wait(ctx, &c, 1));
	prctl(PR_SET_NAME, old);
	ASSERT_EQ(0, c.res) TH_LOG("ALLOC: %s", strerror(-c.res));
	ASSERT_LE(0, req.fd);
	ASSERT_EQ(0, buddy_alloc_stat(req.fd, &st));
	EXPECT_STREQ("uring-owner", st.comm);
	close(req.fd);
	buddy_aio_exit(ctx);
}

TEST_F(hostile, profile_duplicates_count_once)
{
	struct buddy_profile_entry *e;
	unsigned int i, n, total = 0;

	SETUP_DONE();
	e = calloc(BUDDY_PROFILE_MAX, sizeof(*e));
	ASSERT_NE(NULL, e);
	for (i = 0; i < BUDDY_PROFILE_MAX - 1; i++) {
		e[i].uid = 50000 + i;
		e[i].target = BUDDY_TARGET_2X;
		snprintf(e[i].label, sizeof(e[i].label), "dup%u", i);
	}
	ASSERT_EQ(0, buddy_profile_set(self->fd, e, BUDDY_PROFILE_MAX - 1,
				       BUDDY_PROFILE_REPLACE));
	/* one new pair, named twice: the table ends exactly full */
	e[0].uid = 49999;
	snprintf(e[0].label, sizeof(e[0].label), "twice");
	e[1] = e[0];
	e[1].target = BUDDY_TARGET_4X;
	EXPECT_EQ(0, buddy_profile_set(self->fd, e, 2, 0));
	ASSERT_EQ(0, buddy_profile_get(self->fd, NULL, 0, &n, &total));
	EXPECT_EQ(BUDDY_PROFILE_MAX, total);
	/* the last of the two wins */
	ASSERT_EQ(0, buddy_profile_get(self->fd, e, BUDDY_PROFILE_MAX, &n,
				       &total));
	ASSERT_EQ(total, n);
	EXPECT_EQ(49999, e[n - 1].uid);
	EXPECT_EQ(BUDDY_TARGET_4X, e[n - 1].target);
	EXPECT_EQ(0, buddy_profile_set(self->fd, NULL, 0, BUDDY_PROFILE_REPLACE));
	free(e);
}

TEST_HARNESS_MAIN
