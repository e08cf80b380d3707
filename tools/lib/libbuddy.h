/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libbuddy.h - a thin userspace wrapper around /dev/buddy (uapi/linux/buddy.h).
 *
 * Every function that can fail returns a negative errno value (-ENOSPC, ...)
 * and leaves errno alone; buddy_strerror() explains such a value for the
 * operation that returned it.  Nothing here allocates memory or keeps state.
 */
#ifndef BUDDY_TOOLS_LIBBUDDY_H
#define BUDDY_TOOLS_LIBBUDDY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/linux/buddy.h"

#define BUDDY_DEV_PATH		"/dev/buddy"
#define BUDDY_SYSFS_DIR		"/sys/class/misc/buddy"
#define BUDDY_PARAM_DIR		"/sys/module/buddy/parameters"

/* Operations, for buddy_strerror(). */
enum buddy_op {
	BUDDY_OP_OPEN,		/* buddy_open() */
	BUDDY_OP_INFO,		/* BUDDY_IOC_GET_INFO */
	BUDDY_OP_ALLOC,		/* BUDDY_IOC_ALLOC */
	BUDDY_OP_READ,		/* pread on an allocation */
	BUDDY_OP_WRITE,		/* pwrite on an allocation */
	BUDDY_OP_STAT,		/* BUDDY_IOC_ALLOC_STAT */
	BUDDY_OP_MAP,		/* BUDDY_IOC_GET_MAP */
	BUDDY_OP_LIST,		/* BUDDY_IOC_LIST */
	BUDDY_OP_SET_TARGET,	/* BUDDY_IOC_SET_TARGET */
	BUDDY_OP_PROFILE,	/* BUDDY_IOC_PROFILE_SET / _GET */
};

int buddy_open(const char *path);
int buddy_get_info(int devfd, struct buddy_info *info);
int buddy_alloc(int devfd, struct buddy_alloc *req);
int buddy_alloc_simple(int devfd, uint64_t size, unsigned int target,
		       unsigned int codec, const char *label, uint64_t *id_out);
ssize_t buddy_pread(int afd, void *buf, size_t len, uint64_t off);
ssize_t buddy_pwrite(int afd, const void *buf, size_t len, uint64_t off);
int buddy_alloc_stat(int afd, struct buddy_alloc_stat *st);
int buddy_get_map(int afd, uint64_t first, uint64_t count, uint8_t *codes);

const char *buddy_strerror(int err, int op);

int buddy_target_parse(const char *s, unsigned int *target);
const char *buddy_target_name(unsigned int target);
const char *buddy_codec_name(unsigned int codec);
int buddy_codec_parse(const char *s);

/*
 * Admin calls on /dev/buddy (CAP_SYS_ADMIN, else -EPERM): every live
 * allocation, any allocation by id, re-targeting, and the AUTO profile table.
 */
int buddy_list(int devfd, uint64_t start_id, struct buddy_alloc_stat *arr,
	       unsigned int cap, unsigned int *count, uint64_t *total);
int buddy_stat_id(int devfd, uint64_t id, struct buddy_alloc_stat *st);
int buddy_get_map_id(int devfd, uint64_t id, uint64_t first, uint64_t count,
		     uint8_t *codes);
int buddy_set_target(int devfd, uint64_t id, unsigned int target,
		     unsigned int codec);
int buddy_profile_set(int devfd, const struct buddy_profile_entry *entries,
		      unsigned int n, unsigned int flags);
int buddy_profile_get(int devfd, struct buddy_profile_entry *entries,
		      unsigned int cap, unsigned int *n, unsigned int *total);

#endif /* BUDDY_TOOLS_LIBBUDDY_H */
