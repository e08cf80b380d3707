/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * datagen.h - deterministic data-class generators for tests and benchmarks
 * (userspace only).
 *
 * datagen_fill(class, seed, buf, len) always writes the same bytes for the
 * same (class, seed, len): every class is built from a seeded splitmix64
 * stream, never from the clock or libc's rand().  Multi-byte values are
 * stored little-endian, as the codecs read them.
 */
#ifndef BUDDY_TOOLS_DATAGEN_H
#define BUDDY_TOOLS_DATAGEN_H

#include "core/compat.h"

enum datagen_class {
	DATAGEN_RANDOM,		/* uniform random bytes */
	DATAGEN_ZERO,		/* all zero */
	DATAGEN_CONSTANT,	/* one random u32 repeated */
	DATAGEN_RAMP,		/* u32 start + i * stride, small stride */
	DATAGEN_FLOAT32,	/* smooth float32 array (sines + small noise) */
	DATAGEN_FLOAT64,	/* smooth float64 array */
	DATAGEN_RELU10,		/* float32 ReLU output, 10% zeros */
	DATAGEN_RELU50,		/* 50% zeros */
	DATAGEN_RELU90,		/* 90% zeros */
	DATAGEN_RELU95,		/* 95% zeros */
	DATAGEN_POINTER,	/* 64-bit heap/stack pointers, small strides */
	DATAGEN_ALTSIGN,	/* s32 of small magnitude, alternating sign */
	DATAGEN_BITNOISE,	/* u32 words: 3/4 zero, else one random bit set */
	DATAGEN_MIXED,		/* one of the above per 4 KiB page */
	DATAGEN_NR,
};

/* splitmix64: a tiny, fast, well-mixed 64-bit generator. */
struct datagen_rng {
	u64 s;
};

static inline void datagen_seed(struct datagen_rng *r, u64 seed)
{
	r->s = seed;
}

static inline u64 datagen_next(struct datagen_rng *r)
{
	u64 z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift, negligible bias for tests). */
static inline u32 datagen_below(struct datagen_rng *r, u32 n)
{
	return (u32)(((datagen_next(r) >> 32) * (u64)n) >> 32);
}

/* Mix two 64-bit values into a seed (for per-page/per-entry sub-seeds). */
static inline u64 datagen_mix(u64 a, u64 b)
{
	struct datagen_rng r = { a ^ (b * 0xd1342543de82ef95ull) };

	return datagen_next(&r);
}

/* Fill @len bytes at @buf with data of class @c, determined by @seed. */
void datagen_fill(enum datagen_class c, u64 seed, void *buf, size_t len);

/* Short lowercase name ("random", "relu90", "mixed"...); "?" if unknown. */
const char *datagen_class_name(enum datagen_class c);

/* Class of a name as printed by datagen_class_name(); -1 if unknown. */
int datagen_class_by_name(const char *name);

/* Zero fraction of the RELU classes in percent, 0 for the others. */
unsigned int datagen_relu_zero_pct(enum datagen_class c);

#endif /* BUDDY_TOOLS_DATAGEN_H */
