// SPDX-License-Identifier: GPL-2.0
/*
 * libbuddy_aio_test - libbuddy's io_uring context and AUTO allocations
 * against the real buddy.ko (run in the QEMU guest by `make check-lib`):
 * reads and writes at, across and past the end, the queue limits, every
 * argument check, BUDDY_IOC_* as IORING_OP_URING_CMD (including ALLOC, whose
 * fd comes back in the struct), and AUTO with and without a profile.
 *
 * Linked against $(B)/lib/libbuddy.a, the installed library's archive.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/libbuddy.h"

#define MIB (1024 * 1024)

static unsigned int param_uint(const char *name)
{
	char path[128];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Reap exactly one completion. */
static int wait_one(struct buddy_aio *aio, struct buddy_aio_completion *c)
{
	return buddy_aio_wait(aio, c, 1);
}

FIXTURE(aio) {
	int devfd;
	int afd;
	struct buddy_info info;
	struct buddy_aio *aio;
	uint64_t size;
};

FIXTURE_SETUP(aio)
{
	int err;

	self->afd = -1;
	self->aio = NULL;
	self->devfd = buddy_open(NULL);
	if (self->devfd < 0)
		SKIP(return, "%s", buddy_strerror(self->devfd, BUDDY_OP_OPEN));
	ASSERT_EQ(0, buddy_get_info(self->devfd, &self->info));
	if (!(self->info.features & BUDDY_FEAT_IO_URING))
		SKIP(return, "buddy.ko lacks %s",
		     buddy_feature_name(BUDDY_FEAT_IO_URING));
	self->size = MIB + 1000;	/* not a multiple of anything */
	self->afd = buddy_alloc_simple(self->devfd, self->size,
				       BUDDY_TARGET_2X, BUDDY_CODEC_BPC,
				       "aio-test", NULL);
	ASSERT_LE(0, self->afd) TH_LOG("alloc: %s",
			buddy_strerror(self->afd, BUDDY_OP_ALLOC));
	self->aio = buddy_aio_init(8, &err);
	ASSERT_NE(NULL, self->aio) TH_LOG("buddy_aio_init: %s", strerror(-err));
}

FIXTURE_TEARDOWN(aio)
{
	buddy_aio_exit(self->aio);
	if (self->afd >= 0)
		close(self->afd);
	if (self->devfd >= 0)
		close(self->devfd);
}

/* 1 MiB + 1000 bytes in 4 KiB pieces at queue depth 8, read back async. */
TEST_F(aio, round_trip)
{
	const size_t piece = 4096;
	struct buddy_aio_completion c[8];
	uint8_t *src, *dst;
	uint64_t off, done = 0, nops = 0;
	size_t i;
	int n, pass;

	if (_metadata->skip)
		return;
	src = malloc(self->size);
	dst = calloc(1, self->size);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	for (i = 0; i < self->size; i++)	/* zeros, small values, noise */
		src[i] = i % 3000 < 1000 ? 0 : i % 3000 < 2000 ? i % 5 :
			 (uint8_t)(i * 2654435761u >> 13);

	for (pass = 0; pass < 2; pass++) {
		off = 0;
		done = 0;
		nops = 0;
		while (off < self->size || buddy_aio_pending(self->aio)) {
			while (off < self->size &&
			       buddy_aio_pending(self->aio) < 8) {
				size_t len = self->size - off < piece ?
					     self->size - off : piece;

				ASSERT_EQ(0, pass ?
					  buddy_aio_read(self->aio, self->afd,
							 dst + off, len, off, len) :
					  buddy_aio_write(self->aio, self->afd,
							  src + off, len, off, len));
				off += len;
				nops++;
			}
			n = buddy_aio_wait(self->aio, c, 8);
			ASSERT_LT(0, n);
			for (i = 0; i < (size_t)n; i++) {
				/* user_data carries the length asked for */
				ASSERT_EQ((int64_t)c[i].user_data, c[i].res);
				done += c[i].res;
			}
		}
		EXPECT_EQ(self->size, done);
		EXPECT_EQ((self->size + piece - 1) / piece, nops);
	}
	EXPECT_EQ(0, memcmp(src, dst, self->size));
	free(src);
	free(dst);
}

/* The end of the allocation: short counts, -ENOSPC, 0. */
TEST_F(aio, end_of_allocation)
{
	struct buddy_aio_completion c;
	char buf[256] = { 1 };

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, buddy_aio_write(self->aio, self->afd, buf, 256,
				     self->size - 100, 1));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(1, c.user_data);
	EXPECT_EQ(100, c.res);

	ASSERT_EQ(0, buddy_aio_write(self->aio, self->afd, buf, 1,
				     self->size, 2));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(-ENOSPC, c.res);

	ASSERT_EQ(0, buddy_aio_read(self->aio, self->afd, buf, 256,
				    self->size - 28, 3));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(28, c.res);

	ASSERT_EQ(0, buddy_aio_read(self->aio, self->afd, buf, 256,
				    self->size + 4096, 4));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(0, buddy_aio_pending(self->aio));
}

/* Argument checks that never reach the kernel. */
TEST_F(aio, arguments)
{
	struct buddy_aio_completion c;
	char buf[16];
	int err = 0;

	if (_metadata->skip)
		return;
	EXPECT_EQ(-EINVAL, buddy_aio_read(self->aio, self->afd, buf, 16,
					  (uint64_t)INT64_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, buddy_aio_read(self->aio, self->afd, buf, 16,
					  UINT64_MAX, 0));
	if (sizeof(size_t) > 4)
		EXPECT_EQ(-EINVAL, buddy_aio_write(self->aio, self->afd, buf,
					(size_t)UINT32_MAX + 1, 0, 0));
	EXPECT_EQ(0, buddy_aio_pending(self->aio));
	EXPECT_EQ(0, buddy_aio_wait(self->aio, &c, 1));	/* nothing pending */
	EXPECT_EQ(-EINVAL, buddy_aio_wait(self->aio, &c, 0));
	EXPECT_EQ(0, buddy_aio_submit(self->aio));

	EXPECT_EQ(NULL, buddy_aio_init(0, &err));
	EXPECT_EQ(-EINVAL, err);
	EXPECT_EQ(NULL, buddy_aio_init(4097, &err));
	EXPECT_EQ(-EINVAL, err);
	buddy_aio_exit(NULL);
}

/* At most 2 * depth operations pending: the CQ ring never overflows. */
TEST_F(aio, queue_limit)
{
	struct buddy_aio_completion c[64];
	unsigned int limit = 0, got = 0;
	char buf[128];
	int n, err;

	if (_metadata->skip)
		return;
	while ((err = buddy_aio_read(self->aio, self->afd, buf, sizeof(buf),
				     0, limit)) == 0)
		limit++;
	EXPECT_EQ(-EBUSY, err);
	EXPECT_EQ(16, limit);	/* depth 8: CQ of 16, SQ refilled once */
	EXPECT_EQ(limit, buddy_aio_pending(self->aio));
	while (got < limit) {
		n = buddy_aio_wait(self->aio, c, 64);
		ASSERT_LT(0, n);
		got += n;
	}
	EXPECT_EQ(0, buddy_aio_pending(self->aio));
}

/* BUDDY_IOC_* as IORING_OP_URING_CMD: the same results as ioctl(). */
TEST_F(aio, uring_cmd)
{
	struct buddy_aio_completion c;
	struct buddy_alloc_stat st;
	struct buddy_alloc req;
	struct buddy_info info;
	int afd;

	if (_metadata->skip)
		return;
	if (!(self->info.features & BUDDY_FEAT_URING_CMD))
		SKIP(return, "buddy.ko lacks uring-cmd");

	memset(&info, 0xcc, sizeof(info));
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, self->devfd, BUDDY_IOC_GET_INFO,
				     &info, 7));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(7, c.user_data);
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(BUDDY_ABI_VERSION, info.abi_version);
	EXPECT_EQ(self->info.device_bytes, info.device_bytes);
	EXPECT_EQ(self->info.features, info.features);

	/* ALLOC through the ring: the new fd is in the struct */
	memset(&req, 0, sizeof(req));
	req.size = 3 * 4096;
	req.target = BUDDY_TARGET_4X;
	req.codec = BUDDY_CODEC_ZVC;
	req.flags = BUDDY_ALLOC_CLOEXEC;
	strcpy(req.label, "via-uring");
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, self->devfd, BUDDY_IOC_ALLOC,
				     &req, 8));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	ASSERT_EQ(0, c.res);
	afd = req.fd;
	ASSERT_LE(0, afd);
	EXPECT_LT(0, req.id);
	EXPECT_EQ(BUDDY_SRC_EXPLICIT, req.target_source);

	/* ALLOC_STAT on the new allocation fd, through the ring too */
	memset(&st, 0, sizeof(st));
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, afd, BUDDY_IOC_ALLOC_STAT,
				     &st, 9));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(req.id, st.id);
	EXPECT_EQ(3 * 4096, st.size);
	EXPECT_EQ(BUDDY_TARGET_4X, st.target);
	EXPECT_EQ(BUDDY_CODEC_ZVC, st.codec);
	EXPECT_STREQ("via-uring", st.label);

	/* errors as ioctl() gives them */
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, afd, BUDDY_IOC_GET_INFO,
				     &info, 10));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(-ENOTTY, c.res);
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, self->devfd,
				     _IOR(BUDDY_IOC_MAGIC, 0x7f, __u64),
				     &info, 11));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(-ENOTTY, c.res);
	memset(&req, 0, sizeof(req));
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, self->devfd, BUDDY_IOC_ALLOC,
				     &req, 12));		/* size 0 */
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(-EINVAL, c.res);
	ASSERT_EQ(0, buddy_aio_ioctl(self->aio, self->devfd, BUDDY_IOC_GET_INFO,
				     NULL, 13));
	ASSERT_EQ(1, wait_one(self->aio, &c));
	EXPECT_EQ(-EFAULT, c.res);
	close(afd);
}

/* AUTO: auto_target without a profile, the profile's choice with one. */
TEST(alloc_auto)
{
	struct buddy_profile_entry e;
	struct buddy_alloc res;
	struct buddy_alloc_stat st;
	int devfd, afd, ret;

	devfd = buddy_open(NULL);
	if (devfd < 0)
		SKIP(return, "%s", buddy_strerror(devfd, BUDDY_OP_OPEN));

	memset(&res, 0xcc, sizeof(res));
	afd = buddy_alloc_auto(devfd, 8192, "no-such-profile", &res);
	ASSERT_LE(0, afd) TH_LOG("%s", buddy_strerror(afd, BUDDY_OP_ALLOC));
	EXPECT_EQ(afd, res.fd);
	EXPECT_EQ(param_uint("auto_target"), res.target);
	EXPECT_EQ(BUDDY_SRC_DEFAULT, res.target_source);
	EXPECT_STREQ("default", buddy_source_name(res.target_source));
	EXPECT_EQ(BUDDY_CODEC_BPC, res.codec);
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(BUDDY_SRC_DEFAULT, st.target_source);
	close(afd);

	memset(&e, 0, sizeof(e));
	e.uid = getuid();
	e.target = BUDDY_TARGET_16X;
	e.codec = BUDDY_CODEC_ZVC;
	strcpy(e.label, "aio-profiled");
	ret = buddy_profile_set(devfd, &e, 1, 0);
	if (ret == -EPERM)
		SKIP(goto out, "installing a profile needs CAP_SYS_ADMIN");
	ASSERT_EQ(0, ret);
	afd = buddy_alloc_auto(devfd, 8192, "aio-profiled", &res);
	ASSERT_LE(0, afd);
	EXPECT_EQ(BUDDY_TARGET_16X, res.target);
	EXPECT_EQ(BUDDY_CODEC_ZVC, res.codec);
	EXPECT_EQ(BUDDY_SRC_PROFILE, res.target_source);
	EXPECT_STREQ("profile", buddy_source_name(res.target_source));
	close(afd);
	/* leave the table as an empty one */
	EXPECT_EQ(0, buddy_profile_set(devfd, NULL, 0, BUDDY_PROFILE_REPLACE));

	/* a label too long for the ABI never reaches the kernel */
	EXPECT_EQ(-EINVAL, buddy_alloc_auto(devfd, 8192,
		  "0123456789abcdef0123456789abcdef", &res));
out:
	close(devfd);
}

TEST(names)
{
	EXPECT_STREQ("explicit", buddy_source_name(BUDDY_SRC_EXPLICIT));
	EXPECT_STREQ("?", buddy_source_name(3));
	EXPECT_STREQ("rw", buddy_feature_name(BUDDY_FEAT_RW));
	EXPECT_STREQ("io-uring", buddy_feature_name(BUDDY_FEAT_IO_URING));
	EXPECT_STREQ("get-map", buddy_feature_name(BUDDY_FEAT_GET_MAP));
	EXPECT_STREQ("admin", buddy_feature_name(BUDDY_FEAT_ADMIN));
	EXPECT_STREQ("auto", buddy_feature_name(BUDDY_FEAT_AUTO));
	EXPECT_STREQ("uring-cmd", buddy_feature_name(BUDDY_FEAT_URING_CMD));
	EXPECT_STREQ("?", buddy_feature_name(BUDDY_FEAT_RW | BUDDY_FEAT_AUTO));
	EXPECT_STREQ("?", buddy_feature_name(0));
}

TEST_HARNESS_MAIN
