// SPDX-License-Identifier: GPL-2.0
/*
 * parse.c - the tools' number parsers (parse.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "timespan.h"

int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_size(const char *s, uint64_t *v)
{
	unsigned long long x;
	unsigned int shift = 0;
	char *e;

	errno = 0;
	x = strtoull(s, &e, 0);
	if (errno || e == s || *s == '-')
		return -EINVAL;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	}
	if (shift && x > (~0ULL >> shift))
		return -EINVAL;
	x <<= shift;
	if (*e == 'i' || *e == 'B')
		e++;
	if (*e == 'B')
		e++;
	if (*e)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_double(const char *s, double *v)
{
	char *e;

	errno = 0;
	*v = strtod(s, &e);
	return errno || e == s || *e || *v < 0 ? -EINVAL : 0;
}

int parse_int(const char *s, long lo, long hi, int *v)
{
	char *e;
	long x;

	errno = 0;
	x = strtol(s, &e, 10);
	if (errno || e == s || *e || x < lo || x > hi)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_pct(const char *s, uint32_t *ppm)
{
	double v;

	if (parse_double(s, &v) || v > 100)
		return -EINVAL;
	*ppm = (uint32_t)(v * 10000 + 0.5);
	return 0;
}

int parse_span(const char *s, double *sec)
{
	uint64_t us;

	if (buddy_parse_timespan(s, &us))
		return -EINVAL;
	*sec = us / 1e6;
	return 0;
}

int numset_add(struct numset *s, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	if (!*copy)
		ret = -EINVAL;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash) {
			*dash = 0;
			if (parse_u64(tok, &lo) || parse_u64(dash + 1, &hi) ||
			    hi < lo) {
				ret = -EINVAL;
				break;
			}
		} else {
			if (parse_u64(tok, &lo)) {
				ret = -EINVAL;
				break;
			}
			hi = lo;
		}
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 8;
			void *p = realloc(s->r, cap * sizeof(*s->r));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			s->r = p;
			s->cap = cap;
		}
		s->r[s->n].lo = lo;
		s->r[s->n].hi = hi;
		s->n++;
	}
	/* a list ending in ',' or holding ",," */
	if (!ret && (list[strlen(list) - 1] == ',' || strstr(list, ",,") ||
		     list[0] == ','))
		ret = -EINVAL;
	free(copy);
	return ret;
}

bool numset_has(const struct numset *s, uint64_t v)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (v >= s->r[i].lo && v <= s->r[i].hi)
			return true;
	return false;
}

void numset_free(struct numset *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static int strset_push(struct strset *s, const char *item, size_t len)
{
	char *c;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		void *p = realloc(s->v, cap * sizeof(*s->v));

		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = cap;
	}
	c = strndup(item, len);
	if (!c)
		return -ENOMEM;
	s->v[s->n++] = c;
	return 0;
}

int strset_add(struct strset *s, const char *list)
{
	size_t len = strlen(list), i, n = 0;
	char *item = malloc(len + 1);
	int ret = 0;

	if (!item)
		return -ENOMEM;
	for (i = 0; i <= len && !ret; i++) {
		if (i == len || list[i] == ',') {
			ret = strset_push(s, item, n);
			n = 0;
		} else if (list[i] == '\\' && i + 1 < len &&
			   (list[i + 1] == ',' || list[i + 1] == '\\')) {
			item[n++] = list[++i];
		} else {
			item[n++] = list[i];
		}
	}
	free(item);
	return ret;
}

bool strset_has(const struct strset *s, const char *str)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

void strset_free(struct strset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
