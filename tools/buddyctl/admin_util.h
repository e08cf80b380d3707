/* SPDX-License-Identifier: GPL-2.0 */
/*
 * admin_util.h - what buddyctl's device subcommands share (info, stats,
 * list, show, heatmap, set-target, profile table): opening /dev/buddy,
 * errors that name the object and the errno, sizes with -u/--human, JSON
 * printing, numactl-style lists, and one allocation as a JSON object.
 *
 * The JSON keys built here are an interface: Documentation/buddyctl.rst
 * lists every one.  Keys are only ever added, never renamed or removed.
 */
#ifndef BUDDYCTL_ADMIN_UTIL_H
#define BUDDYCTL_ADMIN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "lib/libbuddy.h"
#include "tools/common/json.h"
#include "tools/common/parse.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Size code names, in BUDDY_CODE_* order: the "histogram" keys. */
extern const char *const au_code_keys[BUDDY_CODE_NR];

/*
 * au_err() - print "buddyctl: OBJ: strerror(err) (explanation)".
 * @obj: the object, e.g. "allocation 42" or "/dev/buddy".
 * @err: errno value, negative or positive.
 * @op: BUDDY_OP_* of the call that failed (for buddy_strerror()); -1 for
 *	plain strerror().
 */
void au_err(const char *obj, int err, int op);

/*
 * au_open() - open /dev/buddy (or $BUDDY_DEVICE); on failure print the
 * error naming the device and return -1.
 */
int au_open(void);
/* The device path au_open() uses. */
const char *au_dev_path(void);
/* Is buddy.ko loaded?  ($BUDDY_MODULE_DIR stands for /sys/module/buddy.) */
bool au_module_loaded(void);
/* Does @path name an in-process device ("inproc:OPTIONS")? */
bool au_path_is_inproc(const char *path);

/*
 * au_size() - @bytes as text: decimal bytes, or with @human "1.50 MiB"
 * (binary units, two decimals; "N B" below 1 KiB).  Returns @buf.
 */
const char *au_size(uint64_t bytes, bool human, char *buf, size_t len);
/* @bytes as a JSON number, or with @human as the au_size() string. */
struct json_object *au_json_size(uint64_t bytes, bool human);

/*
 * au_print_json() - pretty-print @o and a newline to stdout and drop the
 * reference.  Returns 0, or 1 (message printed) when stdout fails.
 */
int au_print_json(struct json_object *o);
/* fflush(stdout) and report a failed write; returns 0 or 1. */
int au_flush_stdout(void);

/* A JSON string of @s made valid UTF-8; exits without memory. */
#define au_json_string(s)	bjson_string_or_exit((s), "buddyctl")

/*
 * au_nodelist() - numactl's node-list grammar for the nodes whose @pages
 * entry is non-zero ("0", "0-1,3"; "" when none).  Returns @buf.
 */
const char *au_nodelist(const __u64 *pages, unsigned int n, char *buf,
			size_t len);

/* Allocation ratio size / device_bytes (0 when device_bytes is 0). */
double au_alloc_ratio(uint64_t size, uint64_t device_bytes);
/* buddy_accesses / (entry_reads + entry_writes), 0 without accesses. */
double au_buddy_fraction(const struct buddy_counters *c);

/*
 * au_stat_json() - one allocation as the JSON object of "list" and "show"
 * (keys documented in Documentation/buddyctl.rst).
 */
struct json_object *au_stat_json(const struct buddy_alloc_stat *st,
				  bool human);
/* The counters as a JSON object, keys as struct buddy_counters' fields. */
struct json_object *au_counters_json(const struct buddy_counters *c);

/*
 * au_get_alloc() - BUDDY_IOC_ALLOC_STAT by id on @devfd; on failure print
 * "buddyctl: allocation ID: ..." and return -errno.
 */
int au_get_alloc(int devfd, uint64_t id, struct buddy_alloc_stat *st);

/*
 * au_list_all() - every live allocation in id order (BUDDY_IOC_LIST, paged).
 * *@out is malloc'ed (free() it).  Returns 0 or -errno (message printed).
 */
int au_list_all(int devfd, struct buddy_alloc_stat **out, size_t *n);

/* Parse an allocation id argument; prints a usage error and returns -1. */
int au_parse_id(const char *cmd, const char *arg, uint64_t *id);

/*
 * au_simple_opts() - the options of a subcommand that takes no arguments:
 * -h/--help, -j/--json and, when @human is not NULL, -u/--human.
 * @cmd: the subcommand, for "CMD: unexpected argument 'ARG'".
 * @usage: prints the help text to stdout (--help) or stderr (bad option).
 * @json: set by -j; NULL accepts -j and ignores it.
 * @human: set by -u; NULL: no -u/--human.
 *
 * Returns -1 to go on, else the exit status: 0 after --help, EXIT_USAGE
 * (message printed).
 */
int au_simple_opts(const char *cmd, int argc, char **argv,
		   void (*usage)(FILE *), bool *json, bool *human);

/*
 * au_simple_start() - au_simple_opts(), then au_open() into *@fd.  Returns
 * -1 to go on (the device open), else the exit status.
 */
int au_simple_start(const char *cmd, int argc, char **argv,
		    void (*usage)(FILE *), bool *json, bool *human, int *fd);

/*
 * au_usage() - --help (@help) or a bad option: the usage on stdout or
 * stderr, and the exit status, 0 or EXIT_USAGE.
 */
int au_usage(void (*usage)(FILE *), bool help);

#endif /* BUDDYCTL_ADMIN_UTIL_H */
