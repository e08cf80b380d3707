// SPDX-License-Identifier: GPL-2.0
/*
 * The device pool and the buddy carve-out: pages reserved at load time on
 * the requested NUMA node, mapped into one virtual range with vmap(), and
 * handed out in 4 KiB granules through genalloc.  Never mapped to userspace.
 *
 * genalloc's own first fit scans the bitmap from bit 0 on every call, so
 * reserving the N chunks of one allocation costs O(N^2).  A run of
 * reservations (one ALLOC, one re-target) carries a cursor instead: each
 * search starts where the previous extent ended and wraps once, so the run
 * sweeps the bitmap about once, O(N + pool bits), and packs an empty pool
 * as tightly as first fit (the cursor starts at 0).  Only a pool whose free
 * space is cut into runs shorter than an extent makes searches wrap often.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/genalloc.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "buddy.h"

static void pool_free_pages(struct buddy_pool *p, unsigned long n)
{
	while (n--) {
		__free_page(p->pages[n]);
		if (!(n & 1023))
			cond_resched();
	}
}

/* genpool_algo_t: next fit from the cursor (@data), core/chunk.c's rule. */
static unsigned long pool_next_fit(unsigned long *map, unsigned long size,
				   unsigned long start, unsigned int nr,
				   void *data, struct gen_pool *pool,
				   unsigned long start_addr)
{
	/*
	 * genalloc searches its bitmap with no lock while other CPUs set and
	 * clear bits with cmpxchg: the search is a hint, and a run taken
	 * meanwhile makes bitmap_set_ll() fail, after which it searches again.
	 */
	return data_race(buddy_next_fit(map, size, start, nr, data));
}

int buddy_pool_init(struct buddy_pool *p, const char *name, u64 bytes,
		    int node)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN | __GFP_NORETRY;
	unsigned long i, n = bytes >> PAGE_SHIFT;
	int ret = -ENOMEM;

	p->name = name;
	p->node = node;
	p->nr_pages = 0;
	atomic64_set(&p->used, 0);
	memset(p->node_pages, 0, sizeof(p->node_pages));
	if (!n)
		return 0;

	/* never ask kvmalloc for more than there is (it WARNs past INT_MAX) */
	if (n > totalram_pages()) {
		pr_err("%s pool: cannot reserve %llu MiB on node %d (got 0 pages)\n",
		       name, bytes >> 20, node);
		goto err;
	}
	p->pages = kvcalloc(n, sizeof(*p->pages), GFP_KERNEL | __GFP_NOWARN);
	if (!p->pages) {
		pr_err("%s pool: cannot reserve %llu MiB on node %d (got 0 pages)\n",
		       name, bytes >> 20, node);
		goto err;
	}
	if (node != NUMA_NO_NODE)
		gfp |= __GFP_THISNODE;
	for (i = 0; i < n; i++) {
		struct page *page = alloc_pages_node(node, gfp, 0);

		if (!page) {
			pr_err("%s pool: cannot reserve %llu MiB on node %d (got %lu pages)\n",
			       name, bytes >> 20, node, i);
			pool_free_pages(p, i);
			goto err_free_array;
		}
		p->pages[i] = page;
		if (page_to_nid(page) < BUDDY_MAX_NODES)
			p->node_pages[page_to_nid(page)]++;
		if (!(i & 1023)) {
			cond_resched();
			if (fatal_signal_pending(current)) {
				pool_free_pages(p, i + 1);
				ret = -EINTR;
				goto err_free_array;
			}
		}
	}

	p->base = vmap(p->pages, n, VM_MAP, PAGE_KERNEL);
	if (!p->base) {
		pr_err("%s pool: cannot map %llu MiB\n", name, bytes >> 20);
		goto err_free_pages;
	}
	BUILD_BUG_ON(PAGE_SIZE % BUDDY_GRANULE_BYTES);
	p->gp = gen_pool_create(BUDDY_GRANULE_SHIFT, node);
	if (!p->gp)
		goto err_unmap;
	ret = gen_pool_add(p->gp, (unsigned long)p->base, bytes, node);
	if (ret)
		goto err_destroy_gp;
	p->nr_pages = n;
	return 0;

err_destroy_gp:
	gen_pool_destroy(p->gp);
err_unmap:
	vunmap(p->base);
err_free_pages:
	pool_free_pages(p, n);
err_free_array:
	kvfree(p->pages);
	p->pages = NULL;
err:
	memset(p->node_pages, 0, sizeof(p->node_pages));
	return ret ? ret : -ENOMEM;
}

void buddy_pool_destroy(struct buddy_pool *p)
{
	if (!p->nr_pages)
		return;
	WARN_ON(atomic64_read(&p->used));
	gen_pool_destroy(p->gp);
	vunmap(p->base);
	pool_free_pages(p, p->nr_pages);
	kvfree(p->pages);
	p->nr_pages = 0;
}

/*
 * The one place extents come from (a named, non-inline function, so that
 * fault injection can make it fail).  @cursor (0 to start a run of
 * reservations) is where the search starts and is moved past the extent.
 * NULL when no run of free granules is long enough.
 */
noinline void *buddy_pool_alloc(struct buddy_pool *p, u64 bytes,
				unsigned long *cursor)
{
	unsigned long addr;

	bytes = buddy_granule_align(bytes);
	if (!bytes || !p->nr_pages)
		return NULL;
	addr = gen_pool_alloc_algo(p->gp, bytes, pool_next_fit, cursor);
	if (!addr)
		return NULL;
	atomic64_add(bytes, &p->used);
	return (void *)addr;
}
/* fail_function makes it return NULL: genalloc's -ENOSPC, on demand */
ALLOW_ERROR_INJECTION(buddy_pool_alloc, NULL);

void buddy_pool_free(struct buddy_pool *p, void *addr, u64 bytes)
{
	bytes = buddy_granule_align(bytes);
	if (!addr || !bytes)
		return;
	gen_pool_free(p->gp, (unsigned long)addr, bytes);
	atomic64_sub(bytes, &p->used);
}
