/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hmap.h - the pure part of "buddyctl heatmap": the picture of Fig. 8 of
 * the Buddy Compression paper for one allocation, without any I/O.
 *
 * Geometry.  The allocation's E entries are drawn in rows of W cells.  A
 * cell shows a block of B consecutive entries, B the smallest power of two
 * for which the picture has at most R rows:
 *
 *	cells = ceil(E / B),  rows = ceil(cells / W) <= R
 *
 * (B = 1, one cell per entry as in the paper, whenever E <= W * R.)  Cell c
 * covers entries [c * B, min((c + 1) * B, E)); the last one may be shorter.
 *
 * Value.  Each cell holds the MEAN size code of its entries, a number in
 * [0, 5]: 0 ZERO, 1 C8, 2 C32, 3 C64, 4 C96, 5 RAW (reserved codes 6..15,
 * which the module never stores, count as RAW).
 *
 * Colour.  A fixed blue-to-red palette, one colour per code (hmap_palette);
 * a fractional mean is linearly interpolated between the colours of the two
 * codes around it, channel by channel, rounded half up.  Cells past the
 * end of the allocation (the rest of the last row) are hmap_empty in
 * pictures and absent in text.
 */
#ifndef BUDDYCTL_HMAP_H
#define BUDDYCTL_HMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "uapi/linux/buddy.h"

#define HMAP_MAX_WIDTH		4096	/* cells per row */
#define HMAP_MAX_ROWS		65536
#define HMAP_MAX_SCALE		64	/* pixels per cell side */
#define HMAP_MAX_PIXELS		(1ULL << 26)	/* of one image */

struct hmap_rgb {
	uint8_t r, g, b;
};

/* ZERO deep blue, C8 blue, C32 cyan-green, C64 yellow, C96 orange, RAW red */
extern const struct hmap_rgb hmap_palette[BUDDY_CODE_NR];
extern const struct hmap_rgb hmap_empty;	/* past the end: light grey */
extern const char *const hmap_code_names[BUDDY_CODE_NR]; /* "ZERO".."RAW" */

struct hmap_geom {
	uint64_t entries;	/* E */
	unsigned int width;	/* W, cells per row */
	uint64_t block;		/* B, entries per cell, a power of two */
	uint64_t cells;		/* ceil(E / B) */
	uint64_t rows;		/* ceil(cells / W) */
};

/*
 * hmap_geometry() - the layout above.
 * Return: 0, or -EINVAL when @width is 0 or above HMAP_MAX_WIDTH or
 * @max_rows is 0 or above HMAP_MAX_ROWS.
 */
int hmap_geometry(uint64_t entries, unsigned int width, uint64_t max_rows,
		  struct hmap_geom *g);

/* Sums and counts of codes per cell, fed in any order of entry ranges. */
struct hmap_acc {
	struct hmap_geom g;
	uint64_t *sum;		/* per cell */
	uint32_t *cnt;		/* per cell */
};

int hmap_acc_init(struct hmap_acc *a, const struct hmap_geom *g);
/* Entries @first .. @first + @n - 1 have codes @codes[0 .. n-1]. */
void hmap_acc_add(struct hmap_acc *a, uint64_t first, const uint8_t *codes,
		  uint64_t n);
/* Mean code of every cell into @mean (g.cells floats); empty cells: 0. */
void hmap_acc_means(const struct hmap_acc *a, float *mean);
void hmap_acc_free(struct hmap_acc *a);

/* Colour of a mean code (clamped to [0, 5]). */
struct hmap_rgb hmap_color(float mean);
/* Nearest colour of the xterm 256-colour palette (cube 16..231, greys). */
unsigned int hmap_xterm256(struct hmap_rgb c);
/* Plain-text glyph of a mean: the nearest code of ".:-=+#" (ZERO..RAW). */
char hmap_glyph(float mean);

enum hmap_color_mode {
	HMAP_PLAIN,		/* one glyph per cell, one line per row */
	HMAP_ANSI256,		/* half blocks, two rows per line */
	HMAP_TRUECOLOR,		/* the same with 24-bit colours */
};

/*
 * hmap_render_text() - the picture as terminal text on @out: plain, one line
 * per row of hmap_glyph() characters (the last line stops at the last cell);
 * in colour, one line per two rows: U+2580 UPPER HALF BLOCK with the upper
 * row's cell as foreground and the lower row's as background (U+2584 LOWER
 * HALF BLOCK when only the lower exists), each line ending with "ESC[0m".
 * Return: the number of lines written.
 */
unsigned int hmap_render_text(FILE *out, const float *mean,
			      const struct hmap_geom *g,
			      enum hmap_color_mode mode);

/* One line describing the legend in text: the glyphs or coloured swatches. */
void hmap_legend_text(FILE *out, enum hmap_color_mode mode);

struct hmap_image {
	unsigned int w, h;	/* pixels */
	unsigned int grid_h;	/* rows * scale; the legend strip is below */
	uint8_t *rgb;		/* w * h * 3 bytes, row-major, top row first */
};

/*
 * hmap_raster() - the picture as an RGB image: every cell a @scale x @scale
 * square at (column * scale, row * scale); cells past the end hmap_empty.
 * With @legend a white strip below the grid holds, left to right and
 * wrapping at the image width, a swatch and the name of each code (ZERO C8
 * C32 C64 C96 RAW) and, when a cell averages several entries, on a line of
 * its own, the text "1 CELL = B ENTRIES".  The image is W * scale pixels wide (or as wide as
 * the widest legend item, when wider) and rows * scale + legend height tall
 * (hmap_legend_height()); pixels right of the grid are white.
 * Return: 0, -EINVAL (scale 0 or above HMAP_MAX_SCALE, no rows), -E2BIG
 * (more than HMAP_MAX_PIXELS pixels) or -ENOMEM.
 */
int hmap_raster(const float *mean, const struct hmap_geom *g,
		unsigned int scale, bool legend, struct hmap_image *img);
void hmap_image_free(struct hmap_image *img);

/* Width and height the legend strip needs when wrapped at @max_w pixels. */
void hmap_legend_size(uint64_t block, unsigned int max_w, unsigned int *w,
		      unsigned int *h);

#endif /* BUDDYCTL_HMAP_H */
