/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmod_test.h - harness glue shared by the buddy.ko selftests: the fixture
 * prologue, errno checks that name the errno, and checks of the device's
 * global usage.  Include after <kselftest_harness.h>.
 */
#ifndef BUDDY_KMOD_TEST_H
#define BUDDY_KMOD_TEST_H

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kmod_util.h"

/* After a setup that SKIPped, the 6.1 harness still runs the body. */
#define SETUP_DONE() do { if (_metadata->skip) return; } while (0)

/* @call must fail with -1 and errno @err. */
#define EXPECT_ERRNO(err, call) do {					\
	long __r;							\
	errno = 0;							\
	__r = (long)(call);						\
	EXPECT_EQ(-1, __r) TH_LOG("%s: expected -1/%s, got %ld", #call,	\
				  strerror(err), __r);			\
	if (__r == -1)							\
		EXPECT_EQ(err, errno) TH_LOG("%s: expected %s, got %s",	\
			#call, strerror(err), strerror(errno));		\
} while (0)

/* @call must return @want (>= 0); errno is shown when it fails. */
#define EXPECT_RET(want, call) do {					\
	long __r;							\
	errno = 0;							\
	__r = (long)(call);						\
	EXPECT_EQ((long)(want), __r) TH_LOG("%s: errno %s", #call,	\
					    strerror(errno));		\
} while (0)

#define ASSERT_RET(want, call) do {					\
	long __r;							\
	errno = 0;							\
	__r = (long)(call);						\
	ASSERT_EQ((long)(want), __r) TH_LOG("%s: errno %s", #call,	\
					    strerror(errno));		\
} while (0)

/* Open /dev/buddy and read GET_INFO, or SKIP with the reason. */
#define OPEN_DEVICE(fdp, infop) do {					\
	*(fdp) = buddy_open(NULL);					\
	if (*(fdp) < 0)							\
		SKIP(return, "%s: %s", BUDDY_DEV_PATH,			\
		     buddy_strerror(*(fdp), BUDDY_OP_OPEN));		\
	ASSERT_EQ(0, buddy_get_info(*(fdp), (infop)));			\
} while (0)

/* Nothing is allocated: a test that needs an idle device starts with it. */
#define EXPECT_IDLE(fd) do {						\
	struct buddy_info __i;						\
	ASSERT_EQ(0, buddy_get_info((fd), &__i));			\
	EXPECT_EQ(0, __i.nr_allocs) TH_LOG("allocations leaked by an earlier test"); \
	EXPECT_EQ(0, __i.device_used);					\
	EXPECT_EQ(0, __i.buddy_used);					\
	EXPECT_EQ(0, __i.logical_bytes);				\
} while (0)

/* Compare two struct buddy_counters, naming the counter that differs. */
#define EXPECT_COUNTERS(want, got, what) do {				\
	const uint64_t *__w = counters_u64(want);			\
	const uint64_t *__g = counters_u64(got);			\
	int __k;							\
	for (__k = 0; __k < 8; __k++) {					\
		EXPECT_EQ(__w[__k], __g[__k]) TH_LOG("%s: %s",		\
					(what), counter_name(__k));	\
	}								\
} while (0)

static inline struct buddy_alloc alloc_req(uint64_t size, unsigned int target,
					   unsigned int codec)
{
	struct buddy_alloc a;

	memset(&a, 0, sizeof(a));
	a.size = size;
	a.target = target;
	a.codec = codec;
	a.flags = BUDDY_ALLOC_CLOEXEC;
	return a;
}

static const unsigned int all_targets[] = {
	BUDDY_TARGET_1X, BUDDY_TARGET_4_3X, BUDDY_TARGET_2X,
	BUDDY_TARGET_4X, BUDDY_TARGET_16X,
};

#define NR_TARGETS	ARRAY_SIZE(all_targets)

#endif /* BUDDY_KMOD_TEST_H */
