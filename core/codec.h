/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * codec.h - entry codecs and the 4-bit size code.
 *
 * A codec compresses one 128-byte memory entry into a bit stream.  Each codec
 * is one file under core/codecs/ exporting one const struct buddy_codec, and
 * one line in the table in core/codec.c (the zram backend pattern).
 *
 * The size code (BUDDY_CODE_*, defined in uapi/linux/buddy.h because GET_MAP
 * returns it) is derived from a stream length by buddy_code_of_bits(); all-zero
 * entries are BUDDY_CODE_ZERO whatever the codec.
 *
 * A codec may have more than one implementation of its arithmetic
 * (BUDDY_IMPL_*): the scalar one is the reference, in the table; a vector
 * one computes the same streams, sizes and entries bit for bit, and is
 * handed out by buddy_codec_impl() where the CPU runs it.
 */
#ifndef BUDDY_CORE_CODEC_H
#define BUDDY_CORE_CODEC_H

#include "core/compat.h"
#include "uapi/linux/buddy.h"

#define BUDDY_ENTRY_BYTES	128
#define BUDDY_ENTRY_WORDS	32
/* Room for the longest stream of any codec (FPC: 32 * 35 bits = 140 B). */
#define BUDDY_STREAM_MAX	144

/*
 * Implementations of the codecs' arithmetic: general-purpose registers
 * (every CPU; the reference), 256-bit vectors (x86-64 with AVX2, BMI1/2,
 * LZCNT and POPCNT), or those and GFNI, whose GF2P8AFFINEQB transposes
 * the 8x8 bit blocks of BPC's bit planes in one instruction (Ice Lake,
 * Zen 4 and later).  The vector code is built where the compiler has what
 * it needs (x86-64; GCC 12 or clang); a higher number is faster.
 */
#define BUDDY_IMPL_SCALAR	0
#define BUDDY_IMPL_AVX2		1
#define BUDDY_IMPL_GFNI		2
#define BUDDY_IMPL_NR		3

#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
#define BUDDY_HAVE_AVX2		1
#endif

/**
 * struct buddy_codec - one entry codec.
 * @name:	name shown to users ("bpc", "zvc", ...).
 * @id:		BUDDY_CODEC_* value of the ABI.
 * @impl:	BUDDY_IMPL_* of this implementation.
 * @compress:	write the stream of the 128 bytes at @src into @dst (which
 *		holds BUDDY_STREAM_MAX bytes) and return its length in bits.
 *		Bits are packed from bit 7 down, byte 0 first.
 * @size:	return the length in bits that @compress would write, without
 *		writing anything (the size-only path).
 * @decompress:	decode the stream in the @srclen bytes at @src into the 128
 *		bytes at @dst.  Returns 0, or -EINVAL when the stream is
 *		malformed or needs more than @srclen bytes; it never reads past
 *		@srclen bytes nor writes past 128 bytes of @dst.
 * @encode:	optional: buddy_entry_encode() for this codec in one call
 *		(a vector implementation tests for zero, sizes and copies
 *		in its registers, and writes no stream for a RAW entry).
 * @classify:	optional: buddy_entry_classify() in one call.
 * @decode:	optional: buddy_entry_decode() in one call.
 * @decode_n:	optional: buddy_entries_decode() in one call (the vector
 *		codec decodes several streams side by side).
 */
struct buddy_codec {
	const char *name;
	unsigned int id;
	unsigned int impl;
	unsigned int (*compress)(const u8 *src, u8 *dst);
	unsigned int (*size)(const u8 *src);
	int (*decompress)(const u8 *src, unsigned int srclen, u8 *dst);
	unsigned int (*encode)(const u8 *entry, u8 *out);
	unsigned int (*classify)(const u8 *entry);
	int (*decode)(unsigned int code, const u8 *stored, u8 *entry);
	int (*decode_n)(const unsigned int *codes, const u8 *const *stored,
			u8 *entries, unsigned int n);
};

extern const struct buddy_codec buddy_codec_bpc;
extern const struct buddy_codec buddy_codec_zvc;
extern const struct buddy_codec buddy_codec_bdi;
extern const struct buddy_codec buddy_codec_fpc;
extern const struct buddy_codec buddy_codec_none;
#ifdef BUDDY_HAVE_AVX2
extern const struct buddy_codec buddy_codec_bpc_avx2;
extern const struct buddy_codec buddy_codec_bpc_gfni;
void buddy_bpc_avx2_init(void);
#endif

/*
 * Set up the codecs' tables: once, before any vector codec runs.  In
 * userspace it runs when the program loads; the module calls it first.
 */
void buddy_codec_init(void);

/* NULL-terminated table of every codec (scalar), in BUDDY_CODEC_* order. */
extern const struct buddy_codec *const buddy_codecs[];

/*
 * A codec by its ABI value or its name, in the implementation
 * buddy_codec_impl_default() says: in userspace the best this CPU runs
 * (or what BUDDY_CODEC_IMPL=scalar|avx2 in the environment asks for),
 * chosen once when the program loads; in the kernel the scalar one, the
 * module switching to a vector one inside kernel_fpu_begin()
 * (kmod/codec_fpu.c).
 */
const struct buddy_codec *buddy_codec_by_id(unsigned int id);
const struct buddy_codec *buddy_codec_by_name(const char *name);

/* "scalar", "avx2", "gfni"; NULL past BUDDY_IMPL_NR. */
const char *buddy_impl_name(unsigned int impl);
/* BUDDY_IMPL_* of a name of buddy_impl_name(), or -EINVAL. */
int buddy_impl_by_name(const char *name);
/* This CPU (and this build) runs implementation @impl. */
bool buddy_impl_usable(unsigned int impl);
/* The fastest implementation buddy_impl_usable() allows. */
unsigned int buddy_impl_best(void);
unsigned int buddy_codec_impl_default(void);
/*
 * Codec @c (any implementation of it) in implementation @impl: its vector
 * form if it has one and @impl is a vector one, else its scalar form.
 * The caller checks buddy_impl_usable(@impl).
 */
const struct buddy_codec *buddy_codec_impl(const struct buddy_codec *c,
					   unsigned int impl);

/* Bytes an entry of each size code occupies: 0, 8, 32, 64, 96, 128. */
static inline unsigned int buddy_code_bytes(unsigned int code)
{
	static const u8 bytes[BUDDY_CODE_NR] = {
		[BUDDY_CODE_ZERO] = 0,	[BUDDY_CODE_C8] = 8,
		[BUDDY_CODE_C32] = 32,	[BUDDY_CODE_C64] = 64,
		[BUDDY_CODE_C96] = 96,	[BUDDY_CODE_RAW] = 128,
	};

	return code < BUDDY_CODE_NR ? bytes[code] : 128;
}

/* Size code of a non-zero entry whose stream is @bits long. */
static inline unsigned int buddy_code_of_bits(unsigned int bits)
{
	unsigned int bytes = DIV_ROUND_UP(bits, 8);

	if (bytes <= 8)
		return BUDDY_CODE_C8;
	if (bytes <= 32)
		return BUDDY_CODE_C32;
	if (bytes <= 64)
		return BUDDY_CODE_C64;
	if (bytes <= 96)
		return BUDDY_CODE_C96;
	return BUDDY_CODE_RAW;
}

bool buddy_entry_is_zero(const u8 *entry);

/*
 * Size code of an entry by the size-only path: what buddy_entry_encode()
 * would return, without producing the stream.
 */
unsigned int buddy_entry_classify(const struct buddy_codec *c, const u8 *entry);

/*
 * Encode an entry for storage: returns its size code and writes the
 * buddy_code_bytes(code) bytes to store into @out (BUDDY_STREAM_MAX bytes):
 * nothing for ZERO, the plain 128 bytes for RAW, else the stream zero-padded
 * to the code's size.
 */
/*
 * The rest of buddy_entry_encode() for a non-zero entry whose stream of
 * @bits bits is at @out (a codec's own encode ends with it): the size
 * code, the entry copied over the stream for RAW, else the stream
 * zero-padded.
 */
unsigned int buddy_entry_pack(const u8 *entry, u8 *out, unsigned int bits);
unsigned int buddy_entry_encode(const struct buddy_codec *c, const u8 *entry,
				u8 *out);

/*
 * Decode a stored entry of size code @code from @stored (which holds
 * buddy_code_bytes(code) bytes) into 128 bytes at @entry.  Returns 0, or
 * -EINVAL for a reserved code or a stream that does not decode.
 */
int buddy_entry_decode(const struct buddy_codec *c, unsigned int code,
		       const u8 *stored, u8 *entry);

/*
 * buddy_entry_decode() of @n entries: entry k of size code @codes[k]
 * from @stored[k] into the 128 bytes at @entries + 128 * k.  Returns 0,
 * or -EINVAL when any of them does not decode (the others are decoded).
 */
int buddy_entries_decode(const struct buddy_codec *c,
			 const unsigned int *codes, const u8 *const *stored,
			 u8 *entries, unsigned int n);

#endif /* BUDDY_CORE_CODEC_H */
