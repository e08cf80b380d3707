/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numa_place.h - the benchmarks' -N NODE: run the calling thread, and the
 * threads it starts afterwards (they inherit its CPU mask), on the CPUs of
 * one NUMA node, through libnuma, as `buddyctl run --cpunodebind` does.
 * Comparing a run near the device pool's node with one far from it shows
 * what placement costs.  Header-only: dev_bench and inproc_bench each link
 * it, with -lnuma.
 */
#ifndef BUDDY_NUMA_PLACE_H
#define BUDDY_NUMA_PLACE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <numa.h>

/*
 * Bind to @node (nothing when negative).  0 on success; 2 when the node
 * does not exist (a usage error), 1 when NUMA or the binding fails; the
 * message names @prog, the option and the cause.
 */
static inline int bench_numa_place(const char *prog, int node)
{
	if (node < 0)
		return 0;
	if (numa_available() < 0) {
		fprintf(stderr, "%s: -N %d: no NUMA support here\n", prog, node);
		return 1;
	}
	if (node > numa_max_node()) {
		fprintf(stderr, "%s: -N %d: the highest node is %d\n", prog,
			node, numa_max_node());
		return 2;
	}
	if (numa_run_on_node(node)) {
		fprintf(stderr, "%s: -N %d: %s\n", prog, node, strerror(errno));
		return 1;
	}
	return 0;
}

#endif /* BUDDY_NUMA_PLACE_H */
