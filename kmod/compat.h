/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels buddy.ko builds on, in one place.
 * Built and tested on Debian's 6.1; the newer branches follow upstream.
 */
#ifndef BUDDY_KMOD_COMPAT_H
#define BUDDY_KMOD_COMPAT_H

#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/* The command area of the SQE: cmd->cmd in 6.1, io_uring_sqe_cmd() later. */
static inline const void *buddy_uring_cmd_payload(struct io_uring_cmd *cmd)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

#endif /* BUDDY_KMOD_COMPAT_H */
