/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state.h - buddyd's profile table and the state file that keeps it, one
 * profile per line, "uid<TAB>label<TAB>target<TAB>codec" with C-escaped
 * labels: the format of tools/policy/profile_file.h, whose table, reader and
 * writer (struct buddy_profile_table, buddy_profile_read() ...) buddyd
 * shares with buddyctl load-profiles.  Here: loading it with warnings for
 * bad lines, saving it atomically without losing a line.
 */
#ifndef BUDDYD_STATE_H
#define BUDDYD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/buddy.h"
#include "tools/policy/profile_file.h"

/*
 * bd_state_load() - read a state file into @t (replacing its contents and
 * remembering its lines).  Bad lines are logged as warnings ("path:line:
 * why") and skipped, and kept for the next save; a later line with the uid
 * and label of an earlier one replaces it (warned); past BUDDY_PROFILE_MAX
 * profiles the rest is not loaded (warned once).  Linear time.
 * @bad: receives the number of lines skipped, may be NULL.
 * Return: 0; -ENOENT when the file does not exist (@t empty, nothing
 * logged); another -errno when it cannot be read.
 */
int bd_state_load(const char *path, struct buddy_profile_table *t,
		  unsigned int *bad);

/*
 * bd_state_save() - write @t atomically (tools/common/replace_file.h): a
 * temporary file next to the file, fsync'ed and renamed over it, through a
 * symlink, with the file's mode.  The lines it was loaded from stay, in
 * place: comments, blank and bad lines verbatim, each profile on its line
 * (rewritten only when it changed); new profiles follow, sorted by uid,
 * then label.  A new file starts with a header saying the format.  The
 * directory is created (mode 0755) when missing.
 * Return: 0 or -errno.
 */
int bd_state_save(const char *path, const struct buddy_profile_table *t);

/*
 * bd_state_check() - can the state file @path be written (its directory
 * created, a temporary file made next to it)?  Tried, and undone.
 * Return: 0 or -errno.
 */
int bd_state_check(const char *path);

#endif /* BUDDYD_STATE_H */
