// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gist.c - Gist's three encodings of saved activations (Jain et al., ISCA
 * 2018, Section IV) as whole-buffer codecs of tcodec.h: Binarize, sparse
 * storage (CSR with narrow column indices) and Delayed Precision Reduction.
 *
 * Why userspace only (lib/, not core/): the kernel stores 128-byte
 * entries, each coded by itself.  Binarize and DPR do not give the input
 * back, so they can never serve the kernel's lossless path.  CSR is lossless
 * but its unit is a row of 256 words (1 KiB, eight entries) with a row
 * table in front; cut down to one 32-word entry it becomes ZVC with a byte
 * per non-zero where ZVC spends a bit, which ZVC beats for every entry with
 * more than 4 non-zero words.  The kernel has nothing to gain from it.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/compat.h"
#include "tcodec.h"

/* --- Binarize --------------------------------------------------------- */

/*
 * Bit i (LSB first within byte i / 8) is set when float i is > 0.  NaN and
 * -0.0 give 0, as they fail ReLU's (y > 0) test.  Decoding writes 1.0f or
 * 0.0f: (decoded > 0) == (input > 0) for every element, which is all that
 * ReLU's backward (dx = dy * (y > 0)) reads.
 */
static size_t bin_bound(size_t len)
{
	return DIV_ROUND_UP(len / 4, 8);
}

static ssize_t bin_encode(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap)
{
	const u8 *s = src;
	u8 *d = dst;
	size_t n = len / 4, i;

	if (len % 4)
		return -EINVAL;
	if (cap < bin_bound(len))
		return -ENOSPC;
	memset(d, 0, bin_bound(len));
	for (i = 0; i < n; i++) {
		float x;

		memcpy(&x, s + 4 * i, 4);
		d[i / 8] |= (u8)((x > 0.0f) << (i % 8));
	}
	return bin_bound(len);
}

static int bin_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	const u8 *s = src;
	u8 *d = dst;
	size_t n = dstlen / 4, i;

	if (dstlen % 4 || srclen != bin_bound(dstlen))
		return -EINVAL;
	/* Bits past the last element must be clear. */
	if (n % 8 && (s[n / 8] >> (n % 8)))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		float x = (s[i / 8] >> (i % 8)) & 1 ? 1.0f : 0.0f;

		memcpy(d + 4 * i, &x, 4);
	}
	return 0;
}

const struct tcodec tcodec_binarize = {
	.name	= "binarize",
	.flags	= TCODEC_MASK | TCODEC_WORDS,
	.bound	= bin_bound,
	.encode	= bin_encode,
	.decode	= bin_decode,
};

/* --- Sparse storage: CSR with narrow (one-byte) column indices ---------- */

/*
 * The buffer is n 32-bit words seen as rows of CSR_COLS columns (the last
 * row may be shorter), so a column index fits one byte.  Layout:
 *
 *   u16 nnz[nrows]   little-endian non-zero count of each row (0..256)
 *   u8  col[total]   column of every non-zero word, row by row, increasing
 *   u32 val[total]   the non-zero words, in the same order
 *
 * Zero is tested bitwise (so -0.0f is kept), as ZVC does.  Cost: 5 bytes a
 * non-zero word plus 2 bytes a row, against 4 a word: it pays above about
 * 20% zeros, the figure Gist gives for its Narrow Value Optimization.
 */
#define CSR_COLS	256

static size_t csr_rows(size_t n)
{
	return DIV_ROUND_UP(n, CSR_COLS);
}

static size_t csr_bound(size_t len)
{
	return 2 * csr_rows(len / 4) + 5 * (len / 4);
}

static ssize_t csr_encode(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap)
{
	const u8 *s = src;
	u8 *d = dst;
	size_t n = len / 4, rows = csr_rows(n), total = 0, r, i;
	u8 *col;
	u8 *val;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < n; i++)
		total += get_unaligned_le32(s + 4 * i) != 0;
	if (cap < 2 * rows + 5 * total)
		return -ENOSPC;
	col = d + 2 * rows;
	val = col + total;
	for (r = 0; r < rows; r++) {
		size_t end = r * CSR_COLS + CSR_COLS < n ? r * CSR_COLS + CSR_COLS : n;
		unsigned int nnz = 0;

		for (i = r * CSR_COLS; i < end; i++) {
			u32 w = get_unaligned_le32(s + 4 * i);

			if (!w)
				continue;
			*col++ = (u8)(i - r * CSR_COLS);
			put_unaligned_le32(w, val);
			val += 4;
			nnz++;
		}
		d[2 * r] = (u8)nnz;
		d[2 * r + 1] = (u8)(nnz >> 8);
	}
	return 2 * rows + 5 * total;
}

static int csr_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	const u8 *s = src, *col, *val;
	u8 *d = dst;
	size_t n = dstlen / 4, rows = csr_rows(n), total = 0, r;

	if (dstlen % 4 || srclen < 2 * rows)
		return -EINVAL;
	for (r = 0; r < rows; r++) {
		size_t width = n - r * CSR_COLS < CSR_COLS ? n - r * CSR_COLS : CSR_COLS;
		unsigned int nnz = s[2 * r] | s[2 * r + 1] << 8;

		if (nnz > width)
			return -EINVAL;
		total += nnz;
	}
	if (srclen != 2 * rows + 5 * total)
		return -EINVAL;
	memset(d, 0, dstlen);
	col = s + 2 * rows;
	val = col + total;
	for (r = 0; r < rows; r++) {
		size_t width = n - r * CSR_COLS < CSR_COLS ? n - r * CSR_COLS : CSR_COLS;
		unsigned int nnz = s[2 * r] | s[2 * r + 1] << 8, k;
		int prev = -1;

		for (k = 0; k < nnz; k++, col++, val += 4) {
			/* Columns strictly increase: no word written twice. */
			if (*col <= prev || *col >= width)
				return -EINVAL;
			/* A stored zero is not canonical: refuse it. */
			if (!get_unaligned_le32(val))
				return -EINVAL;
			prev = *col;
			memcpy(d + 4 * (r * CSR_COLS + *col), val, 4);
		}
	}
	return 0;
}

const struct tcodec tcodec_csr = {
	.name	= "csr",
	.flags	= TCODEC_WORDS,
	.bound	= csr_bound,
	.encode	= csr_encode,
	.decode	= csr_decode,
};

/* --- Delayed Precision Reduction --------------------------------------- */

struct dpr_fmt {
	unsigned int bits, ebits, mbits, per_word;
};

static const struct dpr_fmt dpr_fmts[] = {
	{ 16, 5, 10, 2 },	/* IEEE half, without subnormals */
	{ 10, 5, 4, 3 },	/* three in a word, top 2 bits unused */
	{ 8, 4, 3, 4 },
};

static const struct dpr_fmt *dpr_fmt(unsigned int bits)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dpr_fmts); i++)
		if (dpr_fmts[i].bits == bits)
			return &dpr_fmts[i];
	return NULL;
}

static unsigned int dpr_enc(const struct dpr_fmt *f, float x)
{
	unsigned int emax = (1U << f->ebits) - 1, bias = (1U << (f->ebits - 1)) - 1;
	unsigned int mmask = (1U << f->mbits) - 1, shift = 23 - f->mbits;
	u32 b, man, full;
	unsigned int sign;
	int exp, e;

	memcpy(&b, &x, 4);
	sign = (b >> 31) << (f->ebits + f->mbits);
	exp = (b >> 23) & 0xff;
	man = b & 0x7fffff;
	if (exp == 0xff)	/* inf, or NaN (kept quiet) */
		return sign | emax << f->mbits | (man ? 1U << (f->mbits - 1) : 0);
	if (exp == 0)		/* zero or float32 subnormal */
		return sign;
	/* Round the 24-bit significand to 1 + mbits bits, ties to even. */
	full = (1U << 23) | man;
	full += (1U << (shift - 1)) - 1 + ((full >> shift) & 1);
	e = exp - 127;
	if (full >> 24) {
		full >>= 1;
		e++;
	}
	e += bias;
	if (e >= (int)emax)	/* clamp to the largest finite value */
		return sign | (emax - 1) << f->mbits | mmask;
	if (e <= 0)		/* below the smallest normal 2^(1 - bias) */
		return fabsf(x) >= ldexpf(1.0f, -(int)bias) ?
			sign | 1U << f->mbits : sign;
	return sign | (unsigned int)e << f->mbits | ((full >> shift) & mmask);
}

static float dpr_dec(const struct dpr_fmt *f, unsigned int code)
{
	unsigned int emax = (1U << f->ebits) - 1, bias = (1U << (f->ebits - 1)) - 1;
	unsigned int mmask = (1U << f->mbits) - 1;
	unsigned int e = (code >> f->mbits) & emax, m = code & mmask;
	u32 b = (u32)((code >> (f->ebits + f->mbits)) & 1) << 31;
	float x;

	if (e == emax)
		b |= 0xffU << 23 | (m ? 1U << 22 : 0);
	else if (e)
		b |= (e - bias + 127) << 23 | m << (23 - f->mbits);
	memcpy(&x, &b, 4);
	return x;
}

unsigned int tcodec_dpr_from_f32(float x, unsigned int bits)
{
	const struct dpr_fmt *f = dpr_fmt(bits);

	return f ? dpr_enc(f, x) : 0;
}

float tcodec_dpr_to_f32(unsigned int code, unsigned int bits)
{
	const struct dpr_fmt *f = dpr_fmt(bits);

	return f ? dpr_dec(f, code) : NAN;
}

static size_t dpr_words(const struct dpr_fmt *f, size_t len)
{
	return DIV_ROUND_UP(len / 4, f->per_word);
}

static size_t dpr16_bound(size_t len) { return 4 * dpr_words(&dpr_fmts[0], len); }
static size_t dpr10_bound(size_t len) { return 4 * dpr_words(&dpr_fmts[1], len); }
static size_t dpr8_bound(size_t len) { return 4 * dpr_words(&dpr_fmts[2], len); }

/* Value k of a word at bits k * f->bits, little-endian words. */
static ssize_t dpr_encode(const struct tcodec *c, const void *src, size_t len,
			  void *dst, size_t cap)
{
	const struct dpr_fmt *f = c->priv;
	const u8 *s = src;
	u8 *d = dst;
	size_t n = len / 4, words = dpr_words(f, len), w, i;

	if (len % 4)
		return -EINVAL;
	if (cap < 4 * words)
		return -ENOSPC;
	for (w = 0; w < words; w++) {
		u32 v = 0;
		unsigned int k;

		for (k = 0; k < f->per_word; k++) {
			float x;

			i = w * f->per_word + k;
			if (i >= n)
				break;
			memcpy(&x, s + 4 * i, 4);
			v |= (u32)dpr_enc(f, x) << (k * f->bits);
		}
		put_unaligned_le32(v, d + 4 * w);
	}
	return 4 * words;
}

static int dpr_decode(const struct tcodec *c, const void *src, size_t srclen,
		      void *dst, size_t dstlen)
{
	const struct dpr_fmt *f = c->priv;
	const u8 *s = src;
	u8 *d = dst;
	size_t n = dstlen / 4, words = dpr_words(f, dstlen), w, i;
	u32 vmask = (1U << f->bits) - 1;

	if (dstlen % 4 || srclen != 4 * words)
		return -EINVAL;
	for (w = 0; w < words; w++) {
		u32 v = get_unaligned_le32(s + 4 * w);
		unsigned int k, used = 0;

		for (k = 0; k < f->per_word && w * f->per_word + k < n; k++)
			used += f->bits;
		/* Unused bits (FP10's top two, a short last word) are zero. */
		if (used < 32 && v >> used)
			return -EINVAL;
		for (k = 0; k * f->bits < used; k++) {
			float x = dpr_dec(f, (v >> (k * f->bits)) & vmask);

			i = w * f->per_word + k;
			memcpy(d + 4 * i, &x, 4);
		}
	}
	return 0;
}

const struct tcodec tcodec_dpr16 = {
	.name	= "dpr16",
	.flags	= TCODEC_LOSSY | TCODEC_WORDS,
	.priv	= &dpr_fmts[0],
	.bound	= dpr16_bound,
	.encode	= dpr_encode,
	.decode	= dpr_decode,
};

const struct tcodec tcodec_dpr10 = {
	.name	= "dpr10",
	.flags	= TCODEC_LOSSY | TCODEC_WORDS,
	.priv	= &dpr_fmts[1],
	.bound	= dpr10_bound,
	.encode	= dpr_encode,
	.decode	= dpr_decode,
};

const struct tcodec tcodec_dpr8 = {
	.name	= "dpr8",
	.flags	= TCODEC_LOSSY | TCODEC_WORDS,
	.priv	= &dpr_fmts[2],
	.bound	= dpr8_bound,
	.encode	= dpr_encode,
	.decode	= dpr_decode,
};
