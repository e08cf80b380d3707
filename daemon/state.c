// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - the profile table and its state file (format in state.h).
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
#include "log.h"
#include "state.h"

static const char hexdig[] = "0123456789abcdef";

size_t bd_label_escape(const char *label, char *out, size_t outlen,
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

int bd_label_unescape(const char *in, size_t len, char *label)
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

bool bd_label_kernel_valid(const char *label)
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
	while (s < e && (*s == ' '))
		s++;
	while (e > s && (e[-1] == ' '))
		e--;
	if ((size_t)(e - s) >= len)
		return false;
	memcpy(buf, s, e - s);
	buf[e - s] = 0;
	return true;
}

int bd_state_parse_line(const char *line, struct bd_profile *p,
			const char **why)
{
	const char *f[4], *end, *s = line;
	char buf[32];
	unsigned long long uid;
	char *e;
	int k, r;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '#' || ((*s == '\r') && !s[1]))
		return 0;
	end = line + strlen(line);
	if (end > line && end[-1] == '\r')
		end--;
	f[0] = line;
	for (k = 1; k < 4; k++) {
		const char *t = memchr(f[k - 1], '\t', end - f[k - 1]);

		if (!t) {
			*why = "expected 4 TAB-separated fields: uid, label, target, codec";
			return -EINVAL;
		}
		f[k] = t + 1;
	}
	if (memchr(f[3], '\t', end - f[3])) {
		*why = "more than 4 TAB-separated fields (a TAB in a label is written \\t)";
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	if (!field(f[0], f[1] - 1, buf, sizeof(buf)) || !isdigit((unsigned char)buf[0])) {
		*why = "invalid uid";
		return -EINVAL;
	}
	errno = 0;
	uid = strtoull(buf, &e, 10);
	if (errno || *e || uid >= 0xffffffffULL) {
		*why = "invalid uid";
		return -EINVAL;
	}
	p->uid = uid;
	r = bd_label_unescape(f[1], f[2] - 1 - f[1], p->label);
	if (r == -ENAMETOOLONG) {
		*why = "label longer than 31 bytes";
		return -EINVAL;
	}
	if (r) {
		*why = "bad escape in label (\\\\ \\t \\n \\r \\xNN; control and non-ASCII bytes must be escaped)";
		return -EINVAL;
	}
	if (!field(f[2], f[3] - 1, buf, sizeof(buf)) ||
	    buddy_target_parse(buf, &p->target) ||
	    p->target == BUDDY_TARGET_AUTO) {
		*why = "invalid target (16x, 4x, 2x, 4/3x or 1x)";
		return -EINVAL;
	}
	r = field(f[3], end, buf, sizeof(buf)) ? buddy_codec_parse(buf) :
						 -EINVAL;
	if (r < 0) {
		*why = "invalid codec (bpc, zvc, bdi, fpc, none or default)";
		return -EINVAL;
	}
	p->codec = r;
	return 1;
}

size_t bd_state_format_line(const struct bd_profile *p, char *buf, size_t len)
{
	char esc[BD_LABEL_ESC_MAX];
	int n;

	bd_label_escape(p->label, esc, sizeof(esc), false);
	n = snprintf(buf, len, "%u\t%s\t%s\t%s\n", p->uid, esc,
		     buddy_target_name(p->target), buddy_codec_name(p->codec));
	return n < 0 ? 0 : (size_t)n;
}

/* ---- the table ---------------------------------------------------------- */

struct bd_profile *bd_profiles_find(const struct bd_profiles *t, uint32_t uid,
				    const char *label)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].uid == uid &&
		    !strncmp(t->v[i].label, label, BUDDY_LABEL_LEN))
			return &t->v[i];
	return NULL;
}

int bd_profiles_put(struct bd_profiles *t, const struct bd_profile *p)
{
	struct bd_profile *old = bd_profiles_find(t, p->uid, p->label);

	if (old) {
		if (old->target == p->target && old->codec == p->codec)
			return 0;
		old->target = p->target;
		old->codec = p->codec;
		return 1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct bd_profile *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = *p;
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
	char *line = NULL, esc[BD_LABEL_ESC_MAX];
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
		struct bd_profile p;
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
		r = bd_state_parse_line(line, &p, &why);
		if (r < 0) {
			bd_warn("%s:%u: %s, skipped", path, ln, why);
			nbad++;
			continue;
		}
		if (!r)
			continue;
		if (bd_profiles_find(t, p.uid, p.label)) {
			bd_label_escape(p.label, esc, sizeof(esc), true);
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
	const struct bd_profile *x = a, *y = b;

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
	char tmp[PATH_MAX], dir[PATH_MAX], line[BD_LABEL_ESC_MAX + 64], *slash;
	struct bd_profile *v = NULL;
	int fd, err = 0;
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
	for (size_t i = 0; i < t->n; i++) {
		bd_state_format_line(&v[i], line, sizeof(line));
		fputs(line, f);
	}
	if (fflush(f) || fsync(fileno(f)))
		err = -errno;
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
