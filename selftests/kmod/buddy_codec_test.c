// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the codec implementations (codec_impl) and the FPU
 * section around a stripe (kmod/codec_fpu.c).
 *
 * For every target, data is written with one implementation in force and
 * read back with another (scalar -> avx2, avx2 -> scalar, avx2 -> avx2,
 * gfni -> scalar, gfni -> avx2, each where the CPU runs both; with
 * codec_vector_min=1 so that even one entry takes the vector path):
 * whole stripes, entries in part, reads through the window's page faults
 * and a write-back; the bytes must come back and GET_MAP must give the
 * size codes the scalar codec computes in userspace.  A stream written by
 * one path is decoded by the other.  The parameter itself: what it lists,
 * what it refuses.  A guest CPU without AVX2 (run.sh's qemu64) SKIPs the
 * vector variants with the reason; make check-guest runs them in a guest
 * booted with --cpu max.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define SIZE		(256u << 10)	/* 2048 entries, 64 stripes */
#define PG		4096u

/* The implementation in brackets in codec_impl's list, or "". */
static void par_active(char *list, char *name, size_t len)
{
	char *a = strchr(list, '['), *b = a ? strchr(a, ']') : NULL;

	name[0] = 0;
	if (a && b && (size_t)(b - a) < len) {
		memcpy(name, a + 1, b - a - 1);
		name[b - a - 1] = 0;
	}
}

/* The list of codec_impl names @name as one of its words. */
static bool par_lists(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '[') &&
		    (!p[n] || p[n] == ' ' || p[n] == ']'))
			return true;
	return false;
}

FIXTURE(codec) {
	int fd, afd;
	struct buddy_info info;
	char impl[64], vmin[32];	/* the parameters as found */
	uint8_t *data, *got;
};

FIXTURE_VARIANT(codec) {
	unsigned int target;
	const char *wimpl, *rimpl;	/* in force to write, to read */
};

#define CODEC_VARIANT(tname, t, w, r)					\
	FIXTURE_VARIANT_ADD(codec, tname##_##w##_then_##r) {		\
		.target = t, .wimpl = #w, .rimpl = #r,			\
	}
#define CODEC_VARIANTS(tname, t)					\
	CODEC_VARIANT(tname, t, scalar, avx2);				\
	CODEC_VARIANT(tname, t, avx2, scalar);				\
	CODEC_VARIANT(tname, t, avx2, avx2);				\
	CODEC_VARIANT(tname, t, gfni, scalar);				\
	CODEC_VARIANT(tname, t, gfni, avx2)

CODEC_VARIANTS(t1x, BUDDY_TARGET_1X);
CODEC_VARIANTS(t4_3x, BUDDY_TARGET_4_3X);
CODEC_VARIANTS(t2x, BUDDY_TARGET_2X);
CODEC_VARIANTS(t4x, BUDDY_TARGET_4X);
CODEC_VARIANTS(t16x, BUDDY_TARGET_16X);

FIXTURE_SETUP(codec)
{
	struct buddy_alloc a;

	self->fd = self->afd = -1;
	self->data = self->got = NULL;
	OPEN_DEVICE(&self->fd, &self->info);
	ASSERT_EQ(0, kparam_str("codec_impl", self->impl, sizeof(self->impl)));
	ASSERT_EQ(0, kparam_str("codec_vector_min", self->vmin,
			      sizeof(self->vmin)));
	if (!par_lists(self->impl, variant->wimpl) ||
	    !par_lists(self->impl, variant->rimpl))
		SKIP(return, "codec_impl lists no %s or no %s (%s): the guest CPU lacks it (run.sh --cpu max has AVX2)",
		     variant->wimpl, variant->rimpl, self->impl);
	if (variant->target != BUDDY_TARGET_1X && !self->info.buddy_bytes)
		SKIP(return, "no buddy carve-out: target %u needs one",
		     variant->target);
	ASSERT_EQ(0, kparam_write_str("codec_vector_min", "1"));
	self->data = malloc(SIZE);
	self->got = malloc(SIZE);
	ASSERT_TRUE(self->data && self->got);
	/* every class, a stretch of each, zero pages and RAW entries too */
	fill_class(DATAGEN_MIXED, variant->target, self->data, SIZE);
	a = alloc_req(SIZE, variant->target, BUDDY_CODEC_BPC);
	strcpy(a.label, "codec");
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &a))
		TH_LOG("ALLOC: %s", strerror(errno));
	self->afd = a.fd;
}

FIXTURE_TEARDOWN(codec)
{
	char impl[64];

	if (self->afd >= 0)
		close(self->afd);
	if (self->fd >= 0)
		close(self->fd);
	free(self->data);
	free(self->got);
	/* back to what the module had */
	par_active(self->impl, impl, sizeof(impl));
	if (impl[0])
		kparam_write_str("codec_impl", impl);
	if (self->vmin[0])
		kparam_write_str("codec_vector_min", self->vmin);
}

/* GET_MAP against the scalar codec in userspace, entry by entry. */
static void check_codes(struct __test_metadata *_metadata,
			struct _test_data_codec *self, const char *what)
{
	static uint8_t map[SIZE / BUDDY_ENTRY_BYTES];
	unsigned int i;

	ASSERT_EQ(0, buddy_get_map(self->afd, 0, SIZE / BUDDY_ENTRY_BYTES,
				   map));
	for (i = 0; i < SIZE / BUDDY_ENTRY_BYTES; i++)
		ASSERT_EQ(buddy_entry_classify(&buddy_codec_bpc, self->data +
					       (size_t)i * BUDDY_ENTRY_BYTES),
			  map[i]) TH_LOG("%s: entry %u", what, i);
}

/* The whole allocation by pread() and by a mapping equals data. */
static void check_bytes(struct __test_metadata *_metadata,
			struct _test_data_codec *self, const char *what)
{
	uint8_t *map;
	long d;

	memset(self->got, 0xcc, SIZE);
	ASSERT_EQ(SIZE, pread(self->afd, self->got, SIZE, 0));
	d = first_diff(self->data, self->got, SIZE);
	ASSERT_EQ(-1, d) TH_LOG("%s: pread byte %ld (entry %ld)", what, d,
				d / BUDDY_ENTRY_BYTES);
	/* odd pieces: parts of entries, across stripes */
	ASSERT_EQ(777, pread(self->afd, self->got, 777, 3 * PG - 333));
	ASSERT_EQ(-1, first_diff(self->data + 3 * PG - 333, self->got, 777));
	map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, self->afd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	d = first_diff(self->data, map, SIZE);
	EXPECT_EQ(-1, d) TH_LOG("%s: window byte %ld", what, d);
	munmap(map, SIZE);
}

/* minutes under a KASAN kernel in TCG, past kselftest's 30 s default */
TEST_F_TIMEOUT(codec, streams_cross, 300)
{
	uint8_t *map;
	unsigned int i;

	SETUP_DONE();
	ASSERT_EQ(0, kparam_write_str("codec_impl", variant->wimpl));
	/* whole stripes, then parts of entries */
	ASSERT_EQ(SIZE, pwrite(self->afd, self->data, SIZE, 0));
	for (i = 0; i < 16; i++) {
		uint64_t off = (uint64_t)i * 9001 % (SIZE - 300);

		memset(self->data + off, i * 37, 1 + i * 17);
		ASSERT_EQ(1 + i * 17, pwrite(self->afd, self->data + off,
					     1 + i * 17, off));
	}
	check_codes(_metadata, self, variant->wimpl);

	/* what one implementation stored, the other decodes */
	ASSERT_EQ(0, kparam_write_str("codec_impl", variant->rimpl));
	check_bytes(_metadata, self, variant->rimpl);
	check_codes(_metadata, self, variant->rimpl);

	/* a write-back through the window under the reading implementation */
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->afd,
		   0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	fill_class(DATAGEN_RELU90, 7, self->data + 5 * PG, 3 * PG);
	memcpy(map + 5 * PG, self->data + 5 * PG, 3 * PG);
	memset(self->data + 11 * PG + 64, 0, 64);
	memset(map + 11 * PG + 64, 0, 64);
	ASSERT_EQ(0, munmap(map, SIZE));
	ASSERT_EQ(0, kparam_write_str("codec_impl", variant->wimpl));
	check_bytes(_metadata, self, "after a write-back");
	check_codes(_metadata, self, "after a write-back");
}

/* The parameter: its list, its refusals; without an allocation. */
TEST(codec_impl_param)
{
	char list[64], active[32], again[64];

	ASSERT_EQ(0, kparam_str("codec_impl", list, sizeof(list)));
	par_active(list, active, sizeof(active));
	EXPECT_TRUE(par_lists(list, "scalar")) TH_LOG("'%s'", list);
	ASSERT_NE(0, active[0]) TH_LOG("no implementation in brackets: '%s'",
				       list);
	EXPECT_EQ(-EINVAL, kparam_write_str("codec_impl", "sse9"));
	EXPECT_EQ(-EINVAL, kparam_write_str("codec_impl", "\n"));
	if (!par_lists(list, "avx2"))
		EXPECT_EQ(-EOPNOTSUPP, kparam_write_str("codec_impl", "avx2"));
	if (!par_lists(list, "gfni"))
		EXPECT_EQ(-EOPNOTSUPP, kparam_write_str("codec_impl", "gfni"));
	/* refused writes leave it as it was */
	ASSERT_EQ(0, kparam_str("codec_impl", again, sizeof(again)));
	EXPECT_STREQ(list, again);
	ASSERT_EQ(0, kparam_write_str("codec_impl", "scalar"));
	ASSERT_EQ(0, kparam_str("codec_impl", again, sizeof(again)));
	EXPECT_NE(NULL, strstr(again, "[scalar]")) TH_LOG("'%s'", again);
	/* auto: the best this CPU runs, the last one listed */
	ASSERT_EQ(0, kparam_write_str("codec_impl", "auto\n"));
	ASSERT_EQ(0, kparam_str("codec_impl", again, sizeof(again)));
	EXPECT_EQ(']', again[strlen(again) - 1]) TH_LOG("'%s'", again);
	ASSERT_EQ(0, kparam_write_str("codec_impl", active));
}

TEST_HARNESS_MAIN
