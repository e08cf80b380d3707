// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: user_limit_mb, the per-uid share of the device pool
 * and the carve-out together.
 *
 * Runs only when the module was loaded with user_limit_mb > 0 (the guest
 * script does one such load).  Each uid may reserve up to the limit in
 * device plus carve-out bytes: the largest allocation within it
 * succeeds, one byte more is EDQUOT with nothing reserved, and freeing gives
 * the share back.  Other uids are tested from forked children that switch
 * uid after inheriting the /dev/buddy descriptor.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "kmod_test.h"

FIXTURE(quota) {
	int fd;
	struct buddy_info info;
	uint64_t limit;
	uint64_t chunk;
};

FIXTURE_SETUP(quota)
{
	long long mb;

	self->fd = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	mb = kparam("user_limit_mb");
	if (mb <= 0)
		SKIP(return, "module loaded without user_limit_mb (is %lld)", mb);
	self->limit = (uint64_t)mb << 20;
	self->chunk = self->info.chunk_bytes;
	if (2 * self->limit > self->info.device_bytes)
		SKIP(return, "user_limit_mb=%lld is not below half the device pool", mb);
}

FIXTURE_TEARDOWN(quota)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int q_alloc(int fd, uint64_t size, unsigned int target, uint64_t *uid)
{
	struct buddy_alloc a = alloc_req(size, target, 0);
	struct buddy_alloc_stat st;

	if (ioctl(fd, BUDDY_IOC_ALLOC, &a))
		return -errno;
	if (uid && !buddy_alloc_stat(a.fd, &st))
		*uid = st.owner_uid;
	return a.fd;
}

/*
 * The limit checks of one uid: returns 0 or the number of the failed step
 * (a forked child reports it as its exit status).
 */
static int limit_steps(int fd, uint64_t limit, uint64_t chunk,
		       unsigned int want_uid)
{
	uint64_t s = max_fitting_size(BUDDY_TARGET_1X, chunk, limit, 0), uid = ~0ULL;
	struct buddy_info b, a;
	int f1, f2, r;

	if (buddy_get_info(fd, &b))
		return 1;
	r = q_alloc(fd, s + 1, BUDDY_TARGET_1X, NULL);	/* N+1 */
	if (r != -EDQUOT) {
		fprintf(stderr, "uid %u: %llu bytes over the limit: %s\n", want_uid,
			(unsigned long long)s + 1, r >= 0 ? "success" : strerror(-r));
		return 2;
	}
	if (buddy_get_info(fd, &a) || a.device_used != b.device_used ||
	    a.nr_allocs != b.nr_allocs)
		return 3;
	f1 = q_alloc(fd, s, BUDDY_TARGET_1X, &uid);	/* N */
	if (f1 < 0) {
		fprintf(stderr, "uid %u: %llu bytes (the limit): %s\n", want_uid,
			(unsigned long long)s, strerror(-f1));
		return 4;
	}
	if (uid != want_uid)
		return 5;
	r = q_alloc(fd, 1, BUDDY_TARGET_1X, NULL);
	if (r != -EDQUOT) {
		fprintf(stderr, "uid %u: 1 byte at the limit: %s\n", want_uid,
			r >= 0 ? "success" : strerror(-r));
		return 6;
	}
	if (b.buddy_bytes) {
		r = q_alloc(fd, 1, BUDDY_TARGET_16X, NULL);	/* 4 KiB device too */
		if (r != -EDQUOT)
			return 7;
	}
	close(f1);
	if (!b.buddy_bytes)
		return 0;
	/*
	 * Freed: the share is back.  Carve-out bytes count too: a 16x
	 * allocation whose device bytes alone fit the limit, but not with
	 * its carve-out bytes, is EDQUOT; one whose sum fits is not.
	 */
	s = max_fitting_size(BUDDY_TARGET_16X, chunk, limit, ~0ULL >> 1);
	if (need_buddy(s, BUDDY_TARGET_16X, chunk) <= b.buddy_bytes - b.buddy_used) {
		r = q_alloc(fd, s, BUDDY_TARGET_16X, NULL);
		if (r != -EDQUOT) {
			fprintf(stderr, "uid %u: 16x with %llu device + %llu carve-out bytes over a %llu limit: %s\n",
				want_uid,
				(unsigned long long)need_device(s, BUDDY_TARGET_16X, chunk),
				(unsigned long long)need_buddy(s, BUDDY_TARGET_16X, chunk),
				(unsigned long long)limit,
				r >= 0 ? "success" : strerror(-r));
			if (r >= 0)
				close(r);
			return 9;
		}
	}
	s = max_fitting_total(BUDDY_TARGET_16X, chunk, limit);
	f2 = q_alloc(fd, s, BUDDY_TARGET_16X, NULL);
	if (f2 < 0) {
		/* the carve-out itself may be smaller than this */
		uint64_t s2 = max_fitting_size(BUDDY_TARGET_16X, chunk, limit,
					       b.buddy_bytes - b.buddy_used);

		if (s2 < s)
			s = s2;
		f2 = q_alloc(fd, s, BUDDY_TARGET_16X, NULL);
		if (f2 < 0) {
			fprintf(stderr, "uid %u: 16x within the limit: %s\n",
				want_uid, strerror(-f2));
			return 8;
		}
	}
	close(f2);
	return 0;
}

TEST_F(quota, root_within_its_share)
{
	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	EXPECT_EQ(0, limit_steps(self->fd, self->limit, self->chunk, getuid()));
	EXPECT_IDLE(self->fd);
}

static pid_t as_uid(int fd, uid_t uid, uint64_t limit, uint64_t chunk)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(100);
	_exit(limit_steps(fd, limit, chunk, uid));
}

TEST_F(quota, shares_are_per_uid)
{
	uint64_t s;
	int st, f;
	pid_t p1, p2;

	SETUP_DONE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	EXPECT_IDLE(self->fd);
	/* root takes its whole share first: the others are not affected */
	s = max_fitting_size(BUDDY_TARGET_1X, self->chunk, self->limit, 0);
	f = q_alloc(self->fd, s, BUDDY_TARGET_1X, NULL);
	ASSERT_LE(0, f) TH_LOG("root at its limit: %s", strerror(-f));
	EXPECT_EQ(-EDQUOT, q_alloc(self->fd, 1, BUDDY_TARGET_1X, NULL));

	p1 = as_uid(self->fd, 1000, self->limit, self->chunk);
	ASSERT_LE(0, p1);
	ASSERT_EQ(p1, waitpid(p1, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("uid 1000 failed step %d", WEXITSTATUS(st));
	p2 = as_uid(self->fd, 1001, self->limit, self->chunk);
	ASSERT_LE(0, p2);
	ASSERT_EQ(p2, waitpid(p2, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("uid 1001 failed step %d", WEXITSTATUS(st));
	close(f);
	EXPECT_IDLE(self->fd);
}

/* Two uids at their limits at the same time, from two processes. */
TEST_F(quota, concurrent_uids_at_their_limits)
{
	uint64_t s;
	pid_t pids[2];
	int up[2][2], down[2][2], i, st;
	char c;

	SETUP_DONE();
	if (geteuid() != 0)
		SKIP(return, "needs root to switch uids");
	EXPECT_IDLE(self->fd);
	s = max_fitting_size(BUDDY_TARGET_1X, self->chunk, self->limit, 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pipe(up[i]));
		ASSERT_EQ(0, pipe(down[i]));
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			uid_t uid = 2000 + i;
			int f;

			if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
				_exit(100);
			f = q_alloc(self->fd, s, BUDDY_TARGET_1X, NULL);
			if (f < 0)
				_exit(1);
			if (q_alloc(self->fd, 1, BUDDY_TARGET_1X, NULL) != -EDQUOT)
				_exit(2);
			/* report, then hold the allocation until told */
			if (write(up[i][1], "r", 1) != 1 || read(down[i][0], &c, 1) != 1)
				_exit(3);
			_exit(0);
		}
		close(up[i][1]);
		close(down[i][0]);
		/* wait for the child to hold its share before starting the next */
		EXPECT_EQ(1, read(up[i][0], &c, 1));
	}
	{
		struct buddy_info info;

		ASSERT_EQ(0, buddy_get_info(self->fd, &info));
		EXPECT_EQ(2, info.nr_allocs);
		EXPECT_EQ(2 * need_device(s, BUDDY_TARGET_1X, self->chunk), info.device_used);
	}
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, write(down[i][1], "g", 1));
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("child %d status %#x", i, st);
		close(up[i][0]);
		close(down[i][1]);
	}
	EXPECT_IDLE(self->fd);
}

TEST_HARNESS_MAIN
