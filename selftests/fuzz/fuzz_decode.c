// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_decode.c - libFuzzer target for the entry codecs.
 *
 * Build one target per codec with -DFUZZ_CODEC='"bdi"' (any name of
 * buddy_codecs[]); without FUZZ_CODEC every input goes to every codec.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *	-I. -DFUZZ_CODEC='"bpc"' \
 *	selftests/fuzz/fuzz_decode.c core/codec.c core/codecs/[a-z]*.c \
 *	-o build/fuzz/fuzz_decode_bpc
 *
 * Each input is used twice:
 *  1. as a stream: decompress() from an exact-size heap copy (ASan catches
 *     a read past it) into a 128-byte heap block (a write past it); the
 *     result must be 0 or -EINVAL, and an entry it decodes must survive
 *     encode then decode, through the codec and through the storage format;
 *  2. as an entry: its first 128 bytes (zero-padded) must round-trip, with
 *     size() equal to what compress() returns, and every truncation of the
 *     stream below its bit length must be rejected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"

static void fail(const struct buddy_codec *c, const char *what)
{
	fprintf(stderr, "fuzz_decode: %s: %s\n", c->name, what);
	abort();
}

static int decode_exact(const struct buddy_codec *c, const u8 *s,
			unsigned int len, u8 *dst)
{
	u8 *copy = malloc(len ? len : 1);
	int ret;

	if (len)
		memcpy(copy, s, len);
	ret = c->decompress(len ? copy : copy + 1, len, dst);
	free(copy);
	if (ret != 0 && ret != -EINVAL)
		fail(c, "decompress returned neither 0 nor -EINVAL");
	return ret;
}

/* @e must round-trip through the codec and through the storage format. */
static void roundtrip(const struct buddy_codec *c, const u8 *e, bool cuts)
{
	u8 s[BUDDY_STREAM_MAX], out[BUDDY_STREAM_MAX];
	u8 *dst = malloc(BUDDY_ENTRY_BYTES);
	unsigned int bits, len, code, n;

	bits = c->compress(e, s);
	if (bits == 0 || bits > 8 * BUDDY_STREAM_MAX)
		fail(c, "stream length out of range");
	if (c->size(e) != bits)
		fail(c, "size() != compress()");
	len = DIV_ROUND_UP(bits, 8);
	if (decode_exact(c, s, len, dst))
		fail(c, "own stream rejected");
	if (memcmp(dst, e, BUDDY_ENTRY_BYTES))
		fail(c, "round trip differs");
	if (cuts) {
		for (n = 0; n < len; n++)
			if (decode_exact(c, s, n, dst) != -EINVAL)
				fail(c, "truncated stream accepted");
	}

	code = buddy_entry_encode(c, e, out);
	if (code != buddy_entry_classify(c, e))
		fail(c, "classify != encode");
	if (buddy_entry_decode(c, code, out, dst))
		fail(c, "stored entry rejected");
	if (memcmp(dst, e, BUDDY_ENTRY_BYTES))
		fail(c, "stored entry differs");
	free(dst);
}

static void one_codec(const struct buddy_codec *c, const u8 *data,
		      size_t size)
{
	u8 *dst = malloc(BUDDY_ENTRY_BYTES), e[BUDDY_ENTRY_BYTES];
	unsigned int len = size > 4 * BUDDY_STREAM_MAX ? 4 * BUDDY_STREAM_MAX :
							 (unsigned int)size;

	/* 1. The input as a stream. */
	if (!decode_exact(c, data, len, dst))
		roundtrip(c, dst, false);
	free(dst);

	/* 2. The input as an entry. */
	memset(e, 0, sizeof(e));
	memcpy(e, data, size < sizeof(e) ? size : sizeof(e));
	roundtrip(c, e, true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef FUZZ_CODEC
	static const struct buddy_codec *c;

	if (!c) {
		c = buddy_codec_by_name(FUZZ_CODEC);
		if (!c) {
			fprintf(stderr, "fuzz_decode: no codec %s\n",
				FUZZ_CODEC);
			abort();
		}
	}
	one_codec(c, data, size);
#else
	unsigned int k;

	for (k = 0; buddy_codecs[k]; k++)
		one_codec(buddy_codecs[k], data, size);
#endif
	return 0;
}
