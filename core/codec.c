// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The codec table and the per-entry storage format shared by the module,
 * the profiler and the tools: size code, zero detection, encode and decode.
 */
#include "core/codec.h"

/* Indexed by BUDDY_CODEC_*; adding a codec is one file and one line here. */
const struct buddy_codec *const buddy_codecs[] = {
	&buddy_codec_bpc,
	&buddy_codec_zvc,
	&buddy_codec_bdi,
	&buddy_codec_fpc,
	&buddy_codec_none,
	NULL,
};

static const char *const buddy_impl_names[BUDDY_IMPL_NR] = {
	[BUDDY_IMPL_SCALAR] = "scalar",
	[BUDDY_IMPL_AVX2] = "avx2",
	[BUDDY_IMPL_GFNI] = "gfni",
};

/* The vector implementations, by BUDDY_CODEC_*: one line per codec. */
static const struct buddy_codec *const
buddy_codecs_vec[BUDDY_IMPL_NR][BUDDY_CODEC_NR] = {
#ifdef BUDDY_HAVE_AVX2
	[BUDDY_IMPL_AVX2][BUDDY_CODEC_BPC] = &buddy_codec_bpc_avx2,
	[BUDDY_IMPL_GFNI][BUDDY_CODEC_BPC] = &buddy_codec_bpc_gfni,
#endif
};

/* The scalar codec of ABI value @id (DEFAULT resolved by the caller). */
static const struct buddy_codec *codec_scalar(unsigned int id)
{
	unsigned int i;

	for (i = 0; buddy_codecs[i]; i++)
		if (buddy_codecs[i]->id == id)
			return buddy_codecs[i];
	return NULL;
}

const char *buddy_impl_name(unsigned int impl)
{
	return impl < BUDDY_IMPL_NR ? buddy_impl_names[impl] : NULL;
}

int buddy_impl_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < BUDDY_IMPL_NR; i++)
		if (!strcmp(buddy_impl_names[i], name))
			return i;
	return -EINVAL;
}

bool buddy_impl_usable(unsigned int impl)
{
	if (impl == BUDDY_IMPL_SCALAR)
		return true;
#ifdef BUDDY_HAVE_AVX2
	if (impl == BUDDY_IMPL_AVX2)
		return buddy_cpu_has_avx2();
	if (impl == BUDDY_IMPL_GFNI)
		return buddy_cpu_has_gfni();
#endif
	return false;
}

unsigned int buddy_impl_best(void)
{
	unsigned int impl = BUDDY_IMPL_NR - 1;

	while (impl > BUDDY_IMPL_SCALAR && !buddy_impl_usable(impl))
		impl--;
	return impl;
}

const struct buddy_codec *buddy_codec_impl(const struct buddy_codec *c,
					   unsigned int impl)
{
	if (!c || c->id >= BUDDY_CODEC_NR)
		return c;
	/* the codec's fastest vector form up to @impl */
	if (impl >= BUDDY_IMPL_NR)
		impl = BUDDY_IMPL_NR - 1;
	for (; impl > BUDDY_IMPL_SCALAR; impl--)
		if (buddy_codecs_vec[impl][c->id])
			return buddy_codecs_vec[impl][c->id];
	return c->impl == BUDDY_IMPL_SCALAR ? c : codec_scalar(c->id);
}

void buddy_codec_init(void)
{
#ifdef BUDDY_HAVE_AVX2
	buddy_bpc_avx2_init();
#endif
}

#ifdef __KERNEL__
unsigned int buddy_codec_impl_default(void)
{
	return BUDDY_IMPL_SCALAR;
}
#else
static unsigned int impl_default;

/* Once, when the program (or the library) loads. */
__attribute__((constructor)) static void buddy_codec_impl_select(void)
{
	const char *want = getenv("BUDDY_CODEC_IMPL");
	int impl = want ? buddy_impl_by_name(want) : -EINVAL;

	buddy_codec_init();
	impl_default = impl >= 0 && buddy_impl_usable(impl) ? impl :
							      buddy_impl_best();
}

unsigned int buddy_codec_impl_default(void)
{
	return impl_default;
}
#endif

const struct buddy_codec *buddy_codec_by_id(unsigned int id)
{
	if (id == BUDDY_CODEC_DEFAULT)
		id = BUDDY_CODEC_BPC;
	return buddy_codec_impl(codec_scalar(id), buddy_codec_impl_default());
}

const struct buddy_codec *buddy_codec_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; buddy_codecs[i]; i++)
		if (!strcmp(buddy_codecs[i]->name, name))
			return buddy_codec_impl(buddy_codecs[i],
						buddy_codec_impl_default());
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
	if (c->classify)
		return c->classify(entry);
	if (buddy_entry_is_zero(entry))
		return BUDDY_CODE_ZERO;
	return buddy_code_of_bits(c->size(entry));
}

unsigned int buddy_entry_pack(const u8 *entry, u8 *out, unsigned int bits)
{
	unsigned int code = buddy_code_of_bits(bits), used;

	if (code == BUDDY_CODE_RAW) {
		memcpy(out, entry, BUDDY_ENTRY_BYTES);
		return code;
	}
	used = DIV_ROUND_UP(bits, 8);
	memset(out + used, 0, buddy_code_bytes(code) - used);
	return code;
}

unsigned int buddy_entry_encode(const struct buddy_codec *c, const u8 *entry,
				u8 *out)
{
	if (c->encode)
		return c->encode(entry, out);
	if (buddy_entry_is_zero(entry))
		return BUDDY_CODE_ZERO;
	return buddy_entry_pack(entry, out, c->compress(entry, out));
}

int buddy_entry_decode(const struct buddy_codec *c, unsigned int code,
		       const u8 *stored, u8 *entry)
{
	if (c->decode)
		return c->decode(code, stored, entry);
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

int buddy_entries_decode(const struct buddy_codec *c,
			 const unsigned int *codes, const u8 *const *stored,
			 u8 *entries, unsigned int n)
{
	unsigned int k;
	int ret = 0;

	if (c->decode_n)
		return c->decode_n(codes, stored, entries, n);
	for (k = 0; k < n; k++)
		ret |= buddy_entry_decode(c, codes[k], stored[k],
					  entries + (size_t)k * BUDDY_ENTRY_BYTES);
	return ret;
}
