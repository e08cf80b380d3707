// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * datagen.c - deterministic data-class generators (see datagen.h).
 *
 * Userspace only: the smooth classes use libm.  Element i of a class is
 * counted from the start of @buf; a tail shorter than one element gets the
 * low bytes of the next element.
 */
#include <math.h>

#include "datagen.h"

static const char *const datagen_names[DATAGEN_NR] = {
	[DATAGEN_RANDOM]	= "random",
	[DATAGEN_ZERO]		= "zero",
	[DATAGEN_CONSTANT]	= "constant",
	[DATAGEN_RAMP]		= "ramp",
	[DATAGEN_FLOAT32]	= "float32",
	[DATAGEN_FLOAT64]	= "float64",
	[DATAGEN_RELU10]	= "relu10",
	[DATAGEN_RELU50]	= "relu50",
	[DATAGEN_RELU90]	= "relu90",
	[DATAGEN_RELU95]	= "relu95",
	[DATAGEN_POINTER]	= "pointer",
	[DATAGEN_ALTSIGN]	= "altsign",
	[DATAGEN_BITNOISE]	= "bitnoise",
	[DATAGEN_MIXED]		= "mixed",
};

const char *datagen_class_name(enum datagen_class c)
{
	if ((unsigned int)c >= DATAGEN_NR)
		return "?";
	return datagen_names[c];
}

int datagen_class_by_name(const char *name)
{
	int i;

	for (i = 0; i < DATAGEN_NR; i++)
		if (!strcmp(datagen_names[i], name))
			return i;
	return -1;
}

unsigned int datagen_relu_zero_pct(enum datagen_class c)
{
	switch (c) {
	case DATAGEN_RELU10:
		return 10;
	case DATAGEN_RELU50:
		return 50;
	case DATAGEN_RELU90:
		return 90;
	case DATAGEN_RELU95:
		return 95;
	default:
		return 0;
	}
}

/* Store the @size-byte little-endian @v at @off, clipped to @len. */
static inline void put_le(u8 *buf, size_t len, size_t off, u64 v,
			  unsigned int size)
{
	unsigned int b;

	for (b = 0; b < size && off + b < len; b++)
		buf[off + b] = (u8)(v >> (8 * b));
}

static u32 f32_bits(float f)
{
	u32 v;

	memcpy(&v, &f, sizeof(v));
	return v;
}

static u64 f64_bits(double f)
{
	u64 v;

	memcpy(&v, &f, sizeof(v));
	return v;
}

/* Uniform double in [0, 1). */
static double unit(struct datagen_rng *r)
{
	return (double)(datagen_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static void fill_random(struct datagen_rng *r, u8 *buf, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 8)
		put_le(buf, len, off, datagen_next(r), 8);
}

static void fill_constant(struct datagen_rng *r, u8 *buf, size_t len)
{
	u32 v = (u32)datagen_next(r);
	size_t off;

	if (!v)
		v = 0x12345678;
	for (off = 0; off < len; off += 4)
		put_le(buf, len, off, v, 4);
}

static void fill_ramp(struct datagen_rng *r, u8 *buf, size_t len)
{
	u32 start = (u32)datagen_next(r);
	u32 stride;
	size_t off;

	/* One generator call per statement: C leaves their order open. */
	start >>= datagen_below(r, 32);
	stride = 1 + datagen_below(r, 16);

	for (off = 0; off < len; off += 4)
		put_le(buf, len, off, start + (u32)(off / 4) * stride, 4);
}

/* Parameters of a smooth signal: offset + two sines + small noise. */
struct smooth {
	double off, a1, f1, p1, a2, f2, p2, noise;
};

static void smooth_init(struct datagen_rng *r, struct smooth *s)
{
	double scale = pow(10.0, (double)datagen_below(r, 7) - 3.0);

	s->off = (unit(r) - 0.5) * 4.0 * scale;
	s->a1 = scale * (0.5 + unit(r));
	s->f1 = 0.001 + 0.05 * unit(r);
	s->p1 = 6.283185307179586 * unit(r);
	s->a2 = s->a1 * 0.1 * unit(r);
	s->f2 = 0.05 + 0.3 * unit(r);
	s->p2 = 6.283185307179586 * unit(r);
	s->noise = s->a1 * 1e-4;
}

static void fill_float32(struct datagen_rng *r, u8 *buf, size_t len)
{
	struct smooth s;
	size_t off;

	smooth_init(r, &s);
	for (off = 0; off < len; off += 4) {
		float x = (float)(off / 4);
		float v = (float)s.off + (float)s.a1 * sinf((float)s.f1 * x +
							    (float)s.p1) +
			  (float)s.a2 * sinf((float)s.f2 * x + (float)s.p2) +
			  (float)(s.noise * (unit(r) - 0.5));

		put_le(buf, len, off, f32_bits(v), 4);
	}
}

static void fill_float64(struct datagen_rng *r, u8 *buf, size_t len)
{
	struct smooth s;
	size_t off;

	smooth_init(r, &s);
	for (off = 0; off < len; off += 8) {
		double x = (double)(off / 8);
		double v = s.off + s.a1 * sin(s.f1 * x + s.p1) +
			   s.a2 * sin(s.f2 * x + s.p2) +
			   s.noise * (unit(r) - 0.5);

		put_le(buf, len, off, f64_bits(v), 8);
	}
}

/* ReLU activations: @pct % exact zeros, the rest positive floats. */
static void fill_relu(struct datagen_rng *r, u8 *buf, size_t len,
		      unsigned int pct)
{
	float scale = (float)(0.1 + 4.0 * unit(r));
	size_t off;

	for (off = 0; off < len; off += 4) {
		u32 v = 0;

		if (datagen_below(r, 100) >= pct) {
			float u = (float)unit(r);

			v = f32_bits(scale * u * u + 1e-6f);
		}
		put_le(buf, len, off, v, 4);
	}
}

/*
 * Pointers as a heap or mmap area holds them: 0x000055.. (brk heap of a PIE)
 * or 0x00007f.. (mmap, stacks), 16-byte aligned, mostly a small stride from
 * the previous one (list nodes, arrays of objects); 10% NULL, 7% a nearby
 * object (within +-64 KiB), 3% a jump anywhere in the region.
 */
static void fill_pointer(struct datagen_rng *r, u8 *buf, size_t len)
{
	u64 region = datagen_below(r, 2) ? 0x00007f0000000000ull :
					    0x0000550000000000ull;
	u64 p = region | ((datagen_next(r) & 0xffffffffffull) & ~0xfull);
	size_t off;

	for (off = 0; off < len; off += 8) {
		u32 dice = datagen_below(r, 100);
		u64 v;

		if (dice < 10) {
			v = 0;
		} else {
			if (dice < 13)
				p = region | ((datagen_next(r) & 0xffffffffffull) &
					      ~0xfull);
			else if (dice < 20)
				p += ((u64)datagen_below(r, 8192) - 4096) * 16;
			else
				p += 16 * (1 + datagen_below(r, 8));
			v = p;
		}
		put_le(buf, len, off, v, 8);
	}
}

static void fill_altsign(struct datagen_rng *r, u8 *buf, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4) {
		s32 mag = 1 + (s32)datagen_below(r, 1000);

		put_le(buf, len, off, (u32)((off / 4) & 1 ? -mag : mag), 4);
	}
}

static void fill_bitnoise(struct datagen_rng *r, u8 *buf, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += 4) {
		u64 x = datagen_next(r);
		u32 v = (x & 3) ? 0 : 1u << ((x >> 2) & 31);

		put_le(buf, len, off, v, 4);
	}
}

/*
 * Page mix of the MIXED class, in percent: zero pages and pointer-rich
 * heap pages are common, incompressible pages rarer, after what memory dumps
 * of GPU workloads (activations, weights, allocator metadata) show.
 */
static const struct {
	u8 cls;
	u8 pct;
} datagen_mix_table[] = {
	{ DATAGEN_ZERO, 22 },	{ DATAGEN_RANDOM, 6 },
	{ DATAGEN_CONSTANT, 5 },	{ DATAGEN_RAMP, 8 },
	{ DATAGEN_FLOAT32, 14 },	{ DATAGEN_FLOAT64, 6 },
	{ DATAGEN_RELU10, 3 },	{ DATAGEN_RELU50, 6 },
	{ DATAGEN_RELU90, 6 },	{ DATAGEN_RELU95, 4 },
	{ DATAGEN_POINTER, 12 },	{ DATAGEN_ALTSIGN, 4 },
	{ DATAGEN_BITNOISE, 4 },
};

#define DATAGEN_PAGE	4096

static void fill_mixed(u64 seed, u8 *buf, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += DATAGEN_PAGE) {
		u64 pseed = datagen_mix(seed, off / DATAGEN_PAGE);
		unsigned int dice = (unsigned int)(pseed % 100), i;
		size_t n = len - off < DATAGEN_PAGE ? len - off : DATAGEN_PAGE;

		for (i = 0; i < ARRAY_SIZE(datagen_mix_table) - 1; i++) {
			if (dice < datagen_mix_table[i].pct)
				break;
			dice -= datagen_mix_table[i].pct;
		}
		datagen_fill(datagen_mix_table[i].cls, datagen_mix(pseed, 1),
			     buf + off, n);
	}
}

void datagen_fill(enum datagen_class c, u64 seed, void *buf, size_t len)
{
	struct datagen_rng r;
	u8 *p = buf;

	datagen_seed(&r, datagen_mix(seed, (u64)c + 1));
	switch (c) {
	case DATAGEN_RANDOM:
		fill_random(&r, p, len);
		break;
	case DATAGEN_CONSTANT:
		fill_constant(&r, p, len);
		break;
	case DATAGEN_RAMP:
		fill_ramp(&r, p, len);
		break;
	case DATAGEN_FLOAT32:
		fill_float32(&r, p, len);
		break;
	case DATAGEN_FLOAT64:
		fill_float64(&r, p, len);
		break;
	case DATAGEN_RELU10:
	case DATAGEN_RELU50:
	case DATAGEN_RELU90:
	case DATAGEN_RELU95:
		fill_relu(&r, p, len, datagen_relu_zero_pct(c));
		break;
	case DATAGEN_POINTER:
		fill_pointer(&r, p, len);
		break;
	case DATAGEN_ALTSIGN:
		fill_altsign(&r, p, len);
		break;
	case DATAGEN_BITNOISE:
		fill_bitnoise(&r, p, len);
		break;
	case DATAGEN_MIXED:
		fill_mixed(seed, p, len);
		break;
	case DATAGEN_ZERO:
	default:
		memset(p, 0, len);
		break;
	}
}
