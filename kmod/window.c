// SPDX-License-Identifier: GPL-2.0
/*
 * The resident window: the emulated device's on-chip side.
 *
 * mmap() of an allocation maps decompressed 4 KiB pages that the module owns:
 * one window of at most window_mb MiB shared by all allocations.  A fault on
 * a page that is not resident first makes room (below), then decompresses
 * the page's 32 entries into a fresh page, counting entry reads and sectors
 * exactly as pread does.  Pages are real struct pages handed to the fault
 * through vmf->page (no PFNMAP, so GUP works) and mapped read-only first:
 * the first write goes through page_mkwrite, which marks the page dirty.
 * Eviction and write-back unmap the page from every process
 * (unmap_mapping_range(), which also write-protects it again) and compress
 * a dirty page back into its entries, counted as pwrite counts.
 * msync(MS_SYNC) (.fsync), munmap (vm close), close (.flush) and
 * re-targeting write dirty pages back.
 *
 * Making room is a clock (second chance).  The resident pages form a ring
 * in the order they came in; the hand looks at the oldest.  A page used
 * since the hand last passed (a fault that mapped it, a pread or pwrite of
 * it: @referenced) gets a second chance: the bit is cleared and the page
 * unmapped, so that the next access through a mapping faults again (a hit,
 * no entry is read) and sets the bit; the page goes to the back of the
 * ring.  A page not used since is evicted.  The page tables' accessed bits
 * would say the same without the extra faults, but a module cannot walk
 * the mappings of a file to read them.
 *
 * A page is *held* when something besides the window and the page tables
 * has a reference to it: a GUP pin (process_vm_writev, O_DIRECT, RDMA),
 * 9p's zero-copy read, a pipe's reference from vmsplice.  A holder may
 * write it through the kernel's address at any time, with no fault and no
 * page_mkwrite, so a held page is never evicted (the clock keeps it and
 * counts it in window_stat's held column) and is never clean: a write-back
 * stores its bytes but leaves it dirty, to be written back again once the
 * holder is gone.  Whether a page is held is decided with the page locked
 * and unmapped from every process, so that no new reference can be taken
 * but through a fault, which waits for the page's mutex.  The window may
 * so exceed window_mb by the pages held; user_limit_mb bounds what one
 * user's allocations keep in the window (their pool bytes, resident pages
 * and orphans together): a fault over it evicts that user's own pages, and
 * fails with SIGBUS when all that is left of them is held.
 *
 * An *orphan* is a page still held when its allocation goes (the last
 * reference: the file closed, every mapping gone, no admin call holding
 * it).  Its bytes belong to no one any more; it waits on the orphan list,
 * charged to its user, until only the window's reference is left.
 *
 * The allocation's inode lives as long as anything can reach its mapping:
 * the allocation holds a reference from its creation to its last
 * reference (evictions and re-targets may run after the file is gone),
 * and each orphan holds one until it is freed, since a holder releasing
 * the page (set_page_dirty_lock()) follows page->mapping.  The window
 * clears page->mapping before a page leaves it.
 *
 * pread and pwrite of a resident page are served from the window and count
 * no entry accesses (a pwrite makes the page dirty).
 *
 * Locking, in order: mmap_lock; a hashed page mutex of the allocation
 * (struct buddy_win.locks: a page's fault, write-back and eviction and
 * pread/pwrite of it); the page lock; the chunk semaphore (stripe_io()).
 * The window's spinlock guards only its lists, one entry per acquisition.
 * No user copy happens under any of them, and no link_delay wait: a fault
 * drops mmap_lock before it waits (VM_FAULT_RETRY), and time owed to an
 * allocation by a task that cannot wait is waited by the allocation's next
 * caller (link.c).  Evicting takes a reference on the victim's allocation
 * and no other page mutex is held meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "buddy.h"
#include "core/link_model.h"

/* Orphans looked at per reap: the list is walked a bounded piece a time. */
#define REAP_BATCH	64

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

static struct {
	spinlock_t lock;
	struct list_head clock;		/* the hand is at the head */
	struct list_head orphans;
	unsigned long nr;
	unsigned long nr_orphans;
} win = {
	.lock = __SPIN_LOCK_UNLOCKED(win.lock),
	.clock = LIST_HEAD_INIT(win.clock),
	.orphans = LIST_HEAD_INIT(win.orphans),
};

static unsigned int window_mb = 16;

static unsigned long window_limit(void)
{
	return (unsigned long)READ_ONCE(window_mb) << (20 - PAGE_SHIFT);
}

static void count(struct buddy_allocation *a, enum buddy_win_counter c)
{
	atomic64_inc(&a->win.counters[c]);
	/* the device's: this CPU's part, no line shared with other CPUs */
	this_cpu_inc(buddy_dev->pcpu->win_counters[c]);
}

static struct mutex *win_lock(struct buddy_allocation *a, unsigned long idx)
{
	return &a->win.locks[idx % BUDDY_WIN_LOCKS];
}

void buddy_win_init(struct buddy_allocation *a)
{
	unsigned int i;

	BUILD_BUG_ON(BUDDY_STRIPE_ENTRIES * BUDDY_ENTRY_BYTES != PAGE_SIZE);
	/* its nodes are charged to the faulting task's memory cgroup */
	xa_init_flags(&a->win.pages, XA_FLAGS_ACCOUNT);
	for (i = 0; i < BUDDY_WIN_LOCKS; i++)
		mutex_init(&a->win.locks[i]);
}

/**
 * buddy_win_set_inode() - the allocation's inode, for its pages' mapping:
 * a reference of its own, dropped by buddy_win_release().
 * @a:		the allocation.
 * @inode:	its inode (the caller's reference stays the caller's).
 */
void buddy_win_set_inode(struct buddy_allocation *a, struct inode *inode)
{
	ihold(inode);
	a->win.inode = inode;
	a->win.mapping = inode->i_mapping;
}

/* How stripe_io() waits for its chunk's semaphore. */
enum stripe_wait {
	STRIPE_NOWAIT,		/* IOCB_NOWAIT: -EAGAIN instead */
	STRIPE_KILLABLE,	/* pread, pwrite: -EINTR on a fatal signal */
	STRIPE_ALWAYS,		/* a fault-in or write-back: uninterruptibly */
};

/*
 * Run one stripe: @pos..@pos+@len (inside one stripe) from or to @buf.
 * The caller holds the mutex of the stripe's page (a stripe is one page):
 * every reader and writer of a stripe's entries and metadata bytes holds
 * it, so no stripe lock is taken here; only the chunk's semaphore, against
 * a re-stripe.  Inlined: the pread/pwrite path pays no call for it.
 */
static __always_inline int stripe_io(struct buddy_allocation *a, u64 pos,
				     u8 *buf, unsigned int len, bool write,
				     enum stripe_wait wait,
				     struct buddy_io_acct *acct)
{
	unsigned int c, i, off;
	struct buddy_chunk *ch;
	int ret;

	buddy_locate(pos, a->chunk_entries, &c, &i, &off);
	ch = &a->chunks[c];
	if (wait == STRIPE_NOWAIT) {
		/* cannot fail: the caller holds rt_sem, no re-stripe runs */
		if (!down_read_trylock(&ch->sem))
			return -EAGAIN;
	} else if (wait == STRIPE_KILLABLE) {
		if (down_read_killable(&ch->sem))
			return -EINTR;
	} else {
		down_read(&ch->sem);
	}
	if (write && !READ_ONCE(ch->e.written))
		WRITE_ONCE(ch->e.written, true);
	ret = buddy_stripe_rw_fpu(&ch->e.x, i, off, buf, len, write, acct);
	up_read(&ch->sem);
	return ret;
}

/*
 * Move the entries of page @idx between the stored form and @addr (a whole
 * page; what lies past the last entry is zero on reading).  Whole entries
 * only: reading counts as pread, writing as a pwrite of whole entries.
 * Waits for the chunk uninterruptibly, so that a dying process's munmap
 * still writes its data back.  The caller holds the page's mutex.
 */
static int page_entries_io(struct buddy_allocation *a, unsigned long idx,
			   u8 *addr, bool write, struct buddy_io_acct *acct)
{
	u64 first = (u64)idx * BUDDY_STRIPE_ENTRIES;
	unsigned int n = min_t(u64, BUDDY_STRIPE_ENTRIES, a->nr_entries - first);
	int ret;

	ret = stripe_io(a, (u64)idx << PAGE_SHIFT, addr, n * BUDDY_ENTRY_BYTES,
			write, STRIPE_ALWAYS, acct);
	if (!write)
		memset(addr + n * BUDDY_ENTRY_BYTES, 0,
		       PAGE_SIZE - n * BUDDY_ENTRY_BYTES);
	return ret;
}

/*
 * Compress a dirty page back; the caller holds its page mutex and page
 * lock.  Its modeled link time is owed to the allocation: whoever asked
 * for the write-back waits it later, with no lock held (link.c).
 */
static void write_back(struct buddy_allocation *a, struct buddy_wpage *wp)
{
	struct buddy_io_acct acct = {};
	u64 pos = (u64)wp->index << PAGE_SHIFT;
	u8 *addr = kmap_local_page(wp->page);

	/* bytes past the end are never stored */
	if (a->size - pos < PAGE_SIZE)
		memset(addr + (a->size - pos), 0, PAGE_SIZE - (a->size - pos));
	page_entries_io(a, wp->index, addr, true, &acct);
	kunmap_local(addr);
	buddy_link_owe(a, buddy_acct_flush(a, &acct));
	wp->dirty = false;
	count(a, BUDDY_WIN_WRITEBACKS);
}

static void unmap_page(struct buddy_allocation *a, unsigned long idx)
{
	unmap_mapping_range(a->win.mapping, (loff_t)idx << PAGE_SHIFT,
			    PAGE_SIZE, 0);
}

/*
 * Whether something besides the window holds @page: only meaningful with
 * the page locked and unmapped from every process (unmap_page()), when
 * the page tables hold no reference and a new one can only come through a
 * fault, which waits for the page's mutex that the caller holds.
 */
static bool page_held(struct page *page)
{
	return page_count(page) != 1;
}

static void clock_add(struct buddy_wpage *wp)
{
	spin_lock(&win.lock);
	list_add_tail(&wp->node, &win.clock);
	wp->queued = true;
	spin_unlock(&win.lock);
}

/* A page the window lets go: only the window's reference is left. */
static void free_wpage(struct buddy_wpage *wp)
{
	struct page *page = wp->page;

	page->mapping = NULL;
	ClearPageDirty(page);
	__free_page(page);
	buddy_user_window_add(wp->user, -1);
	kfree(wp);
}

static void free_orphan(struct buddy_wpage *wp)
{
	struct buddy_user *u = wp->user;
	struct inode *inode = wp->inode;

	free_wpage(wp);
	iput(inode);
	buddy_user_put(u);
}

/*
 * Free the orphans nobody holds any more, looking at @max of them at most:
 * REAP_BATCH per acquisition of the spinlock, the ones still held moved to
 * the back, so that every orphan is looked at in turn.  Returns how many
 * were freed.
 */
static unsigned long reap_orphans(unsigned long max)
{
	unsigned long freed = 0;

	while (max && READ_ONCE(win.nr_orphans)) {
		struct buddy_wpage *wp, *n;
		unsigned int i;
		LIST_HEAD(done);

		spin_lock(&win.lock);
		for (i = 0; i < REAP_BATCH && max && !list_empty(&win.orphans);
		     i++, max--) {
			wp = list_first_entry(&win.orphans, struct buddy_wpage,
					      node);
			/* no mapping is left: a holder can only let go */
			if (page_count(wp->page) == 1) {
				list_move(&wp->node, &done);
				win.nr_orphans--;
			} else {
				list_move_tail(&wp->node, &win.orphans);
			}
		}
		spin_unlock(&win.lock);
		list_for_each_entry_safe(wp, n, &done, node) {
			free_orphan(wp);
			freed++;
		}
		cond_resched();
	}
	return freed;
}

/*
 * The page under the clock's hand, taken off the clock, and a reference to
 * its allocation in *@ap; NULL when the clock is empty.  A page of an
 * allocation that is going away (its release frees its pages) is only
 * dropped from the clock: *@ap is NULL then and the caller looks again.
 * One entry per acquisition of the spinlock.
 */
static struct buddy_wpage *clock_take(struct buddy_allocation **ap)
{
	struct buddy_wpage *wp;

	*ap = NULL;
	spin_lock(&win.lock);
	wp = list_first_entry_or_null(&win.clock, struct buddy_wpage, node);
	if (wp) {
		list_del_init(&wp->node);
		wp->queued = false;
		if (kref_get_unless_zero(&wp->a->ref))
			*ap = wp->a;
	}
	spin_unlock(&win.lock);
	return wp;
}

/*
 * The hand at @wp (off the clock, a reference to @a held): give it a
 * second chance, keep it (held, or not @only's), or evict it.  True when
 * it was evicted.
 */
static bool clock_visit(struct buddy_allocation *a, struct buddy_wpage *wp,
			struct buddy_user *only)
{
	struct mutex *lock = win_lock(a, wp->index);
	struct page *page = wp->page;
	bool evicted = false;

	mutex_lock(lock);
	if (only && a->user != only)
		goto keep;
	/* a pin is seen without unmapping it from its pinner */
	if (page_maybe_dma_pinned(page)) {
		count(a, BUDDY_WIN_HELD);
		goto keep;
	}
	lock_page(page);
	unmap_page(a, wp->index);
	if (wp->referenced) {
		/* unmapped: its next use faults and sets the bit again */
		wp->referenced = false;
		unlock_page(page);
		goto keep;
	}
	if (page_held(page)) {
		unlock_page(page);
		count(a, BUDDY_WIN_HELD);
		goto keep;
	}
	if (wp->dirty)
		write_back(a, wp);
	xa_erase(&a->win.pages, wp->index);
	atomic64_dec(&a->win.resident);
	unlock_page(page);
	count(a, BUDDY_WIN_EVICTIONS);
	evicted = true;
	goto out;
keep:
	clock_add(wp);
out:
	mutex_unlock(lock);
	if (evicted) {
		spin_lock(&win.lock);
		win.nr--;
		spin_unlock(&win.lock);
		free_wpage(wp);
	}
	return evicted;
}

/*
 * Evict one page (of @only's allocations when @only is given): 0, -ENOENT
 * when two turns of the hand found nothing to evict (every page held, or
 * none of @only's), -EINTR on a fatal signal.
 */
static int evict_one(struct buddy_user *only)
{
	unsigned long budget = 2 * READ_ONCE(win.nr) + 2;
	struct buddy_allocation *a;
	struct buddy_wpage *wp;
	bool evicted;

	while (budget--) {
		wp = clock_take(&a);
		if (!wp)
			return -ENOENT;
		if (a) {
			evicted = clock_visit(a, wp, only);
			buddy_alloc_put(a);
			if (evicted)
				return 0;
		}
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return -ENOENT;
}

/* Evict until at most @limit pages are resident: 0, -ENOENT, -EINTR. */
static int shrink_to(unsigned long limit)
{
	int ret = 0;

	reap_orphans(REAP_BATCH);
	while (!ret && READ_ONCE(win.nr) > limit) {
		ret = evict_one(NULL);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	return ret;
}

/*
 * Room for one more page of @a: the window's (its pages beyond window_mb
 * can only be held ones, so a full window of held pages lets the fault
 * go on) and the user's share (-EDQUOT when only held pages and orphans of
 * the user's are left to evict).  A fatal signal stops the evictions: the
 * task is going, its fault need not wait for room.
 */
static int make_room(struct buddy_allocation *a)
{
	int ret = shrink_to(window_limit() - 1);

	while (ret != -EINTR && !buddy_user_window_allows(a->user, 1)) {
		if (reap_orphans(READ_ONCE(win.nr_orphans)))
			continue;
		ret = evict_one(a->user);
		if (ret == -ENOENT)
			return -EDQUOT;
	}
	return 0;
}

/* Write back the dirty page @idx and keep it resident; holds its mutex. */
static void clean_locked(struct buddy_allocation *a, unsigned long idx)
{
	struct buddy_wpage *wp = xa_load(&a->win.pages, idx);

	if (!wp || !wp->dirty)
		return;
	lock_page(wp->page);
	unmap_page(a, idx);	/* the next write faults again */
	write_back(a, wp);
	if (page_held(wp->page))
		wp->dirty = true;	/* the holder may still write it */
	else
		ClearPageDirty(wp->page);
	unlock_page(wp->page);
}

/**
 * buddy_win_writeback() - write back the dirty resident pages of @a whose
 * index is in @first..@last; they stay resident, write-protected (a held
 * page stays dirty).  The link time is owed to @a: a caller that may wait
 * waits buddy_link_take_debt() afterwards.
 * @a:		the allocation.
 * @first:	first page index.
 * @last:	last page index (inclusive).
 */
void buddy_win_writeback(struct buddy_allocation *a, u64 first, u64 last)
{
	struct buddy_wpage *wp;
	unsigned long idx;

	if (first > ULONG_MAX)
		return;
	last = min_t(u64, last, ULONG_MAX);
	xa_for_each_range(&a->win.pages, idx, wp, first, last) {
		/* @wp may go before the mutex is held: look it up again */
		struct mutex *lock = win_lock(a, idx);

		mutex_lock(lock);
		clean_locked(a, idx);
		mutex_unlock(lock);
		cond_resched();
	}
}

/*
 * @wp of the allocation being released leaves the window: freed, or an
 * orphan (with references to the user and the inode) while held.  The
 * page lock orders it with a holder's set_page_dirty_lock().
 */
static void release_page(struct buddy_allocation *a, struct buddy_wpage *wp)
{
	bool held;

	lock_page(wp->page);
	held = page_held(wp->page);
	unlock_page(wp->page);
	if (held) {
		buddy_user_get(wp->user);
		ihold(a->win.inode);
		wp->inode = a->win.inode;
		wp->a = NULL;
	}
	spin_lock(&win.lock);
	win.nr--;
	if (held) {
		list_add_tail(&wp->node, &win.orphans);
		win.nr_orphans++;
	}
	spin_unlock(&win.lock);
	if (!held)
		free_wpage(wp);
}

/**
 * buddy_win_release() - the allocation's last reference is gone (nothing
 * maps it): its pages leave the window unwritten, held ones as orphans,
 * and its inode reference goes.
 * @a:	the allocation.
 */
void buddy_win_release(struct buddy_allocation *a)
{
	struct buddy_wpage *wp;
	unsigned long idx;

	xa_for_each(&a->win.pages, idx, wp) {
		spin_lock(&win.lock);
		if (wp->queued) {
			list_del(&wp->node);
			wp->queued = false;
		}
		spin_unlock(&win.lock);
		xa_erase(&a->win.pages, idx);
		release_page(a, wp);
		cond_resched();
	}
	xa_destroy(&a->win.pages);
	if (a->win.inode)
		iput(a->win.inode);
}

/*
 * Fault page @idx in; the caller holds its mutex.  The page, or an
 * ERR_PTR; *@ps gets the modeled link time of the decompression.
 */
static struct buddy_wpage *fault_in(struct buddy_allocation *a,
				    unsigned long idx, u64 *ps)
{
	int node = buddy_device_node;
	struct buddy_io_acct acct = {};
	struct buddy_wpage *wp;
	u8 *addr;
	int ret;

	wp = kzalloc(sizeof(*wp), GFP_KERNEL_ACCOUNT);
	if (!wp)
		return ERR_PTR(-ENOMEM);
	/* on the device pool's node, charged to the faulting task's memcg */
	wp->page = alloc_pages_node(node == NUMA_NO_NODE ? numa_mem_id() : node,
				    GFP_HIGHUSER | __GFP_ACCOUNT, 0);
	if (!wp->page) {
		kfree(wp);
		return ERR_PTR(-ENOMEM);
	}
	wp->a = a;
	wp->user = a->user;
	wp->index = idx;
	wp->referenced = true;
	addr = kmap_local_page(wp->page);
	ret = page_entries_io(a, idx, addr, false, &acct);
	kunmap_local(addr);
	*ps = buddy_acct_flush(a, &acct);
	if (!ret)
		ret = xa_err(xa_store(&a->win.pages, idx, wp,
				      GFP_KERNEL_ACCOUNT));
	if (ret) {
		__free_page(wp->page);
		kfree(wp);
		return ERR_PTR(ret);
	}
	buddy_user_window_add(wp->user, 1);
	wp->page->mapping = a->win.mapping;
	wp->page->index = idx;
	atomic64_inc(&a->win.resident);
	count(a, BUDDY_WIN_FAULTS);
	spin_lock(&win.lock);
	list_add_tail(&wp->node, &win.clock);
	wp->queued = true;
	win.nr++;
	spin_unlock(&win.lock);
	return wp;
}

/*
 * With link_delay on, whether this fault may wait the modeled link time
 * itself: only after dropping mmap_lock and retrying, as filemap_fault()
 * does for its I/O; a fault that may not (GUP without a lock to drop, a
 * retry) leaves it owed to the allocation.
 */
static bool fault_may_wait(struct vm_fault *vmf)
{
	return fault_flag_allow_retry_first(vmf->flags) &&
	       !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT);
}

static vm_fault_t buddy_vm_fault(struct vm_fault *vmf)
{
	struct buddy_allocation *a = vmf->vma->vm_file->private_data;
	unsigned long idx = vmf->pgoff;
	struct mutex *lock = win_lock(a, idx);
	struct buddy_wpage *wp;
	u64 ps = 0;

	if (idx >= DIV_ROUND_UP(a->size, PAGE_SIZE))
		return VM_FAULT_SIGBUS;
	mutex_lock(lock);
	wp = xa_load(&a->win.pages, idx);
	if (!wp) {
		/* make room with no page mutex held, then look again */
		mutex_unlock(lock);
		if (make_room(a))
			return VM_FAULT_SIGBUS;	/* over user_limit_mb */
		mutex_lock(lock);
		wp = xa_load(&a->win.pages, idx);
		if (!wp) {
			wp = fault_in(a, idx, &ps);
			if (IS_ERR(wp)) {
				mutex_unlock(lock);
				return PTR_ERR(wp) == -ENOMEM ? VM_FAULT_OOM :
				       VM_FAULT_SIGBUS;
			}
		} else {
			count(a, BUDDY_WIN_HITS);
		}
	} else {
		count(a, BUDDY_WIN_HITS);
	}
	wp->referenced = true;
	if (unlikely(READ_ONCE(buddy_link_delay_on)) && fault_may_wait(vmf)) {
		ps += buddy_link_take_debt(a);
		if (ps >= 1000) {
			/* the page stays resident: the retry maps it */
			mutex_unlock(lock);
			mmap_read_unlock(vmf->vma->vm_mm);
			buddy_link_delay(ps);
			return VM_FAULT_RETRY;
		}
	}
	buddy_link_owe(a, ps);
	get_page(wp->page);
	/* locked until mapped, so that an eviction cannot slip in between */
	lock_page(wp->page);
	vmf->page = wp->page;
	mutex_unlock(lock);
	return VM_FAULT_LOCKED;
}

static vm_fault_t buddy_vm_page_mkwrite(struct vm_fault *vmf)
{
	struct buddy_allocation *a = vmf->vma->vm_file->private_data;
	unsigned long idx = vmf->pgoff;
	struct mutex *lock = win_lock(a, idx);
	struct buddy_wpage *wp;

	mutex_lock(lock);
	wp = xa_load(&a->win.pages, idx);
	if (!wp || wp->page != vmf->page) {
		/* evicted meanwhile: fault again */
		mutex_unlock(lock);
		return VM_FAULT_NOPAGE;
	}
	lock_page(wp->page);
	wp->dirty = true;
	wp->referenced = true;
	mutex_unlock(lock);
	return VM_FAULT_LOCKED;
}

static void buddy_vm_close(struct vm_area_struct *vma)
{
	struct buddy_allocation *a = vma->vm_file->private_data;

	/* under mmap_lock: the link time stays owed */
	buddy_win_writeback(a, vma->vm_pgoff,
			    vma->vm_pgoff + vma_pages(vma) - 1);
}

static const struct vm_operations_struct buddy_vm_ops = {
	.fault = buddy_vm_fault,
	.page_mkwrite = buddy_vm_page_mkwrite,
	.close = buddy_vm_close,
};

/**
 * buddy_mmap() - mmap of an allocation fd: MAP_SHARED only (else -EINVAL).
 * @file:	the allocation's file.
 * @vma:	the new mapping.
 *
 * Return: 0 or -EINVAL.
 */
int buddy_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	buddy_vm_flags_set(vma, VM_DONTEXPAND);
	vma->vm_ops = &buddy_vm_ops;
	return 0;
}

int buddy_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct buddy_allocation *a = file->private_data;

	if (start < 0 || end < start)
		return 0;
	buddy_win_writeback(a, start >> PAGE_SHIFT, end >> PAGE_SHIFT);
	buddy_link_delay(buddy_link_take_debt(a));
	return 0;
}

int buddy_flush(struct file *file, fl_owner_t id)
{
	struct buddy_allocation *a = file->private_data;

	buddy_win_writeback(a, 0, ULONG_MAX);
	buddy_link_delay(buddy_link_take_debt(a));
	return 0;
}

/* Take a page's mutex for pread/pwrite: -EAGAIN or -EINTR instead of it. */
static int win_io_lock(struct mutex *lock, enum buddy_win_wait wait)
{
	if (wait == BUDDY_WIN_HELD_LOCK)
		return 0;
	if (wait == BUDDY_WIN_NOWAIT)
		return mutex_trylock(lock) ? 0 : -EAGAIN;
	return mutex_lock_killable(lock) ? -EINTR : 0;
}

/*
 * A whole stripe at @pos read into two pieces: its first @n1 bytes to @d1,
 * the rest to @d2 (a page-aligned stripe into a user buffer that is not,
 * so across two of its pages).  Every entry is read once, the one across
 * the cut through a temporary, and the stripe counts one link request at
 * most, as one call over it would.  The caller holds the stripe's page
 * mutex, so the three calls see one stripe.
 */
static int stripe_read2(struct buddy_allocation *a, u64 pos, u8 *d1,
			unsigned int n1, u8 *d2, enum stripe_wait wait,
			struct buddy_io_acct *acct)
{
	unsigned int head = round_down(n1, BUDDY_ENTRY_BYTES), cut = n1 - head;
	unsigned int tail = cut ? head + BUDDY_ENTRY_BYTES : head;
	u8 tmp[BUDDY_ENTRY_BYTES] __uninitialized;	/* a whole entry read */
	u64 req = acct->link_requests;
	int ret = 0;

	if (head)
		ret = stripe_io(a, pos, d1, head, false, wait, acct);
	if (!ret && cut) {
		ret = stripe_io(a, pos + head, tmp, BUDDY_ENTRY_BYTES, false,
				wait, acct);
		if (!ret) {
			memcpy(d1 + head, tmp, cut);
			memcpy(d2, tmp + cut, BUDDY_ENTRY_BYTES - cut);
		}
	}
	if (!ret && tail < PAGE_SIZE)
		ret = stripe_io(a, pos + tail, d2 + (tail - n1),
				PAGE_SIZE - tail, false, wait, acct);
	if (acct->link_requests > req)
		acct->link_requests = req + 1;
	return ret;
}

/**
 * buddy_win_io() - one page's pread/pwrite under its mutex: from or to
 * the window when the page is resident (a hit, no entry accesses; a write
 * makes it dirty), else from or to the stored entries.
 * buddy_win_stripe_io() and buddy_win_stripe_read2() (window.h) say it for
 * each use.
 * @a:		the allocation.
 * @pos:	byte position.
 * @buf:	kernel address of @len bytes to move.
 * @len:	bytes, not crossing a page.
 * @d2:		NULL; or, for a read of the whole page at @pos, where its
 *		bytes after the first @len go.
 * @write:	direction (never with @d2).
 * @wait:	how to take the page's mutex; under BUDDY_WIN_NOWAIT and
 *		BUDDY_WIN_HELD_LOCK (an IOCB_NOWAIT write) the chunk is only
 *		tried too.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
int buddy_win_io(struct buddy_allocation *a, u64 pos, u8 *buf,
		 unsigned int len, u8 *d2, bool write,
		 enum buddy_win_wait wait, struct buddy_io_acct *acct)
{
	enum stripe_wait swait = wait == BUDDY_WIN_KILLABLE ? STRIPE_KILLABLE :
				 STRIPE_NOWAIT;
	unsigned long idx = pos >> PAGE_SHIFT;
	struct mutex *lock = win_lock(a, idx);
	struct buddy_wpage *wp;
	int ret = win_io_lock(lock, wait);

	if (ret)
		return ret;
	/*
	 * A page goes in (and out) of the window under its mutex, which we
	 * hold, and is counted in resident after going in (uncounted after
	 * going out): none resident, so not ours, saves the lookup to the
	 * allocations that were never mapped.
	 */
	wp = atomic64_read(&a->win.resident) ? xa_load(&a->win.pages, idx) :
					       NULL;
	if (wp) {
		u8 *addr = kmap_local_page(wp->page);
		u8 *at = addr + offset_in_page(pos);

		if (write) {
			memcpy(at, buf, len);
			wp->dirty = true;
		} else {
			memcpy(buf, at, len);
			if (d2)
				memcpy(d2, at + len, PAGE_SIZE - len);
		}
		kunmap_local(addr);
		wp->referenced = true;
		count(a, BUDDY_WIN_HITS);
	} else if (d2) {
		ret = stripe_read2(a, pos, buf, len, d2, swait, acct);
	} else {
		ret = stripe_io(a, pos, buf, len, write, swait, acct);
	}
	if (wait != BUDDY_WIN_HELD_LOCK)
		mutex_unlock(lock);
	return ret;
}

/**
 * buddy_win_trylock() - try the mutexes of pages @first..@last of @a, all
 * or none, for an IOCB_NOWAIT write that must store all of its bytes or
 * none (buddy_win_io() with BUDDY_WIN_HELD_LOCK then).  Trylocks only, so
 * holding several at once cannot deadlock.
 * @a:		the allocation.
 * @first:	first page index.
 * @last:	last page index, at most BUDDY_WIN_TRYLOCK_PAGES after @first.
 * @held:	gets the mutexes taken, a bit per BUDDY_WIN_LOCKS slot, for
 *		buddy_win_unlock().
 *
 * Return: 0, or -EAGAIN with none held.
 */
int buddy_win_trylock(struct buddy_allocation *a, u64 first, u64 last,
		      u64 *held)
{
	u64 idx;

	BUILD_BUG_ON(BUDDY_WIN_LOCKS > 64);
	*held = 0;
	if (WARN_ON_ONCE(last - first >= BUDDY_WIN_TRYLOCK_PAGES))
		return -EAGAIN;
	for (idx = first; idx <= last; idx++) {
		unsigned int slot = idx % BUDDY_WIN_LOCKS;

		if (*held & BIT_ULL(slot))
			continue;
		if (!mutex_trylock(&a->win.locks[slot])) {
			buddy_win_unlock(a, *held);
			*held = 0;
			return -EAGAIN;
		}
		*held |= BIT_ULL(slot);
	}
	return 0;
}

/**
 * buddy_win_unlock() - release what buddy_win_trylock() took.
 * @a:		the allocation.
 * @held:	its *@held.
 */
void buddy_win_unlock(struct buddy_allocation *a, u64 held)
{
	while (held) {
		unsigned int slot = __ffs64(held);

		mutex_unlock(&a->win.locks[slot]);
		held &= held - 1;
	}
}

void buddy_win_fill_stat(struct buddy_allocation *a,
			 struct buddy_alloc_stat *st)
{
	st->link_ns = div_u64(atomic64_read(&a->win.link_ps), 1000);
	st->link_requests = atomic64_read(&a->win.link_requests);
	st->window_faults = atomic64_read(&a->win.counters[BUDDY_WIN_FAULTS]);
	st->window_hits = atomic64_read(&a->win.counters[BUDDY_WIN_HITS]);
	st->window_writebacks =
		atomic64_read(&a->win.counters[BUDDY_WIN_WRITEBACKS]);
	st->window_evictions =
		atomic64_read(&a->win.counters[BUDDY_WIN_EVICTIONS]);
	st->window_resident = atomic64_read(&a->win.resident);
}

void buddy_win_show_fdinfo(struct seq_file *m, struct buddy_allocation *a)
{
	struct buddy_alloc_stat st = {};

	buddy_win_fill_stat(a, &st);
	seq_printf(m, "buddy_link_ns:\t%llu\n", st.link_ns);
	seq_printf(m, "buddy_window_resident:\t%llu\n", st.window_resident);
	seq_printf(m, "buddy_window_faults:\t%llu\n", st.window_faults);
	seq_printf(m, "buddy_window_hits:\t%llu\n", st.window_hits);
	seq_printf(m, "buddy_window_writebacks:\t%llu\n", st.window_writebacks);
	seq_printf(m, "buddy_window_evictions:\t%llu\n", st.window_evictions);
	seq_printf(m, "buddy_link_requests:\t%llu\n", st.link_requests);
	seq_printf(m, "buddy_window_held:\t%llu\n",
		   (u64)atomic64_read(&a->win.counters[BUDDY_WIN_HELD]));
}

/*
 * sysfs window_stat: limit resident orphans faults hits writebacks
 * evictions held
 */
int buddy_window_stat(char *buf)
{
	unsigned long nr, orphans;
	u64 c[BUDDY_WIN_NR];
	unsigned int i;

	spin_lock(&win.lock);
	nr = win.nr;
	orphans = win.nr_orphans;
	spin_unlock(&win.lock);
	for (i = 0; i < BUDDY_WIN_NR; i++)
		c[i] = buddy_pcpu_sum(offsetof(struct buddy_pcpu,
					       win_counters[i]));
	BUILD_BUG_ON(BUDDY_WIN_NR != 5);
	return sysfs_emit(buf, "%lu %lu %lu %llu %llu %llu %llu %llu\n",
			  window_limit(), nr, orphans, c[0], c[1], c[2], c[3],
			  c[4]);
}

/* Dirtying a page whose allocation's inode is gone: a stale ->mapping. */
static bool buddy_dead_dirty_folio(struct address_space *mapping,
				   struct folio *folio)
{
	WARN_ONCE(1, "a window page still points at the freed inode of its allocation\n");
	return noop_dirty_folio(mapping, folio);
}

static const struct address_space_operations buddy_dead_aops = {
	.dirty_folio = buddy_dead_dirty_folio,
};

/**
 * buddy_win_inode_evicted() - an allocation's inode is being evicted (the
 * pseudo filesystem's evict_inode): no page of the window may point at it
 * any more.  With CONFIG_DEBUG_VM the orphans are checked, and the
 * mapping's operations are poisoned, so that a page still pointing at it
 * warns when a holder dirties it instead of passing silently until the
 * memory is reused.
 * @inode:	the inode.
 */
void buddy_win_inode_evicted(struct inode *inode)
{
	struct buddy_wpage *wp;

	if (!IS_ENABLED(CONFIG_DEBUG_VM))
		return;
	spin_lock(&win.lock);
	list_for_each_entry(wp, &win.orphans, node)
		WARN_ON_ONCE(wp->page->mapping == inode->i_mapping);
	spin_unlock(&win.lock);
	inode->i_mapping->a_ops = &buddy_dead_aops;
}

/*
 * Module unload (nothing is mapped, no allocation is left): the orphans
 * go, held or not.  A held one keeps its page, no longer pointing at the
 * inode that goes with it.
 */
void buddy_window_exit(void)
{
	struct buddy_wpage *wp, *n;

	list_for_each_entry_safe(wp, n, &win.orphans, node) {
		list_del(&wp->node);
		lock_page(wp->page);
		wp->page->mapping = NULL;
		unlock_page(wp->page);
		put_page(wp->page);
		iput(wp->inode);
		buddy_user_window_add(wp->user, -1);
		buddy_user_put(wp->user);
		kfree(wp);
	}
	win.nr_orphans = 0;
}

/* window_mb: 1..65536, writable; shrinking evicts down to the new size */
static int window_mb_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (!v || v > 65536)
		return -EINVAL;
	WRITE_ONCE(window_mb, v);
	/* held pages stay: the window is over the limit by them */
	ret = shrink_to(window_limit());
	return ret == -EINTR ? -EINTR : 0;
}

static const struct kernel_param_ops window_mb_ops = {
	.set = window_mb_set,
	.get = param_get_uint,
};

module_param_cb(window_mb, &window_mb_ops, &window_mb, 0644);
MODULE_PARM_DESC(window_mb,
		 "MiB of decompressed pages resident for mmap, shared by all allocations, 1..65536 (default: 16)");
