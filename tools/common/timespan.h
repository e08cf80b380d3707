/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * timespan.h - time spans as systemd reads them (systemd.time(7)), the one
 * parser of buddyd (Interval=, --interval) and buddyctl profile
 * (--interval, --first, --at).  libsystemd has no public parser for them
 * (parse_sec() is internal to systemd), hence this small one.
 *
 * A span is one or more terms "NUMBER[UNIT]", with optional whitespace
 * (spaces, tabs) between the number and its unit and between terms:
 * "10s", "10 s", "1min 30s", "1min\t30s", "1.5h", "2d".  NUMBER is a
 * decimal, optionally with a fraction; a term without a unit is seconds.
 * Units (case-sensitive, as in systemd):
 *
 *   us usec µs                    microseconds
 *   ms msec                       milliseconds
 *   s sec second seconds          seconds
 *   m min minute minutes          minutes
 *   h hr hour hours               hours
 *   d day days                    days
 *   w week weeks                  weeks
 *   M month months                30.44 days
 *   y year years                  365.25 days
 */
#ifndef BUDDY_TOOLS_TIMESPAN_H
#define BUDDY_TOOLS_TIMESPAN_H

#include <stdint.h>

/*
 * buddy_parse_timespan() - @s in microseconds (fractions of a microsecond
 * dropped).  Return: 0, or -EINVAL (syntax, unknown unit) or -ERANGE
 * (past UINT64_MAX microseconds).
 */
int buddy_parse_timespan(const char *s, uint64_t *usec);

#endif /* BUDDY_TOOLS_TIMESPAN_H */
