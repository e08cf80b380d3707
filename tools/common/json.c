// SPDX-License-Identifier: GPL-2.0
/*
 * json.c - the tools' JSON helpers (json.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "msg.h"
#include "utf8.h"

struct json_object *bjson_num(double v, const char *fmt)
{
	char s[48];

	if (isinf(v))
		return json_object_new_string("inf");
	snprintf(s, sizeof(s), fmt, v);
	return json_object_new_double_s(v, s);
}

struct json_object *bjson_fixed(double v, int decimals)
{
	char s[48];

	snprintf(s, sizeof(s), "%.*f", decimals, v);
	return json_object_new_double_s(v, s);
}

struct json_object *bjson_string(const char *s)
{
	char *u = buddy_utf8(s);
	struct json_object *o;

	if (!u)
		return NULL;
	o = json_object_new_string(u);
	free(u);
	return o;
}

struct json_object *bjson_string_or_exit(const char *s, const char *who)
{
	struct json_object *o = bjson_string(s);

	if (!o) {
		msg_err(who, "%s", strerror(ENOMEM));
		exit(1);
	}
	return o;
}

void bjson_write(FILE *f, struct json_object *o, int flags)
{
	if (json_object_is_type(o, json_type_array) &&
	    !json_object_array_length(o))
		fputs("[]", f);
	else
		fputs(json_object_to_json_string_ext(o, flags), f);
	fputc('\n', f);
}
