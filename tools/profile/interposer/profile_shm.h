/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * profile_shm.h - the region that libbuddyprof.so (the LD_PRELOAD interposer,
 * tools/profile/interposer/profile_table.c) shares with `buddyctl profile`.
 *
 * The profiler creates the region (a memfd), names it in BUDDYPROF_SHM and
 * starts the program with the interposer preloaded.  The interposer maps it
 * MAP_SHARED and keeps in it, per followed process, the table of its live
 * tracked allocations: every malloc-family or anonymous-mmap allocation of
 * at least min_size bytes, with the return addresses of a short call stack.
 * The profiler reads the tables while the processes are stopped (SIGSTOP on
 * each one's whole thread group).
 *
 * Processes: every process that initialises the interposer and whose
 * executable's basename starts with @match (any process when @match is
 * empty) is followed, with a table of its own: one of @nprocs process slots
 * (struct bprof_proc, then its @nslots table slots).  A process claims its
 * slot at its first tracked allocation, by a compare-and-swap of the slot's
 * @pid from 0 to its pid, so that processes that never allocate enough
 * (shells, launchers) take none.  A forked child of a followed process is
 * followed too (same executable) and claims a slot of its own: the owner of
 * a slot marks itself in a MADV_WIPEONFORK page, which reads as zero in the
 * child, so the child never writes into its parent's table (getpid() is the
 * fallback on kernels without it); its table starts empty (the allocations
 * it inherited are its parent's).  An exec() by a process that has a slot
 * keeps the slot, cleared (@nr_exec_reset).  When no slot is left the
 * process is not followed: counted once in @nr_no_slot (an exec'd process
 * that already failed is found in @no_slot_pids), the first one named in
 * @no_slot.  With @match, each process that loads the interposer and does
 * not match adds one to @nr_not_followed (the first names itself in
 * @not_followed); every child a followed process forks adds one to
 * @nr_forked; every process that loads the interposer and matches adds
 * one to @nr_followed (the first is @first_pid, named in @first_exe), so
 * that the profiler can say why a report is empty.  Allocation numbers (@seq) are unique over the run,
 * whatever process made them.
 *
 * The table is an open-addressing hash of BPROF_SLOTS(hdr) slots keyed by
 * address, linear probing of at most BPROF_MAX_PROBE slots.  A slot goes
 * EMPTY/TOMB -> BUSY (compare-and-swap, by the inserting thread) -> LIVE
 * (release store after every field is written) -> TOMB (compare-and-swap,
 * by the thread that frees it).  The interposer inserts after the real
 * allocation returned and removes before the real free, so a LIVE slot's
 * memory is always allocated; a reader sees only LIVE slots, so a thread
 * stopped in the middle of an insert is simply not seen yet.  Lock-free, no
 * allocation, async-signal-safe.
 *
 * Python sites: in a CPython program (the version the interposer was built
 * for, python_site.c), a tracked allocation made under Python code also
 * records the Python line that made it, "basename:line function", in the
 * table of Python sites after the process tables: BPROF_NPYSITES(nslots)
 * entries (as many as one process's table slots, at most
 * BPROF_PYSITES_MAX), shared by all processes, an open-addressing hash
 * keyed by the string.  An entry goes EMPTY -> BUSY (compare-and-swap) ->
 * LIVE (release store after the string) and is never freed, so that a
 * slot keeps only the entry's index (@pysite).  A BUSY entry is passed
 * over (a twin of its string may then be made: readers compare strings,
 * not indices); when no entry is left the allocation gets no Python site,
 * counted in @nr_pysite_full.
 */
#ifndef BUDDY_PROFILE_SHM_H
#define BUDDY_PROFILE_SHM_H

#include <stdint.h>

#define BPROF_MAGIC		0x464f525059444442ULL	/* "BDDYPROF" */
#define BPROF_VERSION		4
#define BPROF_FRAMES		12	/* return addresses kept per slot */
#define BPROF_MAX_PROBE		4096	/* slots probed before giving up */
#define BPROF_HDR_BYTES		4096
#define BPROF_DEF_SLOTS		(1u << 16)
#define BPROF_DEF_MIN		(64u << 10)
#define BPROF_DEF_PROCS		16	/* process slots */
#define BPROF_MAX_PROCS		1024
#define BPROF_NO_SLOT_PIDS	64
#define BPROF_PYSITES_MAX	4096	/* Python sites, all processes */
#define BPROF_PYSITE_LEN	120	/* bytes of one, with its NUL */

/* Environment of the profiled program. */
#define BPROF_ENV_SHM		"BUDDYPROF_SHM"	/* path of the region */
#define BPROF_ENV_PID		"BUDDYPROF_PID"	/* the profiler's pid */

enum bprof_state {
	BPROF_EMPTY = 0,
	BPROF_BUSY = 1,
	BPROF_LIVE = 2,
	BPROF_TOMB = 3,
};

enum bprof_kind {
	BPROF_KIND_HEAP = 0,	/* malloc, calloc, realloc, *memalign, valloc */
	BPROF_KIND_MMAP = 1,	/* anonymous mmap / mremap */
};

/* Header flags. */
#define BPROF_F_UNWIND		(1u << 0)	/* _Unwind_Backtrace past frame 0 */

/**
 * struct bprof_slot - one live allocation (128 bytes).
 * @state:	enum bprof_state.
 * @depth:	return addresses in @frames.
 * @kind:	enum bprof_kind.
 * @pysite:	1 + the index of its Python site, 0: none.
 * @seq:	allocation number, unique for the run (1, 2, ...).
 * @addr:	first byte.
 * @size:	bytes asked for.
 * @frames:	return addresses, innermost first: frames[0] is the caller of
 *		the allocation function.
 */
struct bprof_slot {
	uint32_t state;
	uint8_t depth;
	uint8_t kind;
	uint16_t pysite;
	uint64_t seq;
	uint64_t addr;
	uint64_t size;
	uint64_t frames[BPROF_FRAMES];
};

/**
 * struct bprof_pysite - one Python site (128 bytes).
 * @state:	enum bprof_state (EMPTY, BUSY, LIVE).
 * @hash:	bprof_fnv() of @site, for the probe.
 * @site:	"basename:line function", NUL-terminated.
 */
struct bprof_pysite {
	uint32_t state;
	uint32_t hash;
	char site[BPROF_PYSITE_LEN];
};

/**
 * struct bprof_proc - one followed process (256 bytes), before the tables.
 * @pid:	0 until claimed; then the process's, for the rest of the run.
 * @exe:	basename of its executable (the new one after an exec).
 * Counters are updated by the process with atomic adds.
 * @live_bytes, @peak_live_bytes: the bytes of its live tracked allocations
 *	now and at most (buddyprof_live_bytes() reads them in the program).
 */
struct bprof_proc {
	int32_t pid;
	uint32_t nr_forked;		/* children it forked */
	char exe[64];
	uint64_t nr_alloc;		/* tracked allocations */
	uint64_t nr_free;		/* tracked frees */
	uint64_t nr_dropped;		/* not tracked: no free slot */
	uint64_t nr_unwind_short;	/* unwinder gave only frame 0 */
	uint64_t hook_ns;		/* time in the tracked (slow) path */
	uint64_t nr_exec_reset;		/* it exec'd: table cleared */
	uint64_t nr_partial_unmap;	/* munmap of a tracked mapping's head */
	uint64_t live_bytes;		/* bytes of its LIVE slots */
	uint64_t peak_live_bytes;	/* the most @live_bytes has been */
	uint64_t pad[14];
};

/**
 * struct bprof_hdr - the first BPROF_HDR_BYTES of the region.
 * Written by the profiler before the program starts: @magic .. @match,
 * and the schedule (@every_allocs, @every_bytes, @free_bytes).
 * Counters are updated by the followed processes with atomic adds.
 * @snap_req, @snap_done: snapshots the program asked for with
 *	buddyprof_snapshot() and that the profiler has taken (a futex word).
 *	A snapshot covers every followed process.
 * @every_allocs, @every_bytes: the progress schedule (0: off).  A
 *	followed process asks for a snapshot, as buddyprof_snapshot() does,
 *	from the allocation call whose tracked allocation number
 *	(@progress_allocs, over all followed processes) is a multiple of
 *	@every_allocs, or whose bytes carry @progress_bytes past a multiple of
 *	@every_bytes: the points depend on the program's allocations only,
 *	never on time or load.
 * @free_bytes: (0: off) a followed process asks for a snapshot, as
 *	buddyprof_snapshot() does, before it frees (free, munmap of the whole
 *	mapping) a tracked allocation of at least @free_bytes bytes, so that
 *	the snapshot sees the allocation's data as its last phase left it;
 *	counted in @nr_free_snaps.
 */
struct bprof_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_bytes;
	uint32_t nslots;		/* per process, a power of two */
	uint32_t slot_bytes;
	uint32_t nprocs;		/* process slots, 1..BPROF_MAX_PROCS */
	uint32_t proc_bytes;		/* sizeof(struct bprof_proc) */
	uint64_t min_size;
	uint32_t depth;			/* 1..BPROF_FRAMES */
	uint32_t flags;			/* BPROF_F_* */
	int32_t profiler_pid;
	int32_t first_pid;		/* the first followed process, 0: none */
	char match[64];			/* executable basename prefix, or "" */
	char first_exe[64];		/* @first_pid's executable's basename */

	uint64_t seq;			/* last allocation number given */
	uint32_t snap_req;
	uint32_t snap_done;
	uint32_t nr_followed;		/* processes that loaded the interposer
					 * and matched (an exec'd one again) */
	uint32_t nr_not_followed;	/* processes that loaded the interposer
					 * but did not match @match */
	uint32_t nr_forked;		/* children followed processes forked */
	uint32_t nr_no_slot;		/* followed, but no process slot left */
	char not_followed[64];		/* basename of the first of them */
	char no_slot[64];		/* ... and of the first without a slot */
	int32_t no_slot_pid;
	uint32_t pad0;
	uint64_t every_allocs;		/* snapshot every N tracked allocations */
	uint64_t every_bytes;		/* ... every N tracked bytes allocated */
	uint64_t progress_allocs;	/* tracked allocations so far */
	uint64_t progress_bytes;	/* their bytes */
	uint64_t nr_progress_snaps;	/* snapshots asked for by the schedule */
	uint64_t free_bytes;		/* snapshot before freeing >= N bytes */
	uint64_t nr_free_snaps;		/* snapshots asked for by frees */
	int32_t no_slot_pids[BPROF_NO_SLOT_PIDS];	/* counted in
					 * @nr_no_slot (the first ones), so
					 * that an exec does not count again */
	uint64_t nr_pysite_full;	/* Python sites not kept: table full */
};

/* The process slots, each process's table, then the Python sites. */
#define BPROF_PROCS(h)	((struct bprof_proc *)((char *)(h) + BPROF_HDR_BYTES))
#define BPROF_PROCS_BYTES(nprocs) \
	(((uint64_t)(nprocs) * sizeof(struct bprof_proc) + 4095) & ~4095ULL)
#define BPROF_TABLE_BYTES(nslots) \
	((uint64_t)(nslots) * sizeof(struct bprof_slot))
#define BPROF_SLOTS(h, i) \
	((struct bprof_slot *)((char *)(h) + BPROF_HDR_BYTES + \
			       BPROF_PROCS_BYTES((h)->nprocs) + \
			       (uint64_t)(i) * BPROF_TABLE_BYTES((h)->nslots)))
#define BPROF_PYSITES_AT(h) \
	((struct bprof_pysite *)((char *)(h) + BPROF_HDR_BYTES + \
				 BPROF_PROCS_BYTES((h)->nprocs) + \
				 (uint64_t)(h)->nprocs * \
				 BPROF_TABLE_BYTES((h)->nslots)))
#define BPROF_NPYSITES(nslots) \
	((nslots) < BPROF_PYSITES_MAX ? (uint32_t)(nslots) : BPROF_PYSITES_MAX)
#define BPROF_REGION_BYTES(nprocs, nslots) \
	((uint64_t)BPROF_HDR_BYTES + BPROF_PROCS_BYTES(nprocs) + \
	 (uint64_t)(nprocs) * BPROF_TABLE_BYTES(nslots) + \
	 BPROF_NPYSITES(nslots) * sizeof(struct bprof_pysite))

static inline uint32_t bprof_hash(uint64_t addr, uint32_t mask)
{
	return (uint32_t)(((addr >> 4) * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

/*
 * A label's key: FNV-1a over, per frame, the module's basename with its NUL
 * and the frame's file offset (or "?" and the address outside any file),
 * then the Python site with its NUL when there is one, then the size.  The
 * profiler (profile_snapshot.c) and `buddyctl run`'s interposer
 * (run_alloc.c) both label with it, so that a profile written by one
 * selects targets in the other.
 */
#define BPROF_FNV_INIT		0xcbf29ce484222325ULL

static inline uint64_t bprof_fnv(uint64_t h, const void *p, unsigned long n)
{
	const unsigned char *s = p;

	while (n--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A label's name from its key: "bp-" and 12 hex digits (15 bytes + NUL). */
#define BPROF_LABEL_FMT		"bp-%012llx"
#define BPROF_LABEL_ARG(key)	((unsigned long long)((key) >> 16))

_Static_assert(sizeof(struct bprof_slot) == 128, "slot is 128 bytes");
_Static_assert(sizeof(struct bprof_hdr) <= BPROF_HDR_BYTES, "header fits");
_Static_assert(sizeof(struct bprof_pysite) == 128, "Python site is 128 bytes");
_Static_assert(BPROF_PYSITES_MAX < 65536, "a slot's @pysite holds 1 + an index");
_Static_assert(sizeof(struct bprof_proc) == 256, "process slot is 256 bytes");

#endif /* BUDDY_PROFILE_SHM_H */
