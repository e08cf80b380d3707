// SPDX-License-Identifier: GPL-2.0
/*
 * The link model's parameters and sums: every access to the stored entries
 * adds modeled time (core/link_model.h, the formula libbuddy's in-process device
 * shares; the latency once per link request) to its allocation and to the
 * device.  It is summed in
 * picoseconds, rounded down once per I/O call (a pread or pwrite, a fault,
 * a write-back) with the parameters in force at that moment, and reported
 * in nanoseconds.  buddy_acct_flush() adds a call's counters and its
 * modeled time at the end of the call, in one go.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#include "buddy.h"
#include "core/link_model.h"

static unsigned int link_gbps = BUDDY_LINK_GBPS_DEFAULT;
static unsigned int link_latency_ns = BUDDY_LINK_LATENCY_NS_DEFAULT;
static unsigned int device_gbps = BUDDY_DEVICE_GBPS_DEFAULT;
unsigned int buddy_link_delay_on;	/* the link_delay parameter */

/* The longest real wait of one call: a model must not hang a task. */
#define LINK_DELAY_MAX_NS	(100 * NSEC_PER_MSEC)

/* buddy_link_delay() (buddy.h) when link_delay is on and @ps >= 1 ns. */
void __buddy_link_delay(u64 ps)
{
	u64 ns = div_u64(ps, 1000);
	ktime_t t;

	might_sleep();
	ns = min_t(u64, ns, LINK_DELAY_MAX_NS);
	if (ns < 10 * NSEC_PER_USEC) {
		ndelay(ns);
		return;
	}
	t = ns_to_ktime(ns);
	set_current_state(TASK_KILLABLE);
	schedule_hrtimeout_range(&t, NSEC_PER_USEC, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

/**
 * buddy_link_owe() - with link_delay on, leave @ps of modeled link time of
 * @a's traffic for a later call of @a to wait (struct buddy_win's
 * link_debt_ps): traffic that the task making it must not wait for, under
 * a lock or mmap_lock, or that another task caused (dirty pages written
 * back by an eviction).
 * @a:	the allocation whose traffic it was.
 * @ps:	modeled picoseconds.
 */
void buddy_link_owe(struct buddy_allocation *a, u64 ps)
{
	if (unlikely(READ_ONCE(buddy_link_delay_on)) && ps)
		atomic64_add(ps, &a->win.link_debt_ps);
}

/**
 * buddy_link_take_debt() - what @a owes (buddy_link_owe()), now the
 * caller's to wait with buddy_link_delay().
 * @a:	the allocation.
 *
 * Return: picoseconds, 0 when nothing is owed.
 */
u64 buddy_link_take_debt(struct buddy_allocation *a)
{
	if (likely(!atomic64_read(&a->win.link_debt_ps)))
		return 0;
	return atomic64_xchg(&a->win.link_debt_ps, 0);
}

/* Add @acct's modeled link time to @a and the device; returns it. */
static u64 link_account(struct buddy_allocation *a,
			const struct buddy_io_acct *acct)
{
	u64 ps = buddy_link_ps(&acct->c, acct->link_requests,
			       READ_ONCE(link_gbps),
			       READ_ONCE(link_latency_ns),
			       READ_ONCE(device_gbps));

	if (acct->link_requests)
		atomic64_add(acct->link_requests, &a->win.link_requests);
	if (!ps)
		return 0;
	atomic64_add(ps, &a->win.link_ps);
	/* the device's: this CPU's part, no line shared with other CPUs */
	this_cpu_add(buddy_dev->pcpu->link_ps, ps);
	return ps;
}

/*
 * Add @acct to the counters; returns the modeled picoseconds it adds.
 * @acct is spent: every caller flushes it once, at the end of its call.
 */
u64 buddy_acct_flush(struct buddy_allocation *a, struct buddy_io_acct *acct)
{
	const __u64 *c = (const __u64 *)&acct->c;
	unsigned int i;
	u64 ps;

	for (i = 0; i < BUDDY_NR_COUNTERS; i++) {
		if (!c[i])
			continue;
		atomic64_add(c[i], &a->counters[i]);
		this_cpu_add(buddy_dev->pcpu->counters[i], c[i]);
	}
	ps = link_account(a, acct);
	for (i = 0; i < BUDDY_CODE_NR; i++) {
		if (acct->codes[i]) {
			buddy_codes_add(a, acct->codes);
			break;
		}
	}
	return ps;
}

/* Modeled nanoseconds of all allocations, ever. */
u64 buddy_link_device_ns(void)
{
	return div_u64(buddy_pcpu_sum(offsetof(struct buddy_pcpu, link_ps)),
		       1000);
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
module_param_named(link_delay, buddy_link_delay_on, uint, 0644);
MODULE_PARM_DESC(link_delay,
		 "1: really wait each I/O call's modeled link time, outside every lock, by the task whose call or fault made the traffic (at most 100 ms per call, killable; not for RWF_NOWAIT/io_uring inline), for runs on real hardware; 0: model only (default: 0)");
module_param_cb(device_gbps, &gbps_ops, &device_gbps, 0644);
MODULE_PARM_DESC(device_gbps,
		 "Modeled device memory bandwidth in GB/s, 1..1000000 (default: 900)");
