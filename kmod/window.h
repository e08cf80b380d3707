/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resident window (window.c): decompressed 4 KiB pages of allocations,
 * shared by all of them, that mmap() maps and pread/pwrite are served from;
 * and the link model (link.c): modeled nanoseconds of buddy and device
 * traffic.
 */
#ifndef BUDDY_KMOD_WINDOW_H
#define BUDDY_KMOD_WINDOW_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#define BUDDY_WIN_LOCKS	64	/* hashed page locks per allocation */

/* Window counters, per allocation and device-wide. */
enum buddy_win_counter {
	BUDDY_WIN_FAULTS,	/* pages decompressed into the window */
	BUDDY_WIN_HITS,		/* accesses served by a resident page */
	BUDDY_WIN_WRITEBACKS,	/* dirty pages compressed back */
	BUDDY_WIN_EVICTIONS,	/* pages taken out of the window */
	BUDDY_WIN_NR,
};

/**
 * struct buddy_win - one allocation's part of the window.
 * @pages:	resident pages by page index (struct buddy_wpage).
 * @locks:	hashed by page index: held while a page is faulted in,
 *		written back or evicted, and by pread/pwrite of that page, so
 *		that a resident page and the stored entries never disagree.
 *		Never held across a user copy.
 * @mapping:	the allocation's address_space, for unmap_mapping_range().
 * @counters:	enum buddy_win_counter.
 * @link_ps:	modeled link time, picoseconds.
 * @link_requests: link requests (core/link_model.h) of the link time.
 * @resident:	pages of the allocation in the window.
 */
struct buddy_win {
	struct xarray pages;
	struct mutex locks[BUDDY_WIN_LOCKS];
	struct address_space *mapping;
	atomic64_t counters[BUDDY_WIN_NR];
	atomic64_t link_ps;
	atomic64_t link_requests;
	atomic64_t resident;
};

struct buddy_allocation;
struct buddy_alloc_stat;
struct buddy_counters;
struct buddy_io_acct;
struct vm_area_struct;
struct file;
struct inode;
struct seq_file;

/* vm_flags are set through a helper from 6.3 on (Kbuild probes for it) */
static inline void buddy_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#ifdef BUDDY_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

void buddy_win_init(struct buddy_allocation *a);
void buddy_win_release(struct buddy_allocation *a);
int buddy_win_writeback(struct buddy_allocation *a, u64 first, u64 last);
int buddy_win_io(struct buddy_allocation *a, u64 pos, u8 *buf,
		 unsigned int len, u8 *d2, bool write, bool nowait,
		 struct buddy_io_acct *acct);
int buddy_mmap(struct file *file, struct vm_area_struct *vma);
int buddy_fsync(struct file *file, loff_t start, loff_t end, int datasync);
int buddy_flush(struct file *file, fl_owner_t id);
void buddy_win_fill_stat(struct buddy_allocation *a,
			 struct buddy_alloc_stat *st);
void buddy_win_show_fdinfo(struct seq_file *m, struct buddy_allocation *a);
int buddy_window_stat(char *buf);
void buddy_window_exit(void);

/**
 * buddy_win_stripe_io() - pread/pwrite of @len bytes at @pos, inside one
 * page: from or to the window when the page is resident (a hit, no entry
 * accesses; a write makes it dirty), else from or to the stored entries.
 * @a:		the allocation.
 * @pos:	byte position.
 * @buf:	kernel address: a bounce buffer, or a user page that
 *		buddy_read_direct() took (never a user address).
 * @len:	bytes, not crossing a page.
 * @write:	direction.
 * @nowait:	give up with -EAGAIN instead of waiting.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
static inline int buddy_win_stripe_io(struct buddy_allocation *a, u64 pos,
				      u8 *buf, unsigned int len, bool write,
				      bool nowait, struct buddy_io_acct *acct)
{
	return buddy_win_io(a, pos, buf, len, NULL, write, nowait, acct);
}

/**
 * buddy_win_stripe_read2() - pread of the whole page at @pos into two
 * pieces, its first @n1 bytes to @d1 and the rest to @d2: from the window
 * when the page is resident, else from the stored entries.
 * @a:		the allocation.
 * @pos:	page-aligned byte position.
 * @d1:		kernel address of the first piece.
 * @n1:		its length, 1..PAGE_SIZE - 1.
 * @d2:		kernel address of the second, PAGE_SIZE - @n1 bytes.
 * @nowait:	give up with -EAGAIN instead of waiting.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
static inline int buddy_win_stripe_read2(struct buddy_allocation *a,
					 u64 pos, u8 *d1, unsigned int n1,
					 u8 *d2, bool nowait,
					 struct buddy_io_acct *acct)
{
	return buddy_win_io(a, pos, d1, n1, d2, false, nowait, acct);
}

/* link.c */
u64 buddy_acct_flush(struct buddy_allocation *a, struct buddy_io_acct *acct);
extern unsigned int buddy_link_delay_on;
void __buddy_link_delay(u64 ps);

/**
 * buddy_link_delay() - with the link_delay parameter on, really wait the
 * modeled time of one call (from buddy_acct_flush()); nothing otherwise.
 * @ps:	modeled picoseconds of the call.
 *
 * Context: process context that may sleep (no spinlock held): the end of a
 * pread/pwrite, a window fault or write-back, under mutexes at most.  Short
 * waits spin (ndelay), longer ones sleep killably, at most 100 ms per call
 * (LINK_DELAY_MAX_NS).  Counters and link_ns never depend on it.
 */
static inline void buddy_link_delay(u64 ps)
{
	/* off by default: no call, no division on the data path */
	if (unlikely(READ_ONCE(buddy_link_delay_on)) && ps >= 1000)
		__buddy_link_delay(ps);
}

u64 buddy_link_device_ns(void);

#endif /* BUDDY_KMOD_WINDOW_H */
