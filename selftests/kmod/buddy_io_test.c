// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the data path, for every target and codec.
 *
 * Every test runs an allocation next to a userspace model (kmod_util.c)
 * built on the very codecs the module links, and checks bytes read, the
 * size-code histogram of ALLOC_STAT, GET_MAP, and the exact access counters:
 * zero, compressible and incompressible entries, unaligned and partial-entry
 * I/O, chunk boundaries, growth past the device share and back, readv/writev.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

FIXTURE(io) {
	int fd;
	struct buddy_info info;
	uint64_t chunk;
	int afd;
	struct model m;
};

FIXTURE_VARIANT(io) {
	unsigned int target;
	unsigned int codec;
};

#define IO_VARIANT(tname, t, cname, c)				\
	FIXTURE_VARIANT_ADD(io, tname##_##cname) {		\
		.target = t, .codec = c,			\
	}
#define IO_VARIANTS(tname, t)					\
	IO_VARIANT(tname, t, bpc, BUDDY_CODEC_BPC);		\
	IO_VARIANT(tname, t, zvc, BUDDY_CODEC_ZVC);		\
	IO_VARIANT(tname, t, bdi, BUDDY_CODEC_BDI);		\
	IO_VARIANT(tname, t, fpc, BUDDY_CODEC_FPC);		\
	IO_VARIANT(tname, t, none, BUDDY_CODEC_NONE)

IO_VARIANTS(t1x, BUDDY_TARGET_1X);
IO_VARIANTS(t4_3x, BUDDY_TARGET_4_3X);
IO_VARIANTS(t2x, BUDDY_TARGET_2X);
IO_VARIANTS(t4x, BUDDY_TARGET_4X);
IO_VARIANTS(t16x, BUDDY_TARGET_16X);

FIXTURE_SETUP(io)
{
	self->fd = -1;
	self->afd = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	self->chunk = self->info.chunk_bytes;
	ASSERT_LT(0, self->chunk);
	if (variant->target != BUDDY_TARGET_1X && !self->info.buddy_bytes)
		SKIP(return, "no buddy carve-out (max_ratio=1): target %u needs one",
		     variant->target);
}

FIXTURE_TEARDOWN(io)
{
	if (self->afd >= 0)
		close(self->afd);
	model_free(&self->m);
	if (self->fd >= 0)
		close(self->fd);
}

/* Create the fixture's allocation of @size and its model. */
#define OPEN_ALLOC(size) do {						\
	struct buddy_alloc __a = alloc_req((size), variant->target,	\
					   variant->codec);		\
	if (need_device((size), variant->target, self->chunk) >	\
	    self->info.device_bytes ||					\
	    need_buddy((size), variant->target, self->chunk) >		\
	    self->info.buddy_bytes)					\
		SKIP(return, "pools too small for %llu bytes at target %u", \
		     (unsigned long long)(size), variant->target);	\
	strcpy(__a.label, "io");					\
	errno = 0;							\
	ASSERT_EQ(0, ioctl(self->fd, BUDDY_IOC_ALLOC, &__a))		\
		TH_LOG("ALLOC %llu: %s", (unsigned long long)(size),	\
		       strerror(errno));				\
	self->afd = __a.fd;						\
	ASSERT_EQ(0, model_init(&self->m, (size), variant->target,	\
				variant->codec));			\
} while (0)

/* pwrite() through the module and the model; they must agree. */
static void wr(struct __test_metadata *_metadata, int afd, struct model *m,
	       const void *buf, size_t len, uint64_t off)
{
	ssize_t want = model_write(m, buf, len, off), got;

	errno = 0;
	got = pwrite(afd, buf, len, off);
	if (want < 0) {
		EXPECT_EQ(-1, got) TH_LOG("pwrite %zu at %llu", len, (unsigned long long)off);
		EXPECT_EQ(-want, errno) TH_LOG("pwrite %zu at %llu: %s", len,
					       (unsigned long long)off, strerror(errno));
	} else {
		EXPECT_EQ(want, got) TH_LOG("pwrite %zu at %llu: %s", len,
					    (unsigned long long)off, strerror(errno));
	}
}

/*
 * One pread() into @got (@len bytes and a guard byte after them) through
 * both, comparing the bytes; the guard must stay.
 */
static void rd_into(struct __test_metadata *_metadata, int afd,
		    struct model *m, uint8_t *got, size_t len, uint64_t off,
		    const char *how)
{
	uint8_t *want = malloc(len + 1);
	ssize_t n, w;
	long d;

	ASSERT_NE(NULL, want);
	memset(got, 0xcc, len + 1);
	w = model_read(m, want, len, off);
	errno = 0;
	n = pread(afd, got, len, off);
	EXPECT_EQ(w, n) TH_LOG("pread %zu at %llu into %s memory: %s", len,
			       (unsigned long long)off, how, strerror(errno));
	if (n == w && w > 0) {
		d = first_diff(want, got, w);
		EXPECT_EQ(-1, d) TH_LOG("pread %zu at %llu into %s memory: byte %ld (entry %llu) is %#x, want %#x",
					len, (unsigned long long)off, how, d,
					(unsigned long long)(off + d) / 128,
					d >= 0 ? got[d] : 0, d >= 0 ? want[d] : 0);
	}
	EXPECT_EQ(0xcc, got[len]) TH_LOG("pread %zu at %llu into %s memory wrote past the end",
					 len, (unsigned long long)off, how);
	free(want);
}

/*
 * pread() through both and compare the bytes, twice: into page-aligned
 * memory (whole pages at a page-aligned position decode straight into
 * it) and into memory one byte off (always through the bounce buffer).
 */
static void rd(struct __test_metadata *_metadata, int afd, struct model *m,
	       size_t len, uint64_t off)
{
	uint8_t *got;

	ASSERT_EQ(0, posix_memalign((void **)&got, 4096, len + 2));
	rd_into(_metadata, afd, m, got, len, off, "page-aligned");
	rd_into(_metadata, afd, m, got + 1, len, off, "unaligned");
	free(got);
}

/* ALLOC_STAT and GET_MAP against the model: codes and exact counters. */
static void check_state(struct __test_metadata *_metadata, int afd,
			const struct model *m, const char *what)
{
	uint64_t codes[BUDDY_CODE_SLOTS];
	struct buddy_alloc_stat st;
	uint8_t *map;
	uint64_t e;
	int k;

	memset(&st, 0xcc, sizeof(st));
	st.id = 0;
	ASSERT_EQ(0, ioctl(afd, BUDDY_IOC_ALLOC_STAT, &st)) TH_LOG("%s", what);
	EXPECT_EQ(m->nr, st.nr_entries) TH_LOG("%s", what);
	model_codes(m, codes);
	for (k = 0; k < BUDDY_CODE_SLOTS; k++) {
		EXPECT_EQ(codes[k], st.codes[k]) TH_LOG("%s: histogram code %d", what, k);
	}
	EXPECT_COUNTERS(&m->c, &st.counters, what);

	map = malloc(m->nr);
	ASSERT_NE(NULL, map);
	memset(map, 0xee, m->nr);
	ASSERT_EQ(0, buddy_get_map(afd, 0, m->nr, map)) TH_LOG("%s", what);
	for (e = 0; e < m->nr; e++) {
		if (map[e] != m->code[e]) {
			EXPECT_EQ(m->code[e], map[e]) TH_LOG("%s: GET_MAP entry %llu",
				what, (unsigned long long)e);
			break;
		}
	}
	free(map);
}

static void seq_data(struct datagen_rng *r, uint8_t *buf, size_t len)
{
	static const int classes[] = {
		DATAGEN_RANDOM, DATAGEN_ZERO, DATAGEN_CONSTANT, DATAGEN_RAMP,
		DATAGEN_FLOAT32, DATAGEN_FLOAT64, DATAGEN_RELU50, DATAGEN_RELU90,
		DATAGEN_POINTER, DATAGEN_ALTSIGN, DATAGEN_BITNOISE, DATAGEN_MIXED,
	};

	fill_class(classes[datagen_below(r, ARRAY_SIZE(classes))],
		   datagen_next(r), buf, len);
}

TEST_F(io, fresh_allocation_reads_zero)
{
	uint64_t size;

	SETUP_DONE();
	size = 2 * self->chunk + 3 * 128;
	OPEN_ALLOC(size);
	check_state(_metadata, self->afd, &self->m, "fresh");
	rd(_metadata, self->afd, &self->m, 65536, 0);
	rd(_metadata, self->afd, &self->m, 1000, self->chunk - 500);
	rd(_metadata, self->afd, &self->m, 1, 2 * self->chunk - 1);
	rd(_metadata, self->afd, &self->m, 4096, size - 300);
	check_state(_metadata, self->afd, &self->m, "fresh after reads");
	EXPECT_EQ(0, self->m.c.device_sectors_read);
}

/* Each data class over aligned whole entries, written then read back. */
TEST_F(io, class_round_trip)
{
	static const int classes[] = {
		DATAGEN_ZERO, DATAGEN_RANDOM, DATAGEN_CONSTANT, DATAGEN_RAMP,
		DATAGEN_FLOAT32, DATAGEN_FLOAT64, DATAGEN_RELU10, DATAGEN_RELU50,
		DATAGEN_RELU90, DATAGEN_RELU95, DATAGEN_POINTER, DATAGEN_ALTSIGN,
		DATAGEN_BITNOISE, DATAGEN_MIXED,
	};
	const size_t region = 16384;
	uint8_t buf[16384];
	unsigned int i;

	SETUP_DONE();
	OPEN_ALLOC(ARRAY_SIZE(classes) * region);
	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		fill_class(classes[i], 1000 + i, buf, region);
		wr(_metadata, self->afd, &self->m, buf, region, i * region);
	}
	check_state(_metadata, self->afd, &self->m, "after writes");
	for (i = 0; i < ARRAY_SIZE(classes); i++)
		rd(_metadata, self->afd, &self->m, region, i * region);
	check_state(_metadata, self->afd, &self->m, "after reads");
	/* overwrite every class with the next one: growth and shrinkage */
	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		fill_class(classes[(i + 1) % (ARRAY_SIZE(classes))],
			   2000 + i, buf, region);
		wr(_metadata, self->afd, &self->m, buf, region, i * region);
	}
	rd(_metadata, self->afd, &self->m, self->m.size, 0);
	check_state(_metadata, self->afd, &self->m, "after overwrite");
}

/*
 * The crafted sequence: a zero entry, a compressible one, a ramp, a random
 * one; read them; grow the compressible entry to RAW (an overflow below
 * 1x), shrink it back, grow it again; partial writes.  Counters are checked
 * after every step, and the per-write sectors of a RAW entry against a
 * table written out by hand.
 */
TEST_F(io, crafted_counter_sequence)
{
	/* device and buddy sectors of one RAW entry write, by target */
	static const struct { unsigned int t, dev, bud; } raw_sectors[] = {
		{ 128, 4, 0 }, { 96, 3, 1 }, { 64, 2, 2 }, { 32, 1, 3 },
		{ 8, 1, 4 },
	};
	uint8_t e[4][128], small[128], raw[128], tmp[64];
	struct buddy_counters before;
	unsigned int i, small_code;
	char what[64];

	SETUP_DONE();
	OPEN_ALLOC(8 * 128);
	memset(e[0], 0, 128);
	fill_class(DATAGEN_CONSTANT, 5, e[1], 128);
	fill_class(DATAGEN_RAMP, 6, e[2], 128);
	fill_class(DATAGEN_RANDOM, 7, e[3], 128);
	ASSERT_EQ(BUDDY_CODE_RAW, entry_code(variant->codec, e[3]));
	ASSERT_EQ(BUDDY_CODE_ZERO, entry_code(variant->codec, e[0]));
	memcpy(raw, e[3], 128);
	raw[5] ^= 0x5a;
	/* the smallest non-zero code this codec produces */
	for (small_code = BUDDY_CODE_C8; small_code < BUDDY_CODE_RAW; small_code++)
		if (entry_with_code(variant->codec, small_code, small))
			break;
	if (small_code == BUDDY_CODE_RAW)
		memcpy(small, e[1], 128);	/* NONE: RAW */
	TH_LOG("codes: constant %u ramp %u random %u; smallest %u",
	       entry_code(variant->codec, e[1]), entry_code(variant->codec, e[2]),
	       entry_code(variant->codec, e[3]), small_code);

	for (i = 0; i < 4; i++) {
		before = self->m.c;
		wr(_metadata, self->afd, &self->m, e[i], 128, i * 128);
		snprintf(what, sizeof(what), "write entry %u", i);
		check_state(_metadata, self->afd, &self->m, what);
		if (i == 0) {
			EXPECT_EQ(before.device_sectors_written, self->m.c.device_sectors_written);
			EXPECT_EQ(before.buddy_sectors_written, self->m.c.buddy_sectors_written);
		}
	}
	/* the hand table for the RAW write of entry 3 */
	for (i = 0; i < ARRAY_SIZE(raw_sectors); i++) {
		struct buddy_alloc_stat st;
		struct buddy_counters c0;

		if (raw_sectors[i].t != variant->target)
			continue;
		c0 = self->m.c;
		wr(_metadata, self->afd, &self->m, raw, 128, 3 * 128);
		ASSERT_EQ(0, buddy_alloc_stat(self->afd, &st));
		EXPECT_EQ(c0.device_sectors_written + raw_sectors[i].dev,
			  st.counters.device_sectors_written);
		EXPECT_EQ(c0.buddy_sectors_written + raw_sectors[i].bud,
			  st.counters.buddy_sectors_written);
		EXPECT_EQ(c0.buddy_accesses + !!raw_sectors[i].bud,
			  st.counters.buddy_accesses);
		EXPECT_EQ(c0.overflows, st.counters.overflows) TH_LOG("RAW over RAW is no overflow");
	}
	for (i = 0; i < 4; i++) {
		rd(_metadata, self->afd, &self->m, 128, i * 128);
		snprintf(what, sizeof(what), "read entry %u", i);
		check_state(_metadata, self->afd, &self->m, what);
	}

	/* grow, shrink, grow entry 4 */
	wr(_metadata, self->afd, &self->m, small, 128, 4 * 128);
	check_state(_metadata, self->afd, &self->m, "entry 4 small");
	before = self->m.c;
	wr(_metadata, self->afd, &self->m, raw, 128, 4 * 128);
	check_state(_metadata, self->afd, &self->m, "entry 4 grown to RAW");
	if (variant->target < BUDDY_TARGET_1X && small_code < BUDDY_CODE_RAW &&
	    buddy_code_bytes(small_code) <= variant->target)
		EXPECT_EQ(before.overflows + 1, self->m.c.overflows);
	if (variant->target == BUDDY_TARGET_1X)
		EXPECT_EQ(0, self->m.c.overflows);
	wr(_metadata, self->afd, &self->m, small, 128, 4 * 128);
	check_state(_metadata, self->afd, &self->m, "entry 4 shrunk");
	rd(_metadata, self->afd, &self->m, 128, 4 * 128);
	wr(_metadata, self->afd, &self->m, raw, 128, 4 * 128);
	check_state(_metadata, self->afd, &self->m, "entry 4 grown again");
	rd(_metadata, self->afd, &self->m, 128, 4 * 128);
	check_state(_metadata, self->afd, &self->m, "entry 4 read");

	/* partial writes: one read and one write per touched entry */
	fill_class(DATAGEN_RANDOM, 9, tmp, sizeof(tmp));
	before = self->m.c;
	wr(_metadata, self->afd, &self->m, tmp, 8, 2 * 128 + 40);
	EXPECT_EQ(before.entry_reads + 1, self->m.c.entry_reads);
	EXPECT_EQ(before.entry_writes + 1, self->m.c.entry_writes);
	check_state(_metadata, self->afd, &self->m, "partial write in entry 2");
	wr(_metadata, self->afd, &self->m, tmp, 60, 100);
	check_state(_metadata, self->afd, &self->m, "partial write over entries 0-1");
	wr(_metadata, self->afd, &self->m, tmp, 1, 6 * 128 + 127);
	check_state(_metadata, self->afd, &self->m, "one byte at the end of entry 6");
	memset(tmp, 0, sizeof(tmp));
	wr(_metadata, self->afd, &self->m, tmp, 1, 6 * 128 + 127);
	check_state(_metadata, self->afd, &self->m, "entry 6 back to zero");
	rd(_metadata, self->afd, &self->m, 8 * 128, 0);
	rd(_metadata, self->afd, &self->m, 3, 127);
	check_state(_metadata, self->afd, &self->m, "final reads");
}

/* Every size code the codec can produce, in every entry of one chunk row. */
TEST_F(io, every_code_grow_and_shrink)
{
	uint8_t ent[BUDDY_CODE_NR][128];
	bool have[BUDDY_CODE_NR];
	unsigned int from, to, n = 0;

	SETUP_DONE();
	for (from = 0; from < BUDDY_CODE_NR; from++)
		have[from] = entry_with_code(variant->codec, from, ent[from]);
	OPEN_ALLOC(BUDDY_CODE_NR * BUDDY_CODE_NR * 128);
	/* entry (from, to): written as @from, then as @to */
	for (from = 0; from < BUDDY_CODE_NR; from++) {
		for (to = 0; to < BUDDY_CODE_NR; to++) {
			uint64_t off = (from * BUDDY_CODE_NR + to) * 128;

			if (!have[from] || !have[to])
				continue;
			wr(_metadata, self->afd, &self->m, ent[from], 128, off);
			wr(_metadata, self->afd, &self->m, ent[to], 128, off);
			rd(_metadata, self->afd, &self->m, 128, off);
			n++;
		}
	}
	TH_LOG("%u transitions; codes available:%s%s%s%s%s%s", n,
	       have[0] ? " zero" : "", have[1] ? " c8" : "", have[2] ? " c32" : "",
	       have[3] ? " c64" : "", have[4] ? " c96" : "", have[5] ? " raw" : "");
	check_state(_metadata, self->afd, &self->m, "transitions");
}

/* Random unaligned I/O around a chunk boundary and the end, exact counters. */
TEST_F(io, unaligned_random_io)
{
	struct datagen_rng r;
	uint8_t *buf;
	uint64_t size;
	unsigned int op;

	SETUP_DONE();
	size = self->chunk + 64 * 128;
	OPEN_ALLOC(size);
	buf = malloc(8192);
	ASSERT_NE(NULL, buf);
	datagen_seed(&r, 0xb0dd1e + variant->target * 7 + variant->codec);
	for (op = 0; op < 400; op++) {
		uint64_t off;
		size_t len;

		switch (datagen_below(&r, 4)) {
		case 0:	/* anywhere */
			off = datagen_below(&r, (uint32_t)size);
			break;
		case 1:	/* around the chunk boundary */
			off = self->chunk - 3000 + datagen_below(&r, 6000);
			break;
		case 2:	/* around the end, sometimes past it */
			off = size - 2000 + datagen_below(&r, 2100);
			break;
		default: /* the first entries */
			off = datagen_below(&r, 1024);
			break;
		}
		len = 1 + datagen_below(&r, datagen_below(&r, 2) ? 300 : 8192);
		if (datagen_below(&r, 2)) {
			seq_data(&r, buf, len);
			if (off >= size && datagen_below(&r, 2))
				off = size;	/* exactly at the end: ENOSPC */
			wr(_metadata, self->afd, &self->m, buf, len, off);
		} else {
			rd(_metadata, self->afd, &self->m, len, off);
		}
		if (op % 100 == 99)
			check_state(_metadata, self->afd, &self->m, "random I/O");
	}
	free(buf);
	rd(_metadata, self->afd, &self->m, 8192, self->chunk - 4096);
	rd(_metadata, self->afd, &self->m, 8192, size - 8192);
	check_state(_metadata, self->afd, &self->m, "after random I/O");
}

/* One write and one read across several chunks at once. */
TEST_F(io, multi_chunk_transfer)
{
	uint64_t size, len;
	uint8_t *buf;

	SETUP_DONE();
	size = 3 * self->chunk;
	if (size > (16u << 20))
		size = 2 * self->chunk + 128 * 100;
	OPEN_ALLOC(size);
	len = size - 1000;
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	fill_class(DATAGEN_MIXED, 77, buf, len);
	wr(_metadata, self->afd, &self->m, buf, len, 333);
	rd(_metadata, self->afd, &self->m, size, 0);
	check_state(_metadata, self->afd, &self->m, "multi-chunk");
	free(buf);
}

/* An odd size: the last entry is partial; bytes and codes only. */
TEST_F(io, odd_size_tail)
{
	uint64_t size, e;
	uint8_t buf[4096], got[4096];
	uint64_t codes[BUDDY_CODE_SLOTS];
	struct buddy_alloc_stat st;
	uint8_t map[64];
	int k;

	SETUP_DONE();
	size = self->chunk + 1037;
	OPEN_ALLOC(size);
	fill_class(DATAGEN_RANDOM, 3, buf, sizeof(buf));
	EXPECT_RET(1037, pwrite(self->afd, buf, sizeof(buf), self->chunk));
	model_write(&self->m, buf, sizeof(buf), self->chunk);
	EXPECT_RET(50, pwrite(self->afd, buf + 100, 100, size - 50));
	model_write(&self->m, buf + 100, 100, size - 50);
	memset(got, 0xcc, sizeof(got));
	EXPECT_RET(1037, pread(self->afd, got, sizeof(got), self->chunk));
	EXPECT_EQ(-1, first_diff(got, self->m.data + self->chunk, 1037));
	EXPECT_RET(0, pread(self->afd, got, 1, size));
	/* the tail past the size reads as nothing and stays zero */
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &st));
	model_codes(&self->m, codes);
	for (k = 0; k < BUDDY_CODE_SLOTS; k++) {
		EXPECT_EQ(codes[k], st.codes[k]) TH_LOG("code %d", k);
	}
	ASSERT_EQ(0, buddy_get_map(self->afd, self->chunk / 128, 9, map));
	for (e = 0; e < 9; e++) {
		EXPECT_EQ(self->m.code[self->chunk / 128 + e], map[e]) TH_LOG("entry %llu", (unsigned long long)e);
	}
}

/* readv/writev with odd iovec splits (bytes and codes). */
TEST_F(io, readv_writev)
{
	uint8_t src[20000], dst[20000];
	struct iovec iov[6];
	size_t lens[6] = { 1, 127, 300, 4096, 5, 10000 }, tot = 0, i, o;
	uint64_t codes[BUDDY_CODE_SLOTS];
	struct buddy_alloc_stat st;
	int k;

	SETUP_DONE();
	OPEN_ALLOC(32768);
	fill_class(DATAGEN_MIXED, 11, src, sizeof(src));
	for (i = 0, o = 0; i < 6; i++) {
		iov[i].iov_base = src + o;
		iov[i].iov_len = lens[i];
		o += lens[i];
	}
	tot = o;
	EXPECT_RET(tot, pwritev(self->afd, iov, 6, 77));
	model_write(&self->m, src, tot, 77);
	memset(dst, 0xcc, sizeof(dst));
	for (i = 0, o = 0; i < 6; i++) {	/* read back split differently */
		iov[i].iov_base = dst + o;
		iov[i].iov_len = lens[5 - i];
		o += lens[5 - i];
	}
	EXPECT_RET(tot, preadv(self->afd, iov, 6, 77));
	EXPECT_EQ(-1, first_diff(src, dst, tot));
	/* readv at the end: short */
	iov[0].iov_base = dst;
	iov[0].iov_len = 100;
	iov[1].iov_base = dst + 100;
	iov[1].iov_len = 100;
	EXPECT_RET(150, preadv(self->afd, iov, 2, 32768 - 150));
	EXPECT_ERRNO(ENOSPC, pwritev(self->afd, iov, 2, 32768));
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &st));
	model_codes(&self->m, codes);
	for (k = 0; k < BUDDY_CODE_SLOTS; k++) {
		EXPECT_EQ(codes[k], st.codes[k]) TH_LOG("code %d", k);
	}
}

/*
 * Whole-page reads at a page-aligned position into page-aligned anonymous
 * memory decode straight into its pages; the bytes must be the same as
 * through the bounce buffer, in every case where the two part ways:
 *   - the whole allocation, its tail (300 bytes) past the last page,
 *     into page-aligned memory and 16 bytes off (each stripe across two
 *     user pages, the entry on the cut read once);
 *   - memory shared copy-on-write with a forked child, which keeps its
 *     bytes (the read takes the parent's pages writable first);
 *   - preadv() segments that end inside a page (whole pages of each
 *     segment straight, the rest bounced);
 *   - a shared memfd mapping (no anonymous memory: bounced);
 *   - a buffer whose second page is read-only: the first page is read,
 *     a short count (progress before the fault is reported).
 * The access counters must agree with the model's before the last.
 */
TEST_F(io, direct_read_destinations)
{
	const size_t pg = 4096, npg = 24;
	const uint64_t size = npg * pg + 300;
	uint8_t *src, *want, *anon, *shm;
	struct iovec iov[3];
	int pfd[2], status, mfd;
	char c = 0;
	pid_t pid;

	SETUP_DONE();
	OPEN_ALLOC(size);
	src = malloc(size);
	want = malloc(size);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, want);
	fill_class(DATAGEN_MIXED, 404 + variant->target, src, size);
	wr(_metadata, self->afd, &self->m, src, size, 0);
	anon = mmap(NULL, (npg + 1) * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, anon);

	rd_into(_metadata, self->afd, &self->m, anon, size, 0, "anonymous");
	/* 16 bytes into a page, as malloc() gives: stripes across pages */
	rd_into(_metadata, self->afd, &self->m, anon + 16, size, 0,
		"anonymous, malloc-aligned");
	rd_into(_metadata, self->afd, &self->m, anon, 3 * pg, 5 * pg,
		"anonymous");

	/* copy-on-write: the child's view of the pages must not change */
	memset(anon, 0x5a, 4 * pg);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		size_t k;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(2);
		for (k = 0; k < 4 * pg; k++)
			if (anon[k] != 0x5a)
				_exit(1);
		_exit(0);
	}
	close(pfd[0]);
	model_read(&self->m, want, 4 * pg, 8 * pg);
	EXPECT_RET(4 * pg, pread(self->afd, anon, 4 * pg, 8 * pg));
	EXPECT_EQ(-1, first_diff(want, anon, 4 * pg))
		TH_LOG("the parent's pages after a copy-on-write read");
	ASSERT_EQ(1, write(pfd[1], &c, 1));
	close(pfd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the forked child saw the parent's read (status %#x)",
		       status);

	/* segments ending inside a page */
	memset(anon, 0xcc, (npg + 1) * pg);
	iov[0] = (struct iovec){ .iov_base = anon, .iov_len = pg + 50 };
	iov[1] = (struct iovec){ .iov_base = anon + 2 * pg, .iov_len = 50 };
	iov[2] = (struct iovec){ .iov_base = anon + 4 * pg,
				 .iov_len = 2 * pg };
	model_read(&self->m, want, 3 * pg + 100, pg);
	EXPECT_RET(3 * pg + 100, preadv(self->afd, iov, 3, pg));
	EXPECT_EQ(-1, first_diff(want, anon, pg + 50));
	EXPECT_EQ(-1, first_diff(want + pg + 50, anon + 2 * pg, 50));
	EXPECT_EQ(-1, first_diff(want + pg + 100, anon + 4 * pg, 2 * pg));
	EXPECT_EQ(0xcc, anon[pg + 50]);
	EXPECT_EQ(0xcc, anon[2 * pg + 50]);
	EXPECT_EQ(0xcc, anon[6 * pg]);


	/* a shared file mapping */
	mfd = memfd_create("buddy-io", 0);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, (npg + 1) * pg));
	shm = mmap(NULL, (npg + 1) * pg, PROT_READ | PROT_WRITE, MAP_SHARED,
		   mfd, 0);
	ASSERT_NE(MAP_FAILED, shm);
	rd_into(_metadata, self->afd, &self->m, shm, npg * pg, 0, "memfd");
	ASSERT_EQ(0, munmap(shm, (npg + 1) * pg));
	close(mfd);

	check_state(_metadata, self->afd, &self->m, "direct reads");

	/*
	 * The second page read-only: one page, a short count (the entries
	 * of the page that could not be copied were read all the same, so
	 * no counters after this).
	 */
	ASSERT_EQ(0, mprotect(anon + pg, pg, PROT_READ));
	model_read(&self->m, want, pg, 0);
	EXPECT_RET(pg, pread(self->afd, anon, 2 * pg, 0));
	EXPECT_EQ(-1, first_diff(want, anon, pg));
	EXPECT_ERRNO(EFAULT, pread(self->afd, anon + pg, pg, 0));
	ASSERT_EQ(0, munmap(anon, (npg + 1) * pg));
	free(src);
	free(want);
}

/* Many entries grow past the device share at once, then shrink back. */
TEST_F(io, bulk_growth_and_shrink)
{
	const size_t n = 512;
	uint8_t *small, *raw;
	unsigned int sc;
	uint64_t i;

	SETUP_DONE();
	OPEN_ALLOC(n * 128);
	small = malloc(n * 128);
	raw = malloc(n * 128);
	ASSERT_NE(NULL, small);
	ASSERT_NE(NULL, raw);
	fill_class(DATAGEN_RANDOM, 21, raw, n * 128);
	for (sc = BUDDY_CODE_C8; sc < BUDDY_CODE_RAW; sc++)
		if (entry_with_code(variant->codec, sc, small))
			break;
	if (sc == BUDDY_CODE_RAW)
		fill_class(DATAGEN_RANDOM, 22, small, 128);
	for (i = 1; i < n; i++)
		memcpy(small + i * 128, small, 128);
	wr(_metadata, self->afd, &self->m, small, n * 128, 0);
	check_state(_metadata, self->afd, &self->m, "small");
	wr(_metadata, self->afd, &self->m, raw, n * 128, 0);
	check_state(_metadata, self->afd, &self->m, "grown");
	rd(_metadata, self->afd, &self->m, n * 128, 0);
	wr(_metadata, self->afd, &self->m, small, n * 128, 0);
	check_state(_metadata, self->afd, &self->m, "shrunk");
	rd(_metadata, self->afd, &self->m, n * 128, 0);
	check_state(_metadata, self->afd, &self->m, "read");
	free(small);
	free(raw);
}

TEST_HARNESS_MAIN
