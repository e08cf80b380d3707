// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * profile_file.c - profile files in buddyd's state-file format
 * (profile_file.h).
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

#include "libbuddy.h"
#include "profile_file.h"

static const char hexdig[] = "0123456789abcdef";

size_t buddy_label_escape(const char *label, char *out, size_t outlen)
{
	const unsigned char *s;
	size_t n = 0;

	if (!outlen)
		return 0;
	for (s = (const unsigned char *)label; *s; s++) {
		char e[5];
		size_t el = 2;

		e[0] = '\\';
		if (*s == '\\') {
			e[1] = '\\';
		} else if (*s == '\t') {
			e[1] = 't';
		} else if (*s == '\n') {
			e[1] = 'n';
		} else if (*s == '\r') {
			e[1] = 'r';
		} else if (*s < 0x20 || *s > 0x7e) {
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

int buddy_profile_format_line(const struct buddy_profile_entry *e, char *buf,
			      size_t len)
{
	char label[BUDDY_LABEL_LEN], esc[BUDDY_LABEL_ESC_MAX];

	memcpy(label, e->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN - 1] = 0;
	buddy_label_escape(label, esc, sizeof(esc));
	return snprintf(buf, len, "%u\t%s\t%s\t%s\n", e->uid, esc,
			buddy_target_name(e->target),
			buddy_codec_name(e->codec));
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

static int unescape(const char *in, size_t len, char *label)
{
	size_t i, n = 0;

	memset(label, 0, BUDDY_LABEL_LEN);
	for (i = 0; i < len; i++) {
		unsigned char c = in[i];

		if (c == '\\') {
			if (++i == len)
				return -EINVAL;
			switch (in[i]) {
			case '\\': c = '\\'; break;
			case 't': c = '\t'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
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
			return -EINVAL;
		label[n++] = c;
	}
	return 0;
}

/* [s, e) without surrounding spaces into @buf. */
static int field(const char *s, const char *e, char *buf, size_t len)
{
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	if ((size_t)(e - s) >= len)
		return -EINVAL;
	memcpy(buf, s, e - s);
	buf[e - s] = 0;
	return 0;
}

int buddy_profile_parse_line(const char *line, struct buddy_profile_entry *e)
{
	const char *f[4], *end, *s = line;
	unsigned long long uid;
	unsigned int target;
	char buf[32], *x;
	int k, codec;

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
			return -EINVAL;
		f[k] = t + 1;
	}
	if (memchr(f[3], '\t', end - f[3]))
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	if (field(f[0], f[1] - 1, buf, sizeof(buf)) || buf[0] < '0' ||
	    buf[0] > '9')
		return -EINVAL;
	errno = 0;
	uid = strtoull(buf, &x, 10);
	if (errno || *x || uid >= 0xffffffffULL)
		return -EINVAL;
	e->uid = uid;
	if (unescape(f[1], f[2] - 1 - f[1], e->label))
		return -EINVAL;
	if (field(f[2], f[3] - 1, buf, sizeof(buf)) ||
	    buddy_target_parse(buf, &target) || target == BUDDY_TARGET_AUTO)
		return -EINVAL;
	e->target = target;
	if (field(f[3], end, buf, sizeof(buf)) ||
	    (codec = buddy_codec_parse(buf)) < 0)
		return -EINVAL;
	e->codec = codec;
	return 1;
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
