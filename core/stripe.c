// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Sector striping of compressed entries between the device pool and the
 * buddy carve-out, with the paper's per-entry metadata and access counters.
 * See stripe.h for the layout.
 */
#include "stripe.h"

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

/* Count one entry access that moved @stored bytes. */
static void account(const struct buddy_extent *x, unsigned int stored,
		    bool write, struct buddy_io_acct *acct)
{
	unsigned int dev = stored < x->target ? stored : x->target;
	unsigned int bud = stored - dev;

	if (write) {
		acct->c.entry_writes++;
		acct->c.device_sectors_written += SECTORS(dev);
		acct->c.buddy_sectors_written += SECTORS(bud);
	} else {
		acct->c.entry_reads++;
		acct->c.device_sectors_read += SECTORS(dev);
		acct->c.buddy_sectors_read += SECTORS(bud);
	}
	if (bud)
		acct->c.buddy_accesses++;
}

/* Fetch the stored bytes of entry @i and decode them; no counting. */
static int fetch(const struct buddy_extent *x, unsigned int i,
		 unsigned int code, u8 *entry)
{
	unsigned int stored = buddy_stored_bytes(x->target, code);
	u8 buf[BUDDY_STREAM_MAX];

	if (code >= BUDDY_CODE_NR)
		return -EIO;
	if (x->target == BUDDY_TARGET_1X) {
		if (stored)
			memcpy(entry, dev_slot(x, i), BUDDY_ENTRY_BYTES);
		else
			memset(entry, 0, BUDDY_ENTRY_BYTES);
		return 0;
	}
	if (stored <= x->target)	/* all in device memory: decode in place */
		return buddy_entry_decode(x->codec, code, dev_slot(x, i),
					  entry) ? -EIO : 0;
	memcpy(buf, dev_slot(x, i), x->target);
	memcpy(buf + x->target, bud_slot(x, i), stored - x->target);
	return buddy_entry_decode(x->codec, code, buf, entry) ? -EIO : 0;
}

int buddy_stripe_read(const struct buddy_extent *x, unsigned int i, u8 *entry,
		      struct buddy_io_acct *acct)
{
	unsigned int code = buddy_meta_get(x->meta, i);
	int ret = fetch(x, i, code, entry);

	if (!ret)
		account(x, buddy_stored_bytes(x->target, code), false, acct);
	return ret;
}

/* Store @entry as entry @i; returns the new code and the old one in *old. */
static unsigned int store(const struct buddy_extent *x, unsigned int i,
			  const u8 *entry, unsigned int *old)
{
	u8 buf[BUDDY_STREAM_MAX];
	unsigned int code, stored;

	*old = buddy_meta_get(x->meta, i);
	if (x->target == BUDDY_TARGET_1X) {
		code = buddy_entry_classify(x->codec, entry);
		if (code != BUDDY_CODE_ZERO)
			memcpy(dev_slot(x, i), entry, BUDDY_ENTRY_BYTES);
	} else {
		code = buddy_entry_encode(x->codec, entry, buf);
		stored = buddy_code_bytes(code);
		memcpy(dev_slot(x, i), buf,
		       stored < x->target ? stored : x->target);
		if (stored > x->target)
			memcpy(bud_slot(x, i), buf + x->target,
			       stored - x->target);
	}
	buddy_meta_set(x->meta, i, code);
	return code;
}

void buddy_stripe_write(const struct buddy_extent *x, unsigned int i,
			const u8 *entry, struct buddy_io_acct *acct)
{
	unsigned int old, code = store(x, i, entry, &old);
	unsigned int was = buddy_stored_bytes(x->target, old);
	unsigned int now = buddy_stored_bytes(x->target, code);

	account(x, now, true, acct);
	if (was <= x->target && now > x->target)
		acct->c.overflows++;
	if (old < BUDDY_CODE_NR)
		acct->codes[old]--;
	acct->codes[code]++;
}

int buddy_stripe_update(const struct buddy_extent *x, unsigned int i,
			const u8 *src, unsigned int off, unsigned int len,
			struct buddy_io_acct *acct)
{
	u8 entry[BUDDY_ENTRY_BYTES];
	int ret;

	if (off == 0 && len == BUDDY_ENTRY_BYTES) {
		buddy_stripe_write(x, i, src, acct);
		return 0;
	}
	ret = buddy_stripe_read(x, i, entry, acct);
	if (ret)
		return ret;
	memcpy(entry + off, src, len);
	buddy_stripe_write(x, i, entry, acct);
	return 0;
}

int buddy_stripe_move(const struct buddy_extent *from, unsigned int i,
		      const struct buddy_extent *to, unsigned int j,
		      s64 *codes_delta)
{
	u8 entry[BUDDY_ENTRY_BYTES];
	unsigned int old, code;
	int ret;

	ret = fetch(from, i, buddy_meta_get(from->meta, i), entry);
	if (ret)
		return ret;
	code = store(to, j, entry, &old);
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
