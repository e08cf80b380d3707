// SPDX-License-Identifier: GPL-2.0
/*
 * The resident window's room (window.c has the pages, their faults and
 * write-backs): the clock that picks the page to evict, the pages held by
 * others, which are never evicted, the orphans an allocation leaves, and
 * the window_mb parameter.
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
 * * Locking: as window.c's.  The window's spinlock guards only its lists,
 * one entry per acquisition; evicting takes a reference on the victim's
 * allocation and holds no other page mutex meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "buddy.h"

/* Orphans looked at per reap: the list is walked a bounded piece a time. */
#define REAP_BATCH	64

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

static void clock_add(struct buddy_wpage *wp)
{
	spin_lock(&win.lock);
	list_add_tail(&wp->node, &win.clock);
	wp->queued = true;
	spin_unlock(&win.lock);
}

/**
 * buddy_win_clock_insert() - a page just faulted in joins the window, at
 * the back of the clock.
 * @wp:	the page.
 */
void buddy_win_clock_insert(struct buddy_wpage *wp)
{
	spin_lock(&win.lock);
	list_add_tail(&wp->node, &win.clock);
	wp->queued = true;
	win.nr++;
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
	struct mutex *lock = buddy_win_lock(a, wp->index);
	struct page *page = wp->page;
	bool evicted = false;

	mutex_lock(lock);
	if (only && a->user != only)
		goto keep;
	/* a pin is seen without unmapping it from its pinner */
	if (page_maybe_dma_pinned(page)) {
		buddy_win_count(a, BUDDY_WIN_HELD);
		goto keep;
	}
	lock_page(page);
	buddy_win_unmap_page(a, wp->index);
	if (wp->referenced) {
		/* unmapped: its next use faults and sets the bit again */
		wp->referenced = false;
		unlock_page(page);
		goto keep;
	}
	if (buddy_win_page_held(page)) {
		unlock_page(page);
		buddy_win_count(a, BUDDY_WIN_HELD);
		goto keep;
	}
	if (wp->dirty)
		buddy_win_write_back(a, wp);
	xa_erase(&a->win.pages, wp->index);
	atomic64_dec(&a->win.resident);
	unlock_page(page);
	buddy_win_count(a, BUDDY_WIN_EVICTIONS);
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

/**
 * buddy_win_make_room() - room for one more page of @a: the window's (its
 * pages beyond window_mb can only be held ones, so a full window of held
 * pages lets the fault go on) and the user's share.  A fatal signal stops
 * the evictions: the task is going, its fault need not wait for room.
 * @a:	the allocation about to fault a page in.
 *
 * Return: 0, or -EDQUOT when only held pages and orphans of the user's
 * are left to evict.
 */
int buddy_win_make_room(struct buddy_allocation *a)
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

/*
 * @wp of the allocation being released leaves the window: freed, or an
 * orphan (with references to the user and the inode) while held.  The
 * page lock orders it with a holder's set_page_dirty_lock().
 */
static void release_page(struct buddy_allocation *a, struct buddy_wpage *wp)
{
	bool held;

	lock_page(wp->page);
	held = buddy_win_page_held(wp->page);
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
