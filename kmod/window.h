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
 * @link_requests: link requests (core/link.h) of the link time.
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
int buddy_win_stripe_io(struct buddy_allocation *a, u64 pos, u8 *buf,
			unsigned int len, bool write, bool nowait,
			struct buddy_io_acct *acct);
int buddy_win_stripe_read2(struct buddy_allocation *a, u64 pos, u8 *d1,
			   unsigned int n1, u8 *d2, bool nowait,
			   struct buddy_io_acct *acct);
int buddy_mmap(struct file *file, struct vm_area_struct *vma);
int buddy_fsync(struct file *file, loff_t start, loff_t end, int datasync);
int buddy_flush(struct file *file, fl_owner_t id);
void buddy_win_fill_stat(struct buddy_allocation *a,
			 struct buddy_alloc_stat *st);
void buddy_win_show_fdinfo(struct seq_file *m, struct buddy_allocation *a);
int buddy_window_stat(char *buf);
void buddy_window_exit(void);

/* link.c */
u64 buddy_link_account(struct buddy_allocation *a,
		       const struct buddy_io_acct *acct);
void buddy_link_delay(u64 ps);
u64 buddy_link_device_ns(void);

#endif /* BUDDY_KMOD_WINDOW_H */
