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

/* As buddy_profile_write(), atomically: a temporary file renamed to @path. */
int buddy_profile_save(const char *path, const struct buddy_profile_entry *e,
		       size_t n, const char *comment);

#endif /* BUDDY_TOOLS_PROFILE_FILE_H */
