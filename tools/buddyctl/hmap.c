// SPDX-License-Identifier: GPL-2.0
/*
 * hmap.c - geometry, downsampling, palette and rendering of the heatmap
 * (hmap.h).  Pure: no device, no files; selftests/tools/hmap_test.c runs it
 * natively.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const struct hmap_rgb hmap_palette[BUDDY_CODE_NR] = {
	[BUDDY_CODE_ZERO] = { 0x08, 0x30, 0x6b },	/* deep blue */
	[BUDDY_CODE_C8]   = { 0x21, 0x71, 0xd5 },	/* blue */
	[BUDDY_CODE_C32]  = { 0x20, 0xc0, 0xa0 },	/* cyan-green */
	[BUDDY_CODE_C64]  = { 0xf5, 0xe0, 0x20 },	/* yellow */
	[BUDDY_CODE_C96]  = { 0xf5, 0x82, 0x1e },	/* orange */
	[BUDDY_CODE_RAW]  = { 0xc8, 0x1e, 0x1e },	/* red */
};
const struct hmap_rgb hmap_empty = { 0xe6, 0xe6, 0xe6 };
const char *const hmap_code_names[BUDDY_CODE_NR] = {
	"ZERO", "C8", "C32", "C64", "C96", "RAW",
};
static const char glyphs[] = ".:-=+#";

int hmap_geometry(uint64_t entries, unsigned int width, uint64_t max_rows,
		  struct hmap_geom *g)
{
	uint64_t b = 1;

	if (!width || width > HMAP_MAX_WIDTH || !max_rows ||
	    max_rows > HMAP_MAX_ROWS)
		return -EINVAL;
	/* rows = ceil(E / (B * W)) <= R  <=>  E <= B * W * R */
	while ((entries + b - 1) / b > (uint64_t)width * max_rows)
		b <<= 1;
	g->entries = entries;
	g->width = width;
	g->block = b;
	g->cells = (entries + b - 1) / b;
	g->rows = (g->cells + width - 1) / width;
	return 0;
}

int hmap_acc_init(struct hmap_acc *a, const struct hmap_geom *g)
{
	size_t n = g->cells ? g->cells : 1;

	a->g = *g;
	a->sum = calloc(n, sizeof(*a->sum));
	a->cnt = calloc(n, sizeof(*a->cnt));
	if (!a->sum || !a->cnt) {
		hmap_acc_free(a);
		return -ENOMEM;
	}
	return 0;
}

void hmap_acc_add(struct hmap_acc *a, uint64_t first, const uint8_t *codes,
		  uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n && first + i < a->g.entries; i++) {
		uint64_t cell = (first + i) / a->g.block;
		unsigned int c = codes[i];

		a->sum[cell] += c < BUDDY_CODE_NR ? c : BUDDY_CODE_RAW;
		a->cnt[cell]++;
	}
}

void hmap_acc_means(const struct hmap_acc *a, float *mean)
{
	uint64_t c;

	for (c = 0; c < a->g.cells; c++)
		mean[c] = a->cnt[c] ? (float)((double)a->sum[c] / a->cnt[c]) : 0;
}

void hmap_acc_free(struct hmap_acc *a)
{
	free(a->sum);
	free(a->cnt);
	a->sum = NULL;
	a->cnt = NULL;
}

struct hmap_rgb hmap_color(float mean)
{
	const struct hmap_rgb *p = hmap_palette;
	struct hmap_rgb c;
	float t;
	int lo;

	if (!(mean > 0))	/* also NaN */
		return p[0];
	if (mean >= BUDDY_CODE_RAW)
		return p[BUDDY_CODE_RAW];
	lo = (int)floorf(mean);
	t = mean - lo;
	c.r = (uint8_t)floorf(p[lo].r + (p[lo + 1].r - p[lo].r) * t + 0.5f);
	c.g = (uint8_t)floorf(p[lo].g + (p[lo + 1].g - p[lo].g) * t + 0.5f);
	c.b = (uint8_t)floorf(p[lo].b + (p[lo + 1].b - p[lo].b) * t + 0.5f);
	return c;
}

static unsigned int cube_index(unsigned int v, unsigned int *level)
{
	static const unsigned int lv[6] = { 0, 95, 135, 175, 215, 255 };
	unsigned int i, best = 0;

	for (i = 1; i < 6; i++)
		if (abs((int)lv[i] - (int)v) < abs((int)lv[best] - (int)v))
			best = i;
	*level = lv[best];
	return best;
}

static unsigned int sq(int d)
{
	return d * d;
}

unsigned int hmap_xterm256(struct hmap_rgb c)
{
	unsigned int lr, lg, lb, ir, ig, ib, avg, k, grey, dc, dg;

	ir = cube_index(c.r, &lr);
	ig = cube_index(c.g, &lg);
	ib = cube_index(c.b, &lb);
	dc = sq(c.r - lr) + sq(c.g - lg) + sq(c.b - lb);
	avg = (c.r + c.g + c.b) / 3;
	k = avg < 8 ? 0 : (avg - 8 + 5) / 10;
	if (k > 23)
		k = 23;
	grey = 8 + 10 * k;
	dg = sq(c.r - grey) + sq(c.g - grey) + sq(c.b - grey);
	if (dg < dc)
		return 232 + k;
	return 16 + 36 * ir + 6 * ig + ib;
}

static unsigned int nearest_code(float mean)
{
	if (!(mean > 0))
		return 0;
	if (mean >= BUDDY_CODE_RAW)
		return BUDDY_CODE_RAW;
	return (unsigned int)lrintf(mean);
}

char hmap_glyph(float mean)
{
	return glyphs[nearest_code(mean)];
}

static void put_color(FILE *out, enum hmap_color_mode mode, bool bg,
		      struct hmap_rgb c)
{
	if (mode == HMAP_TRUECOLOR)
		fprintf(out, "\033[%d;2;%u;%u;%um", bg ? 48 : 38, c.r, c.g, c.b);
	else
		fprintf(out, "\033[%d;5;%um", bg ? 48 : 38, hmap_xterm256(c));
}

static bool same_rgb(struct hmap_rgb a, struct hmap_rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

unsigned int hmap_render_text(FILE *out, const float *mean,
			      const struct hmap_geom *g,
			      enum hmap_color_mode mode)
{
	unsigned int lines = 0;
	uint64_t r, c;

	if (mode == HMAP_PLAIN) {
		for (r = 0; r < g->rows; r++, lines++) {
			for (c = 0; c < g->width && r * g->width + c < g->cells; c++)
				fputc(hmap_glyph(mean[r * g->width + c]), out);
			fputc('\n', out);
		}
		return lines;
	}
	for (r = 0; r < g->rows; r += 2, lines++) {
		/* 0: nothing set yet; 1: colour; 2: default */
		int fg_state = 0, bg_state = 0;
		struct hmap_rgb fg = { 0 }, bgc = { 0 };

		for (c = 0; c < g->width; c++) {
			uint64_t up = r * g->width + c, lo = up + g->width;
			bool has_up = up < g->cells;
			bool has_lo = r + 1 < g->rows && lo < g->cells;
			struct hmap_rgb f, b;

			if (!has_up)
				break;
			f = hmap_color(mean[up]);
			if (fg_state != 1 || !same_rgb(f, fg)) {
				put_color(out, mode, false, f);
				fg = f;
				fg_state = 1;
			}
			if (has_lo) {
				b = hmap_color(mean[lo]);
				if (bg_state != 1 || !same_rgb(b, bgc)) {
					put_color(out, mode, true, b);
					bgc = b;
					bg_state = 1;
				}
			} else if (bg_state != 2) {
				fputs("\033[49m", out);
				bg_state = 2;
			}
			fputs("\u2580", out);
		}
		fputs("\033[0m\n", out);
	}
	return lines;
}

void hmap_legend_text(FILE *out, enum hmap_color_mode mode)
{
	unsigned int k;

	fputs("legend:", out);
	for (k = 0; k < BUDDY_CODE_NR; k++) {
		if (mode == HMAP_PLAIN) {
			fprintf(out, " %c %s", glyphs[k], hmap_code_names[k]);
		} else {
			fputc(' ', out);
			put_color(out, mode, false, hmap_palette[k]);
			fprintf(out, "\u2588\u2588\033[0m %s", hmap_code_names[k]);
		}
	}
	fputc('\n', out);
}

/* ---- raster ----------------------------------------------------------- */

/* 3x5 glyphs, one row per byte (bit 2 = left column), for the legend. */
static const struct {
	char c;
	uint8_t row[5];
} font[] = {
	{ '0', { 7, 5, 5, 5, 7 } }, { '1', { 2, 6, 2, 2, 7 } },
	{ '2', { 7, 1, 7, 4, 7 } }, { '3', { 7, 1, 7, 1, 7 } },
	{ '4', { 5, 5, 7, 1, 1 } }, { '5', { 7, 4, 7, 1, 7 } },
	{ '6', { 7, 4, 7, 5, 7 } }, { '7', { 7, 1, 1, 1, 1 } },
	{ '8', { 7, 5, 7, 5, 7 } }, { '9', { 7, 5, 7, 1, 7 } },
	{ 'A', { 2, 5, 7, 5, 5 } }, { 'B', { 6, 5, 6, 5, 6 } },
	{ 'C', { 3, 4, 4, 4, 3 } }, { 'D', { 6, 5, 5, 5, 6 } },
	{ 'E', { 7, 4, 6, 4, 7 } }, { 'F', { 7, 4, 6, 4, 4 } },
	{ 'G', { 3, 4, 5, 5, 3 } }, { 'H', { 5, 5, 7, 5, 5 } },
	{ 'I', { 7, 2, 2, 2, 7 } }, { 'J', { 1, 1, 1, 5, 2 } },
	{ 'K', { 5, 5, 6, 5, 5 } }, { 'L', { 4, 4, 4, 4, 7 } },
	{ 'M', { 5, 7, 7, 5, 5 } }, { 'N', { 6, 5, 5, 5, 5 } },
	{ 'O', { 2, 5, 5, 5, 2 } }, { 'P', { 6, 5, 6, 4, 4 } },
	{ 'Q', { 2, 5, 5, 6, 3 } }, { 'R', { 6, 5, 6, 5, 5 } },
	{ 'S', { 3, 4, 2, 1, 6 } }, { 'T', { 7, 2, 2, 2, 2 } },
	{ 'U', { 5, 5, 5, 5, 7 } }, { 'V', { 5, 5, 5, 5, 2 } },
	{ 'W', { 5, 5, 7, 7, 5 } }, { 'X', { 5, 5, 2, 5, 5 } },
	{ 'Y', { 5, 5, 2, 2, 2 } }, { 'Z', { 7, 1, 2, 4, 7 } },
	{ '=', { 0, 7, 0, 7, 0 } }, { '/', { 1, 1, 2, 4, 4 } },
	{ '-', { 0, 0, 7, 0, 0 } }, { ':', { 0, 2, 0, 2, 0 } },
	{ '.', { 0, 0, 0, 0, 2 } },
};

#define FONT_SCALE	2			/* pixels per font dot */
#define GLYPH_ADV	(4 * FONT_SCALE)	/* 3 dots and a gap */
#define GLYPH_H		(5 * FONT_SCALE)
#define SWATCH		10
#define SWATCH_GAP	4
#define ITEM_GAP	10
#define LEG_MARGIN	4
#define LINE_H		(GLYPH_H + 4)

struct legend_item {
	char text[40];
	int code;		/* -1: text only */
};

static unsigned int legend_items(uint64_t block, struct legend_item *it)
{
	unsigned int n, k;

	for (n = 0, k = 0; k < BUDDY_CODE_NR; k++, n++) {
		snprintf(it[n].text, sizeof(it[n].text), "%s",
			 hmap_code_names[k]);
		it[n].code = k;
	}
	if (block > 1) {
		snprintf(it[n].text, sizeof(it[n].text), "1 CELL = %llu ENTRIES",
			 (unsigned long long)block);
		it[n++].code = -1;
	}
	return n;
}

static unsigned int item_width(const struct legend_item *it)
{
	unsigned int tw = strlen(it->text) * GLYPH_ADV - FONT_SCALE;

	return it->code >= 0 ? SWATCH + SWATCH_GAP + tw : tw;
}

/* Lay the items out; fills x, y per item when not NULL. */
static void legend_layout(uint64_t block, unsigned int max_w, unsigned int *w,
			  unsigned int *h, unsigned int *xs, unsigned int *ys)
{
	struct legend_item it[BUDDY_CODE_NR + 1];
	unsigned int n = legend_items(block, it), i, x = LEG_MARGIN, lines = 1;
	unsigned int maxx = 0;

	for (i = 0; i < n; i++) {
		unsigned int iw = item_width(&it[i]);

		/* the block size gets a line of its own */
		if (x > LEG_MARGIN && (it[i].code < 0 ||
				       x + iw + LEG_MARGIN > max_w)) {
			x = LEG_MARGIN;
			lines++;
		}
		if (xs) {
			xs[i] = x;
			ys[i] = LEG_MARGIN + (lines - 1) * LINE_H;
		}
		if (x + iw > maxx)
			maxx = x + iw;
		x += iw + ITEM_GAP;
	}
	*w = maxx + LEG_MARGIN;
	*h = LEG_MARGIN + lines * LINE_H;
}

void hmap_legend_size(uint64_t block, unsigned int max_w, unsigned int *w,
		      unsigned int *h)
{
	legend_layout(block, max_w, w, h, NULL, NULL);
}

static void fill(struct hmap_image *img, unsigned int x, unsigned int y,
		 unsigned int w, unsigned int h, struct hmap_rgb c)
{
	unsigned int i, j;

	for (j = y; j < y + h && j < img->h; j++) {
		uint8_t *p = img->rgb + ((size_t)j * img->w + x) * 3;

		for (i = x; i < x + w && i < img->w; i++) {
			*p++ = c.r;
			*p++ = c.g;
			*p++ = c.b;
		}
	}
}

static void draw_text(struct hmap_image *img, unsigned int x, unsigned int y,
		      const char *s)
{
	static const struct hmap_rgb ink = { 0x20, 0x20, 0x20 };
	size_t f;
	int row, col;

	for (; *s; s++, x += GLYPH_ADV) {
		for (f = 0; f < ARRAY_SIZE(font); f++)
			if (font[f].c == *s)
				break;
		if (f == ARRAY_SIZE(font))
			continue;	/* space, or a character without glyph */
		for (row = 0; row < 5; row++)
			for (col = 0; col < 3; col++)
				if (font[f].row[row] & (4 >> col))
					fill(img, x + col * FONT_SCALE,
					     y + row * FONT_SCALE, FONT_SCALE,
					     FONT_SCALE, ink);
	}
}

int hmap_raster(const float *mean, const struct hmap_geom *g,
		unsigned int scale, bool legend, struct hmap_image *img)
{
	static const struct hmap_rgb white = { 0xff, 0xff, 0xff };
	static const struct hmap_rgb edge = { 0x60, 0x60, 0x60 };
	struct legend_item it[BUDDY_CODE_NR + 1];
	unsigned int xs[BUDDY_CODE_NR + 1], ys[BUDDY_CODE_NR + 1];
	unsigned int grid_w, lw = 0, lh = 0, widest = 0, n, i;
	uint64_t r, c;

	memset(img, 0, sizeof(*img));
	if (!scale || scale > HMAP_MAX_SCALE || !g->rows)
		return -EINVAL;
	grid_w = g->width * scale;
	if (g->rows * scale > 1u << 20)
		return -EINVAL;
	img->w = grid_w;
	img->grid_h = g->rows * scale;
	if (legend) {
		n = legend_items(g->block, it);
		for (i = 0; i < n; i++)
			if (item_width(&it[i]) > widest)
				widest = item_width(&it[i]);
		if (widest + 2 * LEG_MARGIN > img->w)
			img->w = widest + 2 * LEG_MARGIN;
		legend_layout(g->block, img->w, &lw, &lh, xs, ys);
	}
	img->h = img->grid_h + lh;
	if ((uint64_t)img->w * img->h > HMAP_MAX_PIXELS)
		return -E2BIG;
	img->rgb = malloc((size_t)img->w * img->h * 3);
	if (!img->rgb)
		return -ENOMEM;
	memset(img->rgb, 0xff, (size_t)img->w * img->h * 3);
	for (r = 0; r < g->rows; r++)
		for (c = 0; c < g->width; c++) {
			uint64_t cell = r * g->width + c;

			fill(img, c * scale, r * scale, scale, scale,
			     cell < g->cells ? hmap_color(mean[cell]) :
			     hmap_empty);
		}
	if (!legend)
		return 0;
	fill(img, 0, img->grid_h, img->w, lh, white);
	for (i = 0; i < n; i++) {
		unsigned int x = xs[i], y = img->grid_h + ys[i];

		if (it[i].code >= 0) {
			fill(img, x, y, SWATCH, SWATCH, edge);
			fill(img, x + 1, y + 1, SWATCH - 2, SWATCH - 2,
			     hmap_palette[it[i].code]);
			x += SWATCH + SWATCH_GAP;
		}
		draw_text(img, x, y, it[i].text);
	}
	return 0;
}

void hmap_image_free(struct hmap_image *img)
{
	free(img->rgb);
	img->rgb = NULL;
}
