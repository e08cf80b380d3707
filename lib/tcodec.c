// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tcodec.c - the table of whole-buffer codecs (tcodec.h) and the ones that
 * are not Gist's (gist.c): cDMA's ZVC over core's codec, Buddy's entry
 * storage over buddy_entry_encode(), and the comparison codecs RLE, zlib
 * and LZ4.  zlib and LZ4 are the libraries, not a re-implementation.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <lz4.h>
#include <zlib.h>

#include "core/codec.h"
#include "tcodec.h"

extern const struct tcodec tcodec_binarize, tcodec_csr;
extern const struct tcodec tcodec_dpr16, tcodec_dpr10, tcodec_dpr8;

/* --- cDMA's ZVC: core's stream of every 32-word window, unquantised ---- */

/*
 * Each window's stream is self-delimiting: its mask (the first 4 bytes)
 * says how many words follow.  A last, short window is zero-padded to 128
 * bytes before compression; its decoded padding must be zero.
 */
static size_t zvc_bound(size_t len)
{
	return DIV_ROUND_UP(len, BUDDY_ENTRY_BYTES) * (4 + BUDDY_ENTRY_BYTES);
}

static ssize_t zvc_encode(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap)
{
	u8 win[BUDDY_ENTRY_BYTES], stream[BUDDY_STREAM_MAX];
	const u8 *s = src;
	u8 *d = dst;
	size_t off, out = 0;

	for (off = 0; off < len; off += BUDDY_ENTRY_BYTES) {
		size_t n = len - off < BUDDY_ENTRY_BYTES ? len - off : BUDDY_ENTRY_BYTES;
		const u8 *in = s + off;
		unsigned int bytes;

		if (n < BUDDY_ENTRY_BYTES) {
			memcpy(win, in, n);
			memset(win + n, 0, BUDDY_ENTRY_BYTES - n);
			in = win;
		}
		bytes = buddy_codec_zvc.compress(in, stream) / 8;
		if (cap - out < bytes)
			return -ENOSPC;
		memcpy(d + out, stream, bytes);
		out += bytes;
	}
	return out;
}

static int zvc_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	u8 win[BUDDY_ENTRY_BYTES];
	const u8 *s = src;
	u8 *d = dst;
	size_t off, in = 0;

	for (off = 0; off < dstlen; off += BUDDY_ENTRY_BYTES) {
		size_t n = dstlen - off < BUDDY_ENTRY_BYTES ? dstlen - off : BUDDY_ENTRY_BYTES;
		size_t bytes, k;

		if (srclen - in < 4)
			return -EINVAL;
		bytes = 4 + 4 * (size_t)__builtin_popcount(get_unaligned_le32(s + in));
		if (srclen - in < bytes ||
		    buddy_codec_zvc.decompress(s + in, bytes, win))
			return -EINVAL;
		for (k = n; k < BUDDY_ENTRY_BYTES; k++)
			if (win[k])
				return -EINVAL;
		memcpy(d + off, win, n);
		in += bytes;
	}
	return in == srclen ? 0 : -EINVAL;
}

static const struct tcodec tcodec_zvc = {
	.name	= "zvc",
	.bound	= zvc_bound,
	.encode	= zvc_encode,
	.decode	= zvc_decode,
};

/* --- Buddy's storage: quantised entries of a core codec ---------------- */

/*
 * One size-code byte per 128-byte entry, then each entry's
 * buddy_code_bytes(code) stored bytes: what the device keeps, laid flat.
 */
static size_t entry_bound(size_t len)
{
	size_t n = DIV_ROUND_UP(len, BUDDY_ENTRY_BYTES);

	return n + n * BUDDY_ENTRY_BYTES;
}

static ssize_t entry_encode(const struct tcodec *c, const void *src,
			    size_t len, void *dst, size_t cap)
{
	/* the implementation in force: the same stored bytes, faster */
	const struct buddy_codec *bc =
		buddy_codec_impl(c->priv, buddy_codec_impl_default());
	u8 win[BUDDY_ENTRY_BYTES], stored[BUDDY_STREAM_MAX];
	size_t nent = DIV_ROUND_UP(len, BUDDY_ENTRY_BYTES), i, out = nent;
	const u8 *s = src;
	u8 *d = dst;

	if (cap < nent)
		return -ENOSPC;
	for (i = 0; i < nent; i++) {
		size_t off = i * BUDDY_ENTRY_BYTES;
		size_t n = len - off < BUDDY_ENTRY_BYTES ? len - off : BUDDY_ENTRY_BYTES;
		const u8 *in = s + off;
		unsigned int code, bytes;

		if (n < BUDDY_ENTRY_BYTES) {
			memcpy(win, in, n);
			memset(win + n, 0, BUDDY_ENTRY_BYTES - n);
			in = win;
		}
		code = buddy_entry_encode(bc, in, stored);
		bytes = buddy_code_bytes(code);
		if (cap - out < bytes)
			return -ENOSPC;
		d[i] = (u8)code;
		memcpy(d + out, stored, bytes);
		out += bytes;
	}
	return out;
}

static int entry_decode(const struct tcodec *c, const void *src,
			size_t srclen, void *dst, size_t dstlen)
{
	const struct buddy_codec *bc =
		buddy_codec_impl(c->priv, buddy_codec_impl_default());
	size_t nent = DIV_ROUND_UP(dstlen, BUDDY_ENTRY_BYTES), i, in = nent;
	u8 win[BUDDY_ENTRY_BYTES];
	const u8 *s = src;
	u8 *d = dst;

	if (srclen < nent)
		return -EINVAL;
	for (i = 0; i < nent; i++) {
		size_t off = i * BUDDY_ENTRY_BYTES;
		size_t n = dstlen - off < BUDDY_ENTRY_BYTES ? dstlen - off : BUDDY_ENTRY_BYTES;
		unsigned int code = s[i], bytes, k;

		if (code >= BUDDY_CODE_NR)
			return -EINVAL;
		bytes = buddy_code_bytes(code);
		if (srclen - in < bytes ||
		    buddy_entry_decode(bc, code, s + in, win))
			return -EINVAL;
		for (k = n; k < BUDDY_ENTRY_BYTES; k++)
			if (win[k])
				return -EINVAL;
		memcpy(d + off, win, n);
		in += bytes;
	}
	return in == srclen ? 0 : -EINVAL;
}

#define ENTRY_TCODEC(cname, core)			\
	static const struct tcodec tcodec_entry_##cname = {	\
		.name	= "entry-" #cname,			\
		.priv	= &core,				\
		.bound	= entry_bound,				\
		.encode	= entry_encode,				\
		.decode	= entry_decode,				\
	}
ENTRY_TCODEC(bpc, buddy_codec_bpc);
ENTRY_TCODEC(zvc, buddy_codec_zvc);
ENTRY_TCODEC(bdi, buddy_codec_bdi);
ENTRY_TCODEC(fpc, buddy_codec_fpc);

/* --- RLE over 32-bit words (cDMA's comparison codec) ------------------ */

/*
 * A sequence of runs, each a little-endian u16 header: bit 15 set for a
 * repeat run (one word follows, standing for count copies of it), clear
 * for a literal run (count words follow); bits 0-14 are count - 1.
 */
#define RLE_MAX_RUN	32768U
#define RLE_REPEAT	0x8000U

static size_t rle_bound(size_t len)
{
	return 6 * (len / 4);
}

static ssize_t rle_emit(u8 *d, size_t cap, size_t out, unsigned int hdr,
			const u8 *words, size_t nbytes)
{
	if (cap - out < 2 + nbytes)
		return -ENOSPC;
	d[out] = (u8)hdr;
	d[out + 1] = (u8)(hdr >> 8);
	memcpy(d + out + 2, words, nbytes);
	return out + 2 + nbytes;
}

static ssize_t rle_encode(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap)
{
	const u8 *s = src;
	size_t n = len / 4, i = 0, lit = 0;
	ssize_t out = 0;

	if (len % 4)
		return -EINVAL;
	while (i < n) {
		u32 w = get_unaligned_le32(s + 4 * i);
		size_t r = 1;

		while (i + r < n && r < RLE_MAX_RUN &&
		       get_unaligned_le32(s + 4 * (i + r)) == w)
			r++;
		if (r < 2) {	/* extend the literal run */
			if (++lit == RLE_MAX_RUN) {
				out = rle_emit(dst, cap, out, lit - 1,
					       s + 4 * (i + 1 - lit), 4 * lit);
				if (out < 0)
					return out;
				lit = 0;
			}
			i++;
			continue;
		}
		if (lit) {
			out = rle_emit(dst, cap, out, lit - 1, s + 4 * (i - lit),
				       4 * lit);
			if (out < 0)
				return out;
			lit = 0;
		}
		out = rle_emit(dst, cap, out, RLE_REPEAT | (r - 1), s + 4 * i, 4);
		if (out < 0)
			return out;
		i += r;
	}
	if (lit)
		out = rle_emit(dst, cap, out, lit - 1, s + 4 * (n - lit), 4 * lit);
	return out;
}

static int rle_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	const u8 *s = src;
	u8 *d = dst;
	size_t in = 0, w = 0, n = dstlen / 4, k;

	if (dstlen % 4)
		return -EINVAL;
	while (in < srclen) {
		unsigned int hdr;
		size_t count;

		if (srclen - in < 2)
			return -EINVAL;
		hdr = s[in] | s[in + 1] << 8;
		count = (hdr & ~RLE_REPEAT) + 1;
		in += 2;
		if (count > n - w)
			return -EINVAL;
		if (hdr & RLE_REPEAT) {
			if (srclen - in < 4)
				return -EINVAL;
			for (k = 0; k < count; k++)
				memcpy(d + 4 * (w + k), s + in, 4);
			in += 4;
		} else {
			if ((srclen - in) / 4 < count)
				return -EINVAL;
			memcpy(d + 4 * w, s + in, 4 * count);
			in += 4 * count;
		}
		w += count;
	}
	return w == n ? 0 : -EINVAL;
}

static const struct tcodec tcodec_rle = {
	.name	= "rle",
	.flags	= TCODEC_WORDS,
	.bound	= rle_bound,
	.encode	= rle_encode,
	.decode	= rle_decode,
};

/* --- zlib (DEFLATE), cDMA's "ZL" ------------------------------------- */

#define TCODEC_ZLIB_LEVEL	6	/* zlib's default, as gzip uses */

static size_t zlib_bound(size_t len)
{
	return compressBound(len);
}

static ssize_t zlib_encode(const struct tcodec *c, const void *src,
			   size_t len, void *dst, size_t cap)
{
	uLongf dl = cap;

	if (len > ULONG_MAX / 2)
		return -EINVAL;
	switch (compress2(dst, &dl, src, len, TCODEC_ZLIB_LEVEL)) {
	case Z_OK:
		return dl;
	case Z_BUF_ERROR:
		return -ENOSPC;
	default:
		return -ENOMEM;
	}
}

static int zlib_decode(const struct tcodec *c, const void *src,
		       size_t srclen, void *dst, size_t dstlen)
{
	uLongf dl = dstlen;
	uLong sl = srclen;
	u8 dummy;

	/* zlib wants a buffer even for an empty output. */
	if (uncompress2(dstlen ? dst : &dummy, &dl, src, &sl) != Z_OK ||
	    dl != dstlen || sl != srclen)
		return -EINVAL;
	return 0;
}

static const struct tcodec tcodec_zlib = {
	.name	= "zlib",
	.bound	= zlib_bound,
	.encode	= zlib_encode,
	.decode	= zlib_decode,
};

/* --- LZ4 (CSWAP's fourth codec) ------------------------------------- */

static size_t lz4_bound(size_t len)
{
	return len > LZ4_MAX_INPUT_SIZE ? 0 : (size_t)LZ4_compressBound((int)len);
}

static ssize_t lz4_encode(const struct tcodec *c, const void *src,
			  size_t len, void *dst, size_t cap)
{
	int r;

	if (len > LZ4_MAX_INPUT_SIZE)
		return -EINVAL;
	r = LZ4_compress_default(src, dst, (int)len,
				 cap > INT_MAX ? INT_MAX : (int)cap);
	return r > 0 || len == 0 ? r : -ENOSPC;
}

static int lz4_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	if (srclen > INT_MAX || dstlen > LZ4_MAX_INPUT_SIZE)
		return -EINVAL;
	return LZ4_decompress_safe(src, dst, (int)srclen, (int)dstlen) ==
		(int)dstlen ? 0 : -EINVAL;
}

static const struct tcodec tcodec_lz4 = {
	.name	= "lz4",
	.bound	= lz4_bound,
	.encode	= lz4_encode,
	.decode	= lz4_decode,
};

/* --- the table -------------------------------------------------------- */

static const struct tcodec *const tcodecs[] = {
	&tcodec_zvc, &tcodec_rle, &tcodec_csr, &tcodec_lz4, &tcodec_zlib,
	&tcodec_entry_bpc, &tcodec_entry_zvc, &tcodec_entry_bdi,
	&tcodec_entry_fpc,
	&tcodec_binarize, &tcodec_dpr16, &tcodec_dpr10, &tcodec_dpr8,
};

unsigned int tcodec_count(void)
{
	return ARRAY_SIZE(tcodecs);
}

const struct tcodec *tcodec_get(unsigned int i)
{
	return i < ARRAY_SIZE(tcodecs) ? tcodecs[i] : NULL;
}

const struct tcodec *tcodec_find(const char *name, unsigned int allow)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcodecs); i++) {
		const struct tcodec *c = tcodecs[i];

		if (strcmp(c->name, name))
			continue;
		if (c->flags & (TCODEC_LOSSY | TCODEC_MASK) & ~allow) {
			errno = EPERM;
			return NULL;
		}
		return c;
	}
	errno = ENOENT;
	return NULL;
}
