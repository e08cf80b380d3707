/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels buddy.ko builds on, in one place.  Kbuild
 * probes the headers (kmod/Kbuild) rather than trusting version numbers,
 * since distributions backport.  Built and tested on Debian's 6.1.
 */
#ifndef BUDDY_KMOD_COMPAT_H
#define BUDDY_KMOD_COMPAT_H

#ifdef BUDDY_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/* The command area of the SQE: cmd->cmd in 6.1, io_uring_sqe_cmd() later. */
static inline const void *buddy_uring_cmd_payload(struct io_uring_cmd *cmd)
{
#ifdef BUDDY_HAVE_IO_URING_SQE_CMD
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

#endif /* BUDDY_KMOD_COMPAT_H */
