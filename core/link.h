/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * link.h - the link model, shared by buddy.ko (kmod/link.c) and libbuddy's
 * in-process device: modeled time of one I/O call's traffic,
 *
 *   buddy sectors * 32 B / link_gbps + buddy accesses * link_latency_ns
 *   + device sectors * 32 B / device_gbps
 *
 * (1 GB/s moves one byte per nanosecond), in picoseconds, rounded down once
 * per call.  A backend sums it per allocation and reports nanoseconds
 * (buddy_alloc_stat.link_ns = sum / 1000).  It depends only on the counters
 * and the parameters, never on how fast the host runs.
 */
#ifndef BUDDY_CORE_LINK_H
#define BUDDY_CORE_LINK_H

#include "stripe.h"

#define BUDDY_LINK_GBPS_DEFAULT		150
#define BUDDY_LINK_LATENCY_NS_DEFAULT	500
#define BUDDY_DEVICE_GBPS_DEFAULT	900
#define BUDDY_LINK_GBPS_MAX		1000000	/* link_gbps, device_gbps */

/* A bandwidth parameter: 1..BUDDY_LINK_GBPS_MAX GB/s. */
static inline bool buddy_link_gbps_valid(u64 gbps)
{
	return gbps && gbps <= BUDDY_LINK_GBPS_MAX;
}

/* Modeled picoseconds of the traffic in @c (the counters of one call). */
static inline u64 buddy_link_ps(const struct buddy_counters *c,
				unsigned int link_gbps,
				unsigned int link_latency_ns,
				unsigned int device_gbps)
{
	u64 bud = (c->buddy_sectors_read + c->buddy_sectors_written) *
		  BUDDY_SECTOR_SIZE * 1000;
	u64 dev = (c->device_sectors_read + c->device_sectors_written) *
		  BUDDY_SECTOR_SIZE * 1000;

	if (!bud && !dev)
		return 0;
	return div_u64(bud, link_gbps) +
	       c->buddy_accesses * (u64)link_latency_ns * 1000 +
	       div_u64(dev, device_gbps);
}

#endif /* BUDDY_CORE_LINK_H */
