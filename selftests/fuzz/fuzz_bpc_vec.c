// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_bpc_vec.c - libFuzzer target: each implementation of BPC (the
 * scalar codec and, where the CPU has them, the vector ones) against the
 * reference (selftests/core/bpc_ref.h) on arbitrary input.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *	selftests/fuzz/fuzz_bpc_vec.c core/codec.c core/codecs/[a-z]*.c \
 *	-o build/fuzz/fuzz_bpc_vec
 *
 * Each input is used twice, for each implementation:
 *  1. as a stream: both decompress() from an exact-size heap copy (ASan
 *     catches a read past it) into 128-byte heap blocks; they must return
 *     the same, 0 or -EINVAL, and the same entry when 0;
 *  2. as an entry (its first 128 bytes, zero-padded): compress() gives the
 *     same length and stream, size() the same length, each decoder
 *     decodes the other's stream, and buddy_entry_encode/classify/decode
 *     agree, stored bytes included;
 *  3. as up to 16 stored entries, each a size code byte (mostly the
 *     compressed ones, now and then RAW, zero or an invalid code) and its
 *     stored bytes, each in an exact-size heap block:
 *     buddy_entries_decode() says -EINVAL exactly where the reference's
 *     buddy_entry_decode() rejects one of them, and every entry the
 *     reference decodes comes out the same.
 * Where the CPU lacks a vector implementation's instructions it skips
 * that one and says so once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "selftests/core/bpc_ref.h"

static const struct buddy_codec *ref = &bpc_ref_codec, *vec;

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_bpc_vec: the reference and %s differ: %s\n",
		buddy_impl_name(vec->impl), what);
	abort();
}

/* Both decoders on the @len bytes at @s; returns their verdict. */
static int decode_both(const u8 *s, unsigned int len, u8 *out)
{
	u8 *copy = malloc(len ? len : 1);
	u8 *d1 = malloc(BUDDY_ENTRY_BYTES), *d2 = malloc(BUDDY_ENTRY_BYTES);
	int r1, r2;

	if (len)
		memcpy(copy, s, len);
	memset(d1, 0x5a, BUDDY_ENTRY_BYTES);
	memset(d2, 0xa5, BUDDY_ENTRY_BYTES);
	r1 = ref->decompress(len ? copy : copy + 1, len, d1);
	r2 = vec->decompress(len ? copy : copy + 1, len, d2);
	if (r1 != r2)
		fail("decompress() verdict");
	if (r1 != 0 && r1 != -EINVAL)
		fail("decompress() returned neither 0 nor -EINVAL");
	if (!r1 && memcmp(d1, d2, BUDDY_ENTRY_BYTES))
		fail("decompress() entry");
	if (out)
		memcpy(out, d1, BUDDY_ENTRY_BYTES);
	free(copy);
	free(d1);
	free(d2);
	return r1;
}

static void entry_both(const u8 *e)
{
	u8 s1[BUDDY_STREAM_MAX], s2[BUDDY_STREAM_MAX], d[BUDDY_ENTRY_BYTES];
	u8 o1[BUDDY_STREAM_MAX], o2[BUDDY_STREAM_MAX];
	unsigned int b1, b2, c1, c2;

	b1 = ref->compress(e, s1);
	b2 = vec->compress(e, s2);
	if (b1 != b2 || memcmp(s1, s2, DIV_ROUND_UP(b1, 8)))
		fail("compress()");
	if (vec->size(e) != b1)
		fail("size()");
	if (decode_both(s2, DIV_ROUND_UP(b1, 8), d) ||
	    memcmp(d, e, BUDDY_ENTRY_BYTES))
		fail("round trip");

	c1 = buddy_entry_encode(ref, e, o1);
	c2 = buddy_entry_encode(vec, e, o2);
	if (c1 != c2 || memcmp(o1, o2, buddy_code_bytes(c1)))
		fail("buddy_entry_encode()");
	if (buddy_entry_classify(vec, e) != c1)
		fail("buddy_entry_classify()");
	if (buddy_entry_decode(vec, c1, o1, d) ||
	    memcmp(d, e, BUDDY_ENTRY_BYTES))
		fail("buddy_entry_decode()");
}

#define BATCH	16

static void batch_both(const u8 *data, unsigned int len)
{
	unsigned int codes[BATCH], n, at = 0, k, bytes;
	u8 *stored[BATCH], *want = malloc(BATCH * BUDDY_ENTRY_BYTES);
	u8 *got = malloc(BATCH * BUDDY_ENTRY_BYTES);
	bool ok[BATCH];
	int ret = 0;

	for (n = 0; n < BATCH && at < len; n++) {
		u8 b = data[at++];

		codes[n] = b < 224 ? BUDDY_CODE_C8 + (b & 3) : b % 8;
		bytes = buddy_code_bytes(codes[n]);
		stored[n] = malloc(bytes ? bytes : 1);
		for (k = 0; k < bytes; k++)
			stored[n][k] = at < len ? data[at++] : 0;
	}
	for (k = 0; k < n; k++) {
		ok[k] = !buddy_entry_decode(ref, codes[k], stored[k],
					    want + k * BUDDY_ENTRY_BYTES);
		if (!ok[k])
			ret = -EINVAL;
	}
	memset(got, 0x5a, BATCH * BUDDY_ENTRY_BYTES);
	if (buddy_entries_decode(vec, codes, (const u8 *const *)stored, got,
				 n) != ret)
		fail("buddy_entries_decode() verdict");
	for (k = 0; k < n; k++) {
		if (ok[k] && memcmp(want + k * BUDDY_ENTRY_BYTES,
				    got + k * BUDDY_ENTRY_BYTES,
				    BUDDY_ENTRY_BYTES))
			fail("buddy_entries_decode() entry");
		free(stored[k]);
	}
	free(want);
	free(got);
}

/* The input as a stream, then as an entry, through @c and the reference. */
static void check(const struct buddy_codec *c, const uint8_t *data,
		  unsigned int len)
{
	u8 e[BUDDY_ENTRY_BYTES];

	vec = c;
	/* 1. The input as a stream: whatever it decodes to round-trips. */
	if (!decode_both(data, len, e))
		entry_both(e);

	/* 2. The input as an entry. */
	memset(e, 0, sizeof(e));
	memcpy(e, data, len < sizeof(e) ? len : sizeof(e));
	entry_both(e);

	/* 3. The input as stored entries. */
	batch_both(data, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int len = size > BATCH * BUDDY_STREAM_MAX ?
			   BATCH * BUDDY_STREAM_MAX : (unsigned int)size;
	static bool told[BUDDY_IMPL_NR];
	unsigned int impl;

	check(&buddy_codec_bpc, data, len);
	for (impl = BUDDY_IMPL_SCALAR + 1; impl < BUDDY_IMPL_NR; impl++) {
		if (buddy_impl_usable(impl)) {
			check(buddy_codec_impl(&buddy_codec_bpc, impl), data,
			      len);
			continue;
		}
		if (!told[impl])
			fprintf(stderr, "fuzz_bpc_vec: no %s on this CPU: not checked\n",
				buddy_impl_name(impl));
		told[impl] = true;
	}
	return 0;
}
