/* SPDX-License-Identifier: GPL-2.0 */
/*
 * state.h - buddyd's profile table and the state file that keeps it, one
 * profile per line, "uid<TAB>label<TAB>target<TAB>codec" with C-escaped
 * labels: the format of tools/lib/profile_file.h, whose functions escape,
 * parse and format it (buddy_label_escape(), buddy_profile_parse_line() ...)
 * for buddyd as for buddyctl.  Here: the table in memory, loading it with
 * warnings for bad lines, saving it atomically.
 */
#ifndef BUDDYD_STATE_H
#define BUDDYD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/buddy.h"
#include "profile_file.h"

/*
 * The table's entries are the uapi's struct buddy_profile_entry (reserved
 * zero), so that they are parsed, formatted and installed as they are.
 */

struct bd_profiles {
	struct buddy_profile_entry *v;
	size_t n, cap;
};

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

struct buddy_profile_entry *bd_profiles_find(const struct bd_profiles *t,
					     uint32_t uid, const char *label);
/*
 * bd_profiles_put() - insert @p, or replace the entry with its uid and
 * label.  Return: 1 when the table changed, 0 when it held @p already,
 * -ENOMEM.
 */
int bd_profiles_put(struct bd_profiles *t,
		    const struct buddy_profile_entry *p);
void bd_profiles_clear(struct bd_profiles *t);
void bd_profiles_free(struct bd_profiles *t);

#endif /* BUDDYD_STATE_H */
