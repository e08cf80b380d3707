/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json.h - the tools' JSON, built with json-c: numbers printed with a
 * fixed number of decimals, strings made valid UTF-8, and the one way a
 * document is written.  The keys themselves are interfaces, documented
 * with each command (Documentation/buddyctl.rst, man/buddyd.rst).
 */
#ifndef BUDDY_TOOLS_JSON_H
#define BUDDY_TOOLS_JSON_H

#include <stdio.h>

#include <json-c/json.h>

/* How every document is printed: pretty, spaced, "/" not escaped. */
#define BJSON_PRETTY	(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | \
			 JSON_C_TO_STRING_NOSLASHESCAPE)

/* @v printed with the printf format @fmt ("%.4f"); the string "inf" when
 * @v is infinite. */
struct json_object *bjson_num(double v, const char *fmt);
/* @v printed with @decimals decimals. */
struct json_object *bjson_fixed(double v, int decimals);
/*
 * bjson_string() - a JSON string of @s made valid UTF-8 (buddy_utf8());
 * NULL without memory.
 */
struct json_object *bjson_string(const char *s);
/* bjson_string(), or exit(1) after "WHO: Cannot allocate memory". */
struct json_object *bjson_string_or_exit(const char *s, const char *who);
/*
 * bjson_write() - @o as text with json-c's @flags (an empty array as
 * "[]", which json-c prints as "[\n]" when pretty) and a newline, to @f.
 * Does not drop the reference.
 */
void bjson_write(FILE *f, struct json_object *o, int flags);

#endif /* BUDDY_TOOLS_JSON_H */
