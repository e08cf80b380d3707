// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl analyze - offline compressibility of memory dumps: every FILE
 * cut into 128-byte entries, each sized by each codec's size-only path as
 * buddy.ko sizes it.  Options, the ratios, the JSON report and the exit
 * status: Documentation/buddyctl.rst, "analyze".
 *
 * The Fig. 3 ratio counts an all-zero entry 0 B and any other
 * ceil(bits / 8) bytes rounded up to the next of 8, 16, 32, 64, 80, 96,
 * 128 B (tools/policy/fig3.h); the Buddy ratio buddy_code_bytes() of the
 * entry's size code.  --per-entry prints codec->size(), before any raw
 * fallback, also for all-zero entries.
 *
 * A FILE that cannot be opened or read is reported and skipped (its
 * partial counts dropped); the others are analysed and the exit status is
 * 1.  --per-file adds one row (one JSON object) per file before the totals.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/codec.h"
#include "tools/policy/fig3.h"
#include "buddyctl.h"
#include "admin_util.h"

#define IO_BUF		(1u << 20)	/* input read size; multiple of 128 */
#define OUT_BUF		(1u << 20)	/* stdout buffer of --per-entry */
#define OUT_SLACK	16		/* room for one number and '\n' */

struct codec_stats {
	const struct buddy_codec *c;
	u64 bytes_fig3;
	u64 bytes_buddy;
	u64 hist[BUDDY_CODE_NR];
};

/* The totals of the files analysed, or of one file (--per-file). */
struct tally {
	struct codec_stats cs[BUDDY_CODEC_NR];
	u64 bytes;			/* input bytes */
	u64 entries;
};

/* One argument: its tally, or why it was skipped. */
struct file_result {
	const char *name;
	struct tally t;
	int err;			/* errno of the failure, 0: analysed */
	bool padded;
};

struct analyze {
	struct codec_stats cs[BUDDY_CODEC_NR];
	unsigned int nr;		/* codecs chosen */
	bool per_entry;
	bool per_file;
	bool json;
	u64 bytes;			/* input bytes */
	u64 entries;
	char *out;			/* --per-entry output buffer */
	size_t outlen;
	struct file_result *files;	/* one per argument, in order */
};

static const char *const hist_keys[BUDDY_CODE_NR] = {
	[BUDDY_CODE_ZERO] = "zero",	[BUDDY_CODE_C8] = "c8",
	[BUDDY_CODE_C32] = "c32",	[BUDDY_CODE_C64] = "c64",
	[BUDDY_CODE_C96] = "c96",	[BUDDY_CODE_RAW] = "raw",
};

static void analyze_usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: buddyctl analyze [OPTIONS] FILE...\n"
		"\n"
		"Offline compressibility of memory dumps (\"-\" is stdin), cut into\n"
		"128-byte entries; no kernel module needed.\n"
		"\n"
		"  -c, --codec NAME[,NAME]  codecs to report (repeatable; default:\n"
		"                           all, or bpc with --per-entry); one of:");
	for (i = 0; buddy_codecs[i]; i++)
		fprintf(f, " %s", buddy_codecs[i]->name);
	fprintf(f,
		"\n"
		"  -e, --per-entry          one line per entry: the codec's stream\n"
		"                           length in bits (one codec only)\n"
		"  -f, --per-file           also one row (JSON: one object) per\n"
		"                           file, before the totals\n"
		"  -j, --json               the report as a JSON object\n"
		"  -h, --help               this text\n"
		"\n"
		"Ratios are 128 * entries / stored bytes: \"fig3\" with the sizes of\n"
		"the Buddy paper's Fig. 3 (0, 8, 16, 32, 64, 80, 96, 128 B), \"buddy\"\n"
		"with Buddy's size codes (0, 8, 32, 64, 96, 128 B).  A FILE that\n"
		"cannot be read is reported and skipped; the report covers the\n"
		"others.\n"
		"\n"
		"Exit status: 0 success, 1 runtime error (also when a FILE was\n"
		"skipped), 2 usage error.\n");
}

static void list_codecs(FILE *f)
{
	unsigned int i;

	fputs("valid codecs:", f);
	for (i = 0; buddy_codecs[i]; i++)
		fprintf(f, " %s", buddy_codecs[i]->name);
	fputc('\n', f);
}

/* Add the codecs of a comma-separated list; false on an unknown name. */
static bool add_codecs(struct analyze *a, const char *list)
{
	char *dup = strdup(list), *save = NULL, *tok;
	unsigned int i, names = 0;
	bool ok = true;

	if (!dup)
		return false;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct buddy_codec *c = buddy_codec_by_name(tok);

		names++;

		if (!c) {
			buddyctl_err("analyze: unknown codec '%s'", tok);
			list_codecs(stderr);
			ok = false;
			break;
		}
		for (i = 0; i < a->nr; i++)
			if (a->cs[i].c == c)
				break;
		if (i == a->nr && a->nr < BUDDY_CODEC_NR)
			a->cs[a->nr++].c = c;
	}
	if (ok && !names) {
		buddyctl_err("analyze: empty codec list");
		list_codecs(stderr);
		ok = false;
	}
	free(dup);
	return ok;
}

static int flush_out(struct analyze *a)
{
	size_t done = 0;

	while (done < a->outlen) {
		ssize_t n = write(STDOUT_FILENO, a->out + done,
				  a->outlen - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			buddyctl_err("analyze: write to stdout: %s",
				     strerror(errno));
			return -1;
		}
		done += n;
	}
	a->outlen = 0;
	return 0;
}

/* Append "@v\n" to the output buffer (no stdio, no locale). */
static inline void put_uint(struct analyze *a, unsigned int v)
{
	char tmp[12], *p = tmp + sizeof(tmp);
	char *o = a->out + a->outlen;

	*--p = '\n';
	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	memcpy(o, p, tmp + sizeof(tmp) - p);
	a->outlen += tmp + sizeof(tmp) - p;
}

/* Account the @n whole entries at @buf. */
static int process(struct analyze *a, const u8 *buf, size_t n)
{
	size_t e;
	unsigned int i;

	a->entries += n;
	if (a->per_entry) {
		unsigned int (*size)(const u8 *) = a->cs[0].c->size;

		for (e = 0; e < n; e++) {
			if (a->outlen > OUT_BUF - OUT_SLACK && flush_out(a))
				return -1;
			put_uint(a, size(buf + e * BUDDY_ENTRY_BYTES));
		}
		return 0;
	}

	for (e = 0; e < n; e++) {
		const u8 *entry = buf + e * BUDDY_ENTRY_BYTES;

		if (buddy_entry_is_zero(entry)) {
			for (i = 0; i < a->nr; i++)
				a->cs[i].hist[BUDDY_CODE_ZERO]++;
			continue;
		}
		for (i = 0; i < a->nr; i++) {
			struct codec_stats *s = &a->cs[i];
			unsigned int bits = s->c->size(entry);
			unsigned int code = buddy_code_of_bits(bits);

			s->bytes_fig3 += buddy_fig3_bytes(bits);
			s->bytes_buddy += buddy_code_bytes(code);
			s->hist[code]++;
		}
	}
	return 0;
}

/* Read until @len bytes or end of file; returns the count or -1. */
static ssize_t read_full(int fd, u8 *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

/* Why @name cannot be opened, beyond strerror(@err); "" when nothing. */
static const char *open_why(const char *name, int err)
{
	struct stat st;

	if (err == ENOENT && !lstat(name, &st) && S_ISLNK(st.st_mode))
		return " (a dangling symbolic link)";
	return "";
}

/*
 * Analyse one file into the totals of @a.  A file that cannot be opened
 * or read is reported and leaves the totals as they were (its partial
 * counts are dropped): the report covers the files read whole.
 */
static int analyze_file(struct analyze *a, struct file_result *fr, u8 *buf)
{
	const char *name = fr->name;
	bool is_stdin = !strcmp(name, "-");
	const char *shown = is_stdin ? "(stdin)" : name;
	int fd = is_stdin ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
	struct tally before;
	u64 total = 0;
	int ret = 0;

	if (fd < 0) {
		fr->err = errno;
		buddyctl_err("analyze: %s: %s%s", shown, strerror(fr->err),
			     open_why(name, fr->err));
		return -1;
	}
	memcpy(before.cs, a->cs, sizeof(a->cs));
	before.bytes = a->bytes;
	before.entries = a->entries;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		ssize_t n = read_full(fd, buf, IO_BUF);
		size_t whole, tail;

		if (n < 0) {
			fr->err = errno;
			buddyctl_err("analyze: %s: %s", shown,
				     strerror(fr->err));
			ret = -1;
			break;
		}
		total += n;
		whole = n / BUDDY_ENTRY_BYTES;
		tail = n % BUDDY_ENTRY_BYTES;
		if (tail) {
			/* Only at end of file: read_full() fills the buffer. */
			memset(buf + n, 0, BUDDY_ENTRY_BYTES - tail);
			whole++;
			fr->padded = true;
		}
		if (process(a, buf, whole)) {
			fr->err = EIO;
			ret = -2;	/* stdout failed: no point going on */
			break;
		}
		if ((size_t)n < IO_BUF)
			break;
	}
	a->bytes += total;
	if (!is_stdin)
		close(fd);
	if (ret == -1) {
		fr->padded = false;
		memcpy(a->cs, before.cs, sizeof(a->cs));
		a->bytes = before.bytes;
		a->entries = before.entries;
		return ret;
	}
	/* this file's share: the totals now less those before it */
	for (unsigned int i = 0; i < a->nr; i++) {
		struct codec_stats *d = &fr->t.cs[i];

		d->c = a->cs[i].c;
		d->bytes_fig3 = a->cs[i].bytes_fig3 - before.cs[i].bytes_fig3;
		d->bytes_buddy = a->cs[i].bytes_buddy -
				 before.cs[i].bytes_buddy;
		for (unsigned int k = 0; k < BUDDY_CODE_NR; k++)
			d->hist[k] = a->cs[i].hist[k] - before.cs[i].hist[k];
	}
	fr->t.bytes = a->bytes - before.bytes;
	fr->t.entries = a->entries - before.entries;
	return ret;
}

/*
 * One note for all padded tails, not one per file: the file when only
 * one was padded, else the count and the first.
 */
static void padding_note(const struct analyze *a, int nfiles)
{
	const struct file_result *first = NULL;
	int n = 0, j;

	for (j = 0; j < nfiles; j++) {
		if (!a->files[j].padded)
			continue;
		if (!n++)
			first = &a->files[j];
	}
	if (n == 1)
		fprintf(stderr,
			"buddyctl: analyze: %s: %llu bytes is not a multiple of %u; last entry zero-padded\n",
			strcmp(first->name, "-") ? first->name : "(stdin)",
			(unsigned long long)first->t.bytes, BUDDY_ENTRY_BYTES);
	else if (n > 1)
		fprintf(stderr,
			"buddyctl: analyze: %d files are not a multiple of %u bytes (the first: %s); the last entry of each zero-padded\n",
			n, BUDDY_ENTRY_BYTES,
			strcmp(first->name, "-") ? first->name : "(stdin)");
}

static double ratio(u64 entries, u64 bytes)
{
	return (double)BUDDY_ENTRY_BYTES * entries / bytes;
}

/* A ratio cell: "inf" for all-zero data (nothing stored). */
static void fmt_ratio(char *buf, size_t len, u64 entries, u64 bytes)
{
	if (!bytes)
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.2f", ratio(entries, bytes));
}

#define NCOLS	(5 + BUDDY_CODE_NR)

/*
 * The table: every column as wide as its widest cell, so that numbers of
 * any width stay under their headers.  No entries: "no data", no table.
 */
/*
 * --per-file: one row per file analysed, its bytes, entries and the
 * ratio with Buddy's sizes of every codec; columns as wide as their cells.
 */
static void per_file_text(struct analyze *a, int nfiles)
{
	char cell[BUDDY_CODEC_NR][32];
	int wname = 4, wbytes = 5, wentries = 7, w[BUDDY_CODEC_NR], j;
	unsigned int i;

	for (i = 0; i < a->nr; i++)
		w[i] = strlen(a->cs[i].c->name) > 4 ?
		       (int)strlen(a->cs[i].c->name) : 4;
	for (j = 0; j < nfiles; j++) {
		const struct file_result *fr = &a->files[j];
		char num[32];

		if (fr->err)
			continue;
		if ((int)strlen(fr->name) > wname)
			wname = strlen(fr->name);
		if (snprintf(num, sizeof(num), "%llu",
			     (unsigned long long)fr->t.bytes) > wbytes)
			wbytes = strlen(num);
		if (snprintf(num, sizeof(num), "%llu",
			     (unsigned long long)fr->t.entries) > wentries)
			wentries = strlen(num);
		for (i = 0; i < a->nr; i++) {
			fmt_ratio(cell[i], 32, fr->t.entries,
				  fr->t.cs[i].bytes_buddy);
			if ((int)strlen(cell[i]) > w[i])
				w[i] = strlen(cell[i]);
		}
	}
	printf("per file, ratio-buddy of each codec:\n");
	printf("%-*s %*s %*s", wname, "file", wbytes, "bytes", wentries,
	       "entries");
	for (i = 0; i < a->nr; i++)
		printf(" %*s", w[i], a->cs[i].c->name);
	putchar('\n');
	for (j = 0; j < nfiles; j++) {
		const struct file_result *fr = &a->files[j];

		if (fr->err)
			continue;
		printf("%-*s %*llu %*llu", wname, fr->name, wbytes,
		       (unsigned long long)fr->t.bytes, wentries,
		       (unsigned long long)fr->t.entries);
		for (i = 0; i < a->nr; i++) {
			if (fr->t.entries)
				fmt_ratio(cell[i], 32, fr->t.entries,
					  fr->t.cs[i].bytes_buddy);
			else
				snprintf(cell[i], 32, "-");
			printf(" %*s", w[i], cell[i]);
		}
		putchar('\n');
	}
	putchar('\n');
}

static void report_text(struct analyze *a, int nfiles)
{
	char cell[BUDDY_CODEC_NR][NCOLS][32];
	const char *head[NCOLS] = { "codec", "ratio-fig3", "ratio-buddy",
				    "bytes-fig3", "bytes-buddy" };
	int w[NCOLS];
	unsigned int i, k;

	int j, skipped = 0;

	for (j = 0; j < nfiles; j++)
		skipped += a->files[j].err != 0;
	if (a->per_file)
		per_file_text(a, nfiles);
	printf("files %d", nfiles - skipped);
	if (skipped)
		printf(" (%d skipped: errors on stderr)", skipped);
	printf(", bytes %llu, entries %llu (%u B each)\n\n",
	       (unsigned long long)a->bytes, (unsigned long long)a->entries,
	       BUDDY_ENTRY_BYTES);
	if (!a->entries) {
		printf("no data: the input holds no entry, so there is no ratio\n");
		return;
	}
	for (k = 0; k < BUDDY_CODE_NR; k++)
		head[5 + k] = hist_keys[k];
	for (i = 0; i < a->nr; i++) {
		struct codec_stats *s = &a->cs[i];

		snprintf(cell[i][0], 32, "%s", s->c->name);
		fmt_ratio(cell[i][1], 32, a->entries, s->bytes_fig3);
		fmt_ratio(cell[i][2], 32, a->entries, s->bytes_buddy);
		snprintf(cell[i][3], 32, "%llu",
			 (unsigned long long)s->bytes_fig3);
		snprintf(cell[i][4], 32, "%llu",
			 (unsigned long long)s->bytes_buddy);
		for (k = 0; k < BUDDY_CODE_NR; k++)
			snprintf(cell[i][5 + k], 32, "%llu",
				 (unsigned long long)s->hist[k]);
	}
	for (k = 0; k < NCOLS; k++) {
		w[k] = strlen(head[k]);
		for (i = 0; i < a->nr; i++)
			if ((int)strlen(cell[i][k]) > w[k])
				w[k] = strlen(cell[i][k]);
	}
	/* the codec name left-aligned, the numbers right-aligned */
	printf("%-*s", w[0], head[0]);
	for (k = 1; k < NCOLS; k++)
		printf(" %*s", w[k], head[k]);
	putchar('\n');
	for (i = 0; i < a->nr; i++) {
		printf("%-*s", w[0], cell[i][0]);
		for (k = 1; k < NCOLS; k++)
			printf(" %*s", w[k], cell[i][k]);
		putchar('\n');
	}
}

static struct json_object *json_ratio(u64 entries, u64 bytes)
{
	if (!entries)
		return NULL;	/* no data: null */
	if (!bytes)
		return json_object_new_string("inf");
	return bjson_num(ratio(entries, bytes), "%.4f");
}

/* The "codecs" array of @nr codec totals over @entries entries. */
static struct json_object *codecs_json(const struct codec_stats *cs,
				       unsigned int nr, u64 entries)
{
	struct json_object *jcodecs = json_object_new_array();
	unsigned int i, k;

	for (i = 0; i < nr; i++) {
		const struct codec_stats *s = &cs[i];
		struct json_object *jc = json_object_new_object();
		struct json_object *jh = json_object_new_object();

		json_object_object_add(jc, "codec",
				       json_object_new_string(s->c->name));
		json_object_object_add(jc, "ratio_fig3",
				       json_ratio(entries, s->bytes_fig3));
		json_object_object_add(jc, "ratio_buddy",
				       json_ratio(entries, s->bytes_buddy));
		json_object_object_add(jc, "bytes_fig3",
				       json_object_new_int64(s->bytes_fig3));
		json_object_object_add(jc, "bytes_buddy",
				       json_object_new_int64(s->bytes_buddy));
		for (k = 0; k < BUDDY_CODE_NR; k++)
			json_object_object_add(jh, hist_keys[k],
					json_object_new_int64(s->hist[k]));
		json_object_object_add(jc, "histogram", jh);
		json_object_array_add(jcodecs, jc);
	}
	return jcodecs;
}

static void report_json(struct analyze *a, int nfiles)
{
	struct json_object *root = json_object_new_object();
	struct json_object *jfiles = json_object_new_array();
	struct json_object *jskipped = json_object_new_array();
	struct json_object *jper = json_object_new_array();
	int j;

	for (j = 0; j < nfiles; j++) {
		const struct file_result *fr = &a->files[j];
		struct json_object *o;

		if (fr->err) {
			o = json_object_new_object();
			json_object_object_add(o, "file",
					       au_json_string(fr->name));
			json_object_object_add(o, "error",
				json_object_new_string(strerror(fr->err)));
			json_object_array_add(jskipped, o);
			continue;
		}
		json_object_array_add(jfiles, au_json_string(fr->name));
		if (!a->per_file)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "file", au_json_string(fr->name));
		json_object_object_add(o, "bytes",
				       json_object_new_int64(fr->t.bytes));
		json_object_object_add(o, "entries",
				       json_object_new_int64(fr->t.entries));
		json_object_object_add(o, "codecs", codecs_json(fr->t.cs, a->nr,
							fr->t.entries));
		json_object_array_add(jper, o);
	}
	json_object_object_add(root, "files", jfiles);
	json_object_object_add(root, "skipped", jskipped);
	json_object_object_add(root, "bytes", json_object_new_int64(a->bytes));
	json_object_object_add(root, "entries",
			       json_object_new_int64(a->entries));
	json_object_object_add(root, "codecs", codecs_json(a->cs, a->nr,
							   a->entries));
	if (a->per_file)
		json_object_object_add(root, "per_file", jper);
	else
		json_object_put(jper);
	bjson_write(stdout, root, BJSON_PRETTY);
	json_object_put(root);
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "codec",	required_argument,	NULL, 'c' },
		{ "per-entry",	no_argument,		NULL, 'e' },
		{ "per-file",	no_argument,		NULL, 'f' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct analyze a = { 0 };
	int opt, i, r, nfiles, skipped = 0, ret = 0;
	u8 *buf;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:efjh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (!add_codecs(&a, optarg))
				return EXIT_USAGE;
			break;
		case 'e':
			a.per_entry = true;
			break;
		case 'f':
			a.per_file = true;
			break;
		case 'j':
			a.json = true;
			break;
		case 'h':
			analyze_usage(stdout);
			return 0;
		default:
			analyze_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		buddyctl_err("analyze: no FILE given (\"-\" reads stdin)");
		analyze_usage(stderr);
		return EXIT_USAGE;
	}
	if (a.per_entry && a.json) {
		buddyctl_err("analyze: --per-entry and --json do not combine");
		return EXIT_USAGE;
	}
	if (a.per_entry && a.per_file) {
		buddyctl_err("analyze: --per-entry and --per-file do not combine");
		return EXIT_USAGE;
	}
	if (a.per_entry && a.nr > 1) {
		buddyctl_err("analyze: --per-entry takes exactly one codec");
		return EXIT_USAGE;
	}
	if (!a.nr) {
		/* the implementations in force, as buddy_codec_by_id() says */
		if (a.per_entry) {
			a.cs[a.nr++].c = buddy_codec_by_id(BUDDY_CODEC_BPC);
		} else {
			for (i = 0; buddy_codecs[i] && a.nr < BUDDY_CODEC_NR; i++)
				a.cs[a.nr++].c =
					buddy_codec_by_id(buddy_codecs[i]->id);
		}
	}

	/* One spare entry so a padded tail never leaves the buffer. */
	buf = malloc(IO_BUF + BUDDY_ENTRY_BYTES);
	a.files = calloc(argc - optind, sizeof(*a.files));
	if (a.per_entry)
		a.out = malloc(OUT_BUF);
	if (!buf || !a.files || (a.per_entry && !a.out)) {
		buddyctl_err("analyze: out of memory");
		free(buf);
		free(a.files);
		free(a.out);
		return 1;
	}

	/* a bad file is reported and skipped; the rest are analysed */
	nfiles = argc - optind;
	for (i = 0; i < nfiles; i++) {
		a.files[i].name = argv[optind + i];
		r = analyze_file(&a, &a.files[i], buf);
		if (r)
			skipped++;
		if (r == -2)
			break;
	}
	padding_note(&a, nfiles);
	if (a.per_entry) {
		if (flush_out(&a))
			ret = 1;
	} else if (skipped < nfiles) {	/* no report of nothing */
		if (a.json)
			report_json(&a, nfiles);
		else
			report_text(&a, nfiles);
		if (fflush(stdout) || ferror(stdout)) {
			buddyctl_err("analyze: write to stdout: %s",
				     strerror(errno));
			ret = 1;
		}
	}
	if (skipped) {
		buddyctl_err("analyze: %d of %d file%s skipped (errors above)%s",
			     skipped, nfiles, nfiles == 1 ? "" : "s",
			     skipped < nfiles && !a.per_entry ?
			     "; the report covers the others" : "");
		ret = 1;
	}
	free(buf);
	free(a.files);
	free(a.out);
	return ret;
}
