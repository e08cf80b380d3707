/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * link_model.h - the link model, shared by buddy.ko (kmod/link.c) and libbuddy's
 * in-process device: modeled time of one I/O call's traffic,
 *
 *   buddy sectors * 32 B / link_gbps + link requests * link_latency_ns
 *   + device sectors * 32 B / device_gbps
 *
 * (1 GB/s moves one byte per nanosecond), in picoseconds, rounded down once
 * per call.  A backend sums it per allocation and reports nanoseconds
 * (buddy_alloc_stat.link_ns = sum / 1000).  It depends only on the counters
 * and the parameters, never on how fast the host runs.
 *
 * Latency is paid once per link request, not per entry: a GPU issues the
 * buddy sector requests of one access batch concurrently, so their latencies
 * overlap.  A request is one stripe (32 entries, 4 KiB: one window fault,
 * one write-back, one stripe of a pread or pwrite) whose entry accesses
 * touched at least one buddy sector (buddy_alloc_stat.link_requests); the
 * bytes of all its buddy sectors still cross the link at link_gbps.  The
 * per-entry count, buddy_accesses, is unchanged: it is the paper's
 * buddy-access fraction, not a latency count.
 */
#ifndef BUDDY_CORE_LINK_MODEL_H
#define BUDDY_CORE_LINK_MODEL_H

#include "core/stripe.h"

#define BUDDY_LINK_GBPS_DEFAULT		150
#define BUDDY_LINK_LATENCY_NS_DEFAULT	500
#define BUDDY_DEVICE_GBPS_DEFAULT	900
#define BUDDY_LINK_GBPS_MAX		1000000	/* link_gbps, device_gbps */

/* A bandwidth parameter: 1..BUDDY_LINK_GBPS_MAX GB/s. */
static inline bool buddy_link_gbps_valid(u64 gbps)
{
	return gbps && gbps <= BUDDY_LINK_GBPS_MAX;
}

/* Modeled picoseconds of one call's counters @c and @link_requests. */
static inline u64 buddy_link_ps(const struct buddy_counters *c,
				u64 link_requests, unsigned int link_gbps,
				unsigned int link_latency_ns,
				unsigned int device_gbps)
{
	u64 bud = (c->buddy_sectors_read + c->buddy_sectors_written) *
		  BUDDY_SECTOR_SIZE * 1000;
	u64 dev = (c->device_sectors_read + c->device_sectors_written) *
		  BUDDY_SECTOR_SIZE * 1000;

	if (!bud && !dev)
		return 0;
	/* a term that is zero costs no division */
	return (bud ? div_u64(bud, link_gbps) : 0) +
	       link_requests * (u64)link_latency_ns * 1000 +
	       (dev ? div_u64(dev, device_gbps) : 0);
}

/*
 * buddy_stripe_rw() of one stripe (the caller's loop never lets a call
 * cross one), counting a link request in @acct when it touched buddy
 * sectors.  Every backend's data path calls this, so kmod and the
 * in-process device count requests alike.
 */
static inline int buddy_stripe_rw_link(const struct buddy_extent *x,
				       unsigned int i, unsigned int off,
				       u8 *buf, unsigned int len, bool write,
				       struct buddy_io_acct *acct)
{
	u64 before = acct->c.buddy_accesses;
	int ret = buddy_stripe_rw(x, i, off, buf, len, write, acct);

	if (acct->c.buddy_accesses != before)
		acct->link_requests++;
	return ret;
}

#endif /* BUDDY_CORE_LINK_MODEL_H */
