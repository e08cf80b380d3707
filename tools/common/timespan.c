// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * timespan.c - systemd.time(7) time spans (timespan.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "timespan.h"

#define USEC_S		1000000ULL
#define USEC_DAY	(86400ULL * USEC_S)

static const struct {
	const char *name;
	uint64_t us;
} units[] = {
	{ "us", 1 }, { "usec", 1 }, { "\xc2\xb5s", 1 },
	{ "ms", 1000 }, { "msec", 1000 },
	{ "s", USEC_S }, { "sec", USEC_S }, { "second", USEC_S },
	{ "seconds", USEC_S },
	{ "m", 60 * USEC_S }, { "min", 60 * USEC_S }, { "minute", 60 * USEC_S },
	{ "minutes", 60 * USEC_S },
	{ "h", 3600 * USEC_S }, { "hr", 3600 * USEC_S },
	{ "hour", 3600 * USEC_S }, { "hours", 3600 * USEC_S },
	{ "d", USEC_DAY }, { "day", USEC_DAY }, { "days", USEC_DAY },
	{ "w", 7 * USEC_DAY }, { "week", 7 * USEC_DAY },
	{ "weeks", 7 * USEC_DAY },
	/* systemd's month and year: 30.44 and 365.25 days */
	{ "M", 2629800 * USEC_S }, { "month", 2629800 * USEC_S },
	{ "months", 2629800 * USEC_S },
	{ "y", 31557600 * USEC_S }, { "year", 31557600 * USEC_S },
	{ "years", 31557600 * USEC_S },
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A unit's letters: ASCII letters, and the two bytes of 'µ'. */
static size_t unit_len(const char *s)
{
	size_t n = 0;

	for (;;) {
		char c = s[n];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			n++;
		else if (c == '\xc2' && s[n + 1] == '\xb5')
			n += 2;
		else
			return n;
	}
}

int buddy_parse_timespan(const char *s, uint64_t *usec)
{
	uint64_t total = 0;
	bool any = false;

	if (!s)
		return -EINVAL;
	for (;;) {
		uint64_t whole = 0, frac = 0, scale = 1, mult = USEC_S, v;
		size_t ul, i;
		bool digits = false;

		while (is_blank(*s))
			s++;
		if (!*s)
			break;
		for (; is_digit(*s); s++) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			whole = whole * 10 + (*s - '0');
			digits = true;
		}
		if (*s == '.') {
			for (s++; is_digit(*s); s++) {
				if (scale < 1000000000000ULL) {	/* 12 digits */
					frac = frac * 10 + (*s - '0');
					scale *= 10;
				}
				digits = true;
			}
		}
		if (!digits)
			return -EINVAL;
		while (is_blank(*s))
			s++;
		ul = unit_len(s);
		if (ul) {
			for (i = 0, mult = 0; i < sizeof(units) / sizeof(units[0]); i++)
				if (strlen(units[i].name) == ul &&
				    !strncmp(units[i].name, s, ul))
					mult = units[i].us;
			if (!mult)
				return -EINVAL;
			s += ul;
		}
		if (whole > UINT64_MAX / mult)
			return -ERANGE;
		v = whole * mult;
		/* frac / scale of a unit; mult <= 3.2e13, frac < 1e12 */
		v += (uint64_t)((double)frac / scale * mult);
		if (v < whole * mult || total > UINT64_MAX - v)
			return -ERANGE;
		total += v;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*usec = total;
	return 0;
}
