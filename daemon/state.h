/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state.h - buddyd's profile table and the state file that keeps it, one
 * profile per line, readable and editable by a person:
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
 * With quoting (log messages), '"' is written as \x22 as well.
 *
 * buddy.ko itself takes only printable ASCII without '/' (at most 31
 * bytes): bd_label_kernel_valid() says whether a loaded label can be
 * installed.
 */
#ifndef BUDDYD_STATE_H
#define BUDDYD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/buddy.h"

/* Longest escaped label: every byte as \xNN, plus the NUL. */
#define BD_LABEL_ESC_MAX	(4 * (BUDDY_LABEL_LEN - 1) + 1)

struct bd_profile {
	uint32_t uid;
	char label[BUDDY_LABEL_LEN];
	unsigned int target;
	unsigned int codec;
};

struct bd_profiles {
	struct bd_profile *v;
	size_t n, cap;
};

/*
 * bd_label_escape() - escape @label (NUL-terminated) into @out, which holds
 * at least BD_LABEL_ESC_MAX bytes for a label of < BUDDY_LABEL_LEN bytes.
 * @quote: escape '"' too.
 * Return: the length written (the output is cut, still NUL-terminated,
 * when @outlen is too small).
 */
size_t bd_label_escape(const char *label, char *out, size_t outlen,
		       bool quote);

/*
 * bd_label_unescape() - decode the @len bytes at @in into @label
 * (BUDDY_LABEL_LEN bytes, NUL-padded).
 * Return: 0; -EINVAL for a bad escape (a lone '\', an unknown letter, \x
 * without two hex digits, \x00) or a raw byte that must be escaped (control
 * bytes and 0x7f..0xff); -ENAMETOOLONG past BUDDY_LABEL_LEN - 1 bytes.
 */
int bd_label_unescape(const char *in, size_t len, char *label);

/* What buddy.ko accepts: 0..31 bytes of 0x20..0x7e other than '/'. */
bool bd_label_kernel_valid(const char *label);

/*
 * bd_state_parse_line() - one line without its newline.
 * Return: 1 for a profile (in @p), 0 for a blank or comment line, -EINVAL
 * with *@why set to the reason for anything else.
 */
int bd_state_parse_line(const char *line, struct bd_profile *p,
			const char **why);

/* One line (with '\n') for @p into @buf; returns its length. */
size_t bd_state_format_line(const struct bd_profile *p, char *buf,
			    size_t len);

/*
 * bd_state_load() - read a state file into @t (replacing its contents).
 * Bad lines are logged as warnings ("path:line: why") and skipped; a later
 * line with the uid and label of an earlier one replaces it (warned).
 * @bad: receives the number of lines skipped, may be NULL.
 * Return: 0; -ENOENT when the file does not exist (@t empty, nothing
 * logged); another -errno when it cannot be read.
 */
int bd_state_load(const char *path, struct bd_profiles *t, unsigned int *bad);

/*
 * bd_state_save() - write @t atomically: a temporary file in the same
 * directory, fsync'ed and renamed over @path; entries sorted by uid, then
 * label.  The directory is created (mode 0755) when missing.
 * Return: 0 or -errno.
 */
int bd_state_save(const char *path, const struct bd_profiles *t);

struct bd_profile *bd_profiles_find(const struct bd_profiles *t, uint32_t uid,
				    const char *label);
/*
 * bd_profiles_put() - insert @p, or replace the entry with its uid and
 * label.  Return: 1 when the table changed, 0 when it held @p already,
 * -ENOMEM.
 */
int bd_profiles_put(struct bd_profiles *t, const struct bd_profile *p);
void bd_profiles_clear(struct bd_profiles *t);
void bd_profiles_free(struct bd_profiles *t);

#endif /* BUDDYD_STATE_H */
