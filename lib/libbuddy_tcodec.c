// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libbuddy_tcodec.c - the whole-buffer codecs of tcodec.h (tcodec.c,
 * gist.c) through libbuddy's buddy_* interface, for programs that do not
 * link the tools' library: the Python package's DNN policies
 * reach ZVC, RLE, zlib, LZ4, CSR, Binarize and DPR here, so that no codec
 * exists a second time in Python.  Codecs are named by index, 0 <= i <
 * buddy_tcodec_count(); the table itself stays private to the library.
 */
#include <errno.h>

#include "libbuddy.h"
#include "tcodec.h"

/* Lossless codecs, and the mask and lossy ones only when asked for. */
#define BUDDY_TCODEC_ALLOW_ALL	(BUDDY_TCODEC_LOSSY | BUDDY_TCODEC_MASK)

_Static_assert(BUDDY_TCODEC_LOSSY == TCODEC_LOSSY, "flag values");
_Static_assert(BUDDY_TCODEC_MASK == TCODEC_MASK, "flag values");
_Static_assert(BUDDY_TCODEC_WORDS == TCODEC_WORDS, "flag values");

static const struct tcodec *get(int idx)
{
	if (idx < 0 || (unsigned int)idx >= tcodec_count())
		return NULL;
	return tcodec_get(idx);
}

int buddy_tcodec_count(void)
{
	return tcodec_count();
}

int buddy_tcodec_find(const char *name, unsigned int allow)
{
	const struct tcodec *c;
	unsigned int i;

	if (!name || allow & ~BUDDY_TCODEC_ALLOW_ALL)
		return -EINVAL;
	c = tcodec_find(name, allow);
	if (!c)
		return -errno;
	for (i = 0; i < tcodec_count(); i++)
		if (tcodec_get(i) == c)
			return i;
	return -ENOENT;
}

const char *buddy_tcodec_name(int idx)
{
	const struct tcodec *c = get(idx);

	return c ? c->name : NULL;
}

int buddy_tcodec_flags(int idx)
{
	const struct tcodec *c = get(idx);

	return c ? (int)c->flags : -EINVAL;
}

size_t buddy_tcodec_bound(int idx, size_t len)
{
	const struct tcodec *c = get(idx);

	return c ? c->bound(len) : 0;
}

ssize_t buddy_tcodec_encode(int idx, const void *src, size_t len, void *dst,
			    size_t cap)
{
	const struct tcodec *c = get(idx);

	if (!c || (len && !src) || (cap && !dst))
		return -EINVAL;
	return tcodec_encode(c, src, len, dst, cap);
}

int buddy_tcodec_decode(int idx, const void *src, size_t srclen, void *dst,
			size_t dstlen)
{
	const struct tcodec *c = get(idx);

	if (!c || (srclen && !src) || (dstlen && !dst))
		return -EINVAL;
	return tcodec_decode(c, src, srclen, dst, dstlen);
}
