/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * inproc.h - libbuddy's in-process device (private to the library).
 *
 * A Buddy Compression device that lives in the calling process, built from
 * the same core/ code as buddy.ko (core/stripe.c, core/chunk.c,
 * core/layout.h).  Its control "device" and its allocations are real file
 * descriptors (memfds, so that close() ends them as on /dev/buddy) that
 * libbuddy recognises and routes here instead of to the kernel.
 */
#ifndef BUDDY_TOOLS_INPROC_H
#define BUDDY_TOOLS_INPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/linux/buddy.h"

#define INPROC_PREFIX		"inproc:"
#define INPROC_MAX_FD		65536	/* descriptors the table can name */

extern void *_Atomic *inproc_files;

/* Is @fd one of the in-process device's descriptors?  Cheap: no syscall. */
static inline bool inproc_owns(int fd)
{
	void *_Atomic *t = inproc_files;

	return t && fd >= 0 && fd < INPROC_MAX_FD && t[fd];
}

/* A new device from "device_mb=N,max_ratio=R[,chunk_kb=K,...]". */
int inproc_open(const char *opts, bool shared);
int inproc_ioctl(int fd, unsigned long cmd, void *arg);
ssize_t inproc_rw(int fd, void *buf, size_t len, uint64_t off, bool write);
int inproc_close(int fd);
int inproc_stats(int fd, struct buddy_counters *io, uint64_t *codes);

#endif /* BUDDY_TOOLS_INPROC_H */
