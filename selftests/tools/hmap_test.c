// SPDX-License-Identifier: GPL-2.0
/*
 * hmap_test - the pure part of "buddyctl heatmap" (tools/buddyctl/hmap.c):
 * block size and rows, mean codes per cell, the palette and its
 * interpolation, xterm-256 mapping, text and raster rendering.  Native,
 * under ASan+UBSan; no module.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tools/buddyctl/hmap.h"

static bool rgb_eq(struct hmap_rgb a, struct hmap_rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

static struct hmap_rgb pixel(const struct hmap_image *img, unsigned int x,
			     unsigned int y)
{
	const uint8_t *p = img->rgb + ((size_t)y * img->w + x) * 3;

	return (struct hmap_rgb){ p[0], p[1], p[2] };
}

/* B = smallest power of two with ceil(E / (B * W)) <= R. */
TEST(geometry_block_is_smallest_power_of_two)
{
	static const struct {
		uint64_t e;
		unsigned int w;
		uint64_t r, block, rows;
	} c[] = {
		{ 1, 64, 256, 1, 1 },
		{ 64, 64, 256, 1, 1 },
		{ 65, 64, 256, 1, 2 },
		{ 384, 64, 256, 1, 6 },
		{ 64 * 256, 64, 256, 1, 256 },		/* exactly fits */
		{ 64 * 256 + 1, 64, 256, 2, 129 },	/* one more: B 2 */
		{ 32768, 64, 256, 2, 256 },
		{ 32768, 64, 64, 8, 64 },
		{ 32768, 64, 40, 16, 32 },
		{ 1000, 10, 1, 128, 1 },
		{ 8ULL << 30, 64, 256, 1ULL << 19, 256 },
	};
	struct hmap_geom g;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ASSERT_EQ(0, hmap_geometry(c[i].e, c[i].w, c[i].r, &g));
		EXPECT_EQ(c[i].block, g.block) TH_LOG("case %u", i);
		EXPECT_EQ(c[i].rows, g.rows) TH_LOG("case %u", i);
		EXPECT_EQ((c[i].e + g.block - 1) / g.block, g.cells);
		EXPECT_LE(g.rows, c[i].r);
		/* minimal: half the block would need more rows */
		if (g.block > 1)
			EXPECT_GT((c[i].e + g.block / 2 - 1) / (g.block / 2),
				  (uint64_t)c[i].w * c[i].r);
	}
	EXPECT_EQ(-EINVAL, hmap_geometry(10, 0, 10, &g));
	EXPECT_EQ(-EINVAL, hmap_geometry(10, 64, 0, &g));
	EXPECT_EQ(-EINVAL, hmap_geometry(10, HMAP_MAX_WIDTH + 1, 10, &g));
	EXPECT_EQ(-EINVAL, hmap_geometry(10, 64, HMAP_MAX_ROWS + 1, &g));
}

/* Each cell is the mean code of its block; the last block may be short. */
TEST(mean_per_block)
{
	uint8_t codes[11] = { 0, 5, 1, 1, 2, 4, 3, 3, 5, 9, 4 };
	struct hmap_geom g;
	struct hmap_acc a;
	float m[6];

	ASSERT_EQ(0, hmap_geometry(11, 2, 3, &g));
	ASSERT_EQ(2, g.block);
	ASSERT_EQ(6, g.cells);
	ASSERT_EQ(0, hmap_acc_init(&a, &g));
	/* in two pieces, out of order */
	hmap_acc_add(&a, 6, codes + 6, 5);
	hmap_acc_add(&a, 0, codes, 6);
	hmap_acc_means(&a, m);
	EXPECT_EQ(2.5f, m[0]);
	EXPECT_EQ(1.0f, m[1]);
	EXPECT_EQ(3.0f, m[2]);
	EXPECT_EQ(3.0f, m[3]);
	EXPECT_EQ(5.0f, m[4]);	/* reserved code 9 counts as RAW */
	EXPECT_EQ(4.0f, m[5]);	/* the short last block: one entry */
	/* entries past the end are ignored */
	hmap_acc_add(&a, 11, codes, 3);
	hmap_acc_means(&a, m);
	EXPECT_EQ(4.0f, m[5]);
	hmap_acc_free(&a);
}

TEST(palette_and_interpolation)
{
	struct hmap_rgb c;
	unsigned int k;

	for (k = 0; k < BUDDY_CODE_NR; k++)
		EXPECT_TRUE(rgb_eq(hmap_palette[k], hmap_color(k)));
	/* blue to red: blue falls and red rises from ZERO to RAW overall */
	EXPECT_GT(hmap_palette[BUDDY_CODE_ZERO].b, hmap_palette[BUDDY_CODE_ZERO].r);
	EXPECT_GT(hmap_palette[BUDDY_CODE_RAW].r, hmap_palette[BUDDY_CODE_RAW].b);
	c = hmap_color(0.5f);
	EXPECT_EQ((hmap_palette[0].r + hmap_palette[1].r + 1) / 2, c.r);
	EXPECT_EQ((hmap_palette[0].g + hmap_palette[1].g + 1) / 2, c.g);
	EXPECT_EQ((hmap_palette[0].b + hmap_palette[1].b + 1) / 2, c.b);
	EXPECT_TRUE(rgb_eq(hmap_palette[0], hmap_color(-1)));
	EXPECT_TRUE(rgb_eq(hmap_palette[5], hmap_color(7)));
	EXPECT_EQ('.', hmap_glyph(0));
	EXPECT_EQ(':', hmap_glyph(1.4f));
	EXPECT_EQ('-', hmap_glyph(1.6f));
	EXPECT_EQ('=', hmap_glyph(3));
	EXPECT_EQ('+', hmap_glyph(4));
	EXPECT_EQ('#', hmap_glyph(5));
}

TEST(xterm256)
{
	EXPECT_EQ(16, hmap_xterm256((struct hmap_rgb){ 0, 0, 0 }));
	EXPECT_EQ(231, hmap_xterm256((struct hmap_rgb){ 255, 255, 255 }));
	EXPECT_EQ(196, hmap_xterm256((struct hmap_rgb){ 255, 0, 0 }));
	EXPECT_EQ(21, hmap_xterm256((struct hmap_rgb){ 0, 0, 255 }));
	EXPECT_EQ(244, hmap_xterm256((struct hmap_rgb){ 128, 128, 128 }));
	/* the palette maps to six different colours */
	for (int i = 0; i < BUDDY_CODE_NR; i++)
		for (int j = i + 1; j < BUDDY_CODE_NR; j++)
			EXPECT_NE(hmap_xterm256(hmap_palette[i]),
				  hmap_xterm256(hmap_palette[j]));
}

/* Render to a string; returns the line count from the renderer. */
static unsigned int render(const float *m, const struct hmap_geom *g,
			   enum hmap_color_mode mode, char **text)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	unsigned int n = hmap_render_text(f, m, g, mode);

	fclose(f);
	return n;
}

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static unsigned int count_str(const char *s, const char *needle)
{
	unsigned int n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

TEST(text_plain_one_line_per_row)
{
	float m[10] = { 0, 1, 2, 3, 4, 5, 0, 1, 2, 3 };
	struct hmap_geom g;
	char *t;

	ASSERT_EQ(0, hmap_geometry(10, 4, 8, &g));
	ASSERT_EQ(3, g.rows);
	EXPECT_EQ(3, render(m, &g, HMAP_PLAIN, &t));
	EXPECT_STREQ(".:-=\n+#.:\n-=\n", t);
	free(t);
}

TEST(text_color_two_rows_per_line)
{
	float m[10] = { 0, 1, 2, 3, 4, 5, 0, 1, 2, 3 };
	struct hmap_geom g;
	char *t, want[64];

	ASSERT_EQ(0, hmap_geometry(10, 4, 8, &g));
	EXPECT_EQ(2, render(m, &g, HMAP_ANSI256, &t));
	EXPECT_EQ(2, count_lines(t));
	/* every upper cell is one half block: 4 + 2 */
	EXPECT_EQ(6, count_str(t, "\u2580"));
	EXPECT_EQ(2, count_str(t, "\033[0m\n"));
	/* the first cell: ZERO above C32 */
	snprintf(want, sizeof(want), "\033[38;5;%um\033[48;5;%um\u2580",
		 hmap_xterm256(hmap_palette[0]), hmap_xterm256(hmap_palette[4]));
	EXPECT_EQ(0, strncmp(t, want, strlen(want)));
	/* the last line has no lower row: default background */
	EXPECT_NE(NULL, strstr(t, "\033[49m"));
	free(t);

	EXPECT_EQ(2, render(m, &g, HMAP_TRUECOLOR, &t));
	snprintf(want, sizeof(want), "\033[38;2;%u;%u;%um",
		 hmap_palette[0].r, hmap_palette[0].g, hmap_palette[0].b);
	EXPECT_EQ(0, strncmp(t, want, strlen(want)));
	free(t);
}

TEST(raster_squares_and_empty_cells)
{
	float m[70];
	struct hmap_geom g;
	struct hmap_image img;
	unsigned int i;

	for (i = 0; i < 70; i++)
		m[i] = (i / 64) ? 5 : i % 6;
	ASSERT_EQ(0, hmap_geometry(70, 64, 256, &g));
	ASSERT_EQ(0, hmap_raster(m, &g, 4, false, &img));
	EXPECT_EQ(256, img.w);
	EXPECT_EQ(8, img.h);
	EXPECT_EQ(8, img.grid_h);
	for (i = 0; i < 64; i++) {
		EXPECT_TRUE(rgb_eq(hmap_palette[i % 6], pixel(&img, 4 * i, 0)));
		EXPECT_TRUE(rgb_eq(hmap_palette[i % 6], pixel(&img, 4 * i + 3, 3)));
	}
	for (i = 0; i < 6; i++)
		EXPECT_TRUE(rgb_eq(hmap_palette[5], pixel(&img, 4 * i + 1, 5)));
	/* past the last entry: the empty colour */
	EXPECT_TRUE(rgb_eq(hmap_empty, pixel(&img, 4 * 6, 4)));
	EXPECT_TRUE(rgb_eq(hmap_empty, pixel(&img, 255, 7)));
	hmap_image_free(&img);

	EXPECT_EQ(-EINVAL, hmap_raster(m, &g, 0, false, &img));
	EXPECT_EQ(-EINVAL, hmap_raster(m, &g, HMAP_MAX_SCALE + 1, false, &img));
}

TEST(raster_legend)
{
	float m[384] = { 0 };
	struct hmap_geom g;
	struct hmap_image img;
	unsigned int lw, lh, x, y, k, found;

	ASSERT_EQ(0, hmap_geometry(384, 64, 256, &g));
	ASSERT_EQ(0, hmap_raster(m, &g, 4, true, &img));
	hmap_legend_size(1, 256, &lw, &lh);
	EXPECT_EQ(256, img.w);
	EXPECT_EQ(24, img.grid_h);
	EXPECT_EQ(24 + lh, img.h);
	EXPECT_LE(lw, 256);
	/* every palette colour appears in the strip (its swatch) */
	for (k = 0; k < BUDDY_CODE_NR; k++) {
		found = 0;
		for (y = img.grid_h; y < img.h && !found; y++)
			for (x = 0; x < img.w && !found; x++)
				found = rgb_eq(hmap_palette[k], pixel(&img, x, y));
		EXPECT_TRUE(found) TH_LOG("code %u", k);
	}
	hmap_image_free(&img);

	/* a narrow grid: the image widens to the widest item, lines wrap */
	ASSERT_EQ(0, hmap_geometry(384, 4, 256, &g));
	ASSERT_EQ(0, hmap_raster(m, &g, 1, true, &img));
	EXPECT_GT(img.w, 4);
	EXPECT_GT(img.h - img.grid_h, lh);
	hmap_image_free(&img);

	/* downsampled: "1 CELL = B ENTRIES" on a line of its own */
	hmap_legend_size(1, 4096, &lw, &lh);
	hmap_legend_size(8, 4096, &x, &y);
	EXPECT_GE(x, lw);
	EXPECT_GT(y, lh);
}

TEST_HARNESS_MAIN
