// SPDX-License-Identifier: GPL-2.0
/*
 * The resident window: the emulated device's on-chip side.
 *
 * mmap() of an allocation maps decompressed 4 KiB pages that the module owns:
 * one window of at most window_mb MiB shared by all allocations.  A fault on
 * a page that is not resident evicts the oldest resident page (FIFO by
 * fault) when the window is full, then decompresses the page's 32 entries
 * into a fresh page, counting entry reads and sectors exactly as pread
 * does.  Pages are real struct pages handed to the fault through
 * vmf->page (no PFNMAP, so GUP works) and mapped read-only first: the first
 * write goes through page_mkwrite, which marks the page dirty.  Eviction
 * and write-back unmap the page from every process (unmap_mapping_range(),
 * which also write-protects it again) and compress a dirty page back into
 * its entries, counted as pwrite counts.  msync(MS_SYNC) (.fsync), munmap
 * (vm close), close (.flush) and re-targeting write dirty pages back.
 *
 * pread and pwrite of a resident page are served from the window and count
 * no entry accesses (a pwrite makes the page dirty).
 *
 * Locking, in order: mmap_lock; a hashed page mutex of the allocation
 * (struct buddy_win.locks: a page's fault, write-back and eviction and
 * pread/pwrite of it); the page lock; the chunk semaphore (stripe_io()).
 * The window's spinlock guards only its lists.  No
 * user copy happens under any of them.  Evicting takes a reference on the
 * victim's allocation and no other page mutex is held meanwhile.
 *
 * A page evicted while something else still holds a reference (a GUP pin,
 * an O_DIRECT transfer) is never reused: it waits on the orphan list until
 * only the window's reference is left.  Orphans are counted on top of
 * window_mb.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "buddy.h"
#include "core/link_model.h"

/**
 * struct buddy_wpage - one resident page.
 * @node:	on the window's FIFO while @queued, on the orphan list after.
 * @a:		the allocation (no reference: the allocation frees its pages
 *		before it goes).
 * @index:	page index in the allocation.
 * @page:	the decompressed bytes; the window holds one reference.
 * @dirty:	written since it was faulted in or written back.
 * @queued:	on the FIFO (not yet picked for eviction).
 */
struct buddy_wpage {
	struct list_head node;
	struct buddy_allocation *a;
	unsigned long index;
	struct page *page;
	bool dirty;
	bool queued;
};

static struct {
	spinlock_t lock;
	struct list_head fifo;
	struct list_head orphans;
	unsigned long nr;
	unsigned long nr_orphans;
} win = {
	.lock = __SPIN_LOCK_UNLOCKED(win.lock),
	.fifo = LIST_HEAD_INIT(win.fifo),
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
	xa_init(&a->win.pages);
	for (i = 0; i < BUDDY_WIN_LOCKS; i++)
		mutex_init(&a->win.locks[i]);
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

/* Compress a dirty page back; caller holds its page mutex and page lock. */
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
	buddy_link_delay(buddy_acct_flush(a, &acct));
	wp->dirty = false;
	count(a, BUDDY_WIN_WRITEBACKS);
}

static void unmap_page(struct buddy_allocation *a, unsigned long idx)
{
	unmap_mapping_range(a->win.mapping, (loff_t)idx << PAGE_SHIFT,
			    PAGE_SIZE, 0);
}

static void free_wpage(struct buddy_wpage *wp)
{
	wp->page->mapping = NULL;
	ClearPageDirty(wp->page);
	__free_page(wp->page);
	kfree(wp);
}

/* @wp is out of the window: free it, or keep it as an orphan if held. */
static void free_or_orphan(struct buddy_wpage *wp)
{
	bool held = page_count(wp->page) != 1;

	spin_lock(&win.lock);
	win.nr--;
	if (held) {
		list_add_tail(&wp->node, &win.orphans);
		win.nr_orphans++;
	}
	spin_unlock(&win.lock);
	if (held) {
		wp->a = NULL;
		return;
	}
	free_wpage(wp);
}

/* Free the orphans nobody holds any more. */
static void reap_orphans(void)
{
	struct buddy_wpage *wp, *n;
	LIST_HEAD(done);

	if (!READ_ONCE(win.nr_orphans))
		return;
	spin_lock(&win.lock);
	list_for_each_entry_safe(wp, n, &win.orphans, node) {
		if (page_count(wp->page) == 1) {
			list_move(&wp->node, &done);
			win.nr_orphans--;
		}
	}
	spin_unlock(&win.lock);
	list_for_each_entry_safe(wp, n, &done, node)
		free_wpage(wp);
}

/* Take @wp out of the window; caller holds its page mutex. */
static void evict_locked(struct buddy_allocation *a, struct buddy_wpage *wp)
{
	lock_page(wp->page);
	unmap_page(a, wp->index);
	if (wp->dirty)
		write_back(a, wp);
	xa_erase(&a->win.pages, wp->index);
	atomic64_dec(&a->win.resident);
	unlock_page(wp->page);
	count(a, BUDDY_WIN_EVICTIONS);
	free_or_orphan(wp);
}

/* Evict the oldest page; false when there is none to evict. */
static bool evict_one(void)
{
	struct buddy_allocation *a = NULL;
	struct buddy_wpage *wp;
	struct mutex *lock;

	spin_lock(&win.lock);
	list_for_each_entry(wp, &win.fifo, node) {
		/* an allocation going away frees its own pages */
		if (kref_get_unless_zero(&wp->a->ref)) {
			a = wp->a;
			list_del_init(&wp->node);
			wp->queued = false;
			break;
		}
	}
	spin_unlock(&win.lock);
	if (!a)
		return false;
	/* picked off the FIFO, @wp is ours to evict: nobody else frees it */
	lock = win_lock(a, wp->index);
	mutex_lock(lock);
	evict_locked(a, wp);
	mutex_unlock(lock);
	buddy_alloc_put(a);
	return true;
}

/* Evict the oldest pages until at most @limit are resident. */
static void shrink_to(unsigned long limit)
{
	reap_orphans();
	while (READ_ONCE(win.nr) > limit && evict_one())
		cond_resched();
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
	ClearPageDirty(wp->page);
	unlock_page(wp->page);
}

/**
 * buddy_win_writeback() - write back the dirty resident pages of @a whose
 * index is in @first..@last; they stay resident, write-protected.
 * @a:		the allocation.
 * @first:	first page index.
 * @last:	last page index (inclusive).
 *
 * Return: 0.
 */
int buddy_win_writeback(struct buddy_allocation *a, u64 first, u64 last)
{
	struct buddy_wpage *wp;
	unsigned long idx;

	if (first > ULONG_MAX)
		return 0;
	last = min_t(u64, last, ULONG_MAX);
	xa_for_each_range(&a->win.pages, idx, wp, first, last) {
		/* @wp may go before the mutex is held: look it up again */
		struct mutex *lock = win_lock(a, idx);

		mutex_lock(lock);
		clean_locked(a, idx);
		mutex_unlock(lock);
		cond_resched();
	}
	return 0;
}

/* The allocation's last reference is gone: drop its pages, unwritten. */
void buddy_win_release(struct buddy_allocation *a)
{
	struct buddy_wpage *wp;
	unsigned long idx;

	xa_for_each(&a->win.pages, idx, wp) {
		spin_lock(&win.lock);
		if (wp->queued)
			list_del(&wp->node);
		spin_unlock(&win.lock);
		xa_erase(&a->win.pages, idx);
		free_or_orphan(wp);
		cond_resched();
	}
	xa_destroy(&a->win.pages);
}

/* Fault page @idx in; caller holds its mutex.  The page, or an ERR_PTR. */
static struct buddy_wpage *fault_in(struct buddy_allocation *a,
				    unsigned long idx)
{
	int node = buddy_device_node;
	struct buddy_io_acct acct = {};
	struct buddy_wpage *wp;
	u8 *addr;
	int ret;

	wp = kzalloc(sizeof(*wp), GFP_KERNEL);
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
	wp->index = idx;
	addr = kmap_local_page(wp->page);
	ret = page_entries_io(a, idx, addr, false, &acct);
	kunmap_local(addr);
	buddy_link_delay(buddy_acct_flush(a, &acct));
	if (!ret)
		ret = xa_err(xa_store(&a->win.pages, idx, wp, GFP_KERNEL));
	if (ret) {
		__free_page(wp->page);
		kfree(wp);
		return ERR_PTR(ret);
	}
	wp->page->mapping = a->win.mapping;
	wp->page->index = idx;
	atomic64_inc(&a->win.resident);
	count(a, BUDDY_WIN_FAULTS);
	spin_lock(&win.lock);
	list_add_tail(&wp->node, &win.fifo);
	wp->queued = true;
	win.nr++;
	spin_unlock(&win.lock);
	return wp;
}

static vm_fault_t buddy_vm_fault(struct vm_fault *vmf)
{
	struct buddy_allocation *a = vmf->vma->vm_file->private_data;
	unsigned long idx = vmf->pgoff;
	struct mutex *lock = win_lock(a, idx);
	struct buddy_wpage *wp;

	if (idx >= DIV_ROUND_UP(a->size, PAGE_SIZE))
		return VM_FAULT_SIGBUS;
	mutex_lock(lock);
	wp = xa_load(&a->win.pages, idx);
	if (!wp) {
		/* make room with no page mutex held, then look again */
		mutex_unlock(lock);
		shrink_to(window_limit() - 1);
		mutex_lock(lock);
		wp = xa_load(&a->win.pages, idx);
		if (!wp) {
			wp = fault_in(a, idx);
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
	mutex_unlock(lock);
	return VM_FAULT_LOCKED;
}

static void buddy_vm_close(struct vm_area_struct *vma)
{
	struct buddy_allocation *a = vma->vm_file->private_data;

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
	if (start < 0 || end < start)
		return 0;
	return buddy_win_writeback(file->private_data, start >> PAGE_SHIFT,
				   end >> PAGE_SHIFT);
}

int buddy_flush(struct file *file, fl_owner_t id)
{
	return buddy_win_writeback(file->private_data, 0, ULONG_MAX);
}

/* Take a page's mutex for pread/pwrite: -EAGAIN or -EINTR instead of it. */
static int win_io_lock(struct mutex *lock, bool nowait)
{
	if (nowait)
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
 * @nowait:	give up with -EAGAIN instead of waiting.
 * @acct:	access counters to add to.
 *
 * Return: 0 or -errno.
 */
int buddy_win_io(struct buddy_allocation *a, u64 pos, u8 *buf,
		 unsigned int len, u8 *d2, bool write, bool nowait,
		 struct buddy_io_acct *acct)
{
	enum stripe_wait wait = nowait ? STRIPE_NOWAIT : STRIPE_KILLABLE;
	unsigned long idx = pos >> PAGE_SHIFT;
	struct mutex *lock = win_lock(a, idx);
	struct buddy_wpage *wp;
	int ret = win_io_lock(lock, nowait);

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
		count(a, BUDDY_WIN_HITS);
	} else if (d2) {
		ret = stripe_read2(a, pos, buf, len, d2, wait, acct);
	} else {
		ret = stripe_io(a, pos, buf, len, write, wait, acct);
	}
	mutex_unlock(lock);
	return ret;
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
}

/* sysfs window_stat: limit resident orphans faults hits writebacks evictions */
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
	BUILD_BUG_ON(BUDDY_WIN_NR != 4);
	return sysfs_emit(buf, "%lu %lu %lu %llu %llu %llu %llu\n",
			  window_limit(), nr, orphans, c[0], c[1], c[2], c[3]);
}

/* Module unload (nothing is mapped): the orphans go, held or not. */
void buddy_window_exit(void)
{
	struct buddy_wpage *wp, *n;

	list_for_each_entry_safe(wp, n, &win.orphans, node) {
		list_del(&wp->node);
		wp->page->mapping = NULL;
		put_page(wp->page);
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
	shrink_to(window_limit());
	return 0;
}

static const struct kernel_param_ops window_mb_ops = {
	.set = window_mb_set,
	.get = param_get_uint,
};

module_param_cb(window_mb, &window_mb_ops, &window_mb, 0644);
MODULE_PARM_DESC(window_mb,
		 "MiB of decompressed pages resident for mmap, shared by all allocations, 1..65536 (default: 16)");
