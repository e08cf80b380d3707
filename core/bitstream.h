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
	u64 acc;		/* pending bits, right-aligned */
	unsigned int nacc;	/* number of pending bits (< 8 after a put) */
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

/* Append the low @n bits of @v, most significant first; @n <= 32. */
static inline void bitw_put(struct bitw *w, u32 v, unsigned int n)
{
	w->nbits += n;
	if (!w->buf)
		return;
	w->acc = (w->acc << n) | (v & (u32)((1ull << n) - 1));
	w->nacc += n;
	while (w->nacc >= 8) {
		w->nacc -= 8;
		if (likely(w->pos < w->cap))
			w->buf[w->pos++] = (u8)(w->acc >> w->nacc);
	}
}

/* Write out the last partial byte, zero-padded; returns the length in bits. */
static inline unsigned int bitw_finish(struct bitw *w)
{
	if (w->buf && w->nacc && w->pos < w->cap)
		w->buf[w->pos++] = (u8)(w->acc << (8 - w->nacc));
	w->nacc = 0;
	return w->nbits;
}

struct bitr {
	const u8 *buf;
	unsigned int pos;	/* next bit to read */
	unsigned int len;	/* bits available */
	bool err;		/* a read went past len */
};

static inline void bitr_init(struct bitr *r, const u8 *buf, unsigned int lenbytes)
{
	r->buf = buf;
	r->pos = 0;
	r->len = lenbytes * 8;
	r->err = false;
}

/* Read @n bits (@n <= 32), most significant first; 0 and err past the end. */
static inline u32 bitr_get(struct bitr *r, unsigned int n)
{
	u32 v = 0;

	if (unlikely(n > r->len - r->pos || r->pos > r->len)) {
		r->err = true;
		r->pos = r->len;
		return 0;
	}
	while (n) {
		unsigned int bit = r->pos & 7;
		unsigned int take = 8 - bit < n ? 8 - bit : n;
		u32 byte = r->buf[r->pos >> 3];

		v = (v << take) | ((byte >> (8 - bit - take)) & ((1u << take) - 1));
		r->pos += take;
		n -= take;
	}
	return v;
}

#endif /* BUDDY_CORE_BITSTREAM_H */
