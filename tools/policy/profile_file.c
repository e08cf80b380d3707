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

#include "lib/libbuddy.h"
#include "profile_file.h"
#include "tools/common/replace_file.h"

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
	if (memchr(f[3], '\r', end - f[3]))
		return refuse(why, "invalid codec: a carriage return before the end of the line (only one CR before the newline is ignored)");
	if (memchr(f[3], '\t', end - f[3]))
		return refuse(why, "more than 4 TAB-separated fields (a TAB in a label is written \\t)");
	memset(e, 0, sizeof(*e));
	if (!field(f[0], f[1] - 1, buf, sizeof(buf)) ||
	    !isdigit((unsigned char)buf[0]))
		return refuse(why, "invalid uid (a decimal number below 4294967295)");
	errno = 0;
	uid = strtoull(buf, &x, 10);
	if (errno || *x || uid >= 0xffffffffULL)
		return refuse(why, "invalid uid (a decimal number below 4294967295)");
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
	struct buddy_replace r;
	int err;

	err = buddy_replace_open(&r, path);
	if (err)
		return err;
	err = buddy_profile_write(r.f, e, n, comment);
	if (err) {
		buddy_replace_abort(&r);
		return err;
	}
	return buddy_replace_commit(&r);
}

/* ---- the table ------------------------------------------------------------ */

static size_t key_hash(uint32_t uid, const char *label)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ uid;
	size_t len = strnlen(label, BUDDY_LABEL_LEN);

	h *= 0x100000001b3ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)label[i];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

static bool same_key(const struct buddy_profile_entry *e, uint32_t uid,
		     const char *label)
{
	return e->uid == uid && !strncmp(e->label, label, BUDDY_LABEL_LEN);
}

/* The hash slot of (@uid, @label): its profile, or the empty slot. */
static size_t slot_of(const struct buddy_profile_table *t, uint32_t uid,
		      const char *label)
{
	size_t k = key_hash(uid, label) & (t->hcap - 1);

	while (t->hash[k] && !same_key(&t->v[t->hash[k] - 1], uid, label))
		k = (k + 1) & (t->hcap - 1);
	return k;
}

static int rehash(struct buddy_profile_table *t, size_t hcap)
{
	size_t *h = calloc(hcap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	free(t->hash);
	t->hash = h;
	t->hcap = hcap;
	for (size_t i = 0; i < t->n; i++)
		t->hash[slot_of(t, t->v[i].uid, t->v[i].label)] = i + 1;
	return 0;
}

struct buddy_profile_entry *
buddy_profile_find(const struct buddy_profile_table *t, uint32_t uid,
		   const char *label)
{
	size_t k;

	if (!t->hcap)
		return NULL;
	k = slot_of(t, uid, label);
	return t->hash[k] ? &t->v[t->hash[k] - 1] : NULL;
}

int buddy_profile_put(struct buddy_profile_table *t,
		      const struct buddy_profile_entry *p)
{
	struct buddy_profile_entry *old = buddy_profile_find(t, p->uid, p->label);
	size_t len;

	if (old) {
		if (old->target == p->target && old->codec == p->codec)
			return 0;
		old->target = p->target;
		old->codec = p->codec;
		return 1;
	}
	if (t->n == BUDDY_PROFILE_MAX)
		return -ENOSPC;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct buddy_profile_entry *v = realloc(t->v, cap * sizeof(*v));
		size_t *home;

		if (!v)
			return -ENOMEM;
		t->v = v;
		home = realloc(t->home, cap * sizeof(*home));
		if (!home)
			return -ENOMEM;
		t->home = home;
		t->cap = cap;
	}
	if (2 * (t->n + 1) > t->hcap && rehash(t, t->hcap ? 2 * t->hcap : 64))
		return -ENOMEM;
	t->v[t->n] = *p;
	t->v[t->n].reserved = 0;	/* installed as it is */
	/* labels compare with strncmp: keep the padding zero */
	len = strnlen(p->label, BUDDY_LABEL_LEN - 1);
	memset(t->v[t->n].label, 0, BUDDY_LABEL_LEN);
	memcpy(t->v[t->n].label, p->label, len);
	t->home[t->n] = 0;
	t->hash[slot_of(t, p->uid, t->v[t->n].label)] = t->n + 1;
	t->n++;
	return 1;
}

void buddy_profile_clear(struct buddy_profile_table *t)
{
	for (size_t i = 0; i < t->nlines; i++)
		free(t->lines[i].text);
	t->nlines = 0;
	t->n = 0;
	if (t->hcap)
		memset(t->hash, 0, t->hcap * sizeof(*t->hash));
}

void buddy_profile_free(struct buddy_profile_table *t)
{
	buddy_profile_clear(t);
	free(t->v);
	free(t->home);
	free(t->hash);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}

static int add_line(struct buddy_profile_table *t, const char *text,
		    size_t len)
{
	struct buddy_profile_line *l;

	if (t->nlines == t->caplines) {
		size_t cap = t->caplines ? 2 * t->caplines : 64;

		l = realloc(t->lines, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		t->lines = l;
		t->caplines = cap;
	}
	l = &t->lines[t->nlines];
	l->text = malloc(len + 1);
	if (!l->text)
		return -ENOMEM;
	memcpy(l->text, text, len);
	l->text[len] = 0;
	l->len = len;
	l->entry = 0;
	t->nlines++;
	return 0;
}

int buddy_profile_read(struct buddy_profile_table *t, FILE *f,
		       buddy_profile_report_fn report, void *ctx,
		       struct buddy_profile_stats *st)
{
	struct buddy_profile_stats s = { 0 };
	unsigned int first_over = 0;
	char *line = NULL, msg[BUDDY_LABEL_ESC_MAX + 64];
	size_t cap = 0;
	ssize_t len;
	int err = 0, read_err = 0;

	buddy_profile_clear(t);
	for (;;) {
		struct buddy_profile_entry p, *old;
		const char *why = NULL;
		size_t ln;
		int r;

		/* getline()'s errno names the cause (EISDIR: a directory) */
		errno = 0;
		len = getline(&line, &cap, f);
		if (len < 0) {
			read_err = errno;
			break;
		}

		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		err = add_line(t, line, len);
		if (err)
			break;
		ln = t->nlines;
		if (strlen(line) != (size_t)len) {
			r = -EINVAL;
			why = "NUL byte in line";
		} else {
			/* a UTF-8 byte-order mark is no text (kept, though) */
			bool bom = ln == 1 && !strncmp(line, "\xef\xbb\xbf", 3);

			r = buddy_profile_parse_line(line + (bom ? 3 : 0), &p,
						     &why);
		}
		if (r < 0) {
			s.bad++;
			if (report)
				report(ctx, BUDDY_PROFILE_BAD, ln, why);
			continue;
		}
		if (!r)
			continue;
		old = buddy_profile_find(t, p.uid, p.label);
		if (old) {
			char esc[BUDDY_LABEL_ESC_MAX];
			size_t k = old - t->v;

			buddy_label_escape(p.label, esc, sizeof(esc), true);
			snprintf(msg, sizeof(msg),
				 "uid %u label \"%s\" again: this line wins",
				 p.uid, esc);
			s.again++;
			if (report)
				report(ctx, BUDDY_PROFILE_AGAIN, ln, msg);
			/* the earlier line stays as it was, verbatim */
			if (t->home[k])
				t->lines[t->home[k] - 1].entry = 0;
			t->home[k] = ln;
			t->lines[ln - 1].entry = k + 1;
		}
		r = buddy_profile_put(t, &p);
		if (r == -ENOSPC) {
			if (!s.over++)
				first_over = ln;
			continue;
		}
		if (r < 0) {
			err = r;
			break;
		}
		if (!old) {
			t->home[t->n - 1] = ln;
			t->lines[ln - 1].entry = t->n;
		}
	}
	if (!err && ferror(f))
		err = read_err ? -read_err : -EIO;
	free(line);
	if (s.over && report) {
		snprintf(msg, sizeof(msg),
			 "more than %d profiles (the size of buddy.ko's table): this line and %u later profile line%s not loaded",
			 BUDDY_PROFILE_MAX, s.over - 1, s.over == 2 ? "" : "s");
		report(ctx, BUDDY_PROFILE_FULL, first_over, msg);
	}
	if (st)
		*st = s;
	return err;
}

static int cmp_profile(const void *a, const void *b)
{
	const struct buddy_profile_entry *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return strncmp(x->label, y->label, BUDDY_LABEL_LEN);
}

int buddy_profile_table_write(FILE *f, const struct buddy_profile_table *t,
			      const char *header)
{
	struct buddy_profile_entry *fresh = NULL;
	char buf[BUDDY_LABEL_ESC_MAX + 64];
	size_t nfresh = 0, i;
	int err;

	if (!t->nlines && header)
		fputs(header, f);
	for (i = 0; i < t->nlines; i++) {
		const struct buddy_profile_line *l = &t->lines[i];
		const struct buddy_profile_entry *e;
		struct buddy_profile_entry was;

		if (l->entry) {
			size_t bom = !i && !strncmp(l->text, "\xef\xbb\xbf", 3) ?
				     3 : 0;

			e = &t->v[l->entry - 1];
			if (buddy_profile_parse_line(l->text + bom, &was, NULL) != 1 ||
			    was.target != e->target || was.codec != e->codec) {
				buddy_profile_format_line(e, buf, sizeof(buf));
				fwrite(l->text, 1, bom, f);
				fputs(buf, f);
				continue;
			}
		}
		fwrite(l->text, 1, l->len, f);
		fputc('\n', f);
	}
	for (i = 0; i < t->n; i++)
		nfresh += !t->home[i];
	if (nfresh) {
		fresh = malloc(nfresh * sizeof(*fresh));
		if (!fresh)
			return -ENOMEM;
		for (i = 0, nfresh = 0; i < t->n; i++)
			if (!t->home[i])
				fresh[nfresh++] = t->v[i];
		qsort(fresh, nfresh, sizeof(*fresh), cmp_profile);
	}
	err = buddy_profile_write(f, fresh, nfresh, NULL);
	free(fresh);
	return err;
}
