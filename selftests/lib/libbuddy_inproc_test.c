// SPDX-License-Identifier: GPL-2.0
/*
 * libbuddy_inproc_test - libbuddy against the in-process device, natively
 * (make check-inproc): every call of libbuddy.h, the module's errno for
 * every bad input the uapi documents, the counters and histograms checked
 * against the size-code map, re-targets with and without room, the profile
 * table and AUTO, descriptors closed behind libbuddy's back, and the
 * buddy_aio_* calls on in-process descriptors.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "core/chunk.h"
#include "tools/common/datagen.h"
#include "lib/libbuddy.h"

#define MIB (1024 * 1024)

/* What the map says the counters of one full write pass must be. */
static void expect_from_map(const uint8_t *codes, uint64_t n,
			    unsigned int target, struct buddy_counters *c)
{
	uint64_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		unsigned int stored = buddy_stored_bytes(target, codes[i]);
		unsigned int dev = stored < target ? stored : target;

		c->entry_writes++;
		c->device_sectors_written += DIV_ROUND_UP(dev, 32);
		c->buddy_sectors_written += DIV_ROUND_UP(stored - dev, 32);
		c->buddy_accesses += stored > dev;
		c->overflows += stored > target;
	}
}

FIXTURE(dev) {
	int devfd;
};

FIXTURE_SETUP(dev)
{
	self->devfd = buddy_open_inproc("device_mb=64,max_ratio=4,chunk_kb=256");
	ASSERT_LE(0, self->devfd) TH_LOG("open: %s", strerror(-self->devfd));
}

FIXTURE_TEARDOWN(dev)
{
	buddy_close(self->devfd);
}

FIXTURE_VARIANT(dev) {
	unsigned int target;
	unsigned int codec;
};

#define V(t, tn, c, cn) \
	FIXTURE_VARIANT_ADD(dev, tn##_##cn) { .target = t, .codec = c }
V(BUDDY_TARGET_1X, x1, BUDDY_CODEC_BPC, bpc);
V(BUDDY_TARGET_4_3X, x4_3, BUDDY_CODEC_BPC, bpc);
V(BUDDY_TARGET_2X, x2, BUDDY_CODEC_BPC, bpc);
V(BUDDY_TARGET_4X, x4, BUDDY_CODEC_BPC, bpc);
V(BUDDY_TARGET_16X, x16, BUDDY_CODEC_BPC, bpc);
V(BUDDY_TARGET_2X, x2, BUDDY_CODEC_ZVC, zvc);
V(BUDDY_TARGET_4X, x4, BUDDY_CODEC_BDI, bdi);
V(BUDDY_TARGET_4_3X, x4_3, BUDDY_CODEC_FPC, fpc);
V(BUDDY_TARGET_16X, x16, BUDDY_CODEC_NONE, none);

/* Every byte back, the histogram summing up, counters matching the map. */
TEST_F(dev, roundtrip_counters)
{
	uint64_t size = 3 * 256 * 1024 + 1000, n = DIV_ROUND_UP(size, 128), i;
	uint8_t *buf = malloc(size), *back = malloc(size), *codes = malloc(n);
	struct buddy_alloc_stat st;
	struct buddy_counters want;
	struct buddy_info info;
	uint64_t id, sum = 0, hist[BUDDY_CODE_NR] = { 0 };
	int afd;

	ASSERT_TRUE(buf && back && codes);
	datagen_fill(DATAGEN_MIXED, 7, buf, size);
	afd = buddy_alloc_simple(self->devfd, size, variant->target,
				 variant->codec, "rt", &id);
	ASSERT_LE(0, afd);
	ASSERT_EQ((ssize_t)size, buddy_pwrite(afd, buf, size, 0));
	memset(back, 0xcc, size);
	ASSERT_EQ((ssize_t)size, buddy_pread(afd, back, size, 0));
	ASSERT_EQ(0, memcmp(buf, back, size));
	/* reads past the end are short, writes there ENOSPC */
	ASSERT_EQ(1000, buddy_pread(afd, back, 5000, size - 1000));
	ASSERT_EQ(0, buddy_pread(afd, back, 10, size));
	ASSERT_EQ(-ENOSPC, buddy_pwrite(afd, buf, 10, size));

	memset(&st, 0xcc, sizeof(st));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	ASSERT_EQ(id, st.id);
	ASSERT_EQ(n, st.nr_entries);
	ASSERT_EQ(variant->target, st.target);
	ASSERT_EQ(variant->codec, st.codec);
	ASSERT_EQ(0, st.reserved);
	ASSERT_EQ(0, buddy_get_map(afd, 0, n, codes));
	for (i = 0; i < n; i++) {
		ASSERT_LT(codes[i], BUDDY_CODE_NR);
		hist[codes[i]]++;
	}
	for (i = 0; i < BUDDY_CODE_NR; i++) {
		EXPECT_EQ(hist[i], st.codes[i]);
		sum += st.codes[i];
	}
	EXPECT_EQ(n, sum);
	/* one full write pass from zero: what the map implies */
	expect_from_map(codes, n, variant->target, &want);
	EXPECT_EQ(want.entry_writes, st.counters.entry_writes);
	EXPECT_EQ(want.device_sectors_written,
		  st.counters.device_sectors_written);
	EXPECT_EQ(want.buddy_sectors_written,
		  st.counters.buddy_sectors_written);
	EXPECT_EQ(want.overflows, st.counters.overflows);
	/*
	 * reads: the full pass, the 8 entries of the tail read, and the
	 * partial last entry the write read, modified and wrote
	 */
	EXPECT_EQ(n + 8 + 1, st.counters.entry_reads);

	/* the device: pools as the layout rule says, one allocation */
	ASSERT_EQ(0, buddy_get_info(self->devfd, &info));
	EXPECT_EQ(1, info.nr_allocs);
	EXPECT_EQ(st.device_bytes, info.device_used);
	EXPECT_EQ(st.buddy_bytes, info.buddy_used);
	{
		struct buddy_layout l;

		buddy_layout_init(&l, n, 256 * 1024 / 128, variant->target);
		EXPECT_EQ(l.dev_bytes, st.device_bytes);
		EXPECT_EQ(l.bud_bytes, st.buddy_bytes);
	}
	close(afd);	/* freed at the next look at the device */
	ASSERT_EQ(0, buddy_get_info(self->devfd, &info));
	EXPECT_EQ(0, info.nr_allocs);
	EXPECT_EQ(0, info.device_used);
	EXPECT_EQ(0, info.buddy_used);
	free(buf);
	free(back);
	free(codes);
}

/* Unaligned, partial-entry writes merge with what is stored. */
TEST_F(dev, partial_entries)
{
	uint8_t buf[1000], model[4096] = { 0 }, back[4096];
	unsigned int k;
	int afd = buddy_alloc_simple(self->devfd, sizeof(model),
				     variant->target, variant->codec, NULL,
				     NULL);

	ASSERT_LE(0, afd);
	for (k = 0; k < 20; k++) {
		unsigned int off = (k * 389) % 3000, len = 1 + (k * 131) % 999;

		datagen_fill(k & 1 ? DATAGEN_RANDOM : DATAGEN_RAMP, k, buf,
			     len);
		ASSERT_EQ((ssize_t)len, buddy_pwrite(afd, buf, len, off));
		memcpy(model + off, buf, len);
	}
	ASSERT_EQ((ssize_t)sizeof(back),
		  buddy_pread(afd, back, sizeof(back), 0));
	ASSERT_EQ(0, memcmp(model, back, sizeof(back)));
	buddy_close(afd);
}

/* Re-target to every other target and back: data kept, bytes moved. */
TEST_F(dev, retarget)
{
	static const unsigned int targets[] = {
		BUDDY_TARGET_1X, BUDDY_TARGET_4_3X, BUDDY_TARGET_2X,
		BUDDY_TARGET_4X, BUDDY_TARGET_16X,
	};
	uint64_t size = 600 * 1024, id;
	uint8_t *buf = malloc(size), *back = malloc(size);
	struct buddy_alloc_stat st;
	struct buddy_info info;
	unsigned int k;
	int afd;

	ASSERT_TRUE(buf && back);
	datagen_fill(DATAGEN_FLOAT32, 3, buf, size);
	afd = buddy_alloc_simple(self->devfd, size, variant->target,
				 variant->codec, "rt", &id);
	ASSERT_LE(0, afd);
	ASSERT_EQ((ssize_t)size, buddy_pwrite(afd, buf, size, 0));
	for (k = 0; k < ARRAY_SIZE(targets); k++) {
		struct buddy_layout l;

		ASSERT_EQ(0, buddy_set_target(self->devfd, id, targets[k],
					      BUDDY_CODEC_ZVC));
		ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
		EXPECT_EQ(targets[k], st.target);
		EXPECT_EQ(BUDDY_CODEC_ZVC, st.codec);
		EXPECT_EQ(BUDDY_SRC_EXPLICIT, st.target_source);
		buddy_layout_init(&l, st.nr_entries, 2048, targets[k]);
		EXPECT_EQ(l.dev_bytes, st.device_bytes);
		ASSERT_EQ(0, buddy_get_info(self->devfd, &info));
		EXPECT_EQ(st.device_bytes, info.device_used);
		EXPECT_EQ(st.buddy_bytes, info.buddy_used);
		memset(back, 0, size);
		ASSERT_EQ((ssize_t)size, buddy_pread(afd, back, size, 0));
		ASSERT_EQ(0, memcmp(buf, back, size));
	}
	/* a no-op re-target is 0 and changes nothing */
	ASSERT_EQ(0, buddy_set_target(self->devfd, id, BUDDY_TARGET_16X, 0));
	buddy_close(afd);
	free(buf);
	free(back);
}

/* Re-target without room: -ENOSPC, allocation exactly as it was. */
TEST(retarget_enospc)
{
	int devfd = buddy_open_inproc("device_mb=4,max_ratio=2,chunk_kb=64");
	uint64_t size = 2 * MIB, id, i;
	uint8_t *buf = malloc(size), *back = malloc(size);
	struct buddy_alloc_stat before, after;
	struct buddy_info info;
	int afd, bfd;

	ASSERT_LE(0, devfd);
	datagen_fill(DATAGEN_RELU50, 1, buf, size);
	afd = buddy_alloc_simple(devfd, size, BUDDY_TARGET_2X,
				 BUDDY_CODEC_BPC, "a", &id);
	ASSERT_LE(0, afd);
	ASSERT_EQ((ssize_t)size, buddy_pwrite(afd, buf, size, 0));
	/* fill the device pool so that the 1x extents cannot fit */
	bfd = buddy_alloc_simple(devfd, MIB, BUDDY_TARGET_1X, 0, "b", NULL);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, buddy_alloc_stat(afd, &before));
	ASSERT_EQ(-ENOSPC, buddy_set_target(devfd, id, BUDDY_TARGET_1X, 0));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &after));
	EXPECT_EQ(before.target, after.target);
	EXPECT_EQ(before.device_bytes, after.device_bytes);
	for (i = 0; i < BUDDY_CODE_NR; i++)
		EXPECT_EQ(before.codes[i], after.codes[i]);
	ASSERT_EQ((ssize_t)size, buddy_pread(afd, back, size, 0));
	ASSERT_EQ(0, memcmp(buf, back, size));
	ASSERT_EQ(0, buddy_get_info(devfd, &info));
	{
		struct buddy_layout l;

		buddy_layout_init(&l, MIB / 128, 64 * 1024 / 128,
				  BUDDY_TARGET_1X);
		EXPECT_EQ(before.device_bytes + l.dev_bytes, info.device_used);
	}
	buddy_close(bfd);
	buddy_close(afd);
	buddy_close(devfd);
	free(buf);
	free(back);
}

/* The options: the module's load-time checks. */
TEST(open_options)
{
	static const char *const bad[] = {
		"device_mb=0", "max_ratio=0", "max_ratio=17", "chunk_kb=6",
		"chunk_kb=0", "auto_target=100", "bogus=1", "device_mb",
		"device_mb=x", "device_mb=-1", "device_mb=1048577",
		"link_gbps=0", "link_gbps=1000001", "device_gbps=0",
		"device_gbps=1000001",
	};
	struct buddy_info info;
	unsigned int k;
	int fd, fd2;

	for (k = 0; k < ARRAY_SIZE(bad); k++)
		EXPECT_EQ(-EINVAL, buddy_open_inproc(bad[k])) TH_LOG("%s", bad[k]);
	fd = buddy_open("inproc:device_mb=8,max_ratio=3,chunk_kb=4");
	ASSERT_LE(0, fd);
	ASSERT_TRUE(buddy_is_inproc(fd));
	ASSERT_EQ(0, buddy_get_info(fd, &info));
	EXPECT_EQ(BUDDY_ABI_VERSION, info.abi_version);
	EXPECT_EQ(3, info.max_ratio);
	EXPECT_EQ(8 * MIB, info.device_bytes);
	EXPECT_EQ(16 * MIB, info.buddy_bytes);
	EXPECT_EQ(4096, info.chunk_bytes);
	EXPECT_EQ(0x3e, info.codecs);
	EXPECT_TRUE(info.features & BUDDY_FEAT_AUTO);
	/* the same options name the same device while it is open */
	fd2 = buddy_open("inproc:device_mb=8,max_ratio=3,chunk_kb=4");
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EBUSY, buddy_open("inproc:device_mb=9"));
	ASSERT_LE(0, buddy_alloc_simple(fd, 4096, 64, 0, NULL, NULL));
	ASSERT_EQ(0, buddy_get_info(fd2, &info));
	EXPECT_EQ(1, info.nr_allocs);
	buddy_close(fd);
	buddy_close(fd2);
	EXPECT_FALSE(buddy_is_inproc(-1));
}

/*
 * The link model (core/link_model.h) with the parameters the device was opened
 * with, per call: link_ns is the sum of each call's rounded-down ps / 1000,
 * written out here independently: latency once per link request (a 4 KiB
 * stripe whose accesses touched a buddy sector).  No mmap: the window
 * counters stay 0.
 */
static uint64_t link_ps(const struct buddy_counters *c, uint64_t req,
			uint64_t gbps, uint64_t lat, uint64_t dev_gbps)
{
	uint64_t bud = c->buddy_sectors_read + c->buddy_sectors_written;
	uint64_t dev = c->device_sectors_read + c->device_sectors_written;

	return bud * 32000 / gbps + req * lat * 1000 + dev * 32000 / dev_gbps;
}

TEST(link_model)
{
	size_t size = 64 * 1024;
	uint8_t *buf = malloc(size);
	struct buddy_alloc_stat s1, s2;
	struct buddy_counters d;
	struct buddy_info info;
	uint64_t *a, *b, *o, want;
	unsigned int k;
	int fd, afd;

	ASSERT_TRUE(buf != NULL);
	fd = buddy_open_inproc("device_mb=8,max_ratio=4,link_gbps=7,link_latency_ns=3,device_gbps=11");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, buddy_get_info(fd, &info));
	EXPECT_TRUE(info.features & BUDDY_FEAT_LINK_MODEL);
	EXPECT_TRUE(info.features & BUDDY_FEAT_LINK_REQUESTS);
	EXPECT_FALSE(info.features & BUDDY_FEAT_MMAP);
	/* random data at 4x spills into buddy memory: all three terms count */
	afd = buddy_alloc_simple(fd, size, BUDDY_TARGET_4X, BUDDY_CODEC_BPC,
				 "link", NULL);
	ASSERT_LE(0, afd);
	datagen_fill(DATAGEN_RANDOM, 3, buf, size);
	ASSERT_EQ((ssize_t)size, buddy_pwrite(afd, buf, size, 0));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s1));
	EXPECT_LT(0, s1.counters.buddy_accesses);
	/* every 4 KiB stripe spills: one request each, not one per entry */
	EXPECT_EQ(size / 4096, s1.link_requests);
	EXPECT_LT(s1.link_requests, s1.counters.buddy_accesses);
	want = link_ps(&s1.counters, size / 4096, 7, 3, 11);
	EXPECT_EQ(want / 1000, s1.link_ns);
	/* a second call across two stripes: two requests, its own ps */
	ASSERT_EQ(1000, buddy_pread(afd, buf, 1000, 3500));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &s2));
	a = (uint64_t *)&s1.counters;
	b = (uint64_t *)&s2.counters;
	o = (uint64_t *)&d;
	for (k = 0; k < sizeof(d) / 8; k++)
		o[k] = b[k] - a[k];
	EXPECT_LT(0, d.entry_reads);
	EXPECT_EQ(s1.link_requests + 2, s2.link_requests);
	want += link_ps(&d, 2, 7, 3, 11);
	EXPECT_EQ(want / 1000, s2.link_ns);
	EXPECT_EQ(0, s2.window_faults + s2.window_hits + s2.window_writebacks +
		     s2.window_evictions + s2.window_resident);
	buddy_close(afd);
	buddy_close(fd);
	free(buf);
}

/* The module's errno for every bad input (Documentation/userspace-api.rst). */
TEST_F(dev, errnos)
{
	struct buddy_alloc req;
	struct buddy_alloc_stat st;
	struct buddy_map map;
	struct buddy_list l;
	char big[sizeof(struct buddy_alloc) + 8];
	uint8_t codes[8];
	uint64_t id;
	int afd;

#define ALLOC_ERR(err, field, val) do {					\
		memset(&req, 0, sizeof(req));				\
		req.size = 4096;					\
		req.target = BUDDY_TARGET_2X;				\
		req.field = val;					\
		EXPECT_EQ(err, buddy_alloc(self->devfd, &req)) TH_LOG(#field); \
	} while (0)
	ALLOC_ERR(-EINVAL, size, 0);
	ALLOC_ERR(-EINVAL, target, 100);
	ALLOC_ERR(-EINVAL, target, 129);
	ALLOC_ERR(-EINVAL, codec, BUDDY_CODEC_NR);
	ALLOC_ERR(-EINVAL, flags, 2);
	ALLOC_ERR(-EINVAL, reserved, 1);
	ALLOC_ERR(-EINVAL, fd, 3);
	ALLOC_ERR(-EINVAL, id, 1);
	ALLOC_ERR(-EINVAL, target_source, 1);
	ALLOC_ERR(-EINVAL, label[0], '/');
	ALLOC_ERR(-EINVAL, label[0], '\n');
	ALLOC_ERR(-EINVAL, label[31], 'x');
	ALLOC_ERR(-E2BIG, size, (1ULL << 50) + 1);
	ALLOC_ERR(-E2BIG, size, 129 * MIB * 1ULL);	/* 2x: > device pool */
	ASSERT_EQ(-EINVAL, buddy_alloc_simple(self->devfd, 1, 64, 0,
		"a label that is far too long for the field", NULL));

	/* a label in the middle, then a non-zero byte after its NUL */
	memset(&req, 0, sizeof(req));
	req.size = 128;
	req.target = 64;
	strcpy(req.label, "ab");
	req.label[5] = 'c';
	EXPECT_EQ(-EINVAL, buddy_alloc(self->devfd, &req));

	/* ENOSPC: 40 MiB twice at 1x in a 64 MiB pool */
	afd = buddy_alloc_simple(self->devfd, 40 * MIB, BUDDY_TARGET_1X,
				 variant->codec, NULL, &id);
	ASSERT_LE(0, afd);
	EXPECT_EQ(-ENOSPC, buddy_alloc_simple(self->devfd, 40 * MIB,
			BUDDY_TARGET_1X, variant->codec, NULL, NULL));
	/* old and new extents at once: 40 + 30 MiB of a 64 MiB pool */
	EXPECT_EQ(-ENOSPC, buddy_set_target(self->devfd, id,
			BUDDY_TARGET_4_3X, BUDDY_CODEC_DEFAULT));

	/* I/O */
	EXPECT_EQ(-EINVAL, buddy_pread(afd, codes, 1, 1ULL << 63));
	EXPECT_EQ(-EINVAL, buddy_pwrite(afd, codes, 8, INT64_MAX - 2));
	EXPECT_EQ(0, buddy_pwrite(afd, codes, 0, 40 * MIB));
	EXPECT_EQ(-ENOSPC, buddy_pwrite(afd, codes, 1, 40 * MIB));
	EXPECT_EQ(-EINVAL, buddy_pread(self->devfd, codes, 1, 0));
	EXPECT_EQ(-EINVAL, buddy_pwrite(self->devfd, codes, 1, 0));

	/* stat, map and list */
	memset(&st, 0, sizeof(st));
	st.id = id + 1;
	EXPECT_EQ(-EINVAL, buddy_ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st));
	EXPECT_EQ(-ENOENT, buddy_stat_id(self->devfd, id + 100, &st));
	EXPECT_EQ(0, buddy_stat_id(self->devfd, id, &st));
	EXPECT_EQ(id, st.id);
	EXPECT_EQ(-EINVAL, buddy_get_map(afd, 40 * MIB / 128 - 1, 2, codes));
	EXPECT_EQ(0, buddy_get_map(afd, 40 * MIB / 128 - 1, 1, codes));
	memset(&map, 0, sizeof(map));
	map.first = UINT64_MAX;
	map.count = 2;
	map.codes_ptr = (uintptr_t)codes;
	EXPECT_EQ(-EINVAL, buddy_ioctl(afd, BUDDY_IOC_GET_MAP, &map));
	map.first = 0;
	map.codes_ptr = 0;
	EXPECT_EQ(-EFAULT, buddy_ioctl(afd, BUDDY_IOC_GET_MAP, &map));
	EXPECT_EQ(-ENOENT, buddy_get_map_id(self->devfd, id + 7, 0, 1, codes));
	memset(&l, 0, sizeof(l));
	/* ABI version 1's stat ends at @counters; one byte less is EINVAL */
	l.stat_size = offsetofend(struct buddy_alloc_stat, counters) - 1;
	EXPECT_EQ(-EINVAL, buddy_ioctl(self->devfd, BUDDY_IOC_LIST, &l));

	/* set-target arguments */
	EXPECT_EQ(-EINVAL, buddy_set_target(self->devfd, id, 0, 0));
	EXPECT_EQ(-EINVAL, buddy_set_target(self->devfd, id, 100, 0));
	EXPECT_EQ(-EINVAL, buddy_set_target(self->devfd, id, 64, 6));
	EXPECT_EQ(-ENOENT, buddy_set_target(self->devfd, id + 9, 64, 0));
	{
		/* 100 MiB fits at 16x; at 1x it never could */
		uint64_t big_id;
		int bfd = buddy_alloc_simple(self->devfd, 100 * MIB,
					     BUDDY_TARGET_16X, 0, NULL,
					     &big_id);

		ASSERT_LE(0, bfd);
		EXPECT_EQ(-E2BIG, buddy_set_target(self->devfd, big_id,
						   BUDDY_TARGET_1X, 0));
		buddy_close(bfd);
	}

	/* the dispatcher: wrong descriptor, magic, sizes */
	EXPECT_EQ(-ENOTTY, buddy_ioctl(afd, BUDDY_IOC_GET_INFO, &st));
	EXPECT_EQ(-ENOTTY, buddy_ioctl(afd, BUDDY_IOC_LIST, &l));
	EXPECT_EQ(-ENOTTY, buddy_ioctl(self->devfd, _IOR(0xBE, 0, int), &l));
	EXPECT_EQ(-ENOTTY, buddy_ioctl(self->devfd,
				       _IOR(BUDDY_IOC_MAGIC, 0x30, int), &l));
	EXPECT_EQ(-EINVAL, buddy_ioctl(self->devfd,
			_IOWR(BUDDY_IOC_MAGIC, 0x01, struct buddy_map), &req));
	memset(big, 0, sizeof(big));
	memcpy(big, &req, sizeof(req));
	((struct buddy_alloc *)big)->size = 128;
	((struct buddy_alloc *)big)->target = 64;
	memset(((struct buddy_alloc *)big)->label, 0, BUDDY_LABEL_LEN);
	big[sizeof(big) - 1] = 1;
	EXPECT_EQ(-E2BIG, buddy_ioctl(self->devfd,
		_IOC(_IOC_READ | _IOC_WRITE, BUDDY_IOC_MAGIC, 0x01, sizeof(big)),
		big));
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(0, buddy_ioctl(self->devfd,
		_IOC(_IOC_READ | _IOC_WRITE, BUDDY_IOC_MAGIC, 0x01, sizeof(big)),
		big));
	EXPECT_LE(0, ((struct buddy_alloc *)big)->fd);
	buddy_close(((struct buddy_alloc *)big)->fd);
	buddy_close(afd);
}

/* LIST in id order, paged, with totals; and closed descriptors vanish. */
TEST(list_and_close)
{
	int devfd = buddy_open_inproc("device_mb=16");
	struct buddy_alloc_stat st[4];
	unsigned int count, k;
	uint64_t total, ids[6];
	int fds[6];

	ASSERT_LE(0, devfd);
	for (k = 0; k < 6; k++) {
		fds[k] = buddy_alloc_simple(devfd, 4096 * (k + 1), 64, 0,
					    "l", &ids[k]);
		ASSERT_LE(0, fds[k]);
		if (k)
			ASSERT_LT(ids[k - 1], ids[k]);
	}
	ASSERT_EQ(0, buddy_list(devfd, 0, st, 4, &count, &total));
	EXPECT_EQ(4, count);
	EXPECT_EQ(6, total);
	for (k = 0; k < 4; k++) {
		EXPECT_EQ(ids[k], st[k].id);
		EXPECT_EQ(4096 * (k + 1), st[k].size);
		EXPECT_EQ(getuid(), st[k].owner_uid);
		EXPECT_EQ(getpid(), st[k].owner_pid);
		EXPECT_STREQ("l", st[k].label);
	}
	ASSERT_EQ(0, buddy_list(devfd, ids[3] + 1, st, 4, &count, &total));
	EXPECT_EQ(2, count);
	EXPECT_EQ(2, total);
	EXPECT_EQ(ids[4], st[0].id);
	close(fds[1]);
	ASSERT_EQ(0, buddy_close(fds[4]));
	EXPECT_EQ(-EBADF, buddy_close(fds[4]));
	ASSERT_EQ(0, buddy_list(devfd, 0, st, 4, &count, &total));
	EXPECT_EQ(4, total);
	EXPECT_EQ(ids[2], st[1].id);
	for (k = 0; k < 6; k++)
		if (k != 1 && k != 4)
			buddy_close(fds[k]);
	buddy_close(devfd);
}

/* The profile table and AUTO, and the per-user share. */
TEST(profiles_auto_quota)
{
	int devfd = buddy_open_inproc("device_mb=16,auto_target=96,user_limit_mb=2");
	struct buddy_profile_entry e[3], out[4];
	struct buddy_alloc res;
	unsigned int n, total;
	int afd;

	ASSERT_LE(0, devfd);
	memset(e, 0, sizeof(e));
	e[0].uid = getuid();
	e[0].target = BUDDY_TARGET_4X;
	e[0].codec = BUDDY_CODEC_ZVC;
	strcpy(e[0].label, "acts");
	e[1] = e[0];
	e[1].uid = getuid() + 1;
	ASSERT_EQ(0, buddy_profile_set(devfd, e, 2, 0));
	ASSERT_EQ(0, buddy_profile_get(devfd, out, 4, &n, &total));
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, total);
	/* same (uid, label) replaces, in the same request too */
	e[0].target = BUDDY_TARGET_2X;
	e[2] = e[0];
	ASSERT_EQ(0, buddy_profile_set(devfd, e, 1, 0));
	ASSERT_EQ(0, buddy_profile_set(devfd, &e[2], 1, 0));
	ASSERT_EQ(0, buddy_profile_get(devfd, out, 1, &n, &total));
	EXPECT_EQ(1, n);
	EXPECT_EQ(2, total);
	EXPECT_EQ(BUDDY_TARGET_2X, out[0].target);

	afd = buddy_alloc_auto(devfd, 4096, "acts", &res);
	ASSERT_LE(0, afd);
	EXPECT_EQ(BUDDY_TARGET_2X, res.target);
	EXPECT_EQ(BUDDY_CODEC_ZVC, res.codec);
	EXPECT_EQ(BUDDY_SRC_PROFILE, res.target_source);
	buddy_close(afd);
	afd = buddy_alloc_auto(devfd, 4096, "other", &res);
	ASSERT_LE(0, afd);
	EXPECT_EQ(BUDDY_TARGET_4_3X, res.target);
	EXPECT_EQ(BUDDY_CODEC_BPC, res.codec);
	EXPECT_EQ(BUDDY_SRC_DEFAULT, res.target_source);
	buddy_close(afd);

	/* all or nothing: one bad entry changes nothing */
	e[2].uid = (uint32_t)-1;
	EXPECT_EQ(-EINVAL, buddy_profile_set(devfd, e, 3, 0));
	e[2].uid = 0;
	e[2].reserved = 1;
	EXPECT_EQ(-EINVAL, buddy_profile_set(devfd, e, 3,
					     BUDDY_PROFILE_REPLACE));
	e[2].reserved = 0;
	e[2].target = 0;
	EXPECT_EQ(-EINVAL, buddy_profile_set(devfd, e, 3, 0));
	EXPECT_EQ(-EINVAL, buddy_profile_set(devfd, e, 1, 4));
	EXPECT_EQ(-ENOSPC, buddy_profile_set(devfd, e, BUDDY_PROFILE_MAX + 1,
					     0));
	ASSERT_EQ(0, buddy_profile_get(devfd, NULL, 0, &n, &total));
	EXPECT_EQ(2, total);
	ASSERT_EQ(0, buddy_profile_set(devfd, NULL, 0, BUDDY_PROFILE_REPLACE));
	ASSERT_EQ(0, buddy_profile_get(devfd, NULL, 0, &n, &total));
	EXPECT_EQ(0, total);

	/* user_limit_mb=2: 1 MiB at 1x fits, 2 MiB more does not */
	afd = buddy_alloc_simple(devfd, MIB, BUDDY_TARGET_1X, 0, NULL, NULL);
	ASSERT_LE(0, afd);
	EXPECT_EQ(-EDQUOT, buddy_alloc_simple(devfd, MIB, BUDDY_TARGET_1X, 0,
					      NULL, NULL));
	buddy_close(afd);
	buddy_close(devfd);
}

/* buddy_aio_*: reads, writes and commands on in-process descriptors. */
TEST(aio)
{
	int devfd = buddy_open_inproc("device_mb=16");
	struct buddy_aio_completion c[16];
	struct buddy_info info;
	struct buddy_alloc req;
	uint8_t buf[64 * 1024], back[64 * 1024];
	struct buddy_aio *aio;
	unsigned int k, got = 0;
	int afd, err, r;

	ASSERT_LE(0, devfd);
	aio = buddy_aio_init(4, &err);
	ASSERT_NE(NULL, aio);
	afd = buddy_alloc_simple(devfd, sizeof(buf) - 100, 32, 0, NULL, NULL);
	ASSERT_LE(0, afd);
	datagen_fill(DATAGEN_RELU90, 5, buf, sizeof(buf));
	for (k = 0; k < 8; k++)
		ASSERT_EQ(0, buddy_aio_write(aio, afd, buf + k * 8192, 8192,
					     k * 8192, k));
	EXPECT_EQ(-EBUSY, buddy_aio_write(aio, afd, buf, 1, 0, 99));
	EXPECT_EQ(8, buddy_aio_pending(aio));
	while (got < 8) {
		r = buddy_aio_wait(aio, c, 3);
		ASSERT_LT(0, r);
		for (k = 0; k < (unsigned int)r; k++)
			EXPECT_EQ(c[k].user_data == 7 ? 8192 - 100 : 8192,
				  c[k].res);
		got += r;
	}
	EXPECT_EQ(0, buddy_aio_pending(aio));
	EXPECT_EQ(0, buddy_aio_wait(aio, c, 1));
	ASSERT_EQ(0, buddy_aio_read(aio, afd, back, sizeof(back), 0, 1));
	ASSERT_EQ(0, buddy_aio_write(aio, afd, buf, 1, sizeof(buf), 2));
	memset(&info, 0xcc, sizeof(info));
	ASSERT_EQ(0, buddy_aio_ioctl(aio, devfd, BUDDY_IOC_GET_INFO, &info, 3));
	memset(&req, 0, sizeof(req));
	req.size = 1;
	req.target = 64;
	ASSERT_EQ(0, buddy_aio_ioctl(aio, devfd, BUDDY_IOC_ALLOC, &req, 4));
	ASSERT_EQ(0, buddy_aio_ioctl(aio, afd, BUDDY_IOC_GET_INFO, &info, 5));
	ASSERT_EQ(5, buddy_aio_wait(aio, c, 16));
	EXPECT_EQ((int64_t)sizeof(buf) - 100, c[0].res);
	EXPECT_EQ(0, memcmp(buf, back, sizeof(buf) - 100));
	EXPECT_EQ(-ENOSPC, c[1].res);
	EXPECT_EQ(0, c[2].res);
	EXPECT_EQ(1, info.nr_allocs);
	EXPECT_EQ(0, c[3].res);
	EXPECT_LE(0, req.fd);
	EXPECT_EQ(-ENOTTY, c[4].res);
	buddy_close(req.fd);
	buddy_aio_exit(aio);
	buddy_close(afd);
	buddy_close(devfd);
}

/* Writers on one allocation from several threads (the stripe locks). */
struct th {
	int afd;
	unsigned int k;
	uint8_t *buf;
};

static void *writer(void *arg)
{
	struct th *t = arg;
	unsigned int i;

	for (i = 0; i < 64; i++) {
		/* thread k owns every 4th 1000-byte piece: they share stripes */
		uint64_t off = (uint64_t)(i * 4 + t->k) * 1000;

		if (buddy_pwrite(t->afd, t->buf + off, 1000, off) != 1000)
			return (void *)1;
	}
	return NULL;
}

TEST(threads)
{
	int devfd = buddy_open_inproc("device_mb=16,chunk_kb=4");
	size_t size = 256 * 1000;
	uint8_t *buf = malloc(size), *back = malloc(size);
	pthread_t tid[4];
	struct th t[4];
	unsigned int k;
	void *ret;

	ASSERT_LE(0, devfd);
	datagen_fill(DATAGEN_MIXED, 11, buf, size);
	t[0].afd = buddy_alloc_simple(devfd, size, 64, 0, NULL, NULL);
	ASSERT_LE(0, t[0].afd);
	for (k = 0; k < 4; k++) {
		t[k] = t[0];
		t[k].k = k;
		t[k].buf = buf;
		ASSERT_EQ(0, pthread_create(&tid[k], NULL, writer, &t[k]));
	}
	for (k = 0; k < 4; k++) {
		ASSERT_EQ(0, pthread_join(tid[k], &ret));
		EXPECT_EQ(NULL, ret);
	}
	ASSERT_EQ((ssize_t)size, buddy_pread(t[0].afd, back, size, 0));
	EXPECT_EQ(0, memcmp(buf, back, size));
	buddy_close(t[0].afd);
	buddy_close(devfd);
	free(buf);
	free(back);
}

/* Device-wide counters: freed allocations' counters stay in. */
TEST(device_stats)
{
	int devfd = buddy_open_inproc("device_mb=16");
	uint64_t codes[BUDDY_CODE_NR];
	struct buddy_counters io;
	uint8_t buf[4096];
	int afd;

	ASSERT_LE(0, devfd);
	afd = buddy_alloc_simple(devfd, 8192, 64, 0, NULL, NULL);
	ASSERT_LE(0, afd);
	datagen_fill(DATAGEN_RANDOM, 1, buf, sizeof(buf));
	ASSERT_EQ(4096, buddy_pwrite(afd, buf, 4096, 0));
	ASSERT_EQ(0, buddy_device_stats(devfd, &io, codes));
	EXPECT_EQ(32, io.entry_writes);
	EXPECT_EQ(32, codes[BUDDY_CODE_RAW]);
	EXPECT_EQ(32, codes[BUDDY_CODE_ZERO]);
	EXPECT_EQ(32, io.overflows);
	buddy_close(afd);
	ASSERT_EQ(0, buddy_device_stats(devfd, &io, codes));
	EXPECT_EQ(32, io.entry_writes);
	EXPECT_EQ(0, codes[BUDDY_CODE_RAW]);
	EXPECT_EQ(-ENOTTY, buddy_device_stats(afd = buddy_alloc_simple(devfd,
					1, 64, 0, NULL, NULL), &io, codes));
	buddy_close(afd);
	buddy_close(devfd);
}

TEST_HARNESS_MAIN
