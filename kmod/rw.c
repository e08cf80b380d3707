// SPDX-License-Identifier: GPL-2.0
/*
 * The data path of an allocation: read_iter/write_iter move logical bytes
 * through the shared striping code (core/stripe.c), a stripe at a time.
 *
 * Locking: a stripe of BUDDY_STRIPE_ENTRIES aligned entries (whole
 * metadata bytes) is one page, and its window mutex (window.c) serializes
 * its I/O; inside it, the chunk's rw_semaphore is held for reading (for
 * writing only while the chunk is re-striped).  User memory is copied to
 * and from a bounce buffer outside any lock, or pinned for a direct read;
 * long I/O yields between stripes and stops on a fatal signal.  A page
 * resident in the window (window.c, mmap) is read and written there
 * instead.
 *
 * An IOCB_NOWAIT call (RWF_NOWAIT, io_uring's inline attempt) tries the
 * allocation's rt_sem for reading at its start and around its stripe
 * work, never across a user copy or pin: those may fault, and a fault may
 * sleep as long as the user likes (a userfaultfd page), which a re-target
 * must not wait behind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "buddy.h"

#define BOUNCE_BYTES		BUDDY_BOUNCE_BYTES

static bool iter_user_segment(const struct iov_iter *iter, unsigned long *addr,
			      size_t *len)
{
	if (iter_is_ubuf(iter)) {
		*addr = (unsigned long)iter->ubuf + iter->iov_offset;
		*len = iov_iter_count(iter);
		return true;
	}
	if (iter_is_iovec(iter)) {
		struct iovec v = iov_iter_iovec(iter);

		*addr = (unsigned long)v.iov_base;
		*len = v.iov_len;
		return true;
	}
	return false;
}

/*
 * Whole pages of a read straight into the reader's memory: the entries of
 * @pos.. (page-aligned, @len a multiple of PAGE_SIZE, at most BOUNCE_BYTES)
 * are decoded into the pages behind @iter instead of a bounce buffer and
 * then copied.  A user address that is not page-aligned (malloc()'s) puts
 * each stripe across two user pages: buddy_win_stripe_read2().
 *
 * The pages are pinned (pin_user_pages_fast() with FOLL_WRITE, which
 * faults them in writable and breaks copy-on-write) before any lock, and
 * released dirty after, as direct I/O does.  A pin, not a reference: a
 * fork() by another thread meanwhile copies a pinned anonymous page for
 * the child at once, instead of sharing it copy-on-write, after which the
 * reader's own next store would move it to a copy and leave the decoded
 * bytes in the child's page.  Taken when every page is anonymous memory:
 * a page of a buddy mapping (or of any file) is left to copy_to_iter(),
 * which goes through its fault handler and so its dirty tracking.
 *
 * Return: bytes moved (@iter advanced by as many); *@err gets 0 or the
 * error that stopped the move.  0 bytes with no error: not taken (@iter
 * untouched).
 */
static unsigned int buddy_read_direct(struct buddy_allocation *a, u64 pos,
				      unsigned int len, struct iov_iter *iter,
				      enum buddy_win_wait wait,
				      struct buddy_io_acct *acct, int *err)
{
	struct page *pages[BOUNCE_BYTES / PAGE_SIZE + 1];
	unsigned int nr, start, k, done = 0;
	unsigned long addr;
	size_t seg;
	int got, ret = 0;

	BUILD_BUG_ON(BUDDY_STRIPE_ENTRIES * BUDDY_ENTRY_BYTES != PAGE_SIZE);
	*err = 0;
	if (!user_backed_iter(iter) || !iter_user_segment(iter, &addr, &seg))
		return 0;
	/* a short segment (iovec): its whole stripes only */
	len = min_t(size_t, len, seg) & PAGE_MASK;
	if (!len)
		return 0;
	start = offset_in_page(addr);
	nr = DIV_ROUND_UP(start + len, PAGE_SIZE);
	got = pin_user_pages_fast(addr & PAGE_MASK, nr, FOLL_WRITE, pages);
	if (got <= 0)
		return 0;	/* a bad address: copy_to_iter() says -EFAULT */
	if (got < nr)		/* the stripes whose pages are all pinned */
		len = (start ? got - 1 : got) * PAGE_SIZE;
	for (k = 0; k < got; k++)
		if (!PageAnon(pages[k]))
			len = 0;
	if (len && wait == BUDDY_WIN_NOWAIT && !down_read_trylock(&a->rt_sem)) {
		len = 0;
		ret = -EAGAIN;
	}
	for (k = 0; k < len / PAGE_SIZE && !ret; k++) {
		u8 *d1 = kmap_local_page(pages[k]), *d2;

		if (!start) {
			ret = buddy_win_stripe_io(a, pos, d1, PAGE_SIZE, false,
						  wait, acct);
		} else {
			d2 = kmap_local_page(pages[k + 1]);
			ret = buddy_win_stripe_read2(a, pos, d1 + start,
						     PAGE_SIZE - start, d2,
						     wait, acct);
			kunmap_local(d2);
		}
		kunmap_local(d1);
		if (!ret)
			done += PAGE_SIZE;
		pos += PAGE_SIZE;
	}
	if (len && wait == BUDDY_WIN_NOWAIT)
		up_read(&a->rt_sem);
	unpin_user_pages_dirty_lock(pages, got, done);
	iov_iter_advance(iter, done);
	*err = ret;
	return done;
}

/*
 * Each stripe of @pos..@end from or to @buf, a resident page served from
 * the window: 0 or the error that stopped it, *@reached where.
 */
static int stripes_io(struct buddy_allocation *a, u64 pos, u64 end, u8 *buf,
		      bool write, enum buddy_win_wait wait,
		      struct buddy_io_acct *acct, u64 *reached)
{
	unsigned int n;
	int ret = 0;
	u64 p;

	for (p = pos; p < end; p += n) {
		n = buddy_stripe_end(p, end) - p;
		ret = buddy_win_stripe_io(a, p, buf + (p - pos), n, write,
					  wait, acct);
		if (ret)
			break;
	}
	*reached = p;
	return ret;
}

/*
 * An IOCB_NOWAIT write stores all of its bytes or none: @buf (room for
 * @end - @pos bytes, at most BUDDY_WIN_TRYLOCK_PAGES pages) gets the
 * user's bytes first, with no lock held, then rt_sem and the mutexes of
 * every page the range covers are tried at once (-EAGAIN with nothing
 * stored when one is busy), and only then are the stripes stored: with
 * rt_sem held no chunk is being re-striped and its semaphore is free.  A
 * short copy (a bad address) is -EAGAIN too: the blocking retry reports
 * what it can.
 *
 * Return: bytes stored (all of them, or those before a corrupt entry),
 * or -errno with nothing stored and @iter as it was.
 */
static ssize_t buddy_write_nowait(struct buddy_allocation *a, u64 pos,
				  u64 end, struct iov_iter *iter, u8 *buf,
				  struct buddy_io_acct *acct)
{
	unsigned int len = end - pos, k;
	u64 held, p;
	int ret;

	k = copy_from_iter(buf, len, iter);
	if (k != len) {
		iov_iter_revert(iter, k);
		return -EAGAIN;
	}
	if (!down_read_trylock(&a->rt_sem)) {
		iov_iter_revert(iter, len);
		return -EAGAIN;
	}
	ret = buddy_win_trylock(a, pos >> PAGE_SHIFT, (end - 1) >> PAGE_SHIFT,
				&held);
	if (ret) {
		up_read(&a->rt_sem);
		iov_iter_revert(iter, len);
		return ret;
	}
	ret = stripes_io(a, pos, end, buf, true, BUDDY_WIN_HELD_LOCK, acct, &p);
	buddy_win_unlock(a, held);
	up_read(&a->rt_sem);
	if (p == pos) {
		iov_iter_revert(iter, len);
		return ret;
	}
	iov_iter_revert(iter, end - p);
	return p - pos;
}

/*
 * The bounce buffer of a call moving @len bytes.  Small I/O (a few
 * entries) bounces in @small on the stack, larger through this CPU's spare
 * buffer (*@spare set), in the heap only when another call has it, or for
 * an IOCB_NOWAIT write of more than one bounce-full (@whole), which must
 * hold all its bytes at once.  NULL when memory is short.
 */
static u8 *bounce_get(u64 len, bool nowait, bool whole, u8 *small,
		      size_t small_len, bool *spare)
{
	u8 *b;

	*spare = false;
	if (len <= small_len)
		return small;
	if (whole && len > BOUNCE_BYTES)
		return kmalloc(len, GFP_NOWAIT | __GFP_NOWARN);
	*spare = true;
	b = this_cpu_xchg(buddy_dev->pcpu->bounce, NULL);
	return b ?: kmalloc(BOUNCE_BYTES, nowait ? GFP_NOWAIT : GFP_KERNEL);
}

/* Back as the spare of the CPU we are on, unless it has one. */
static void bounce_put(u8 *b, u8 *small, bool spare)
{
	if (b != small &&
	    (!spare || this_cpu_cmpxchg(buddy_dev->pcpu->bounce, NULL, b)))
		kfree(b);
}

/*
 * Move @pos..@end between the allocation and @iter one bounce-full at a
 * time, each aligned so that it ends on a stripe (whole pages of a read
 * into anonymous memory go straight there): the bytes moved, *@err the
 * error that stopped it.  Yields between bounce-fulls, stops on a fatal
 * signal.
 */
static size_t rw_pieces(struct buddy_allocation *a, u64 pos, u64 end,
			struct iov_iter *iter, bool write,
			enum buddy_win_wait wait, u8 *bounce,
			struct buddy_io_acct *acct, int *err)
{
	size_t done = 0;
	int ret = 0;

	while (pos < end) {
		u64 piece_end = min_t(u64, end,
				      round_down(pos, BOUNCE_BYTES) + BOUNCE_BYTES);
		unsigned int piece = piece_end - pos, n;
		u64 p;

		if (!write && !(pos & ~PAGE_MASK) && piece >= PAGE_SIZE) {
			n = buddy_read_direct(a, pos, piece & PAGE_MASK, iter,
					      wait, acct, &ret);
			pos += n;
			done += n;
			if (ret)
				break;
			if (n)
				goto next;
		}
		if (write && copy_from_iter(bounce, piece, iter) != piece) {
			ret = -EFAULT;
			break;
		}
		if (wait == BUDDY_WIN_NOWAIT && !down_read_trylock(&a->rt_sem)) {
			ret = -EAGAIN;
			break;
		}
		ret = stripes_io(a, pos, piece_end, bounce, write, wait, acct,
				 &p);
		if (wait == BUDDY_WIN_NOWAIT)
			up_read(&a->rt_sem);
		if (ret == -EAGAIN)
			break;		/* no progress to count: the caller */
		if (ret) {
			/* what was stored or read before the failure counts */
			piece = p - pos;
			if (!write && copy_to_iter(bounce, piece, iter) != piece)
				ret = -EFAULT;
			done += piece;
			break;
		}
		if (!write && copy_to_iter(bounce, piece, iter) != piece) {
			ret = -EFAULT;
			break;
		}
		pos += piece;
		done += piece;
next:
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	*err = ret;
	return done;
}

static ssize_t buddy_rw(struct kiocb *iocb, struct iov_iter *iter, bool write)
{
	struct buddy_allocation *a = iocb->ki_filp->private_data;
	bool nowait = iocb->ki_flags & IOCB_NOWAIT;
	struct buddy_io_acct acct = {};
	u64 pos = iocb->ki_pos, end, ps;
	size_t done = 0, len = iov_iter_count(iter);
	/* only bytes a stripe or the user wrote are ever read from it */
	u8 small[2 * BUDDY_ENTRY_BYTES] __uninitialized;
	bool spare;
	u8 *bounce;
	int ret = 0;

	if (write) {
		/* O_APPEND moves to the end (so: ENOSPC); RLIMIT_FSIZE */
		ssize_t r = generic_write_checks(iocb, iter);

		if (r <= 0)
			return r;
		pos = iocb->ki_pos;
		len = r;
	}
	if (iocb->ki_pos < 0)
		return -EINVAL;
	if (!len)
		return 0;
	if (pos >= a->size)
		return write ? -ENOSPC : 0;
	end = min_t(u64, a->size, pos + len);

	if (nowait) {
		/* a write holds the mutexes of all its pages at once */
		if (write && ((end - 1) >> PAGE_SHIFT) - (pos >> PAGE_SHIFT) >=
			     BUDDY_WIN_TRYLOCK_PAGES)
			return -EAGAIN;
		/*
		 * A running re-target holds rt_sem for writing while it
		 * re-stripes chunk after chunk: give up at once, before the
		 * user's memory is touched, rather than at the first stripe.
		 */
		if (!down_read_trylock(&a->rt_sem))
			return -EAGAIN;
		up_read(&a->rt_sem);
	}
	bounce = bounce_get(end - pos, nowait, write && nowait, small,
			    sizeof(small), &spare);
	if (!bounce) {
		ret = nowait ? -EAGAIN : -ENOMEM;
		goto out;
	}
	if (write && nowait) {
		ssize_t r = buddy_write_nowait(a, pos, end, iter, bounce,
					       &acct);

		done = r > 0 ? r : 0;
		ret = r < 0 ? r : 0;
	} else {
		done = rw_pieces(a, pos, end, iter, write,
				 nowait ? BUDDY_WIN_NOWAIT : BUDDY_WIN_KILLABLE,
				 bounce, &acct, &ret);
	}
	if (ret == -EAGAIN) {
		/*
		 * An IOCB_NOWAIT read met a busy page after progress.  A
		 * short count here would reach the program as is (io_uring
		 * completes short I/O on files that are not regular), so
		 * take the progress back: the position stays, the caller
		 * retries the whole request (io_uring from io-wq, with its
		 * iter restored), and the bytes already read are read again.
		 * The counters keep what the first attempt really did.
		 */
		done = 0;
	}
	bounce_put(bounce, small, spare);
out:
	ps = buddy_acct_flush(a, &acct);
	/*
	 * The opt-in real delay: this call's traffic and what the allocation
	 * owes, with no lock held; never in a call that must not wait.
	 */
	if (!nowait)
		buddy_link_delay(ps + buddy_link_take_debt(a));
	iocb->ki_pos = pos + done;
	return done ? done : ret;
}

ssize_t buddy_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	return buddy_rw(iocb, to, false);
}

ssize_t buddy_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	return buddy_rw(iocb, from, true);
}
