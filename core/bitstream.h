/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * bitstream.h - the MSB-first bit writer and the bounds-checked bit reader
 * of the codecs.  Bits are packed from bit 7 down, byte 0 first
 * (../spec/bpc.md).
 *
 * Both move 64 bits at a time with one big-endian load or store: the writer
 * stores 8 bytes per put, without a flush test; the reader keeps the next
 * 64 bits in a window and refills it with one load per skip.  No codec
 * needs a counting-only writer: each has its own size path.
 */
#ifndef BUDDY_CORE_BITSTREAM_H
#define BUDDY_CORE_BITSTREAM_H

#include "core/codec.h"

/* Store @v big-endian at @p (get_unaligned_be64() of a u64 swaps it). */
static __always_inline void bits_put64(u8 *p, u64 v)
{
	v = get_unaligned_be64(&v);
	memcpy(p, &v, 8);
}

/*
 * The 64 bits from bit @s (0..7) of the bytes at @p, the first on top: one
 * big-endian load and the byte after it, so @p[0..8] must be readable.
 */
static __always_inline u64 bits_get64(const u8 *p, unsigned int s)
{
	return get_unaligned_be64(p) << s | (u32)p[8] << s >> 8;
}

/*
 * The writer.  The accumulator takes bits in at the bottom, so a put
 * depends on the one before only through a shift and an OR.  Every put
 * then stores the pending bits, left-aligned, as 8 bytes at the byte the
 * stream has reached and keeps only those of the last, incomplete byte: no
 * flush test, and the bits after the stream in the store are zero.
 */
struct bitw {
	u8 *buf;
	u8 *p;			/* the incomplete byte: buf + whole bytes */
	unsigned int used;	/* its bits, 0..7 */
	u64 acc;		/* those bits at the bottom (above: stale) */
};

/*
 * A put stores BITW_SLACK bytes from the byte it starts in, bitw_finish()
 * one byte, the one the stream ends in: the buffer of a stream in which no
 * put nor the finish starts past bit @bits needs BITW_BUF_BYTES(bits) bytes.
 * Each codec checks its streams against BUDDY_STREAM_MAX with it.
 */
#define BITW_SLACK		8
#define BITW_BUF_BYTES(bits)	((bits) / 8 + BITW_SLACK)

static __always_inline void bitw_init(struct bitw *w, u8 *buf)
{
	w->buf = buf;
	w->p = buf;
	w->used = 0;
	w->acc = 0;
}

/* Append the @n bits of @v (@v < 2^@n), 1 <= @n <= 56. */
static __always_inline void bitw_put(struct bitw *w, u64 v, unsigned int n)
{
	unsigned int t = w->used + n;

	w->acc = w->acc << n | v;
	bits_put64(w->p, w->acc << (64 - t));
	w->p += t >> 3;
	w->used = t & 7;
}

/*
 * Append 64 bits: the bit offset stays.  Their last w->used bits do not fit
 * the store: the next put or bitw_finish() stores them.
 */
static __always_inline void bitw_put64(struct bitw *w, u64 v)
{
	/* the pending bits on top; << 1 << 63 - used is 0 for used 0 */
	bits_put64(w->p, w->acc << 1 << (63 - w->used) | v >> w->used);
	w->p += 8;
	w->acc = v;
}

/* Length of the stream in bits. */
static __always_inline unsigned int bitw_bits(const struct bitw *w)
{
	return 8 * (unsigned int)(w->p - w->buf) + w->used;
}

/*
 * Store the bits bitw_put64() left pending, zero-padded to a whole byte
 * (after a put: that byte again, or 0 in the one after the stream); returns
 * the length of the stream in bits.
 */
static __always_inline unsigned int bitw_finish(struct bitw *w)
{
	*w->p = (u8)(w->acc << (8 - w->used));
	return bitw_bits(w);
}

/*
 * The reader, over the caller's bytes.  It keeps the 64 bits from the
 * current one in a window, so a peek costs nothing; a skip of n bits
 * shifts them out and takes in the first n of the 64 bits after the
 * window.  The load for that depends only on where the window started, not
 * on the length of the symbol in it, so it stays off the decoders' chain
 * from one symbol to the next.  Loads read the stream where their bytes lie
 * inside it, else a copy of its last 8 bytes followed by zeros: the reader
 * never reads past the @srclen bytes given to bitr_init(), and bits past
 * the end read as zero.  A decoder checks bitr_over() as it goes, so that
 * missing bytes never pass for zeros.  No stream is longer than
 * BUDDY_STREAM_MAX bytes: the reader takes no more.
 */
struct bitr {
	const u8 *src;
	unsigned int pos;	/* next bit */
	unsigned int end;	/* length of the stream in bits */
	unsigned int fast;	/* loads from below bit fast read the stream */
	u64 tail;		/* its 8 bytes from bit fast on, zero-padded */
	u64 win;		/* the 64 bits from pos */
};

/*
 * The 64 bits from bit @at of the stream, any @at: below fast, the 9 bytes
 * from its byte lie inside the stream.
 */
static __always_inline u64 bitr_load(const struct bitr *r, unsigned int at)
{
	unsigned int x = at - r->fast;

	if (likely(at < r->fast))
		return bits_get64(r->src + (at >> 3), at & 7);
	return x < 64 ? r->tail << x : 0;
}

static __always_inline void bitr_init(struct bitr *r, const u8 *src,
				      unsigned int srclen)
{
	unsigned int len = srclen < BUDDY_STREAM_MAX ? srclen :
			   BUDDY_STREAM_MAX, i;

	r->src = src;
	r->pos = 0;
	r->end = 8 * len;
	if (likely(len >= 8)) {
		r->fast = 8 * (len - 8);
		r->tail = get_unaligned_be64(src + len - 8);
	} else {
		r->fast = 0;
		r->tail = 0;
		for (i = 0; i < len; i++)
			r->tail |= (u64)src[i] << (56 - 8 * i);
	}
	r->win = bitr_load(r, 0);
}

/* The bits consumed went past the end of the stream. */
static __always_inline bool bitr_over(const struct bitr *r)
{
	return r->pos > r->end;
}

/* The 64 bits from the current one, the first on top. */
static __always_inline u64 bitr_peek(const struct bitr *r)
{
	return r->win;
}

/*
 * Consume @n bits (1 <= @n <= 56); bitr_over() tells if they were there.
 * The bits taken in are the top @n of the 64 after the window, so the 8
 * bytes from their first are enough.
 */
static __always_inline void bitr_skip(struct bitr *r, unsigned int n)
{
	unsigned int at = r->pos + 64, x = at - r->fast;
	u64 next;

	if (likely(at < r->fast))
		next = get_unaligned_be64(r->src + (at >> 3)) << (at & 7);
	else
		next = x < 64 ? r->tail << x : 0;
	r->win = r->win << n | next >> (64 - n);
	r->pos += n;
}

/* Consume the 64 bits of the window. */
static __always_inline void bitr_skip64(struct bitr *r)
{
	r->win = bitr_load(r, r->pos + 64);
	r->pos += 64;
}

/*
 * Read @n bits (1 <= @n <= 56), the first on top.  Past the end: 0, and
 * bitr_over() from then on.
 */
static __always_inline u64 bitr_get(struct bitr *r, unsigned int n)
{
	u64 v = r->win >> (64 - n);

	bitr_skip(r, n);
	return bitr_over(r) ? 0 : v;
}

#endif /* BUDDY_CORE_BITSTREAM_H */
