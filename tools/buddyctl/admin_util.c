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
#include "tools/common/json.h"

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

bool au_path_is_inproc(const char *path)
{
	return !strncmp(path, "inproc:", 7);
}

/* Is buddy.ko loaded?  ($BUDDY_MODULE_DIR stands for /sys/module/buddy.) */
bool au_module_loaded(void)
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
		    !au_module_loaded())
			buddyctl_err("%s: %s (the buddy module is not loaded: modprobe buddy)",
				     path, strerror(err));
		else if (au_path_is_inproc(path) && err == EINVAL)
			buddyctl_err("%s: %s (options: device_mb=N, max_ratio=R, chunk_kb=K, user_limit_mb=M, auto_target=B)",
				     path, strerror(err));
		else if (err == EACCES || err == EPERM)
			buddyctl_err("%s: %s (read-write access needed: root, or a member of the device's group)",
				     path, strerror(err));
		else
			buddyctl_err("%s: %s", path, strerror(err));
		return -1;
	}
	/*
	 * The right node?  Anything else answers GET_INFO with ENOTTY.  An
	 * in-process device is a memfd that only libbuddy understands.
	 */
	if (buddy_is_inproc(fd))
		r = buddy_get_info(fd, &info);
	else
		r = fstat(fd, &st) ? -errno : !S_ISCHR(st.st_mode) ? -ENOTTY :
		    buddy_get_info(fd, &info);
	if (r == -ENOTTY || r == -EINVAL) {
		buddyctl_err("%s: not a buddy device%s", path,
			     au_module_loaded() ? "" :
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
	bjson_write(stdout, o, BJSON_PRETTY);
	json_object_put(o);
	return au_flush_stdout();
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
		bjson_fixed(au_alloc_ratio(st->size, st->device_bytes), 3));
	json_object_object_add(o, "buddy_access_fraction",
		bjson_fixed(au_buddy_fraction(&st->counters), 4));
	for (k = 0; k < BUDDY_CODE_NR; k++)
		json_object_object_add(hist, au_code_keys[k],
				       json_object_new_uint64(st->codes[k]));
	json_object_object_add(o, "histogram", hist);
	json_object_object_add(o, "counters", au_counters_json(&st->counters));
	return o;
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
	if (parse_u64(arg, id)) {
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
		default:
			return au_usage(usage, c == 'h');
		}
	}
	if (optind != argc) {
		buddyctl_err("%s: unexpected argument '%s'", cmd, argv[optind]);
		return EXIT_USAGE;
	}
	return -1;
}

int au_simple_start(const char *cmd, int argc, char **argv,
		    void (*usage)(FILE *), bool *json, bool *human, int *fd)
{
	int r = au_simple_opts(cmd, argc, argv, usage, json, human);

	if (r >= 0)
		return r;
	*fd = au_open();
	return *fd < 0 ? 1 : -1;
}

int au_usage(void (*usage)(FILE *), bool help)
{
	usage(help ? stdout : stderr);
	return help ? 0 : EXIT_USAGE;
}
