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
 * than the vector codec saves: measured at load time, see
 * buddy_codec_fpu_init()), the access is not a plain read at 1x (no codec
 * work at all), and irq_fpu_usable() says this context may.  Everywhere
 * else, and for the counters, the scalar codecs run: same streams, bit for
 * bit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <asm/fpu/api.h>

#include "buddy.h"
#include "core/link_model.h"

/* BUDDY_IMPL_*, or "auto" until buddy_codec_fpu_init() picks one. */
#define CODEC_IMPL_AUTO		BUDDY_IMPL_NR
static unsigned int codec_impl = CODEC_IMPL_AUTO;

/*
 * Entries from which a stripe runs a vector codec; 0 until
 * buddy_codec_fpu_init() works it out from its measurement.
 */
static unsigned int codec_vector_min;

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
		 "Implementation of the codecs: auto, scalar, avx2 or gfni (default: auto, the faster of the scalar one and the best vector one this CPU runs, timed at load); reading lists those it runs, the one in use in brackets");
module_param(codec_vector_min, uint, 0644);
MODULE_PARM_DESC(codec_vector_min,
		 "Entries a stripe access needs for a vector codec to run it, inside kernel_fpu_begin() (default: 0, worked out at load from the time of an FPU section and the time the vector codec saves per entry)");

/* --- the measurement at load time --------------------------------------- */

#define CALIB_ENTRIES	BUDDY_STRIPE_ENTRIES
#define CALIB_ROUNDS	8	/* stripes per batch */
#define CALIB_BATCHES	5	/* the best batch counts */

/*
 * A stripe of entries like the ones memory holds: zero, constant, ramps,
 * small integers, floats of one magnitude, sparse bits and noise, from a
 * fixed xorshift sequence.
 */
static void calib_fill(u8 *p)
{
	u32 x = 2463534242u, w = 0;
	unsigned int e, i;

	for (e = 0; e < CALIB_ENTRIES; e++) {
		for (i = 0; i < BUDDY_ENTRY_WORDS; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			switch (e % 8) {
			case 0:
				w = 0;
				break;
			case 1:
				w = 0x12345678;
				break;
			case 2:
				w = 1000 + 16 * i;
				break;
			case 3:
				w = (s32)(x % 2001) - 1000;
				break;
			case 4:
				w = 0x3f800000 | (x & 0x7fff);
				break;
			case 5:
				w = x % 5 ? 0 : 1u << (x >> 27);
				break;
			case 6:
				w = 0x40000000 | (x & 0x3fffff);
				break;
			default:
				w = x;
				break;
			}
			put_unaligned_le32(w, p + e * BUDDY_ENTRY_BYTES + 4 * i);
		}
	}
}

/*
 * Nanoseconds one stripe takes to encode and decode with @c, the best of
 * CALIB_BATCHES batches; with @fpu each stripe in an FPU section, as
 * buddy_stripe_rw_fpu() runs it.
 */
static u64 calib_stripe_ns(const struct buddy_codec *c, bool fpu,
			   const u8 *src, u8 *st, u8 *dst)
{
	unsigned int codes[CALIB_ENTRIES];
	const u8 *stored[CALIB_ENTRIES];
	u64 best = U64_MAX, t;
	unsigned int b, r, e;

	for (b = 0; b < CALIB_BATCHES; b++) {
		t = ktime_get_ns();
		for (r = 0; r < CALIB_ROUNDS; r++) {
			if (fpu)
				kernel_fpu_begin();
			for (e = 0; e < CALIB_ENTRIES; e++) {
				stored[e] = st + e * BUDDY_STREAM_MAX;
				codes[e] = buddy_entry_encode(c,
					src + e * BUDDY_ENTRY_BYTES,
					st + e * BUDDY_STREAM_MAX);
			}
			/* entries in a row, as a stripe's read decodes them */
			buddy_entries_decode(c, codes, stored, dst,
					     CALIB_ENTRIES);
			if (fpu)
				kernel_fpu_end();
		}
		best = min(best, (ktime_get_ns() - t) / CALIB_ROUNDS);
		cond_resched();
	}
	return best;
}

/*
 * With codec_impl auto: time a stripe with each implementation, and the
 * FPU section itself (the first one of this syscall saves the task's
 * registers, which are restored on its way back: twice that), like the
 * kernel's RAID-6 and XOR code pick theirs.  The vector codec is taken
 * when it is faster; it runs from the number of entries whose savings pay
 * for the section.  Under an emulator (QEMU TCG) the vector code can be
 * the slower one: then the scalar one stays.
 */
void buddy_codec_fpu_init(void)
{
	const struct buddy_codec *sc = buddy_codec_by_id(BUDDY_CODEC_BPC);
	unsigned int best = buddy_impl_best(), want = codec_impl;
	u64 t, fpu_ns, scalar_ns, vec_ns, saved;
	u8 *src, *st, *dst;

	buddy_codec_init();
	if (best == BUDDY_IMPL_SCALAR || !irq_fpu_usable()) {
		codec_impl = want == CODEC_IMPL_AUTO ? BUDDY_IMPL_SCALAR : want;
		if (!codec_vector_min)
			codec_vector_min = 1;
		return;
	}
	src = kmalloc(CALIB_ENTRIES * (2 * BUDDY_ENTRY_BYTES + BUDDY_STREAM_MAX),
		      GFP_KERNEL);
	if (!src) {
		codec_impl = want == CODEC_IMPL_AUTO ? best : want;
		if (!codec_vector_min)
			codec_vector_min = 1;
		return;
	}
	st = src + CALIB_ENTRIES * BUDDY_ENTRY_BYTES;
	dst = st + CALIB_ENTRIES * BUDDY_STREAM_MAX;
	calib_fill(src);

	t = ktime_get_ns();
	kernel_fpu_begin();
	kernel_fpu_end();
	fpu_ns = 2 * (ktime_get_ns() - t);
	scalar_ns = calib_stripe_ns(sc, false, src, st, dst);
	vec_ns = calib_stripe_ns(buddy_codec_impl(sc, best), true, src, st,
				 dst);
	kfree(src);

	if (want == CODEC_IMPL_AUTO)
		codec_impl = vec_ns < scalar_ns ? best : BUDDY_IMPL_SCALAR;
	if (!codec_vector_min) {
		saved = vec_ns < scalar_ns ?
			(scalar_ns - vec_ns) / CALIB_ENTRIES : 0;
		codec_vector_min = saved ? clamp_t(u64,
				DIV_ROUND_UP_ULL(fpu_ns, saved), 1,
				CALIB_ENTRIES) : CALIB_ENTRIES;
	}
	pr_info("codecs: %s, vector from %u entries (a 4 KiB stripe: scalar %llu ns, %s %llu ns; FPU section %llu ns)\n",
		buddy_impl_name(codec_impl), codec_vector_min, scalar_ns,
		buddy_impl_name(best), vec_ns, fpu_ns);
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
