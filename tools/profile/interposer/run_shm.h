/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * run_shm.h - the region that libbuddyprof.so (tools/profile/interposer/hooks.c,
 * run_alloc.c) shares with `buddyctl run` (tools/profile/engine/run_engine.c).
 *
 * buddyctl run creates the region (a memfd), names it in BUDDYRUN_SHM and
 * starts the program with the interposer preloaded.  Every process that
 * loads the interposer with BUDDYRUN_SHM set (the program, its forked
 * children, the programs they exec) puts its large allocations in buddy
 * memory and writes one record per allocation: claimed with an atomic
 * increment of @next_rec, filled, then published with a release store of
 * its state.  When the allocation is freed (or the process exits), the
 * record gets the allocation's final BUDDY_IOC_ALLOC_STAT and goes to
 * BRUN_FINAL.  The runner reads the records after the program has exited.
 *
 * Layout: the header (BRUN_HDR_BYTES), @nprofiles struct brun_profile
 * (BRUN_MAX_PROFILES slots), then @nrecs struct brun_rec.
 */
#ifndef BUDDY_RUN_SHM_H
#define BUDDY_RUN_SHM_H

#include <stdint.h>

#include "uapi/linux/buddy.h"

#define BRUN_MAGIC		0x4e55525944444442ULL	/* "BDDYRUN" */
#define BRUN_VERSION		2
#define BRUN_HDR_BYTES		4096
#define BRUN_MAX_PROFILES	1024
#define BRUN_DEF_RECS		(1u << 16)
#define BRUN_DEF_MIN		(1u << 20)
#define BRUN_MAX_ALIGN		(1ULL << 30)	/* aligned allocations served
						 * up to this alignment */

#define BRUN_ENV_SHM		"BUDDYRUN_SHM"

enum brun_state {
	BRUN_EMPTY = 0,
	BRUN_LIVE = 1,		/* allocated, not freed yet */
	BRUN_FINAL = 2,		/* freed or the process exited: @st is final */
};

/* Record flags. */
#define BRUN_R_FALLBACK		(1u << 0)	/* in ordinary memory */
#define BRUN_R_NATIVE		(1u << 1)	/* device without mmap: contents
						 * written to it at free/exit */
#define BRUN_R_STAT		(1u << 2)	/* @st is valid */
#define BRUN_R_PROFILE		(1u << 3)	/* target from the profile file */

/* Header flags. */
#define BRUN_F_UNWIND		(1u << 0)

/** struct brun_profile - a target for one label (from `-p FILE`). */
struct brun_profile {
	char label[BUDDY_LABEL_LEN];
	uint32_t target;
	uint32_t codec;
};

/**
 * struct brun_rec - one large allocation of one process.
 * @state:	enum brun_state.
 * @flags:	BRUN_R_*.
 * @pid:	the process.
 * @err:	why it fell back (positive errno; 0 for a fallback of the
 *		device being unavailable before any allocation was tried).
 * @kind:	enum bprof_kind (profile_shm.h): heap or anonymous mmap.
 * @target:	BUDDY_TARGET_* asked for (the stat has the one in force).
 * @size:	bytes the program asked for.
 * @label:	the call-stack label, as `buddyctl profile` names it.
 * @st:		the allocation's BUDDY_IOC_ALLOC_STAT at free or exit.
 */
struct brun_rec {
	uint32_t state;
	uint32_t flags;
	int32_t pid;
	int32_t err;
	uint32_t kind;
	uint32_t target;
	uint64_t size;
	char label[BUDDY_LABEL_LEN];
	struct buddy_alloc_stat st;
};

/**
 * struct brun_hdr - the first BRUN_HDR_BYTES of the region; the runner
 * writes @magic .. @device before the program starts, the processes add to
 * the counters.
 */
struct brun_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_bytes;
	uint32_t nrecs;
	uint32_t rec_bytes;
	uint32_t nprofiles;
	uint32_t flags;			/* BRUN_F_* */
	uint64_t min_size;
	uint32_t depth;			/* call-stack frames per label */
	uint32_t target;		/* default target (BUDDY_TARGET_AUTO) */
	uint32_t codec;			/* BUDDY_CODEC_* */
	uint32_t reserved;
	char device[128];		/* buddy_open() path; "" for default */

	uint64_t next_rec;		/* records claimed */
	uint64_t nr_rec_dropped;	/* allocations without a record */
	uint64_t nr_procs;		/* processes that took part */
	uint64_t nr_small;		/* allocations below min_size */
	uint64_t bytes_small;
	uint64_t nr_forks;		/* fork()s by a taking-part process */
	uint64_t nr_private_copies;	/* buddy allocations copied privately
					 * into a forked child */
	uint64_t bytes_private_copies;
	uint64_t nr_dev_open_failed;	/* processes whose device would not open */
	int32_t dev_open_err;		/* the first such errno */
	uint32_t nr_dev_inproc;		/* processes whose device is the
					 * in-process one (no mmap) */
	uint64_t live_bytes;		/* buddy bytes allocated, not freed */
	uint64_t peak_live_bytes;	/* the most of them at one time */
};

#define BRUN_PROFILES(h) \
	((struct brun_profile *)((char *)(h) + BRUN_HDR_BYTES))
#define BRUN_RECS(h) \
	((struct brun_rec *)((char *)(h) + BRUN_HDR_BYTES + \
	 BRUN_MAX_PROFILES * sizeof(struct brun_profile)))
#define BRUN_REGION_BYTES(nrecs) \
	((uint64_t)BRUN_HDR_BYTES + \
	 BRUN_MAX_PROFILES * sizeof(struct brun_profile) + \
	 (uint64_t)(nrecs) * sizeof(struct brun_rec))

_Static_assert(sizeof(struct brun_hdr) <= BRUN_HDR_BYTES, "header fits");

#endif /* BUDDY_RUN_SHM_H */
