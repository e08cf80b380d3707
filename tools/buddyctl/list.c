// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl list - live allocations as a JSON array (always an array, also
 *                 for one allocation or none), filtered.
 * buddyctl show - one allocation as a JSON object; a missing id is an error.
 *
 * Filters (list): each option is repeatable and takes a comma list; an
 * allocation is listed when it matches ANY value of EVERY option given (OR
 * within an option, AND across options), as cxl-cli and ndctl filter.
 * Both need CAP_SYS_ADMIN (BUDDY_IOC_LIST, BUDDY_IOC_ALLOC_STAT by id).
 * Keys of the objects: au_stat_json(), documented in
 * Documentation/buddyctl.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buddyctl.h"
#include "admin_util.h"

struct list_filter {
	struct numset id, pid, uid;
	struct strset label, target, codec;
	unsigned int targets[16], nr_targets;
	unsigned int codecs[BUDDY_CODEC_NR], nr_codecs;
};

static bool match(const struct list_filter *f, const struct buddy_alloc_stat *st)
{
	char label[BUDDY_LABEL_LEN + 1];
	unsigned int i;
	bool ok;

	if (f->id.n && !numset_has(&f->id, st->id))
		return false;
	if (f->pid.n && !numset_has(&f->pid, st->owner_pid))
		return false;
	if (f->uid.n && !numset_has(&f->uid, st->owner_uid))
		return false;
	if (f->label.n) {
		memcpy(label, st->label, BUDDY_LABEL_LEN);
		label[BUDDY_LABEL_LEN] = 0;
		if (!strset_has(&f->label, label))
			return false;
	}
	if (f->nr_targets) {
		for (ok = false, i = 0; i < f->nr_targets; i++)
			ok |= f->targets[i] == st->target;
		if (!ok)
			return false;
	}
	if (f->nr_codecs) {
		for (ok = false, i = 0; i < f->nr_codecs; i++)
			ok |= f->codecs[i] == st->codec;
		if (!ok)
			return false;
	}
	return true;
}

static void filter_free(struct list_filter *f)
{
	numset_free(&f->id);
	numset_free(&f->pid);
	numset_free(&f->uid);
	strset_free(&f->label);
	strset_free(&f->target);
	strset_free(&f->codec);
}

/* Turn the --target and --codec strings into values; -1 on a bad one. */
static int filter_resolve(struct list_filter *f)
{
	size_t i;

	for (i = 0; i < f->target.n; i++) {
		unsigned int t;

		if (buddy_target_parse(f->target.v[i], &t) ||
		    t == BUDDY_TARGET_AUTO) {
			buddyctl_err("list: invalid target '%s' (1x, 4/3x, 2x, 4x or 16x)",
				     f->target.v[i]);
			return -1;
		}
		if (f->nr_targets < ARRAY_SIZE(f->targets))
			f->targets[f->nr_targets++] = t;
	}
	for (i = 0; i < f->codec.n; i++) {
		int c = buddy_codec_parse(f->codec.v[i]);

		if (c <= BUDDY_CODEC_DEFAULT) {
			buddyctl_err("list: invalid codec '%s' (bpc, zvc, bdi, fpc or none)",
				     f->codec.v[i]);
			return -1;
		}
		if (f->nr_codecs < BUDDY_CODEC_NR)
			f->codecs[f->nr_codecs++] = c;
	}
	return 0;
}

static void list_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl list [FILTER]... [-u|--human]\n"
		"\n"
		"Print the live allocations as a JSON array, in id order; always an\n"
		"array, also for one allocation or none.  Needs CAP_SYS_ADMIN.\n"
		"\n"
		"Filters take comma lists and may be repeated.  An allocation is\n"
		"listed when it matches one of the values of each filter given:\n"
		"OR within an option, AND across options.\n"
		"  -I, --id=LIST       allocation ids, numactl ranges (\"3,5-7\")\n"
		"  -P, --pid=LIST      owner (creator) process ids, ranges allowed\n"
		"  -U, --uid=LIST      owner user ids (numbers), ranges allowed\n"
		"  -l, --label=LIST    labels, exact (\"\\,\" is a comma in a label)\n"
		"  -t, --target=LIST   targets now in force: 1x 4/3x 2x 4x 16x\n"
		"  -c, --codec=LIST    codecs now in force: bpc zvc bdi fpc none\n"
		"\n"
		"  -u, --human         sizes as strings in binary units\n"
		"  -j, --json          accepted; the output is always JSON\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0 success (also when nothing matches), 1 runtime\n"
		"error, 2 usage error.\n");
}

static int add_num(struct numset *s, const char *opt, const char *arg)
{
	if (numset_add(s, arg)) {
		buddyctl_err("list: invalid --%s '%s' (numbers and ranges: 1,3-5)",
			     opt, arg);
		return -1;
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id",		required_argument,	NULL, 'I' },
		{ "pid",	required_argument,	NULL, 'P' },
		{ "uid",	required_argument,	NULL, 'U' },
		{ "label",	required_argument,	NULL, 'l' },
		{ "target",	required_argument,	NULL, 't' },
		{ "codec",	required_argument,	NULL, 'c' },
		{ "human",	no_argument,		NULL, 'u' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct list_filter f;
	struct buddy_alloc_stat *v = NULL;
	struct json_object *arr;
	bool human = false;
	size_t n, i;
	int c, fd, ret = EXIT_USAGE;

	memset(&f, 0, sizeof(f));
	while ((c = getopt_long(argc, argv, "I:P:U:l:t:c:ujh", opts, NULL)) != -1) {
		switch (c) {
		case 'I':
			if (add_num(&f.id, "id", optarg))
				goto out;
			break;
		case 'P':
			if (add_num(&f.pid, "pid", optarg))
				goto out;
			break;
		case 'U':
			if (add_num(&f.uid, "uid", optarg))
				goto out;
			break;
		case 'l':
		case 't':
		case 'c':
			if (strset_add(c == 'l' ? &f.label : c == 't' ?
				       &f.target : &f.codec, optarg))
				goto out;
			break;
		case 'u':
			human = true;
			break;
		case 'j':	/* accepted: list always prints JSON */
			break;
		default:
			ret = au_usage(list_usage, c == 'h');
			goto out;
		}
	}
	if (optind != argc) {
		buddyctl_err("list: unexpected argument '%s' (filters are options: --id ID)",
			     argv[optind]);
		goto out;
	}
	if (filter_resolve(&f))
		goto out;
	ret = 1;
	fd = au_open();
	if (fd < 0)
		goto out;
	if (au_list_all(fd, &v, &n)) {
		close(fd);
		goto out;
	}
	close(fd);
	arr = json_object_new_array();
	for (i = 0; i < n; i++)
		if (match(&f, &v[i]))
			json_object_array_add(arr, au_stat_json(&v[i], human));
	free(v);
	ret = au_print_json(arr);
out:
	filter_free(&f);
	return ret;
}

static void show_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl show [-u|--human] [-j|--json] ID\n"
		"\n"
		"Print allocation ID as one JSON object (the element \"list\" would\n"
		"print for it, not wrapped in an array: show names exactly one\n"
		"allocation).  A missing id is an error (exit status 1), where\n"
		"\"list --id ID\" prints [].  Needs CAP_SYS_ADMIN.\n"
		"\n"
		"  -u, --human   sizes as strings in binary units\n"
		"  -j, --json    accepted; the output is always JSON\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error (no such allocation, ...),\n"
		"2 usage error.\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "human",	no_argument,	NULL, 'u' },
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct buddy_alloc_stat st;
	bool human = false;
	uint64_t id;
	int c, fd, r;

	while ((c = getopt_long(argc, argv, "ujh", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			human = true;
			break;
		case 'j':	/* accepted: show always prints JSON */
			break;
		default:
			return au_usage(show_usage, c == 'h');
		}
	}
	if (au_parse_id("show", argv[optind], &id))
		return EXIT_USAGE;
	if (optind + 1 != argc) {
		buddyctl_err("show: unexpected argument '%s' (one ID)",
			     argv[optind + 1]);
		return EXIT_USAGE;
	}
	fd = au_open();
	if (fd < 0)
		return 1;
	r = au_get_alloc(fd, id, &st);
	close(fd);
	if (r)
		return 1;
	return au_print_json(au_stat_json(&st, human));
}
