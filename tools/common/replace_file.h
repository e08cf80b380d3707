/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * replace_file.h - write a file so that a reader (or a crash) sees either
 * the old content or the new one, never a truncated mix: the new content
 * goes to a temporary file next to the target ("PATH.tmpXXXXXX"), which is
 * fsync'ed and renamed over it at the end.  Shared by buddyd (its state
 * file), buddyctl profile (-o, --json-out, -p) and the profile files.
 *
 *   - A symlink is written through: the link stays, its target is
 *     replaced (the temporary file is made in the target's directory).
 *   - An existing file keeps its mode (and, when the caller may, its
 *     owner); a new one gets 0666 & ~umask.
 *   - What is not a regular file (/dev/null, /dev/stdout, a FIFO) is
 *     written directly: it cannot be renamed over.
 *   - A failed or abandoned write leaves the old file as it was.
 */
#ifndef BUDDY_TOOLS_REPLACE_FILE_H
#define BUDDY_TOOLS_REPLACE_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct buddy_replace {
	FILE *f;			/* write here */
	char target[PATH_MAX];		/* @path, symlinks resolved */
	char tmp[PATH_MAX + 16];	/* "" when written directly */
};

/*
 * buddy_replace_check() - can @path be replaced?  Creates it when missing
 * (never truncates it) and creates and removes a temporary file next to
 * its target, so that a later buddy_replace_open() and rename will work.
 * On failure @failed (@len bytes; may be NULL) receives the object that
 * failed: @path, its symlink target, or the temporary file's template.
 * Return: 0 or -errno (EISDIR for a directory).
 */
int buddy_replace_check(const char *path, char *failed, size_t len);

/* buddy_replace_open() - start writing @path.  Return: 0 or -errno. */
int buddy_replace_open(struct buddy_replace *r, const char *path);

/*
 * buddy_replace_commit() - flush, fsync, close and rename over the target.
 * On error the target is left as it was.  Return: 0 or -errno.
 */
int buddy_replace_commit(struct buddy_replace *r);

/* buddy_replace_abort() - close and drop the temporary file. */
void buddy_replace_abort(struct buddy_replace *r);

#endif /* BUDDY_TOOLS_REPLACE_FILE_H */
