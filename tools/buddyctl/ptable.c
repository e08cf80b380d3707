// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's AUTO profile table (BUDDY_IOC_PROFILE_GET/SET, CAP_SYS_ADMIN)
 * and re-targeting a live allocation (BUDDY_IOC_SET_TARGET):
 *
 *   buddyctl show-profiles  [-j]            the table, a JSON array
 *   buddyctl load-profiles  [--merge] [--dry-run] FILE
 *                                           install a buddyd state file
 *   buddyctl clear-profiles                 empty the table
 *   buddyctl set-target ID RATIO|auto [--codec NAME] [-j] [-u]
 *
 * The state-file grammar is buddyd's; lines are parsed and labels escaped
 * by tools/policy/profile_file.[ch], shared with buddyd and "buddyctl profile".
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
#include "tools/policy/profile_file.h"

/* The whole table; *@out malloc'ed.  Returns 0 or -errno (printed). */
static int profile_get_all(int fd, struct buddy_profile_entry **out,
			   unsigned int *n)
{
	struct buddy_profile_entry *v;
	unsigned int got, total;
	int r;

	/* the table never holds more than BUDDY_PROFILE_MAX entries */
	v = calloc(BUDDY_PROFILE_MAX, sizeof(*v));
	if (!v) {
		buddyctl_err("profiles: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r = buddy_profile_get(fd, v, BUDDY_PROFILE_MAX, &got, &total);
	if (r) {
		au_err(au_dev_path(), r, BUDDY_OP_PROFILE);
		free(v);
		return r;
	}
	*out = v;
	*n = got;
	return 0;
}

static struct json_object *profile_json(const struct buddy_profile_entry *e)
{
	struct json_object *o = json_object_new_object();
	char label[BUDDY_LABEL_LEN];

	memcpy(label, e->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN - 1] = 0;
	json_object_object_add(o, "uid", json_object_new_uint64(e->uid));
	json_object_object_add(o, "label", json_object_new_string(label));
	json_object_object_add(o, "target",
			json_object_new_string(buddy_target_name(e->target)));
	json_object_object_add(o, "target_bytes",
			       json_object_new_uint64(e->target));
	json_object_object_add(o, "codec",
			json_object_new_string(buddy_codec_name(e->codec)));
	return o;
}

/* @n profiles as a JSON array on stdout; returns au_print_json()'s status. */
static int profiles_print(const struct buddy_profile_entry *v, unsigned int n)
{
	struct json_object *arr = json_object_new_array();
	unsigned int i;

	for (i = 0; i < n; i++)
		json_object_array_add(arr, profile_json(&v[i]));
	return au_print_json(arr);
}

static void show_profiles_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl show-profiles [-j|--json]\n"
		"\n"
		"Print the kernel's profile table, in installation order, as a JSON\n"
		"array of {uid, label, target, target_bytes, codec}: what an AUTO\n"
		"allocation by that user with that label gets.  Always JSON (an\n"
		"array, also when empty).  Needs CAP_SYS_ADMIN.\n"
		"\n"
		"  -j, --json    accepted; the output is always JSON\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

int cmd_show_profiles(int argc, char **argv)
{
	struct buddy_profile_entry *v;
	unsigned int n;
	int fd, r;

	r = au_simple_start("show-profiles", argc, argv, show_profiles_usage,
			    NULL, NULL, &fd);
	if (r >= 0)
		return r;
	r = profile_get_all(fd, &v, &n);
	close(fd);
	if (r)
		return 1;
	r = profiles_print(v, n);
	free(v);
	return r;
}

static void clear_profiles_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl clear-profiles\n"
		"\n"
		"Empty the kernel's profile table (PROFILE_SET with REPLACE and no\n"
		"entries).  Live allocations keep their targets.  Needs\n"
		"CAP_SYS_ADMIN.  A running buddyd installs its table again when it\n"
		"next decides or reloads.\n"
		"\n"
		"  -j, --json    accepted; nothing is printed on stdout\n"
		"  -h, --help    this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

int cmd_clear_profiles(int argc, char **argv)
{
	int fd, r;

	struct buddy_profile_entry *v;
	unsigned int n;

	r = au_simple_start("clear-profiles", argc, argv, clear_profiles_usage,
			    NULL, NULL, &fd);
	if (r >= 0)
		return r;
	if (profile_get_all(fd, &v, &n)) {
		close(fd);
		return 1;
	}
	free(v);
	r = buddy_profile_set(fd, NULL, 0, BUDDY_PROFILE_REPLACE);
	close(fd);
	if (r) {
		au_err(au_dev_path(), r, BUDDY_OP_PROFILE);
		return 1;
	}
	buddyctl_err("clear-profiles: %s: %u profile%s removed", au_dev_path(), n,
		 n == 1 ? "" : "s");
	return 0;
}

static void load_profiles_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl load-profiles [--merge|--replace] [--dry-run] [-j] FILE\n"
		"\n"
		"Install the profiles of FILE (\"-\": stdin), a buddyd state file:\n"
		"one \"uid<TAB>label<TAB>target<TAB>codec\" line per profile, labels\n"
		"with C-style escapes, '#' comments.  By default the file replaces\n"
		"the whole table; all or nothing: any bad line is reported\n"
		"(FILE:LINE: reason) and nothing is installed.  A later line with\n"
		"the uid and label of an earlier one wins.  As buddyd does, the\n"
		"first 4096 profiles (the kernel table's size) are installed and\n"
		"the lines past them reported.  A FILE without profiles changes\n"
		"nothing (exit 1) unless --replace.  What the load replaced is\n"
		"said on stderr.  Needs CAP_SYS_ADMIN.\n"
		"\n"
		"  -M, --merge     keep the installed entries; the file's replace\n"
		"                  those with the same uid and label\n"
		"      --replace   replace the table even by an empty FILE\n"
		"  -n, --dry-run   check FILE and print what would be installed\n"
		"                  (JSON array), without touching the kernel\n"
		"  -j, --json      print the table after loading (JSON array)\n"
		"  -h, --help      this text\n"
		"\n"
		"Exit status: 0 success, 1 runtime error (bad line, unreadable file,\n"
		"failed ioctl), 2 usage error.\n");
}

struct load_ctx {
	const char *path;
};

static void load_report(void *ctx, enum buddy_profile_note what,
			unsigned int line, const char *text)
{
	const struct load_ctx *c = ctx;

	buddyctl_err("%s:%u: %s", c->path, line, text);
}

/*
 * Parse @path into @t with the grammar and the rules buddyd uses
 * (profile_file.h): a later line wins, the first BUDDY_PROFILE_MAX
 * profiles are kept.  All or nothing: any bad line, or a label buddy.ko
 * refuses, fails it.  Errors printed.
 */
static int load_file(const char *path, struct buddy_profile_table *t)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	struct load_ctx ctx = { path };
	struct buddy_profile_stats st;
	char esc[BUDDY_LABEL_ESC_MAX];
	unsigned int bad;
	int r;

	if (!f) {
		au_err(path, errno, -1);
		return -1;
	}
	r = buddy_profile_read(t, f, load_report, &ctx, &st);
	if (f != stdin)
		fclose(f);
	if (r) {
		au_err(path, r, -1);
		return -1;
	}
	bad = st.bad;
	for (size_t i = 0; i < t->n; i++) {
		if (buddy_label_kernel_valid(t->v[i].label))
			continue;
		buddy_label_escape(t->v[i].label, esc, sizeof(esc), false);
		buddyctl_err("%s:%zu: label \"%s\" is not accepted by buddy.ko (printable ASCII without '/')",
			     path, t->home[i], esc);
		bad++;
	}
	if (bad) {
		buddyctl_err("%s: %u bad line%s: nothing installed", path, bad,
			     bad == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

/*
 * One line on what the load changed: the profiles installed and those of
 * the @nold before it (@old) that they replaced, or that merging kept.
 */
static void load_summary(const char *path, const struct buddy_profile_table *t,
			 const struct buddy_profile_entry *old,
			 unsigned int nold, bool merge)
{
	unsigned int same = 0, i;

	for (i = 0; i < nold; i++)
		if (buddy_profile_find(t,
				       old[i].uid, old[i].label))
			same++;
	if (merge)
		buddyctl_err("load-profiles: %s: %zu profile%s merged into %s: %u installed one%s replaced, %u kept",
			     path, t->n, t->n == 1 ? "" : "s", au_dev_path(),
			     same, same == 1 ? "" : "s", nold - same);
	else
		buddyctl_err("load-profiles: %s: %zu profile%s installed in %s, replacing %u (%u with the same uid and label)",
			     path, t->n, t->n == 1 ? "" : "s", au_dev_path(),
			     nold, same);
}

int cmd_load_profiles(int argc, char **argv)
{
	enum { OPT_REPLACE = 256 };	/* no letter: -r is heatmap's --max-rows */
	static const struct option opts[] = {
		{ "merge",	no_argument,	NULL, 'M' },
		{ "replace",	no_argument,	NULL, OPT_REPLACE },
		{ "dry-run",	no_argument,	NULL, 'n' },
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry *now = NULL;
	bool merge = false, replace = false, dry = false, json = false;
	unsigned int before;
	int c, fd, r, ret = 1;

	while ((c = getopt_long(argc, argv, "Mnjh", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
			merge = true;
			break;
		case OPT_REPLACE:
			replace = true;
			break;
		case 'n':
			dry = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			load_profiles_usage(stdout);
			return 0;
		default:
			load_profiles_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		buddyctl_err("load-profiles: %s", optind == argc ?
			     "missing FILE" : "one FILE only");
		return EXIT_USAGE;
	}
	if (merge && replace) {
		buddyctl_err("load-profiles: --merge and --replace do not combine");
		return EXIT_USAGE;
	}
	if (load_file(argv[optind], &t))
		goto out;
	if (dry) {
		ret = profiles_print(t.v, t.n);
		goto out;
	}
	/* an empty file wipes the table only when asked to */
	if (!t.n && !replace) {
		buddyctl_err("load-profiles: %s: no profiles in the file: the device's profile table is left as it was (--replace empties it)",
			     argv[optind]);
		goto out;
	}
	fd = au_open();
	if (fd < 0)
		goto out;
	/* what is replaced is said: the table before */
	if (profile_get_all(fd, &now, &before)) {
		close(fd);
		goto out;
	}
	r = buddy_profile_set(fd, t.v, t.n, merge ? 0 : BUDDY_PROFILE_REPLACE);
	if (r) {
		char obj[600];

		snprintf(obj, sizeof(obj), "%s: %s", argv[optind],
			 au_dev_path());
		au_err(obj, r, BUDDY_OP_PROFILE);
		close(fd);
		goto out;
	}
	load_summary(argv[optind], &t, now, before, merge);
	free(now);
	now = NULL;
	ret = 0;
	if (json) {
		unsigned int m;

		if (profile_get_all(fd, &now, &m))
			ret = 1;
		else
			ret = profiles_print(now, m);
	}
	close(fd);
out:
	free(now);
	buddy_profile_free(&t);
	return ret;
}

/* ---- set-target ------------------------------------------------------- */

static void set_target_usage(FILE *f)
{
	fprintf(f,
		"usage: buddyctl set-target [-c|--codec NAME] [-j] [-u] ID RATIO\n"
		"\n"
		"Re-stripe live allocation ID to target RATIO, chunk by chunk, while\n"
		"its I/O goes on; the data is unchanged.  RATIO is 1, 4/3, 2, 4 or\n"
		"16 (an 'x' may follow; 1.33 is 4/3), or device bytes per entry\n"
		"as 128B, 96B, 64B, 32B, 8B, or \"auto\": the target (and codec) of\n"
		"the kernel's profile for the allocation's owner uid and label,\n"
		"as an AUTO allocation would get it now; an error when there is\n"
		"no such profile.  Needs CAP_SYS_ADMIN.  If the pools cannot take\n"
		"the new layout the allocation is left as it was.\n"
		"\n"
		"  -c, --codec=NAME  also switch codec: bpc zvc bdi fpc none\n"
		"                    (default: keep it; with auto, the profile's)\n"
		"  -j, --json        print the allocation afterwards, as \"show\"\n"
		"  -u, --human       with --json: sizes in binary units\n"
		"  -h, --help        this text\n"
		"\n"
		"Without --json one line tells the change:\n"
		"  allocation ID: 2x bpc -> 4x bpc\n"
		"\n"
		"Exit status: 0 success (also when nothing changes), 1 runtime\n"
		"error (no such allocation, no profile, pools full: ENOSPC, never\n"
		"fits: E2BIG, ...), 2 usage error.\n");
}

int cmd_set_target(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "codec",	required_argument,	NULL, 'c' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "human",	no_argument,		NULL, 'u' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct buddy_alloc_stat before, after;
	struct buddy_profile_entry *pv = NULL;
	unsigned int target, codec = BUDDY_CODEC_DEFAULT, n, i;
	bool json = false, human = false, codec_set = false;
	char obj[48];
	uint64_t id;
	int c, fd, r, ret = 1;

	while ((c = getopt_long(argc, argv, "c:juh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			r = buddy_codec_parse(optarg);
			if (r < 0) {
				buddyctl_err("set-target: invalid codec '%s' (bpc, zvc, bdi, fpc or none)",
					     optarg);
				return EXIT_USAGE;
			}
			codec = r;
			codec_set = r != BUDDY_CODEC_DEFAULT;
			break;
		case 'j':
			json = true;
			break;
		case 'u':
			human = true;
			break;
		case 'h':
			set_target_usage(stdout);
			return 0;
		default:
			set_target_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (au_parse_id("set-target", argv[optind], &id))
		return EXIT_USAGE;
	if (optind + 1 >= argc) {
		buddyctl_err("set-target: missing RATIO (1, 4/3, 2, 4, 16 or auto)");
		return EXIT_USAGE;
	}
	if (optind + 2 != argc) {
		buddyctl_err("set-target: unexpected argument '%s'",
			     argv[optind + 2]);
		return EXIT_USAGE;
	}
	if (buddy_target_parse(argv[optind + 1], &target)) {
		buddyctl_err("set-target: invalid RATIO '%s' (1, 4/3, 2, 4, 16 or auto)",
			     argv[optind + 1]);
		return EXIT_USAGE;
	}
	snprintf(obj, sizeof(obj), "allocation %" PRIu64, id);

	fd = au_open();
	if (fd < 0)
		return 1;
	if (au_get_alloc(fd, id, &before))
		goto out;
	if (target == BUDDY_TARGET_AUTO) {
		char label[BUDDY_LABEL_LEN], esc[BUDDY_LABEL_ESC_MAX];

		if (profile_get_all(fd, &pv, &n))
			goto out;
		memcpy(label, before.label, BUDDY_LABEL_LEN);
		label[BUDDY_LABEL_LEN - 1] = 0;
		for (i = 0; i < n; i++)
			if (pv[i].uid == before.owner_uid &&
			    !strncmp(pv[i].label, label, BUDDY_LABEL_LEN))
				break;
		if (i == n) {
			buddy_label_escape(label, esc, sizeof(esc), false);
			buddyctl_err("%s: %s (no profile for uid %u label \"%s\"; see show-profiles)",
				     obj, strerror(ENOENT), before.owner_uid,
				     esc);
			goto out;
		}
		target = pv[i].target;
		if (!codec_set)	/* an AUTO allocation's DEFAULT means BPC */
			codec = pv[i].codec == BUDDY_CODEC_DEFAULT ?
				BUDDY_CODEC_BPC : pv[i].codec;
	}
	r = buddy_set_target(fd, id, target, codec);
	if (r) {
		au_err(obj, r, BUDDY_OP_SET_TARGET);
		goto out;
	}
	if (au_get_alloc(fd, id, &after))
		goto out;
	if (json) {
		ret = au_print_json(au_stat_json(&after, human));
	} else {
		printf("%s: %s %s -> %s %s\n", obj,
		       buddy_target_name(before.target),
		       buddy_codec_name(before.codec),
		       buddy_target_name(after.target),
		       buddy_codec_name(after.codec));
		ret = au_flush_stdout();
	}
out:
	free(pv);
	close(fd);
	return ret;
}
