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
 * Making room (the clock), pages held by others and orphans are in
 * window_evict.c.
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
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "buddy.h"
#include "core/link_model.h"

void buddy_win_count(struct buddy_allocation *a, enum buddy_win_counter c)
{
	atomic64_inc(&a->win.counters[c]);
	/* the device's: this CPU's part, no line shared with other CPUs */
	this_cpu_inc(buddy_dev->pcpu->win_counters[c]);
}

struct mutex *buddy_win_lock(struct buddy_allocation *a, unsigned long idx)
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
void buddy_win_write_back(struct buddy_allocation *a, struct buddy_wpage *wp)
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
	buddy_win_count(a, BUDDY_WIN_WRITEBACKS);
}

void buddy_win_unmap_page(struct buddy_allocation *a, unsigned long idx)
{
	unmap_mapping_range(a->win.mapping, (loff_t)idx << PAGE_SHIFT,
			    PAGE_SIZE, 0);
}

/*
 * Write back the dirty page @idx and keep it resident; holds its mutex.
 * Whether the page is held is decided before its bytes are read: a holder
 * may store into it while they are compressed and let go of it before the
 * write-back ends (unpin_user_pages_dirty_lock() takes no page lock when
 * the page is dirty already), and its bytes must not be taken as stored.
 * Not held then, it cannot be held until the page's mutex is dropped.
 */
static void clean_locked(struct buddy_allocation *a, unsigned long idx)
{
	struct buddy_wpage *wp = xa_load(&a->win.pages, idx);
	bool held;

	if (!wp || !wp->dirty)
		return;
	lock_page(wp->page);
	buddy_win_unmap_page(a, idx);	/* the next write faults again */
	held = buddy_win_page_held(wp->page);
	buddy_win_write_back(a, wp);
	if (held)
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
		struct mutex *lock = buddy_win_lock(a, idx);

		mutex_lock(lock);
		clean_locked(a, idx);
		mutex_unlock(lock);
		cond_resched();
	}
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
	buddy_win_count(a, BUDDY_WIN_FAULTS);
	buddy_win_clock_insert(wp);
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
	struct mutex *lock = buddy_win_lock(a, idx);
	struct buddy_wpage *wp;
	u64 ps = 0;

	if (idx >= DIV_ROUND_UP(a->size, PAGE_SIZE))
		return VM_FAULT_SIGBUS;
	mutex_lock(lock);
	wp = xa_load(&a->win.pages, idx);
	if (!wp) {
		/* make room with no page mutex held, then look again */
		mutex_unlock(lock);
		if (buddy_win_make_room(a))
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
			buddy_win_count(a, BUDDY_WIN_HITS);
		}
	} else {
		buddy_win_count(a, BUDDY_WIN_HITS);
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
	struct mutex *lock = buddy_win_lock(a, idx);
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
	struct mutex *lock = buddy_win_lock(a, idx);
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
		buddy_win_count(a, BUDDY_WIN_HITS);
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
