// SPDX-License-Identifier: GPL-2.0
/*
 * buddy_fuzz - a seeded random-sequence fuzzer of the whole /dev/buddy ABI,
 * run in the QEMU guest (static, like the other selftests).
 *
 * Several worker processes, half of them root (the admin ioctls work) and
 * half unprivileged uids, run random operations at once: every ioctl with
 * valid and broken fields and sizes, on their own allocations and on the
 * ids of other users' and of closed ones; pread/pwrite/readv/writev/
 * read/write at random offsets and lengths; io_uring READ/WRITE and
 * URING_CMD submissions; fork (a child that continues the sequence, or one
 * that holds references and dies); close, dup, re-open; re-targets and
 * profile-table changes; mappings with loads and stores, msync, munmap,
 * MADV_DONTNEED and partial MAP_FIXED remaps; held copies (a helper
 * thread's process_vm_writev/readv or O_DIRECT transfer between a mapped
 * page and /dev/ram0, or an administrator's GET_MAP, parked on a
 * userfaultfd page while the worker goes on, closes the descriptor, evicts,
 * re-targets, then releases it); page-aligned reads while another thread
 * forks.  Every allocation has a shadow copy of its bytes:
 * each read is compared with it, GET_MAP's size codes and ALLOC_STAT's
 * histogram are compared with the codes the shared codecs (core/) give the
 * shadow, and an allocation is read in full before it is closed.  At the
 * end every pool byte must be back (GET_INFO, mm_stat).
 *
 * The operation grammar is in Documentation/fuzzing.rst; a syzkaller
 * description of the ioctls is selftests/kmod/buddy.syz.txt.
 *
 * Reproducing: worker w's choices come from splitmix64(seed, w) alone, so
 * `buddy_fuzz -s SEED -w 1 -n N` replays a run exactly; with several
 * workers each worker's sequence replays, their interleaving does not.  A
 * failure prints the seed, the worker, the operation number and the last
 * operations of that worker.
 *
 * With -f, about one buddy syscall in eight runs with fault injection
 * armed through /proc/thread-self/fail-nth (the N-th failslab,
 * fail_page_alloc or fail_function site reached by that syscall fails; the
 * guest script sets the attributes); the call may then fail with ENOMEM or
 * ENOSPC, but must leave the allocation exactly as it was or as the bytes
 * it reports written say.
 *
 * Output: kselftest-style TAP with a "# Totals:" line.  Exit status 0 when
 * every check held.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "kmod_util.h"
#include "core/stripe.h"
#include "uapi/linux/buddy.h"

/* the uapi's __u64 is unsigned long long: one type, one format */
typedef unsigned long long u64t;

#define MAX_WORKERS	16
#define MAX_ALLOCS	10	/* live allocations per worker */
#define REG_SLOTS	1024	/* ids seen by everybody (ring) */
#define TRACE_LEN	40	/* last operations kept per worker */
#define MAX_IO		(256 * 1024)
#define PG		4096u	/* the window's page: BUDDY_STRIPE_ENTRIES entries */
#define MAX_MAP_PAGES	64	/* per mapping */

#ifndef offsetofend
#define offsetofend(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))
#endif

/* ---- shared between all processes ---------------------------------------- */

struct reg_slot {
	u64t id;
	int owner;		/* worker index */
	int live;
};

/* A worker's last operations, where main() can print them on a hang. */
struct worker_log {
	u64t beat_ns;		/* when it (or its forked child) began one */
	unsigned int ntrace;
	char trace[TRACE_LEN][160];
};

struct shared {
	u64t ops;		/* operations done, all workers */
	u64t max_ops;
	u64t deadline_ns;
	int stop;
	int failed;
	unsigned int reg_next;
	struct reg_slot reg[REG_SLOTS];
	/* re-target sequence per registry slot: odd while a SET_TARGET on
	 * that id runs, bumped on every one (the owner's strict checks hold
	 * only when it did not move) */
	unsigned int retarget_seq[REG_SLOTS];
	u64t kinds[64][3];	/* per op: ok, expected error, fault fired */
	u64t faults;
	struct worker_log log[MAX_WORKERS];
};

static struct shared *sh;
static u64t seed;
static int nworkers = 4;
static bool fault_inject;
static bool verbose;
static double stall_s = 120;	/* -H */

/* ---- per worker --------------------------------------------------------------- */

struct alloc {
	int fd;			/* -1: slot free */
	u64t id;
	u64t size;
	u64t nr;		/* entries */
	unsigned int target, codec;
	char label[BUDDY_LABEL_LEN];
	uint8_t *shadow;	/* nr * 128 bytes, MAP_SHARED (fork children) */
	unsigned int reg;	/* registry slot */
	unsigned int seq;	/* its retarget_seq when target/codec were
				 * last known exactly; odd: not known */
	uint8_t *map;		/* its mapping (MAP_SHARED), or NULL */
	u64t map_off;		/* file offset of map[0], page-aligned */
	size_t map_len;		/* whole pages, maybe past the end */
};

static struct {
	int idx;
	uid_t uid;
	bool admin;
	struct datagen_rng rng;
	u64t opno;
	int dev;		/* /dev/buddy */
	struct alloc a[MAX_ALLOCS];
	struct io_uring ring;
	bool ring_ok;
	struct worker_log *log;	/* sh->log[idx]; a forked child's own copy */
	uint8_t *buf, *buf2;	/* MAX_IO each */
	pid_t async_kids[8];
	unsigned int nasync;
	bool in_child;
} W;

static const unsigned int targets[] = {
	BUDDY_TARGET_1X, BUDDY_TARGET_4_3X, BUDDY_TARGET_2X,
	BUDDY_TARGET_4X, BUDDY_TARGET_16X,
};
static const char *const labels[] = { "", "fuzz", "a", "weights", "kv-cache" };

static u64t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t rnd(uint32_t n)
{
	return n ? datagen_below(&W.rng, n) : 0;
}

static u64t rnd64(void)
{
	return datagen_next(&W.rng);
}

static bool chance(unsigned int pct)
{
	return rnd(100) < pct;
}

static void reap_async(void);

static void trace(const char *fmt, ...)
{
	char *t = W.log->trace[W.log->ntrace++ % TRACE_LEN];
	int n;
	va_list ap;

	n = snprintf(t, 160, "op %llu: ", W.opno);
	va_start(ap, fmt);
	vsnprintf(t + n, 160 - n, fmt, ap);
	va_end(ap);
	if (verbose)
		fprintf(stderr, "w%d %s\n", W.idx, t);
}

static void print_log(const struct worker_log *l, int idx)
{
	unsigned int i, first = l->ntrace > TRACE_LEN ? l->ntrace - TRACE_LEN : 0;

	printf("# last operations of worker %d:\n", idx);
	for (i = first; i < l->ntrace; i++)
		printf("#   %s\n", l->trace[i % TRACE_LEN]);
}

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	printf("# FAIL: seed %llu worker %d (uid %u%s) op %llu: ",
	       seed, W.idx, W.uid, W.in_child ? ", forked child" : "", W.opno);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	print_log(W.log, W.idx);
	printf("# replay this worker alone: buddy_fuzz -s %llu -w %d ... (worker %d's seed is splitmix(seed, %d))\n",
	       seed, nworkers, W.idx, W.idx);
	fflush(stdout);
	funlockfile(stdout);
	__atomic_store_n(&sh->failed, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	reap_async();	/* they hold references: the pools must empty */
	_exit(1);
}

/* ---- fault injection (fail-nth), one syscall at a time ------------------------- */

static int failnth_fd = -1;
static bool armed;

static void fi_arm(void)
{
	char b[16];
	int n;

	armed = false;
	if (!fault_inject || failnth_fd < 0 || !chance(12))
		return;
	n = snprintf(b, sizeof(b), "%u", 1 + rnd(rnd(2) ? 4 : 40));
	if (pwrite(failnth_fd, b, n, 0) == n)
		armed = true;
}

/* Disarm; true when the armed fault fired during the call. */
static bool fi_disarm(void)
{
	char b[16] = "";
	bool fired;

	if (!armed)
		return false;
	armed = false;
	if (pread(failnth_fd, b, sizeof(b) - 1, 0) <= 0)
		fail("cannot read fail-nth: %s", strerror(errno));
	fired = atoi(b) == 0;
	if (pwrite(failnth_fd, "0", 1, 0) != 1)
		fail("cannot reset fail-nth: %s", strerror(errno));
	if (fired)
		__atomic_add_fetch(&sh->faults, 1, __ATOMIC_RELAXED);
	return fired;
}

/* ---- operation kinds and their accounting -------------------------------------- */

enum op {
	OP_ALLOC, OP_ALLOC_BAD, OP_CLOSE, OP_WRITE, OP_READ, OP_VERIFY,
	OP_STAT_FD, OP_STAT_ID, OP_MAP_FD, OP_MAP_ID, OP_LIST, OP_SET_TARGET,
	OP_PROFILE_SET, OP_PROFILE_GET, OP_INFO, OP_BAD_IOCTL, OP_URING_RW,
	OP_URING_CMD, OP_FORK, OP_FORK_ASYNC, OP_DUP, OP_REOPEN, OP_SEEK,
	OP_MMAP, OP_MUNMAP, OP_MSYNC, OP_MTOUCH, OP_MAP_IO, OP_FSYNC,
	OP_WINDOW, OP_HOLD_PVM_WRITE, OP_HOLD_PVM_READ, OP_HOLD_DIRECT_READ,
	OP_HOLD_DIRECT_WRITE, OP_HOLD_ADMIN_MAP, OP_RELEASE, OP_DONTNEED,
	OP_REMAP, OP_FORK_READ, OP_NR
};

static const char *const op_names[OP_NR] = {
	"alloc", "alloc-invalid", "close", "write", "read", "verify",
	"stat-fd", "stat-id", "map-fd", "map-id", "list", "set-target",
	"profile-set", "profile-get", "info", "bad-ioctl", "uring-rw",
	"uring-cmd", "fork", "fork-async", "dup", "reopen", "seek",
	"mmap", "munmap", "msync", "mtouch", "map-io", "fsync", "window",
	"hold-pvm-write", "hold-pvm-read", "hold-dio-read", "hold-dio-write",
	"hold-admin-map", "release", "dontneed", "remap-fixed", "fork-read",
};

/* relative weights */
static const unsigned int op_weight[OP_NR] = {
	[OP_ALLOC] = 10, [OP_ALLOC_BAD] = 4, [OP_CLOSE] = 5, [OP_WRITE] = 22,
	[OP_READ] = 14, [OP_VERIFY] = 2, [OP_STAT_FD] = 4, [OP_STAT_ID] = 4,
	[OP_MAP_FD] = 4, [OP_MAP_ID] = 3, [OP_LIST] = 3, [OP_SET_TARGET] = 5,
	[OP_PROFILE_SET] = 3, [OP_PROFILE_GET] = 2, [OP_INFO] = 2,
	[OP_BAD_IOCTL] = 5, [OP_URING_RW] = 6, [OP_URING_CMD] = 3,
	[OP_FORK] = 1, [OP_FORK_ASYNC] = 1, [OP_DUP] = 2, [OP_REOPEN] = 1,
	[OP_SEEK] = 2, [OP_MMAP] = 4, [OP_MUNMAP] = 2, [OP_MSYNC] = 2,
	[OP_MTOUCH] = 12, [OP_MAP_IO] = 3, [OP_FSYNC] = 1, [OP_WINDOW] = 1,
	[OP_HOLD_PVM_WRITE] = 2, [OP_HOLD_PVM_READ] = 1,
	[OP_HOLD_DIRECT_READ] = 1, [OP_HOLD_DIRECT_WRITE] = 1,
	[OP_HOLD_ADMIN_MAP] = 1, [OP_RELEASE] = 4, [OP_DONTNEED] = 2,
	[OP_REMAP] = 2, [OP_FORK_READ] = 1,
};

static void count(enum op op, int how)
{
	__atomic_add_fetch(&sh->kinds[op][how], 1, __ATOMIC_RELAXED);
}

/* errno sets */
#define E(x)		((x) == EDQUOT ? 1ull << 63 : 1ull << (x))
static void expect(enum op op, long ret, int err, u64t allowed,
		   bool fired, const char *what)
{
	if (ret >= 0) {
		count(op, 0);
		return;
	}
	if ((err == EDQUOT || err < 63) && (allowed & E(err))) {
		count(op, 1);
		return;
	}
	/*
	 * An injected allocation failure surfaces as ENOMEM, ENOSPC (the
	 * pool allocator) or EFAULT (a user copy); io_uring answers
	 * ECANCELED when it cannot set up the io-wq worker that would have
	 * run the request.  buddy.ko itself never returns ECANCELED.
	 */
	if (fired && (err == ENOMEM || err == ENOSPC || err == EFAULT ||
		      err == ECANCELED)) {
		count(op, 2);
		return;
	}
	fail("%s: unexpected error %s (%d)%s", what, strerror(err), err,
	     fired ? " with a fault injected" : "");
}

/* An admin command from an unprivileged worker: EPERM, nothing else. */
static void want_eperm(enum op op, long ret, int err, const char *what)
{
	if (ret >= 0 || err != EPERM)
		fail("%s as uid %u: %ld (%s), want EPERM", what, W.uid, ret,
		     strerror(err));
	count(op, 1);
}

/* ---- the registry of ids ------------------------------------------------------- */

/* Publish @id; *seq: the slot's retarget_seq before it was published. */
static unsigned int reg_add(u64t id, unsigned int *seq)
{
	unsigned int s = __atomic_fetch_add(&sh->reg_next, 1, __ATOMIC_RELAXED) % REG_SLOTS;

	*seq = __atomic_load_n(&sh->retarget_seq[s], __ATOMIC_ACQUIRE);
	/* a live slot may be overwritten by the ring: its retarget_seq then
	 * serves two ids, which only makes the owner's checks laxer */
	sh->reg[s].owner = W.idx;
	__atomic_store_n(&sh->reg[s].id, id, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->reg[s].live, 1, __ATOMIC_RELEASE);
	return s;
}

static void reg_closed(unsigned int s, u64t id)
{
	if (__atomic_load_n(&sh->reg[s].id, __ATOMIC_ACQUIRE) == id)
		__atomic_store_n(&sh->reg[s].live, 0, __ATOMIC_RELEASE);
}

/* The registry slot of @id, or REG_SLOTS. */
static unsigned int reg_find(u64t id)
{
	for (unsigned int s = 0; s < REG_SLOTS && id; s++)
		if (__atomic_load_n(&sh->reg[s].id, __ATOMIC_ACQUIRE) == id)
			return s;
	return REG_SLOTS;
}

static unsigned int rseq(unsigned int s)
{
	return __atomic_load_n(&sh->retarget_seq[s], __ATOMIC_ACQUIRE);
}

/* An id to aim at: mine, someone else's, a closed one, or made up. */
static u64t pick_id(unsigned int *slot)
{
	unsigned int s = rnd(REG_SLOTS);

	*slot = REG_SLOTS;
	switch (rnd(6)) {
	case 0:
		return rnd(3) ? 0 : rnd64();
	case 1:
		return 1 + rnd(4);
	default:
		for (int tries = 0; tries < 8; tries++, s = rnd(REG_SLOTS)) {
			u64t id = __atomic_load_n(&sh->reg[s].id, __ATOMIC_ACQUIRE);

			if (id) {
				*slot = s;
				return id;
			}
		}
		return 1 + rnd(1000);
	}
}

/* ---- allocations ----------------------------------------------------------------- */

static struct alloc *pick_alloc(void)
{
	unsigned int i, n = 0, live[MAX_ALLOCS];

	for (i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0)
			live[n++] = i;
	return n ? &W.a[live[rnd(n)]] : NULL;
}

static struct alloc *free_slot(void)
{
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd < 0)
			return &W.a[i];
	return NULL;
}

/* Mostly small: the debug kernel is slow per byte, and ops are what count. */
static u64t pick_size(void)
{
	switch (rnd(50)) {
	case 0:
		return 1 + rnd(1024 * 1024);
	case 1 ... 4:
		return 4096 * (1 + rnd(16));
	case 5 ... 9:
		return 128 * (1 + rnd(64));
	case 10 ... 19:
		return 1 + rnd(32 * 1024);
	default:
		return 1 + rnd(4096);
	}
}

static void fill_data(uint8_t *p, size_t len)
{
	enum datagen_class c = rnd(DATAGEN_NR);

	datagen_fill(c, rnd64(), p, len);
	if (chance(20) && len > 1)	/* a few stray bytes */
		p[rnd(len)] ^= 1 + rnd(255);
}

/*
 * The shadow mapping: the bytes (nr * 128), then each entry's size code
 * under the codec named by the u32 after them, kept up to date as the
 * shadow changes (computing them all for every ALLOC_STAT is too slow
 * under TCG).  MAP_SHARED: a forked child's writes update the parent's.
 */
static size_t shadow_bytes(const struct alloc *a)
{
	return (a->nr * 129 + 7) / 8 * 8 + 8;
}

static uint8_t *ecodes(struct alloc *a)
{
	return a->shadow + a->nr * 128;
}

static unsigned int *codes_codec(struct alloc *a)
{
	return (unsigned int *)(a->shadow + (a->nr * 129 + 7) / 8 * 8);
}

/*
 * The window's state of the allocation, in the shadow mapping's spare word
 * so that a forked child's changes reach its parent: W_RES once it was
 * mapped (pages may be resident from then on, and pwrite of a resident
 * page only dirties it), W_DIRTY while the window may hold stores not yet
 * written back (the stored entries, ALLOC_STAT's histogram and GET_MAP lag
 * the shadow until fsync, msync, munmap, close, a re-target or eviction).
 */
#define W_RES	1u
#define W_DIRTY	2u

static unsigned int *wstate(struct alloc *a)
{
	return codes_codec(a) + 1;
}

/* The codes under @codec, recomputed when the codec changed. */
static const uint8_t *codes_for(struct alloc *a, unsigned int codec)
{
	if (*codes_codec(a) != codec) {
		for (u64t e = 0; e < a->nr; e++)
			ecodes(a)[e] = entry_code(codec, a->shadow + e * 128);
		*codes_codec(a) = codec;
	}
	return ecodes(a);
}

/* Shadow bytes [off, off + len) become @data. */
static void shadow_set(struct alloc *a, u64t off, const uint8_t *data, size_t len)
{
	unsigned int codec = *codes_codec(a);

	if (!len)
		return;
	if (*wstate(a) & W_RES)
		*wstate(a) |= W_DIRTY;
	memcpy(a->shadow + off, data, len);
	for (u64t e = off / 128; e <= (off + len - 1) / 128; e++)
		ecodes(a)[e] = entry_code(codec, a->shadow + e * 128);
}

static int do_alloc_ioctl(int fd, struct buddy_alloc *req, bool *fired)
{
	int r;

	fi_arm();
	r = ioctl(fd, BUDDY_IOC_ALLOC, req);
	*fired = fi_disarm();
	return r;
}

static void stat_alloc(struct alloc *a, struct buddy_alloc_stat *st, bool strict);

/* fsync: every dirty window page of @a written back (userspace-api.rst). */
static void sync_alloc(struct alloc *a)
{
	trace("fsync id %llu", a->id);
	if (fsync(a->fd))
		fail("fsync of id %llu: %s", a->id, strerror(errno));
	*wstate(a) &= ~W_DIRTY;
	count(OP_FSYNC, 0);
}

static void op_alloc(void)
{
	struct alloc *a = free_slot();
	struct buddy_alloc req = {};
	bool fired;
	int r, e;

	if (!a)
		return;
	req.size = pick_size();
	req.target = chance(25) ? BUDDY_TARGET_AUTO : targets[rnd(5)];
	req.codec = rnd(BUDDY_CODEC_NR);
	req.flags = rnd(2) ? BUDDY_ALLOC_CLOEXEC : 0;
	strcpy(req.label, labels[rnd(5)]);
	trace("alloc size %llu target %u codec %u label '%s'", req.size,
	      req.target, req.codec, req.label);
	r = do_alloc_ioctl(W.dev, &req, &fired);
	e = errno;
	expect(OP_ALLOC, r, e, E(ENOSPC) | E(EDQUOT) | E(E2BIG), fired, "ALLOC");
	if (r < 0)
		return;
	if (req.fd < 0 || fcntl(req.fd, F_GETFD) < 0)
		fail("ALLOC returned fd %d, not an open descriptor", req.fd);
	if (!!(fcntl(req.fd, F_GETFD) & FD_CLOEXEC) != !!(req.flags & BUDDY_ALLOC_CLOEXEC))
		fail("ALLOC fd %d: FD_CLOEXEC does not follow the flag", req.fd);
	if (!req.id)
		fail("ALLOC returned id 0");
	if (req.target == BUDDY_TARGET_AUTO || !buddy_target_valid(req.target))
		fail("ALLOC returned target %u", req.target);
	if (req.codec == BUDDY_CODEC_DEFAULT || req.codec >= BUDDY_CODEC_NR)
		fail("ALLOC returned codec %u", req.codec);
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0 && W.a[i].id >= req.id && !W.in_child)
			fail("ALLOC id %llu not above earlier id %llu",
			     req.id, W.a[i].id);
	a->fd = req.fd;
	a->id = req.id;
	a->size = req.size;
	a->nr = (req.size + 127) / 128;
	a->target = req.target;
	a->codec = req.codec;
	memcpy(a->label, req.label, sizeof(a->label));
	a->map = NULL;
	a->map_len = 0;
	a->shadow = mmap(NULL, shadow_bytes(a), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a->shadow == MAP_FAILED)
		fail("mmap shadow: %s", strerror(errno));
	*codes_codec(a) = a->codec;	/* all zero: code ZERO under any codec */
	/* nobody re-targets an id before it is published (made-up ids of
	 * SET_TARGET cannot be live): target and codec are known exactly
	 * while the slot's sequence stays where it was */
	a->reg = reg_add(a->id, &a->seq);
	if (a->seq & 1)
		a->seq = 1;
	trace("  -> fd %d id %llu target %u codec %u", a->fd, a->id,
	      a->target, a->codec);
	{
		struct buddy_alloc_stat st;

		stat_alloc(a, &st, true);
	}
}

static void op_alloc_bad(void)
{
	struct buddy_alloc req = {};
	int r, e, field = rnd(10);
	u64t want = E(EINVAL);
	bool fired;

	req.size = pick_size();
	req.target = targets[rnd(5)];
	switch (field) {
	case 0: req.size = 0; break;
	case 1: req.target = 1 + rnd(127); if (buddy_target_valid(req.target)) req.target = 129; break;
	case 2: req.codec = BUDDY_CODEC_NR + rnd(100); break;
	case 3: req.flags = 1u << (1 + rnd(31)); break;
	case 4: req.fd = 1 + rnd(100); break;
	case 5: req.id = 1 + rnd(100); break;
	case 6: req.reserved = 1 + rnd(100); break;
	case 7: req.target_source = 1 + rnd(3); break;
	case 8:
		memset(req.label, 'x', sizeof(req.label));	/* no NUL */
		if (rnd(2)) {
			req.label[0] = 0;	/* garbage after the NUL */
		} else if (rnd(2)) {
			strcpy(req.label, "a/b");
		} else {
			strcpy(req.label, "tab\there");
		}
		break;
	default:
		req.size = (1ull << 50) + 1 + rnd64() % (1ull << 60);
		want = E(E2BIG);
		break;
	}
	trace("alloc-invalid field %d", field);
	r = do_alloc_ioctl(W.dev, &req, &fired);
	e = errno;
	if (r >= 0) {
		close(req.fd);
		fail("ALLOC with broken field %d succeeded (id %llu)", field, req.id);
	}
	expect(OP_ALLOC_BAD, r, e, want, fired, "ALLOC (invalid)");
}

static bool entry_zero(const uint8_t *p)
{
	for (int i = 0; i < 128; i++)
		if (p[i])
			return false;
	return true;
}

static void check_stat(struct alloc *a, struct buddy_alloc_stat *st,
		       bool strict, unsigned int seq0)
{
	u64t sum = 0, want[BUDDY_CODE_SLOTS] = {};

	if (st->id != a->id || st->size != a->size || st->nr_entries != a->nr)
		fail("ALLOC_STAT of id %llu: id %llu size %llu"
		     " nr_entries %llu, want %llu %llu %llu",
		     a->id, st->id, st->size, st->nr_entries, a->id, a->size, a->nr);
	if (!buddy_target_valid(st->target) || !st->codec || st->codec >= BUDDY_CODEC_NR)
		fail("ALLOC_STAT of id %llu: target %u codec %u", a->id,
		     st->target, st->codec);
	if (memcmp(st->label, a->label, BUDDY_LABEL_LEN))
		fail("ALLOC_STAT of id %llu: label '%.32s', want '%s'", a->id,
		     st->label, a->label);
	if (st->reserved || st->target_source > BUDDY_SRC_DEFAULT)
		fail("ALLOC_STAT of id %llu: reserved %u target_source %u",
		     a->id, st->reserved, st->target_source);
	for (int i = 0; i < BUDDY_CODE_SLOTS; i++) {
		sum += st->codes[i];
		if (i >= BUDDY_CODE_NR && st->codes[i])
			fail("ALLOC_STAT of id %llu: %llu entries of reserved code %d",
			     a->id, st->codes[i], i);
	}
	if (sum != a->nr)
		fail("ALLOC_STAT of id %llu: the histogram sums to %llu"
		     ", nr_entries is %llu", a->id, sum, a->nr);
	if (!strict || rseq(a->reg) != seq0 || (seq0 & 1) || a->seq != seq0)
		return;
	if (*wstate(a) & W_DIRTY) {	/* the window holds newer bytes */
		if (st->target != a->target || st->codec != a->codec)
			fail("ALLOC_STAT of id %llu: target %u codec %u, want %u %u",
			     a->id, st->target, st->codec, a->target, a->codec);
		return;
	}
	/* nobody re-targeted it meanwhile: target and codes are exact */
	if (st->target != a->target || st->codec != a->codec)
		fail("ALLOC_STAT of id %llu: target %u codec %u, want %u %u",
		     a->id, st->target, st->codec, a->target, a->codec);
	if (st->owner_uid != W.uid)
		fail("ALLOC_STAT of id %llu: owner_uid %u, want %u", a->id,
		     st->owner_uid, W.uid);
	{
		const uint8_t *codes = codes_for(a, a->codec);

		for (u64t e = 0; e < a->nr; e++)
			want[codes[e]]++;
	}
	for (int i = 0; i < BUDDY_CODE_NR; i++)
		if (want[i] != st->codes[i])
			fail("ALLOC_STAT of id %llu: %llu entries of code %d, the shadow has %llu",
			     a->id, st->codes[i], i, want[i]);
}

/* ALLOC_STAT on the allocation's own fd; refresh target/codec. */
static void stat_alloc(struct alloc *a, struct buddy_alloc_stat *st, bool strict)
{
	unsigned int seq0;
	bool fired;
	int r, e;

	if (strict && (*wstate(a) & W_DIRTY) && chance(50))
		sync_alloc(a);	/* then the histogram is exact again */
	seq0 = rseq(a->reg);
	memset(st, 0, sizeof(*st));
	st->id = rnd(2) ? a->id : 0;
	fi_arm();
	r = ioctl(a->fd, BUDDY_IOC_ALLOC_STAT, st);
	e = errno;
	fired = fi_disarm();
	expect(OP_STAT_FD, r, e, 0, fired, "ALLOC_STAT on the fd");
	if (r < 0)
		return;
	check_stat(a, st, strict, seq0);
	/* a re-target by another worker may have moved them */
	a->target = st->target;
	a->codec = st->codec;
	a->seq = !(seq0 & 1) && rseq(a->reg) == seq0 ? seq0 : 1;
}

/* Read [off, off+len) of @a and compare with the shadow. */
static void check_read(struct alloc *a, u64t off, size_t len, int how)
{
	size_t want = off >= a->size ? 0 : (off + len > a->size ? a->size - off : len);
	struct iovec iov[3];
	ssize_t r;
	bool fired;
	int e;

	memset(W.buf, 0xa5, len);
	if (off > a->size)
		how = 0;	/* lseek past the end is EINVAL */
	fi_arm();
	switch (how) {
	case 0:
		r = pread(a->fd, W.buf, len, off);
		break;
	case 1: {
		size_t c1 = len ? rnd(len + 1) : 0, c2 = len - c1 ? rnd(len - c1 + 1) : 0;

		iov[0] = (struct iovec){ W.buf, c1 };
		iov[1] = (struct iovec){ W.buf + c1, c2 };
		iov[2] = (struct iovec){ W.buf + c1 + c2, len - c1 - c2 };
		r = preadv(a->fd, iov, 3, off);
		break;
	}
	default:
		if (lseek(a->fd, off, SEEK_SET) != (off_t)off)
			fail("lseek(%llu) on id %llu: %s", off, a->id,
			     strerror(errno));
		r = read(a->fd, W.buf, len);
		break;
	}
	e = errno;
	fired = fi_disarm();
	expect(OP_READ, r, e, 0, fired, "read");
	if (r < 0)
		return;
	if ((size_t)r != want)
		fail("read of %zu at %llu from id %llu (size %llu"
		     "): %zd bytes, want %zu", len, off, a->id, a->size, r, want);
	if (r && memcmp(W.buf, a->shadow + off, r)) {
		long d = first_diff(W.buf, a->shadow + off, r);

		fail("read of %zu at %llu from id %llu"
		     ": byte %llu is 0x%02x, the shadow has 0x%02x",
		     len, off, a->id, off + d, W.buf[d], a->shadow[off + d]);
	}
}

/* After a failed or short write: every byte is old or new; adopt it. */
static void resync(struct alloc *a, u64t off, size_t len, const uint8_t *data)
{
	ssize_t r;

	if (off >= a->size)
		return;
	if (off + len > a->size)
		len = a->size - off;
	do
		r = pread(a->fd, W.buf2, len, off);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)len)
		fail("re-read of %zu at %llu from id %llu after a failed write: %zd (%s)",
		     len, off, a->id, r, r < 0 ? strerror(errno) : "short");
	for (size_t i = 0; i < len; i++)
		if (W.buf2[i] != a->shadow[off + i] && W.buf2[i] != data[i])
			fail("id %llu byte %llu is 0x%02x after a failed write: neither old 0x%02x nor new 0x%02x",
			     a->id, off + i, W.buf2[i], a->shadow[off + i], data[i]);
	shadow_set(a, off, W.buf2, len);
}

static void apply_write(struct alloc *a, u64t off, size_t len,
			const uint8_t *data, ssize_t r, int e, bool fired,
			const char *what)
{
	size_t want = off >= a->size ? 0 : (off + len > a->size ? a->size - off : len);

	if (!len) {
		if (r != 0)
			fail("%s of 0 bytes at %llu: %zd", what, off, r);
		count(OP_WRITE, 0);
		return;
	}
	if (off >= a->size) {
		if (r >= 0 || e != ENOSPC)
			fail("%s of %zu at %llu past the end of id %llu"
			     " (size %llu): %zd (%s), want ENOSPC", what, len,
			     off, a->id, a->size, r, r < 0 ? strerror(e) : "");
		count(OP_WRITE, 1);
		return;
	}
	if (r < 0) {
		expect(OP_WRITE, r, e, 0, fired, what);
		resync(a, off, len, data);
		return;
	}
	if ((size_t)r > want || ((size_t)r < want && !fired))
		fail("%s of %zu at %llu to id %llu (size %llu"
		     "): %zd bytes, want %zu", what, len, off, a->id, a->size, r, want);
	shadow_set(a, off, data, r);
	if ((size_t)r < want)
		resync(a, off + r, want - r, data + r);
	count(OP_WRITE, fired ? 2 : 0);
}

static void pick_range(struct alloc *a, u64t *off, size_t *len)
{
	u64t o;
	size_t l;

	switch (rnd(8)) {
	case 0:
		o = a->size + rnd(4096);	/* at or past the end */
		break;
	case 1:
		o = a->size > 4096 ? a->size - rnd(4096) : rnd(a->size);
		break;
	case 2:
		o = rnd(a->nr) * 128;
		break;
	default:
		o = rnd(a->size);
		break;
	}
	switch (rnd(50)) {
	case 0: l = 1 + rnd(MAX_IO); break;
	case 1 ... 4: l = 1 + rnd(32 * 1024); break;
	case 5 ... 9: l = rnd(4); break;
	case 10 ... 19: l = 128 * (1 + rnd(4)); break;
	case 20 ... 29: l = 1 + rnd(4096); break;
	default: l = 1 + rnd(256); break;
	}
	*off = o;
	*len = l;
}

static void op_write(void)
{
	struct alloc *a = pick_alloc();
	struct iovec iov[2];
	u64t off;
	size_t len;
	ssize_t r;
	bool fired;
	int e, how = rnd(3);

	if (!a)
		return;
	pick_range(a, &off, &len);
	if (off > a->size)
		how = 0;	/* lseek past the end is EINVAL */
	fill_data(W.buf, len);
	trace("write id %llu off %llu len %zu how %d", a->id, off, len, how);
	fi_arm();
	switch (how) {
	case 0:
		r = pwrite(a->fd, W.buf, len, off);
		break;
	case 1: {
		size_t c = len ? rnd(len + 1) : 0;

		iov[0] = (struct iovec){ W.buf, c };
		iov[1] = (struct iovec){ W.buf + c, len - c };
		r = pwritev(a->fd, iov, 2, off);
		break;
	}
	default:
		if (lseek(a->fd, off, SEEK_SET) != (off_t)off)
			fail("lseek(%llu) on id %llu: %s", off,
			     a->id, strerror(errno));
		r = write(a->fd, W.buf, len);
		break;
	}
	e = errno;
	fired = fi_disarm();
	apply_write(a, off, len, W.buf, r, e, fired, "write");
}

static void op_read(void)
{
	struct alloc *a = pick_alloc();
	u64t off;
	size_t len;
	int how = rnd(3);

	if (!a)
		return;
	pick_range(a, &off, &len);
	trace("read id %llu off %llu len %zu how %d", a->id, off, len, how);
	check_read(a, off, len, how);
}

static void verify_all(struct alloc *a)
{
	for (u64t off = 0; off < a->size; off += MAX_IO) {
		size_t len = a->size - off < MAX_IO ? a->size - off : MAX_IO;

		check_read(a, off, len, 0);
	}
}

static void op_verify(void)
{
	struct alloc *a = pick_alloc();
	struct buddy_alloc_stat st;

	if (!a)
		return;
	trace("verify id %llu size %llu", a->id, a->size);
	verify_all(a);
	stat_alloc(a, &st, true);
}

/* ---- mappings: mmap, munmap, msync, loads and stores -------------------------- */

/*
 * A SIGBUS is expected only at a page wholly past the end; mcopy() turns
 * one into a return value.  Any other SIGBUS or SIGSEGV kills the worker,
 * which fails the run.
 */
static sigjmp_buf bus_env;
static volatile sig_atomic_t bus_armed;
static void *volatile bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (!bus_armed) {
		static const char m[] = "# FAIL: SIGBUS outside a mapped access\n";

		(void)!write(1, m, sizeof(m) - 1);
		__atomic_store_n(&sh->failed, 1, __ATOMIC_SEQ_CST);
		_exit(1);
	}
	bus_armed = 0;
	bus_addr = si->si_addr;
	siglongjmp(bus_env, 1);
}

/* memcpy(); the address of a SIGBUS it met, or NULL. */
static void *mcopy(void *dst, const void *src, size_t len)
{
	if (sigsetjmp(bus_env, 1))
		return bus_addr;
	bus_armed = 1;
	memcpy(dst, src, len);
	bus_armed = 0;
	return NULL;
}

/* Bytes of a mapping of @a that may be touched: its pages up to the end. */
static u64t map_end(const struct alloc *a)
{
	return (a->size + PG - 1) / PG * PG;
}

static struct alloc *pick_mapped(void)
{
	unsigned int i, n = 0, live[MAX_ALLOCS];

	for (i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0 && W.a[i].map)
			live[n++] = i;
	return n ? &W.a[live[rnd(n)]] : NULL;
}

/*
 * Load [fo, fo + len) (file offsets inside the mapping) and compare with
 * the shadow: bytes past the end in the last page read 0, a page wholly
 * past the end raises SIGBUS.
 */
static void mload(struct alloc *a, u64t fo, size_t len)
{
	u64t end = map_end(a), n = fo >= end ? 0 : (fo + len > end ? end - fo : len);
	uint8_t *p = a->map + (fo - a->map_off);
	void *bus;

	memset(W.buf, 0xa5, n);
	bus = mcopy(W.buf, p, n);
	if (bus)
		fail("load of %llu at %llu from id %llu (size %llu) mapped at %llu: SIGBUS at %p",
		     n, fo, a->id, a->size, a->map_off, bus);
	for (u64t i = 0; i < n; i++) {
		uint8_t want = fo + i < a->size ? a->shadow[fo + i] : 0;

		if (W.buf[i] != want)
			fail("load of %llu at %llu from id %llu (size %llu): byte %llu is 0x%02x, the shadow has 0x%02x",
			     n, fo, a->id, a->size, fo + i, W.buf[i], want);
	}
	if (n < len) {	/* on into the pages past the end */
		bus = mcopy(W.buf, p + n, 1);
		if (bus != p + n)
			fail("load at %llu of id %llu (size %llu): %s, want SIGBUS",
			     fo + n, a->id, a->size, bus ? "SIGBUS elsewhere" : "no SIGBUS");
		count(OP_MTOUCH, 1);
		return;
	}
	count(OP_MTOUCH, 0);
}

/*
 * Store into [fo, fo + len): bytes up to the end become new data (the
 * tail of the last page is left alone: stores there are dropped), a page
 * wholly past the end raises SIGBUS.
 */
static void mstore(struct alloc *a, u64t fo, size_t len)
{
	u64t n = fo >= a->size ? 0 : (fo + len > a->size ? a->size - fo : len);
	uint8_t *p = a->map + (fo - a->map_off);
	u64t end = map_end(a);
	void *bus;

	fill_data(W.buf, n);
	bus = mcopy(p, W.buf, n);
	if (bus)
		fail("store of %llu at %llu to id %llu (size %llu) mapped at %llu: SIGBUS at %p",
		     n, fo, a->id, a->size, a->map_off, bus);
	shadow_set(a, fo, W.buf, n);
	if (fo + len > end) {
		uint8_t *q = a->map + ((fo > end ? fo : end) - a->map_off);
		uint8_t x = 0x5a;

		bus = mcopy(q, &x, 1);
		if (bus != q)
			fail("store at %llu of id %llu (size %llu): %s, want SIGBUS",
			     (u64t)(q - a->map) + a->map_off, a->id, a->size,
			     bus ? "SIGBUS elsewhere" : "no SIGBUS");
		count(OP_MTOUCH, 1);
		return;
	}
	count(OP_MTOUCH, 0);
}

/* munmap pages [first, first + n) of @a's mapping: a prefix, a suffix, all. */
static void unmap_pages(struct alloc *a, size_t first, size_t n)
{
	bool fired;
	int r, e;

	trace("munmap id %llu pages %zu+%zu of %zu at %llu", a->id, first, n,
	      a->map_len / PG, a->map_off);
	fi_arm();
	r = munmap(a->map + first * PG, n * PG);
	e = errno;
	fired = fi_disarm();
	expect(OP_MUNMAP, r, e, 0, fired, "munmap");
	if (r)
		return;
	if (n * PG == a->map_len) {
		a->map = NULL;
		a->map_len = 0;
	} else if (!first) {
		a->map += n * PG;
		a->map_off += n * PG;
		a->map_len -= n * PG;
	} else {
		a->map_len -= n * PG;
	}
}

static void op_mmap(void)
{
	struct alloc *a = pick_alloc();
	u64t pages, pg, np;
	bool fired;
	void *p;
	int e;

	if (!a)
		return;
	pages = map_end(a) / PG;
	switch (rnd(20)) {
	case 0:	/* MAP_PRIVATE: EINVAL */
		trace("mmap id %llu MAP_PRIVATE", a->id);
		p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, a->fd, 0);
		if (p != MAP_FAILED)
			fail("mmap MAP_PRIVATE of id %llu succeeded", a->id);
		expect(OP_MMAP, -1, errno, E(EINVAL), false, "mmap MAP_PRIVATE");
		return;
	case 1:	/* /dev/buddy itself: ENODEV */
		trace("mmap /dev/buddy");
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, W.dev, 0);
		if (p != MAP_FAILED)
			fail("mmap of /dev/buddy succeeded");
		expect(OP_MMAP, -1, errno, E(ENODEV), false, "mmap /dev/buddy");
		return;
	}
	if (a->map)
		unmap_pages(a, 0, a->map_len / PG);
	if (a->map)
		return;
	/* from any page, now and then one wholly past the end */
	pg = chance(5) ? pages + rnd(2) : rnd(pages);
	np = 1 + rnd(pages > pg ? pages - pg + 1 : 1);
	if (np > MAX_MAP_PAGES)
		np = 1 + rnd(MAX_MAP_PAGES);
	trace("mmap id %llu pages %llu+%llu (size %llu)", a->id, pg, np, a->size);
	fi_arm();
	p = mmap(NULL, np * PG, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd,
		 pg * PG);
	e = errno;
	fired = fi_disarm();
	expect(OP_MMAP, p == MAP_FAILED ? -1 : 0, e, 0, fired, "mmap");
	if (p == MAP_FAILED)
		return;
	a->map = p;
	a->map_off = pg * PG;
	a->map_len = np * PG;
	*wstate(a) |= W_RES;
}

static void op_munmap(void)
{
	struct alloc *a = pick_mapped();
	size_t np, n;
	u64t off;

	if (!a)
		return;
	np = a->map_len / PG;
	n = np > 1 && chance(40) ? 1 + rnd(np - 1) : np;
	off = a->map_off + (n < np && rnd(2) ? (np - n) * PG : 0);
	unmap_pages(a, (off - a->map_off) / PG, n);
	/* munmap wrote the pages back: pread sees the stores */
	if (chance(50) && off < a->size)
		check_read(a, off, n * PG, 0);
}

static void op_msync(void)
{
	struct alloc *a = pick_mapped();
	size_t np, first, n;
	int flags, r, e;
	bool fired;

	if (!a)
		return;
	np = a->map_len / PG;
	first = rnd(np);
	n = 1 + rnd(np - first);
	flags = chance(80) ? MS_SYNC : chance(50) ? MS_ASYNC : MS_SYNC | MS_INVALIDATE;
	if (chance(5)) {	/* not page-aligned, or both SYNC and ASYNC */
		trace("msync id %llu invalid", a->id);
		r = rnd(2) ? msync(a->map + 1, PG, MS_SYNC) :
			     msync(a->map, PG, MS_SYNC | MS_ASYNC);
		if (!r)
			fail("invalid msync of id %llu succeeded", a->id);
		expect(OP_MSYNC, r, errno, E(EINVAL), false, "msync (invalid)");
		return;
	}
	trace("msync id %llu pages %zu+%zu flags %#x", a->id, first, n, flags);
	fi_arm();
	r = msync(a->map + first * PG, n * PG, flags);
	e = errno;
	fired = fi_disarm();
	expect(OP_MSYNC, r, e, 0, fired, "msync");
	if (!r && (flags & MS_SYNC) && chance(50))
		check_read(a, a->map_off + first * PG, n * PG, rnd(2));
}

static void op_mtouch(void)
{
	struct alloc *a = pick_mapped();
	size_t o, len;

	if (!a) {
		op_mmap();
		return;
	}
	o = rnd(a->map_len);
	switch (rnd(4)) {
	case 0: len = 1 + rnd(a->map_len - o); break;
	case 1: len = 1 + rnd(8); break;
	default: len = 1 + rnd(a->map_len - o < 512 ? a->map_len - o : 512); break;
	}
	if (len > a->map_len - o)
		len = a->map_len - o;
	if (rnd(2)) {
		trace("mstore id %llu off %llu len %zu", a->id, a->map_off + o, len);
		mstore(a, a->map_off + o, len);
	} else {
		trace("mload id %llu off %llu len %zu", a->id, a->map_off + o, len);
		mload(a, a->map_off + o, len);
	}
}

/*
 * pread/pwrite whose user buffer is another allocation's mapping: the
 * module's copies fault window pages in while it holds nothing.
 */
static void op_map_io(void)
{
	struct alloc *b = pick_mapped(), *a = pick_alloc();
	u64t boff, off, valid;
	size_t len;
	ssize_t r;
	bool write = rnd(2);
	int e;

	if (!a || !b || a == b || b->map_off >= b->size)
		return;
	valid = b->size - b->map_off;	/* bytes of the mapping before the end */
	if (valid > b->map_len)
		valid = b->map_len;
	boff = rnd(valid);
	len = 1 + rnd(valid - boff);
	off = rnd(a->size);
	if (len > a->size - off)
		len = a->size - off;
	trace("map-io %s id %llu off %llu len %zu via id %llu at %llu",
	      write ? "pwrite" : "pread", a->id, off, len, b->id,
	      b->map_off + boff);
	if (write) {
		/* resync() uses W.buf2: the expected bytes go in W.buf */
		memcpy(W.buf, b->shadow + b->map_off + boff, len);
		r = pwrite(a->fd, b->map + boff, len, off);
		e = errno;
		apply_write(a, off, len, W.buf, r, e, false, "pwrite from a mapping");
		return;
	}
	r = pread(a->fd, b->map + boff, len, off);
	e = errno;
	expect(OP_MAP_IO, r, e, 0, false, "pread into a mapping");
	if (r != (ssize_t)len)
		fail("pread of %zu at %llu from id %llu into a mapping: %zd",
		     len, off, a->id, r);
	if (memcmp(b->map + boff, a->shadow + off, len))
		fail("pread of %zu at %llu from id %llu into id %llu's mapping: the bytes differ from the shadow",
		     len, off, a->id, b->id);
	shadow_set(b, b->map_off + boff, a->shadow + off, len);
}

static void op_fsync(void)
{
	struct alloc *a = pick_alloc();

	if (a)
		sync_alloc(a);
}

/* window_mb (root): shrinking evicts every worker's pages at once. */
static void op_window(void)
{
	static const char *const mb[] = { "1", "1", "2", "16" };
	const char *v = mb[rnd(4)];
	int fd;

	if (!W.admin)
		return;
	fd = open("/sys/module/buddy/parameters/window_mb", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fail("open window_mb: %s", strerror(errno));
	trace("window_mb %s", v);
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		fail("write window_mb: %s", strerror(errno));
	close(fd);
	count(OP_WINDOW, 0);
}

static void close_alloc(struct alloc *a, bool verify)
{
	if (verify)
		verify_all(a);
	trace("close id %llu fd %d", a->id, a->fd);
	if (close(a->fd))
		fail("close(%d) of id %llu: %s", a->fd, a->id, strerror(errno));
	if (!W.in_child)
		reg_closed(a->reg, a->id);
	if (a->map) {
		/* the mapping outlives the descriptor */
		if (chance(50) && a->map_off < map_end(a))
			mload(a, a->map_off, map_end(a) - a->map_off < a->map_len ?
					     map_end(a) - a->map_off : a->map_len);
		trace("munmap id %llu (closed)", a->id);
		if (munmap(a->map, a->map_len))
			fail("munmap of closed id %llu: %s", a->id, strerror(errno));
		a->map = NULL;
	}
	munmap(a->shadow, shadow_bytes(a));
	a->fd = -1;
}

static void op_close(void)
{
	struct alloc *a = pick_alloc();

	if (a) {
		close_alloc(a, chance(50));
		count(OP_CLOSE, 0);
	}
}

static void op_stat_fd(void)
{
	struct alloc *a = pick_alloc();
	struct buddy_alloc_stat st;
	int r, e;

	if (!a)
		return;
	trace("stat-fd id %llu", a->id);
	if (chance(70)) {
		stat_alloc(a, &st, true);
		return;
	}
	/* someone else's id on my fd: EINVAL */
	memset(&st, 0, sizeof(st));
	st.id = a->id + 1 + rnd(5);
	r = ioctl(a->fd, BUDDY_IOC_ALLOC_STAT, &st);
	e = errno;
	if (r >= 0)
		fail("ALLOC_STAT on id %llu's fd with id %llu succeeded",
		     a->id, st.id);
	expect(OP_STAT_FD, r, e, E(EINVAL), false, "ALLOC_STAT (other id)");
}

static struct alloc *mine(u64t id)
{
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0 && W.a[i].id == id)
			return &W.a[i];
	return NULL;
}

static void op_stat_id(void)
{
	struct buddy_alloc_stat st = {};
	unsigned int slot;
	struct alloc *a;
	bool fired;
	int r, e;

	st.id = pick_id(&slot);
	a = mine(st.id);
	trace("stat-id %llu%s", st.id, a ? " (mine)" : "");
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_ALLOC_STAT, &st);
	e = errno;
	fired = fi_disarm();
	if (!W.admin) {
		want_eperm(OP_STAT_ID, r, e, "ALLOC_STAT by id");
		return;
	}
	if (a && r < 0 && !fired)
		fail("ALLOC_STAT of my live id %llu: %s", st.id, strerror(e));
	expect(OP_STAT_ID, r, e, E(ENOENT), fired, "ALLOC_STAT by id");
	if (r >= 0 && a)
		check_stat(a, &st, false, 0);
}

static void check_map(struct alloc *a, u64t first, u64t n,
		      const uint8_t *got, unsigned int seq0)
{
	bool exact = !(seq0 & 1) && rseq(a->reg) == seq0 && a->seq == seq0;
	const uint8_t *want = codes_for(a, a->codec) + first;
	bool lag = *wstate(a) & W_DIRTY;	/* the window holds newer bytes */

	for (u64t i = 0; i < n; i++) {
		unsigned int c = (got[i / 2] >> (4 * (i & 1))) & 15;
		bool z = entry_zero(a->shadow + (first + i) * 128);

		if (c >= BUDDY_CODE_NR ||
		    (!lag && ((c == BUDDY_CODE_ZERO) != z ||
			      (exact && c != want[i]))))
			fail("GET_MAP of id %llu: entry %llu"
			     " has code %u, the shadow gives %u (codec %u)",
			     a->id, first + i, c, want[i], a->codec);
	}
	if (n & 1 && got[n / 2] >> 4)
		fail("GET_MAP of id %llu: high nibble after the last entry is set", a->id);
}

static void do_map(int fd, struct alloc *a, u64t id, enum op op)
{
	struct buddy_map m = { .id = id };
	u64t nr = a ? a->nr : 64;
	unsigned int seq0;
	u64t want_err = 0;
	uint8_t *buf = W.buf2;
	bool fired;
	int r, e;

	if (a && (*wstate(a) & W_DIRTY) && chance(50))
		sync_alloc(a);	/* then the codes are exact again */
	seq0 = a ? rseq(a->reg) : 0;
	m.first = rnd(nr + 1);
	m.count = rnd(nr - m.first + 1);
	if (m.count > 2 * MAX_IO - 2)
		m.count = 2 * MAX_IO - 2;
	switch (rnd(8)) {
	case 0:
		m.count = nr - m.first + 1 + rnd(10);	/* past the end */
		want_err = E(EINVAL);
		break;
	case 1:
		m.first = UINT64_MAX - rnd(10);
		m.count = 2 + rnd(10);	/* overflows */
		want_err = E(EINVAL);
		break;
	case 2:
		if (m.count) {
			buf = (uint8_t *)8;	/* unmapped */
			want_err = E(EFAULT);
		}
		break;
	}
	memset(W.buf2, 0xee, (m.count + 1) / 2 + 1);
	if (buf == W.buf2)
		memset(buf, 0, (m.count + 1) / 2);
	m.codes_ptr = (uintptr_t)buf;
	trace("%s id %llu first %llu count %llu", op_names[op],
	      id, m.first, m.count);
	fi_arm();
	r = ioctl(fd, BUDDY_IOC_GET_MAP, &m);
	e = errno;
	fired = fi_disarm();
	if (op == OP_MAP_ID && !W.admin) {
		want_eperm(op, r, e, "GET_MAP by id");
		return;
	}
	if (!a) {	/* someone else's or no one's */
		expect(op, r, e, E(ENOENT) | E(EINVAL) | E(EFAULT), fired, "GET_MAP");
		return;
	}
	if (r >= 0 && want_err)
		fail("GET_MAP of id %llu first %llu count %llu"
		     " (nr %llu, buffer %p) succeeded", id, m.first, m.count,
		     nr, (void *)buf);
	if (r < 0 && !want_err && !fired)
		fail("GET_MAP of id %llu first %llu count %llu"
		     ": %s", id, m.first, m.count, strerror(e));
	expect(op, r, e, want_err, fired, "GET_MAP");
	if (r < 0)
		return;
	if (W.buf2[(m.count + 1) / 2] != 0xee)
		fail("GET_MAP of %llu entries wrote past (count + 1) / 2 bytes", m.count);
	check_map(a, m.first, m.count, W.buf2, seq0);
}

static void op_map_fd(void)
{
	struct alloc *a = pick_alloc();

	if (!a)
		return;
	if (chance(10)) {	/* another id on my fd */
		struct buddy_map m = { .id = a->id + 1, .count = 1,
				       .codes_ptr = (uintptr_t)W.buf2 };
		int r = ioctl(a->fd, BUDDY_IOC_GET_MAP, &m);

		if (r >= 0 || errno != EINVAL)
			fail("GET_MAP on id %llu's fd with id %llu"
			     ": %d (%s), want EINVAL", a->id, m.id, r, strerror(errno));
		count(OP_MAP_FD, 1);
		return;
	}
	do_map(a->fd, a, rnd(2) ? a->id : 0, OP_MAP_FD);
}

static void op_map_id(void)
{
	unsigned int slot;
	u64t id = pick_id(&slot);
	struct alloc *a = mine(id);

	if (!a && chance(40) && (a = pick_alloc()))
		id = a->id;
	do_map(W.dev, a, id, OP_MAP_ID);
}

static void op_list(void)
{
	size_t v1 = offsetofend(struct buddy_alloc_stat, counters);
	struct buddy_list l = {};
	uint8_t *buf = W.buf2;
	u64t want_err = 0;
	bool fired;
	int r, e;

	l.stat_size = rnd(4) ? sizeof(struct buddy_alloc_stat) : v1 + 8 * rnd(8);
	if (chance(10)) {
		l.stat_size = rnd(v1);
		want_err = E(EINVAL);
	}
	l.count = rnd(4) ? rnd(rnd(8) ? 64 : MAX_IO / (l.stat_size ? l.stat_size : 1)) : 0;
	l.start_id = rnd(2) ? 0 : rnd64() % 4096;
	if (chance(8) && l.count) {
		buf = (uint8_t *)16;
		want_err |= E(EFAULT);
	}
	l.stats_ptr = (uintptr_t)buf;
	trace("list stat_size %u count %u start %llu", l.stat_size, l.count, l.start_id);
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_LIST, &l);
	e = errno;
	fired = fi_disarm();
	if (!W.admin) {
		want_eperm(OP_LIST, r, e, "LIST");
		return;
	}
	if (l.stat_size < v1 && r >= 0)
		fail("LIST with stat_size %u succeeded", l.stat_size);
	if (buf != W.buf2 && r >= 0 && l.count)
		fail("LIST into an unmapped buffer wrote %u elements", l.count);
	if (r < 0 && !want_err && !fired)
		fail("LIST: %s", strerror(e));
	/* EFAULT only when something was to be written */
	expect(OP_LIST, r, e, want_err, fired, "LIST");
	if (r < 0)
		return;
	if (l.count > l.total)
		fail("LIST: count %u > total %llu", l.count, l.total);
	for (unsigned int i = 0; i < l.count; i++) {
		struct buddy_alloc_stat st = {};
		struct alloc *a;

		memcpy(&st, W.buf2 + (size_t)i * l.stat_size,
		       l.stat_size < sizeof(st) ? l.stat_size : sizeof(st));
		if (st.id < l.start_id || (i && st.id <= ((struct buddy_alloc_stat *)
				(W.buf2 + (size_t)(i - 1) * l.stat_size))->id))
			fail("LIST: element %u has id %llu (start %llu, not in id order)",
			     i, st.id, l.start_id);
		for (size_t k = sizeof(st); k < l.stat_size; k++)
			if (W.buf2[(size_t)i * l.stat_size + k])
				fail("LIST: element %u: byte %zu past the struct is not zero", i, k);
		a = mine(st.id);
		if (a)
			check_stat(a, &st, false, 0);
	}
	/* every allocation of mine at or past start_id is counted */
	if (l.count == l.total) {
		for (unsigned int i = 0; i < MAX_ALLOCS; i++) {
			struct alloc *a = &W.a[i];
			bool found = false;

			if (a->fd < 0 || a->id < l.start_id)
				continue;
			for (unsigned int k = 0; k < l.count && !found; k++)
				found = ((struct buddy_alloc_stat *)(W.buf2 +
					(size_t)k * l.stat_size))->id == a->id;
			if (!found)
				fail("LIST (complete, %u elements) misses my live id %llu",
				     l.count, a->id);
		}
	}
}

static void op_set_target(void)
{
	struct buddy_set_target req = {};
	unsigned int slot = REG_SLOTS, field = rnd(12);
	struct alloc *a = NULL;
	u64t want_err = 0;
	unsigned int old_target = 0, old_codec = 0, s0 = 1, s1 = 0;
	bool fired;
	int r, e;

	if (rnd(2) && (a = pick_alloc())) {
		req.id = a->id;
		slot = a->reg;
		old_target = a->target;
		old_codec = a->codec;
	} else {
		req.id = pick_id(&slot);
		slot = reg_find(req.id);
		if (slot == REG_SLOTS && req.id)	/* made up: never live */
			req.id |= 1ull << 62;
		a = mine(req.id);
		if (a) {
			old_target = a->target;
			old_codec = a->codec;
		}
	}
	req.target = targets[rnd(5)];
	req.codec = rnd(BUDDY_CODEC_NR);
	switch (field) {
	case 0: req.flags = 1 + rnd(100); want_err = E(EINVAL); break;
	case 1: req.reserved = 1 + rnd(100); want_err = E(EINVAL); break;
	case 2: req.target = rnd(2) ? BUDDY_TARGET_AUTO : 33; want_err = E(EINVAL); break;
	case 3: req.codec = BUDDY_CODEC_NR + rnd(10); want_err = E(EINVAL); break;
	}
	trace("set-target id %llu%s target %u codec %u field %u", req.id,
	      a ? " (mine)" : "", req.target, req.codec, field);
	if (slot < REG_SLOTS)
		s0 = __atomic_fetch_add(&sh->retarget_seq[slot], 1, __ATOMIC_ACQ_REL);
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_SET_TARGET, &req);
	e = errno;
	fired = fi_disarm();
	if (slot < REG_SLOTS)
		s1 = __atomic_add_fetch(&sh->retarget_seq[slot], 1, __ATOMIC_ACQ_REL);
	if (!W.admin) {
		want_eperm(OP_SET_TARGET, r, e, "SET_TARGET");
		return;
	}
	if (r >= 0 && want_err)
		fail("SET_TARGET with broken field %u succeeded", field);
	expect(OP_SET_TARGET, r, e, want_err | E(ENOENT) | E(ENOSPC) | E(E2BIG) |
	       E(EINTR), fired, "SET_TARGET");
	if (!a)
		return;
	if (r < 0 && !want_err && e == ENOENT)
		fail("SET_TARGET of my live id %llu: ENOENT", req.id);
	if (r >= 0) {
		a->target = req.target;
		if (req.codec != BUDDY_CODEC_DEFAULT)
			a->codec = req.codec;
	} else {
		/* a failed re-target leaves target and codec as they were */
		a->target = old_target;
		a->codec = old_codec;
	}
	/* still exact when only this call moved it */
	a->seq = a->seq == s0 && s1 == s0 + 2 ? s1 : 1;
	if (chance(50)) {
		struct buddy_alloc_stat st;

		stat_alloc(a, &st, true);
	}
	if (chance(30)) {
		u64t off;
		size_t len;

		pick_range(a, &off, &len);
		check_read(a, off, len, 0);
	}
}

static void fill_profile_entry(struct buddy_profile_entry *p, u64t *want_err)
{
	memset(p, 0, sizeof(*p));
	p->uid = rnd(2) ? 0 : 1000 + rnd(nworkers + 1);
	p->target = targets[rnd(5)];
	p->codec = rnd(BUDDY_CODEC_NR);
	strcpy(p->label, labels[rnd(5)]);
	if (chance(5)) {
		switch (rnd(5)) {
		case 0: p->reserved = 1; break;
		case 1: p->target = BUDDY_TARGET_AUTO; break;
		case 2: p->codec = BUDDY_CODEC_NR; break;
		case 3: p->uid = (uint32_t)-1; break;
		default: memset(p->label, 'q', sizeof(p->label)); break;
		}
		*want_err = E(EINVAL);
	}
}

static void op_profile_set(void)
{
	struct buddy_profile_entry *ents = (void *)W.buf2;
	struct buddy_profile req = {};
	u64t want_err = 0;
	bool fired;
	int r, e;

	req.count = rnd(9);
	for (unsigned int i = 0; i < req.count; i++)
		fill_profile_entry(&ents[i], &want_err);
	req.entries_ptr = (uintptr_t)ents;
	if (chance(15))
		req.flags = BUDDY_PROFILE_REPLACE;
	switch (rnd(16)) {
	case 0: req.flags |= 2; want_err = E(EINVAL); break;
	case 1: req.reserved = 1; want_err = E(EINVAL); break;
	case 2: req.total = 1; want_err = E(EINVAL); break;
	case 3: req.count = BUDDY_PROFILE_MAX + 1 + rnd(100); want_err = E(ENOSPC) | E(EINVAL) | E(EFAULT); break;
	case 4: if (req.count) { req.entries_ptr = 24; want_err = E(EFAULT); } break;
	}
	trace("profile-set count %u flags %u", req.count, req.flags);
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_PROFILE_SET, &req);
	e = errno;
	fired = fi_disarm();
	if (!W.admin) {
		want_eperm(OP_PROFILE_SET, r, e, "PROFILE_SET");
		return;
	}
	if (r >= 0 && want_err)
		fail("PROFILE_SET with broken input succeeded (count %u flags %u)", req.count, req.flags);
	if (r < 0 && !want_err && !fired && e != ENOSPC)
		fail("PROFILE_SET: %s", strerror(e));
	expect(OP_PROFILE_SET, r, e, want_err | E(ENOSPC), fired, "PROFILE_SET");
	if (r >= 0 && (req.total > BUDDY_PROFILE_MAX || (req.count && !req.total)))
		fail("PROFILE_SET: total %u after installing %u", req.total, req.count);
}

static void op_profile_get(void)
{
	struct buddy_profile_entry *ents = (void *)W.buf2;
	struct buddy_profile req = {};
	u64t want_err = 0;
	bool fired;
	int r, e;

	req.count = rnd(rnd(8) ? 64 : MAX_IO / sizeof(*ents));
	req.entries_ptr = (uintptr_t)ents;
	switch (rnd(10)) {
	case 0: req.flags = 1; want_err = E(EINVAL); break;
	case 1: req.total = 3; want_err = E(EINVAL); break;
	case 2: req.entries_ptr = 32; want_err = E(EFAULT); break;
	}
	trace("profile-get count %u", req.count);
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_PROFILE_GET, &req);
	e = errno;
	fired = fi_disarm();
	if (!W.admin) {
		want_eperm(OP_PROFILE_GET, r, e, "PROFILE_GET");
		return;
	}
	/* an empty table copies nothing: EFAULT cannot happen then */
	if (r >= 0 && (want_err & ~E(EFAULT)))
		fail("PROFILE_GET with broken input succeeded");
	expect(OP_PROFILE_GET, r, e, want_err, fired, "PROFILE_GET");
	if (r < 0)
		return;
	if (req.total > BUDDY_PROFILE_MAX)
		fail("PROFILE_GET: total %u", req.total);
	for (unsigned int i = 0; req.entries_ptr == (uintptr_t)ents && i < req.count; i++)
		if (ents[i].reserved || !buddy_target_valid(ents[i].target) ||
		    ents[i].codec >= BUDDY_CODEC_NR ||
		    memchr(ents[i].label, 0, BUDDY_LABEL_LEN) == NULL)
			fail("PROFILE_GET: entry %u is not valid (target %u codec %u)", i,
			     ents[i].target, ents[i].codec);
}

static void op_info(void)
{
	struct buddy_info info;
	bool fired;
	int r, e;

	memset(&info, 0xff, sizeof(info));
	fi_arm();
	r = ioctl(W.dev, BUDDY_IOC_GET_INFO, &info);
	e = errno;
	fired = fi_disarm();
	trace("info");
	expect(OP_INFO, r, e, 0, fired, "GET_INFO");
	if (r < 0)
		return;
	if (info.abi_version != BUDDY_ABI_VERSION || info.device_used > info.device_bytes ||
	    info.buddy_used > info.buddy_bytes || info.nr_nodes > BUDDY_MAX_NODES ||
	    !info.chunk_bytes || (info.nr_allocs && !info.logical_bytes))
		fail("GET_INFO: abi %u device %llu/%llu buddy %llu"
		     "/%llu nodes %u chunk %u allocs %u logical %llu",
		     info.abi_version, info.device_used, info.device_bytes,
		     info.buddy_used, info.buddy_bytes, info.nr_nodes,
		     info.chunk_bytes, info.nr_allocs, info.logical_bytes);
}

/* Numbers that are not a valid command, or a valid one with a bad size. */
static void op_bad_ioctl(void)
{
	static const unsigned long cmds[] = {
		BUDDY_IOC_GET_INFO, BUDDY_IOC_ALLOC, BUDDY_IOC_ALLOC_STAT,
		BUDDY_IOC_GET_MAP, BUDDY_IOC_LIST, BUDDY_IOC_SET_TARGET,
		BUDDY_IOC_PROFILE_SET, BUDDY_IOC_PROFILE_GET,
	};
	struct alloc *a = pick_alloc();
	int fd = a && rnd(2) ? a->fd : W.dev;
	unsigned long base = cmds[rnd(8)], cmd;
	unsigned int size = _IOC_SIZE(base), kind = rnd(6);
	u64t want = E(ENOTTY);
	int r, e;

	memset(W.buf2, 0, 8192);
	switch (kind) {
	case 0:	/* another magic */
		cmd = _IOC(_IOC_DIR(base), 0xBE, _IOC_NR(base), size);
		break;
	case 1:	/* unknown number */
		cmd = _IOC(_IOC_DIR(base), BUDDY_IOC_MAGIC, 0x20 + rnd(200), size);
		break;
	case 2:	/* another direction */
		cmd = _IOC(_IOC_DIR(base) ^ (1 + rnd(3)), BUDDY_IOC_MAGIC,
			   _IOC_NR(base), size);
		break;
	case 3:	/* too small */
		/* every ABI v1 struct has at least 24 bytes */
		cmd = _IOC(_IOC_DIR(base), BUDDY_IOC_MAGIC, _IOC_NR(base), rnd(24));
		want = E(EINVAL) | E(EPERM) | E(ENOTTY);
		break;
	case 4:	/* larger, non-zero tail: E2BIG (only what the kernel reads) */
		cmd = _IOC(_IOC_DIR(base), BUDDY_IOC_MAGIC, _IOC_NR(base), size + 8 + rnd(64));
		W.buf2[size + rnd(8)] = 1;
		want = E(E2BIG) | E(EPERM) | E(ENOTTY) | E(EINVAL) | E(ENOENT) | E(EFAULT);
		break;
	default:	/* argument not mapped */
		cmd = base;
		trace("bad-ioctl fd %d cmd %#lx arg unmapped", fd, cmd);
		r = ioctl(fd, cmd, (void *)40);
		e = errno;
		if (r >= 0)
			fail("ioctl %#lx with an unmapped argument succeeded", cmd);
		expect(OP_BAD_IOCTL, r, e, E(EFAULT) | E(EPERM) | E(ENOTTY), false,
		       "ioctl (unmapped argument)");
		return;
	}
	trace("bad-ioctl fd %d cmd %#lx kind %u", fd, cmd, kind);
	r = ioctl(fd, cmd, W.buf2);
	e = errno;
	if (r >= 0 && kind == 4 && !(_IOC_DIR(cmd) & _IOC_WRITE) && fd == W.dev) {
		count(OP_BAD_IOCTL, 0);	/* an output-only struct: no tail to check */
		return;
	}
	if (r >= 0) {
		if (_IOC_NR(cmd) == _IOC_NR(BUDDY_IOC_ALLOC) && kind != 4)
			close(((struct buddy_alloc *)W.buf2)->fd);
		fail("ioctl %#lx (kind %u) on fd %d succeeded", cmd, kind, fd);
	}
	expect(OP_BAD_IOCTL, r, e, want, false, "bad ioctl");
}

/* ---- io_uring -------------------------------------------------------------------- */

static void ring_setup(void)
{
	if (W.ring_ok)
		return;
	if (io_uring_queue_init(8, &W.ring, 0) == 0)
		W.ring_ok = true;
}

/*
 * Submit the one prepared SQE with a fault armed for the submit alone:
 * the buddy call runs inline there (or io-wq's first worker is made), and
 * the wait after it must not have its task work (worker creation for a
 * request already queued) failed by a fault meant for the submit.  A
 * failed submit may leave the SQE in the ring: the ring is set up anew.
 * Return 0 with *@res the completion's result, or -errno; *@fired: the
 * armed fault fired.
 */
static int ring_one(int *res, bool *fired)
{
	struct io_uring_cqe *cqe;
	int r;

	fi_arm();
	r = io_uring_submit(&W.ring);
	*fired = fi_disarm();
	if (r != 1) {
		io_uring_queue_exit(&W.ring);
		W.ring_ok = false;
		return r < 0 ? r : -EIO;
	}
	do
		r = io_uring_wait_cqe(&W.ring, &cqe);
	while (r == -EINTR);
	if (r)
		return r;
	*res = cqe->res;
	io_uring_cqe_seen(&W.ring, cqe);
	return 0;
}

static void op_uring_rw(void)
{
	struct alloc *a = pick_alloc();
	struct io_uring_sqe *sqe;
	bool write = rnd(2), fired;
	u64t off;
	size_t len;
	int r, res;

	if (!a)
		return;
	ring_setup();
	if (!W.ring_ok)
		return;
	pick_range(a, &off, &len);
	sqe = io_uring_get_sqe(&W.ring);
	if (!sqe)
		fail("io_uring_get_sqe: the ring is full");
	if (write) {
		fill_data(W.buf, len);
		io_uring_prep_write(sqe, a->fd, W.buf, len, off);
	} else {
		memset(W.buf, 0x5a, len);
		io_uring_prep_read(sqe, a->fd, W.buf, len, off);
	}
	trace("uring-%s id %llu off %llu len %zu", write ? "write" : "read",
	      a->id, off, len);
	r = ring_one(&res, &fired);
	if (r) {
		if (fired)
			return;
		fail("io_uring submit/wait: %s", strerror(-r));
	}
	if (write) {
		apply_write(a, off, len, W.buf, res < 0 ? -1 : res, -res, fired,
			    "io_uring write");
		return;
	}
	{
		size_t want = off >= a->size ? 0 : (off + len > a->size ? a->size - off : len);

		expect(OP_URING_RW, res < 0 ? -1 : res, -res, 0, fired, "io_uring read");
		if (res < 0)
			return;
		if ((size_t)res != want)
			fail("io_uring read of %zu at %llu from id %llu"
			     ": %d bytes, want %zu", len, off, a->id, res, want);
		if (res && memcmp(W.buf, a->shadow + off, res)) {
			long d = first_diff(W.buf, a->shadow + off, res);

			fail("io_uring read at %llu from id %llu: byte %llu"
			     " differs from the shadow", off, a->id, off + d);
		}
	}
}

static void op_uring_cmd(void)
{
	struct alloc *a = pick_alloc();
	struct buddy_uring_cmd *pl;
	struct buddy_alloc_stat st = {};
	struct buddy_info info = {};
	struct io_uring_sqe *sqe;
	bool on_alloc = a && rnd(2), bad = chance(10), fired;
	int r, res;

	ring_setup();
	if (!W.ring_ok)
		return;
	sqe = io_uring_get_sqe(&W.ring);
	if (!sqe)
		fail("io_uring_get_sqe: the ring is full");
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = on_alloc ? a->fd : W.dev;
	sqe->cmd_op = on_alloc ? BUDDY_IOC_ALLOC_STAT : BUDDY_IOC_GET_INFO;
	pl = (struct buddy_uring_cmd *)sqe->cmd;
	pl->arg = on_alloc ? (uintptr_t)&st : (uintptr_t)&info;
	if (bad)
		pl->reserved = 1;
	trace("uring-cmd %s%s", on_alloc ? "ALLOC_STAT" : "GET_INFO", bad ? " reserved" : "");
	r = ring_one(&res, &fired);
	if (r) {
		if (fired)
			return;
		fail("io_uring submit/wait: %s", strerror(-r));
	}
	if (bad && res >= 0)
		fail("URING_CMD with reserved set succeeded");
	expect(OP_URING_CMD, res < 0 ? -1 : res, -res, bad ? E(EINVAL) : 0, fired,
	       "URING_CMD");
	if (res >= 0 && on_alloc)
		check_stat(a, &st, false, 0);
	if (res >= 0 && !on_alloc && info.abi_version != BUDDY_ABI_VERSION)
		fail("URING_CMD GET_INFO: abi %u", info.abi_version);
}

/* ---- held pages: a copy that holds a window page across other operations -- */

/*
 * A held copy is started in a helper thread and parked with userfaultfd:
 * its source (or destination, or a second iovec segment, or GET_MAP's
 * output) is a page whose first touch blocks until the release.  By then
 * the copy holds the window page (a GUP pin, the block layer's reference)
 * or, for an administrator's GET_MAP, a reference to the allocation, and
 * the worker goes on with any operation: stores, evictions, msync,
 * munmap, MADV_DONTNEED, remaps, re-targets, the close of the descriptor.
 * The release lets the copy finish; its bytes must then be in the
 * allocation if it is still open (or read back what the shadow has).
 */
enum hold_kind {
	HOLD_PVM_WRITE,		/* process_vm_writev into a mapped page */
	HOLD_PVM_READ,		/* process_vm_readv out of one */
	HOLD_DIRECT_READ,	/* O_DIRECT read of /dev/ram0 into one */
	HOLD_DIRECT_WRITE,	/* O_DIRECT write of one to /dev/ram0 */
	HOLD_ADMIN_MAP,		/* GET_MAP by id (root), the allocation held */
	HOLD_NR
};

struct hold {
	bool active;
	enum hold_kind kind;
	pthread_t th;
	struct uffd_page u;
	u64t id;		/* the allocation */
	u64t off;		/* file offset of the held bytes */
	size_t len;		/* inside one page */
	uint8_t *at;		/* their address in the mapping */
	uint8_t data[PG];	/* what the parked page gets */
	uint8_t before[PG];	/* the held bytes when the copy started */
	int devfd;
	struct buddy_map m;
	ssize_t ret;
	int err;
};

static struct hold H;
static int ramfd = -1;		/* /dev/ram0, O_DIRECT; -1: none */
static uint8_t *disk;		/* 2 pages, aligned: this worker's region */

/* Each worker's two pages of the RAM disk. */
static off_t disk_off(void)
{
	return (off_t)W.idx * 2 * PG;
}

static void *hold_run(void *arg)
{
	struct hold *h = arg;
	unsigned int x = h->off % PG;
	struct iovec l = { h->u.page + x, h->len }, r = { h->at, h->len };
	struct iovec v[2] = { { h->at, PG }, { h->u.page, PG } };

	switch (h->kind) {
	case HOLD_PVM_WRITE:
		h->ret = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
		break;
	case HOLD_PVM_READ:
		h->ret = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
		break;
	case HOLD_DIRECT_READ:
		h->ret = preadv(ramfd, v, 2, disk_off());
		break;
	case HOLD_DIRECT_WRITE:
		h->ret = pwritev(ramfd, v, 2, disk_off());
		break;
	default:
		h->ret = ioctl(h->devfd, BUDDY_IOC_GET_MAP, &h->m);
		break;
	}
	h->err = errno;
	return NULL;
}

/* Let the held copy finish and check what it did. */
static void hold_release(void)
{
	struct hold *h = &H;
	struct alloc *a;
	size_t want;

	/* a forked child has the parent's memory, not its helper thread */
	if (!h->active || W.in_child)
		return;
	trace("release %s id %llu off %llu len %zu", op_names[OP_HOLD_PVM_WRITE + h->kind],
	      h->id, h->off, h->len);
	h->active = false;
	if (uffd_page_fill(&h->u, h->data))
		fail("UFFDIO_COPY: %s", strerror(errno));
	pthread_join(h->th, NULL);
	want = h->kind == HOLD_ADMIN_MAP ? 0 :
	       h->kind >= HOLD_DIRECT_READ ? 2 * PG : h->len;
	if (h->ret != (ssize_t)want)
		fail("held %s of id %llu at %llu: %zd (%s), want %zu",
		     op_names[OP_HOLD_PVM_WRITE + h->kind], h->id, h->off,
		     h->ret, h->ret < 0 ? strerror(h->err) : "short", want);
	a = mine(h->id);
	switch (h->kind) {
	case HOLD_PVM_WRITE:
		if (a)
			shadow_set(a, h->off, h->data + h->off % PG, h->len);
		break;
	case HOLD_DIRECT_READ:
		if (a)
			shadow_set(a, h->off, disk, PG);
		if (memcmp(h->u.page, disk + PG, PG))
			fail("O_DIRECT read of /dev/ram0: its second page differs");
		break;
	case HOLD_PVM_READ:
		/*
		 * The copy may have loaded a few source bytes before its
		 * store met the parked page (x86's byte and unrolled copies
		 * keep them in a register across the fault): each byte is
		 * the page's then or now.
		 */
		for (size_t k = 0; a && k < h->len; k++) {
			uint8_t got = h->u.page[h->off % PG + k];

			if (got != a->shadow[h->off + k] && got != h->before[k])
				fail("held process_vm_readv of id %llu at %llu: byte %llu is 0x%02x, the shadow has 0x%02x (0x%02x when the copy started)",
				     h->id, h->off, h->off + k, got,
				     a->shadow[h->off + k], h->before[k]);
		}
		break;
	case HOLD_DIRECT_WRITE:
		if (pread(ramfd, disk, 2 * PG, disk_off()) != 2 * PG)
			fail("O_DIRECT read back of /dev/ram0: %s", strerror(errno));
		if (a && memcmp(disk, a->shadow + h->off, PG))
			fail("held O_DIRECT write of id %llu at %llu: the disk has other bytes than the shadow",
			     h->id, h->off);
		if (memcmp(disk + PG, h->data, PG))
			fail("held O_DIRECT write: its second page differs");
		break;
	default:
		break;
	}
	uffd_page_free(&h->u);
	count(OP_RELEASE, 0);
}

/*
 * Start a held copy of a random kind on a random mapped allocation (any
 * allocation for GET_MAP), then now and then close that allocation at
 * once: a close while mapped and held.
 */
static void op_hold(enum op op)
{
	enum hold_kind kind = op - OP_HOLD_PVM_WRITE;
	struct hold *h = &H;
	struct alloc *a;
	u64t end, pg;
	int r;

	if (W.in_child)
		return;
	if (h->active) {
		hold_release();
		return;
	}
	if ((kind == HOLD_ADMIN_MAP && !W.admin) ||
	    ((kind == HOLD_DIRECT_READ || kind == HOLD_DIRECT_WRITE) && ramfd < 0)) {
		count(op, 1);	/* not here: no /dev/ram0, or not root */
		return;
	}
	a = kind == HOLD_ADMIN_MAP ? pick_alloc() : pick_mapped();
	if (!a)
		return;
	memset(h, 0, sizeof(*h));
	h->kind = kind;
	h->id = a->id;
	if (kind == HOLD_ADMIN_MAP) {
		h->devfd = W.dev;
		h->m.id = a->id;
		h->m.count = a->nr < 2 * PG ? a->nr : 2 * PG;
	} else {
		/* a whole page of the mapping before the end of the data */
		end = a->size < a->map_off + a->map_len ? a->size :
		      a->map_off + a->map_len;
		if (end < a->map_off + PG)
			return;
		pg = a->map_off / PG + rnd((end - a->map_off) / PG);
		h->off = pg * PG;
		h->len = PG;
		if (kind < HOLD_DIRECT_READ) {	/* any bytes of that page */
			h->off += rnd(PG);
			h->len = 1 + rnd(PG - h->off % PG);
		}
		h->at = a->map + (h->off - a->map_off);
	}
	r = uffd_page_init(&h->u);
	if (r) {
		if (r != -EPERM && r != -ENOSYS)
			fail("userfaultfd: %s", strerror(-r));
		count(op, 1);	/* unprivileged userfaultfd is off */
		return;
	}
	fill_data(h->data, PG);
	if (kind == HOLD_DIRECT_READ) {
		fill_data(disk, 2 * PG);
		if (pwrite(ramfd, disk, 2 * PG, disk_off()) != 2 * PG)
			fail("O_DIRECT write of /dev/ram0: %s", strerror(errno));
		memcpy(h->data, disk + PG, PG);
	}
	h->m.codes_ptr = (uintptr_t)h->u.page;
	if (kind != HOLD_ADMIN_MAP)
		memcpy(h->before, a->shadow + h->off, h->len);
	trace("%s id %llu off %llu len %zu", op_names[op], h->id, h->off, h->len);
	if (pthread_create(&h->th, NULL, hold_run, h))
		fail("pthread_create: %s", strerror(errno));
	r = uffd_page_wait(&h->u, 20000);
	if (r) {
		/* a copy blocked elsewhere must not hang the report */
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		if (pthread_timedjoin_np(h->th, NULL, &until))
			fail("%s of id %llu at %llu never reached its parked page (%s) and is still blocked elsewhere",
			     op_names[op], h->id, h->off, strerror(-r));
		fail("%s of id %llu at %llu never reached its parked page: %s (the call returned %zd, %s)",
		     op_names[op], h->id, h->off, strerror(-r), h->ret,
		     h->ret < 0 ? strerror(h->err) : "");
	}
	h->active = true;
	count(op, 0);
	if (chance(25)) {
		trace("  close id %llu while held", a->id);
		close_alloc(a, false);
	}
}

/* MADV_DONTNEED on part of a mapping: the window keeps the pages. */
static void op_dontneed(void)
{
	struct alloc *a = pick_mapped();
	size_t np, first, n;

	if (!a)
		return;
	np = a->map_len / PG;
	first = rnd(np);
	n = 1 + rnd(np - first);
	trace("madvise id %llu pages %zu+%zu MADV_DONTNEED", a->id, first, n);
	if (madvise(a->map + first * PG, n * PG, MADV_DONTNEED))
		fail("MADV_DONTNEED on id %llu: %s", a->id, strerror(errno));
	count(OP_DONTNEED, 0);
	if (chance(50))
		mload(a, a->map_off + first * PG,
		      1 + rnd(n * PG < 512 ? n * PG : 512));
}

/*
 * MAP_FIXED over part of a mapping, with the same offsets: the replaced
 * part is unmapped (and written back) and mapped again.
 */
static void op_remap(void)
{
	struct alloc *a = pick_mapped();
	size_t np, first, n;
	void *p;

	if (!a || a->map_len < 2 * PG)
		return;
	np = a->map_len / PG;
	first = rnd(np);
	n = 1 + rnd(np - first);
	if (n == np)
		n--;
	if (!n)
		return;
	trace("mmap MAP_FIXED id %llu pages %zu+%zu of %zu", a->id, first, n, np);
	p = mmap(a->map + first * PG, n * PG, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, a->fd, a->map_off + first * PG);
	if (p != a->map + first * PG)
		fail("MAP_FIXED remap of id %llu pages %zu+%zu: %s", a->id,
		     first, n, p == MAP_FAILED ? strerror(errno) : "moved");
	count(OP_REMAP, 0);
}

struct forker {
	pthread_t th;
	volatile uint64_t *word;
	unsigned int forks;
	int stop;
};

static void *fork_loop(void *arg)
{
	struct forker *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED) && f->forks < 8) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		/* a page the fork left shared moves to a copy right now */
		(*__atomic_load_n(&f->word, __ATOMIC_ACQUIRE))++;
		if (pid > 0)
			waitpid(pid, NULL, 0);
		f->forks++;
	}
	return NULL;
}

/*
 * Page-aligned preads straight into anonymous memory (not page-aligned:
 * each stripe lands across two pages, the last shared with a word just
 * past the buffer, decoded last) while the other thread forks and stores
 * to that word after each fork.
 */
static void op_fork_read(void)
{
	static uint8_t *region;
	struct alloc *a = pick_alloc();
	struct forker f = { 0 };
	unsigned int i;

	if (!a || a->size < PG || W.in_child)
		return;
	if (!region) {
		region = mmap(NULL, MAX_IO + 2 * PG, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (region == MAP_FAILED)
			fail("mmap: %s", strerror(errno));
	}
	f.word = (volatile uint64_t *)(region + PG - 8);
	trace("fork-read id %llu", a->id);
	fflush(stdout);
	if (pthread_create(&f.th, NULL, fork_loop, &f))
		fail("pthread_create: %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		u64t pages = a->size / PG, off = rnd(pages) * PG;
		size_t len = PG * (1 + rnd(pages - off / PG < 16 ? pages - off / PG : 16));
		uint8_t *buf = region + 64;
		ssize_t r;

		__atomic_store_n(&f.word, (volatile uint64_t *)(region + len + PG - 8),
				 __ATOMIC_RELEASE);
		r = pread(a->fd, buf, len, off);
		if (r != (ssize_t)len)
			fail("pread of %zu at %llu from id %llu beside fork: %zd (%s)",
			     len, off, a->id, r, r < 0 ? strerror(errno) : "short");
		if (memcmp(buf, a->shadow + off, len)) {
			long d = first_diff(buf, a->shadow + off, len);

			fail("pread of %zu at %llu from id %llu beside fork: byte %llu is 0x%02x, the shadow has 0x%02x",
			     len, off, a->id, off + d, buf[d], a->shadow[off + d]);
		}
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(f.th, NULL);
	count(OP_FORK_READ, 0);
}

/* ---- processes ---------------------------------------------------------------------- */

static void run_ops(u64t n);

/* A child that goes on with the sequence; the parent waits for it. */
static void op_fork(void)
{
	u64t n = 1 + rnd(30);
	pid_t pid;
	int st;

	trace("fork %llu ops", n);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		if (errno == ENOMEM || errno == EAGAIN)
			return;
		fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		struct worker_log *log = malloc(sizeof(*log));

		if (!log)
			_exit(1);
		/* its trace goes on privately; its beat stays the worker's */
		W.log = memcpy(log, W.log, sizeof(*log));
		W.in_child = true;
		W.ring_ok = false;	/* the ring belongs to the parent */
		W.nasync = 0;
		if (failnth_fd >= 0) {	/* the parent's task file */
			close(failnth_fd);
			failnth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
		}
		run_ops(n);
		/* what the child made dies with it (exit closes them) */
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("forked child failed (status %#x)", st);
	/* the child advanced the sequence with its own copy of the rng: skip
	 * ahead so the parent does not repeat its choices */
	W.rng.s ^= 0x9e3779b97f4a7c15ull * (n + 1);
	/* its allocations are gone; mine have the shadows it updated, but
	 * the ones it closed are still open here and it may have re-targeted */
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0) {
			struct buddy_alloc_stat s;

			stat_alloc(&W.a[i], &s, false);
		}
	count(OP_FORK, 0);
}

/* A child that holds references while the parent goes on, then dies. */
static void op_fork_async(void)
{
	pid_t pid;

	if (W.nasync == 8) {
		int st;

		kill(W.async_kids[0], SIGKILL);
		waitpid(W.async_kids[0], &st, 0);
		memmove(W.async_kids, W.async_kids + 1, 7 * sizeof(pid_t));
		W.nasync--;
	}
	trace("fork-async");
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		if (errno == ENOMEM || errno == EAGAIN)
			return;
		fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* reads and stats only: the parent owns the data */
		struct buddy_alloc_stat st;
		unsigned int n = rnd(20);

		for (unsigned int i = 0; i < n; i++) {
			struct alloc *a = pick_alloc();

			if (!a)
				break;
			if (rnd(2))
				(void)pread(a->fd, W.buf, 1 + rnd(8192), rnd(a->size));
			else
				(void)ioctl(a->fd, BUDDY_IOC_ALLOC_STAT, &st);
			if (chance(20))
				close(a->fd);
		}
		if (rnd(2))
			pause();	/* until killed */
		_exit(0);
	}
	W.async_kids[W.nasync++] = pid;
	count(OP_FORK_ASYNC, 0);
}

static void reap_async(void)
{
	int st;

	for (unsigned int i = 0; i < W.nasync; i++) {
		kill(W.async_kids[i], SIGKILL);
		waitpid(W.async_kids[i], &st, 0);
	}
	W.nasync = 0;
}

static void op_dup(void)
{
	struct alloc *a = pick_alloc();
	int nfd;

	if (!a)
		return;
	nfd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3 + rnd(200));
	trace("dup id %llu fd %d -> %d", a->id, a->fd, nfd);
	if (nfd < 0) {
		if (errno == EMFILE || errno == ENOMEM)
			return;
		fail("dup: %s", strerror(errno));
	}
	close(a->fd);	/* the allocation lives on through the copy */
	a->fd = nfd;
	count(OP_DUP, 0);
	check_read(a, rnd(a->size), 1 + rnd(512), 0);
}

static void op_reopen(void)
{
	int flags = rnd(3) ? O_RDWR : O_RDONLY, fd;
	struct buddy_alloc req = { .size = 1 + rnd(8192), .target = BUDDY_TARGET_2X };

	fd = open("/dev/buddy", flags | O_CLOEXEC);
	trace("reopen /dev/buddy %s -> %d", flags == O_RDONLY ? "O_RDONLY" : "O_RDWR", fd);
	if (fd < 0) {
		if (errno == ENOMEM)
			return;
		fail("open /dev/buddy as uid %u: %s", W.uid, strerror(errno));
	}
	if (flags == O_RDONLY) {
		/* allocations follow the open mode, or ALLOC fails with EBADF */
		if (ioctl(fd, BUDDY_IOC_ALLOC, &req) == 0) {
			close(req.fd);
		} else if (errno != EBADF && errno != ENOSPC && errno != EDQUOT &&
			   errno != ENOMEM) {
			fail("ALLOC on /dev/buddy opened O_RDONLY: %s", strerror(errno));
		}
		close(fd);
	} else {
		close(W.dev);
		W.dev = fd;
	}
	count(OP_REOPEN, 0);
}

static void op_seek(void)
{
	struct alloc *a = pick_alloc();
	off_t r;

	if (!a)
		return;
	trace("seek id %llu", a->id);
	r = lseek(a->fd, 0, SEEK_END);
	if (r != (off_t)a->size)
		fail("lseek(SEEK_END) on id %llu: %lld, want %llu", a->id,
		     (long long)r, a->size);
	r = lseek(a->fd, a->size + 1 + rnd(100), SEEK_SET);
	if (r >= 0 || errno != EINVAL)
		fail("lseek past the end of id %llu: %lld", a->id, (long long)r);
	r = lseek(a->fd, -1, SEEK_SET);
	if (r >= 0 || errno != EINVAL)
		fail("lseek(-1) on id %llu: %lld", a->id, (long long)r);
	count(OP_SEEK, 0);
}

/* ---- the loop -------------------------------------------------------------------------- */

static enum op pick_op(void)
{
	static unsigned int total;
	unsigned int x, i;

	if (!total)
		for (i = 0; i < OP_NR; i++)
			total += op_weight[i];
	x = rnd(total);
	for (i = 0; i < OP_NR; i++) {
		if (x < op_weight[i])
			return i;
		x -= op_weight[i];
	}
	return OP_INFO;
}

static void run_ops(u64t n)
{
	for (u64t k = 0; k < n; k++) {
		enum op op = pick_op();

		u64t done = __atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);

		__atomic_store_n(&sh->log[W.idx].beat_ns, now_ns(), __ATOMIC_RELAXED);

		if (!W.in_child) {
			if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
			    (sh->max_ops && done > sh->max_ops) ||
			    (!(done & 63) && now_ns() > sh->deadline_ns)) {
				__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
				return;
			}
		}
		W.opno++;
		/* children of op_fork never fork again */
		if (W.in_child && (op == OP_FORK || op == OP_FORK_ASYNC || op == OP_REOPEN))
			op = OP_READ;
		switch (op) {
		case OP_ALLOC: op_alloc(); break;
		case OP_ALLOC_BAD: op_alloc_bad(); break;
		case OP_CLOSE: op_close(); break;
		case OP_WRITE: op_write(); break;
		case OP_READ: op_read(); break;
		case OP_VERIFY: op_verify(); break;
		case OP_STAT_FD: op_stat_fd(); break;
		case OP_STAT_ID: op_stat_id(); break;
		case OP_MAP_FD: op_map_fd(); break;
		case OP_MAP_ID: op_map_id(); break;
		case OP_LIST: op_list(); break;
		case OP_SET_TARGET: op_set_target(); break;
		case OP_PROFILE_SET: op_profile_set(); break;
		case OP_PROFILE_GET: op_profile_get(); break;
		case OP_INFO: op_info(); break;
		case OP_BAD_IOCTL: op_bad_ioctl(); break;
		case OP_URING_RW: op_uring_rw(); break;
		case OP_URING_CMD: op_uring_cmd(); break;
		case OP_FORK: op_fork(); break;
		case OP_FORK_ASYNC: op_fork_async(); break;
		case OP_DUP: op_dup(); break;
		case OP_REOPEN: op_reopen(); break;
		case OP_SEEK: op_seek(); break;
		case OP_MMAP: op_mmap(); break;
		case OP_MUNMAP: op_munmap(); break;
		case OP_MSYNC: op_msync(); break;
		case OP_MTOUCH: op_mtouch(); break;
		case OP_MAP_IO: op_map_io(); break;
		case OP_FSYNC: op_fsync(); break;
		case OP_WINDOW: op_window(); break;
		case OP_HOLD_PVM_WRITE: case OP_HOLD_PVM_READ:
		case OP_HOLD_DIRECT_READ: case OP_HOLD_DIRECT_WRITE:
		case OP_HOLD_ADMIN_MAP: op_hold(op); break;
		case OP_RELEASE: hold_release(); break;
		case OP_DONTNEED: op_dontneed(); break;
		case OP_REMAP: op_remap(); break;
		case OP_FORK_READ: op_fork_read(); break;
		default: break;
		}
	}
}

static void worker(int idx)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO };
	char path[64];

	W.idx = idx;
	W.log = &sh->log[idx];
	datagen_seed(&W.rng, datagen_mix(seed, idx + 1));
	if (sigaction(SIGBUS, &sa, NULL))
		fail("sigaction(SIGBUS): %s", strerror(errno));
	W.admin = !(idx & 1);
	W.uid = W.admin ? 0 : 1000 + idx;
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		W.a[i].fd = -1;
	W.buf = malloc(2 * MAX_IO);
	W.buf2 = malloc(2 * MAX_IO + 16);
	if (!W.buf || !W.buf2)
		fail("malloc");
	W.dev = open("/dev/buddy", O_RDWR | O_CLOEXEC);
	if (W.dev < 0)
		fail("open /dev/buddy: %s", strerror(errno));
	if (!W.admin && (setresgid(W.uid, W.uid, W.uid) || setresuid(W.uid, W.uid, W.uid)))
		fail("cannot become uid %u: %s", W.uid, strerror(errno));
	/*
	 * Changing uid makes the task non-dumpable, and /proc/<pid>/ of a
	 * non-dumpable task belongs to root: without this the worker (and
	 * its forked children) could not open their own fail-nth.
	 */
	if (!W.admin && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		fail("PR_SET_DUMPABLE: %s", strerror(errno));
	/* the RAM disk of the held O_DIRECT copies, when there is one */
	ramfd = open("/dev/ram0", O_RDWR | O_DIRECT | O_CLOEXEC);
	disk = aligned_alloc(PG, 2 * PG);
	if (!disk)
		fail("aligned_alloc");
	if (fault_inject) {
		snprintf(path, sizeof(path), "/proc/thread-self/fail-nth");
		failnth_fd = open(path, O_RDWR | O_CLOEXEC);
		if (failnth_fd < 0)
			fail("-f: cannot open %s: %s", path, strerror(errno));
	}
	run_ops(UINT64_MAX);
	/* the end: verify and close everything */
	hold_release();
	reap_async();
	for (unsigned int i = 0; i < MAX_ALLOCS; i++)
		if (W.a[i].fd >= 0) {
			__atomic_store_n(&sh->log[idx].beat_ns, now_ns(), __ATOMIC_RELAXED);
			close_alloc(&W.a[i], true);
		}
	if (W.ring_ok)
		io_uring_queue_exit(&W.ring);
	close(W.dev);
	_exit(0);
}

/* ---- hangs -------------------------------------------------------------------------- */

/* Print a file of /proc, each line behind PREFIX. */
static void print_proc(const char *path, const char *prefix)
{
	char line[1024];	/* a stat line in one */
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s%s", prefix, line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

/*
 * Every other process of this program (workers, their forked children):
 * with DUMP, each thread's state and kernel stack are printed; with KILL,
 * each process gets SIGKILL.
 */
static void fuzz_tasks(bool dump, bool kill_them)
{
	char path[300], comm[64], me[64] = "";
	DIR *proc = opendir("/proc"), *tasks;
	struct dirent *p, *t;
	FILE *f;

	if (!proc)
		return;
	f = fopen("/proc/self/comm", "r");
	if (f) {
		if (!fgets(me, sizeof(me), f))
			me[0] = 0;
		fclose(f);
	}
	while ((p = readdir(proc))) {
		pid_t pid = atoi(p->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		if (strcmp(comm, me))
			continue;
		if (kill_them)
			kill(pid, SIGKILL);
		if (!dump)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks))) {
			if (atoi(t->d_name) <= 0)
				continue;
			printf("#   process %d thread %s:\n", pid, t->d_name);
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, t->d_name);
			print_proc(path, "#     stat: ");
			snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid, t->d_name);
			print_proc(path, "#     wchan: ");
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, t->d_name);
			print_proc(path, "#     ");
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(proc);
}

static void hang_report(int i, pid_t pid, u64t now)
{
	int fd;

	printf("# HANG: seed %llu worker %d (pid %d) began no operation for %.0f s\n",
	       seed, i, pid, (now - sh->log[i].beat_ns) / 1e9);
	print_log(&sh->log[i], i);
	printf("# the fuzzer's threads:\n");
	fuzz_tasks(true, false);
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, "w", 1) == 1)
		printf("# the kernel's blocked tasks: sysrq w, in the kernel log\n");
	if (fd >= 0)
		close(fd);
	fflush(stdout);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	fuzz_tasks(false, true);
}

/*
 * Wait for the workers; 1 when one failed or hung.  A worker that begins
 * no operation for -H seconds is a hang (a call that never returns, in
 * the kernel or in a parked copy): its last operations, the kernel stack
 * of every thread of the fuzzer and the kernel's blocked tasks (sysrq w,
 * in the kernel log) are printed, then every worker is killed, so that a
 * hang is a failure with a diagnosis instead of the guest's timeout.
 */
static int wait_workers(const pid_t *pids)
{
	bool live[MAX_WORKERS];
	int left = nworkers, bad = 0;
	u64t killed = 0;	/* when the hang's SIGKILLs went out */

	for (int i = 0; i < nworkers; i++)
		live[i] = true;
	while (left) {
		u64t now = now_ns();

		for (int i = 0; i < nworkers; i++) {
			int st;
			pid_t r;

			if (!live[i])
				continue;
			r = waitpid(pids[i], &st, WNOHANG);
			if (r == 0) {
				/* a worker may have begun one after `now` */
				u64t beat = __atomic_load_n(&sh->log[i].beat_ns, __ATOMIC_RELAXED);

				if (!killed && beat < now && now - beat > (u64t)(stall_s * 1e9)) {
					hang_report(i, pids[i], now);
					bad = 1;
					killed = now;
				}
				continue;
			}
			live[i] = false;
			left--;
			if (r != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
				if (!killed)
					printf("# worker %d (pid %d) ended with status %#x\n", i, pids[i], st);
				bad = 1;
				__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
			}
		}
		if (killed && left && now - killed > 30000000000ull) {
			for (int i = 0; i < nworkers; i++)
				if (live[i])
					printf("# worker %d (pid %d) lives 30 s after SIGKILL: stuck in the kernel\n",
					       i, pids[i]);
			break;
		}
		if (left)
			usleep(100 * 1000);
	}
	return bad;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: buddy_fuzz [-s SEED] [-n OPS] [-t SECONDS] [-m MIN_OPS] [-w WORKERS] [-H SECONDS] [-f] [-v]\n"
		"  -s  seed (default: from the clock; printed)\n"
		"  -n  stop after OPS operations in all (default: no limit)\n"
		"  -t  stop after SECONDS (default 60)\n"
		"  -m  fail unless at least MIN_OPS operations ran\n"
		"  -w  worker processes, even ones root, odd ones uid 1000+i (default 4, max %d)\n"
		"  -H  a hang: a worker that begins no operation for SECONDS (default 120)\n"
		"  -f  inject faults through /proc/thread-self/fail-nth\n"
		"  -v  print every operation\n", MAX_WORKERS);
	return 2;
}

int main(int argc, char **argv)
{
	u64t max_ops = 0, min_ops = 0, t0;
	double seconds = 60;
	struct buddy_info info;
	pid_t pids[MAX_WORKERS];
	int c, dev, bad, pass = 0, failn = 0;

	seed = now_ns() ^ getpid();
	while ((c = getopt(argc, argv, "s:n:t:m:w:H:fvh")) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': max_ops = strtoull(optarg, NULL, 0); break;
		case 't': seconds = atof(optarg); break;
		case 'm': min_ops = strtoull(optarg, NULL, 0); break;
		case 'w': nworkers = atoi(optarg); break;
		case 'H': stall_s = atof(optarg); break;
		case 'f': fault_inject = true; break;
		case 'v': verbose = true; break;
		default: return usage();
		}
	}
	if (nworkers < 1 || nworkers > MAX_WORKERS || stall_s <= 0 || optind != argc)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..3\n");
	printf("# buddy_fuzz -s %llu -w %d%s%s -t %g%s\n", seed, nworkers,
	       fault_inject ? " -f" : "", max_ops ? " -n" : "", seconds,
	       min_ops ? " -m" : "");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return perror("mmap"), 1;
	sh->max_ops = max_ops;
	/* the unprivileged workers re-open it (the guest has no udev rules) */
	if (chmod("/dev/buddy", 0666))
		return perror("chmod /dev/buddy"), 1;
	/*
	 * The held copies: every worker's userfaultfd handles the kernel's
	 * own accesses, and every worker may use the RAM disk.  Without
	 * them those operations count as expected errors.
	 */
	{
		int fd = open("/proc/sys/vm/unprivileged_userfaultfd", O_WRONLY);
		bool uffd = fd >= 0 && write(fd, "1", 1) == 1;
		bool ram = !chmod("/dev/ram0", 0666);

		if (fd >= 0)
			close(fd);
		printf("# held copies: userfaultfd for every worker %s, /dev/ram0 %s\n",
		       uffd ? "yes" : "no", ram ? "yes" : "no");
	}
	t0 = now_ns();
	sh->deadline_ns = t0 + (u64t)(seconds * 1e9);
	for (int i = 0; i < nworkers; i++) {
		sh->log[i].beat_ns = t0;
		pids[i] = fork();
		if (pids[i] < 0)
			return perror("fork"), 1;
		if (pids[i] == 0)
			worker(i);
	}
	bad = wait_workers(pids);
	{
		u64t ops = sh->ops > max_ops && max_ops ? max_ops : sh->ops;
		double secs = (now_ns() - t0) / 1e9;

		printf("# %llu operations in %.1f s (%.0f/s), %llu faults injected\n",
		       ops, secs, ops / secs, sh->faults);
		for (int k = 0; k < OP_NR; k++)
			printf("#   %-14s ok %-8llu expected-error %-8llu fault %llu\n",
			       op_names[k], sh->kinds[k][0], sh->kinds[k][1], sh->kinds[k][2]);
		if (bad || sh->failed) {
			printf("not ok 1 every operation as specified (seed %llu)\n", seed);
			failn++;
		} else {
			printf("ok 1 every operation as specified\n");
			pass++;
		}
		if (ops < min_ops) {
			printf("not ok 2 at least %llu operations (ran %llu)\n", min_ops, ops);
			failn++;
		} else {
			printf("ok 2 at least %llu operations (ran %llu)\n", min_ops, ops);
			pass++;
		}
	}
	/* every pool byte back */
	dev = open("/dev/buddy", O_RDONLY | O_CLOEXEC);
	memset(&info, 0, sizeof(info));
	if (dev < 0 || ioctl(dev, BUDDY_IOC_GET_INFO, &info)) {
		printf("not ok 3 GET_INFO at the end: %s\n", strerror(errno));
		failn++;
	} else if (info.device_used || info.buddy_used || info.nr_allocs || info.logical_bytes) {
		printf("not ok 3 every pool byte back: device_used %llu buddy_used %llu"
		       " nr_allocs %u logical %llu\n", info.device_used, info.buddy_used,
		       info.nr_allocs, info.logical_bytes);
		failn++;
	} else {
		printf("ok 3 every pool byte back\n");
		pass++;
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", pass, failn);
	return failn ? 1 : 0;
}
