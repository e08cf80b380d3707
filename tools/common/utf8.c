// SPDX-License-Identifier: GPL-2.0
/*
 * utf8.c - strings made valid UTF-8 for JSON (json.c's bjson_string()).
 */
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Length of the valid UTF-8 sequence at @s, 0 when there is none. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned int cp, n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *buddy_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(3 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			p++;
		}
	}
	*o = 0;
	return out;
}
