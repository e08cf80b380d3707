// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profile_file.c - profile files, buddyd's state-file format: label
 * escaping, line parsing and formatting, writing (profile_file.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libbuddy.h"
#include "profile_file.h"

static const char hexdig[] = "0123456789abcdef";

size_t buddy_label_escape(const char *label, char *out, size_t outlen,
			  bool quote)
{
	size_t n = 0;

	if (!outlen)
		return 0;
	for (const unsigned char *s = (const unsigned char *)label; *s; s++) {
		char e[5];
		size_t el;

		if (*s == '\\') {
			memcpy(e, "\\\\", el = 2);
		} else if (*s == '\t') {
			memcpy(e, "\\t", el = 2);
		} else if (*s == '\n') {
			memcpy(e, "\\n", el = 2);
		} else if (*s == '\r') {
			memcpy(e, "\\r", el = 2);
		} else if (*s < 0x20 || *s > 0x7e || (quote && *s == '"')) {
			e[0] = '\\';
			e[1] = 'x';
			e[2] = hexdig[*s >> 4];
			e[3] = hexdig[*s & 15];
			el = 4;
		} else {
			e[0] = *s;
			el = 1;
		}
		if (n + el >= outlen)
			break;
		memcpy(out + n, e, el);
		n += el;
	}
	out[n] = 0;
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int buddy_label_unescape(const char *in, size_t len, char *label)
{
	size_t i, n = 0;

	memset(label, 0, BUDDY_LABEL_LEN);
	for (i = 0; i < len; i++) {
		unsigned char c = in[i];

		if (c == '\\') {
			if (++i == len)
				return -EINVAL;
			switch (in[i]) {
			case '\\':
				c = '\\';
				break;
			case 't':
				c = '\t';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 'x': {
				int hi, lo;

				if (i + 2 >= len)
					return -EINVAL;
				hi = hexval(in[i + 1]);
				lo = hexval(in[i + 2]);
				if (hi < 0 || lo < 0 || (!hi && !lo))
					return -EINVAL;
				c = hi << 4 | lo;
				i += 2;
				break;
			}
			default:
				return -EINVAL;
			}
		} else if (c < 0x20 || c > 0x7e) {
			return -EINVAL;
		}
		if (n == BUDDY_LABEL_LEN - 1)
			return -ENAMETOOLONG;
		label[n++] = c;
	}
	return 0;
}

bool buddy_label_kernel_valid(const char *label)
{
	size_t len = strnlen(label, BUDDY_LABEL_LEN);

	if (len == BUDDY_LABEL_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (label[i] < 0x20 || label[i] > 0x7e || label[i] == '/')
			return false;
	return true;
}

/* The field [s, e) without surrounding blanks, as a NUL-terminated copy. */
static bool field(const char *s, const char *e, char *buf, size_t len)
{
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	if ((size_t)(e - s) >= len)
		return false;
	memcpy(buf, s, e - s);
	buf[e - s] = 0;
	return true;
}

/* Refuse a line for @reason. */
static int refuse(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

int buddy_profile_parse_line(const char *line, struct buddy_profile_entry *e,
			     const char **why)
{
	const char *f[4], *end, *s = line;
	unsigned long long uid;
	char buf[32], *x;
	int k, r;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#' || (*s == '\r' && !s[1]))
		return 0;
	end = line + strlen(line);
	if (end > line && end[-1] == '\r')
		end--;
	f[0] = line;
	for (k = 1; k < 4; k++) {
		const char *t = memchr(f[k - 1], '\t', end - f[k - 1]);

		if (!t)
			return refuse(why, "expected 4 TAB-separated fields: uid, label, target, codec");
		f[k] = t + 1;
	}
	if (memchr(f[3], '\t', end - f[3]))
		return refuse(why, "more than 4 TAB-separated fields (a TAB in a label is written \\t)");
	memset(e, 0, sizeof(*e));
	if (!field(f[0], f[1] - 1, buf, sizeof(buf)) ||
	    !isdigit((unsigned char)buf[0]))
		return refuse(why, "invalid uid");
	errno = 0;
	uid = strtoull(buf, &x, 10);
	if (errno || *x || uid >= 0xffffffffULL)
		return refuse(why, "invalid uid");
	e->uid = uid;
	r = buddy_label_unescape(f[1], f[2] - 1 - f[1], e->label);
	if (r == -ENAMETOOLONG)
		return refuse(why, "label longer than 31 bytes");
	if (r)
		return refuse(why, "bad escape in label (\\\\ \\t \\n \\r \\xNN; control and non-ASCII bytes must be escaped)");
	if (!field(f[2], f[3] - 1, buf, sizeof(buf)) ||
	    buddy_target_parse(buf, &e->target) ||
	    e->target == BUDDY_TARGET_AUTO)
		return refuse(why, "invalid target (16x, 4x, 2x, 4/3x or 1x)");
	r = field(f[3], end, buf, sizeof(buf)) ? buddy_codec_parse(buf) :
						 -EINVAL;
	if (r < 0)
		return refuse(why, "invalid codec (bpc, zvc, bdi, fpc, none or default)");
	e->codec = r;
	return 1;
}

size_t buddy_profile_format_line(const struct buddy_profile_entry *e,
				 char *buf, size_t len)
{
	char label[BUDDY_LABEL_LEN], esc[BUDDY_LABEL_ESC_MAX];
	int n;

	/* an entry from the kernel need not end its label with a NUL */
	memcpy(label, e->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN - 1] = 0;
	buddy_label_escape(label, esc, sizeof(esc), false);
	n = snprintf(buf, len, "%u\t%s\t%s\t%s\n", e->uid, esc,
		     buddy_target_name(e->target), buddy_codec_name(e->codec));
	return n < 0 ? 0 : (size_t)n;
}

int buddy_profile_write(FILE *f, const struct buddy_profile_entry *e,
			size_t n, const char *comment)
{
	char line[BUDDY_LABEL_ESC_MAX + 64];
	size_t i;

	if (comment) {
		const char *p = comment;

		while (*p) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);

			fprintf(f, "# %.*s\n", len, p);
			p += len + (nl ? 1 : 0);
		}
	}
	for (i = 0; i < n; i++) {
		buddy_profile_format_line(&e[i], line, sizeof(line));
		fputs(line, f);
	}
	return ferror(f) ? -EIO : 0;
}

int buddy_profile_save(const char *path, const struct buddy_profile_entry *e,
		       size_t n, const char *comment)
{
	char tmp[PATH_MAX];
	int fd, err;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	err = buddy_profile_write(f, e, n, comment);
	if (fflush(f) && !err)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
