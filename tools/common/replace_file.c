// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * replace_file.c - replace a file through a temporary file and rename,
 * keeping symlinks and modes (replace_file.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replace_file.h"

/* @path with every symlink of its last component followed. */
static int resolve(const char *path, char *out, size_t len)
{
	char cur[PATH_MAX], link[PATH_MAX], next[2 * PATH_MAX];
	int hops;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -ENAMETOOLONG;
	for (hops = 0; hops < 40; hops++) {
		struct stat st;
		const char *slash;
		ssize_t n;

		if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) {
			if (snprintf(out, len, "%s", cur) >= (int)len)
				return -ENAMETOOLONG;
			return 0;
		}
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = 0;
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			snprintf(next, sizeof(next), "%s", link);
		else
			snprintf(next, sizeof(next), "%.*s/%s",
				 (int)(slash - cur), cur, link);
		if (strlen(next) >= sizeof(cur))
			return -ENAMETOOLONG;
		strcpy(cur, next);
	}
	return -ELOOP;
}

/* A temporary file next to @target: its fd, name in @tmp. */
static int make_tmp(const char *target, char *tmp, size_t len)
{
	int fd;

	if (snprintf(tmp, len, "%s.tmpXXXXXX", target) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int buddy_replace_check(const char *path, char *failed, size_t len)
{
	char target[PATH_MAX], tmp[PATH_MAX + 16];
	struct stat st;
	int fd, r;

	if (failed && len)
		snprintf(failed, len, "%s", path);
	r = resolve(path, target, sizeof(target));
	if (r)
		return r;
	if (failed && len)
		snprintf(failed, len, "%s", target);
	if (!stat(target, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISREG(st.st_mode))	/* written directly */
			return access(target, W_OK) ? -errno : 0;
		fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	} else if (errno == ENOENT) {
		fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	} else {
		return -errno;
	}
	if (fd < 0)
		return -errno;
	close(fd);
	fd = make_tmp(target, tmp, sizeof(tmp));
	if (fd < 0) {
		/* the template: the object that could not be made */
		if (failed && len)
			snprintf(failed, len, "%s.tmpXXXXXX", target);
		return fd;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

int buddy_replace_open(struct buddy_replace *r, const char *path)
{
	struct stat st;
	int fd, err;

	memset(r, 0, sizeof(*r));
	err = resolve(path, r->target, sizeof(r->target));
	if (err)
		return err;
	if (!stat(r->target, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		r->f = fopen(r->target, "we");
		return r->f ? 0 : -errno;
	}
	fd = make_tmp(r->target, r->tmp, sizeof(r->tmp));
	if (fd < 0)
		return fd;
	if (!stat(r->target, &st)) {
		/* the owner only when we may give it (root): else ours */
		if (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM) {
			err = -errno;
			close(fd);
			unlink(r->tmp);
			return err;
		}
		fchmod(fd, st.st_mode & 07777);
	} else {
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	r->f = fdopen(fd, "w");
	if (!r->f) {
		err = -errno;
		close(fd);
		unlink(r->tmp);
		return err;
	}
	return 0;
}

int buddy_replace_commit(struct buddy_replace *r)
{
	int err = 0;

	/* a failed write left its errno (EFBIG, ENOSPC ...); stdio keeps none */
	if (fflush(r->f) || ferror(r->f))
		err = -(errno ? errno : EIO);
	if (!err && r->tmp[0] && fsync(fileno(r->f)))
		err = -errno;
	if (fclose(r->f) && !err)
		err = -errno;
	r->f = NULL;
	if (r->tmp[0]) {
		if (!err && rename(r->tmp, r->target))
			err = -errno;
		if (err)
			unlink(r->tmp);
	}
	return err;
}

void buddy_replace_abort(struct buddy_replace *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
	if (r->tmp[0])
		unlink(r->tmp);
}
