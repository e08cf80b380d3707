// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - the profile table and its state file (format in
 * tools/lib/profile_file.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

/* ---- the table ---------------------------------------------------------- */

struct buddy_profile_entry *bd_profiles_find(const struct bd_profiles *t,
					     uint32_t uid, const char *label)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uid == uid &&
		    !strncmp(t->v[i].label, label, BUDDY_LABEL_LEN))
			return &t->v[i];
	return NULL;
}

int bd_profiles_put(struct bd_profiles *t,
		    const struct buddy_profile_entry *p)
{
	struct buddy_profile_entry *old = bd_profiles_find(t, p->uid, p->label);

	if (old) {
		if (old->target == p->target && old->codec == p->codec)
			return 0;
		old->target = p->target;
		old->codec = p->codec;
		return 1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct buddy_profile_entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = *p;
	t->v[t->n].reserved = 0;	/* installed as it is */
	/* labels compare with strncmp: keep the padding zero */
	memset(t->v[t->n].label, 0, BUDDY_LABEL_LEN);
	memcpy(t->v[t->n].label, p->label,
	       strnlen(p->label, BUDDY_LABEL_LEN - 1));
	t->n++;
	return 1;
}

void bd_profiles_clear(struct bd_profiles *t)
{
	t->n = 0;
}

void bd_profiles_free(struct bd_profiles *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* ---- the file ----------------------------------------------------------- */

int bd_state_load(const char *path, struct bd_profiles *t, unsigned int *bad)
{
	char *line = NULL, esc[BUDDY_LABEL_ESC_MAX];
	unsigned int ln = 0, nbad = 0;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err = 0;

	bd_profiles_clear(t);
	if (bad)
		*bad = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct buddy_profile_entry p;
		const char *why = NULL;
		int r;

		ln++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (strlen(line) != (size_t)len) {
			bd_warn("%s:%u: NUL byte in line, skipped", path, ln);
			nbad++;
			continue;
		}
		r = buddy_profile_parse_line(line, &p, &why);
		if (r < 0) {
			bd_warn("%s:%u: %s, skipped", path, ln, why);
			nbad++;
			continue;
		}
		if (!r)
			continue;
		if (bd_profiles_find(t, p.uid, p.label)) {
			buddy_label_escape(p.label, esc, sizeof(esc), true);
			bd_warn("%s:%u: uid %u label \"%s\" again: this line wins",
				path, ln, p.uid, esc);
		}
		if (bd_profiles_put(t, &p) < 0) {
			err = -ENOMEM;
			break;
		}
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (bad)
		*bad = nbad;
	return err;
}

static int cmp_profile(const void *a, const void *b)
{
	const struct buddy_profile_entry *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return strncmp(x->label, y->label, BUDDY_LABEL_LEN);
}

static const char state_header[] =
	"# buddyd profiles: the target and codec an AUTO allocation of user\n"
	"# <uid> labelled <label> gets (BUDDY_TARGET_AUTO).  One per line:\n"
	"#\tuid<TAB>label<TAB>target<TAB>codec\n"
	"# targets 16x 4x 2x 4/3x 1x; codecs bpc zvc bdi fpc none default.\n"
	"# Labels are escaped: \\\\ backslash, \\t tab, \\n newline, \\r CR,\n"
	"# \\xNN any other byte outside printable ASCII.  buddyd rewrites this\n"
	"# file when it decides; after editing it, reload buddyd (SIGHUP).\n";

int bd_state_save(const char *path, const struct bd_profiles *t)
{
	char tmp[PATH_MAX], dir[PATH_MAX], *slash;
	struct buddy_profile_entry *v = NULL;
	int fd, err = 0, r;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	if (t->n) {
		v = malloc(t->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, t->v, t->n * sizeof(*v));
		qsort(v, t->n, sizeof(*v), cmp_profile);
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(v);
		return err;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	fputs(state_header, f);
	r = buddy_profile_write(f, v, t->n, NULL);
	if (fflush(f) || fsync(fileno(f)))
		err = -errno;
	else
		err = r;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (err)
		unlink(tmp);
	free(v);
	return err;
}
