/* SPDX-License-Identifier: GPL-2.0 */
/*
 * parse.h - the tools' number parsers: one grammar per kind of number, the
 * same in every command (buddyctl, buddyd's command line).  Each returns
 * 0, or -EINVAL for anything but the whole string in its grammar (and
 * -ENOMEM where it allocates).
 */
#ifndef BUDDY_TOOLS_PARSE_H
#define BUDDY_TOOLS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal (or 0x hexadecimal) unsigned number: "42", "0x2a". */
int parse_u64(const char *s, uint64_t *v);
/*
 * parse_size() - a decimal (or 0x, 0) count with an optional K, M or G
 * suffix (powers of 1024), then an optional "i" and/or "B" ("64K",
 * "1MiB", "100B"); not past 2^64 - 1.
 */
int parse_size(const char *s, uint64_t *v);
/* A non-negative decimal number ("0.5", "1e3"). */
int parse_double(const char *s, double *v);
/* A decimal integer in @lo..@hi. */
int parse_int(const char *s, long lo, long hi, int *v);
/* A percentage in 0..100 ("30", "2.5") as parts per million. */
int parse_pct(const char *s, uint32_t *ppm);
/* A time span as systemd writes it ("1.5", "500ms", "1min 30s"), seconds. */
int parse_span(const char *s, double *sec);

/* A set of numbers given as "1,3-5" lists (numactl's node-list grammar). */
struct numset {
	struct { uint64_t lo, hi; } *r;
	size_t n, cap;
};
/* Add the ranges of @list: -EINVAL (bad syntax) or -ENOMEM. */
int numset_add(struct numset *s, const char *list);
bool numset_has(const struct numset *s, uint64_t v);
void numset_free(struct numset *s);

/*
 * A set of strings given as comma lists; "\," is a comma inside an item
 * and "\\" a backslash.
 */
struct strset {
	char **v;
	size_t n, cap;
};
int strset_add(struct strset *s, const char *list);
bool strset_has(const struct strset *s, const char *str);
void strset_free(struct strset *s);

#endif /* BUDDY_TOOLS_PARSE_H */
