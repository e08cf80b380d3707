// SPDX-License-Identifier: GPL-2.0
/*
 * buddy.ko selftest: concurrency.  Four threads and two forked processes,
 * a bounded number of operations each (never a time limit):
 *
 *  - shared_whole_entries: whole-entry pread/pwrite on one shared
 *    allocation; every entry is self-describing (its first 8 bytes seed the
 *    other 120), so a torn entry is caught on any read; the entry counters
 *    must add up to what the workers did, and the final size-code histogram
 *    must match the final bytes;
 *  - disjoint_slots_in_shared_entries: each worker owns 16 bytes of every
 *    entry and rewrites them with partial-entry writes (read-modify-write in
 *    the module); a lost update shows as a slot that is not its owner's
 *    last write;
 *  - private_allocations: each worker runs random unaligned I/O on its own
 *    allocation next to the model (kmod_util.c): bytes, codes and exact
 *    counters, while the others hammer the same pools;
 *  - alloc_free_churn: allocations created and freed concurrently, with
 *    GET_INFO; nothing leaks and ids never repeat within a worker;
 *  - race_for_the_last_space: all workers at once ask for a size of which
 *    only three fit; never more than three succeed, and the usage is exactly
 *    theirs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "kmod_test.h"

#define NR_THREADS	4
#define NR_PROCS	2
#define NR_WORKERS	(NR_THREADS + NR_PROCS)
#define SLOT		16	/* bytes of an entry each worker owns */

FIXTURE(stress) {
	int fd;
	struct buddy_info info;
};

FIXTURE_VARIANT(stress) {
	unsigned int target;
	unsigned int codec;
	unsigned int ops;	/* per worker */
};

FIXTURE_VARIANT_ADD(stress, t1x_bpc) { .target = 128, .codec = BUDDY_CODEC_BPC, .ops = 1500 };
FIXTURE_VARIANT_ADD(stress, t4_3x_fpc) { .target = 96, .codec = BUDDY_CODEC_FPC, .ops = 1500 };
FIXTURE_VARIANT_ADD(stress, t2x_bpc) { .target = 64, .codec = BUDDY_CODEC_BPC, .ops = 1500 };
FIXTURE_VARIANT_ADD(stress, t4x_zvc) { .target = 32, .codec = BUDDY_CODEC_ZVC, .ops = 1500 };
FIXTURE_VARIANT_ADD(stress, t16x_bdi) { .target = 8, .codec = BUDDY_CODEC_BDI, .ops = 1500 };

FIXTURE_SETUP(stress)
{
	self->fd = -1;
	OPEN_DEVICE(&self->fd, &self->info);
	if (variant->target != BUDDY_TARGET_1X && !self->info.buddy_bytes)
		SKIP(return, "no buddy carve-out (max_ratio=1)");
}

FIXTURE_TEARDOWN(stress)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* State shared by all workers (MAP_SHARED, so forked ones too). */
struct shared {
	int devfd;
	int afd;
	uint64_t size;
	unsigned int target, codec, ops;
	uint64_t entries_written;
	uint64_t entries_read;
	uint64_t errors;
	uint64_t torn;
	char msg[NR_WORKERS][256];
	/* disjoint_slots: each worker's last value of its slot, per entry */
	uint8_t *slots;		/* NR_WORKERS * nr * SLOT, shared */
	uint64_t nr;
	uint64_t ids[NR_WORKERS][2];	/* churn: first and last id seen */
	bool no_buddy;			/* max_ratio=1: only 1x fits */
	/* race: the size each worker asks for, and what came of it */
	uint64_t race_size;
	int race_ready, race_done, race_won;
	struct buddy_info race_info;
};

struct worker {
	struct shared *sh;
	int idx;
	void *(*fn)(struct worker *w);
};

static void fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&w->sh->errors, 1, __ATOMIC_SEQ_CST) == 0 ||
	    !w->sh->msg[w->idx][0]) {
		va_start(ap, fmt);
		vsnprintf(w->sh->msg[w->idx], sizeof(w->sh->msg[0]), fmt, ap);
		va_end(ap);
	}
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;

	return w->fn(w);
}

/* Run fn in NR_THREADS threads and NR_PROCS processes; wait for all. */
static void run_workers(struct __test_metadata *_metadata, struct shared *sh,
			void *(*fn)(struct worker *w))
{
	struct worker w[NR_WORKERS];
	pthread_t th[NR_THREADS];
	pid_t pids[NR_PROCS];
	int i, st;

	for (i = 0; i < NR_WORKERS; i++) {
		w[i].sh = sh;
		w[i].idx = i;
		w[i].fn = fn;
	}
	/* fork before any thread exists */
	for (i = 0; i < NR_PROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			fn(&w[NR_THREADS + i]);
			_exit(0);
		}
	}
	for (i = 0; i < NR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_main, &w[i]));
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NR_PROCS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("worker process %d: status %#x", i, st);
	}
	for (i = 0; i < NR_WORKERS; i++)
		if (sh->msg[i][0])
			TH_LOG("worker %d: %s", i, sh->msg[i]);
	EXPECT_EQ(0, sh->errors);
}

static struct shared *shared_new(struct __test_metadata *_metadata,
				 int devfd, const FIXTURE_VARIANT(stress) *v)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (sh == MAP_FAILED)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	sh->devfd = devfd;
	sh->afd = -1;
	sh->target = v->target;
	sh->codec = v->codec;
	sh->ops = v->ops;
	return sh;
}

static int shared_alloc(struct shared *sh, uint64_t size)
{
	struct buddy_alloc a = alloc_req(size, sh->target, sh->codec);

	if (ioctl(sh->devfd, BUDDY_IOC_ALLOC, &a))
		return -errno;
	sh->afd = a.fd;
	sh->size = size;
	return 0;
}

/* ---- self-describing entries ---- */

static void entry_of_seed(uint64_t seed, uint8_t *e)
{
	struct datagen_rng r;
	unsigned int i;

	memset(e, 0, 128);
	if (!seed)
		return;
	memcpy(e, &seed, 8);
	datagen_seed(&r, seed);
	switch (seed % 4) {
	case 0:	/* the seed alone: compressible */
		break;
	case 1:	/* a repeated word */
		for (i = 8; i < 128; i += 4)
			put_unaligned_le32((u32)seed, e + i);
		break;
	case 2:	/* a ramp */
		for (i = 8; i < 128; i += 4)
			put_unaligned_le32((u32)(seed >> 8) + i, e + i);
		break;
	default: /* random */
		for (i = 8; i < 128; i += 8) {
			uint64_t v = datagen_next(&r);

			memcpy(e + i, &v, 8);
		}
		break;
	}
}

static bool entry_consistent(const uint8_t *e)
{
	uint8_t want[128];
	uint64_t seed;

	memcpy(&seed, e, 8);
	entry_of_seed(seed, want);
	return !memcmp(want, e, 128);
}

static void *whole_entries_worker(struct worker *w)
{
	struct shared *sh = w->sh;
	uint64_t nr = sh->size / 128, written = 0, nread = 0, ctr = 0;
	uint8_t buf[4 * 128];
	struct datagen_rng r;
	unsigned int op;

	datagen_seed(&r, 0x5a5a0000 + w->idx);
	for (op = 0; op < sh->ops; op++) {
		unsigned int k = 1 + datagen_below(&r, 4), i;
		uint64_t e = datagen_below(&r, (uint32_t)(nr - k + 1));
		ssize_t n;

		if (datagen_below(&r, 2)) {
			for (i = 0; i < k; i++) {
				uint64_t seed = ((uint64_t)(w->idx + 1) << 40) | ++ctr;

				if (datagen_below(&r, 16) == 0)
					seed = 0;	/* a zero entry */
				entry_of_seed(seed, buf + i * 128);
			}
			n = pwrite(sh->afd, buf, k * 128, e * 128);
			if (n != (ssize_t)(k * 128)) {
				fail(w, "pwrite %u entries at %llu: %zd (%s)", k,
				     (unsigned long long)e, n, strerror(errno));
				break;
			}
			written += k;
		} else {
			n = pread(sh->afd, buf, k * 128, e * 128);
			if (n != (ssize_t)(k * 128)) {
				fail(w, "pread %u entries at %llu: %zd (%s)", k,
				     (unsigned long long)e, n, strerror(errno));
				break;
			}
			nread += k;
			for (i = 0; i < k; i++) {
				if (!entry_consistent(buf + i * 128)) {
					__atomic_fetch_add(&sh->torn, 1, __ATOMIC_SEQ_CST);
					fail(w, "torn entry %llu (op %u)",
					     (unsigned long long)e + i, op);
				}
			}
		}
	}
	__atomic_fetch_add(&sh->entries_written, written, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sh->entries_read, nread, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST_F_TIMEOUT(stress, shared_whole_entries, 600)
{
	uint64_t codes[BUDDY_CODE_SLOTS] = { 0 }, e;
	struct buddy_alloc_stat st;
	struct shared *sh;
	uint8_t *all;
	int k;

	SETUP_DONE();
	sh = shared_new(_metadata, self->fd, variant);
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, shared_alloc(sh, 256 * 128));
	run_workers(_metadata, sh, whole_entries_worker);
	EXPECT_EQ(0, sh->torn);

	ASSERT_EQ(0, buddy_alloc_stat(sh->afd, &st));
	EXPECT_EQ(sh->entries_written, st.counters.entry_writes);
	EXPECT_EQ(sh->entries_read, st.counters.entry_reads);
	EXPECT_LE(st.counters.buddy_accesses,
		  st.counters.entry_reads + st.counters.entry_writes);
	if (variant->target == BUDDY_TARGET_1X) {
		EXPECT_EQ(0, st.counters.buddy_sectors_written);
		EXPECT_EQ(0, st.counters.overflows);
	}
	all = malloc(sh->size);
	ASSERT_NE(NULL, all);
	ASSERT_EQ((ssize_t)sh->size, pread(sh->afd, all, sh->size, 0));
	for (e = 0; e < sh->size / 128; e++) {
		EXPECT_TRUE(entry_consistent(all + e * 128)) TH_LOG("entry %llu", (unsigned long long)e);
		codes[entry_code(variant->codec, all + e * 128)]++;
	}
	for (k = 0; k < BUDDY_CODE_SLOTS; k++) {
		EXPECT_EQ(codes[k], st.codes[k]) TH_LOG("code %d", k);
	}
	free(all);
	close(sh->afd);
	munmap(sh, sizeof(*sh));
}

static void *slots_worker(struct worker *w)
{
	struct shared *sh = w->sh;
	uint8_t *mine = sh->slots + (size_t)w->idx * sh->nr * SLOT;
	uint8_t v[SLOT], got[128];
	struct datagen_rng r;
	unsigned int op;

	datagen_seed(&r, 0x510700 + w->idx);
	for (op = 0; op < sh->ops; op++) {
		uint64_t e = datagen_below(&r, (uint32_t)sh->nr);
		uint64_t off = e * 128 + w->idx * SLOT;
		unsigned int what = datagen_below(&r, 4);
		ssize_t n;

		if (what < 2) {
			uint64_t a = datagen_next(&r), b = datagen_next(&r);

			memcpy(v, &a, 8);
			memcpy(v + 8, &b, 8);
			if (datagen_below(&r, 8) == 0)
				memset(v, 0, SLOT);	/* back to zero sometimes */
			n = pwrite(sh->afd, v, SLOT, off);
			if (n != SLOT) {
				fail(w, "pwrite slot: %zd (%s)", n, strerror(errno));
				break;
			}
			memcpy(mine + e * SLOT, v, SLOT);
		} else if (what == 2) {
			n = pread(sh->afd, v, SLOT, off);
			if (n != SLOT) {
				fail(w, "pread slot: %zd (%s)", n, strerror(errno));
				break;
			}
			if (memcmp(v, mine + e * SLOT, SLOT))
				fail(w, "entry %llu: my slot is not my last write (op %u)",
				     (unsigned long long)e, op);
		} else {
			n = pread(sh->afd, got, 128, e * 128);
			if (n != 128) {
				fail(w, "pread entry: %zd (%s)", n, strerror(errno));
				break;
			}
			if (memcmp(got + w->idx * SLOT, mine + e * SLOT, SLOT))
				fail(w, "entry %llu (whole): my slot is not my last write (op %u)",
				     (unsigned long long)e, op);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, disjoint_slots_in_shared_entries, 600)
{
	const uint64_t nr = 32;
	uint64_t codes[BUDDY_CODE_SLOTS] = { 0 }, e;
	struct buddy_alloc_stat st;
	uint8_t all[32 * 128], want[128];
	struct shared *sh;
	int k;

	SETUP_DONE();
	sh = shared_new(_metadata, self->fd, variant);
	ASSERT_NE(NULL, sh);
	sh->nr = nr;
	sh->slots = mmap(NULL, NR_WORKERS * nr * SLOT, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh->slots);
	ASSERT_EQ(0, shared_alloc(sh, nr * 128));
	run_workers(_metadata, sh, slots_worker);

	ASSERT_EQ((ssize_t)sizeof(all), pread(sh->afd, all, sizeof(all), 0));
	for (e = 0; e < nr; e++) {
		memset(want, 0, sizeof(want));
		for (k = 0; k < NR_WORKERS; k++)
			memcpy(want + k * SLOT, sh->slots + ((size_t)k * nr + e) * SLOT, SLOT);
		EXPECT_EQ(-1, first_diff(want, all + e * 128, 128))
			TH_LOG("entry %llu: lost update at byte %ld", (unsigned long long)e,
			       first_diff(want, all + e * 128, 128));
		codes[entry_code(variant->codec, want)]++;
	}
	ASSERT_EQ(0, buddy_alloc_stat(sh->afd, &st));
	for (k = 0; k < BUDDY_CODE_SLOTS; k++) {
		EXPECT_EQ(codes[k], st.codes[k]) TH_LOG("code %d", k);
	}
	/* every partial write is one read and one write */
	EXPECT_LE(st.counters.entry_writes, (uint64_t)NR_WORKERS * variant->ops);
	EXPECT_LE(st.counters.entry_writes, st.counters.entry_reads);
	close(sh->afd);
	munmap(sh->slots, NR_WORKERS * nr * SLOT);
	munmap(sh, sizeof(*sh));
}

static void *private_worker(struct worker *w)
{
	struct shared *sh = w->sh;
	struct buddy_alloc a = alloc_req(64 * 1024 + 128 * w->idx, sh->target, sh->codec);
	uint64_t codes[BUDDY_CODE_SLOTS];
	struct buddy_alloc_stat st;
	uint8_t *buf, *want;
	struct datagen_rng r;
	struct model m;
	unsigned int op;
	int k;

	if (ioctl(sh->devfd, BUDDY_IOC_ALLOC, &a)) {
		fail(w, "ALLOC: %s", strerror(errno));
		return NULL;
	}
	if (model_init(&m, a.size, sh->target, sh->codec)) {
		fail(w, "no memory");
		close(a.fd);
		return NULL;
	}
	buf = malloc(4096);
	want = malloc(4096);
	datagen_seed(&r, 0x9a1e + w->idx);
	for (op = 0; op < sh->ops && buf && want; op++) {
		uint64_t off = datagen_below(&r, (uint32_t)a.size + 64);
		size_t len = 1 + datagen_below(&r, datagen_below(&r, 2) ? 200 : 4096);
		ssize_t n, x;

		if (datagen_below(&r, 2)) {
			fill_class(datagen_below(&r, DATAGEN_NR), datagen_next(&r), buf, len);
			x = model_write(&m, buf, len, off);
			n = pwrite(a.fd, buf, len, off);
			if (n < 0)
				n = -errno;
			if (n != x) {
				fail(w, "pwrite %zu at %llu: %zd, want %zd", len,
				     (unsigned long long)off, n, x);
				break;
			}
		} else {
			x = model_read(&m, want, len, off);
			n = pread(a.fd, buf, len, off);
			if (n != x || (n > 0 && memcmp(buf, want, n))) {
				fail(w, "pread %zu at %llu: %zd (want %zd) or bytes differ at %ld",
				     len, (unsigned long long)off, n, x,
				     n > 0 ? first_diff(buf, want, n) : -1L);
				break;
			}
		}
	}
	if (!buddy_alloc_stat(a.fd, &st)) {
		const uint64_t *g = counters_u64(&st.counters);
		const uint64_t *x = counters_u64(&m.c);

		for (k = 0; k < 8; k++)
			if (g[k] != x[k])
				fail(w, "counter %s is %llu, want %llu", counter_name(k),
				     (unsigned long long)g[k], (unsigned long long)x[k]);
		model_codes(&m, codes);
		for (k = 0; k < BUDDY_CODE_SLOTS; k++)
			if (codes[k] != st.codes[k])
				fail(w, "histogram code %d is %llu, want %llu", k,
				     (unsigned long long)st.codes[k],
				     (unsigned long long)codes[k]);
	} else {
		fail(w, "ALLOC_STAT: %s", strerror(errno));
	}
	free(buf);
	free(want);
	model_free(&m);
	close(a.fd);
	return NULL;
}

TEST_F_TIMEOUT(stress, private_allocations, 600)
{
	struct shared *sh;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	sh = shared_new(_metadata, self->fd, variant);
	ASSERT_NE(NULL, sh);
	run_workers(_metadata, sh, private_worker);
	EXPECT_IDLE(self->fd);
	munmap(sh, sizeof(*sh));
}

static void *churn_worker(struct worker *w)
{
	struct shared *sh = w->sh;
	struct datagen_rng r;
	uint64_t last = 0;
	int live[4] = { -1, -1, -1, -1 };
	unsigned int op, i;

	datagen_seed(&r, 0xc4u + w->idx);
	for (op = 0; op < sh->ops; op++) {
		unsigned int slot = datagen_below(&r, 4);

		if (live[slot] >= 0) {
			close(live[slot]);
			live[slot] = -1;
		} else if (datagen_below(&r, 3)) {
			struct buddy_alloc a = alloc_req(1 + datagen_below(&r, 200000),
							 all_targets[datagen_below(&r, NR_TARGETS)],
							 datagen_below(&r, BUDDY_CODEC_NR));
			char c = 1;

			if (ioctl(sh->devfd, BUDDY_IOC_ALLOC, &a)) {
				if (errno != ENOSPC &&
				    !(errno == E2BIG && sh->no_buddy))
					fail(w, "ALLOC: %s", strerror(errno));
				continue;
			}
			if (a.id <= last)
				fail(w, "id %llu after %llu", (unsigned long long)a.id,
				     (unsigned long long)last);
			last = a.id;
			if (!sh->ids[w->idx][0])
				sh->ids[w->idx][0] = a.id;
			sh->ids[w->idx][1] = a.id;
			if (pwrite(a.fd, &c, 1, a.size - 1) != 1)
				fail(w, "pwrite to a new allocation: %s", strerror(errno));
			live[slot] = a.fd;
		} else {
			struct buddy_info info;

			if (buddy_get_info(sh->devfd, &info))
				fail(w, "GET_INFO failed");
			else if (info.device_used > info.device_bytes ||
				 info.buddy_used > info.buddy_bytes)
				fail(w, "usage over the pool size");
		}
	}
	for (i = 0; i < 4; i++)
		if (live[i] >= 0)
			close(live[i]);
	return NULL;
}

TEST_F_TIMEOUT(stress, alloc_free_churn, 600)
{
	struct shared *sh;

	SETUP_DONE();
	EXPECT_IDLE(self->fd);
	sh = shared_new(_metadata, self->fd, variant);
	ASSERT_NE(NULL, sh);
	sh->ops = variant->ops / 3;
	sh->no_buddy = !self->info.buddy_bytes;
	run_workers(_metadata, sh, churn_worker);
	EXPECT_IDLE(self->fd);
	munmap(sh, sizeof(*sh));
}

static void spin_until(int *v, int want)
{
	while (__atomic_load_n(v, __ATOMIC_SEQ_CST) < want)
		sched_yield();
}

static void *race_worker(struct worker *w)
{
	struct shared *sh = w->sh;
	struct buddy_alloc a = alloc_req(sh->race_size, sh->target, sh->codec);
	int won;

	__atomic_fetch_add(&sh->race_ready, 1, __ATOMIC_SEQ_CST);
	spin_until(&sh->race_ready, NR_WORKERS);
	won = !ioctl(sh->devfd, BUDDY_IOC_ALLOC, &a);
	if (!won && errno != ENOSPC)
		fail(w, "ALLOC: %s, want success or ENOSPC", strerror(errno));
	if (won)
		__atomic_fetch_add(&sh->race_won, 1, __ATOMIC_SEQ_CST);
	/* hold it until everybody has tried and worker 0 has looked */
	if (__atomic_add_fetch(&sh->race_done, 1, __ATOMIC_SEQ_CST) == NR_WORKERS)
		buddy_get_info(sh->devfd, &sh->race_info);
	spin_until(&sh->race_done, NR_WORKERS + 1);
	if (won)
		close(a.fd);
	return NULL;
}

/* Let the others go once race_info is taken (done reaches NR_WORKERS + 1). */
static void *race_watch(void *arg)
{
	struct shared *sh = arg;

	spin_until(&sh->race_done, NR_WORKERS);
	/* the last worker to finish took the snapshot before bumping past */
	while (!__atomic_load_n(&sh->race_info.abi_version, __ATOMIC_SEQ_CST))
		sched_yield();
	__atomic_fetch_add(&sh->race_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST_F_TIMEOUT(stress, race_for_the_last_space, 600)
{
	uint64_t smax, c, m, nd, nb;
	struct shared *sh;
	pthread_t watch;
	int round;

	SETUP_DONE();
	if (kparam("user_limit_mb") > 0)
		SKIP(return, "user_limit_mb is set: the quota would decide");
	smax = max_fitting_size(variant->target, self->info.chunk_bytes,
				self->info.device_bytes, self->info.buddy_bytes);
	c = smax / self->info.chunk_bytes;
	m = c / 4 + 1;
	if (3 * m > c)
		SKIP(return, "the pools hold only %llu chunks", (unsigned long long)c);
	nd = need_device(m * self->info.chunk_bytes, variant->target, self->info.chunk_bytes);
	nb = need_buddy(m * self->info.chunk_bytes, variant->target, self->info.chunk_bytes);
	for (round = 0; round < 5; round++) {
		EXPECT_IDLE(self->fd);
		sh = shared_new(_metadata, self->fd, variant);
		ASSERT_NE(NULL, sh);
		sh->race_size = m * self->info.chunk_bytes;
		ASSERT_EQ(0, pthread_create(&watch, NULL, race_watch, sh));
		run_workers(_metadata, sh, race_worker);
		pthread_join(watch, NULL);
		EXPECT_GE(3, sh->race_won) TH_LOG("round %d: %d of %d allocations of %llu bytes fit, 3 can",
						  round, sh->race_won, NR_WORKERS,
						  (unsigned long long)sh->race_size);
		EXPECT_LE(1, sh->race_won);
		if (sh->race_won != 3)
			TH_LOG("round %d: only %d of 3 possible allocations succeeded", round, sh->race_won);
		EXPECT_EQ((uint64_t)sh->race_won, sh->race_info.nr_allocs);
		EXPECT_EQ(sh->race_won * nd, sh->race_info.device_used);
		EXPECT_EQ(sh->race_won * nb, sh->race_info.buddy_used);
		munmap(sh, sizeof(*sh));
	}
	EXPECT_IDLE(self->fd);
}

TEST_HARNESS_MAIN
