// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_tcodec.c - libFuzzer target for the whole-buffer decoders of
 * lib/tcodec.h (every codec of the table, lossy ones included).
 *
 * Input: byte 0 picks the codec, bytes 1-2 the decoded length in 32-bit
 * words (little-endian, modulo 1024), the rest is the stream.  The stream
 * is decoded from an exact-size heap copy into an exact-size heap block
 * (ASan catches any access past either); the result must be 0 or -EINVAL.
 * A lossless codec's decoded buffer must then survive encode and decode.
 * Independently, the stream bytes taken as data (whole words) must
 * round-trip through every lossless codec.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tcodec.h"

static void fail(const struct tcodec *c, const char *what)
{
	fprintf(stderr, "fuzz_tcodec: %s: %s\n", c->name, what);
	abort();
}

/* Encode @len bytes of @in, decode, compare. */
static void roundtrip(const struct tcodec *c, const uint8_t *in, size_t len)
{
	size_t cap = c->bound(len);
	uint8_t *enc = malloc(cap ? cap : 1), *out = malloc(len ? len : 1);
	ssize_t n = tcodec_encode(c, in, len, enc, cap);

	if (n < 0 || (size_t)n > cap)
		fail(c, "encode within bound failed");
	if (tcodec_decode(c, enc, n, out, len) || memcmp(in, out, len))
		fail(c, "no round trip");
	free(enc);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tcodec *c;
	size_t dstlen, srclen;
	uint8_t *src, *dst;
	unsigned int i;
	int r;

	if (size < 3)
		return 0;
	c = tcodec_get(data[0] % tcodec_count());
	dstlen = 4 * ((data[1] | data[2] << 8) % 1024);
	srclen = size - 3;
	src = malloc(srclen ? srclen : 1);
	dst = malloc(dstlen ? dstlen : 1);
	memcpy(src, data + 3, srclen);
	r = tcodec_decode(c, src, srclen, dst, dstlen);
	if (r != 0 && r != -EINVAL)
		fail(c, "decode returned neither 0 nor -EINVAL");
	if (!r && tcodec_lossless(c))
		roundtrip(c, dst, dstlen);
	for (i = 0; i < tcodec_count(); i++)
		if (tcodec_lossless(tcodec_get(i)))
			roundtrip(tcodec_get(i), src, srclen & ~(size_t)3);
	free(src);
	free(dst);
	return 0;
}
