// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The codec table and the per-entry storage format shared by the module,
 * the profiler and the tools: size code, zero detection, encode and decode.
 */
#include "codec.h"

/* Indexed by BUDDY_CODEC_*; adding a codec is one file and one line here. */
const struct buddy_codec *const buddy_codecs[] = {
	&buddy_codec_bpc,
	&buddy_codec_zvc,
	&buddy_codec_bdi,
	&buddy_codec_fpc,
	&buddy_codec_none,
	NULL,
};

const struct buddy_codec *buddy_codec_by_id(unsigned int id)
{
	unsigned int i;

	if (id == BUDDY_CODEC_DEFAULT)
		id = BUDDY_CODEC_BPC;
	for (i = 0; buddy_codecs[i]; i++)
		if (buddy_codecs[i]->id == id)
			return buddy_codecs[i];
	return NULL;
}

const struct buddy_codec *buddy_codec_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; buddy_codecs[i]; i++)
		if (!strcmp(buddy_codecs[i]->name, name))
			return buddy_codecs[i];
	return NULL;
}

bool buddy_entry_is_zero(const u8 *entry)
{
	u64 acc = 0;
	unsigned int i;

	for (i = 0; i < BUDDY_ENTRY_BYTES; i += 8) {
		u64 v;

		memcpy(&v, entry + i, 8);
		acc |= v;
	}
	return acc == 0;
}

unsigned int buddy_entry_classify(const struct buddy_codec *c, const u8 *entry)
{
	if (buddy_entry_is_zero(entry))
		return BUDDY_CODE_ZERO;
	return buddy_code_of_bits(c->size(entry));
}

unsigned int buddy_entry_encode(const struct buddy_codec *c, const u8 *entry,
				u8 *out)
{
	unsigned int bits, code, used;

	if (buddy_entry_is_zero(entry))
		return BUDDY_CODE_ZERO;
	bits = c->compress(entry, out);
	code = buddy_code_of_bits(bits);
	if (code == BUDDY_CODE_RAW) {
		memcpy(out, entry, BUDDY_ENTRY_BYTES);
		return code;
	}
	used = DIV_ROUND_UP(bits, 8);
	memset(out + used, 0, buddy_code_bytes(code) - used);
	return code;
}

int buddy_entry_decode(const struct buddy_codec *c, unsigned int code,
		       const u8 *stored, u8 *entry)
{
	switch (code) {
	case BUDDY_CODE_ZERO:
		memset(entry, 0, BUDDY_ENTRY_BYTES);
		return 0;
	case BUDDY_CODE_RAW:
		memcpy(entry, stored, BUDDY_ENTRY_BYTES);
		return 0;
	case BUDDY_CODE_C8:
	case BUDDY_CODE_C32:
	case BUDDY_CODE_C64:
	case BUDDY_CODE_C96:
		return c->decompress(stored, buddy_code_bytes(code), entry);
	default:
		return -EINVAL;
	}
}
