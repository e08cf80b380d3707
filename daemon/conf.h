/* SPDX-License-Identifier: GPL-2.0 */
/*
 * conf.h - buddyd's configuration: defaults, an ini-style file with a
 * [Buddyd] section, drop-ins, and command-line overrides, in that order of
 * precedence (later wins).
 *
 * File syntax (a subset of systemd's, see systemd.syntax(7)):
 *   - blank lines and lines starting with '#' or ';' are ignored;
 *   - "[Section]" starts a section; only [Buddyd] is read, other sections
 *     are ignored with a warning;
 *   - "Key=Value": whitespace around the key and the value is dropped; an
 *     empty value puts the key back to its default; keys are case-sensitive;
 *     an unknown key is ignored with a warning naming the value in force
 *     (an error with bd_conf_strict: buddyd --check-config);
 *   - a UTF-8 byte-order mark at the start of a file is skipped;
 *   - an invalid value, a line that is none of the above, or an assignment
 *     before any section is an error naming the file and line.
 *
 * Keys of [Buddyd]:
 *   Threshold=PCT	Buddy Threshold (default 30%)
 *   MostlyZero=PCT	zero share for 16x (default 90%)
 *   Interval=TIME	time between snapshots (default 10s)
 *   Window=N		snapshots per decision, 1..BD_WINDOW_MAX (default 10)
 *   Mode=MODE		dry-run | profiles | live (default profiles)
 *   Codec=WHICH	profile | keep (default profile): profile takes each
 *			label's codec from its profile (bd_choose_codecs()),
 *			keep leaves every allocation's codec as it is
 *   StateFile=PATH	the profiles (default /var/lib/buddy/profiles)
 *   Device=PATH	the control device (default /dev/buddy)
 *
 * PCT: a number from 0 to 100 with up to four decimals, optionally followed
 * by '%' ("30%", "12.5", "0.0001%").  TIME: a time span as systemd reads
 * it (systemd.time(7), tools/common/timespan.h): "10s", "10 s", "500ms",
 * "1min 30s", "1.5h", "1d"; a bare number is seconds; 1ms..1d.
 *
 * Drop-ins: every regular file named "*.conf" (not starting with '.') in
 * "<config path>.d/", read after the main file in strcmp() order of the
 * names, so "10-a.conf" comes before "20-b.conf" and "9.conf" after both.
 */
#ifndef BUDDYD_CONF_H
#define BUDDYD_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BD_CONF_PATH		"/etc/buddy/buddyd.conf"
#define BD_STATE_PATH		"/var/lib/buddy/profiles"
#define BD_DEVICE_PATH		"/dev/buddy"
#define BD_SECTION		"Buddyd"
#define BD_DEF_INTERVAL_US	(10ULL * 1000000)
#define BD_ONCE_INTERVAL_US	(100ULL * 1000)	/* --once without --interval */
#define BD_DEF_WINDOW		10		/* the paper's ten snapshots */
#define BD_WINDOW_MAX		1000
#define BD_MIN_INTERVAL_US	1000ULL
#define BD_MAX_INTERVAL_US	(86400ULL * 1000000)

enum bd_mode {
	BD_MODE_DRY_RUN,	/* decide and log, change nothing */
	BD_MODE_PROFILES,	/* install profiles for later AUTO allocations */
	BD_MODE_LIVE,		/* profiles, and re-target live allocations */
};

struct bd_conf {
	uint32_t threshold_ppm;
	uint32_t zero_ppm;
	uint64_t interval_us;
	unsigned int window;
	enum bd_mode mode;
	bool codec_keep;	/* Codec=keep */
	char state_file[PATH_MAX];
	char device[PATH_MAX];
};

void bd_conf_defaults(struct bd_conf *c);

/* An unknown key is an error (buddyd --check-config), not a warning. */
extern bool bd_conf_strict;

/* @c as a configuration file: "[Buddyd]" and every "Key=value". */
void bd_conf_print(FILE *f, const struct bd_conf *c);

/*
 * bd_conf_set() - set one key from its text.
 * @where: names the source in messages ("file:12", "--threshold").
 * Return: 0; -ENOENT for an unknown key (a warning is logged; with
 * bd_conf_strict -EINVAL and an error); -EINVAL for an invalid value (an
 * error is logged).  @c is unchanged on error.
 */
int bd_conf_set(struct bd_conf *c, const char *key, const char *value,
		const char *where);

/*
 * bd_conf_parse_file() - apply one file.
 * Return: 0; -ENOENT when the file does not exist (nothing logged);
 * -EINVAL after logging every bad line (the good lines are applied);
 * another -errno when it cannot be read (logged).
 */
int bd_conf_parse_file(struct bd_conf *c, const char *path);

/*
 * bd_conf_load() - apply @path and then its drop-ins "@path.d/ *.conf".
 * @must_exist: a missing @path is an error (else it is skipped).
 * Return: 0, or the first error; every file is read even after an error.
 */
int bd_conf_load(struct bd_conf *c, const char *path, bool must_exist);

/*
 * bd_conf_dropins() - the drop-in file names of @dir in reading order.
 * @names: receives a malloc'ed array of malloc'ed names (free with
 *	   bd_conf_free_names()), or NULL when there are none.
 * Return: the number of names (0 also for a missing directory), or -errno.
 */
int bd_conf_dropins(const char *dir, char ***names);
void bd_conf_free_names(char **names, int n);

int bd_parse_percent(const char *s, uint32_t *ppm);
int bd_parse_timespan(const char *s, uint64_t *usec);
int bd_parse_mode(const char *s, enum bd_mode *m);
int bd_parse_window(const char *s, unsigned int *w);

const char *bd_mode_name(enum bd_mode m);
/* "30%", "12.5%", "0.0001%". */
char *bd_format_percent(uint32_t ppm, char *buf, unsigned int len);
/* "10s", "100ms", "1min30s", "250us". */
char *bd_format_timespan(uint64_t usec, char *buf, unsigned int len);

#endif /* BUDDYD_CONF_H */
