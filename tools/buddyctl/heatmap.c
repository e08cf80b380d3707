// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl heatmap - Fig. 8 of the Buddy Compression paper for one live
 * allocation: its entries in rows of 64 (--width), one square per entry
 * coloured by size code, blue (ZERO) to red (RAW).  A PNG with -o (libpng),
 * else coloured terminal text; big allocations are downsampled to at most
 * --max-rows rows, each cell the mean code of a power-of-two block of
 * entries (geometry and colours in hmap.h).  Codes come from
 * BUDDY_IOC_GET_MAP by id on /dev/buddy (CAP_SYS_ADMIN), or with --file
 * from a dump sized by a codec's size-only path, as analyze does.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <png.h>

#include "core/codec.h"
#include "buddyctl.h"
#include "admin_util.h"
#include "hmap.h"

#define DEF_WIDTH	64
#define DEF_ROWS_PNG	256
#define DEF_ROWS_TERM	64
#define DEF_SCALE	4
#define MAP_BATCH	(1u << 20)	/* entries per GET_MAP round */

struct heatmap_opts {
	const char *file;		/* --file: a dump, not an allocation */
	const struct buddy_codec *codec;	/* with --file */
	const char *out;
	unsigned int width, scale;
	uint64_t max_rows;
	bool legend, json;
	enum hmap_color_mode mode;
};

static void heatmap_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl heatmap [OPTIONS] ID\n"
		"       buddyctl heatmap [OPTIONS] --file FILE [--codec NAME]\n"
		"\n"
		"Draw the spatial compressibility of allocation ID (Fig. 8 of the\n"
		"paper), or of FILE sized as buddy.ko would store it (no device):\n"
		"entries in rows of --width cells, one cell per entry,\n"
		"coloured by size code: ZERO deep blue, C8 blue, C32 cyan-green,\n"
		"C64 yellow, C96 orange, RAW red.  When the allocation has more\n"
		"than width * max-rows entries, each cell shows the mean code of a\n"
		"block of B consecutive entries, B the smallest power of two that\n"
		"fits the picture in max-rows rows; B is printed.  ID needs\n"
		"CAP_SYS_ADMIN.\n"
		"\n"
		"      --file=FILE      the entries of FILE (a short tail zero-padded)\n"
		"  -c, --codec=NAME     with --file: bpc (default), zvc, bdi, fpc, none\n"
		"  -o, --output=FILE    write a PNG (\"-\": stdout) instead of text\n"
		"  -w, --width=N        cells per row (default %d, as in the paper)\n"
		"  -r, --max-rows=N     at most N rows (default %d for a PNG, %d\n"
		"                       for the terminal)\n"
		"  -S, --scale=PX       PNG: pixels per cell side (default %d)\n"
		"  -L, --legend         PNG: a legend strip below the grid;\n"
		"                       text: a legend line at the end\n"
		"      --color[=WHEN]   auto (default: colour when stdout is a\n"
		"                       terminal), always, never, 256, truecolor\n"
		"      --no-color       plain text: one glyph per cell, .:-=+#\n"
		"                       for ZERO C8 C32 C64 C96 RAW\n"
		"  -j, --json           the picture's geometry as JSON (with the\n"
		"                       mean code of every cell, without -o)\n"
		"  -h, --help           this text\n"
		"\n"
		"Text: a header line, then one line per row (plain) or per two\n"
		"rows (colour: upper/lower half blocks).\n"
		"\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n",
		DEF_WIDTH, DEF_ROWS_PNG, DEF_ROWS_TERM, DEF_SCALE);
}

static enum hmap_color_mode color_auto(bool force)
{
	const char *term = getenv("TERM"), *ct = getenv("COLORTERM");

	if (!force) {
		if (!isatty(STDOUT_FILENO) || getenv("NO_COLOR") ||
		    !term || !strcmp(term, "dumb"))
			return HMAP_PLAIN;
	}
	if (ct && (!strcmp(ct, "truecolor") || !strcmp(ct, "24bit")))
		return HMAP_TRUECOLOR;
	return HMAP_ANSI256;
}

static int parse_color(const char *s, enum hmap_color_mode *m)
{
	if (!s || !strcmp(s, "always"))
		*m = color_auto(true);
	else if (!strcmp(s, "auto"))
		*m = color_auto(false);
	else if (!strcmp(s, "never"))
		*m = HMAP_PLAIN;
	else if (!strcmp(s, "256"))
		*m = HMAP_ANSI256;
	else if (!strcmp(s, "truecolor") || !strcmp(s, "24bit"))
		*m = HMAP_TRUECOLOR;
	else
		return -1;
	return 0;
}

static int parse_uint(const char *opt, const char *s, uint64_t min,
		      uint64_t max, uint64_t *v)
{
	if (parse_u64(s, v) || *v < min || *v > max) {
		buddyctl_err("heatmap: invalid --%s '%s' (%" PRIu64 "..%" PRIu64 ")",
			     opt, s, min, max);
		return -1;
	}
	return 0;
}

/* Read every code of the allocation into the accumulator. */
static int read_codes(int fd, uint64_t id, struct hmap_acc *acc)
{
	uint64_t first, n, total = acc->g.entries;
	uint8_t *buf = malloc(total < MAP_BATCH ? (total ? total : 1) : MAP_BATCH);
	char obj[48];
	int r = 0;

	if (!buf) {
		buddyctl_err("heatmap: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (first = 0; first < total; first += n) {
		n = total - first < MAP_BATCH ? total - first : MAP_BATCH;
		r = buddy_get_map_id(fd, id, first, n, buf);
		if (r) {
			snprintf(obj, sizeof(obj), "allocation %" PRIu64, id);
			au_err(obj, r, BUDDY_OP_MAP);
			break;
		}
		hmap_acc_add(acc, first, buf, n);
	}
	free(buf);
	return r;
}

/* --file: the size code of every entry of the file, as analyze sizes it. */
static int read_file_codes(const struct heatmap_opts *o, struct hmap_acc *acc)
{
	uint64_t first = 0, total = acc->g.entries;
	uint8_t *buf, codes[MAP_BATCH / BUDDY_ENTRY_BYTES];
	int fd, r = 0;

	fd = open(o->file, O_RDONLY | O_CLOEXEC);
	buf = malloc(MAP_BATCH);
	if (fd < 0 || !buf) {
		r = fd < 0 ? -errno : -ENOMEM;
		au_err(o->file, r, -1);
		goto out;
	}
	while (first < total) {
		ssize_t n = 0, m;
		size_t k, e;

		/* whole batches: only the file's end may be a partial entry */
		while (n < MAP_BATCH &&
		       ((m = read(fd, buf + n, MAP_BATCH - n)) > 0 ||
			(m < 0 && errno == EINTR)))
			n += m > 0 ? m : 0;
		if (n <= 0) {
			r = n ? -errno : -ENODATA;	/* shrank meanwhile */
			au_err(o->file, r, -1);
			break;
		}
		e = (n + BUDDY_ENTRY_BYTES - 1) / BUDDY_ENTRY_BYTES;
		memset(buf + n, 0, e * BUDDY_ENTRY_BYTES - n);
		if (e > total - first)
			e = total - first;
		for (k = 0; k < e; k++) {
			const u8 *en = buf + k * BUDDY_ENTRY_BYTES;

			codes[k] = buddy_entry_is_zero(en) ? BUDDY_CODE_ZERO :
				   buddy_code_of_bits(o->codec->size(en));
		}
		hmap_acc_add(acc, first, codes, e);
		first += e;
	}
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return r;
}

/* --file: the number of entries of the file (a tail padded); -errno. */
static int file_entries(const char *path, uint64_t *entries)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*entries = ((uint64_t)st.st_size + BUDDY_ENTRY_BYTES - 1) /
		   BUDDY_ENTRY_BYTES;
	return 0;
}

struct png_meta {
	const char *file;
	const struct buddy_alloc_stat *st;
	const struct hmap_geom *g;
	unsigned int scale;
};

static int write_png(const char *path, const struct hmap_image *img,
		     const struct png_meta *m)
{
	char text[6][64];
	static const char *const keys[6] = {
		"Title", "buddy-id", "buddy-entries", "buddy-width",
		"buddy-block", "buddy-rows",
	};
	png_text tx[6];
	png_structp png = NULL;
	png_infop info = NULL;
	FILE *f;
	bool to_stdout = !strcmp(path, "-");
	unsigned int y, k;
	volatile int ret = 0;

	f = to_stdout ? stdout : fopen(path, "wbe");
	if (!f) {
		au_err(path, errno, -1);
		return -1;
	}
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	if (png)
		info = png_create_info_struct(png);
	if (!png || !info) {
		buddyctl_err("%s: cannot set up libpng", path);
		ret = -1;
		goto out;
	}
	if (setjmp(png_jmpbuf(png))) {
		buddyctl_err("%s: libpng failed to write the image", path);
		ret = -1;
		goto out;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, img->w, img->h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
		     PNG_FILTER_TYPE_DEFAULT);
	if (m->file)
		snprintf(text[0], sizeof(text[0]), "buddy heatmap of %.40s",
			 m->file);
	else
		snprintf(text[0], sizeof(text[0]),
			 "buddy allocation %" PRIu64 " heatmap",
			 (uint64_t)m->st->id);
	snprintf(text[1], sizeof(text[1]), "%" PRIu64, (uint64_t)m->st->id);
	snprintf(text[2], sizeof(text[2]), "%" PRIu64, m->g->entries);
	snprintf(text[3], sizeof(text[3]), "%u", m->g->width);
	snprintf(text[4], sizeof(text[4]), "%" PRIu64, m->g->block);
	snprintf(text[5], sizeof(text[5]), "%" PRIu64, m->g->rows);
	memset(tx, 0, sizeof(tx));
	for (k = 0; k < 6; k++) {
		tx[k].compression = PNG_TEXT_COMPRESSION_NONE;
		tx[k].key = (char *)keys[k];
		tx[k].text = text[k];
	}
	png_set_text(png, info, tx, 6);
	png_write_info(png, info);
	for (y = 0; y < img->h; y++)
		png_write_row(png, img->rgb + (size_t)y * img->w * 3);
	png_write_end(png, info);
out:
	png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
	if (to_stdout) {
		if (fflush(stdout) && !ret) {
			au_err(path, errno, -1);
			ret = -1;
		}
	} else {
		if (fclose(f) && !ret) {
			au_err(path, errno, -1);
			ret = -1;
		}
		if (ret)
			unlink(path);
	}
	return ret;
}

static void describe(FILE *f, const struct heatmap_opts *o,
		     const struct buddy_alloc_stat *st,
		     const struct hmap_geom *g)
{
	char label[BUDDY_LABEL_LEN + 1];

	if (o->file) {
		fprintf(f, "%s (%s, as buddy.ko sizes it): %" PRIu64
			" entries, %u cells per row, block %" PRIu64 " %s per cell%s, %"
			PRIu64 " rows", o->file, o->codec->name, g->entries,
			g->width, g->block, g->block == 1 ? "entry" : "entries",
			g->block == 1 ? "" : " (mean code)", g->rows);
		return;
	}
	memcpy(label, st->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN] = 0;
	fprintf(f, "allocation %" PRIu64 " \"%s\" (%s %s): %" PRIu64
		" entries, %u cells per row, block %" PRIu64 " %s per cell%s, %"
		PRIu64 " rows",
		(uint64_t)st->id, label, buddy_target_name(st->target),
		buddy_codec_name(st->codec), g->entries, g->width, g->block,
		g->block == 1 ? "entry" : "entries",
		g->block == 1 ? "" : " (mean code)", g->rows);
}

static struct json_object *geom_json(const struct heatmap_opts *ho,
				     const struct buddy_alloc_stat *st,
				     const struct hmap_geom *g)
{
	struct json_object *o = json_object_new_object();
	char label[BUDDY_LABEL_LEN + 1];

	memcpy(label, st->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN] = 0;
	if (ho->file) {
		json_object_object_add(o, "input", au_json_string(ho->file));
		json_object_object_add(o, "codec",
				json_object_new_string(ho->codec->name));
	} else {
		json_object_object_add(o, "id", json_object_new_uint64(st->id));
		json_object_object_add(o, "label",
				       json_object_new_string(label));
	}
	json_object_object_add(o, "entries", json_object_new_uint64(g->entries));
	json_object_object_add(o, "width", json_object_new_int(g->width));
	json_object_object_add(o, "block", json_object_new_uint64(g->block));
	json_object_object_add(o, "cells", json_object_new_uint64(g->cells));
	json_object_object_add(o, "rows", json_object_new_uint64(g->rows));
	return o;
}

/* The options into @o, the ID into @id: -1 to go on, else the exit status. */
static int heatmap_opts(int argc, char **argv, struct heatmap_opts *o,
			uint64_t *id)
{
	enum { OPT_COLOR = 256, OPT_NO_COLOR, OPT_FILE };
	static const struct option opts[] = {
		{ "file",	required_argument,	NULL, OPT_FILE },
		{ "codec",	required_argument,	NULL, 'c' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "width",	required_argument,	NULL, 'w' },
		{ "max-rows",	required_argument,	NULL, 'r' },
		{ "scale",	required_argument,	NULL, 'S' },
		{ "legend",	no_argument,		NULL, 'L' },
		{ "color",	optional_argument,	NULL, OPT_COLOR },
		{ "colour",	optional_argument,	NULL, OPT_COLOR },
		{ "no-color",	no_argument,		NULL, OPT_NO_COLOR },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool color_set = false;
	uint64_t v;
	int c;

	o->mode = HMAP_PLAIN;
	while ((c = getopt_long(argc, argv, "o:w:r:S:Lc:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'w':
			if (parse_uint("width", optarg, 1, HMAP_MAX_WIDTH, &v))
				return EXIT_USAGE;
			o->width = v;
			break;
		case 'r':
			if (parse_uint("max-rows", optarg, 1, HMAP_MAX_ROWS,
				       &o->max_rows))
				return EXIT_USAGE;
			break;
		case 'S':
			if (parse_uint("scale", optarg, 1, HMAP_MAX_SCALE, &v))
				return EXIT_USAGE;
			o->scale = v;
			break;
		case 'L':
			o->legend = true;
			break;
		case OPT_FILE:
			o->file = optarg;
			break;
		case 'c':
			o->codec = buddy_codec_by_name(optarg);
			if (!o->codec) {
				buddyctl_err("heatmap: invalid --codec '%s' (bpc, zvc, bdi, fpc or none)",
					     optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_COLOR:
			if (parse_color(optarg, &o->mode)) {
				buddyctl_err("heatmap: invalid --color '%s' (auto, always, never, 256, truecolor)",
					     optarg);
				return EXIT_USAGE;
			}
			color_set = true;
			break;
		case OPT_NO_COLOR:
			o->mode = HMAP_PLAIN;
			color_set = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			heatmap_usage(stdout);
			return 0;
		default:
			heatmap_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (o->codec && !o->file) {
		buddyctl_err("heatmap: --codec is for --file (an allocation has its codec)");
		return EXIT_USAGE;
	}
	if (o->file) {
		if (optind != argc) {
			buddyctl_err("heatmap: unexpected argument '%s' (--file or an ID, not both)",
				     argv[optind]);
			return EXIT_USAGE;
		}
		if (!o->codec)
			o->codec = &buddy_codec_bpc;
	} else {
		if (au_parse_id("heatmap", argv[optind], id))
			return EXIT_USAGE;
		if (optind + 1 != argc) {
			buddyctl_err("heatmap: unexpected argument '%s' (one ID)",
				     argv[optind + 1]);
			return EXIT_USAGE;
		}
	}
	if (!color_set)
		o->mode = color_auto(false);
	if (!o->max_rows)
		o->max_rows = o->out ? DEF_ROWS_PNG : DEF_ROWS_TERM;
	return -1;
}

/* -o: the picture, and what it is (as JSON with -j); the exit status. */
static int heatmap_png(const struct heatmap_opts *o,
		       const struct buddy_alloc_stat *st,
		       const struct hmap_geom *g, const float *mean,
		       struct hmap_image *img)
{
	struct png_meta pm = { o->file, st, g, o->scale };
	struct json_object *j;
	char what[64];
	int r;

	if (o->file)
		snprintf(what, sizeof(what), "%.60s", o->file);
	else
		snprintf(what, sizeof(what), "allocation %" PRIu64,
			 (uint64_t)st->id);
	r = hmap_raster(mean, g, o->scale, o->legend, img);
	if (r) {
		buddyctl_err("heatmap: %s: %s (%" PRIu64
			     " rows of %u cells at %u px)", what,
			     r == -E2BIG ? "the image would be too large" :
			     strerror(-r), g->rows, g->width, o->scale);
		return 1;
	}
	if (write_png(o->out, img, &pm))
		return 1;
	if (!o->json) {
		FILE *f = strcmp(o->out, "-") ? stdout : stderr;

		describe(f, o, st, g);
		fprintf(f, ": %s (%ux%u px)\n", o->out, img->w, img->h);
		return f == stdout ? au_flush_stdout() : 0;
	}
	j = geom_json(o, st, g);
	json_object_object_add(j, "file", json_object_new_string(o->out));
	json_object_object_add(j, "scale", json_object_new_int(o->scale));
	json_object_object_add(j, "legend", json_object_new_boolean(o->legend));
	json_object_object_add(j, "width_px", json_object_new_int(img->w));
	json_object_object_add(j, "height_px", json_object_new_int(img->h));
	if (strcmp(o->out, "-"))
		return au_print_json(j);
	bjson_write(stderr, j, BJSON_PRETTY);
	json_object_put(j);
	return 0;
}

/* The picture in the terminal, or the cells' means as JSON. */
static int heatmap_stdout(const struct heatmap_opts *o,
			  const struct buddy_alloc_stat *st,
			  const struct hmap_geom *g, const float *mean)
{
	if (o->json) {
		struct json_object *j = geom_json(o, st, g);
		struct json_object *arr = json_object_new_array();

		for (uint64_t k = 0; k < g->cells; k++)
			json_object_array_add(arr, bjson_fixed(mean[k], 3));
		json_object_object_add(j, "means", arr);
		return au_print_json(j);
	}
	describe(stdout, o, st, g);
	putchar('\n');
	hmap_render_text(stdout, mean, g, o->mode);
	if (o->legend)
		hmap_legend_text(stdout, o->mode);
	return au_flush_stdout();
}

int cmd_heatmap(int argc, char **argv)
{
	struct heatmap_opts o = { .width = DEF_WIDTH, .scale = DEF_SCALE };
	struct buddy_alloc_stat st;
	struct hmap_geom g;
	struct hmap_acc acc = { 0 };
	struct hmap_image img = { 0 };
	float *mean = NULL;
	uint64_t id;
	int fd, ret = 1;

	ret = heatmap_opts(argc, argv, &o, &id);
	if (ret >= 0)
		return ret;
	ret = 1;
	memset(&st, 0, sizeof(st));
	if (o.file) {
		uint64_t entries = 0;
		int r = file_entries(o.file, &entries);

		st.nr_entries = entries;
		fd = -1;
		if (r) {
			au_err(o.file, r, -1);
			return 1;
		}
	} else {
		fd = au_open();
		if (fd < 0)
			return 1;
		if (au_get_alloc(fd, id, &st))
			goto out_close;
	}
	if (hmap_geometry(st.nr_entries, o.width, o.max_rows, &g) ||
	    hmap_acc_init(&acc, &g)) {
		buddyctl_err("heatmap: %s: %s", o.file ? o.file : "allocation",
			     strerror(ENOMEM));
		goto out_close;
	}
	if (o.file ? read_file_codes(&o, &acc) : read_codes(fd, id, &acc))
		goto out_free;
	mean = malloc((g.cells ? g.cells : 1) * sizeof(*mean));
	if (!mean) {
		buddyctl_err("heatmap: %s", strerror(ENOMEM));
		goto out_free;
	}
	hmap_acc_means(&acc, mean);
	if (o.out)
		ret = heatmap_png(&o, &st, &g, mean, &img);
	else
		ret = heatmap_stdout(&o, &st, &g, mean);
out_free:
	hmap_image_free(&img);
	free(mean);
	hmap_acc_free(&acc);
out_close:
	if (fd >= 0)
		close(fd);
	return ret;
}
