/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * profile_file.h - write and read profile files: the targets and codecs that
 * AUTO allocations (BUDDY_TARGET_AUTO) get, per uid and label.
 *
 * The format is buddyd's state file (daemon/state.h), so that a file written
 * by `buddyctl profile --profile-out` loads in buddyd (StateFile=) and in any
 * tool that reads that format.  One profile per line:
 *
 *	uid<TAB>label<TAB>target<TAB>codec
 *
 *   uid     decimal
 *   label   escaped: \\ \t \n \r, \xNN (lowercase) for every other byte
 *           outside 0x20..0x7e; may be empty
 *   target  16x, 4x, 2x, 4/3x or 1x (buddy_target_name())
 *   codec   bpc, zvc, bdi, fpc, none or default (buddy_codec_name())
 *
 * Lines starting with '#' and blank lines are comments.  The reader here is
 * strict about the fields and lenient about spaces around uid, target and
 * codec, as buddyd's is.
 */
#ifndef BUDDY_TOOLS_PROFILE_FILE_H
#define BUDDY_TOOLS_PROFILE_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "uapi/linux/buddy.h"

/* Longest escaped label, with its NUL. */
#define BUDDY_LABEL_ESC_MAX	(4 * (BUDDY_LABEL_LEN - 1) + 1)

/* Escape @label into @out (cut, still NUL-terminated, when too small). */
size_t buddy_label_escape(const char *label, char *out, size_t outlen);

/* One line with its '\n' into @buf; returns its length (snprintf rules). */
int buddy_profile_format_line(const struct buddy_profile_entry *e, char *buf,
			      size_t len);

/*
 * Parse one line without its newline.  Return: 1 for a profile in @e, 0 for
 * a comment or blank line, -EINVAL for anything else.
 */
int buddy_profile_parse_line(const char *line, struct buddy_profile_entry *e);

/*
 * Write @n entries to @f, each "# "-prefixed line of @comment (may be NULL,
 * may hold several lines) first.  Return: 0 or -errno.
 */
int buddy_profile_write(FILE *f, const struct buddy_profile_entry *e,
			size_t n, const char *comment);

/* As buddy_profile_write(), atomically: a temporary file renamed to @path. */
int buddy_profile_save(const char *path, const struct buddy_profile_entry *e,
		       size_t n, const char *comment);

#endif /* BUDDY_TOOLS_PROFILE_FILE_H */
