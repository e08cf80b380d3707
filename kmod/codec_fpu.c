// SPDX-License-Identifier: GPL-2.0
/*
 * Which implementation of the codecs buddy.ko runs (the codec_impl
 * parameter), and the FPU section that lets a stripe use a vector one.
 *
 * The kernel saves no vector registers for its own code: they are usable
 * only between kernel_fpu_begin() and kernel_fpu_end(), which save the
 * task's FPU state (restored on the way back to user space) and keep the
 * CPU, with preemption off.  So buddy_stripe_rw_fpu() takes that section
 * once around a whole stripe (at most 32 entries, one page of a window
 * fault or a write-back, one stripe of a pread or pwrite) rather than per
 * entry, and only where it pays: the codec has a vector form, the stripe
 * has at least codec_vector_min entries (below that the save costs more
 * than the vector codec saves; see Documentation/admin-guide/buddy.rst
 * for the measurement), the access is not a plain read at 1x (no codec
 * work at all), and irq_fpu_usable() says this context may.  Everywhere
 * else, and for the counters, the scalar codecs run: same streams, bit for
 * bit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <asm/fpu/api.h>

#include "buddy.h"
#include "../core/link.h"

/* BUDDY_IMPL_*, or "auto" until buddy_codec_fpu_init() picks the best. */
#define CODEC_IMPL_AUTO		BUDDY_IMPL_NR
static unsigned int codec_impl = CODEC_IMPL_AUTO;

/*
 * Entries from which a stripe runs a vector codec: measured in the guest
 * of make bench-guest, a 2x/bpc pread or pwrite of one 128-byte entry
 * costs more with the FPU section than without, two or more cost less.
 */
static unsigned int codec_vector_min = 2;

static int codec_impl_set(const char *val, const struct kernel_param *kp)
{
	int impl;

	if (sysfs_streq(val, "auto")) {
		impl = buddy_impl_best();
	} else {
		char name[16];

		strscpy(name, val, sizeof(name));
		impl = buddy_impl_by_name(strim(name));
		if (impl < 0)
			return -EINVAL;
		if (!buddy_impl_usable(impl))
			return -EOPNOTSUPP;
	}
	WRITE_ONCE(codec_impl, impl);
	return 0;
}

/* The implementations this CPU runs, the one in use in brackets. */
static int codec_impl_get(char *buf, const struct kernel_param *kp)
{
	unsigned int impl = READ_ONCE(codec_impl), i;
	int n = 0;

	for (i = 0; i < BUDDY_IMPL_NR; i++) {
		if (!buddy_impl_usable(i))
			continue;
		n += sysfs_emit_at(buf, n, "%s%s%s%s", n ? " " : "",
				   i == impl ? "[" : "", buddy_impl_name(i),
				   i == impl ? "]" : "");
	}
	return n + sysfs_emit_at(buf, n, "\n");
}

static const struct kernel_param_ops codec_impl_ops = {
	.set = codec_impl_set,
	.get = codec_impl_get,
};

module_param_cb(codec_impl, &codec_impl_ops, NULL, 0644);
MODULE_PARM_DESC(codec_impl,
		 "Implementation of the codecs: auto, scalar or avx2 (default: auto, the fastest this CPU runs); reading lists those it runs, the one in use in brackets");
module_param(codec_vector_min, uint, 0644);
MODULE_PARM_DESC(codec_vector_min,
		 "Entries a stripe access needs for a vector codec to run it, inside kernel_fpu_begin() (default: 2)");

void buddy_codec_fpu_init(void)
{
	if (codec_impl == CODEC_IMPL_AUTO)
		codec_impl = buddy_impl_best();
	pr_debug("codecs: %s\n", buddy_impl_name(codec_impl));
}

int buddy_stripe_rw_fpu(const struct buddy_extent *x, unsigned int i,
			unsigned int off, u8 *buf, unsigned int len, bool write,
			struct buddy_io_acct *acct)
{
	unsigned int impl = READ_ONCE(codec_impl);
	struct buddy_extent v;
	int ret;

	if (impl == BUDDY_IMPL_SCALAR || impl >= BUDDY_IMPL_NR ||
	    len < READ_ONCE(codec_vector_min) * BUDDY_ENTRY_BYTES ||
	    (!write && x->target == BUDDY_TARGET_1X))
		return buddy_stripe_rw_link(x, i, off, buf, len, write, acct);
	v = *x;
	v.codec = buddy_codec_impl(x->codec, impl);
	if (v.codec == x->codec || !irq_fpu_usable())
		return buddy_stripe_rw_link(x, i, off, buf, len, write, acct);
	kernel_fpu_begin();
	ret = buddy_stripe_rw_link(&v, i, off, buf, len, write, acct);
	kernel_fpu_end();
	return ret;
}
