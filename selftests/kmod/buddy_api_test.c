// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the ABI of /dev/buddy and of allocation descriptors.
 *
 * GET_INFO against the module parameters, every errno of BUDDY_IOC_ALLOC,
 * struct-size extension, ids, O_CLOEXEC, fstat, fdinfo, file-position and
 * bounds semantics of an allocation fd, GET_MAP and ALLOC_STAT arguments,
 * lifetime, and the sysfs files.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define ALLOC_IOC_SIZED(n) _IOC(_IOC_READ | _IOC_WRITE, BUDDY_IOC_MAGIC, 0x01, (n))
#define INFO_IOC_SIZED(n)  _IOC(_IOC_READ, BUDDY_IOC_MAGIC, 0x00, (n))

FIXTURE(api) {
	int fd;
	struct buddy_info info;
	struct kparams kp;
};

FIXTURE_SETUP(api)
{
	self->fd = -1;
	kparams_read(&self->kp);
	OPEN_DEVICE(&self->fd, &self->info);
}

FIXTURE_TEARDOWN(api)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ALLOC that must succeed: returns the fd. */
static int must_alloc(struct __test_metadata *_metadata, int fd,
		      struct buddy_alloc *a)
{
	int r;

	errno = 0;
	r = ioctl(fd, BUDDY_IOC_ALLOC, a);
	EXPECT_EQ(0, r) TH_LOG("ALLOC size %llu target %u codec %u: %s",
			       (unsigned long long)a->size, a->target,
			       a->codec, strerror(errno));
	if (r)
		return -1;
	EXPECT_LE(0, a->fd);
	return a->fd;
}

/* ALLOC that must fail with @err and leave the device untouched. */
static void alloc_fails(struct __test_metadata *_metadata, int fd,
			struct buddy_alloc *a, int err, const char *what)
{
	struct buddy_info before, after;
	int r;

	ASSERT_EQ(0, buddy_get_info(fd, &before));
	errno = 0;
	r = ioctl(fd, BUDDY_IOC_ALLOC, a);
	EXPECT_EQ(-1, r) TH_LOG("%s: expected %s, ALLOC succeeded", what,
				strerror(err));
	if (r == 0) {
		close(a->fd);
		return;
	}
	EXPECT_EQ(err, errno) TH_LOG("%s: expected %s, got %s", what,
				     strerror(err), strerror(errno));
	ASSERT_EQ(0, buddy_get_info(fd, &after));
	EXPECT_EQ(before.nr_allocs, after.nr_allocs) TH_LOG("%s", what);
	EXPECT_EQ(before.device_used, after.device_used) TH_LOG("%s", what);
	EXPECT_EQ(before.buddy_used, after.buddy_used) TH_LOG("%s", what);
}

TEST_F(api, info_matches_params)
{
	struct buddy_info info;
	uint64_t dev_sum = 0, bud_sum = 0;
	unsigned int n;

	SETUP_DONE();
	memset(&info, 0xcc, sizeof(info));
	ASSERT_RET(0, ioctl(self->fd, BUDDY_IOC_GET_INFO, &info));
	EXPECT_EQ(BUDDY_ABI_VERSION, info.abi_version);
	EXPECT_EQ(BUDDY_FEAT_RW | BUDDY_FEAT_GET_MAP,
		  info.features & (BUDDY_FEAT_RW | BUDDY_FEAT_GET_MAP));
	EXPECT_EQ(0x3eULL, info.codecs & 0x3e) TH_LOG("codecs 1..5");
	EXPECT_EQ(0, info.codecs & ~0x3fULL) TH_LOG("codec bits past NONE");
	EXPECT_EQ(0, info.device_used);
	EXPECT_EQ(0, info.buddy_used);
	EXPECT_EQ(0, info.logical_bytes);
	EXPECT_EQ(0, info.ratio_milli);
	EXPECT_EQ(0, info.nr_allocs);
	if (self->kp.device_mb >= 0)
		EXPECT_EQ((uint64_t)self->kp.device_mb << 20, info.device_bytes);
	if (self->kp.max_ratio >= 0) {
		EXPECT_EQ(self->kp.max_ratio, info.max_ratio);
		EXPECT_EQ((uint64_t)(info.max_ratio - 1) * info.device_bytes,
			  info.buddy_bytes);
	}
	if (self->kp.chunk_kb >= 0)
		EXPECT_EQ(self->kp.chunk_kb * 1024, info.chunk_bytes);
	if (self->kp.device_node != -1 || self->kp.buddy_node != -1) {
		EXPECT_EQ(self->kp.device_node, info.device_node);
		EXPECT_EQ(self->kp.buddy_node, info.buddy_node);
	} else {
		EXPECT_EQ(-1, info.device_node);
		EXPECT_EQ(-1, info.buddy_node);
	}
	ASSERT_LE(1, info.nr_nodes);
	ASSERT_GE(BUDDY_MAX_NODES, info.nr_nodes);
	for (n = 0; n < BUDDY_MAX_NODES; n++) {
		if (n < info.nr_nodes) {
			dev_sum += info.device_node_pages[n];
			bud_sum += info.buddy_node_pages[n];
		} else {
			EXPECT_EQ(0, info.device_node_pages[n]) TH_LOG("node %u", n);
			EXPECT_EQ(0, info.buddy_node_pages[n]) TH_LOG("node %u", n);
		}
	}
	EXPECT_EQ(info.device_bytes / 4096, dev_sum);
	EXPECT_EQ(info.buddy_bytes / 4096, bud_sum);
}

/*
 * ABI v1 is the first version: no caller can be older, so an _IOC_SIZE below
 * the v1 struct is EINVAL (N-1); a newer caller's larger struct is accepted
 * and gets the v1 part (N+1).
 */
TEST_F(api, info_struct_size_extension)
{
	unsigned char buf[sizeof(struct buddy_info) + 64];
	struct buddy_info *info = (struct buddy_info *)buf;

	SETUP_DONE();
	memset(buf, 0xcc, sizeof(buf));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, INFO_IOC_SIZED(sizeof(struct buddy_info) - 8), buf));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, INFO_IOC_SIZED(16), buf));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, INFO_IOC_SIZED(0), buf));

	memset(buf, 0xcc, sizeof(buf));
	ASSERT_RET(0, ioctl(self->fd, INFO_IOC_SIZED(sizeof(struct buddy_info) + 1), buf));
	EXPECT_EQ(BUDDY_ABI_VERSION, info->abi_version);
	EXPECT_EQ(self->info.device_bytes, info->device_bytes);

	memset(buf, 0xcc, sizeof(buf));
	ASSERT_RET(0, ioctl(self->fd, INFO_IOC_SIZED(sizeof(buf)), buf));
	EXPECT_EQ(BUDDY_ABI_VERSION, info->abi_version);
	EXPECT_EQ(self->info.device_bytes, info->device_bytes);
	EXPECT_EQ(self->info.buddy_bytes, info->buddy_bytes);
	EXPECT_EQ(self->info.chunk_bytes, info->chunk_bytes);
	EXPECT_EQ(self->info.nr_nodes, info->nr_nodes);
}

TEST_F(api, info_efault)
{
	SETUP_DONE();
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, BUDDY_IOC_GET_INFO, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, BUDDY_IOC_GET_INFO, (void *)8));
}

TEST_F(api, unknown_ioctl_enotty)
{
	int arg[64] = { 0 };

	SETUP_DONE();
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(BUDDY_IOC_MAGIC, 0x7f), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOWR(BUDDY_IOC_MAGIC, 0x3f, struct buddy_map), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOWR('x', 0x01, struct buddy_alloc), arg));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOR(BUDDY_IOC_MAGIC + 1, 0x00, struct buddy_info), arg));
}

/* Every target and codec: the struct written back, fstat, ALLOC_STAT, usage. */
TEST_F(api, alloc_every_target_and_codec)
{
	unsigned int ti, codec;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	for (ti = 0; ti < NR_TARGETS; ti++) {
		for (codec = BUDDY_CODEC_BPC; codec < BUDDY_CODEC_NR; codec++) {
			unsigned int t = all_targets[ti];
			uint64_t size = 3 * self->info.chunk_bytes / 2 + 77;
			struct buddy_alloc a = alloc_req(size, t, codec);
			struct buddy_alloc_stat st;
			struct buddy_info info;
			uint64_t dneed = need_device(size, t, self->info.chunk_bytes);
			uint64_t bneed = need_buddy(size, t, self->info.chunk_bytes);
			struct stat sb;
			char comm[32] = "";
			int afd, cfd, k;

			if (dneed > self->info.device_bytes ||
			    bneed > self->info.buddy_bytes) {
				alloc_fails(_metadata, self->fd, &a, E2BIG, "too big for the pools");
				continue;
			}
			strcpy(a.label, "every-target");
			afd = must_alloc(_metadata, self->fd, &a);
			if (afd < 0)
				continue;
			EXPECT_EQ(t, a.target);
			EXPECT_EQ(codec, a.codec);
			EXPECT_EQ(BUDDY_SRC_EXPLICIT, a.target_source);
			EXPECT_LT(0, a.id);
			EXPECT_EQ(size, a.size);
			EXPECT_EQ(0, a.reserved);
			ASSERT_EQ(0, fstat(afd, &sb));
			EXPECT_EQ((off_t)size, sb.st_size);

			memset(&st, 0xcc, sizeof(st));
			st.id = 0;
			EXPECT_RET(0, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
			EXPECT_EQ(a.id, st.id);
			EXPECT_EQ(size, st.size);
			EXPECT_EQ(t, st.target);
			EXPECT_EQ(codec, st.codec);
			EXPECT_EQ(getuid(), st.owner_uid);
			EXPECT_EQ((uint32_t)getpid(), st.owner_pid);
			memset(comm, 0, sizeof(comm));
			strcpy(comm, "every-target");
			EXPECT_EQ(0, memcmp(st.label, comm, BUDDY_LABEL_LEN));
			comm[0] = 0;
			k = open("/proc/self/comm", O_RDONLY);
			if (k >= 0) {
				ssize_t n = read(k, comm, sizeof(comm) - 1);

				if (n > 0)
					comm[n - 1] = 0;
				close(k);
			}
			EXPECT_EQ(0, strncmp(comm, st.comm, 16)) TH_LOG("comm '%.16s', want '%s'", st.comm, comm);
			EXPECT_NE(NULL, memchr(st.comm, 0, 16));
			EXPECT_EQ(dneed, st.device_bytes) TH_LOG("target %u", t);
			EXPECT_EQ(bneed, st.buddy_bytes) TH_LOG("target %u", t);
			EXPECT_EQ((size + 127) / 128, st.nr_entries);
			EXPECT_EQ(BUDDY_SRC_EXPLICIT, st.target_source);
			EXPECT_EQ(0, st.reserved);
			EXPECT_EQ(st.nr_entries, st.codes[BUDDY_CODE_ZERO]);
			for (k = 1; k < BUDDY_CODE_SLOTS; k++) {
				EXPECT_EQ(0, st.codes[k]) TH_LOG("code %d", k);
			}
			for (k = 0; k < 8; k++) {
				EXPECT_EQ(0, counters_u64(&st.counters)[k]) TH_LOG("%s", counter_name(k));
			}

			ASSERT_EQ(0, buddy_get_info(self->fd, &info));
			EXPECT_EQ(1, info.nr_allocs);
			EXPECT_EQ(dneed, info.device_used);
			EXPECT_EQ(bneed, info.buddy_used);
			EXPECT_EQ(size, info.logical_bytes);
			EXPECT_EQ(size * 1000 / dneed, info.ratio_milli);

			/* a second allocation adds up */
			a = alloc_req(4096, BUDDY_TARGET_1X, BUDDY_CODEC_BPC);
			cfd = must_alloc(_metadata, self->fd, &a);
			ASSERT_EQ(0, buddy_get_info(self->fd, &info));
			EXPECT_EQ(2, info.nr_allocs);
			EXPECT_EQ(dneed + 8192, info.device_used);
			EXPECT_EQ(bneed, info.buddy_used);
			EXPECT_EQ(size + 4096, info.logical_bytes);
			EXPECT_EQ((size + 4096) * 1000 / (dneed + 8192),
				  info.ratio_milli);
			close(cfd);
			close(afd);
			EXPECT_IDLE(self->fd);
		}
	}
}

struct thread_alloc {
	int devfd;
	int err;
	struct buddy_alloc a;
};

static void *alloc_in_thread(void *arg)
{
	struct thread_alloc *t = arg;

	t->err = ioctl(t->devfd, BUDDY_IOC_ALLOC, &t->a) ? errno : 0;
	return NULL;
}

/* The owner is the process (tgid), whichever thread allocates. */
TEST_F(api, alloc_owner_from_a_thread)
{
	struct thread_alloc t = { .devfd = -1 };
	struct buddy_alloc_stat st;
	pthread_t th;

	SETUP_DONE();
	t.devfd = self->fd;
	t.a = alloc_req(4096, BUDDY_TARGET_1X, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, alloc_in_thread, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.err) TH_LOG("ALLOC in a thread: %s", strerror(t.err));
	ASSERT_EQ(0, buddy_alloc_stat(t.a.fd, &st));
	EXPECT_EQ((uint32_t)getpid(), st.owner_pid);
	EXPECT_EQ(getuid(), st.owner_uid);
	close(t.a.fd);
}

TEST_F(api, alloc_ids_strictly_increase)
{
	uint64_t last = 0;
	int fds[6], i;

	SETUP_DONE();
	for (i = 0; i < 6; i++) {
		struct buddy_alloc a = alloc_req(128 * (i + 1), BUDDY_TARGET_2X, 0);

		fds[i] = must_alloc(_metadata, self->fd, &a);
		EXPECT_LT(last, a.id);
		last = a.id;
		if (i == 2) {	/* ids of freed allocations are never reused */
			close(fds[i]);
			close(fds[i - 1]);
			fds[i] = fds[i - 1] = -1;
		}
	}
	for (i = 0; i < 6; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	{
		struct buddy_alloc a = alloc_req(1, BUDDY_TARGET_1X, 0);
		int afd = must_alloc(_metadata, self->fd, &a);

		EXPECT_LT(last, a.id);
		close(afd);
	}
}

TEST_F(api, alloc_cloexec_flag)
{
	struct buddy_alloc a = alloc_req(256, BUDDY_TARGET_4X, 0);
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(afd, F_GETFD) & FD_CLOEXEC);
	close(afd);

	a = alloc_req(256, BUDDY_TARGET_4X, 0);
	a.flags = 0;
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	EXPECT_EQ(0, fcntl(afd, F_GETFD) & FD_CLOEXEC);
	close(afd);
}

TEST_F(api, alloc_default_codec_is_bpc)
{
	struct buddy_alloc a = alloc_req(1000, BUDDY_TARGET_2X, BUDDY_CODEC_DEFAULT);
	struct buddy_alloc_stat st;
	char v[64];
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	EXPECT_EQ(BUDDY_CODEC_BPC, a.codec);
	EXPECT_EQ(BUDDY_SRC_EXPLICIT, a.target_source);
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(BUDDY_CODEC_BPC, st.codec);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_codec", v, sizeof(v)));
	EXPECT_STREQ("bpc", v);
	close(afd);
}

TEST_F(api, alloc_auto_target_without_profile)
{
	struct buddy_alloc a = alloc_req(5000, BUDDY_TARGET_AUTO, BUDDY_CODEC_ZVC);
	struct buddy_alloc_stat st;
	unsigned int want;
	char v[64];
	int afd;

	SETUP_DONE();
	want = self->kp.auto_target >= 0 ? self->kp.auto_target : 128;
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	EXPECT_EQ(want, a.target);
	EXPECT_EQ(BUDDY_SRC_DEFAULT, a.target_source);
	EXPECT_EQ(BUDDY_CODEC_ZVC, a.codec);
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(want, st.target);
	EXPECT_EQ(BUDDY_SRC_DEFAULT, st.target_source);
	EXPECT_EQ(need_device(5000, want, self->info.chunk_bytes), st.device_bytes);
	EXPECT_EQ(need_buddy(5000, want, self->info.chunk_bytes), st.buddy_bytes);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_target", v, sizeof(v)));
	EXPECT_EQ(want, strtoul(v, NULL, 10));
	close(afd);
}

TEST_F(api, alloc_size_zero_einval)
{
	struct buddy_alloc a = alloc_req(0, BUDDY_TARGET_2X, 0);
	int afd;

	SETUP_DONE();
	alloc_fails(_metadata, self->fd, &a, EINVAL, "size 0");
	a = alloc_req(1, BUDDY_TARGET_2X, 0);	/* N+1 */
	afd = must_alloc(_metadata, self->fd, &a);
	if (afd >= 0) {
		struct buddy_alloc_stat st;

		ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
		EXPECT_EQ(1, st.nr_entries);
		EXPECT_EQ(1, st.size);
		EXPECT_EQ(4096, st.device_bytes);
		EXPECT_EQ(4096, st.buddy_bytes);
		close(afd);
	}
}

TEST_F(api, alloc_target_values)
{
	static const unsigned int bad[] = {
		1, 7, 9, 16, 31, 33, 63, 65, 95, 97, 127, 129, 256, 0x80000000u,
		0xffffffffu,
	};
	unsigned int i;

	SETUP_DONE();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct buddy_alloc a = alloc_req(4096, bad[i], 0);
		char what[32];

		snprintf(what, sizeof(what), "target %u", bad[i]);
		alloc_fails(_metadata, self->fd, &a, EINVAL, what);
	}
	for (i = 0; i < NR_TARGETS; i++) {
		struct buddy_alloc a = alloc_req(4096, all_targets[i], 0);
		int afd = must_alloc(_metadata, self->fd, &a);

		EXPECT_EQ(all_targets[i], a.target);
		if (afd >= 0)
			close(afd);
	}
}

TEST_F(api, alloc_codec_values)
{
	unsigned int bad[] = { BUDDY_CODEC_NR, BUDDY_CODEC_NR + 1, 15, 16,
			       0x80000000u, 0xffffffffu };
	struct buddy_alloc a;
	unsigned int i;
	int afd;

	SETUP_DONE();
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		char what[32];

		a = alloc_req(4096, BUDDY_TARGET_2X, bad[i]);
		snprintf(what, sizeof(what), "codec %u", bad[i]);
		alloc_fails(_metadata, self->fd, &a, EINVAL, what);
	}
	a = alloc_req(4096, BUDDY_TARGET_2X, BUDDY_CODEC_NR - 1);	/* N */
	afd = must_alloc(_metadata, self->fd, &a);
	EXPECT_EQ(BUDDY_CODEC_NR - 1, a.codec);
	if (afd >= 0)
		close(afd);
}

TEST_F(api, alloc_flags_and_reserved)
{
	struct buddy_alloc a;
	unsigned int bit;

	SETUP_DONE();
	for (bit = 1; bit < 32; bit++) {
		char what[32];

		a = alloc_req(4096, BUDDY_TARGET_2X, 0);
		a.flags = BUDDY_ALLOC_CLOEXEC | (1U << bit);
		snprintf(what, sizeof(what), "flag bit %u", bit);
		alloc_fails(_metadata, self->fd, &a, EINVAL, what);
	}
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.reserved = 1;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "reserved 1");
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.reserved = 0x80000000u;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "reserved bit 31");
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.fd = 3;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "fd 3 on input");
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.fd = -1;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "fd -1 on input");
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.id = 1;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "id on input");
	a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	a.target_source = BUDDY_SRC_PROFILE;
	alloc_fails(_metadata, self->fd, &a, EINVAL, "target_source on input");
}

static void label_case(struct __test_metadata *_metadata, int fd,
		       const char label[BUDDY_LABEL_LEN], bool ok,
		       const char *what)
{
	struct buddy_alloc a = alloc_req(300, BUDDY_TARGET_4X, 0);
	struct buddy_alloc_stat st;
	char v[64];
	int afd;

	memcpy(a.label, label, BUDDY_LABEL_LEN);
	if (!ok) {
		alloc_fails(_metadata, fd, &a, EINVAL, what);
		return;
	}
	afd = must_alloc(_metadata, fd, &a);
	if (afd < 0) {
		TH_LOG("label case: %s", what);
		return;
	}
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(0, memcmp(label, st.label, BUDDY_LABEL_LEN)) TH_LOG("%s", what);
	EXPECT_EQ(0, fdinfo_value(afd, "buddy_label", v, sizeof(v)));
	EXPECT_STREQ(label, v) TH_LOG("%s", what);
	close(afd);
}

TEST_F(api, alloc_label_rules)
{
	char l[BUDDY_LABEL_LEN];
	int c;

	SETUP_DONE();
	memset(l, 0, sizeof(l));
	label_case(_metadata, self->fd, l, true, "empty");
	memset(l, 'a', 31);	/* N: 31 bytes and the NUL */
	label_case(_metadata, self->fd, l, true, "31 bytes");
	memset(l, 'a', 32);	/* N+1: no NUL within 32 bytes */
	label_case(_metadata, self->fd, l, false, "32 bytes, no NUL");
	memset(l, 0, sizeof(l));
	strcpy(l, "with space ~!");
	label_case(_metadata, self->fd, l, true, "space and tilde");
	for (c = 1; c < 256; c++) {
		bool ok = c >= 0x20 && c <= 0x7e && c != '/';
		char what[48];

		if (ok && c != ' ' && c != '~' && c != '/' && c != 'a' &&
		    c != 'Z' && c != '0' && c != '.' && c != '\\')
			continue;	/* a sample of the good ones */
		memset(l, 0, sizeof(l));
		strcpy(l, "lab");
		l[1] = (char)c;
		snprintf(what, sizeof(what), "byte 0x%02x", c);
		label_case(_metadata, self->fd, l, ok, what);
	}
	memset(l, 0, sizeof(l));
	strcpy(l, "x");
	l[5] = 'y';
	label_case(_metadata, self->fd, l, false, "non-zero byte after the NUL");
	memset(l, 0, sizeof(l));
	l[31] = 1;
	label_case(_metadata, self->fd, l, false, "non-zero last byte after an empty label");
}

TEST_F(api, alloc_too_big_e2big)
{
	static const uint64_t sizes[] = {
		UINT64_MAX, UINT64_MAX - 127, 1ULL << 63, 1ULL << 50,
	};
	unsigned int i, t;

	SETUP_DONE();
	for (t = 0; t < NR_TARGETS; t++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			struct buddy_alloc a = alloc_req(sizes[i], all_targets[t], 0);
			char what[64];

			snprintf(what, sizeof(what), "size %#llx target %u",
				 (unsigned long long)sizes[i], all_targets[t]);
			alloc_fails(_metadata, self->fd, &a, E2BIG, what);
		}
	}
}

TEST_F(api, alloc_struct_size_extension)
{
	unsigned char buf[sizeof(struct buddy_alloc) + 64];
	struct buddy_alloc *a = (struct buddy_alloc *)buf;
	size_t i;

	SETUP_DONE();
	/* N-1: smaller than ABI v1's struct */
	memset(buf, 0, sizeof(buf));
	a->size = 1024;
	a->target = BUDDY_TARGET_2X;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, ALLOC_IOC_SIZED(sizeof(struct buddy_alloc) - 1), buf));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, ALLOC_IOC_SIZED(offsetof(struct buddy_alloc, target_source)), buf));
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, ALLOC_IOC_SIZED(0), buf));
	EXPECT_IDLE(self->fd);

	/* N+1 with a zero tail: accepted, only the v1 part written back */
	memset(buf, 0, sizeof(buf));
	a->size = 1024;
	a->target = BUDDY_TARGET_2X;
	a->flags = BUDDY_ALLOC_CLOEXEC;
	EXPECT_RET(0, ioctl(self->fd, ALLOC_IOC_SIZED(sizeof(buf)), buf));
	EXPECT_LE(0, a->fd);
	EXPECT_LT(0, a->id);
	EXPECT_EQ(BUDDY_CODEC_BPC, a->codec);
	EXPECT_EQ(BUDDY_SRC_EXPLICIT, a->target_source);
	for (i = sizeof(struct buddy_alloc); i < sizeof(buf); i++)
		if (buf[i])
			break;
	EXPECT_EQ(sizeof(buf), i) TH_LOG("tail byte %zu written", i);
	if (a->fd >= 0)
		close(a->fd);

	/* N+1 with a non-zero byte anywhere in the tail: E2BIG */
	for (i = sizeof(struct buddy_alloc); i < sizeof(buf); i += 21) {
		struct buddy_info before, after;

		memset(buf, 0, sizeof(buf));
		a->size = 1024;
		a->target = BUDDY_TARGET_2X;
		buf[i] = 1;
		ASSERT_EQ(0, buddy_get_info(self->fd, &before));
		EXPECT_ERRNO(E2BIG, ioctl(self->fd, ALLOC_IOC_SIZED(sizeof(buf)), buf));
		ASSERT_EQ(0, buddy_get_info(self->fd, &after));
		EXPECT_EQ(before.nr_allocs, after.nr_allocs);
	}
	memset(buf, 0, sizeof(buf));
	a->size = 1024;
	a->target = BUDDY_TARGET_2X;
	buf[sizeof(struct buddy_alloc)] = 0x80;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, ALLOC_IOC_SIZED(sizeof(struct buddy_alloc) + 1), buf));
	EXPECT_IDLE(self->fd);
}

TEST_F(api, alloc_efault)
{
	SETUP_DONE();
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, BUDDY_IOC_ALLOC, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, BUDDY_IOC_ALLOC, (void *)16));
	EXPECT_IDLE(self->fd);
}

TEST_F(api, alloc_fd_ioctls)
{
	struct buddy_alloc a = alloc_req(4096, BUDDY_TARGET_2X, 0), b;
	struct buddy_alloc_stat st;
	struct buddy_info info;
	int afd, bfd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	b = alloc_req(4096, BUDDY_TARGET_2X, 0);
	bfd = must_alloc(_metadata, self->fd, &b);
	ASSERT_LE(0, bfd);

	/* ALLOC and GET_INFO belong to /dev/buddy */
	{
		struct buddy_alloc c = alloc_req(4096, BUDDY_TARGET_2X, 0);

		EXPECT_ERRNO(ENOTTY, ioctl(afd, BUDDY_IOC_ALLOC, &c));
	}
	EXPECT_ERRNO(ENOTTY, ioctl(afd, BUDDY_IOC_GET_INFO, &info));
	EXPECT_ERRNO(ENOTTY, ioctl(afd, _IO(BUDDY_IOC_MAGIC, 0x7f)));

	/* ALLOC_STAT: id 0 or its own id */
	memset(&st, 0, sizeof(st));
	EXPECT_RET(0, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	EXPECT_EQ(a.id, st.id);
	memset(&st, 0, sizeof(st));
	st.id = a.id;
	EXPECT_RET(0, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	EXPECT_EQ(a.id, st.id);
	EXPECT_EQ(4096, st.size);
	memset(&st, 0, sizeof(st));
	st.id = b.id;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	st.id = b.id + 1000;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	st.id = UINT64_MAX;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	EXPECT_ERRNO(EFAULT, ioctl(afd, BUDDY_IOC_ALLOC_STAT, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(afd, BUDDY_IOC_ALLOC_STAT, (void *)8));
	close(bfd);
	close(afd);
}

TEST_F(api, alloc_fd_bounds_and_position)
{
	const uint64_t size = 1000;
	struct buddy_alloc a = alloc_req(size, BUDDY_TARGET_2X, 0);
	char buf[4096], zero[4096] = { 0 };
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	memset(buf, 'w', sizeof(buf));

	/* writes: ENOSPC at and past the end, short across it */
	EXPECT_ERRNO(ENOSPC, pwrite(afd, buf, 1, size));
	EXPECT_ERRNO(ENOSPC, pwrite(afd, buf, 1, size + 1));
	EXPECT_ERRNO(ENOSPC, pwrite(afd, buf, 100, 1ULL << 40));
	EXPECT_RET(1, pwrite(afd, buf, 2, size - 1));
	EXPECT_RET(24, pwrite(afd, buf, 4096, size - 24));
	EXPECT_RET(size, pwrite(afd, buf, 4096, 0));
	EXPECT_ERRNO(EINVAL, pwrite(afd, buf, 1, -1));

	/* reads: 0 at and past the end, short across it */
	EXPECT_RET(0, pread(afd, buf, 1, size));
	EXPECT_RET(0, pread(afd, buf, 10, size + 1));
	EXPECT_RET(0, pread(afd, buf, 10, 1ULL << 40));
	EXPECT_RET(1, pread(afd, buf, 2, size - 1));
	EXPECT_RET(size, pread(afd, buf, sizeof(buf), 0));
	EXPECT_ERRNO(EINVAL, pread(afd, buf, 1, -1));

	/* lseek */
	EXPECT_RET(0, lseek(afd, 0, SEEK_CUR));
	EXPECT_RET(size, lseek(afd, size, SEEK_SET));
	EXPECT_ERRNO(EINVAL, lseek(afd, size + 1, SEEK_SET));
	EXPECT_RET(size, lseek(afd, 0, SEEK_END));
	EXPECT_ERRNO(EINVAL, lseek(afd, 1, SEEK_END));
	EXPECT_RET(0, lseek(afd, -(off_t)size, SEEK_END));
	EXPECT_ERRNO(EINVAL, lseek(afd, -(off_t)size - 1, SEEK_END));
	EXPECT_ERRNO(EINVAL, lseek(afd, -1, SEEK_SET));
	EXPECT_RET(10, lseek(afd, 10, SEEK_SET));
	EXPECT_RET(15, lseek(afd, 5, SEEK_CUR));
	EXPECT_RET(5, lseek(afd, -10, SEEK_CUR));
	EXPECT_ERRNO(EINVAL, lseek(afd, -6, SEEK_CUR));
	EXPECT_ERRNO(EINVAL, lseek(afd, size - 4, SEEK_CUR));

	/* read()/write() move the position */
	EXPECT_RET(0, lseek(afd, 0, SEEK_SET));
	EXPECT_RET(500, write(afd, zero, 500));
	EXPECT_RET(500, lseek(afd, 0, SEEK_CUR));
	EXPECT_RET(size - 500, write(afd, zero, 4096));
	EXPECT_RET(size, lseek(afd, 0, SEEK_CUR));
	EXPECT_ERRNO(ENOSPC, write(afd, zero, 1));
	EXPECT_RET(0, read(afd, buf, 10));
	EXPECT_RET(998, lseek(afd, -2, SEEK_END));
	EXPECT_RET(2, read(afd, buf, 10));
	EXPECT_RET(size, lseek(afd, 0, SEEK_CUR));
	EXPECT_RET(0, lseek(afd, 0, SEEK_SET));
	memset(buf, 1, sizeof(buf));
	EXPECT_RET(size, read(afd, buf, sizeof(buf)));
	EXPECT_EQ(-1, first_diff(buf, zero, size));
	close(afd);
}

/* A bad buffer fails with EFAULT and leaves the stored bytes alone. */
TEST_F(api, alloc_fd_efault)
{
	struct buddy_alloc a = alloc_req(4096, BUDDY_TARGET_2X, 0);
	unsigned char buf[4096], got[4096];
	volatile uintptr_t bad_addr = 8;	/* unmapped, hidden from gcc */
	void *bad = (void *)bad_addr;
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	memset(buf, 0x3c, sizeof(buf));
	ASSERT_RET(sizeof(buf), pwrite(afd, buf, sizeof(buf), 0));
	EXPECT_ERRNO(EFAULT, pwrite(afd, bad, 128, 0));
	EXPECT_ERRNO(EFAULT, pwrite(afd, bad, 100, 1000));
	EXPECT_ERRNO(EFAULT, pread(afd, bad, 128, 0));
	EXPECT_ERRNO(EFAULT, pread(afd, bad, 10, 130));
	memset(got, 0, sizeof(got));
	EXPECT_RET(sizeof(got), pread(afd, got, sizeof(got), 0));
	EXPECT_EQ(-1, first_diff(buf, got, sizeof(buf)));
	close(afd);
}

/* MAP_SHARED maps an allocation; MAP_PRIVATE and /dev/buddy do not map */
TEST_F(api, alloc_fd_mmap_shared_only)
{
	struct buddy_alloc a = alloc_req(8192, BUDDY_TARGET_2X, 0);
	uint8_t *p;
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	p[1] = 0x42;
	EXPECT_EQ(0, msync(p, 4096, MS_SYNC));
	munmap(p, 4096);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, afd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno) TH_LOG("mmap private: %s", strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, 4096);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(ENODEV, errno) TH_LOG("mmap /dev/buddy: %s", strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(afd);
}

TEST_F(api, alloc_fdinfo)
{
	struct buddy_alloc a = alloc_req(12345, BUDDY_TARGET_4_3X, BUDDY_CODEC_FPC);
	char v[64], want[64];
	int afd;

	SETUP_DONE();
	strcpy(a.label, "fdinfo test");
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_id", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)a.id);
	EXPECT_STREQ(want, v);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_size", v, sizeof(v)));
	EXPECT_STREQ("12345", v);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_target", v, sizeof(v)));
	EXPECT_STREQ("96", v);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_codec", v, sizeof(v)));
	EXPECT_STREQ("fpc", v);
	ASSERT_EQ(0, fdinfo_value(afd, "buddy_label", v, sizeof(v)));
	EXPECT_STREQ("fdinfo test", v);
	close(afd);
}

TEST_F(api, last_close_frees)
{
	struct buddy_alloc a = alloc_req(100000, BUDDY_TARGET_4X, 0);
	struct buddy_info info;
	int afd, dfd, pipefd[2], st;
	char c;
	pid_t pid;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	a.flags = 0;	/* inherited by the child */
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	dfd = dup(afd);
	ASSERT_LE(0, dfd);
	close(afd);
	ASSERT_EQ(0, buddy_get_info(self->fd, &info));
	EXPECT_EQ(1, info.nr_allocs) TH_LOG("freed while a dup was open");
	EXPECT_EQ(100000, info.logical_bytes);

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char b[16];

		close(pipefd[1]);
		/* hold the allocation until the parent has closed its fd */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(2);
		_exit(pread(dfd, b, sizeof(b), 0) == sizeof(b) ? 0 : 3);
	}
	close(pipefd[0]);
	close(dfd);
	ASSERT_EQ(0, buddy_get_info(self->fd, &info));
	EXPECT_EQ(1, info.nr_allocs) TH_LOG("freed while a child held it");
	EXPECT_EQ(1, write(pipefd[1], "x", 1));
	close(pipefd[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_IDLE(self->fd);
}

TEST_F(api, get_map_arguments)
{
	const uint64_t nr = 37;
	struct buddy_alloc a = alloc_req(nr * 128 - 5, BUDDY_TARGET_2X, 0);
	unsigned char codes[64];
	struct buddy_map m;
	uint64_t count;
	int afd;

	SETUP_DONE();
	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);

	for (count = 0; count <= nr; count++) {	/* first + count == nr: N */
		size_t i;

		memset(codes, 0xcc, sizeof(codes));
		memset(&m, 0, sizeof(m));
		m.first = nr - count;
		m.count = count;
		m.codes_ptr = (uintptr_t)codes;
		EXPECT_RET(0, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
		for (i = 0; i < count / 2; i++) {
			EXPECT_EQ(0, codes[i]) TH_LOG("count %llu byte %zu", (unsigned long long)count, i);
		}
		if (count & 1)
			EXPECT_EQ(0, codes[count / 2] & 0xf);
		for (i = (count + 1) / 2; i < sizeof(codes); i++)
			if (codes[i] != 0xcc)
				break;
		EXPECT_EQ(sizeof(codes), i) TH_LOG("count %llu: wrote byte %zu", (unsigned long long)count, i);
	}
	memset(&m, 0, sizeof(m));
	m.codes_ptr = (uintptr_t)codes;
	m.first = 0;
	m.count = nr + 1;	/* N+1 */
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.first = 1;
	m.count = nr;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.first = nr + 1;
	m.count = 0;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.first = UINT64_MAX;
	m.count = 2;	/* first + count wraps */
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.first = 2;
	m.count = UINT64_MAX;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.first = 0;
	m.count = 0;
	m.codes_ptr = 0;	/* nothing to write */
	EXPECT_RET(0, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.count = 4;
	m.codes_ptr = 8;
	EXPECT_ERRNO(EFAULT, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.codes_ptr = 0;
	EXPECT_ERRNO(EFAULT, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	EXPECT_ERRNO(EFAULT, ioctl(afd, BUDDY_IOC_GET_MAP, NULL));
	m.codes_ptr = (uintptr_t)codes;
	m.id = a.id;
	EXPECT_RET(0, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	m.id = a.id + 1;
	EXPECT_ERRNO(EINVAL, ioctl(afd, BUDDY_IOC_GET_MAP, &m));
	close(afd);
}

TEST_F(api, sysfs_stats)
{
	struct buddy_alloc a = alloc_req(70000, BUDDY_TARGET_2X, BUDDY_CODEC_BPC);
	uint64_t mm[16], io0[16], io1[16], cs[16], np[BUDDY_MAX_NODES + 1];
	unsigned char data[70000];
	struct buddy_alloc_stat st;
	struct buddy_info info;
	char line[256];
	int afd, n, k;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	ASSERT_LE(0, sysfs_line("codecs", line, sizeof(line))) TH_LOG("no %s/codecs", BUDDY_SYSFS_DIR);
	EXPECT_STREQ("[bpc] zvc bdi fpc none", line);

	n = sysfs_u64s("mm_stat", mm, 16);
	ASSERT_EQ(7, n);
	EXPECT_EQ(self->info.device_bytes, mm[0]);
	EXPECT_EQ(0, mm[1]);
	EXPECT_EQ(self->info.buddy_bytes, mm[2]);
	EXPECT_EQ(0, mm[3]);
	EXPECT_EQ(0, mm[4]);
	EXPECT_EQ(0, mm[5]);
	EXPECT_EQ(0, mm[6]);
	n = sysfs_u64s("code_stat", cs, 16);
	ASSERT_EQ(6, n);
	for (k = 0; k < 6; k++)
		EXPECT_EQ(0, cs[k]);
	ASSERT_EQ(8, sysfs_u64s("io_stat", io0, 16));

	n = sysfs_u64s("device_node_pages", np, BUDDY_MAX_NODES + 1);
	ASSERT_EQ((int)self->info.nr_nodes, n);
	for (k = 0; k < n; k++) {
		EXPECT_EQ(self->info.device_node_pages[k], np[k]) TH_LOG("node %d", k);
	}
	n = sysfs_u64s("buddy_node_pages", np, BUDDY_MAX_NODES + 1);
	ASSERT_EQ((int)self->info.nr_nodes, n);
	for (k = 0; k < n; k++) {
		EXPECT_EQ(self->info.buddy_node_pages[k], np[k]) TH_LOG("node %d", k);
	}

	afd = must_alloc(_metadata, self->fd, &a);
	ASSERT_LE(0, afd);
	fill_class(DATAGEN_MIXED, 7, data, sizeof(data));
	memset(data, 0, 20000);
	EXPECT_RET(sizeof(data), pwrite(afd, data, sizeof(data), 0));
	EXPECT_RET(1000, pwrite(afd, data + 5, 1000, 60));	/* partial entries */
	EXPECT_RET(30000, pread(afd, data, 30000, 333));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	ASSERT_EQ(0, buddy_get_info(self->fd, &info));

	ASSERT_EQ(7, sysfs_u64s("mm_stat", mm, 16));
	EXPECT_EQ(info.device_bytes, mm[0]);
	EXPECT_EQ(info.device_used, mm[1]);
	EXPECT_EQ(info.buddy_bytes, mm[2]);
	EXPECT_EQ(info.buddy_used, mm[3]);
	EXPECT_EQ(info.logical_bytes, mm[4]);
	EXPECT_EQ(info.nr_allocs, mm[5]);
	EXPECT_EQ(info.ratio_milli, mm[6]);
	EXPECT_EQ(st.device_bytes, mm[1]);
	EXPECT_EQ(70000, mm[4]);
	ASSERT_EQ(6, sysfs_u64s("code_stat", cs, 16));
	for (k = 0; k < 6; k++) {
		EXPECT_EQ(st.codes[k], cs[k]) TH_LOG("code %d", k);
	}
	close(afd);

	/* io_stat keeps what freed allocations did */
	ASSERT_EQ(8, sysfs_u64s("io_stat", io1, 16));
	for (k = 0; k < 8; k++) {
		EXPECT_EQ(counters_u64(&st.counters)[k], io1[k] - io0[k]) TH_LOG("io_stat %s", counter_name(k));
	}
	ASSERT_EQ(6, sysfs_u64s("code_stat", cs, 16));
	for (k = 0; k < 6; k++) {
		EXPECT_EQ(0, cs[k]) TH_LOG("code %d after free", k);
	}
	ASSERT_EQ(7, sysfs_u64s("mm_stat", mm, 16));
	EXPECT_EQ(0, mm[1]);
	EXPECT_EQ(0, mm[3]);
	EXPECT_EQ(0, mm[5]);
}

TEST_F(api, libbuddy_helpers)
{
	static const struct { const char *s; int ok; unsigned int t; } tp[] = {
		{ "1", 1, 128 }, { "1x", 1, 128 }, { "4/3", 1, 96 },
		{ "4/3x", 1, 96 }, { "1.33", 1, 96 }, { "2", 1, 64 },
		{ "2x", 1, 64 }, { "4", 1, 32 }, { "16", 1, 8 },
		{ "16x", 1, 8 }, { "auto", 1, 0 }, { "128B", 1, 128 },
		{ "96B", 1, 96 }, { "8B", 1, 8 }, { "0B", 1, 0 },
		{ "3", 0, 0 }, { "7B", 0, 0 }, { "", 0, 0 }, { "x", 0, 0 },
		{ "B", 0, 0 }, { "2xx", 0, 0 }, { "-8B", 0, 0 },
	};
	uint64_t id = 0;
	unsigned int i, t;
	int afd;

	SETUP_DONE();
	for (i = 0; i < ARRAY_SIZE(tp); i++) {
		t = 0xdead;
		EXPECT_EQ(tp[i].ok ? 0 : -EINVAL, buddy_target_parse(tp[i].s, &t)) TH_LOG("'%s'", tp[i].s);
		if (tp[i].ok)
			EXPECT_EQ(tp[i].t, t) TH_LOG("'%s'", tp[i].s);
	}
	EXPECT_STREQ("4/3x", buddy_target_name(96));
	EXPECT_STREQ("16x", buddy_target_name(8));
	EXPECT_STREQ("auto", buddy_target_name(0));
	EXPECT_STREQ("?", buddy_target_name(9));
	EXPECT_STREQ("zvc", buddy_codec_name(BUDDY_CODEC_ZVC));
	EXPECT_EQ(BUDDY_CODEC_NONE, buddy_codec_parse("none"));
	EXPECT_EQ(-EINVAL, buddy_codec_parse("lz4"));

	EXPECT_EQ(-E2BIG, buddy_alloc_simple(self->fd, UINT64_MAX, 64, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, buddy_alloc_simple(self->fd, 0, 64, 0, NULL, NULL));
	afd = buddy_alloc_simple(self->fd, 1000, 64, 0, "lib", &id);
	ASSERT_LE(0, afd);
	EXPECT_LT(0, id);
	{
		unsigned char b[2000], c[2000];
		uint8_t codes[8];

		memset(b, 7, sizeof(b));
		EXPECT_EQ(1000, buddy_pwrite(afd, b, sizeof(b), 0));
		EXPECT_EQ(-ENOSPC, buddy_pwrite(afd, b, 1, 1000));
		EXPECT_EQ(990, buddy_pread(afd, c, sizeof(c), 10));
		EXPECT_EQ(0, buddy_pread(afd, c, 1, 1000));
		EXPECT_EQ(0, buddy_get_map(afd, 0, 8, codes));
		EXPECT_EQ(entry_code(BUDDY_CODEC_BPC, b), codes[0]);
		EXPECT_EQ(-EINVAL, buddy_get_map(afd, 0, 9, codes));
	}
	close(afd);
	EXPECT_NE(NULL, strstr(buddy_strerror(-ENOENT, BUDDY_OP_OPEN), "not loaded"));
	EXPECT_NE(NULL, strstr(buddy_strerror(-EDQUOT, BUDDY_OP_ALLOC), "user_limit_mb"));
}

TEST_HARNESS_MAIN
