// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libbuddy_aio.c - asynchronous reads, writes and commands of /dev/buddy
 * through io_uring (liburing).  Kept apart from libbuddy.c so that programs
 * linking the static library without these calls need no -luring.
 *
 * Bookkeeping: every queued SQE counts in @pending until its CQE is reaped.
 * The CQ ring holds 2 * depth entries; refusing a new operation once that
 * many are pending means the CQ can never overflow.
 *
 * Operations on the in-process device's descriptors (inproc.c) never reach
 * the ring: they wait in @emu until the next submission, run then, in
 * order, as the kernel's io-wq would run them, and their completions wait
 * in @done to be reaped before the ring's.  They count in @pending and the
 * same limit.  A context works without io_uring (a kernel without it, a
 * seccomp filter) as long as only in-process descriptors are used.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "inproc.h"
#include "libbuddy.h"

#define BUDDY_AIO_MAX_DEPTH	4096

/* An operation on an in-process descriptor, queued until submission. */
struct emu_op {
	int fd;
	bool write;
	unsigned int cmd;	/* 0: read or write */
	void *buf;
	size_t len;
	uint64_t off;
	uint64_t user_data;
};

struct buddy_aio {
	struct io_uring ring;
	int ring_err;		/* 0, or why there is no ring */
	unsigned int pending;	/* queued or in flight, not yet reaped */
	unsigned int limit;	/* CQ ring entries */
	struct emu_op *emu;	/* @limit slots, @nr_emu queued */
	unsigned int nr_emu;
	struct buddy_aio_completion *done;	/* @limit slots */
	unsigned int nr_done;
};

_Static_assert(sizeof(struct buddy_uring_cmd) <= 16,
	       "struct buddy_uring_cmd must fit a 64-byte SQE's command area");

/* See libbuddy.h. */
struct buddy_aio *buddy_aio_init(unsigned int depth, int *err)
{
	struct buddy_aio *ctx;
	int ret;

	if (!depth || depth > BUDDY_AIO_MAX_DEPTH) {
		ret = -EINVAL;
		goto fail;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = io_uring_queue_init(depth, &ctx->ring, 0);
	if (ret < 0) {
		unsigned int sq = 1;

		/* in-process descriptors still work; the ring's do not */
		while (sq < depth)
			sq <<= 1;
		ctx->ring_err = ret;
		ctx->limit = 2 * sq;
	} else {
		ctx->limit = ctx->ring.cq.ring_entries;
	}
	ctx->emu = calloc(ctx->limit, sizeof(*ctx->emu));
	ctx->done = calloc(ctx->limit, sizeof(*ctx->done));
	if (!ctx->emu || !ctx->done) {
		buddy_aio_exit(ctx);
		ret = -ENOMEM;
		goto fail;
	}
	if (err)
		*err = 0;
	return ctx;
fail:
	if (err)
		*err = ret;
	return NULL;
}

/* See libbuddy.h. */
void buddy_aio_exit(struct buddy_aio *ctx)
{
	if (!ctx)
		return;
	if (!ctx->ring_err)
		io_uring_queue_exit(&ctx->ring);
	free(ctx->emu);
	free(ctx->done);
	free(ctx);
}

/* See libbuddy.h. */
unsigned int buddy_aio_pending(const struct buddy_aio *ctx)
{
	return ctx->pending;
}

/* See libbuddy.h. */
int buddy_aio_submit(struct buddy_aio *ctx)
{
	unsigned int k, nr = ctx->nr_emu;
	int ret;

	for (k = 0; k < nr; k++) {
		struct emu_op *op = &ctx->emu[k];
		struct buddy_aio_completion *c = &ctx->done[ctx->nr_done++];

		c->user_data = op->user_data;
		c->res = op->cmd ? buddy_ioctl(op->fd, op->cmd, op->buf) :
			 inproc_rw(op->fd, op->buf, op->len, op->off,
				   op->write);
	}
	ctx->nr_emu = 0;
	if (ctx->ring_err || !io_uring_sq_ready(&ctx->ring))
		return nr;
	do {
		ret = io_uring_submit(&ctx->ring);
	} while (ret == -EINTR);
	return ret < 0 ? ret : ret + (int)nr;
}

/* Queue an operation on an in-process descriptor. */
static int queue_emu(struct buddy_aio *ctx, const struct emu_op *op)
{
	if (ctx->pending >= ctx->limit)
		return -EBUSY;
	ctx->emu[ctx->nr_emu++] = *op;
	ctx->pending++;
	return 0;
}

/* A cleared SQE, submitting what is queued when the SQ ring is full. */
static struct io_uring_sqe *get_sqe(struct buddy_aio *ctx, int *err)
{
	struct io_uring_sqe *sqe;
	int ret;

	if (ctx->pending >= ctx->limit) {
		*err = -EBUSY;
		return NULL;
	}
	if (ctx->ring_err) {
		*err = ctx->ring_err;
		return NULL;
	}
	sqe = io_uring_get_sqe(&ctx->ring);
	if (!sqe) {
		ret = buddy_aio_submit(ctx);
		if (ret < 0) {
			*err = ret;
			return NULL;
		}
		sqe = io_uring_get_sqe(&ctx->ring);
		if (!sqe) {
			*err = -EBUSY;
			return NULL;
		}
	}
	memset(sqe, 0, sizeof(*sqe));
	ctx->pending++;
	return sqe;
}

static int queue_rw(struct buddy_aio *ctx, int afd, void *buf, size_t len,
		    uint64_t off, uint64_t user_data, bool write)
{
	struct io_uring_sqe *sqe;
	int err;

	/* the SQE's length is 32 bits; offset -1 would mean "file position" */
	if (len > UINT32_MAX || off > INT64_MAX)
		return -EINVAL;
	if (inproc_owns(afd)) {
		struct emu_op op = { .fd = afd, .write = write, .buf = buf,
				     .len = len, .off = off,
				     .user_data = user_data };

		return queue_emu(ctx, &op);
	}
	sqe = get_sqe(ctx, &err);
	if (!sqe)
		return err;
	if (write)
		io_uring_prep_write(sqe, afd, buf, len, off);
	else
		io_uring_prep_read(sqe, afd, buf, len, off);
	io_uring_sqe_set_data64(sqe, user_data);
	return 0;
}

/* See libbuddy.h. */
int buddy_aio_read(struct buddy_aio *ctx, int afd, void *buf, size_t len,
		   uint64_t off, uint64_t user_data)
{
	return queue_rw(ctx, afd, buf, len, off, user_data, false);
}

/* See libbuddy.h. */
int buddy_aio_write(struct buddy_aio *ctx, int afd, const void *buf,
		    size_t len, uint64_t off, uint64_t user_data)
{
	return queue_rw(ctx, afd, (void *)buf, len, off, user_data, true);
}

/* See libbuddy.h. */
int buddy_aio_ioctl(struct buddy_aio *ctx, int fd, unsigned int cmd,
		    void *arg, uint64_t user_data)
{
	struct buddy_uring_cmd pl = { .arg = (uintptr_t)arg };
	struct io_uring_sqe *sqe;
	int err;

	if (inproc_owns(fd)) {
		struct emu_op op = { .fd = fd, .cmd = cmd, .buf = arg,
				     .user_data = user_data };

		return queue_emu(ctx, &op);
	}
	sqe = get_sqe(ctx, &err);
	if (!sqe)
		return err;
	/* cmd_op and the 16-byte command area of a 64-byte SQE (no SQE128) */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd;
	memcpy(sqe->cmd, &pl, sizeof(pl));
	io_uring_sqe_set_data64(sqe, user_data);
	return 0;
}

/* See libbuddy.h. */
int buddy_aio_wait(struct buddy_aio *ctx, struct buddy_aio_completion *c,
		   unsigned int n)
{
	struct io_uring_cqe *cqe;
	unsigned int got = 0;
	int ret;

	if (!n)
		return -EINVAL;
	if (!ctx->pending)
		return 0;
	ret = buddy_aio_submit(ctx);
	if (ret < 0)
		return ret;
	if (ctx->nr_done) {
		/* in-process completions first, then what the ring has */
		got = n < ctx->nr_done ? n : ctx->nr_done;
		memcpy(c, ctx->done, got * sizeof(*c));
		memmove(ctx->done, ctx->done + got,
			(ctx->nr_done - got) * sizeof(*c));
		ctx->nr_done -= got;
		ctx->pending -= got;
	} else {
		do {
			ret = io_uring_wait_cqe(&ctx->ring, &cqe);
		} while (ret == -EINTR);
		if (ret < 0)
			return ret;
	}
	while (!ctx->ring_err && got < n &&
	       io_uring_peek_cqe(&ctx->ring, &cqe) == 0) {
		c[got].user_data = io_uring_cqe_get_data64(cqe);
		c[got].res = cqe->res;
		io_uring_cqe_seen(&ctx->ring, cqe);
		ctx->pending--;
		got++;
	}
	return got;
}
