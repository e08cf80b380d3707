/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * inproc_dev.h - what the two files of the in-process device share: its
 * device, allocations and descriptors.
 *
 *   inproc.c        the pools, descriptors, opening, allocations, the data
 *                   path, the counters
 *   inproc_ioctl.c  the reports (GET_MAP, LIST), re-targeting, the profile
 *                   table and the ioctl dispatcher
 */
#ifndef BUDDY_INPROC_DEV_H
#define BUDDY_INPROC_DEV_H

#include <pthread.h>
#include <sys/types.h>

#include "core/alloc.h"
#include "inproc.h"

#define NR_LOCKS	64	/* hashed stripe locks per allocation */

#define MAX_RW		0x7ffff000UL	/* the kernel's MAX_RW_COUNT */

#define NR_COUNTERS	(sizeof(struct buddy_counters) / sizeof(u64))

struct pool {
	u8 *base;
	u64 bytes;
	unsigned long *map;
	unsigned long nbits;
	u64 used;
};

struct dev;

struct alloc {
	struct alloc *next, **pprev;
	struct dev *d;
	BUDDY_ALLOC_CORE(core);		/* what buddy.ko's allocation has */
	u32 uid;
	u32 pid;
	struct buddy_chunk_ext *chunks;
	pthread_rwlock_t rt;		/* I/O: read; re-target: write */
	pthread_mutex_t locks[NR_LOCKS];
	pthread_mutex_t stat_lock;	/* @cnt and @codes */
	struct buddy_counters cnt;
	u64 link_ps;			/* the link model's sum (core/link_model.h) */
	u64 link_requests;		/* its link requests */
	s64 codes[BUDDY_CODE_NR];
};

struct dev {
	pthread_mutex_t lock;	/* everything below but the pools' bytes */
	char opts[128];
	bool shared;		/* the BUDDY_DEVICE one, reused by buddy_open() */
	unsigned int device_mb, max_ratio, chunk_kb, user_limit_mb;
	unsigned int auto_target;
	unsigned int link_gbps, link_latency_ns, device_gbps;
	struct pool pool[2];
	struct buddy_space space;
	u64 held;		/* this uid's share: device + carve-out bytes */
	unsigned int nr_allocs;
	u64 logical_bytes;
	u64 next_id;
	struct alloc *allocs, **tail;	/* in id order */
	unsigned int nr_files;	/* open control descriptors */
	struct buddy_counters dead;	/* counters of freed allocations */
	struct buddy_profile_entry *profiles;
	unsigned int nr_profiles;
};

/* One descriptor: the control device or an allocation. */
struct file {
	int fd;
	dev_t st_dev;
	ino_t st_ino;
	struct dev *d;
	struct alloc *a;	/* NULL: the control device */
};

/* inproc.c */
struct file *inproc_file_of(int fd);
void inproc_fill_info(struct dev *d, struct buddy_info *info);
void inproc_fill_stat(struct alloc *a, struct buddy_alloc_stat *st);
struct alloc *inproc_find_id(struct dev *d, u64 id);
long inproc_dev_alloc(struct dev *d, struct buddy_alloc *req);
extern const struct buddy_chunk_ops inproc_chunk_ops;
/* Taken by every call that adds, frees or looks up allocations by id. */
extern pthread_mutex_t inproc_files_lock;
void inproc_sweep(void);

/* inproc_ioctl.c */
long inproc_map_codes(struct alloc *a, struct buddy_map *m);

#endif /* BUDDY_INPROC_DEV_H */
