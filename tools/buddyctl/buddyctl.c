// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl - administer Buddy Compression devices and analyse memory dumps.
 *
 *   buddyctl [--version] [--help] [--device DEVICE] COMMAND [ARGS]
 *
 * Commands come from one table (cxl-cli/ndctl style): adding a command is one
 * cmd_<verb>() in its own file, one declaration in buddyctl.h and one line
 * below.  "buddyctl COMMAND --help" (or "buddyctl help COMMAND") is handled
 * by the command itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/linux/buddy.h"
#include "buddyctl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct cmd_struct {
	const char *cmd;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_struct commands[] = {
	{ "analyze", cmd_analyze,
	  "offline compressibility of memory dumps, per codec" },
	{ "profile", cmd_profile, "profile a program's allocations: Figs. 3, 7, 9, 10" },
	{ "run", cmd_run, "run a program with its large allocations in buddy memory" },
	{ "info", cmd_info, "the device: ABI, features, codecs, pools, NUMA nodes" },
	{ "stats", cmd_stats, "global counters, ratio and buddy-access fraction" },
	{ "list", cmd_list, "live allocations as a JSON array, filtered" },
	{ "show", cmd_show, "one allocation as a JSON object" },
	{ "heatmap", cmd_heatmap, "an allocation's size codes as a picture (Fig. 8)" },
	{ "set-target", cmd_set_target, "re-stripe an allocation to a new target ratio" },
	{ "show-profiles", cmd_show_profiles, "the kernel's AUTO profile table" },
	{ "load-profiles", cmd_load_profiles, "install a buddyd state file as profiles" },
	{ "clear-profiles", cmd_clear_profiles, "empty the kernel's profile table" },
	{ "calibrate", cmd_calibrate, "fit CSWAP's codec-time model per codec (JSON)" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: buddyctl [--version] [--help] [--device DEVICE] COMMAND [ARGS]\n"
		"\n"
		"  --device DEVICE  the device commands use: a path (default\n"
		"                   $BUDDY_DEVICE, else /dev/buddy) or\n"
		"                   inproc:device_mb=N,max_ratio=R[,chunk_kb=K], a\n"
		"                   device inside this buddyctl process\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-14s %s\n", commands[i].cmd, commands[i].help);
	fprintf(f,
		"\n"
		"'buddyctl help COMMAND' or 'buddyctl COMMAND --help' describes one\n"
		"command.\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

static const struct cmd_struct *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].cmd))
			return &commands[i];
	return NULL;
}

/*
 * Run @c with @argv[0] as "buddyctl: CMD": getopt's own messages ("invalid
 * option", "requires an argument") then carry the prefix of every other
 * error, "buddyctl: CMD: unrecognized option '--bogus'".
 */
static int run_cmd(const struct cmd_struct *c, int argc, char **argv)
{
	char name[64];

	snprintf(name, sizeof(name), "buddyctl: %s", c->cmd);
	argv[0] = name;
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;

	/* the global option: every command opens the device it names */
	while (argc > 1 && !strncmp(argv[1], "--device", 8)) {
		const char *dev = NULL;

		if (argv[1][8] == '=') {
			dev = argv[1] + 9;
		} else if (!argv[1][8] && argc > 2) {
			dev = argv[2];
			argc--;
			argv++;
		}
		if (!dev || !*dev) {
			buddyctl_err("--device needs a path or inproc:OPTIONS");
			return EXIT_USAGE;
		}
		setenv("BUDDY_DEVICE", dev, 1);
		argc--;
		argv++;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* "buddyctl help CMD" is "buddyctl CMD --help" */
		char *help[] = { argv[2], "--help", NULL };

		if (argc > 3) {
			buddyctl_err("help: one COMMAND only");
			return EXIT_USAGE;
		}
		c = find_cmd(argv[2]);
		if (!c) {
			buddyctl_err("help: unknown command '%s'", argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		return run_cmd(c, 2, help);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v") ||
	    !strcmp(argv[1], "version")) {
		printf("buddyctl %s (ABI %d)\n", BUDDYCTL_VERSION,
		       BUDDY_ABI_VERSION);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (c)
		return run_cmd(c, argc - 1, argv + 1);

	buddyctl_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
