// SPDX-License-Identifier: GPL-2.0
/*
 * codec_bench - single-core throughput and ratio of the entry codecs, next to
 * memcpy, LZ4 and zstd.
 *
 *   codec_bench [-t SECONDS] [-m MIB] [-C CPU] [-c CLASS[,CLASS...]] [FILE...]
 *
 * For every data class of tools/common/datagen.h ("mixed" stands for real
 * memory) and for every FILE (its first MIB MiB, zero-padded to 4 KiB), it
 * measures on one pinned CPU:
 *
 *   memcpy           the limit: the buffer copied to another
 *   bpc zvc bdi fpc  per 128-byte entry, the paths buddy.ko runs:
 *                    compress = buddy_entry_encode() (zero test, stream,
 *                    raw fallback, packed output), size-only =
 *                    buddy_entry_classify(), decompress = buddy_entry_decode()
 *   lz4              per 4 KiB page, LZ4_compress_default/LZ4_decompress_safe
 *   zstd-1           per 4 KiB page, level 1, reused ZSTD_CCtx/ZSTD_DCtx
 *
 * Throughput is uncompressed bytes per second (GB = 1e9 bytes): each cell
 * makes one pass over the whole buffer, then goes on 1 MiB chunk by chunk,
 * round robin, until SECONDS (default 0.2) have passed.
 * Ratio is logical bytes / stored bytes: Buddy's sizes (0/8/32/64/96/128 B
 * per entry) for the entry codecs; the compressed length for LZ4/zstd, a
 * page that does not shrink counted at 4096 B.  Every codec's output is
 * decoded once and compared with the input; a mismatch exits 1.
 *
 * bpc is the implementation the codecs run here (buddy_codec_by_name():
 * the fastest this CPU runs, or BUDDY_CODEC_IMPL=scalar|avx2|gfni), bpc-scalar
 * the scalar reference next to it; both store the same bytes.
 *
 * The goals are judged after the tables, on every data class, in a paired
 * pass: GOAL_ROUNDS rounds, each one 1 MiB chunk through memcpy, bpc,
 * bpc-scalar and lz4 back to back (the order turning every round), timed
 * by the thread's CPU time and by the wall clock; each goal is the median
 * of its rounds' ratios (buddy_paired_judge(), quartiles printed), so a
 * load that slows both sides of a round leaves it alone:
 *
 *   compress    bpc >= 1.0x lz4 on every class, >= 2.0x on mixed
 *   decompress  bpc >= 1.0x lz4 on every class
 *   size-only   bpc >= 4 GB/s on mixed
 *
 * Each is printed met / NOT met by CPU time and by wall clock, with
 * bpc-scalar's ratio beside it and the rate of bpc, bpc-scalar and lz4 as
 * a fraction of memcpy's (the physical limit).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "tools/common/stats.h"

#define PAGE		4096
#define SEED		0x42756464790001ull	/* "Buddy", 1 */

enum { OP_COMP, OP_SIZE, OP_DECOMP, OP_NR };

/* Columns: memcpy, the entry codecs (bpc twice), lz4, zstd. */
enum {
	COL_MEMCPY, COL_BPC, COL_BPCS, COL_ZVC, COL_BDI, COL_FPC, COL_LZ4,
	COL_ZSTD, COL_NR
};
static const char *const col_names[COL_NR] = {
	"memcpy", "bpc", "bpc-sc", "zvc", "bdi", "fpc", "lz4", "zstd-1",
};
/* bpc: the implementation in force, set in main() */
static const struct buddy_codec *col_codec[COL_NR] = {
	[COL_BPCS] = &buddy_codec_bpc,	[COL_ZVC] = &buddy_codec_zvc,
	[COL_BDI] = &buddy_codec_bdi,	[COL_FPC] = &buddy_codec_fpc,
};

#define NA	-1.0

/* The paired judgement of one operation on one row, by one clock. */
struct goal {
	struct buddy_paired x;		/* bpc / lz4 */
	struct buddy_paired xs;		/* bpc-scalar / lz4 */
	struct buddy_paired mc;		/* bpc / memcpy */
	struct buddy_paired smc;	/* bpc-scalar / memcpy */
	struct buddy_paired lmc;	/* lz4 / memcpy */
	double bpc, scalar;		/* median GB/s */
	bool judged;
};

enum { CLK_CPU, CLK_WALL, CLK_NR };

struct row {
	char name[40];
	size_t len;
	double gbps[OP_NR][COL_NR];	/* NA where it does not apply */
	double cpu_gbps[OP_NR][COL_NR];	/* the same by thread CPU time */
	double ratio[COL_NR];
	struct goal goal[OP_NR][CLK_NR];
	bool is_mixed;
};

static double cell_seconds = 0.2;
static volatile u64 sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Buffers shared by all rows, sized for the largest input.  Work is done in
 * chunks of CHUNK bytes so that a cell can stop close to its time budget.
 * Chunk k's compressed data is packed from pk[k] = k * chunk_cap in @packed:
 * every chunk has room for its worst case, because compressors write
 * scratch bytes past what they keep (buddy_entry_encode() the whole stream
 * before a raw fallback, zstd a block it then stores raw) and a chunk is
 * compressed again after the next one.
 */
#define CHUNK		(1u << 20)

struct bufs {
	u8 *src;		/* input, len bytes */
	u8 *dst;		/* decoded output, len bytes */
	u8 *packed;		/* compressed data, packed */
	u32 *meta;		/* per entry: size code; per page: length */
	size_t *pk;		/* per chunk: its offset in packed */
	size_t cap;		/* bytes of src/dst */
	size_t len;		/* bytes of the input measured now */
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
};

/* Bytes of chunk @k: CHUNK, or less for the last one (a multiple of PAGE). */
static inline size_t chunk_len(const struct bufs *b, size_t k)
{
	size_t left = b->len - k * CHUNK;

	return left < CHUNK ? left : CHUNK;
}

/*
 * One chunk of each operation: chunk @k (chunk_len() bytes at k * CHUNK).
 * The compressors return the bytes they stored.
 */
static size_t chunk_memcpy(struct bufs *b, size_t k)
{
	memcpy(b->dst + k * CHUNK, b->src + k * CHUNK, chunk_len(b, k));
	return chunk_len(b, k);
}

static size_t chunk_encode(const struct buddy_codec *c, struct bufs *b,
			   size_t k)
{
	size_t e = k * (CHUNK / BUDDY_ENTRY_BYTES);
	size_t end = e + chunk_len(b, k) / BUDDY_ENTRY_BYTES;
	size_t out = b->pk[k];

	for (; e < end; e++) {
		unsigned int code = buddy_entry_encode(c,
				b->src + e * BUDDY_ENTRY_BYTES,
				b->packed + out);

		b->meta[e] = code;
		out += buddy_code_bytes(code);
	}
	return out - b->pk[k];
}

static size_t chunk_classify(const struct buddy_codec *c, struct bufs *b,
			     size_t k)
{
	size_t e = k * (CHUNK / BUDDY_ENTRY_BYTES);
	size_t end = e + chunk_len(b, k) / BUDDY_ENTRY_BYTES;
	size_t out = 0;

	for (; e < end; e++)
		out += buddy_code_bytes(buddy_entry_classify(c,
				b->src + e * BUDDY_ENTRY_BYTES));
	return out;
}

/* Entries handed to buddy_entries_decode() at a time. */
#define DECODE_BATCH	64

/* Decoders return 0, or 1 when an entry or page did not decode. */
static size_t chunk_decode(const struct buddy_codec *c, struct bufs *b,
			   size_t k)
{
	size_t e = k * (CHUNK / BUDDY_ENTRY_BYTES);
	size_t end = e + chunk_len(b, k) / BUDDY_ENTRY_BYTES;
	size_t in = b->pk[k];
	const u8 *stored[DECODE_BATCH];
	unsigned int j, n;
	int err = 0;

	for (; e < end; e += n) {
		n = end - e < DECODE_BATCH ? end - e : DECODE_BATCH;
		for (j = 0; j < n; j++) {
			stored[j] = b->packed + in;
			in += buddy_code_bytes(b->meta[e + j]);
		}
		err |= buddy_entries_decode(c, b->meta + e, stored,
					    b->dst + e * BUDDY_ENTRY_BYTES, n);
	}
	return err != 0;
}

/* Page lengths go to meta[] (indexed by page). */
static size_t chunk_lz4_comp(struct bufs *b, size_t k)
{
	size_t p = k * (CHUNK / PAGE), end = p + chunk_len(b, k) / PAGE;
	size_t out = b->pk[k];
	int bound = LZ4_compressBound(PAGE);

	for (; p < end; p++) {
		int n = LZ4_compress_default((const char *)b->src + p * PAGE,
					     (char *)b->packed + out, PAGE,
					     bound);
		b->meta[p] = n;
		out += n;
	}
	return out - b->pk[k];
}

static size_t chunk_lz4_decomp(struct bufs *b, size_t k)
{
	size_t p = k * (CHUNK / PAGE), end = p + chunk_len(b, k) / PAGE;
	size_t in = b->pk[k];
	int err = 0;

	for (; p < end; p++) {
		int n = LZ4_decompress_safe((const char *)b->packed + in,
					    (char *)b->dst + p * PAGE,
					    b->meta[p], PAGE);
		err |= n != PAGE;
		in += b->meta[p];
	}
	return err;
}

static size_t chunk_zstd_comp(struct bufs *b, size_t k)
{
	size_t p = k * (CHUNK / PAGE), end = p + chunk_len(b, k) / PAGE;
	size_t out = b->pk[k], bound = ZSTD_compressBound(PAGE);

	for (; p < end; p++) {
		size_t n = ZSTD_compressCCtx(b->cctx, b->packed + out, bound,
					     b->src + p * PAGE, PAGE, 1);
		if (ZSTD_isError(n))
			n = 0;		/* caught by the round trip check */
		b->meta[p] = n;
		out += n;
	}
	return out - b->pk[k];
}

static size_t chunk_zstd_decomp(struct bufs *b, size_t k)
{
	size_t p = k * (CHUNK / PAGE), end = p + chunk_len(b, k) / PAGE;
	size_t in = b->pk[k];
	int err = 0;

	for (; p < end; p++) {
		size_t n = ZSTD_decompressDCtx(b->dctx, b->dst + p * PAGE,
					       PAGE, b->packed + in,
					       b->meta[p]);
		err |= n != PAGE;
		in += b->meta[p];
	}
	return err;
}

static size_t run_chunk(int op, int col, struct bufs *b, size_t k)
{
	const struct buddy_codec *c = col_codec[col];

	switch (col) {
	case COL_MEMCPY:
		return chunk_memcpy(b, k);
	case COL_LZ4:
		return op == OP_COMP ? chunk_lz4_comp(b, k) :
				       chunk_lz4_decomp(b, k);
	case COL_ZSTD:
		return op == OP_COMP ? chunk_zstd_comp(b, k) :
				       chunk_zstd_decomp(b, k);
	default:
		if (op == OP_COMP)
			return chunk_encode(c, b, k);
		if (op == OP_SIZE)
			return chunk_classify(c, b, k);
		return chunk_decode(c, b, k);
	}
}

/* Stored bytes of the LZ4/zstd pages, a page that did not shrink at PAGE. */
static size_t page_bytes(struct bufs *b, size_t len)
{
	size_t p, sum = 0;

	for (p = 0; p < len / PAGE; p++)
		sum += b->meta[p] < PAGE ? b->meta[p] : PAGE;
	return sum;
}

/* --- timing ----------------------------------------------------------------- */

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double min_cpu_share = 1.0;	/* worst CPU time / wall time of a cell */
static int busy_cells;

/*
 * One cell: a first full pass over the @len bytes (its sum is returned in
 * *@first: stored bytes of a compressor, error count of a decompressor),
 * then more chunks, round robin, until cell_seconds have passed.  Returns
 * GB/s of wall-clock (CLOCK_MONOTONIC) time, and in *@cpu_gbps the same by
 * the thread's CPU time.  Cells in which the thread got less than 90% of
 * the CPU are counted: the machine was busy.
 */
static double time_op(int op, int col, struct bufs *b, size_t len,
		      size_t *first, double *cpu_gbps)
{
	size_t k, nchunks = DIV_ROUND_UP(len, CHUNK), sum = 0, done = len;
	double t0 = now(), c0 = cpu_now(), t, c, share;

	for (k = 0; k < nchunks; k++)
		sum += run_chunk(op, col, b, k);
	for (k = 0; (t = now() - t0) < cell_seconds; k = (k + 1) % nchunks) {
		sink += run_chunk(op, col, b, k);
		done += chunk_len(b, k);
	}
	c = cpu_now() - c0;
	share = c / t;
	*cpu_gbps = (double)done / c / 1e9;
	if (share < min_cpu_share)
		min_cpu_share = share;
	if (share < 0.9)
		busy_cells++;
	if (first)
		*first = sum;
	return (double)done / t / 1e9;
}

static int check_roundtrip(struct bufs *b, size_t len, size_t errs,
			   const char *row, const char *col)
{
	if (!errs && !memcmp(b->src, b->dst, len))
		return 0;
	fprintf(stderr, "codec_bench: %s: %s round trip failed\n", row, col);
	return -1;
}

/* Measure every column on the @len bytes (a multiple of PAGE) in b->src. */
static int measure(struct row *r, struct bufs *b, size_t len)
{
	size_t stored, sized, errs;
	int col, op, err = 0;

	for (op = 0; op < OP_NR; op++)
		for (col = 0; col < COL_NR; col++)
			r->gbps[op][col] = NA;
	r->len = len;
	b->len = len;

	if (len % CHUNK)
		fprintf(stderr, "codec_bench: %s (%zu KiB) ...\n", r->name,
			len >> 10);
	else
		fprintf(stderr, "codec_bench: %s (%zu MiB) ...\n", r->name,
			len >> 20);

	r->gbps[OP_COMP][COL_MEMCPY] = time_op(OP_COMP, COL_MEMCPY, b, len,
				NULL, &r->cpu_gbps[OP_COMP][COL_MEMCPY]);
	r->gbps[OP_DECOMP][COL_MEMCPY] = r->gbps[OP_COMP][COL_MEMCPY];
	r->ratio[COL_MEMCPY] = 1.0;

	for (col = COL_BPC; col < COL_NR; col++) {
		const char *name = col_names[col];

		r->gbps[OP_COMP][col] = time_op(OP_COMP, col, b, len, &stored,
						&r->cpu_gbps[OP_COMP][col]);
		if (col == COL_LZ4 || col == COL_ZSTD)
			stored = page_bytes(b, len);
		r->ratio[col] = stored ? (double)len / stored : 1.0 / 0.0;
		if (col_codec[col]) {
			r->gbps[OP_SIZE][col] = time_op(OP_SIZE, col, b, len,
					&sized, &r->cpu_gbps[OP_SIZE][col]);
			if (sized != stored) {
				fprintf(stderr, "codec_bench: %s: %s size-only and compress disagree\n",
					r->name, name);
				err = -1;
			}
		}
		memset(b->dst, 0xa5, len);
		r->gbps[OP_DECOMP][col] = time_op(OP_DECOMP, col, b, len,
					&errs, &r->cpu_gbps[OP_DECOMP][col]);
		if (check_roundtrip(b, len, errs, r->name, name))
			err = -1;
	}
	return err;
}

/* --- output ----------------------------------------------------------------- */

static void print_table(const char *title, struct row *rows, int nrows,
			int op, bool ratio)
{
	int i, col;

	printf("\n%s\n%-24s", title, "data");
	for (col = 0; col < COL_NR; col++)
		printf(" %7s", col_names[col]);
	putchar('\n');
	for (i = 0; i < nrows; i++) {
		printf("%-24s", rows[i].name);
		for (col = 0; col < COL_NR; col++) {
			double v = ratio ? rows[i].ratio[col] :
					   rows[i].gbps[op][col];

			if (!ratio && v == NA)
				printf(" %7s", "-");
			else if (v > 1e6)
				printf(" %7s", "inf");
			else
				printf(" %7.2f", v);
		}
		putchar('\n');
	}
}

/* --- the goals, judged on paired rounds ------------------------------------ */

#define GOAL_ROUNDS	24
#define GOAL_COLS	4	/* memcpy, bpc, bpc-scalar, lz4 */

static const int goal_col[GOAL_COLS] = {
	COL_MEMCPY, COL_BPC, COL_BPCS, COL_LZ4
};
static const char *const op_names[OP_NR] = {
	"compress", "size-only", "decompress",
};

/* Goal of @op on a row: a factor of lz4, or (size-only) GB/s. */
static double goal_target(int op, const struct row *r)
{
	if (op == OP_SIZE)
		return r->is_mixed ? 4.0 : 0;
	if (op == OP_COMP && r->is_mixed)
		return 2.0;
	return 1.0;
}

/*
 * Run chunk @k of @op for column @col on @b, writing compressed data to
 * @st (a copy of @b whose packed/meta are that codec's own): GB/s by the
 * wall clock into *@wall and by the thread's CPU time into *@cpu.
 */
static void goal_cell(int op, int col, struct bufs *st, size_t k,
		      double *wall, double *cpu)
{
	double t0 = now(), c0 = cpu_now(), t, c;

	sink += run_chunk(col == COL_MEMCPY ? OP_COMP : op, col, st, k);
	t = now() - t0;
	c = cpu_now() - c0;
	*wall = chunk_len(st, k) / t / 1e9;
	*cpu = chunk_len(st, k) / c / 1e9;
}

/*
 * The goals of row @r, whose data is in @b: GOAL_ROUNDS rounds per
 * operation, each one chunk (in turn) through memcpy, bpc, bpc-scalar and
 * lz4, the order turning by one every round.  bpc and lz4 keep their
 * compressed data apart (@bst, @lst) so that the decompress rounds decode
 * their own.
 */
static void judge(struct row *r, struct bufs *b, struct bufs *bst,
		  struct bufs *lst)
{
	static double rate[CLK_NR][GOAL_COLS][GOAL_ROUNDS], scratch[GOAL_ROUNDS];
	size_t nchunks = DIV_ROUND_UP(b->len, CHUNK), k;
	int op, clk, round, i;

	bst->len = lst->len = b->len;
	for (k = 0; k < nchunks; k++) {	/* what the decoders read */
		run_chunk(OP_COMP, COL_BPC, bst, k);
		run_chunk(OP_COMP, COL_LZ4, lst, k);
	}
	for (op = 0; op < OP_NR; op++) {
		for (round = 0; round < GOAL_ROUNDS; round++) {
			k = round % nchunks;
			for (i = 0; i < GOAL_COLS; i++) {
				int c = (i + round) % GOAL_COLS;
				struct bufs *st = goal_col[c] == COL_LZ4 ? lst :
						  goal_col[c] == COL_MEMCPY ? b : bst;

				if (op == OP_SIZE && goal_col[c] == COL_LZ4) {
					rate[CLK_WALL][c][round] = NA;
					rate[CLK_CPU][c][round] = NA;
					continue;
				}
				goal_cell(op, goal_col[c], st, k,
					  &rate[CLK_WALL][c][round],
					  &rate[CLK_CPU][c][round]);
			}
		}
		for (clk = 0; clk < CLK_NR; clk++) {
			struct goal *g = &r->goal[op][clk];
			double (*rt)[GOAL_ROUNDS] = rate[clk];

			memcpy(scratch, rt[1], sizeof(scratch));
			g->bpc = buddy_median(scratch, GOAL_ROUNDS);
			memcpy(scratch, rt[2], sizeof(scratch));
			g->scalar = buddy_median(scratch, GOAL_ROUNDS);
			buddy_paired_judge(rt[1], rt[0], GOAL_ROUNDS, 0, scratch,
					   &g->mc);
			buddy_paired_judge(rt[2], rt[0], GOAL_ROUNDS, 0, scratch,
					   &g->smc);
			if (op != OP_SIZE)
				buddy_paired_judge(rt[3], rt[0], GOAL_ROUNDS, 0,
						   scratch, &g->lmc);
			if (op != OP_SIZE) {
				buddy_paired_judge(rt[1], rt[3], GOAL_ROUNDS,
						   goal_target(op, r), scratch,
						   &g->x);
				buddy_paired_judge(rt[2], rt[3], GOAL_ROUNDS,
						   goal_target(op, r), scratch,
						   &g->xs);
			} else {
				g->x.met = g->bpc >= goal_target(op, r);
				g->x.n = GOAL_ROUNDS;
			}
			g->judged = op != OP_SIZE || r->is_mixed;
		}
	}
}

static const char *verdict(const struct goal *g)
{
	return !g->x.n ? "unjudged" : g->x.met ? "met" : "NOT met";
}

static void print_goals(const struct row *rows, int nrows)
{
	char goal[32], x[32], sc[16], xw[16], lmc[16];
	int op, i;

	printf("\nGoals, judged on %d paired rounds per data class and operation (1 MiB\n"
	       "through memcpy, bpc (%s), bpc-scalar and lz4 in turn): x = median of the\n"
	       "rounds' bpc/lz4 ratios [quartiles], sc = bpc-scalar/lz4 (size-only:\n"
	       "bpc-scalar's GB/s); the fraction of memcpy (the limit) each reaches,\n"
	       "median of the rounds' ratios: mc = bpc, smc = bpc-scalar, lmc = lz4\n",
	       GOAL_ROUNDS, buddy_impl_name(col_codec[COL_BPC]->impl));
	printf("%-10s %-9s %-10s | %-64s | %s\n", "", "", "",
	       "by thread CPU time", "by wall clock");
	printf("%-10s %-9s %-10s | %6s %-19s %6s %-8s %5s %5s %5s | %6s %s\n",
	       "operation", "data", "goal", "GB/s", "x lz4", "sc", "", "mc",
	       "smc", "lmc", "x lz4", "");
	for (op = 0; op < OP_NR; op++) {
		for (i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];
			const struct goal *c = &r->goal[op][CLK_CPU];
			const struct goal *w = &r->goal[op][CLK_WALL];

			if (!c->judged)
				continue;
			if (op == OP_SIZE) {
				snprintf(goal, sizeof(goal), ">= %.0f GB/s",
					 goal_target(op, r));
				snprintf(x, sizeof(x), "-");
				snprintf(sc, sizeof(sc), "%.2f", c->scalar);
				snprintf(xw, sizeof(xw), "-");
				snprintf(lmc, sizeof(lmc), "-");
			} else {
				snprintf(goal, sizeof(goal), ">= %.1fx",
					 goal_target(op, r));
				snprintf(x, sizeof(x), "%.2fx [%.2f-%.2f]",
					 c->x.median, c->x.q1, c->x.q3);
				snprintf(sc, sizeof(sc), "%.2fx", c->xs.median);
				snprintf(xw, sizeof(xw), "%.2fx", w->x.median);
				snprintf(lmc, sizeof(lmc), "%.2f", c->lmc.median);
			}
			printf("%-10s %-9.9s %-10s | %6.2f %-19s %6s %-8s %5.2f %5.2f %5s | %6s %s\n",
			       op_names[op], r->name, goal, c->bpc, x, sc,
			       verdict(c), c->mc.median, c->smc.median, lmc, xw,
			       verdict(w));
		}
	}
}

/* One GOAL line per goal and clock: the rows that miss it named. */
static void print_goal_lines(const struct row *rows, int nrows)
{
	static const struct {
		int op;
		bool mixed_only;
		const char *what;
	} goals[] = {
		{ OP_COMP, false, "BPC compress >= 1.0x LZ4 compress on every class" },
		{ OP_COMP, true, "BPC compress >= 2.0x LZ4 compress on mixed" },
		{ OP_DECOMP, false, "BPC decompress >= 1.0x LZ4 decompress on every class" },
		{ OP_SIZE, true, "BPC size-only >= 4 GB/s on mixed" },
	};
	static const char *const clk_names[CLK_NR] = {
		"by thread CPU time", "by wall clock",
	};
	unsigned int gi;
	int clk, i;

	putchar('\n');
	for (gi = 0; gi < ARRAY_SIZE(goals); gi++) {
		for (clk = 0; clk < CLK_NR; clk++) {
			char miss[512] = "";
			int n = 0, judged = 0;

			for (i = 0; i < nrows; i++) {
				const struct row *r = &rows[i];
				const struct goal *g = &r->goal[goals[gi].op][clk];
				size_t at = strlen(miss);

				/* every class: those whose goal is 1.0x */
				if (!g->judged || (goals[gi].mixed_only ?
				    !r->is_mixed :
				    goal_target(goals[gi].op, r) != 1.0))
					continue;
				judged++;
				if (g->x.met)
					continue;
				n++;
				if (goals[gi].op == OP_SIZE)
					snprintf(miss + at, sizeof(miss) - at,
						 "%s%s %.2f GB/s", at ? ", " : "",
						 r->name, g->bpc);
				else
					snprintf(miss + at, sizeof(miss) - at,
						 "%s%s %.2fx", at ? ", " : "",
						 r->name, g->x.median);
			}
			if (!judged)
				continue;
			printf("GOAL %s %s: %s%s%s%s\n", goals[gi].what,
			       clk_names[clk], n ? "NOT MET" : "MET",
			       n ? " (" : "", miss, n ? ")" : "");
		}
	}
}

/* --- inputs ----------------------------------------------------------------- */

static int load_file(const char *path, u8 *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0) {
		fprintf(stderr, "codec_bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (got < cap) {
		ssize_t n = read(fd, buf + got, cap - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "codec_bench: %s: %s\n", path,
				strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (!got) {
		fprintf(stderr, "codec_bench: %s: empty\n", path);
		return -1;
	}
	*len = (got + PAGE - 1) / PAGE * PAGE;
	memset(buf + got, 0, *len - got);
	return 0;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "codec_bench: out of memory (%zu bytes)\n", n);
		exit(1);
	}
	memset(p, 0, n);	/* fault the pages in before timing */
	return p;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "codec_bench: cannot pin to CPU %d: %s\n", cpu,
			strerror(errno));
		return -1;
	}
	return cpu;
}

static void usage(FILE *f)
{
	int i;

	fprintf(f,
		"usage: codec_bench [-t SECONDS] [-m MIB] [-C CPU] [-c CLASS,...] [FILE...]\n"
		"  -t  seconds per cell (default 0.2)\n"
		"  -m  MiB per data class and per FILE (default 32)\n"
		"  -C  CPU to pin to (default: the current one)\n"
		"  -c  data classes (default: all):");
	for (i = 0; i < DATAGEN_NR; i++)
		fprintf(f, " %s", datagen_class_name(i));
	fputc('\n', f);
}

/*
 * The buffers of @cap bytes a run measures in (@b), and the goal pass's
 * own compressed data for bpc (@bst) and for lz4 (@lst); false when zstd's
 * contexts cannot be made.
 */
static bool alloc_bufs(struct bufs *b, struct bufs *bst, struct bufs *lst,
		       size_t cap)
{
	size_t chunk_cap;
	int i;

	b->cap = cap;
	/* Worst case of a chunk's packed data, plus one stream of slack. */
	chunk_cap = LZ4_compressBound(PAGE) * (CHUNK / PAGE);
	if (ZSTD_compressBound(PAGE) * (CHUNK / PAGE) > chunk_cap)
		chunk_cap = ZSTD_compressBound(PAGE) * (CHUNK / PAGE);
	chunk_cap += BUDDY_STREAM_MAX + 63;
	chunk_cap &= ~(size_t)63;
	b->src = xmalloc(b->cap);
	b->dst = xmalloc(b->cap);
	b->packed = xmalloc(chunk_cap * (b->cap / CHUNK));
	b->meta = xmalloc(b->cap / BUDDY_ENTRY_BYTES * sizeof(*b->meta));
	b->pk = xmalloc(b->cap / CHUNK * sizeof(*b->pk));
	for (i = 0; i < (int)(b->cap / CHUNK); i++)
		b->pk[i] = i * chunk_cap;
	b->cctx = ZSTD_createCCtx();
	b->dctx = ZSTD_createDCtx();
	*bst = *b;
	bst->packed = xmalloc(chunk_cap * (b->cap / CHUNK));
	bst->meta = xmalloc(b->cap / BUDDY_ENTRY_BYTES * sizeof(*b->meta));
	*lst = *bst;
	lst->packed = xmalloc(chunk_cap * (b->cap / CHUNK));
	lst->meta = xmalloc(b->cap / BUDDY_ENTRY_BYTES * sizeof(*b->meta));
	return b->cctx && b->dctx;
}

static void free_bufs(struct bufs *b, struct bufs *bst, struct bufs *lst)
{
	ZSTD_freeCCtx(b->cctx);
	ZSTD_freeDCtx(b->dctx);
	free(bst->packed);
	free(bst->meta);
	free(lst->packed);
	free(lst->meta);
	free(b->pk);
	free(b->meta);
	free(b->packed);
	free(b->dst);
	free(b->src);
}

int main(int argc, char **argv)
{
	bool want[DATAGEN_NR];
	struct bufs b = { 0 }, bst, lst;
	struct row *rows;
	size_t mib = 32, len;
	int cpu = -1, opt, i, nrows = 0, err = 0;
	char *list = NULL;
	double t_start = now();

	while ((opt = getopt(argc, argv, "t:m:C:c:h")) != -1) {
		switch (opt) {
		case 't':
			cell_seconds = atof(optarg);
			break;
		case 'm':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'C':
			cpu = atoi(optarg);
			break;
		case 'c':
			list = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (cell_seconds <= 0 || !mib || mib > 4096) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < DATAGEN_NR; i++)
		want[i] = !list;
	if (list) {
		char *save = NULL, *tok;

		for (tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			int c = datagen_class_by_name(tok);

			if (c < 0) {
				fprintf(stderr, "codec_bench: unknown class '%s'\n",
					tok);
				usage(stderr);
				return 2;
			}
			want[c] = true;
		}
	}

	col_codec[COL_BPC] = buddy_codec_by_name("bpc");
	cpu = pin_cpu(cpu);
	if (!alloc_bufs(&b, &bst, &lst, mib << 20)) {
		fprintf(stderr, "codec_bench: cannot create zstd contexts\n");
		return 1;
	}
	rows = xmalloc((DATAGEN_NR + argc) * sizeof(*rows));

	for (i = 0; i < DATAGEN_NR; i++) {
		struct row *r = &rows[nrows];

		if (!want[i])
			continue;
		snprintf(r->name, sizeof(r->name), "%s", datagen_class_name(i));
		datagen_fill(i, SEED, b.src, b.cap);
		if (measure(r, &b, b.cap))
			err = 1;
		r->is_mixed = i == DATAGEN_MIXED;
		judge(r, &b, &bst, &lst);
		nrows++;
	}
	for (i = optind; i < argc; i++) {
		struct row *r = &rows[nrows];
		const char *base = strrchr(argv[i], '/');

		if (load_file(argv[i], b.src, b.cap, &len)) {
			err = 1;
			continue;
		}
		snprintf(r->name, sizeof(r->name), "file:%s",
			 base ? base + 1 : argv[i]);
		if (measure(r, &b, len))
			err = 1;
		judge(r, &b, &bst, &lst);
		nrows++;
	}

	printf("codec_bench: CPU %d, %.2f s per cell, %zu MiB per class, "
	       "GB/s = 1e9 uncompressed bytes/s on one core\n"
	       "bpc/bpc-sc(alar)/zvc/bdi/fpc per 128 B entry (buddy_entry_encode/classify/decode); "
	       "lz4, zstd-1 per 4 KiB page\n"
	       "bpc: the %s implementation (best this CPU runs: %s; BUDDY_CODEC_IMPL)\n",
	       cpu, cell_seconds, mib,
	       buddy_impl_name(col_codec[COL_BPC]->impl),
	       buddy_impl_name(buddy_impl_best()));
	print_table("Compress GB/s", rows, nrows, OP_COMP, false);
	print_table("Size-only GB/s (size code without writing the stream)",
		    rows, nrows, OP_SIZE, false);
	print_table("Decompress GB/s", rows, nrows, OP_DECOMP, false);
	print_table("Compression ratio (bpc/zvc/bdi/fpc: Buddy sizes 0/8/32/64/96/128 B; lz4, zstd-1: bytes per 4 KiB page)",
		    rows, nrows, 0, true);

	if (busy_cells)
		printf("\nnote: %d cells got less than 90%% of their CPU (at worst %.0f%%):\n"
		       "the machine was busy; their GB/s are low by as much.\n",
		       busy_cells, 100 * min_cpu_share);
	print_goals(rows, nrows);
	print_goal_lines(rows, nrows);
	printf("(total %.1f s)\n", now() - t_start);
	if (sink == 42)
		putchar('\n');
	free(rows);
	free_bufs(&b, &bst, &lst);
	return err;
}
