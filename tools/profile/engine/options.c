// SPDX-License-Identifier: GPL-2.0
/*
 * options.c - the parser of `buddyctl profile` and `buddyctl run`, and the
 * options both take (options.h).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "tools/common/msg.h"
#include "tools/common/parse.h"
#include "tools/profile/interposer/profile_shm.h"

#define STR_(x)		#x
#define STR(x)		STR_(x)

static struct engine_opts *common(void *o)
{
	return o;	/* ENGINE_OPTS() is the first member */
}

static int set_min_size(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || !v)
		return -1;
	common(o)->min_size = v;
	return 0;
}

static int set_depth(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || !v || v > BPROF_FRAMES)
		return -1;
	common(o)->depth = v;
	return 0;
}

static int set_no_unwind(void *o, const char *arg)
{
	common(o)->unwind = false;
	return 0;
}

static int set_uid(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v >= 0xffffffffULL)
		return -1;
	common(o)->uid = v;
	return 0;
}

static int set_out(void *o, const char *arg)
{
	common(o)->out = arg;
	return 0;
}

static int set_json_out(void *o, const char *arg)
{
	common(o)->json_out = arg;
	return 0;
}

static int set_json(void *o, const char *arg)
{
	common(o)->json = true;
	return 0;
}

bool eng_json_on_stdout(const struct engine_opts *o)
{
	return (o->json && !o->out) || (o->json_out && !strcmp(o->json_out, "-"));
}

static int set_labels(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v > UINT_MAX)
		return -1;
	common(o)->show_labels = v;
	return 0;
}

static int set_lib(void *o, const char *arg)
{
	common(o)->lib = arg;
	return 0;
}

static int set_quiet(void *o, const char *arg)
{
	common(o)->quiet = true;
	return 0;
}

enum {
	OPT_DEPTH = 256, OPT_NO_UNWIND, OPT_JSON_OUT, OPT_LIB, OPT_LABELS,
};

const struct eng_option eng_common_options[] = {
	{ "min-size", 'm', true, set_min_size,
	  "a size of at least 1 byte (K, M, G suffixes)" },
	{ "depth", OPT_DEPTH, true, set_depth, "in 1.." STR(BPROF_FRAMES) },
	{ "no-unwind", OPT_NO_UNWIND, false, set_no_unwind, NULL },
	/* -U as list's --uid; -u is --human and -l --label in buddyctl */
	{ "uid", 'U', true, set_uid, "a uid in 0..4294967294" },
	{ "output", 'o', true, set_out, NULL },
	{ "json", 'j', false, set_json, NULL },
	{ "json-out", OPT_JSON_OUT, true, set_json_out, NULL },
	{ "labels", OPT_LABELS, true, set_labels, "a number of rows (0: all)" },
	{ "lib", OPT_LIB, true, set_lib, NULL },
	{ "quiet", 'q', false, set_quiet, NULL },
	{ NULL }
};

static size_t count(const struct eng_option *t)
{
	size_t n = 0;

	while (t[n].name)
		n++;
	return n;
}

/* The option of @key in @cmd's tables. */
static const struct eng_option *find(const struct eng_command *cmd, int key)
{
	const struct eng_option *tables[] = { cmd->options, eng_common_options };

	for (size_t t = 0; t < 2; t++)
		for (const struct eng_option *e = tables[t]; e->name; e++)
			if (e->key == key)
				return e;
	return NULL;
}

/* getopt_long()'s tables of @cmd: both malloc'ed (exits without memory). */
static void getopt_tables(const struct eng_command *cmd, struct option **lo,
			  char **so)
{
	const struct eng_option *tables[] = { cmd->options, eng_common_options };
	size_t n = count(cmd->options) + count(eng_common_options), i = 0;
	char *s;

	*lo = calloc(n + 2, sizeof(**lo));
	*so = s = calloc(3 * n + 3, 1);
	if (!*lo || !s) {
		msg_err("buddyctl", "%s: out of memory", cmd->name);
		exit(1);
	}
	*s++ = '+';	/* stop at COMMAND: its options are its own */
	for (size_t t = 0; t < 2; t++) {
		for (const struct eng_option *e = tables[t]; e->name; e++) {
			(*lo)[i++] = (struct option){ e->name,
				e->arg == ENG_ARG_OPTIONAL ? optional_argument :
				e->arg ? required_argument : no_argument,
				NULL, e->key };
			if (e->key < 256) {
				*s++ = e->key;
				if (e->arg)
					*s++ = ':';
				if (e->arg == ENG_ARG_OPTIONAL)
					*s++ = ':';
			}
		}
	}
	(*lo)[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	*s = 'h';
}

int eng_parse(const struct eng_command *cmd, void *o, int argc, char **argv)
{
	char who[32];
	struct option *lo;
	char *so;
	int key, ret = -1;

	snprintf(who, sizeof(who), "buddyctl: %s", cmd->name);
	getopt_tables(cmd, &lo, &so);
	optind = 1;
	while (ret < 0 && (key = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct eng_option *e = key == 'h' ? NULL : find(cmd, key);

		if (key == 'h') {
			cmd->usage(stdout);
			ret = 0;
		} else if (!e) {
			/* getopt said what (with the "buddyctl: NAME" prefix) */
			fprintf(stderr, "Try 'buddyctl help %s'.\n", cmd->name);
			ret = 2;
		} else if (e->set(o, e->arg ? optarg : NULL)) {
			msg_err(who, "--%s: %s is not %s", e->name, optarg,
				e->valid);
			ret = 2;
		}
	}
	if (ret < 0 && optind >= argc &&
	    !(cmd->command_optional && cmd->command_optional(o))) {
		msg_err(who, "%s", cmd->no_command);
		ret = 2;
	}
	if (ret < 0)
		common(o)->argv = argv + optind;
	free(lo);
	free(so);
	return ret;
}
