// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * none.c - the identity codec: the stream is the 128 bytes of the entry,
 * 1024 bits.  It gives the uncompressed baseline and exercises the storage
 * paths with no codec in the way.
 */
#include "core/codec.h"

static unsigned int none_compress(const u8 *src, u8 *dst)
{
	memcpy(dst, src, BUDDY_ENTRY_BYTES);
	return BUDDY_ENTRY_BYTES * 8;
}

static unsigned int none_size(const u8 *src)
{
	return BUDDY_ENTRY_BYTES * 8;
}

static int none_decompress(const u8 *src, unsigned int srclen, u8 *dst)
{
	if (srclen < BUDDY_ENTRY_BYTES)
		return -EINVAL;
	memcpy(dst, src, BUDDY_ENTRY_BYTES);
	return 0;
}

const struct buddy_codec buddy_codec_none = {
	.name		= "none",
	.id		= BUDDY_CODEC_NONE,
	.compress	= none_compress,
	.size		= none_size,
	.decompress	= none_decompress,
};
