// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl run - run a program with its large allocations in buddy memory.
 *
 *   buddyctl run [OPTIONS] -- COMMAND [ARGS...]
 *
 * The command line only: the interposer (tools/profile/interposer/interpose_run.c)
 * makes the allocations, the engine (tools/profile/engine/prof_exec.c, pr_run())
 * runs the program and reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buddyctl.h"
#include "tools/profile/engine/buddyprof.h"
#include "lib/libbuddy.h"
#include "tools/profile/interposer/runshm.h"

static void run_usage(FILE *f)
{
	fprintf(f,
"usage: buddyctl run [OPTIONS] -- COMMAND [ARGS...]\n"
"\n"
"Run COMMAND (dynamically linked) with libbuddyprof.so preloaded: its malloc,\n"
"calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc and\n"
"anonymous mmap allocations of at least --min-size bytes become buddy\n"
"allocations mapped into it, labelled by call stack as `buddyctl profile`\n"
"labels them.  Children and exec'd programs take part.  At exit: a table\n"
"per label and in total, and the modeled slowdown against link bandwidth.\n"
"The link model (a model, not a measurement): buddy sectors x 32 B / link\n"
"bandwidth + link requests x link_latency_ns + device sectors x 32 B /\n"
"device_gbps, where a link request is one 4 KiB stripe (a fault, a\n"
"write-back, a stripe of a pread/pwrite) that touched buddy sectors: its\n"
"sector requests overlap, so it pays the latency once.  The Unified Memory\n"
"baseline migrates one --um-page page per window fault or write-back that\n"
"lands beyond the device pool (probability overflow / footprint), paying\n"
"the latency once per migration; UM assumes no locality between faults,\n"
"UM-local full locality (--um-page / 4 KiB faults share a migration).\n"
"\n"
"  -m, --min-size BYTES   buddy memory from this size (default 1M; K, M, G)\n"
"  -t, --target T         target of every allocation (16x, 4x, 2x, 4/3x, 1x,\n"
"                         auto; default auto: buddyd's table decides)\n"
"  -c, --codec NAME       bpc, zvc, bdi, fpc, none or default (default)\n"
"  -p, --profile FILE     targets per label from FILE (as written by\n"
"                         `buddyctl profile -p`); other labels get --target\n"
"  -u, --uid UID          whose profiles of FILE (default: yours)\n"
"      --depth N          call-stack frames per label (1-%u, default 8, as\n"
"                         profile's; must match the profile's)\n"
"      --no-unwind        label by the immediate caller only\n"
"  -d, --device PATH      /dev/buddy (default), or inproc:OPTS\n"
"      --cpunodebind N    run COMMAND on the CPUs of NUMA node N (libnuma)\n"
"      --base-time SEC    run time the sweep's slowdown is relative to\n"
"                         (default: this run's)\n"
"      --um-page SIZE     page the Unified Memory baseline migrates, a power\n"
"                         of two from 4K to 2M (default 64K)\n"
"  -o, --output FILE      the report to FILE instead of stdout\n"
"      --json-out FILE    also the report as JSON\n"
"  -l, --labels N         label rows in the table (default 25; 0: all)\n"
"      --records N        allocation records kept (default %u)\n"
"      --lib PATH         the interposer (default: libbuddyprof.so next to\n"
"                         buddyctl, or $BUDDYPROF_LIB)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"\n"
"Exit status: the program's (128+N if killed by signal N); 1 runtime error\n"
"and 2 usage error of buddyctl itself.\n",
		BPROF_FRAMES, BRUN_DEF_RECS);
}

enum {
	OPT_DEPTH = 256, OPT_NO_UNWIND, OPT_CPUNODE, OPT_BASE, OPT_JSON,
	OPT_RECORDS, OPT_LIB, OPT_UM_PAGE,
};

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "min-size",	required_argument, NULL, 'm' },
		{ "target",	required_argument, NULL, 't' },
		{ "codec",	required_argument, NULL, 'c' },
		{ "profile",	required_argument, NULL, 'p' },
		{ "uid",	required_argument, NULL, 'u' },
		{ "depth",	required_argument, NULL, OPT_DEPTH },
		{ "no-unwind",	no_argument,	   NULL, OPT_NO_UNWIND },
		{ "device",	required_argument, NULL, 'd' },
		{ "cpunodebind", required_argument, NULL, OPT_CPUNODE },
		{ "base-time",	required_argument, NULL, OPT_BASE },
		{ "um-page",	required_argument, NULL, OPT_UM_PAGE },
		{ "output",	required_argument, NULL, 'o' },
		{ "json-out",	required_argument, NULL, OPT_JSON },
		{ "labels",	required_argument, NULL, 'l' },
		{ "records",	required_argument, NULL, OPT_RECORDS },
		{ "lib",	required_argument, NULL, OPT_LIB },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct pr_opts o = {
		.min_size = BRUN_DEF_MIN, .depth = 8, .unwind = true,
		.target = BUDDY_TARGET_AUTO, .codec = BUDDY_CODEC_DEFAULT,
		.uid = getuid(), .cpunode = -1, .show_labels = 25,
		.nrecs = BRUN_DEF_RECS, .um_page = 64 << 10,
	};
	struct pf_opts po = { 0 };
	char *lib, *end;
	uint64_t v;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+m:t:c:p:u:d:o:l:qh", opts,
				NULL)) != -1) {
		const char *bad = NULL;

		switch (c) {
		case 'm':
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "--min-size";
			o.min_size = v;
			break;
		case 't':
			if (buddy_target_parse(optarg, &o.target))
				bad = "--target";
			break;
		case 'c':
			r = buddy_codec_parse(optarg);
			if (r < 0)
				bad = "--codec";
			o.codec = r;
			break;
		case 'p':
			o.profile_file = optarg;
			break;
		case 'u':
			if (buddyctl_parse_size(optarg, &v) || v >= UINT32_MAX)
				bad = "--uid";
			o.uid = v;
			break;
		case OPT_DEPTH:
			if (buddyctl_parse_size(optarg, &v) || !v || v > BPROF_FRAMES)
				bad = "--depth";
			o.depth = v;
			break;
		case OPT_NO_UNWIND:
			o.unwind = false;
			break;
		case 'd':
			o.device = optarg;
			break;
		case OPT_CPUNODE:
			if (buddyctl_parse_size(optarg, &v) || v > 1023)
				bad = "--cpunodebind";
			o.cpunode = v;
			break;
		case OPT_BASE:
			o.base_time = strtod(optarg, &end);
			if (end == optarg || *end || !(o.base_time > 0))
				bad = "--base-time";
			break;
		case OPT_UM_PAGE:
			if (buddyctl_parse_size(optarg, &v) || v < 4096 ||
			    v > (2u << 20) || (v & (v - 1)))
				bad = "--um-page";
			o.um_page = v;
			break;
		case 'o':
			o.out = optarg;
			break;
		case OPT_JSON:
			o.json_out = optarg;
			break;
		case 'l':
			if (buddyctl_parse_size(optarg, &v) || v > 1000000)
				bad = "--labels";
			o.show_labels = v;
			break;
		case OPT_RECORDS:
			if (buddyctl_parse_size(optarg, &v) || !v || v > (1u << 24))
				bad = "--records";
			o.nrecs = v;
			break;
		case OPT_LIB:
			po.lib = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return 2;
		}
		if (bad) {
			buddyctl_err("run: %s: invalid value '%s'", bad, optarg);
			return 2;
		}
	}
	if (optind >= argc) {
		buddyctl_err("run: no command given (buddyctl run [OPTIONS] -- COMMAND)");
		return 2;
	}
	o.argv = argv + optind;
	lib = pf_find_lib(&po);
	if (!lib) {
		buddyctl_err("run: libbuddyprof.so not found (--lib PATH or $BUDDYPROF_LIB)");
		return 1;
	}
	r = pr_run(&o, lib);
	free(lib);
	return r;
}
