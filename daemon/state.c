// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - buddyd's state file (format and table in
 * tools/policy/profile_file.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "tools/common/replace_file.h"
#include "state.h"

static void report(void *ctx, enum buddy_profile_note what, unsigned int line,
		   const char *text)
{
	bd_warn("%s:%u: %s%s", (const char *)ctx, line, text,
		what == BUDDY_PROFILE_BAD ? ", skipped" : "");
}

int bd_state_load(const char *path, struct buddy_profile_table *t,
		  unsigned int *bad)
{
	struct buddy_profile_stats st;
	FILE *f;
	int err;

	buddy_profile_clear(t);
	if (bad)
		*bad = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = buddy_profile_read(t, f, report, (void *)path, &st);
	fclose(f);
	if (bad)
		*bad = st.bad;
	return err;
}

static const char state_header[] =
	"# buddyd profiles: the target and codec an AUTO allocation of user\n"
	"# <uid> labelled <label> gets (BUDDY_TARGET_AUTO).  One per line:\n"
	"#\tuid<TAB>label<TAB>target<TAB>codec\n"
	"# targets 16x 4x 2x 4/3x 1x; codecs bpc zvc bdi fpc none default.\n"
	"# Labels are escaped: \\\\ backslash, \\t tab, \\n newline, \\r CR,\n"
	"# \\xNN any other byte outside printable ASCII.  buddyd rewrites this\n"
	"# file when it decides, keeping your comments and lines; after\n"
	"# editing it, reload buddyd (SIGHUP).\n";

/* Create the directory of @path when missing (one level). */
static int make_dir(const char *path)
{
	char dir[PATH_MAX], *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int bd_state_save(const char *path, const struct buddy_profile_table *t)
{
	struct buddy_replace r;
	int err;

	err = make_dir(path);
	if (!err)
		err = buddy_replace_open(&r, path);
	if (err)
		return err;
	err = buddy_profile_table_write(r.f, t, state_header);
	if (err) {
		buddy_replace_abort(&r);
		return err;
	}
	return buddy_replace_commit(&r);
}

int bd_state_check(const char *path)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], *slash;
	bool made = false;
	struct stat st;
	int fd, err = 0;

	/* through a symlink the temporary file is made next to its target */
	if (!realpath(path, dir) &&
	    snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (!stat(dir, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (access(dir, W_OK))
			return -errno;
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = 0;
	else if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	if (stat(dir, &st)) {
		/* bd_state_save() makes it: try, and leave no trace */
		if (errno != ENOENT || mkdir(dir, 0755))
			return -errno;
		made = true;
	} else if (!S_ISDIR(st.st_mode)) {
		return -ENOTDIR;
	}
	snprintf(tmp, sizeof(tmp), "%s/.buddyd-checkXXXXXX", dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		close(fd);
		unlink(tmp);
	}
	if (made)
		rmdir(dir);
	return err;
}
