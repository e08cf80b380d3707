// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: the two pools.
 *
 * For every target: the largest allocation the empty pools can ever hold
 * succeeds and one byte more is E2BIG; with part of the pools taken, the
 * largest that still fits succeeds and one byte more is ENOSPC, leaving the
 * usage untouched; holes left by freed allocations are reused; closing
 * everything brings the usage back to zero.  Then the NUMA placement of the
 * pools when the module was loaded with device_node/buddy_node.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "kmod_test.h"

FIXTURE(pool) {
	int fd;
	struct buddy_info info;
	uint64_t chunk;
	int fds[1024];
	int nfds;
};

FIXTURE_VARIANT(pool) {
	unsigned int target;
};

FIXTURE_VARIANT_ADD(pool, t1x) { .target = BUDDY_TARGET_1X };
FIXTURE_VARIANT_ADD(pool, t4_3x) { .target = BUDDY_TARGET_4_3X };
FIXTURE_VARIANT_ADD(pool, t2x) { .target = BUDDY_TARGET_2X };
FIXTURE_VARIANT_ADD(pool, t4x) { .target = BUDDY_TARGET_4X };
FIXTURE_VARIANT_ADD(pool, t16x) { .target = BUDDY_TARGET_16X };

FIXTURE_SETUP(pool)
{
	long long limit = kparam("user_limit_mb");

	self->fd = -1;
	self->nfds = 0;
	OPEN_DEVICE(&self->fd, &self->info);
	self->chunk = self->info.chunk_bytes;
	if (limit != 0)
		SKIP(return, "user_limit_mb=%lld: filling the pools would hit the quota first",
		     limit);
}

FIXTURE_TEARDOWN(pool)
{
	int i;

	for (i = 0; i < self->nfds; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	if (self->fd >= 0)
		close(self->fd);
}

/* ALLOC @size at the variant's target: the fd (kept) or -errno. */
static int pool_alloc(struct __test_metadata *_metadata,
		      FIXTURE_DATA(pool) *self, uint64_t size,
		      unsigned int target)
{
	struct buddy_alloc a = alloc_req(size, target, BUDDY_CODEC_BPC);

	if (ioctl(self->fd, BUDDY_IOC_ALLOC, &a))
		return -errno;
	if (self->nfds < (int)(ARRAY_SIZE(self->fds)))
		self->fds[self->nfds++] = a.fd;
	return a.fd;
}

static void close_all(FIXTURE_DATA(pool) *self)
{
	int i;

	for (i = 0; i < self->nfds; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	self->nfds = 0;
}

/* ALLOC must fail with @err without changing the usage. */
static void must_fail(struct __test_metadata *_metadata,
		      FIXTURE_DATA(pool) *self, uint64_t size,
		      unsigned int target, int err, const char *what)
{
	struct buddy_info b, a;
	int r;

	ASSERT_EQ(0, buddy_get_info(self->fd, &b));
	r = pool_alloc(_metadata, self, size, target);
	EXPECT_EQ(-err, r) TH_LOG("%s: size %llu target %u: want %s, got %s",
				  what, (unsigned long long)size, target,
				  strerror(err), r >= 0 ? "success" : strerror(-r));
	ASSERT_EQ(0, buddy_get_info(self->fd, &a));
	EXPECT_EQ(b.device_used, a.device_used) TH_LOG("%s: device_used", what);
	EXPECT_EQ(b.buddy_used, a.buddy_used) TH_LOG("%s: buddy_used", what);
	EXPECT_EQ(b.nr_allocs, a.nr_allocs) TH_LOG("%s: nr_allocs", what);
	EXPECT_EQ(b.logical_bytes, a.logical_bytes) TH_LOG("%s", what);
}

static void expect_used(struct __test_metadata *_metadata, int fd,
			uint64_t dev, uint64_t bud, const char *what)
{
	struct buddy_info i;

	ASSERT_EQ(0, buddy_get_info(fd, &i));
	EXPECT_EQ(dev, i.device_used) TH_LOG("%s", what);
	EXPECT_EQ(bud, i.buddy_used) TH_LOG("%s", what);
}

TEST_F(pool, largest_ever_and_e2big)
{
	unsigned int t = variant->target;
	uint64_t s;
	int r;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	s = max_fitting_size(t, self->chunk, self->info.device_bytes,
			     self->info.buddy_bytes);
	TH_LOG("largest allocation at target %u: %llu bytes", t, (unsigned long long)s);
	if (!s) {	/* no carve-out: nothing below 1x ever fits */
		must_fail(_metadata, self, 1, t, E2BIG, "no carve-out");
		return;
	}
	r = pool_alloc(_metadata, self, s, t);	/* N */
	EXPECT_LE(0, r) TH_LOG("largest size %llu: %s", (unsigned long long)s,
			       r < 0 ? strerror(-r) : "");
	if (r >= 0) {
		expect_used(_metadata, self->fd, need_device(s, t, self->chunk),
			    need_buddy(s, t, self->chunk), "largest");
		/* and now the pools are full */
		must_fail(_metadata, self, 1, t, ENOSPC, "1 byte after the largest");
		close_all(self);
	}
	EXPECT_IDLE(self->fd);
	must_fail(_metadata, self, s + 1, t, E2BIG, "largest + 1");	/* N+1 */
	must_fail(_metadata, self, s + self->chunk, t, E2BIG, "largest + chunk");
	must_fail(_metadata, self, 2 * s, t, E2BIG, "twice the largest");
	EXPECT_IDLE(self->fd);
}

TEST_F(pool, enospc_at_the_boundary_and_cleanup)
{
	unsigned int t = variant->target;
	uint64_t s, a, b, dev_rem, bud_rem;
	int r;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	s = max_fitting_size(t, self->chunk, self->info.device_bytes,
			     self->info.buddy_bytes);
	if (!s)
		SKIP(return, "no carve-out (max_ratio=1): nothing at target %u fits", t);
	if (s < 2 * 128)
		SKIP(return, "pools hold less than 2 entries at target %u", t);
	/* take whole chunks, about 3/4 of what fits */
	a = s * 3 / 4 / self->chunk * self->chunk;
	if (!a)
		a = s / 2 / 128 * 128;
	r = pool_alloc(_metadata, self, a, t);
	ASSERT_LE(0, r) TH_LOG("first allocation %llu: %s", (unsigned long long)a, strerror(-r));
	dev_rem = self->info.device_bytes - need_device(a, t, self->chunk);
	bud_rem = self->info.buddy_bytes - need_buddy(a, t, self->chunk);
	b = max_fitting_size(t, self->chunk, dev_rem, bud_rem);
	TH_LOG("target %u: first %llu, then %llu fits", t,
	       (unsigned long long)a, (unsigned long long)b);
	ASSERT_LT(0, b);
	must_fail(_metadata, self, b + 1, t, ENOSPC, "remaining + 1");	/* N+1 */
	must_fail(_metadata, self, s, t, ENOSPC, "the largest, now");
	r = pool_alloc(_metadata, self, b, t);	/* N */
	EXPECT_LE(0, r) TH_LOG("remaining %llu: %s", (unsigned long long)b, r < 0 ? strerror(-r) : "");
	expect_used(_metadata, self->fd,
		    need_device(a, t, self->chunk) + (r >= 0 ? need_device(b, t, self->chunk) : 0),
		    need_buddy(a, t, self->chunk) + (r >= 0 ? need_buddy(b, t, self->chunk) : 0),
		    "both");
	must_fail(_metadata, self, 1, t, ENOSPC, "1 byte when full");
	/* at 1x nothing is needed from the carve-out: the other target too */
	if (t == BUDDY_TARGET_1X)
		must_fail(_metadata, self, 1, BUDDY_TARGET_16X,
			  self->info.buddy_bytes ? ENOSPC : E2BIG,
			  "16x when the device pool is full");
	close_all(self);
	EXPECT_IDLE(self->fd);
	r = pool_alloc(_metadata, self, s, t);	/* everything came back */
	EXPECT_LE(0, r) TH_LOG("largest after cleanup: %s", r < 0 ? strerror(-r) : "");
	close_all(self);
	EXPECT_IDLE(self->fd);
}

/* Fill with equal allocations, free every other one, refill the holes. */
TEST_F(pool, holes_are_reused)
{
	unsigned int t = variant->target;
	uint64_t s, size, dev = 0, bud = 0, nd, nb;
	int n = 0, i, freed = 0, r;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	s = max_fitting_size(t, self->chunk, self->info.device_bytes,
			     self->info.buddy_bytes);
	if (!s)
		SKIP(return, "no carve-out (max_ratio=1): nothing at target %u fits", t);
	if (s < 128 * 64)
		SKIP(return, "pools too small at target %u", t);
	/* about 40 allocations, none a whole number of chunks */
	size = s / 40 / 128 * 128 + 3 * 128;
	if (size % self->chunk == 0)
		size += 128;
	nd = need_device(size, t, self->chunk);
	nb = need_buddy(size, t, self->chunk);
	while ((r = pool_alloc(_metadata, self, size, t)) >= 0) {
		n++;
		dev += nd;
		bud += nb;
		if (n >= 200)
			break;
	}
	EXPECT_EQ(-ENOSPC, r) TH_LOG("fill ended with %s", r < 0 ? strerror(-r) : "success");
	TH_LOG("%d allocations of %llu bytes fill the pools", n, (unsigned long long)size);
	expect_used(_metadata, self->fd, dev, bud, "filled");
	EXPECT_TRUE(self->info.device_bytes - dev < nd ||
		    self->info.buddy_bytes - bud < nb) TH_LOG("ENOSPC with room left");
	for (i = 0; i < self->nfds; i += 2) {
		close(self->fds[i]);
		self->fds[i] = -1;
		freed++;
	}
	expect_used(_metadata, self->fd, dev - freed * nd, bud - freed * nb, "half freed");
	for (i = 0; i < freed; i++) {
		r = pool_alloc(_metadata, self, size, t);
		EXPECT_LE(0, r) TH_LOG("refill %d of %d: %s", i, freed, r < 0 ? strerror(-r) : "");
		if (r < 0)
			break;
	}
	expect_used(_metadata, self->fd, dev, bud, "refilled");
	must_fail(_metadata, self, size, t, ENOSPC, "one more after refill");
	close_all(self);
	EXPECT_IDLE(self->fd);
}

/* ---- NUMA placement ---- */

FIXTURE(nodes) {
	int fd;
	struct buddy_info info;
};

FIXTURE_SETUP(nodes)
{
	self->fd = -1;
	OPEN_DEVICE(&self->fd, &self->info);
}

FIXTURE_TEARDOWN(nodes)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int count_nodes(void)
{
	DIR *d = opendir("/sys/devices/system/node");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "node", 4) &&
		    de->d_name[4] >= '0' && de->d_name[4] <= '9')
			n++;
	closedir(d);
	return n;
}

/* "Node N MemUsed:  X kB" of /sys/devices/system/node/nodeN/meminfo. */
static long long node_used_kb(int node)
{
	char path[96], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MemUsed:");

		if (p) {
			v = strtoll(p + 8, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

TEST_F(nodes, node_arrays_add_up)
{
	uint64_t d = 0, b = 0;
	int n, k;

	SETUP_DONE();
	n = count_nodes();
	if (n > 0)
		EXPECT_EQ(n, (int)self->info.nr_nodes);
	for (k = 0; k < (int)self->info.nr_nodes; k++) {
		d += self->info.device_node_pages[k];
		b += self->info.buddy_node_pages[k];
	}
	EXPECT_EQ(self->info.device_bytes / 4096, d);
	EXPECT_EQ(self->info.buddy_bytes / 4096, b);
	EXPECT_EQ(kparam("device_node"), self->info.device_node);
	EXPECT_EQ(kparam("buddy_node"), self->info.buddy_node);
}

static void check_pool_node(struct __test_metadata *_metadata,
			    const struct buddy_info *info, int node,
			    const __u64 *pages, uint64_t bytes,
			    const char *what)
{
	long long used;
	int k;

	ASSERT_LT(node, (int)info->nr_nodes);
	for (k = 0; k < (int)info->nr_nodes; k++) {
		EXPECT_EQ(k == node ? bytes / 4096 : 0, pages[k])
			TH_LOG("%s pool pages on node %d (asked for node %d)", what, k, node);
	}
	used = node_used_kb(node);
	if (used >= 0) {
		uint64_t here = (info->device_node == node ? info->device_bytes : 0) +
				(info->buddy_node == node ? info->buddy_bytes : 0);

		EXPECT_LE(here / 1024, (uint64_t)used)
			TH_LOG("node%d/meminfo MemUsed %lld kB < the pools' %llu kB",
			       node, used, (unsigned long long)here / 1024);
	}
}

TEST_F(nodes, device_pool_on_its_node)
{
	SETUP_DONE();
	if (self->info.device_node < 0)
		SKIP(return, "module loaded without device_node=");
	check_pool_node(_metadata, &self->info, self->info.device_node,
			self->info.device_node_pages, self->info.device_bytes,
			"device");
}

TEST_F(nodes, buddy_pool_on_its_node)
{
	SETUP_DONE();
	if (self->info.buddy_node < 0)
		SKIP(return, "module loaded without buddy_node=");
	if (!self->info.buddy_bytes)
		SKIP(return, "no carve-out (max_ratio=1)");
	check_pool_node(_metadata, &self->info, self->info.buddy_node,
			self->info.buddy_node_pages, self->info.buddy_bytes,
			"buddy");
}

TEST_F(nodes, sysfs_node_pages_match)
{
	uint64_t v[BUDDY_MAX_NODES + 1];
	int n, k;

	SETUP_DONE();
	n = sysfs_u64s("device_node_pages", v, BUDDY_MAX_NODES + 1);
	ASSERT_EQ((int)self->info.nr_nodes, n);
	for (k = 0; k < n; k++)
		EXPECT_EQ(self->info.device_node_pages[k], v[k]);
	n = sysfs_u64s("buddy_node_pages", v, BUDDY_MAX_NODES + 1);
	ASSERT_EQ((int)self->info.nr_nodes, n);
	for (k = 0; k < n; k++)
		EXPECT_EQ(self->info.buddy_node_pages[k], v[k]);
}

TEST_HARNESS_MAIN
