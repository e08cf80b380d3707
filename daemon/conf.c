// SPDX-License-Identifier: GPL-2.0
/*
 * conf.c - buddyd.conf, its drop-ins and the value syntax (see conf.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "tools/policy/heuristic.h"
#include "log.h"
#include "tools/common/timespan.h"

void bd_conf_defaults(struct bd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->threshold_ppm = BUDDY_HEUR_DEF_THRESHOLD_PPM;
	c->zero_ppm = BUDDY_HEUR_DEF_ZERO_PPM;
	c->interval_us = BD_DEF_INTERVAL_US;
	c->window = BD_DEF_WINDOW;
	c->mode = BD_MODE_PROFILES;
	strcpy(c->state_file, BD_STATE_PATH);
	strcpy(c->device, BD_DEVICE_PATH);
}

/* ---- values ------------------------------------------------------------- */

int bd_parse_percent(const char *s, uint32_t *ppm)
{
	uint64_t whole = 0, frac = 0;
	unsigned int digits = 0, fd = 0;

	if (!s)
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++, digits++) {
		whole = whole * 10 + (*s - '0');
		if (whole > 100)
			return -EINVAL;
	}
	if (*s == '.') {
		for (s++; isdigit((unsigned char)*s); s++, fd++) {
			if (fd == 4)
				return -EINVAL;	/* finer than 1 ppm */
			frac = frac * 10 + (*s - '0');
		}
		if (!fd)
			return -EINVAL;
	}
	if (!digits && !fd)
		return -EINVAL;
	if (*s == '%')
		s++;
	if (*s)
		return -EINVAL;
	while (fd++ < 4)
		frac *= 10;
	if (whole * 10000 + frac > 1000000)
		return -EINVAL;
	*ppm = whole * 10000 + frac;
	return 0;
}

/* systemd's grammar (tools/common/timespan.h), within 1ms..1d. */
int bd_parse_timespan(const char *s, uint64_t *usec)
{
	uint64_t v;

	if (buddy_parse_timespan(s, &v) || v < BD_MIN_INTERVAL_US ||
	    v > BD_MAX_INTERVAL_US)
		return -EINVAL;
	*usec = v;
	return 0;
}

static const char *const mode_names[] = {
	[BD_MODE_DRY_RUN] = "dry-run",
	[BD_MODE_PROFILES] = "profiles",
	[BD_MODE_LIVE] = "live",
};

const char *bd_mode_name(enum bd_mode m)
{
	return (unsigned int)m < 3 ? mode_names[m] : "?";
}

int bd_parse_mode(const char *s, enum bd_mode *m)
{
	for (unsigned int i = 0; i < 3; i++) {
		if (s && !strcmp(s, mode_names[i])) {
			*m = i;
			return 0;
		}
	}
	return -EINVAL;
}

int bd_parse_window(const char *s, unsigned int *w)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > BD_WINDOW_MAX)
		return -EINVAL;
	*w = v;
	return 0;
}

char *bd_format_percent(uint32_t ppm, char *buf, unsigned int len)
{
	unsigned int frac = ppm % 10000;
	int n = snprintf(buf, len, "%u", ppm / 10000);

	if (frac) {
		char f[8];
		int k;

		snprintf(f, sizeof(f), "%04u", frac);
		for (k = 3; f[k] == '0'; k--)
			f[k] = 0;
		snprintf(buf + n, len - n, ".%s", f);
	}
	strncat(buf, "%", len - strlen(buf) - 1);
	return buf;
}

char *bd_format_timespan(uint64_t usec, char *buf, unsigned int len)
{
	static const struct {
		const char *name;
		uint64_t us;
	} u[] = {
		{ "h", 3600000000ULL }, { "min", 60000000 }, { "s", 1000000 },
		{ "ms", 1000 }, { "us", 1 },
	};
	unsigned int n = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < 5 && n < len; i++) {
		if (usec >= u[i].us || (!n && i == 4)) {
			n += snprintf(buf + n, len - n, "%llu%s",
				      (unsigned long long)(usec / u[i].us),
				      u[i].name);
			usec %= u[i].us;
		}
	}
	return buf;
}

/* ---- keys --------------------------------------------------------------- */

bool bd_conf_strict;

static const char *const conf_keys[] = {
	"Threshold", "MostlyZero", "Interval", "Window", "Mode", "Codec",
	"StateFile", "Device",
};

/* "Key=value" of @c for @key, as a configuration file would say it. */
static char *key_value(const struct bd_conf *c, const char *key, char *buf,
		       size_t len)
{
	char v[PATH_MAX];

	if (!strcmp(key, "Threshold"))
		bd_format_percent(c->threshold_ppm, v, sizeof(v));
	else if (!strcmp(key, "MostlyZero"))
		bd_format_percent(c->zero_ppm, v, sizeof(v));
	else if (!strcmp(key, "Interval"))
		bd_format_timespan(c->interval_us, v, sizeof(v));
	else if (!strcmp(key, "Window"))
		snprintf(v, sizeof(v), "%u", c->window);
	else if (!strcmp(key, "Mode"))
		snprintf(v, sizeof(v), "%s", bd_mode_name(c->mode));
	else if (!strcmp(key, "Codec"))
		snprintf(v, sizeof(v), "%s", c->codec_keep ? "keep" : "profile");
	else if (!strcmp(key, "StateFile"))
		snprintf(v, sizeof(v), "%s", c->state_file);
	else
		snprintf(v, sizeof(v), "%s", c->device);
	snprintf(buf, len, "%s=%s", key, v);
	return buf;
}

void bd_conf_print(FILE *f, const struct bd_conf *c)
{
	char buf[PATH_MAX + 32];

	fprintf(f, "[%s]\n", BD_SECTION);
	for (size_t i = 0; i < sizeof(conf_keys) / sizeof(conf_keys[0]); i++)
		fprintf(f, "%s\n", key_value(c, conf_keys[i], buf, sizeof(buf)));
}

/*
 * An unknown key: a warning, or with bd_conf_strict an error, naming what
 * is in force instead: the value of the key meant when only the case
 * differs ("threshold=" for "Threshold="), else the keys there are.
 */
static int unknown_key(const struct bd_conf *c, const char *key,
		       const char *where)
{
	int prio = bd_conf_strict ? LOG_ERR : LOG_WARNING;
	char buf[PATH_MAX + 32];

	for (size_t i = 0; i < sizeof(conf_keys) / sizeof(conf_keys[0]); i++) {
		if (strcasecmp(key, conf_keys[i]))
			continue;
		bd_log(prio, "%s: unknown key '%s' in section [%s]%s: keys are case-sensitive, %s= is meant? In force: %s",
		       where, key, BD_SECTION, bd_conf_strict ? "" : ", ignored",
		       conf_keys[i], key_value(c, conf_keys[i], buf, sizeof(buf)));
		return bd_conf_strict ? -EINVAL : -ENOENT;
	}
	bd_log(prio, "%s: unknown key '%s' in section [%s]%s (keys: Threshold, MostlyZero, Interval, Window, Mode, Codec, StateFile, Device; all at their defaults unless set)",
	       where, key, BD_SECTION, bd_conf_strict ? "" : ", ignored");
	return bd_conf_strict ? -EINVAL : -ENOENT;
}

int bd_conf_set(struct bd_conf *c, const char *key, const char *value,
		const char *where)
{
	struct bd_conf def, n = *c;
	int err = 0;

	bd_conf_defaults(&def);
	if (!strcmp(key, "Threshold")) {
		if (!*value)
			n.threshold_ppm = def.threshold_ppm;
		else
			err = bd_parse_percent(value, &n.threshold_ppm);
	} else if (!strcmp(key, "MostlyZero")) {
		if (!*value)
			n.zero_ppm = def.zero_ppm;
		else
			err = bd_parse_percent(value, &n.zero_ppm);
	} else if (!strcmp(key, "Interval")) {
		if (!*value)
			n.interval_us = def.interval_us;
		else
			err = bd_parse_timespan(value, &n.interval_us);
	} else if (!strcmp(key, "Window")) {
		if (!*value)
			n.window = def.window;
		else
			err = bd_parse_window(value, &n.window);
	} else if (!strcmp(key, "Mode")) {
		if (!*value)
			n.mode = def.mode;
		else
			err = bd_parse_mode(value, &n.mode);
	} else if (!strcmp(key, "Codec")) {
		if (!*value || !strcmp(value, "profile"))
			n.codec_keep = false;
		else if (!strcmp(value, "keep"))
			n.codec_keep = true;
		else
			err = -EINVAL;
	} else if (!strcmp(key, "StateFile") || !strcmp(key, "Device")) {
		char *dst = key[0] == 'S' ? n.state_file : n.device;
		const char *src = !*value ? (key[0] == 'S' ? def.state_file :
					    def.device) : value;

		if (strlen(src) >= PATH_MAX)
			err = -EINVAL;
		else
			strcpy(dst, src);
	} else {
		return unknown_key(c, key, where);
	}
	if (err) {
		bd_err("%s: invalid %s value '%s'%s", where, key, value,
		       !strcmp(key, "Threshold") || !strcmp(key, "MostlyZero") ?
		       " (a percentage 0..100, e.g. 30%)" :
		       !strcmp(key, "Interval") ?
		       " (a time span of 1ms..1d as systemd writes it: 10s, 500ms, 1min 30s, 1.5h, 1d)" :
		       !strcmp(key, "Window") ? " (1..1000 snapshots)" :
		       !strcmp(key, "Mode") ? " (dry-run, profiles or live)" :
		       !strcmp(key, "Codec") ? " (profile or keep)" :
		       " (path too long)");
		return -EINVAL;
	}
	*c = n;
	return 0;
}

/* ---- files -------------------------------------------------------------- */

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int bd_conf_parse_file(struct bd_conf *c, const char *path)
{
	enum { NONE, OURS, OTHER } section = NONE;
	char *line = NULL, where[PATH_MAX + 32];
	size_t cap = 0;
	unsigned int ln = 0;
	int err = 0, read_err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return -ENOENT;
		err = -errno;
		bd_err("%s: %s", path, strerror(errno));
		return err;
	}
	for (;;) {
		char *s, *eq;

		/* getline()'s errno names the cause (EISDIR: a directory) */
		errno = 0;
		if (getline(&line, &cap, f) < 0) {
			read_err = errno;
			break;
		}
		ln++;
		/* a UTF-8 byte-order mark, as some editors write, is no text */
		s = strip(ln == 1 && !strncmp(line, "\xef\xbb\xbf", 3) ?
			  line + 3 : line);
		snprintf(where, sizeof(where), "%s:%u", path, ln);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			size_t l = strlen(s);

			if (s[l - 1] != ']') {
				bd_err("%s: invalid section header '%s'", where, s);
				err = err ?: -EINVAL;
				continue;
			}
			s[l - 1] = 0;
			if (!strcmp(s + 1, BD_SECTION)) {
				section = OURS;
				continue;
			}
			section = OTHER;
			/* a typo would leave every setting at its default */
			bd_log(bd_conf_strict ? LOG_ERR : LOG_WARNING,
			       "%s: unknown section [%s]%s: buddyd reads [%s] only%s",
			       where, s + 1,
			       bd_conf_strict ? "" : ", its keys ignored",
			       BD_SECTION,
			       !strcasecmp(s + 1, BD_SECTION) ?
			       " (section names are case-sensitive)" : "");
			if (bd_conf_strict)
				err = err ?: -EINVAL;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			bd_err("%s: missing '=' in '%s'", where, s);
			err = err ?: -EINVAL;
			continue;
		}
		if (section == NONE) {
			bd_err("%s: assignment outside of any section", where);
			err = err ?: -EINVAL;
			continue;
		}
		if (section == OTHER)
			continue;
		*eq = 0;
		if (bd_conf_set(c, strip(s), strip(eq + 1), where) == -EINVAL)
			err = err ?: -EINVAL;
	}
	if (ferror(f)) {
		bd_err("%s: %s", path, strerror(read_err ? read_err : EIO));
		err = err ?: -(read_err ? read_err : EIO);
	}
	free(line);
	fclose(f);
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void bd_conf_free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int bd_conf_dropins(const char *dir, char ***names)
{
	char **v = NULL, path[PATH_MAX];
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *d;

	*names = NULL;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || l < 6 ||
		    strcmp(de->d_name + l - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 8) *
					    sizeof(*v));

			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(de->d_name);
		if (!v[n])
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	return n;
nomem:
	closedir(d);
	bd_conf_free_names(v, n);
	return -ENOMEM;
}

int bd_conf_load(struct bd_conf *c, const char *path, bool must_exist)
{
	char dir[PATH_MAX], file[PATH_MAX * 2];
	char **names;
	int err, n, first;

	err = bd_conf_parse_file(c, path);
	if (err == -ENOENT) {
		if (must_exist) {
			bd_err("%s: %s", path, strerror(ENOENT));
			first = err;
		} else {
			bd_debug("%s: not found, using the defaults", path);
			first = 0;
		}
	} else {
		first = err;
	}
	if (snprintf(dir, sizeof(dir), "%s.d", path) >= (int)sizeof(dir))
		return first ?: -ENAMETOOLONG;
	n = bd_conf_dropins(dir, &names);
	if (n < 0) {
		bd_err("%s: %s", dir, strerror(-n));
		return first ?: n;
	}
	for (int i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
		err = bd_conf_parse_file(c, file);
		if (err && !first)
			first = err;
	}
	bd_conf_free_names(names, n);
	return first;
}
