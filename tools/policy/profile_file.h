/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * profile_file.h - profile files: the targets and codecs that AUTO
 * allocations (BUDDY_TARGET_AUTO) get, per uid and label.  The one
 * implementation of the format, shared by buddyd (its state file,
 * daemon/state.h), buddyctl (load-profiles, profile --profile-out) and the
 * tests, so that a file one writes loads in the others.  One profile per
 * line, readable and editable by a person:
 *
 *	uid<TAB>label<TAB>target<TAB>codec
 *
 *   uid     decimal, 0..4294967294
 *   label   escaped (below); may be empty
 *   target  16x, 4x, 2x, 4/3x or 1x (anything buddy_target_parse() takes
 *           but auto: "4", "32B" ...); written as buddy_target_name()
 *   codec   bpc, zvc, bdi, fpc, none or default (buddy_codec_parse())
 *
 * Blank lines and lines whose first non-blank byte is '#' are comments.
 * A UTF-8 byte-order mark at the start of a file is skipped.
 * Fields are separated by exactly one TAB; spaces around the uid, target
 * and codec are ignored, spaces in a label are part of it.  A trailing CR
 * is ignored.
 *
 * Label escaping (C-style), so that any byte string 1..255 round-trips:
 *   \\      backslash           \t  tab (0x09)
 *   \n      newline (0x0a)      \r  carriage return (0x0d)
 *   \xNN    the byte 0xNN, exactly two hex digits (either case), not 00
 *   every other byte of 0x20..0x7e stands for itself; bytes below 0x20 and
 *   from 0x7f up are written as \xNN (lowercase) and must be on input.
 * With quoting (log and error messages), '"' is written as \x22 as well.
 *
 * buddy.ko itself takes only printable ASCII without '/' (at most 31
 * bytes): buddy_label_kernel_valid() says whether a loaded label can be
 * installed.
 */
#ifndef BUDDY_TOOLS_PROFILE_FILE_H
#define BUDDY_TOOLS_PROFILE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "uapi/linux/buddy.h"

/* Longest escaped label: every byte as \xNN, plus the NUL. */
#define BUDDY_LABEL_ESC_MAX	(4 * (BUDDY_LABEL_LEN - 1) + 1)

/*
 * buddy_label_escape() - escape @label (NUL-terminated) into @out, which
 * holds at least BUDDY_LABEL_ESC_MAX bytes for a label of < BUDDY_LABEL_LEN
 * bytes.
 * @quote: escape '"' too.
 * Return: the length written (the output is cut, still NUL-terminated,
 * when @outlen is too small).
 */
size_t buddy_label_escape(const char *label, char *out, size_t outlen,
			  bool quote);

/*
 * buddy_label_unescape() - decode the @len bytes at @in into @label
 * (BUDDY_LABEL_LEN bytes, NUL-padded).
 * Return: 0; -EINVAL for a bad escape (a lone '\', an unknown letter, \x
 * without two hex digits, \x00) or a raw byte that must be escaped (control
 * bytes and 0x7f..0xff); -ENAMETOOLONG past BUDDY_LABEL_LEN - 1 bytes.
 */
int buddy_label_unescape(const char *in, size_t len, char *label);

/* What buddy.ko accepts: 0..31 bytes of 0x20..0x7e other than '/'. */
bool buddy_label_kernel_valid(const char *label);

/*
 * buddy_profile_parse_line() - one line without its newline.
 * @why: receives the reason when the line is refused; may be NULL.
 * Return: 1 for a profile (in @e, reserved zero), 0 for a blank or comment
 * line, -EINVAL with *@why set to the reason for anything else.
 */
int buddy_profile_parse_line(const char *line, struct buddy_profile_entry *e,
			     const char **why);

/* One line (with '\n') for @e into @buf; returns its length. */
size_t buddy_profile_format_line(const struct buddy_profile_entry *e,
				 char *buf, size_t len);

/*
 * Write @n entries to @f, each "# "-prefixed line of @comment (may be NULL,
 * may hold several lines) first.  Return: 0 or -errno.
 */
int buddy_profile_write(FILE *f, const struct buddy_profile_entry *e,
			size_t n, const char *comment);

/*
 * As buddy_profile_write(), atomically: a temporary file renamed to @path
 * (tools/common/replace_file.h: symlinks written through, mode kept).
 */
int buddy_profile_save(const char *path, const struct buddy_profile_entry *e,
		       size_t n, const char *comment);

/*
 * A profile table as a file holds it: what buddyd keeps and saves, and what
 * buddyctl load-profiles installs.  One rule for both:
 *
 *   - a later line with the uid and label of an earlier one replaces it;
 *   - at most BUDDY_PROFILE_MAX (4096, the size of buddy.ko's table)
 *     distinct profiles: the first 4096 are loaded, every later line that
 *     would add one is not (reported once, with its line and the count);
 *   - every line is kept, so that a save writes comments, blank lines and
 *     refused lines back verbatim and in place, each profile on its own
 *     line (unchanged profiles byte for byte), and appends new profiles,
 *     sorted by uid and label.
 *
 * Finding and adding are O(1) (a hash of uid and label): a file is read in
 * linear time.
 */
struct buddy_profile_line {
	char *text;			/* verbatim, without the newline */
	size_t len;			/* may hold NUL bytes */
	size_t entry;			/* 1 + the profile this line holds */
};

struct buddy_profile_table {
	struct buddy_profile_entry *v;	/* in the order first seen */
	size_t n, cap;
	size_t *home;			/* per profile: 1 + its line, or 0 */
	size_t *hash;			/* 1 + index into @v, open addressing */
	size_t hcap;
	struct buddy_profile_line *lines;
	size_t nlines, caplines;
};

struct buddy_profile_entry *
buddy_profile_find(const struct buddy_profile_table *t, uint32_t uid,
		   const char *label);
/*
 * buddy_profile_put() - insert @p, or replace the profile with its uid and
 * label.  Return: 1 when the table changed, 0 when it held @p already,
 * -ENOSPC when it holds BUDDY_PROFILE_MAX profiles and @p is new, -ENOMEM.
 */
int buddy_profile_put(struct buddy_profile_table *t,
		      const struct buddy_profile_entry *p);
/* Empty the table and forget the file's lines. */
void buddy_profile_clear(struct buddy_profile_table *t);
void buddy_profile_free(struct buddy_profile_table *t);

/* What buddy_profile_read() reports, with the line it concerns. */
enum buddy_profile_note {
	BUDDY_PROFILE_BAD,		/* a refused line (the reason) */
	BUDDY_PROFILE_AGAIN,		/* a later line replaced an earlier one */
	BUDDY_PROFILE_FULL,		/* profiles past the 4096th (once) */
};

typedef void (*buddy_profile_report_fn)(void *ctx,
					enum buddy_profile_note what,
					unsigned int line, const char *text);

struct buddy_profile_stats {
	unsigned int bad;		/* lines refused */
	unsigned int again;		/* lines that replaced an earlier one */
	unsigned int over;		/* profile lines past the 4096th */
};

/*
 * buddy_profile_read() - read @f into @t (which is cleared first), keeping
 * every line.  A line with a NUL byte is refused.
 * @report: called for every refused line, every replacement and once for
 *	    the profiles past the 4096th; may be NULL.
 * Return: 0 or -errno (ENOMEM, EIO); @st (may be NULL) counts the notes.
 */
int buddy_profile_read(struct buddy_profile_table *t, FILE *f,
		       buddy_profile_report_fn report, void *ctx,
		       struct buddy_profile_stats *st);

/*
 * buddy_profile_table_write() - the table to @f: the lines it was read
 * from, in place (a profile whose target or codec changed is written anew
 * on its line), then the profiles no line holds, sorted by uid and label.
 * @header: written first when the table has no lines (a new file); may be
 *	    NULL.  Return: 0 or -errno.
 */
int buddy_profile_table_write(FILE *f, const struct buddy_profile_table *t,
			      const char *header);

#endif /* BUDDY_TOOLS_PROFILE_FILE_H */
