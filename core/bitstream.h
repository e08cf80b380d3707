/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * bitstream.h - MSB-first bit writer and bounds-checked reader shared by the
 * codecs.  Bits are packed from bit 7 down, byte 0 first (../spec/bpc.md).
 *
 * A writer with a NULL buffer only counts, which gives every codec its
 * size-only path from the same encoder.
 */
#ifndef BUDDY_CORE_BITSTREAM_H
#define BUDDY_CORE_BITSTREAM_H

#include "compat.h"

struct bitw {
	u8 *buf;		/* NULL: count only */
	unsigned int nbits;	/* bits written so far */
	unsigned int cap;	/* capacity of buf in bytes */
	unsigned int pos;	/* whole bytes written to buf */
	u64 acc;		/* pending bits, left-aligned at bit 63 */
	unsigned int nacc;	/* number of pending bits (< 32 after a put) */
};

static inline void bitw_init(struct bitw *w, u8 *buf, unsigned int capbytes)
{
	w->buf = buf;
	w->nbits = 0;
	w->cap = capbytes;
	w->pos = 0;
	w->acc = 0;
	w->nacc = 0;
}

/* Append the low @n bits of @v, most significant first; 1 <= @n <= 32. */
static __always_inline void bitw_put(struct bitw *w, u32 v, unsigned int n)
{
	w->nbits += n;
	if (!w->buf)
		return;
	w->acc |= (u64)(v & (u32)((1ull << n) - 1)) << (64 - n - w->nacc);
	w->nacc += n;
	if (w->nacc >= 32) {
		if (likely(w->pos + 4 <= w->cap))
			put_unaligned_be32((u32)(w->acc >> 32), w->buf + w->pos);
		w->pos += 4;
		w->acc <<= 32;
		w->nacc -= 32;
	}
}

/* Write out the pending bits, zero-padded; returns the length in bits. */
static inline unsigned int bitw_finish(struct bitw *w)
{
	while (w->buf && w->nacc) {
		if (w->pos < w->cap)
			w->buf[w->pos] = (u8)(w->acc >> 56);
		w->pos++;
		w->acc <<= 8;
		w->nacc = w->nacc > 8 ? w->nacc - 8 : 0;
	}
	return w->nbits;
}

/* Longest stream a reader takes; any codec's streams are shorter. */
#define BITR_MAX	160

/*
 * The reader works on a zero-padded copy of the stream, so every peek is
 * one unaligned 64-bit load; reading past the stream's real length sets
 * err, so missing bytes never pass for zeros.
 */
struct bitr {
	unsigned int pos;	/* next bit to read */
	unsigned int len;	/* bits available */
	bool err;		/* a read went past len */
	u8 buf[BITR_MAX + 8];
};

static inline void bitr_init(struct bitr *r, const u8 *buf, unsigned int lenbytes)
{
	if (lenbytes > BITR_MAX)
		lenbytes = BITR_MAX;
	memcpy(r->buf, buf, lenbytes);
	memset(r->buf + lenbytes, 0, sizeof(r->buf) - lenbytes);
	r->pos = 0;
	r->len = lenbytes * 8;
	r->err = false;
}

/*
 * The next @n bits (1 <= @n <= 32) without consuming them; bits past the
 * end read as zero (bitr_skip() then flags the error).
 */
static __always_inline u32 bitr_peek(const struct bitr *r, unsigned int n)
{
	unsigned int byte = r->pos >> 3;
	u64 v;

	if (unlikely(byte > BITR_MAX))
		return 0;
	v = get_unaligned_be64(r->buf + byte);
	return (u32)((v << (r->pos & 7)) >> (64 - n));
}

static __always_inline void bitr_skip(struct bitr *r, unsigned int n)
{
	if (unlikely(n > r->len - r->pos)) {
		r->err = true;
		r->pos = r->len;
		return;
	}
	r->pos += n;
}

/* Read @n bits (1 <= @n <= 32), most significant first; 0 and err past the end. */
static __always_inline u32 bitr_get(struct bitr *r, unsigned int n)
{
	u32 v = bitr_peek(r, n);

	bitr_skip(r, n);
	return r->err ? 0 : v;
}

#endif /* BUDDY_CORE_BITSTREAM_H */
