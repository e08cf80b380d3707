/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * buddycodec.h - libbuddycodec.so: the codec core sizing memory, with no
 * dependency beyond glibc.
 *
 * The library sizes buffers of 128-byte entries with core/'s codecs (the
 * size-only path, exactly as buddy.ko and `buddyctl profile` size them) on
 * a pool of threads, one per online CPU by default.  It exists so that a
 * machine without json-c, liburing or liblz4 (a GPU node) can size its
 * device memory with the project's own codecs: the Python hook
 * (python/buddy/cuda/) reaches it through ctypes (python/buddy/_codec.py).
 *
 * The codecs are the profiler's four, in its order (tools/profile's
 * pf_codecs): index 0 BPC, 1 ZVC, 2 BDI, 3 FPC.  A codec mask selects
 * which of them a call computes (bit c for index c).
 *
 * Every function that can fail returns 0 or a negative errno value.  A
 * context serves one call at a time (concurrent calls wait for each
 * other); it is not usable in a child after fork() (its threads stay in
 * the parent): create one per process.
 */
#ifndef BUDDY_CODECLIB_H
#define BUDDY_CODECLIB_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/buddy.h"

/* Bumped when a struct or a call of this header changes. */
#define BUDDY_SIZING_ABI	1
/* Codecs the library sizes with: BPC, ZVC, BDI, FPC. */
#define BUDDY_SIZING_NC		4
#define BUDDY_SIZING_ALL	((1u << BUDDY_SIZING_NC) - 1)
/* Threads of a context at most. */
#define BUDDY_SIZING_MAX_THREADS	256

/**
 * struct buddy_size_stat - what one range of a buffer holds.
 * @entries:	128-byte entries sized.
 * @hist:	per codec (index 0..3), entries per size code (BUDDY_CODE_*:
 *		zero, 8, 32, 64, 96 B, raw) as buddy_entry_classify() gives
 *		them; all-zero entries count as BUDDY_CODE_ZERO for every
 *		codec.
 * @fig3_bytes:	per codec, the Buddy Compression paper's Fig. 3 bytes: 0
 *		for an all-zero entry, else the stream's length rounded up to
 *		8, 16, 32, 64, 80, 96 or 128 B (tools/policy/fig3.h).
 * The fields of codecs outside the call's mask are zero.
 */
struct buddy_size_stat {
	uint64_t entries;
	uint64_t hist[BUDDY_SIZING_NC][BUDDY_CODE_NR];
	uint64_t fig3_bytes[BUDDY_SIZING_NC];
};

struct buddy_sizing;

/* BUDDY_SIZING_ABI of the library loaded (to check against the header). */
unsigned int buddy_sizing_abi(void);

/*
 * buddy_sizing_codec_name() - "bpc", "zvc", "bdi", "fpc" for index 0..3;
 * NULL for any other.
 */
const char *buddy_sizing_codec_name(unsigned int codec);

/*
 * buddy_sizing_new() - a context with @threads threads (the calling thread
 * counts as one); 0 means one per CPU this process may run on
 * (sched_getaffinity), at most BUDDY_SIZING_MAX_THREADS.
 * Return: the context, or NULL with errno set (EINVAL above the maximum,
 * ENOMEM, or pthread_create's error).
 */
struct buddy_sizing *buddy_sizing_new(unsigned int threads);

/* buddy_sizing_free() - stop the threads and free @s (NULL is fine). */
void buddy_sizing_free(struct buddy_sizing *s);

/* buddy_sizing_threads() - the threads of @s, the caller included. */
unsigned int buddy_sizing_threads(const struct buddy_sizing *s);

/**
 * buddy_sizing_ranges() - size consecutive ranges of a buffer.
 * @s:		context.
 * @buf:	the buffer: the @n ranges laid end to end.
 * @lens:	@n range lengths in bytes, each a multiple of 128 (0 is fine).
 * @n:		number of ranges.
 * @codecs:	mask of the codecs to compute (bit c: codec index c), not 0.
 * @out:	@n results, overwritten.
 *
 * Return: 0; -EINVAL for a NULL @s, @lens or @out with @n > 0, a NULL
 * @buf with a range not empty, a length not a multiple of 128 or an empty
 * or unknown codec mask; -EOVERFLOW when the lengths add up past the
 * address space; -ENOMEM.  On error @out is unspecified.
 */
int buddy_sizing_ranges(struct buddy_sizing *s, const void *buf,
			const uint64_t *lens, size_t n, uint32_t codecs,
			struct buddy_size_stat *out);

/**
 * buddy_sizing_entries() - every entry of a buffer, one codec.
 * @s:		context.
 * @buf:	@len bytes.
 * @len:	a multiple of 128.
 * @codec:	codec index 0..3.
 * @codes:	@len / 128 size codes (BUDDY_CODE_*), or NULL.
 * @bits:	@len / 128 stream lengths in bits as the codec's size() gives
 *		them (0 for an all-zero entry, which is stored as nothing),
 *		or NULL.
 *
 * Return: 0; -EINVAL for a NULL @s, a NULL @buf with @len > 0, a length
 * not a multiple of 128 or an unknown codec; -ENOMEM.
 */
int buddy_sizing_entries(struct buddy_sizing *s, const void *buf,
			 uint64_t len, unsigned int codec, uint8_t *codes,
			 uint16_t *bits);

#endif /* BUDDY_CODECLIB_H */
