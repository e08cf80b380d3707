// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Bit-Plane Compression on AVX2 registers: the same streams, sizes and
 * decoded entries as the scalar reference (bpc.c), bit for bit, including
 * which malformed streams are rejected.  core/codec.c hands it out where
 * the CPU has AVX2, BMI1/2, LZCNT and POPCNT; in the kernel only inside
 * kernel_fpu_begin() (kmod/codec_fpu.c).
 *
 * Every function here is compiled for those extensions by its target
 * attribute, whatever the file's flags say, so that the kernel (which
 * builds with -mno-sse -mno-avx) and every userspace build get the same
 * code; nothing here is called before core/codec.c checked the CPU.
 * GCC vector extensions and the compiler's x86 builtins stand in for
 * <immintrin.h>, which needs libc headers the kernel build does not have.
 *
 * Encoding: the 32 words sit in four registers; the deltas, their signs
 * and the DBX rows (e = d ^ d >> 1) are eight lanes at a time.  Every
 * plane is classified by reductions over the rows (OR: non-zero and DBP
 * non-zero; AND: all ones; saturating counts: exactly one or two ones;
 * OR of a row AND the next: adjacent ones), with no transpose, which is
 * all the size-only path does.  The stream is written only when it is
 * shorter than a RAW entry: the rows go through a 32x32 bit transpose
 * (bytes gathered by shuffles, 8x8 bit blocks transposed in 64-bit lanes,
 * bytes scattered back) and bpc.h's writer codes the planes.
 *
 * Decoding: the stream is copied into a zero-padded buffer, so that no
 * read depends on its length.  One symbol per step without a branch on
 * its kind: its length comes from the count of its leading zeros, its
 * plane from a table of 10-bit prefixes (literals from the window); the
 * window moves on by shifts.  The planes are stored as DBX; a stretch of
 * literals down to plane 0 is taken in vector registers.  Then the
 * planes go back to rows by the same transpose, the rows to deltas by a
 * suffix XOR, and the deltas to words by a prefix sum whose overflow is
 * checked lane by lane.  Entries in a row (decode_n) go eight at a time,
 * one stream per 32-bit lane, one plane of every lane per step, and
 * their words come from all eight lanes at once (see bpc_lanes_decode()).
 */
#include "core/codecs/bpc_avx2.h"

#ifdef BUDDY_HAVE_AVX2

/* --- encoding -------------------------------------------------------------- */

/*
 * The rows of an entry: d[j] lane l is the low 32 bits of delta 8j + l,
 * s[j] its sign (all ones or zero: bit 32 of the 33-bit delta), e[j] its
 * DBX row, bits 0..31 (bit 31: bit 31 of d ^ the sign).  Row 31 (no such
 * delta) is zero.
 */
struct bpc_rows {
	v8u d[4], s[4], e[4];
};

static BPC_AVX2 __always_inline void bpc_rows(const u8 *src, struct bpc_rows *r)
{
	const v8u up1 = { 1, 2, 3, 4, 5, 6, 7, 7 };
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v8u w = ld8(src + 32 * j);
		v8u n = j < 3 ? ld8(src + 32 * j + 4) : perm(w, up1);

		r->d[j] = n - w;
		r->s[j] = (v8u)((v8s)w > (v8s)n);
		r->e[j] = r->d[j] ^ (r->d[j] >> 1) ^ (r->s[j] << 31);
	}
}

/*
 * All 31 deltas are equal (a constant or a ramp entry, coded without
 * planes): their value in *@d.
 */
static BPC_AVX2 __always_inline bool bpc_is_ramp(const struct bpc_rows *r, s64 *d)
{
	const v8u rows30 = { ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0 };
	v8u d0 = lane0(r->d[0]), s0 = lane0(r->s[0]), ne;

	ne = (r->d[0] ^ d0) | (r->s[0] ^ s0) | (r->d[1] ^ d0) |
	     (r->s[1] ^ s0) | (r->d[2] ^ d0) | (r->s[2] ^ s0) |
	     (((r->d[3] ^ d0) | (r->s[3] ^ s0)) & rows30);
	*d = (s64)((u64)r->s[0][0] << 32 | r->d[0][0]);
	return all_zero(ne);
}

/*
 * Column statistics of the rows, each a 32-bit mask over planes 0..31:
 * c1, c2, c3: at least one, two, three ones (saturating counts over rows
 * 0..30), all: all ones in rows 0..30, dbp: DBP non-zero (a one in some
 * delta's bit), adj: ones in two adjacent rows.  Counted over the four
 * registers first, then over the eight lanes, halving each time.  Returns
 * plane 32, DBX[32]: the signs.
 */
static BPC_AVX2 __always_inline u32 bpc_columns(const struct bpc_rows *r, struct bpc_masks *m)
{
	const v8u row31 = { 0, 0, 0, 0, 0, 0, 0, ~0u };
	const v8u *e = r->e;
	v8u zero = { 0 }, p1, p2, q1, q2, c1, c2, c3, all, dbp, adj, y1, y2;
	u32 sg, low, n1, n2, n3;
	int step;

	p1 = e[0] | e[1];
	p2 = e[0] & e[1];
	q1 = e[2] | e[3];
	q2 = e[2] & e[3];
	c1 = p1 | q1;
	c2 = p2 | q2 | (p1 & q1);
	c3 = (p2 & q1) | (p1 & q2);
	all = e[0] & e[1] & e[2] & (e[3] | row31);
	dbp = r->d[0] | r->d[1] | r->d[2] | r->d[3];
	/* row i AND row i + 1 (row 32: zero) */
	adj = (e[0] & __builtin_shufflevector(e[0], e[1], 1, 2, 3, 4, 5, 6, 7, 8)) |
	      (e[1] & __builtin_shufflevector(e[1], e[2], 1, 2, 3, 4, 5, 6, 7, 8)) |
	      (e[2] & __builtin_shufflevector(e[2], e[3], 1, 2, 3, 4, 5, 6, 7, 8)) |
	      (e[3] & __builtin_shufflevector(e[3], zero, 1, 2, 3, 4, 5, 6, 7, 8));

#pragma GCC unroll 3
	for (step = 0; step < 3; step++) {
		v8u y3;

		if (step == 0) {
			y1 = swap128(c1); y2 = swap128(c2); y3 = swap128(c3);
			all &= swap128(all); dbp |= swap128(dbp);
			adj |= swap128(adj);
		} else if (step == 1) {
			y1 = swap64(c1); y2 = swap64(c2); y3 = swap64(c3);
			all &= swap64(all); dbp |= swap64(dbp);
			adj |= swap64(adj);
		} else {
			y1 = swap32(c1); y2 = swap32(c2); y3 = swap32(c3);
			all &= swap32(all); dbp |= swap32(dbp);
			adj |= swap32(adj);
		}
		c3 |= y3 | (c2 & y1) | (c1 & y2);
		c2 |= y2 | (c1 & y1);
		c1 |= y1;
	}

	/* plane 32 is the signs: the lowest one tells its class */
	sg = signs(r->s[0]) | signs(r->s[1]) << 8 | signs(r->s[2]) << 16 |
	     signs(r->s[3]) << 24;
	low = sg & -sg;
	n1 = c1[0];
	n2 = c2[0];
	n3 = c3[0];
	m->nz = n1 | (u64)(sg != 0) << 32;
	m->all = all[0] | (u64)(sg == BPC_PLANE_MASK) << 32;
	m->dbp = dbp[0] | (u64)(sg != 0) << 32;
	m->one = (n1 & ~n2) | (u64)(sg && sg == low) << 32;
	m->pair = (n2 & ~n3 & adj[0]) | (u64)(sg && sg == 3 * low) << 32;
	m->cand = 0;		/* the scalar encoder's; adjacency is in pair */
	return sg;
}

static BPC_AVX2 __always_inline bool entry_zero(const u8 *e)
{
	return all_zero(ld8(e) | ld8(e + 32) | ld8(e + 64) | ld8(e + 96));
}

/* All 32 words are the first one. */
static BPC_AVX2 __always_inline bool entry_constant(const u8 *e)
{
	v8u w0 = bcast(get_unaligned_le32(e));

	return all_zero((ld8(e) ^ w0) | (ld8(e + 32) ^ w0) |
			(ld8(e + 64) ^ w0) | (ld8(e + 96) ^ w0));
}

/*
 * What an entry's stream will be: its base, and either a ramp of delta
 * @d or the classified planes of @r.
 */
struct bpc_plan {
	struct bpc_rows r;
	struct bpc_masks m;
	u64 base, s5, s10, lit;
	s64 d;
	u32 sg;		/* DBX[32] */
	bool ramp;
};

/*
 * Plan the stream of the 128 bytes at @src (@constant: known to be a
 * constant entry, or to be none); returns its length in bits.
 */
static BPC_AVX2 __always_inline unsigned int bpc_plan(const u8 *src, struct bpc_plan *p,
						      bool constant)
{
	p->base = bpc_base((s32)get_unaligned_le32(src));
	/* a constant entry (all deltas 0) costs no rows: base, a run of 33 */
	p->ramp = constant;
	p->d = 0;
	if (!p->ramp) {
		bpc_rows(src, &p->r);
		p->ramp = bpc_is_ramp(&p->r, &p->d);
	}
	if (p->ramp) {
		/* no planes: bpc_write() codes the ramp from d */
		p->s5 = p->s10 = p->lit = 0;
		p->m.nz = p->m.all = 0;
		p->sg = 0;
		return bpc_encode_ramp(NULL, p->base, p->d, false);
	}
	p->sg = bpc_columns(&p->r, &p->m);
	bpc_classes(&p->m, &p->s5, &p->s10, &p->lit);
	return bpc_size_of(p->base, p->s5, p->s10, p->lit,
			   p->m.nz ^ BPC_ALL_PLANES);
}

/* Lanes of @b where the sign of @sel is set, else of @a. */
static BPC_AVX2 __always_inline v8u sign_blend(v8u a, v8u b, v8u sel)
{
	return (v8u)__builtin_ia32_blendvps256(BPC_AS(float, a),
					       BPC_AS(float, b),
					       BPC_AS(float, sel));
}

/*
 * The symbol of each non-zero plane 0..31 of @pl, as bpc_put_plane()
 * picks it, without a branch, in stream order: code[32 - k] and its
 * length len[32 - k] (slot 0 is plane 32's): a literal 1 DBX, 00000 or
 * 00001, or 0001x and the position of the single one or the lower of two
 * adjacent ones.  The masks' bits are tested as the lanes' signs (a
 * shift each), which is all vblendvps looks at.
 */
static BPC_AVX2 __always_inline void bpc_symbols(const v8u *pl,
						 const struct bpc_plan *p,
						 u32 *code, u32 *len)
{
	const v8u steps = { 0, 1, 2, 3, 4, 5, 6, 7 };
	v8u lit = bcast((u32)p->lit), s5 = bcast((u32)p->s5);
	v8u nall = bcast(~(u32)p->m.all);
	const v8u rev = { 7, 6, 5, 4, 3, 2, 1, 0 };
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++) {
		v8u v = pl[j], k = steps + 8 * j, low = v & -v;
		v8u is_lit = lit << (bcast(31) - k), is5 = s5 << (bcast(31) - k);
		/*
		 * 0001x p from the exponent e of the lowest one as a float,
		 * e = 127 + p: 00010 p = e - 63, 00011 p 32 more.
		 */
		v8u c = ((v8u)__builtin_convertvector((v8s)low,
				float __attribute__((vector_size(32)))) >> 23) -
			63 + ((v8u)(v == low) & bcast(32));
		v8u n = sign_blend(bcast(10), bcast(5), is5);

		c = sign_blend(c, (nall >> k) & bcast(1), is5);
		c = sign_blend(c, v | bcast(1u << 31), is_lit);
		n = sign_blend(n, bcast(32), is_lit);
		st8(code + 25 - 8 * j, perm(c, rev));
		st8(len + 25 - 8 * j, perm(n, rev));
	}
}

/*
 * The code of a zero run of r planes (001, 01 LLLLL) by r, and its
 * length (none for r = 0).
 */
static const u8 bpc_run_code[BPC_PLANES + 1] = {
	0, 1, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};
static const u8 bpc_run_len[BPC_PLANES + 1] = {
	0, 3, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
};

/* Bit i of @x at bit 31 - i. */
static BPC_AVX2 __always_inline u64 bpc_reverse32(u32 x)
{
	x = __builtin_bswap32(x);
	x = (x & 0x0f0f0f0fu) << 4 | (x >> 4 & 0x0f0f0f0fu);
	x = (x & 0x33333333u) << 2 | (x >> 2 & 0x33333333u);
	return (x & 0x55555555u) << 1 | (x >> 1 & 0x55555555u);
}

/*
 * bitw_put64() of x[j] | BPC_LIT2 for j = @n - 1 down to 0 (the bottom
 * stretch of literal pairs), four at a time: the same 8-byte stores, from
 * one shift of four lanes by the bit offset, which all of them share.
 */
static BPC_AVX2 __always_inline void bpc_put_lit2(struct bitw *o,
						  const u64 *x, int n)
{
	/* per 64-bit lane: big-endian */
	const v8u bswap64 = {
		0x04050607, 0x00010203, 0x0c0d0e0f, 0x08090a0b,
		0x04050607, 0x00010203, 0x0c0d0e0f, 0x08090a0b,
	};
	const v4q lit2 = { BPC_LIT2, BPC_LIT2, BPC_LIT2, BPC_LIT2 };
	u64 u = o->used;
	/* a shift by 64 is 0, as bitw_put64() has it for used 0 */
	v4q up = { 64 - u, 64 - u, 64 - u, 64 - u }, down = { u, u, u, u };
	v4q y, prev = { 0, 0, 0, o->acc };	/* the pending bits: lane 3 */
	int j;

	for (j = n - 4; j >= 0; j -= 4) {
		y = (v4q)ld8(x + j);
		y = __builtin_shufflevector(y, y, 3, 2, 1, 0) | lit2;
		prev = __builtin_shufflevector(y, prev, 7, 0, 1, 2);
		prev = (v4q)__builtin_ia32_psllv4di(BPC_AS(long long, prev),
						  BPC_AS(long long, up)) |
		       (v4q)__builtin_ia32_psrlv4di(BPC_AS(long long, y),
						  BPC_AS(long long, down));
		st8(o->p, shufb((v8u)prev, bswap64));
		o->p += 32;
		prev = y;
	}
	o->acc = prev[3];
	for (j += 3; j >= 0; j--)
		bitw_put64(o, x[j] | BPC_LIT2);
}

/* Up to this many non-zero planes above the bottom stretch: one by one. */
#define BPC_FEW_PLANES	6

/*
 * The stream bpc_put_planes() writes: the base, then one put per
 * non-zero plane from plane 32 down, with the run before it (the planes
 * taken lowest bit first from a reversed mask: one op to find the next,
 * one to clear it), then the
 * run down to the bottom stretch and the stretch of literal pairs as
 * 64-bit words (x[j] = DBX[2j] | DBX[2j + 1] << 32, x[16] = DBX[32], as
 * that one takes them).  The symbols come from bpc_put_plane() where few
 * planes need one, else from bpc_symbols().
 */
static BPC_AVX2 __always_inline unsigned int bpc_vec_put_planes(struct bitw *o, const struct bpc_plan *p,
					const v8u *pl, const u64 *x)
{
	u32 code[BPC_PLANES + 7] __aligned(32), len[BPC_PLANES + 7] __aligned(32);
	u64 lit2 = p->lit & (p->lit >> 1) & 0x55555555ull, m;
	unsigned int low = __builtin_ctzll(~lit2 & 0x155555555ull) / 2;
	unsigned int last = BPC_PLANES, r, k, i0;
	u64 rm;

	bitw_put(o, p->base >> 6, p->base & 63);
	/* the planes above the stretch */
	m = p->m.nz & ~((1ull << 2 * low) - 1);
	if (bpc_weight(m) <= BPC_FEW_PLANES) {
		for (; m; last = k, m ^= 1ull << k) {
			k = 63 - __builtin_clzll(m);
			r = last - 1 - k;
			bpc_put_plane(o, x, k, p->m.nz, p->lit, p->s5, p->m.all,
				      &r);
		}
	} else {
		bpc_symbols(pl, p, code, len);
		/* plane 32, from DBX[32], as the others */
		k = __builtin_ctz(p->sg | 1u << 31);
		code[0] = (p->sg >> k == 1 ? 3u << 5 : 2u << 5) | k;
		len[0] = 10;
		if (p->s5 >> 32 & 1) {
			code[0] = !(p->m.all >> 32 & 1);
			len[0] = 5;
		}
		if (p->lit >> 32 & 1) {
			code[0] = 1u << 31 | p->sg;
			len[0] = 32;
		}
		/*
		 * In stream order, i = 32 - k, lowest bit first: bit i of
		 * rm is plane 32 - i; the last plane put is plane 33 - i0.
		 */
		rm = bpc_reverse32((u32)m) << 1 | m >> 32;
		for (i0 = 0; rm; rm &= rm - 1) {
			k = __builtin_ctzll(rm);
			r = k - i0;
			i0 = k + 1;
			bitw_put(o, (u64)bpc_run_code[r] << len[k] | code[k],
				 len[k] + bpc_run_len[r]);
		}
		last = BPC_PLANES - i0;
	}
	r = last - 2 * low;
	bpc_put_run(o, &r);
	bpc_put_lit2(o, x, low);
	return bitw_finish(o);
}

/*
 * Write the stream @p planned into @dst from the planes @pl (the DBX
 * rows transposed, where a literal or a position needs them; none for a
 * ramp); returns its length in bits.
 */
static BPC_AVX2 __always_inline unsigned int bpc_write_planes(struct bpc_plan *p,
							      u8 *dst, v8u *pl)
{
	u64 x[17] __aligned(32) __uninitialized;	/* all set below */
	struct bitw o;
	int j;

	bitw_init(&o, dst);
	if (p->ramp)
		return bpc_encode_ramp(&o, p->base, p->d, true);
#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		st8(x + 4 * j, pl[j]);
	x[16] = p->sg;
	return bpc_vec_put_planes(&o, p, pl, x);
}

/*
 * The DBX rows of @p into @pl where its stream needs them transposed (a
 * literal or a position; not a ramp), else zeros: true in the first case.
 */
static BPC_AVX2 __always_inline bool bpc_rows_to_transpose(const struct bpc_plan *p,
							   v8u *pl)
{
	v8u zero = { 0 };
	bool need = !p->ramp && (p->lit | p->s10);
	int j;

#pragma GCC unroll 4
	for (j = 0; j < 4; j++)
		pl[j] = need ? p->r.e[j] : zero;
	return need;
}

/*
 * The stream @p planned into @dst (bpc_write_planes()), its planes by the
 * delta-swap transpose, or by GFNI's (bpc_write_gfni()).  Calls of their
 * own: their arrays and the plan's rows would otherwise share one stack
 * frame, over 2 KiB under KASAN.
 */
static BPC_AVX2 noinline unsigned int bpc_write(struct bpc_plan *p, u8 *dst)
{
	v8u pl[4];

	if (bpc_rows_to_transpose(p, pl))
		bpc_transpose(pl);
	return bpc_write_planes(p, dst, pl);
}

static BPC_GFNI noinline unsigned int bpc_write_gfni(struct bpc_plan *p,
						     u8 *dst)
{
	v8u pl[4];

	if (bpc_rows_to_transpose(p, pl))
		bpc_transpose_gfni(pl);
	return bpc_write_planes(p, dst, pl);
}

typedef unsigned int bpc_writer(struct bpc_plan *p, u8 *dst);

static BPC_AVX2 __always_inline unsigned int compress(const u8 *src, u8 *dst,
						      bpc_writer *write)
{
	struct bpc_plan p;

	bpc_plan(src, &p, entry_constant(src));
	return write(&p, dst);
}

static BPC_AVX2 unsigned int bpc_avx2_compress(const u8 *src, u8 *dst)
{
	return compress(src, dst, bpc_write);
}

static BPC_AVX2 unsigned int bpc_gfni_compress(const u8 *src, u8 *dst)
{
	return compress(src, dst, bpc_write_gfni);
}

static BPC_AVX2 unsigned int bpc_avx2_size(const u8 *src)
{
	struct bpc_plan p;

	return bpc_plan(src, &p, entry_constant(src));
}

/*
 * buddy_entry_encode() in one: the stream is written only when the entry
 * is stored compressed; it is zero-padded to its size by storing zeros
 * first (the writer's stores are 8 bytes wide, zero past the stream).
 */
static BPC_AVX2 __always_inline unsigned int entry_encode(const u8 *entry,
							  u8 *out,
							  bpc_writer *write)
{
	struct bpc_plan p;
	unsigned int code;
	v8u zero = { 0 };

	if (entry_zero(entry))
		return BUDDY_CODE_ZERO;
	if (entry_constant(entry)) {
		/* base and a run of 33, at most 40 bits: one 8-byte store */
		u64 base = bpc_base((s32)get_unaligned_le32(entry));
		unsigned int n = (base & 63) + 7;

		bits_put64(out, ((base >> 6) << 7 | BPC_RUN33) << (64 - n));
		return BUDDY_CODE_C8;
	}
	code = buddy_code_of_bits(bpc_plan(entry, &p, false));
	if (code == BUDDY_CODE_RAW) {
		entry_copy(out, entry);
		return code;
	}
	st8(out, zero);
	st8(out + 32, zero);
	st8(out + 64, zero);
	write(&p, out);
	return code;
}

static BPC_AVX2 unsigned int bpc_avx2_entry_encode(const u8 *entry, u8 *out)
{
	return entry_encode(entry, out, bpc_write);
}

static BPC_AVX2 unsigned int bpc_gfni_entry_encode(const u8 *entry, u8 *out)
{
	return entry_encode(entry, out, bpc_write_gfni);
}

static BPC_AVX2 unsigned int bpc_avx2_entry_classify(const u8 *entry)
{
	struct bpc_plan p;

	if (entry_zero(entry))
		return BUDDY_CODE_ZERO;
	return buddy_code_of_bits(bpc_plan(entry, &p, entry_constant(entry)));
}

const struct buddy_codec buddy_codec_bpc_avx2 = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.impl = BUDDY_IMPL_AVX2,
	.compress = bpc_avx2_compress,
	.size = bpc_avx2_size,
	.decompress = bpc_avx2_decompress,
	.encode = bpc_avx2_entry_encode,
	.classify = bpc_avx2_entry_classify,
	.decode = bpc_avx2_entry_decode,
	.decode_n = bpc_avx2_decode_n,
};

/* The same, but for the encoder's transpose; the decoders are AVX2's. */
const struct buddy_codec buddy_codec_bpc_gfni = {
	.name = "bpc",
	.id = BUDDY_CODEC_BPC,
	.impl = BUDDY_IMPL_GFNI,
	.compress = bpc_gfni_compress,
	.size = bpc_avx2_size,
	.decompress = bpc_avx2_decompress,
	.encode = bpc_gfni_entry_encode,
	.classify = bpc_avx2_entry_classify,
	.decode = bpc_avx2_entry_decode,
	.decode_n = bpc_avx2_decode_n,
};


#endif /* BUDDY_HAVE_AVX2 */
