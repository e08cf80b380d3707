/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tcodec.h - whole-tensor codecs for DNN activations (userspace only).
 *
 * The entry codecs of core/ compress one 128-byte entry for the kernel's
 * lossless path.  The codecs here compress a whole buffer (a saved
 * activation of a training step) and are what the DNN policies
 * and "buddyctl calibrate" use:
 *
 *   zvc        cDMA's zero-value compression: core's ZVC stream of every
 *              32-word window, back to back, at its exact length (cDMA does
 *              not quantise; Buddy's device does, see entry-*)
 *   entry-NAME each 128-byte entry through buddy_entry_encode() with core's
 *              codec NAME, stored as the device stores it: one size-code
 *              byte per entry, then the quantised 0/8/32/64/96/128 bytes
 *   rle        cDMA's run-length comparison codec, over 32-bit words
 *   zlib       cDMA's DEFLATE comparison codec (zlib, level 6)
 *   lz4        CSWAP's LZ4 (liblz4, default acceleration)
 *   csr        Gist's sparse storage: CSR over rows of 256 words with
 *              one-byte column indices (Narrow Value Optimization)
 *   binarize   Gist's Binarize: one bit per float32, set when x > 0.  Keeps
 *              only what ReLU's and max-pool's backward pass read: NOT a
 *              byte round trip (TCODEC_MASK)
 *   dpr16, dpr10, dpr8
 *              Gist's Delayed Precision Reduction of float32 to 16-, 10-
 *              or 8-bit floats, 2, 3 or 4 per 32-bit word (TCODEC_LOSSY)
 *
 * Lossy and mask codecs are opt-in: tcodec_find() does not return them
 * unless the caller passes the matching TCODEC_ALLOW_* flag, and none of
 * them is a core/ entry codec, so nothing can hand them to the kernel's
 * lossless path (whose codecs come from core's buddy_codecs[] by
 * BUDDY_CODEC_* id).
 *
 * Every decoder takes the exact decoded length (the caller knows the
 * tensor's size), validates the whole stream and consumes exactly @srclen
 * bytes, never reading or writing outside the buffers it is given.
 */
#ifndef BUDDY_TOOLS_TCODEC_H
#define BUDDY_TOOLS_TCODEC_H

#include <stddef.h>
#include <sys/types.h>

/* Decoding gives back something other than the input bytes. */
#define TCODEC_LOSSY		(1U << 0)	/* values rounded (DPR) */
#define TCODEC_MASK		(1U << 1)	/* only x > 0 kept (Binarize) */
/* Input length must be a multiple of 4 (32-bit words / float32). */
#define TCODEC_WORDS		(1U << 2)

/* tcodec_find() flags: which non-lossless codecs the caller accepts. */
#define TCODEC_ALLOW_LOSSY	TCODEC_LOSSY
#define TCODEC_ALLOW_MASK	TCODEC_MASK

/**
 * struct tcodec - one whole-buffer codec.
 * @name:	as listed in tcodec.h's header comment.
 * @flags:	TCODEC_LOSSY, TCODEC_MASK, TCODEC_WORDS.
 * @priv:	codec-private (the core/ codec of an entry-* codec).
 * @bound:	largest encoding of @len input bytes (for sizing @dst).
 * @encode:	encode @len bytes at @src into @dst (@cap bytes).  Returns
 *		the encoded length, -EINVAL for a length the codec does not
 *		take, -ENOSPC when @cap is too small.
 * @decode:	decode @srclen bytes at @src into exactly @dstlen bytes at
 *		@dst.  Returns 0, or -EINVAL when the stream is malformed, does
 *		not decode to @dstlen bytes or leaves bytes unread.
 */
struct tcodec {
	const char *name;
	unsigned int flags;
	const void *priv;
	size_t (*bound)(size_t len);
	ssize_t (*encode)(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap);
	int (*decode)(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen);
};

/* Shorthands that pass the codec to itself. */
static inline ssize_t tcodec_encode(const struct tcodec *c, const void *src,
				    size_t len, void *dst, size_t cap)
{
	return c->encode(c, src, len, dst, cap);
}

static inline int tcodec_decode(const struct tcodec *c, const void *src,
				size_t srclen, void *dst, size_t dstlen)
{
	return c->decode(c, src, srclen, dst, dstlen);
}

/* Number of codecs and the i-th one, 0 <= i < tcodec_count(). */
unsigned int tcodec_count(void);
const struct tcodec *tcodec_get(unsigned int i);

/*
 * The codec called @name, or NULL with errno ENOENT when there is none and
 * EPERM when it is lossy or a mask codec that @allow does not admit.
 */
const struct tcodec *tcodec_find(const char *name, unsigned int allow);

/* True for a codec whose decode gives back the input bytes. */
static inline int tcodec_lossless(const struct tcodec *c)
{
	return !(c->flags & (TCODEC_LOSSY | TCODEC_MASK));
}

/*
 * DPR's minifloat of @bits (16, 10 or 8) bits: 1 sign bit, 5/5/4 exponent
 * bits, 10/4/3 mantissa bits, IEEE-style bias and inf/NaN exponent, no
 * subnormals; round to nearest even, finite values beyond the range clamp
 * to the largest finite value, magnitudes below the smallest normal round
 * to it or to zero, whichever is nearer.  Exposed for tests.
 */
unsigned int tcodec_dpr_from_f32(float x, unsigned int bits);
float tcodec_dpr_to_f32(unsigned int code, unsigned int bits);

#endif /* BUDDY_TOOLS_TCODEC_H */
