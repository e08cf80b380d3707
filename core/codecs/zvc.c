// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * zvc.c - Zero-Value Compression (cDMA, CSWAP) of one 128-byte entry.
 *
 * The entry is 32 little-endian 32-bit words.  The stream is a 32-bit mask
 * stored as a little-endian u32 (bit i set when word i is non-zero; zero is
 * tested bitwise, so -0.0f is non-zero), followed by the non-zero words in
 * order, each as its 4 original bytes.  Length: 32 + 32 * nnz bits, from 32
 * (all zero) to 1056 (no zero word).  Every field is whole bytes, so the
 * stream is the same as writing each byte MSB-first with the bit writer.
 */
#include "core/codec.h"

/* Number of set bits of @v (no hweight32() in userspace compat). */
static inline unsigned int zvc_popcount(u32 v)
{
	v = v - ((v >> 1) & 0x55555555);
	v = (v & 0x33333333) + ((v >> 2) & 0x33333333);
	v = (v + (v >> 4)) & 0x0f0f0f0f;
	return (v * 0x01010101) >> 24;
}

/*
 * Branch-free: every word is stored at the output position, which only
 * advances past non-zero words.  The last store ends at byte 132 at most,
 * inside the BUDDY_STREAM_MAX bytes of @dst; bytes after the stream are
 * scratch.
 */
static unsigned int zvc_compress(const u8 *src, u8 *dst)
{
	unsigned int i, pos = 4;
	u32 mask = 0;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++) {
		u32 w = get_unaligned_le32(src + 4 * i);
		unsigned int nz = w != 0;

		put_unaligned_le32(w, dst + pos);
		mask |= nz << i;
		pos += 4 * nz;
	}
	put_unaligned_le32(mask, dst);
	return pos * 8;
}

static unsigned int zvc_size(const u8 *src)
{
	unsigned int i, nnz = 0;

	for (i = 0; i < BUDDY_ENTRY_WORDS; i++)
		nnz += get_unaligned_le32(src + 4 * i) != 0;
	return 32 + 32 * nnz;
}

static int zvc_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	const u8 *p = src + 4;
	u32 mask;

	if (srclen < 4)
		return -EINVAL;
	mask = get_unaligned_le32(src);
	/* Check the whole length first: @dst is untouched on error. */
	if ((srclen - 4) / 4 < zvc_popcount(mask))
		return -EINVAL;
	if (mask == 0xffffffff) {
		memcpy(dst, p, BUDDY_ENTRY_BYTES);
		return 0;
	}
	memset(dst, 0, BUDDY_ENTRY_BYTES);
	while (mask) {
		unsigned int i = __builtin_ctz(mask);

		memcpy(dst + 4 * i, p, 4);
		p += 4;
		mask &= mask - 1;
	}
	return 0;
}

const struct buddy_codec buddy_codec_zvc = {
	.name		= "zvc",
	.id		= BUDDY_CODEC_ZVC,
	.compress	= zvc_compress,
	.size		= zvc_size,
	.decompress	= zvc_decompress,
};
