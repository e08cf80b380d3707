// SPDX-License-Identifier: GPL-2.0
/*
 * The link model's parameters and sums: every access to the stored entries
 * adds modeled time (core/link.h, the formula libbuddy's in-process device
 * shares; the latency once per link request) to its allocation and to the
 * device.  It is summed in
 * picoseconds, rounded down once per I/O call (a pread or pwrite, a fault,
 * a write-back) with the parameters in force at that moment, and reported
 * in nanoseconds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/moduleparam.h>

#include "buddy.h"
#include "../core/link.h"

static unsigned int link_gbps = BUDDY_LINK_GBPS_DEFAULT;
static unsigned int link_latency_ns = BUDDY_LINK_LATENCY_NS_DEFAULT;
static unsigned int device_gbps = BUDDY_DEVICE_GBPS_DEFAULT;
static atomic64_t device_link_ps = ATOMIC64_INIT(0);

void buddy_link_account(struct buddy_allocation *a,
			const struct buddy_io_acct *acct)
{
	u64 ps = buddy_link_ps(&acct->c, acct->link_requests,
			       READ_ONCE(link_gbps),
			       READ_ONCE(link_latency_ns),
			       READ_ONCE(device_gbps));

	if (acct->link_requests)
		atomic64_add(acct->link_requests, &a->win.link_requests);
	if (!ps)
		return;
	atomic64_add(ps, &a->win.link_ps);
	atomic64_add(ps, &device_link_ps);
}

/* Modeled nanoseconds of all allocations, ever. */
u64 buddy_link_device_ns(void)
{
	return div_u64(atomic64_read(&device_link_ps), 1000);
}

/* A bandwidth: 1..1000000 GB/s. */
static int gbps_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (!buddy_link_gbps_valid(v))
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops gbps_ops = {
	.set = gbps_set,
	.get = param_get_uint,
};

module_param_cb(link_gbps, &gbps_ops, &link_gbps, 0644);
MODULE_PARM_DESC(link_gbps,
		 "Modeled buddy link bandwidth in GB/s, 1..1000000 (default: 150)");
module_param(link_latency_ns, uint, 0644);
MODULE_PARM_DESC(link_latency_ns,
		 "Modeled latency of one buddy link request (a stripe touching buddy sectors) in ns (default: 500)");
module_param_cb(device_gbps, &gbps_ops, &device_gbps, 0644);
MODULE_PARM_DESC(device_gbps,
		 "Modeled device memory bandwidth in GB/s, 1..1000000 (default: 900)");
