// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Sector striping of compressed entries between the device pool and the
 * buddy carve-out, with the paper's per-entry metadata and access counters.
 * See stripe.h for the layout.
 */
#include "core/stripe.h"

#define SECTORS(bytes) DIV_ROUND_UP(bytes, BUDDY_SECTOR_SIZE)

void buddy_extent_init(struct buddy_extent *x, u8 *dev, u8 *bud,
		       unsigned int target, unsigned int nr_entries,
		       const struct buddy_codec *codec)
{
	x->dev = dev;
	x->meta = dev + (size_t)nr_entries * target;
	x->bud = target == BUDDY_TARGET_1X ? NULL : bud;
	x->target = target;
	x->nr_entries = nr_entries;
	x->codec = codec;
}

static inline u8 *dev_slot(const struct buddy_extent *x, unsigned int i)
{
	return x->dev + (size_t)i * x->target;
}

static inline u8 *bud_slot(const struct buddy_extent *x, unsigned int i)
{
	return x->bud + (size_t)i * (BUDDY_ENTRY_BYTES - x->target);
}

/* Fetch the stored bytes of entry @i and decode them into @entry; no counting. */
static __always_inline int fetch(const struct buddy_extent *x, unsigned int i,
		 unsigned int code, u8 *entry)
{
	unsigned int stored, t = x->target;
	u8 buf[BUDDY_STREAM_MAX] __uninitialized;	/* what is read is copied */

	switch (code) {
	case BUDDY_CODE_ZERO:
		memset(entry, 0, BUDDY_ENTRY_BYTES);
		return 0;
	case BUDDY_CODE_C8:
	case BUDDY_CODE_C32:
	case BUDDY_CODE_C64:
	case BUDDY_CODE_C96:
		if (t == BUDDY_TARGET_1X)
			break;
		stored = buddy_code_bytes(code);
		if (stored <= t)	/* all in device memory: decode in place */
			return x->codec->decompress(dev_slot(x, i), stored,
						    entry) ? -EIO : 0;
		memcpy(buf, dev_slot(x, i), t);
		memcpy(buf + t, bud_slot(x, i), stored - t);
		return x->codec->decompress(buf, stored, entry) ? -EIO : 0;
	case BUDDY_CODE_RAW:
		break;
	default:
		return -EIO;
	}
	/* plain: at 1x in the device slot, else split at the target */
	memcpy(entry, dev_slot(x, i), t);
	if (t < BUDDY_ENTRY_BYTES)
		memcpy(entry + t, bud_slot(x, i), BUDDY_ENTRY_BYTES - t);
	return 0;
}

/* Store @entry as entry @i (its slots only); returns its code. */
static unsigned int store(const struct buddy_extent *x, unsigned int i,
			  const u8 *entry)
{
	u8 buf[BUDDY_STREAM_MAX] __uninitialized;	/* encoded into */
	unsigned int code, stored;

	if (x->target == BUDDY_TARGET_1X) {
		code = buddy_entry_classify(x->codec, entry);
		if (code != BUDDY_CODE_ZERO)
			memcpy(dev_slot(x, i), entry, BUDDY_ENTRY_BYTES);
		return code;
	}
	code = buddy_entry_encode(x->codec, entry, buf);
	stored = buddy_code_bytes(code);
	memcpy(dev_slot(x, i), buf, stored < x->target ? stored : x->target);
	if (stored > x->target)
		memcpy(bud_slot(x, i), buf + x->target, stored - x->target);
	return code;
}

/*
 * What one stripe's run of entry accesses did, by size code (at most
 * BUDDY_STRIPE_ENTRIES each): the counters are worked out once per run
 * (span_flush()), not once per entry.
 * @meta holds the run's metadata bytes, from byte @b0 of the extent's.
 */
struct span {
	u8 meta[BUDDY_STRIPE_ENTRIES / 2];
	unsigned int b0, nbytes;
	struct {
		u8 reads[BUDDY_CODE_NR];
		u8 writes[BUDDY_CODE_NR];
		u8 olds[BUDDY_CODE_NR];	/* valid old codes only */
		u8 overflows;
		u8 touched;		/* bit per code counted above */
	} n;
};

static inline unsigned int span_get(const struct span *s, unsigned int i)
{
	return buddy_meta_get(s->meta, i - 2 * s->b0);
}

static inline void span_set(struct span *s, unsigned int i, unsigned int code)
{
	buddy_meta_set(s->meta, i - 2 * s->b0, code);
}

/* Count @k accesses to entries of @code: sectors, buddy accesses. */
static inline void span_count(const struct buddy_extent *x, unsigned int code,
		       u64 k, __u64 *entries, __u64 *dsec, __u64 *bsec,
		       struct buddy_io_acct *acct)
{
	unsigned int stored = buddy_stored_bytes(x->target, code);
	unsigned int dev = stored < x->target ? stored : x->target;
	unsigned int bud = stored - dev;

	*entries += k;
	*dsec += k * SECTORS(dev);
	*bsec += k * SECTORS(bud);
	if (bud)
		acct->c.buddy_accesses += k;
}

static void span_flush(const struct buddy_extent *x, const struct span *s,
		       struct buddy_io_acct *acct)
{
	struct buddy_counters *c = &acct->c;
	unsigned int code, mask = s->n.touched;

	for (; mask; mask &= mask - 1) {
		code = __builtin_ctz(mask);
		if (s->n.reads[code])
			span_count(x, code, s->n.reads[code], &c->entry_reads,
				   &c->device_sectors_read,
				   &c->buddy_sectors_read, acct);
		if (s->n.writes[code]) {
			span_count(x, code, s->n.writes[code], &c->entry_writes,
				   &c->device_sectors_written,
				   &c->buddy_sectors_written, acct);
			acct->codes[code] += s->n.writes[code];
		}
		acct->codes[code] -= s->n.olds[code];
	}
	c->overflows += s->n.overflows;
}

/* Store @entry as entry @i of the span and count it. */
static void span_store(const struct buddy_extent *x, struct span *s,
		       unsigned int i, const u8 *entry)
{
	unsigned int old = span_get(s, i), code = store(x, i, entry);

	if (buddy_stored_bytes(x->target, old) <= x->target &&
	    buddy_stored_bytes(x->target, code) > x->target)
		s->n.overflows++;
	if (old < BUDDY_CODE_NR) {
		s->n.olds[old]++;
		s->n.touched |= 1u << old;
	}
	s->n.writes[code]++;
	s->n.touched |= 1u << code;
	span_set(s, i, code);
}

/* Read entry @i of the span into @entry and count it. */
static int span_fetch(const struct buddy_extent *x, struct span *s,
		      unsigned int i, u8 *entry)
{
	unsigned int code = span_get(s, i);
	int ret = fetch(x, i, code, entry);

	if (!ret) {
		s->n.reads[code]++;
		s->n.touched |= 1u << code;
	}
	return ret;
}

/*
 * Bit 4k of the result: nibble k of @w (entry k's size code, little-endian
 * as the metadata bytes lie) is @code.
 */
static inline u64 nibble_eq(u64 w, unsigned int code)
{
	const u64 low = 0x1111111111111111ULL;

	w ^= low * code;
	return ~(w | (w >> 1) | (w >> 2) | (w >> 3)) & low;
}

/* Bit 4k of the result: nibble k of @w is no valid code (6..15). */
static inline u64 nibble_bad(u64 w)
{
	const u64 low = 0x1111111111111111ULL;

	/* bit 3 set, or bits 2 and 1 both */
	return ((w >> 3) | ((w >> 2) & (w >> 1))) & low;
}

/* Gather bits 0, 4, 8, ... 60 of @x (the others clear) into bits 0..15. */
static inline u64 nibble_gather(u64 x)
{
	x = (x | x >> 3) & 0x0303030303030303ULL;
	x = (x | x >> 6) & 0x000f000f000f000fULL;
	x = (x | x >> 12) & 0x000000ff000000ffULL;
	return (x | x >> 24) & 0xffff;
}

/*
 * The span's 32 size codes as two 64-bit words of 16 codes each: entry
 * 2 * b0 in the low nibble of byte 0 (little-endian words).
 */
static inline void span_words(const struct span *s, u64 w[2])
{
	w[0] = get_unaligned_le64(s->meta);
	w[1] = get_unaligned_le64(s->meta + 8);
}

/* Nibble flags @f0, @f1 of span_words() as a mask: bit k, entry 2 * b0 + k. */
static inline u64 span_mask(u64 f0, u64 f1)
{
	return nibble_gather(f0) | nibble_gather(f1) << 16;
}

/*
 * Whole entries @i..@i+@n-1 of a 1x extent into @dst: each run of stored
 * (or of zero) entries is one copy (or one clear), the slots being
 * contiguous.  Runs are found on masks of the codes (span_mask()), not
 * by reading the codes one at a time.
 */
static int span_read_plain(const struct buddy_extent *x, struct span *s,
			   unsigned int i, unsigned int n, u8 *dst)
{
	unsigned int k = i - 2 * s->b0, end = k + n, j, code;
	u64 w[2], zero, bad;

	span_words(s, w);
	zero = span_mask(nibble_eq(w[0], BUDDY_CODE_ZERO),
			 nibble_eq(w[1], BUDDY_CODE_ZERO));
	bad = span_mask(nibble_bad(w[0]), nibble_bad(w[1]));
	while (k < end) {
		bool z = zero >> k & 1;
		/* the run ends at a code of the other kind or a bad one */
		u64 stop = ((z ? ~zero : zero) | bad | 1ULL << end) >> k;

		if (bad >> k & 1)
			return -EIO;
		j = k + __builtin_ctzll(stop);
		/* at 1x every stored code counts alike: as RAW */
		code = z ? BUDDY_CODE_ZERO : BUDDY_CODE_RAW;
		s->n.reads[code] += j - k;
		s->n.touched |= 1u << code;
		if (z)
			memset(dst, 0, (size_t)(j - k) * BUDDY_ENTRY_BYTES);
		else
			memcpy(dst, dev_slot(x, i), (size_t)(j - k) *
			       BUDDY_ENTRY_BYTES);
		dst += (size_t)(j - k) * BUDDY_ENTRY_BYTES;
		i += j - k;
		k = j;
	}
	return 0;
}

/*
 * @n RAW entries from @i into @dst at a compressed target @t, a constant
 * where inlined: each entry's first @t bytes from its device slot, the
 * rest from its buddy slot, both fixed-size copies.
 */
static __always_inline void raw_copy(const struct buddy_extent *x,
				     unsigned int i, unsigned int n, u8 *dst,
				     const unsigned int t)
{
	const u8 *d = x->dev + (size_t)i * t;
	const u8 *b = x->bud + (size_t)i * (BUDDY_ENTRY_BYTES - t);

	for (; n; n--) {
		memcpy(dst, d, t);
		memcpy(dst + t, b, BUDDY_ENTRY_BYTES - t);
		dst += BUDDY_ENTRY_BYTES;
		d += t;
		b += BUDDY_ENTRY_BYTES - t;
	}
}

static void raw_read(const struct buddy_extent *x, unsigned int i,
		     unsigned int n, u8 *dst)
{
	switch (x->target) {
	case BUDDY_TARGET_4_3X:
		raw_copy(x, i, n, dst, BUDDY_TARGET_4_3X);
		break;
	case BUDDY_TARGET_2X:
		raw_copy(x, i, n, dst, BUDDY_TARGET_2X);
		break;
	case BUDDY_TARGET_4X:
		raw_copy(x, i, n, dst, BUDDY_TARGET_4X);
		break;
	default:	/* BUDDY_TARGET_16X: buddy_target_valid() */
		raw_copy(x, i, n, dst, BUDDY_TARGET_16X);
		break;
	}
}

/*
 * Entries @i..@i+@n-1 of a compressed extent, none RAW or zero, into
 * @dst: each stretch of those stored whole in device memory in one
 * buddy_entries_decode() (the vector codec decodes eight at a time), the
 * others one by one.  A stretch that does not decode is fetched again
 * entry by entry, so that the read stops at the entry that does not
 * (-EIO), what came before counted.
 */
static int span_decode(const struct buddy_extent *x, struct span *s,
		       unsigned int i, unsigned int n, u8 *dst)
{
	unsigned int codes[BUDDY_STRIPE_ENTRIES], k, m, code;
	const u8 *stored[BUDDY_STRIPE_ENTRIES];
	int ret;

	for (; n; n -= m, i += m, dst += (size_t)m * BUDDY_ENTRY_BYTES) {
		for (m = 0; m < n && m < BUDDY_STRIPE_ENTRIES; m++) {
			code = span_get(s, i + m);
			if (code >= BUDDY_CODE_NR ||
			    buddy_code_bytes(code) > x->target)
				break;
			codes[m] = code;
			stored[m] = dev_slot(x, i + m);
		}
		if (m && !buddy_entries_decode(x->codec, codes, stored, dst,
					       m)) {
			for (k = 0; k < m; k++) {
				s->n.reads[codes[k]]++;
				s->n.touched |= 1u << codes[k];
			}
			continue;
		}
		m = m ? m : 1;
		for (k = 0; k < m; k++) {
			ret = span_fetch(x, s, i + k,
					 dst + (size_t)k * BUDDY_ENTRY_BYTES);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Whole entries @i..@i+@n-1 of a compressed extent into @dst: a run of
 * RAW entries is copied without the codec (two fixed-size copies each), a
 * run of zero entries is one clear, the entries of a run of other codes
 * are decoded by span_decode().  Runs are found on masks of the codes, as
 * span_read_plain() does; an invalid code stops the read there with -EIO
 * (span_fetch()), what came before counted.
 */
static int span_read_split(const struct buddy_extent *x, struct span *s,
			   unsigned int i, unsigned int n, u8 *dst)
{
	unsigned int k = i - 2 * s->b0, end = k + n, j;
	u64 w[2], r0, r1, z0, z1, raw, zero;
	int ret;

	span_words(s, w);
	r0 = nibble_eq(w[0], BUDDY_CODE_RAW);
	r1 = nibble_eq(w[1], BUDDY_CODE_RAW);
	z0 = nibble_eq(w[0], BUDDY_CODE_ZERO);
	z1 = nibble_eq(w[1], BUDDY_CODE_ZERO);
	if (!(r0 | r1 | z0 | z1))	/* no RAW or zero code: all decoded */
		return span_decode(x, s, i, n, dst);
	/* bit k for entry 2 * b0 + k */
	raw = span_mask(r0, r1);
	zero = span_mask(z0, z1);
	while (k < end) {
		if (raw >> k & 1) {
			j = k + __builtin_ctzll((~raw | 1ULL << end) >> k);
			raw_read(x, i, j - k, dst);
			s->n.reads[BUDDY_CODE_RAW] += j - k;
			s->n.touched |= 1u << BUDDY_CODE_RAW;
		} else if (zero >> k & 1) {
			j = k + __builtin_ctzll((~zero | 1ULL << end) >> k);
			memset(dst, 0, (size_t)(j - k) * BUDDY_ENTRY_BYTES);
			s->n.reads[BUDDY_CODE_ZERO] += j - k;
			s->n.touched |= 1u << BUDDY_CODE_ZERO;
		} else {
			j = k + __builtin_ctzll((raw | zero | 1ULL << end) >>
						k);
			ret = span_decode(x, s, i, j - k, dst);
			if (ret)
				return ret;
		}
		dst += (size_t)(j - k) * BUDDY_ENTRY_BYTES;
		i += j - k;
		k = j;
	}
	return 0;
}

/*
 * Whole entries @i..@i+@n-1 of a 1x extent from @src: one copy into the
 * contiguous slots (a zero entry's slot is never read), then each entry's
 * size code by the size-only path.
 */
static void span_write_plain(const struct buddy_extent *x, struct span *s,
			     unsigned int i, unsigned int n, const u8 *src)
{
	unsigned int k;

	memcpy(dev_slot(x, i), src, (size_t)n * BUDDY_ENTRY_BYTES);
	for (k = 0; k < n; k++) {
		unsigned int old = span_get(s, i + k);
		unsigned int code = buddy_entry_classify(x->codec,
					src + (size_t)k * BUDDY_ENTRY_BYTES);

		/* at 1x nothing spills: no overflow */
		if (old < BUDDY_CODE_NR) {
			s->n.olds[old]++;
			s->n.touched |= 1u << old;
		}
		s->n.writes[code]++;
		s->n.touched |= 1u << code;
		span_set(s, i + k, code);
	}
}

/* One stripe's part of buddy_stripe_rw(): @i..@i+@n-1 lie in one stripe. */
static int span_rw(const struct buddy_extent *x, unsigned int i,
		   unsigned int off, u8 *buf, unsigned int len, bool write,
		   struct buddy_io_acct *acct)
{
	unsigned int last = i + (off + len - 1) / BUDDY_ENTRY_BYTES, b;
	u8 tmp[BUDDY_ENTRY_BYTES] __uninitialized;	/* a whole entry fetched */
	struct span s __uninitialized;			/* every field set below */
	int ret = 0;

	s.b0 = i / 2;
	s.nbytes = last / 2 - s.b0 + 1;
	memset(s.meta, 0, sizeof(s.meta));	/* span_words() reads all */
	for (b = 0; b < s.nbytes; b++)	/* mostly 1 or 16 bytes */
		s.meta[b] = x->meta[s.b0 + b];
	memset(&s.n, 0, sizeof(s.n));

	while (len) {
		unsigned int n = len < BUDDY_ENTRY_BYTES - off ? len :
				 BUDDY_ENTRY_BYTES - off;
		unsigned int whole;

		if (n < BUDDY_ENTRY_BYTES) {
			/* part of an entry: through @tmp */
			ret = span_fetch(x, &s, i, tmp);
			if (ret)
				break;
			if (write) {
				memcpy(tmp + off, buf, n);
				span_store(x, &s, i, tmp);
			} else {
				memcpy(buf, tmp + off, n);
			}
			buf += n;
			len -= n;
			off = 0;
			i++;
			continue;
		}
		/* whole entries, straight from or to @buf */
		whole = len / BUDDY_ENTRY_BYTES;
		if (!write && x->target == BUDDY_TARGET_1X) {
			ret = span_read_plain(x, &s, i, whole, buf);
			if (ret)
				break;
		} else if (x->target == BUDDY_TARGET_1X) {
			span_write_plain(x, &s, i, whole, buf);
		} else if (!write) {
			ret = span_read_split(x, &s, i, whole, buf);
			if (ret)
				break;
		} else {
			unsigned int k;

			for (k = 0; k < whole; k++)
				span_store(x, &s, i + k,
					   buf + (size_t)k * BUDDY_ENTRY_BYTES);
		}
		buf += (size_t)whole * BUDDY_ENTRY_BYTES;
		len -= whole * BUDDY_ENTRY_BYTES;
		i += whole;
	}
	/* the entries done before an error count, and keep their codes */
	for (b = 0; write && b < s.nbytes; b++)
		x->meta[s.b0 + b] = s.meta[b];
	span_flush(x, &s, acct);
	return ret;
}

int buddy_stripe_rw(const struct buddy_extent *x, unsigned int i,
		    unsigned int off, u8 *buf, unsigned int len, bool write,
		    struct buddy_io_acct *acct)
{
	if (!write && !off && len == BUDDY_ENTRY_BYTES) {
		/* one whole entry read: no span to set up */
		unsigned int code = buddy_meta_get(x->meta, i);
		struct buddy_counters *c = &acct->c;
		int ret = fetch(x, i, code, buf);

		if (!ret)
			span_count(x, code, 1, &c->entry_reads,
				   &c->device_sectors_read,
				   &c->buddy_sectors_read, acct);
		return ret;
	}
	if (write && !off && len == BUDDY_ENTRY_BYTES) {
		/* one whole entry written: nothing to read, no span either */
		unsigned int old = buddy_meta_get(x->meta, i);
		unsigned int code = store(x, i, buf);
		struct buddy_counters *c = &acct->c;

		if (buddy_stored_bytes(x->target, old) <= x->target &&
		    buddy_stored_bytes(x->target, code) > x->target)
			c->overflows++;
		span_count(x, code, 1, &c->entry_writes,
			   &c->device_sectors_written,
			   &c->buddy_sectors_written, acct);
		acct->codes[code]++;
		if (old < BUDDY_CODE_NR)
			acct->codes[old]--;
		buddy_meta_set(x->meta, i, code);
		return 0;
	}
	while (len) {
		/* bytes to the end of entry @i's stripe */
		unsigned int room = (BUDDY_STRIPE_ENTRIES -
				     i % BUDDY_STRIPE_ENTRIES) *
				    BUDDY_ENTRY_BYTES - off;
		unsigned int n = len < room ? len : room;
		int ret = span_rw(x, i, off, buf, n, write, acct);

		if (ret)
			return ret;
		buf += n;
		len -= n;
		i += (off + n) / BUDDY_ENTRY_BYTES;
		off = (off + n) % BUDDY_ENTRY_BYTES;
	}
	return 0;
}

int buddy_stripe_read(const struct buddy_extent *x, unsigned int i, u8 *entry,
		      struct buddy_io_acct *acct)
{
	return buddy_stripe_rw(x, i, 0, entry, BUDDY_ENTRY_BYTES, false, acct);
}

void buddy_stripe_write(const struct buddy_extent *x, unsigned int i,
			const u8 *entry, struct buddy_io_acct *acct)
{
	/* a whole entry's write cannot fail: nothing is read */
	buddy_stripe_rw(x, i, 0, (u8 *)entry, BUDDY_ENTRY_BYTES, true, acct);
}

int buddy_stripe_update(const struct buddy_extent *x, unsigned int i,
			const u8 *src, unsigned int off, unsigned int len,
			struct buddy_io_acct *acct)
{
	return buddy_stripe_rw(x, i, off, (u8 *)src, len, true, acct);
}

int buddy_stripe_move(const struct buddy_extent *from, unsigned int i,
		      const struct buddy_extent *to, unsigned int j,
		      s64 *codes_delta)
{
	u8 entry[BUDDY_ENTRY_BYTES];
	unsigned int code;
	int ret;

	ret = fetch(from, i, buddy_meta_get(from->meta, i), entry);
	if (ret)
		return ret;
	code = store(to, j, entry);
	buddy_meta_set(to->meta, j, code);
	codes_delta[buddy_meta_get(from->meta, i)]--;
	codes_delta[code]++;
	return 0;
}

int buddy_extent_move(const struct buddy_extent *from,
		      const struct buddy_extent *to, unsigned int first,
		      unsigned int n, s64 *codes_delta)
{
	s64 d[BUDDY_CODE_SLOTS] = { 0 };
	unsigned int i;
	int ret;

	for (i = first; i < first + n; i++) {
		ret = buddy_stripe_move(from, i, to, i, d);
		if (ret)
			return ret;
	}
	for (i = 0; i < BUDDY_CODE_SLOTS; i++)
		codes_delta[i] += d[i];
	return 0;
}

void buddy_extent_codes(const struct buddy_extent *x, s64 *hist)
{
	unsigned int i;

	for (i = 0; i < x->nr_entries; i++)
		hist[buddy_meta_get(x->meta, i)]++;
}
