/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * compat.h - the one place where shared code meets its environment.
 *
 * Everything under core/ compiles both into buddy.ko and natively in
 * userspace.  Shared code includes only this header; it maps the few kernel
 * facilities the codecs and the striping code use (fixed-width types,
 * memcpy/memset, errno values, little-endian loads) onto libc when built
 * outside the kernel.
 */
#ifndef BUDDY_CORE_COMPAT_H
#define BUDDY_CORE_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/bug.h>
#include <linux/kernel.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/bitmap.h>
#include <asm/unaligned.h>
#include <linux/percpu.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#ifdef CONFIG_X86_64
/* The CPU and the kernel run the codecs' AVX2 code (core/codec.h). */
static inline bool buddy_cpu_has_avx2(void)
{
	return boot_cpu_has(X86_FEATURE_AVX2) &&
	       boot_cpu_has(X86_FEATURE_BMI1) &&
	       boot_cpu_has(X86_FEATURE_BMI2) &&
	       boot_cpu_has(X86_FEATURE_ABM) &&
	       boot_cpu_has(X86_FEATURE_POPCNT) &&
	       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL);
}

/* ... and GF2P8AFFINEQB on YMM registers (GFNI with AVX). */
static inline bool buddy_cpu_has_gfni(void)
{
	return buddy_cpu_has_avx2() && boot_cpu_has(X86_FEATURE_GFNI);
}
#endif
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#ifdef __x86_64__
#include <cpuid.h>
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;

	return (u32)b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	u8 *b = p;

	b[0] = v;
	b[1] = v >> 8;
	b[2] = v >> 16;
	b[3] = v >> 24;
}

static inline void put_unaligned_be32(u32 v, void *p)
{
	u8 *b = p;

	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, 8);	/* little-endian hosts, as below */
	return v;
}

static inline u64 get_unaligned_be64(const void *p)
{
	u64 v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

/* __always_inline: glibc's, as the kernel defines its own */
#include <sys/cdefs.h>
#ifndef noinline
#define noinline __attribute_noinline__
#endif
/* the kernel's: no -ftrivial-auto-var-init fill for this buffer */
#ifndef __uninitialized
#define __uninitialized
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* a racy read of a scalar, as the kernel's READ_ONCE() on a word */
#ifndef READ_ONCE
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#endif
#ifndef data_race
/* a read the caller knows may race and tolerates: a plain read here */
#define data_race(expr) (expr)
#endif

#ifndef DIV_ROUND_UP
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#endif
#ifndef __aligned
#define __aligned(x) __attribute__((__aligned__(x)))
#endif
/* the kernel's: written once at init, read-only after */
#ifndef __ro_after_init
#define __ro_after_init
#endif

#ifdef __x86_64__
/*
 * The CPU (and the OS, which must save the YMM registers) runs the codecs'
 * AVX2 code (core/codec.h): AVX2, BMI1, BMI2, POPCNT and LZCNT (leaf
 * 0x80000001, ECX bit 5, which compilers' feature tests lack names for).
 */
static inline bool buddy_cpu_has_avx2(void)
{
	unsigned int a, b, c, d;

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("bmi") ||
	    !__builtin_cpu_supports("bmi2") ||
	    !__builtin_cpu_supports("popcnt"))
		return false;
	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & 1u << 5);
}

/* ... and GF2P8AFFINEQB on YMM registers: GFNI, leaf 7 ECX bit 8. */
static inline bool buddy_cpu_has_gfni(void)
{
	unsigned int a, b, c, d;

	return buddy_cpu_has_avx2() &&
	       __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & 1u << 8);
}
#endif
#ifndef unlikely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef offsetofend
#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
#endif

/*
 * The kernel's bitmap calls the shared extent reservation uses
 * (lib/bitmap.c semantics: a miss returns a position past @size).
 */
#define BUDDY_BITS_PER_LONG	(8 * sizeof(unsigned long))

static inline bool buddy_test_bit(const unsigned long *map, unsigned long b)
{
	return map[b / BUDDY_BITS_PER_LONG] >> (b % BUDDY_BITS_PER_LONG) & 1;
}

/* First bit of @map[@start..@size) equal to @set, else @size. */
static inline unsigned long buddy_find_next(const unsigned long *map,
					    unsigned long size,
					    unsigned long start, bool set)
{
	while (start < size) {
		unsigned long w = map[start / BUDDY_BITS_PER_LONG];

		if (!set)
			w = ~w;
		w &= ~0UL << (start % BUDDY_BITS_PER_LONG);
		if (w) {
			start = start - start % BUDDY_BITS_PER_LONG +
				__builtin_ctzl(w);
			return start < size ? start : size;
		}
		start = start - start % BUDDY_BITS_PER_LONG +
			BUDDY_BITS_PER_LONG;
	}
	return size;
}

static inline unsigned long
bitmap_find_next_zero_area(unsigned long *map, unsigned long size,
			   unsigned long start, unsigned int nr,
			   unsigned long align_mask)
{
	unsigned long index, end, i;

	for (;;) {
		index = buddy_find_next(map, size, start, false);
		index = (index + align_mask) & ~align_mask;
		end = index + nr;
		if (end > size)
			return end;
		i = buddy_find_next(map, end, index, true);
		if (i < end) {
			start = i + 1;
			continue;
		}
		return index;
	}
}

static inline void bitmap_set(unsigned long *map, unsigned long start,
			      unsigned int nr)
{
	for (; nr; nr--, start++)
		map[start / BUDDY_BITS_PER_LONG] |=
			1UL << (start % BUDDY_BITS_PER_LONG);
}

static inline void bitmap_clear(unsigned long *map, unsigned long start,
				unsigned int nr)
{
	for (; nr; nr--, start++)
		map[start / BUDDY_BITS_PER_LONG] &=
			~(1UL << (start % BUDDY_BITS_PER_LONG));
}
#endif /* __KERNEL__ */

#endif /* BUDDY_CORE_COMPAT_H */
