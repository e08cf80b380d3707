// SPDX-License-Identifier: GPL-2.0
/*
 * admin_util.c - helpers of buddyctl's device subcommands (admin_util.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buddyctl.h"
#include "admin_util.h"
#include "tools/common/utf8.h"

const char *const au_code_keys[BUDDY_CODE_NR] = {
	[BUDDY_CODE_ZERO] = "zero", [BUDDY_CODE_C8] = "c8",
	[BUDDY_CODE_C32] = "c32",   [BUDDY_CODE_C64] = "c64",
	[BUDDY_CODE_C96] = "c96",   [BUDDY_CODE_RAW] = "raw",
};

static const char *const counter_keys[] = {
	"entry_reads", "entry_writes", "device_sectors_read",
	"device_sectors_written", "buddy_sectors_read",
	"buddy_sectors_written", "buddy_accesses", "overflows",
};

void au_err(const char *obj, int err, int op)
{
	const char *plain, *why;

	if (err < 0)
		err = -err;
	plain = strerror(err);
	why = op >= 0 ? buddy_strerror(err, op) : plain;
	/* ENOENT by id: the ABI's meaning, which buddy_strerror() leaves out */
	if (err == ENOENT && (op == BUDDY_OP_STAT || op == BUDDY_OP_MAP))
		why = "no live allocation has this id";
	if (strcmp(why, plain))
		buddyctl_err("%s: %s (%s)", obj, plain, why);
	else
		buddyctl_err("%s: %s", obj, plain);
}

const char *au_dev_path(void)
{
	const char *p = getenv("BUDDY_DEVICE");

	return p && *p ? p : BUDDY_DEV_PATH;
}

/* Is buddy.ko loaded?  ($BUDDY_MODULE_DIR stands for /sys/module/buddy.) */
static bool module_loaded(void)
{
	const char *d = getenv("BUDDY_MODULE_DIR");

	return !access(d && *d ? d : "/sys/module/buddy", F_OK);
}

int au_open(void)
{
	const char *path = au_dev_path();
	struct buddy_info info;
	struct stat st;
	int fd, r;

	fd = buddy_open(path);
	if (fd < 0) {
		int err = -fd;

		if ((err == ENOENT || err == ENXIO || err == ENODEV) &&
		    !module_loaded())
			buddyctl_err("%s: %s (the buddy module is not loaded: modprobe buddy)",
				     path, strerror(err));
		else if (err == EACCES || err == EPERM)
			buddyctl_err("%s: %s (read-write access needed: root, or a member of the device's group)",
				     path, strerror(err));
		else
			buddyctl_err("%s: %s", path, strerror(err));
		return -1;
	}
	/* the right node?  Anything else answers GET_INFO with ENOTTY */
	r = fstat(fd, &st) ? -errno : !S_ISCHR(st.st_mode) ? -ENOTTY :
	    buddy_get_info(fd, &info);
	if (r == -ENOTTY || r == -EINVAL) {
		buddyctl_err("%s: not a buddy device%s", path,
			     module_loaded() ? "" :
			     " (and the buddy module is not loaded: modprobe buddy)");
		close(fd);
		return -1;
	}
	return fd;
}

const char *au_size(uint64_t bytes, bool human, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	double v = bytes;
	int u = -1;

	if (!human || bytes < 1024) {
		snprintf(buf, len, human ? "%" PRIu64 " B" : "%" PRIu64, bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.2f %s", v, units[u]);
	return buf;
}

struct json_object *au_json_size(uint64_t bytes, bool human)
{
	char buf[32];

	if (!human)
		return json_object_new_uint64(bytes);
	return json_object_new_string(au_size(bytes, true, buf, sizeof(buf)));
}

struct json_object *au_json_double(double v, int decimals)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

int au_flush_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		buddyctl_err("stdout: %s", strerror(errno ? errno : EIO));
		return 1;
	}
	return 0;
}

int au_print_json(struct json_object *o)
{
	/* json-c prints an empty array as "[\n]" when pretty */
	if (json_object_is_type(o, json_type_array) &&
	    !json_object_array_length(o))
		fputs("[]", stdout);
	else
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						     JSON_C_TO_STRING_SPACED |
						     JSON_C_TO_STRING_NOSLASHESCAPE),
		      stdout);
	putchar('\n');
	json_object_put(o);
	return au_flush_stdout();
}

struct json_object *au_json_string(const char *s)
{
	struct json_object *o = buddy_json_string(s);

	if (!o) {
		buddyctl_err("%s", strerror(ENOMEM));
		exit(1);
	}
	return o;
}

const char *au_nodelist(const __u64 *pages, unsigned int n, char *buf,
			size_t len)
{
	size_t used = 0;
	unsigned int i = 0, j;

	buf[0] = 0;
	while (i < n) {
		if (!pages[i]) {
			i++;
			continue;
		}
		for (j = i; j + 1 < n && pages[j + 1]; j++)
			;
		if (used < len) {
			int w;

			if (j == i)
				w = snprintf(buf + used, len - used, "%s%u",
					     used ? "," : "", i);
			else
				w = snprintf(buf + used, len - used, "%s%u-%u",
					     used ? "," : "", i, j);
			used += w > 0 ? (size_t)w : 0;
		}
		i = j + 1;
	}
	return buf;
}

double au_alloc_ratio(uint64_t size, uint64_t device_bytes)
{
	return device_bytes ? (double)size / device_bytes : 0;
}

double au_buddy_fraction(const struct buddy_counters *c)
{
	uint64_t acc = c->entry_reads + c->entry_writes;

	return acc ? (double)c->buddy_accesses / acc : 0;
}

/* Printable ASCII only: comm may hold any byte. */
static struct json_object *json_text(const char *s, size_t max)
{
	char buf[64];
	size_t i;

	if (max >= sizeof(buf))
		max = sizeof(buf) - 1;
	for (i = 0; i < max && s[i]; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = 0;
	return json_object_new_string(buf);
}

struct json_object *au_counters_json(const struct buddy_counters *c)
{
	struct json_object *o = json_object_new_object();
	const uint64_t *v = (const uint64_t *)c;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(counter_keys); k++)
		json_object_object_add(o, counter_keys[k],
				       json_object_new_uint64(v[k]));
	return o;
}

struct json_object *au_stat_json(const struct buddy_alloc_stat *st,
				  bool human)
{
	struct json_object *o = json_object_new_object();
	struct json_object *owner = json_object_new_object();
	struct json_object *hist = json_object_new_object();
	int k;

	json_object_object_add(o, "id", json_object_new_uint64(st->id));
	json_object_object_add(o, "size", au_json_size(st->size, human));
	json_object_object_add(o, "target",
			json_object_new_string(buddy_target_name(st->target)));
	json_object_object_add(o, "target_bytes",
			       json_object_new_uint64(st->target));
	json_object_object_add(o, "codec",
			json_object_new_string(buddy_codec_name(st->codec)));
	json_object_object_add(o, "label", json_text(st->label,
						     sizeof(st->label)));
	json_object_object_add(owner, "uid",
			       json_object_new_uint64(st->owner_uid));
	json_object_object_add(owner, "pid",
			       json_object_new_uint64(st->owner_pid));
	json_object_object_add(owner, "comm", json_text(st->comm,
							sizeof(st->comm)));
	json_object_object_add(o, "owner", owner);
	json_object_object_add(o, "device_bytes",
			       au_json_size(st->device_bytes, human));
	json_object_object_add(o, "buddy_bytes",
			       au_json_size(st->buddy_bytes, human));
	json_object_object_add(o, "nr_entries",
			       json_object_new_uint64(st->nr_entries));
	json_object_object_add(o, "target_source",
		json_object_new_string(buddy_source_name(st->target_source)));
	json_object_object_add(o, "ratio",
		au_json_double(au_alloc_ratio(st->size, st->device_bytes), 3));
	json_object_object_add(o, "buddy_access_fraction",
		au_json_double(au_buddy_fraction(&st->counters), 4));
	for (k = 0; k < BUDDY_CODE_NR; k++)
		json_object_object_add(hist, au_code_keys[k],
				       json_object_new_uint64(st->codes[k]));
	json_object_object_add(o, "histogram", hist);
	json_object_object_add(o, "counters", au_counters_json(&st->counters));
	return o;
}

int au_parse_u64(const char *s, uint64_t *v)
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

int au_numset_add(struct au_numset *s, const char *list)
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
			if (au_parse_u64(tok, &lo) || au_parse_u64(dash + 1, &hi) ||
			    hi < lo) {
				ret = -EINVAL;
				break;
			}
		} else {
			if (au_parse_u64(tok, &lo)) {
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

bool au_numset_has(const struct au_numset *s, uint64_t v)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (v >= s->r[i].lo && v <= s->r[i].hi)
			return true;
	return false;
}

void au_numset_free(struct au_numset *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static int strset_push(struct au_strset *s, const char *item, size_t len)
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

int au_strset_add(struct au_strset *s, const char *list)
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

bool au_strset_has(const struct au_strset *s, const char *str)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

void au_strset_free(struct au_strset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int au_get_alloc(int devfd, uint64_t id, struct buddy_alloc_stat *st)
{
	int r = buddy_stat_id(devfd, id, st);

	if (r) {
		char obj[48];

		snprintf(obj, sizeof(obj), "allocation %" PRIu64, id);
		au_err(obj, r, BUDDY_OP_STAT);
	}
	return r;
}

int au_list_all(int devfd, struct buddy_alloc_stat **out, size_t *n)
{
	enum { PAGE = 256 };
	struct buddy_alloc_stat *v = NULL;
	size_t have = 0;
	uint64_t start = 0;

	for (;;) {
		unsigned int got;
		uint64_t total;
		void *p = realloc(v, (have + PAGE) * sizeof(*v));
		int r;

		if (!p) {
			free(v);
			buddyctl_err("list: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		v = p;
		r = buddy_list(devfd, start, v + have, PAGE, &got, &total);
		if (r) {
			free(v);
			au_err(au_dev_path(), r, BUDDY_OP_LIST);
			return r;
		}
		have += got;
		if (!got || got == total)
			break;
		start = v[have - 1].id + 1;
	}
	*out = v;
	*n = have;
	return 0;
}

int au_parse_id(const char *cmd, const char *arg, uint64_t *id)
{
	if (!arg) {
		buddyctl_err("%s: missing allocation ID", cmd);
		return -1;
	}
	if (au_parse_u64(arg, id)) {
		buddyctl_err("%s: invalid allocation ID '%s' (a number)", cmd,
			     arg);
		return -1;
	}
	return 0;
}

int au_simple_opts(const char *cmd, int argc, char **argv,
		   void (*usage)(FILE *), bool *json, bool *human)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "human",	no_argument,	NULL, 'u' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const struct option opts_no_human[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, human ? "juh" : "jh",
				human ? opts : opts_no_human, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (json)
				*json = true;
			break;
		case 'u':
			*human = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		buddyctl_err("%s: unexpected argument '%s'", cmd, argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

int buddyctl_parse_size(const char *s, uint64_t *v)
{
	unsigned long long x;
	unsigned int shift = 0;
	char *e;

	errno = 0;
	x = strtoull(s, &e, 0);
	if (errno || e == s || *s == '-')
		return -1;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	}
	if (shift && x > (~0ULL >> shift))
		return -1;
	x <<= shift;
	if (*e == 'i' || *e == 'B')
		e++;
	if (*e == 'B')
		e++;
	if (*e)
		return -1;
	*v = x;
	return 0;
}
