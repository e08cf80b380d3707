/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resident window (window.c, window_evict.c): decompressed 4 KiB pages
 * of allocations, shared by all of them, that mmap() maps and pread/pwrite
 * are served from.
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
/* pages an IOCB_NOWAIT write may span: it holds all of their mutexes */
#define BUDDY_WIN_TRYLOCK_PAGES	16

/* Window counters, per allocation and device-wide. */
enum buddy_win_counter {
	BUDDY_WIN_FAULTS,	/* pages decompressed into the window */
	BUDDY_WIN_HITS,		/* accesses served by a resident page */
	BUDDY_WIN_WRITEBACKS,	/* dirty pages compressed back */
	BUDDY_WIN_EVICTIONS,	/* pages taken out of the window */
	BUDDY_WIN_HELD,		/* evictions refused: the page was held */
	BUDDY_WIN_NR,
};

/**
 * struct buddy_win - one allocation's part of the window.
 * @pages:	resident pages by page index (struct buddy_wpage).
 * @locks:	hashed by page index: held while a page is faulted in,
 *		written back or evicted, and by pread/pwrite of that page, so
 *		that a resident page and the stored entries never disagree.
 *		Never held across a user copy.
 * @inode:	the allocation's inode, referenced from buddy_win_set_inode()
 *		until buddy_win_release(): its pages' ->mapping, and
 *		unmap_mapping_range(), use it as long as the allocation lives,
 *		whoever holds the allocation after its file is gone.
 * @mapping:	@inode's address_space.
 * @counters:	enum buddy_win_counter.
 * @link_ps:	modeled link time, picoseconds.
 * @link_requests: link requests (core/link_model.h) of the link time.
 * @link_debt_ps: with link_delay on, modeled time of this allocation's
 *		traffic that no task has waited yet (a write-back made by an
 *		eviction in another task's fault, by munmap, by a re-target):
 *		the next pread, pwrite, fault, fsync or close of the
 *		allocation waits it, with no lock held.
 * @resident:	pages of the allocation in the window.
 */
struct buddy_win {
	struct xarray pages;
	struct mutex locks[BUDDY_WIN_LOCKS];
	struct inode *inode;
	struct address_space *mapping;
	atomic64_t counters[BUDDY_WIN_NR];
	atomic64_t link_ps;
	atomic64_t link_requests;
	atomic64_t link_debt_ps;
	atomic64_t resident;
};

struct buddy_allocation;
struct buddy_alloc_stat;
struct buddy_io_acct;
struct vm_area_struct;
struct seq_file;
struct buddy_user;

/**
 * struct buddy_wpage - one page of the window.
 * @node:	on the clock while @queued; on the orphan list once an orphan.
 * @a:		the allocation (no reference: the allocation frees its pages
 *		before it goes); NULL for an orphan.
 * @user:	the user whose share the page is charged to (user_limit_mb);
 *		an orphan holds a reference to it.
 * @inode:	an orphan's reference to its allocation's inode, which
 *		page->mapping points into until the page is freed.
 * @index:	page index in the allocation.
 * @page:	the decompressed bytes; the window holds one reference.
 * @dirty:	written since it was faulted in or written back, or held
 *		(under the page's mutex).
 * @queued:	on the clock (under the window's spinlock).
 * @referenced:	used since the clock's hand last passed (under the page's
 *		mutex).
 */
struct buddy_wpage {
	struct list_head node;
	struct buddy_allocation *a;
	struct buddy_user *user;
	struct inode *inode;
	unsigned long index;
	struct page *page;
	bool dirty;
	bool queued;
	bool referenced;
};

/*
 * Whether something besides the window holds @page: only meaningful with
 * the page locked and unmapped from every process
 * (buddy_win_unmap_page()), when the page tables hold no reference and a
 * new one can only come through a fault, which waits for the page's mutex
 * that the caller holds.
 */
static inline bool buddy_win_page_held(struct page *page)
{
	return page_count(page) != 1;
}

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

/* How buddy_win_io() gets the page's mutex. */
enum buddy_win_wait {
	BUDDY_WIN_KILLABLE,	/* pread, pwrite: -EINTR on a fatal signal */
	BUDDY_WIN_NOWAIT,	/* IOCB_NOWAIT: -EAGAIN instead of waiting */
	BUDDY_WIN_HELD_LOCK,	/* the caller holds it (buddy_win_trylock()) */
};

void buddy_win_init(struct buddy_allocation *a);
void buddy_win_set_inode(struct buddy_allocation *a, struct inode *inode);
void buddy_win_release(struct buddy_allocation *a);
void buddy_win_writeback(struct buddy_allocation *a, u64 first, u64 last);
int buddy_win_io(struct buddy_allocation *a, u64 pos, u8 *buf,
		 unsigned int len, u8 *d2, bool write,
		 enum buddy_win_wait wait, struct buddy_io_acct *acct);
int buddy_win_trylock(struct buddy_allocation *a, u64 first, u64 last,
		      u64 *held);
void buddy_win_unlock(struct buddy_allocation *a, u64 held);
int buddy_mmap(struct file *file, struct vm_area_struct *vma);
int buddy_fsync(struct file *file, loff_t start, loff_t end, int datasync);
int buddy_flush(struct file *file, fl_owner_t id);
void buddy_win_fill_stat(struct buddy_allocation *a,
			 struct buddy_alloc_stat *st);
void buddy_win_show_fdinfo(struct seq_file *m, struct buddy_allocation *a);
int buddy_window_stat(char *buf);
void buddy_win_inode_evicted(struct inode *inode);
void buddy_window_exit(void);

/* window.c, for window_evict.c */
void buddy_win_count(struct buddy_allocation *a, enum buddy_win_counter c);
struct mutex *buddy_win_lock(struct buddy_allocation *a, unsigned long idx);
void buddy_win_write_back(struct buddy_allocation *a, struct buddy_wpage *wp);
void buddy_win_unmap_page(struct buddy_allocation *a, unsigned long idx);
/* window_evict.c, for window.c */
void buddy_win_clock_insert(struct buddy_wpage *wp);
int buddy_win_make_room(struct buddy_allocation *a);

/**
 * buddy_win_stripe_io() - pread/pwrite of @len bytes at @pos, inside one
 * page: from or to the window when the page is resident (a hit, no entry
 * accesses; a write makes it dirty), else from or to the stored entries.
 * @a:		the allocation.
 * @pos:	byte position.
 * @buf:	kernel address: a bounce buffer, or a user page that
 *		buddy_read_direct() pinned (never a user address).
 * @len:	bytes, not crossing a page.
 * @write:	direction.
 * @wait:	how to take the page's mutex.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
static inline int buddy_win_stripe_io(struct buddy_allocation *a, u64 pos,
				      u8 *buf, unsigned int len, bool write,
				      enum buddy_win_wait wait,
				      struct buddy_io_acct *acct)
{
	return buddy_win_io(a, pos, buf, len, NULL, write, wait, acct);
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
 * @wait:	how to take the page's mutex.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
static inline int buddy_win_stripe_read2(struct buddy_allocation *a,
					 u64 pos, u8 *d1, unsigned int n1,
					 u8 *d2, enum buddy_win_wait wait,
					 struct buddy_io_acct *acct)
{
	return buddy_win_io(a, pos, d1, n1, d2, false, wait, acct);
}

#endif /* BUDDY_KMOD_WINDOW_H */
