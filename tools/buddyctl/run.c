// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl run - run a program with its large allocations in buddy memory.
 *
 *   buddyctl run [OPTIONS] -- COMMAND [ARGS...]
 *
 * The command line only: its options (the ones `buddyctl profile` shares
 * are in tools/profile/engine/options.c); the interposer's run half
 * (tools/profile/interposer/run_alloc.c) makes the allocations, the run
 * engine (tools/profile/engine/run_engine.c) runs the program and reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buddyctl.h"
#include "lib/libbuddy.h"
#include "tools/profile/engine/profiler.h"
#include "tools/profile/interposer/run_shm.h"

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
"  -U, --uid UID          whose profiles of FILE (default: yours)\n"
"      --depth N          call-stack frames per label (1-%u, default 8, as\n"
"                         profile's; must match the profile's)\n"
"      --no-unwind        label by the immediate caller only\n"
"      --device PATH      the device (default: $BUDDY_DEVICE, which\n"
"                         buddyctl --device sets, else /dev/buddy), or\n"
"                         inproc:OPTS\n"
"      --cpunodebind N    run COMMAND on the CPUs of NUMA node N (libnuma)\n"
"      --base-run         run COMMAND once without buddy memory first (its\n"
"                         output thrown away), timed: the base time of the\n"
"                         modeled slowdown\n"
"      --base-time SEC    the base time of the modeled slowdown, given\n"
"                         (without either: the modeled link time only)\n"
"      --progress SEC     a progress line every SEC seconds on stderr: live\n"
"                         buddy memory and the window's faults and\n"
"                         write-backs per second (default 10; 0: none)\n"
"      --um-page SIZE     page the Unified Memory baseline migrates, a power\n"
"                         of two from 4K to 2M (default 64K)\n"
"      --allow-fallback   exit with the program's status even when more than\n"
"                         half the tracked bytes fell back to ordinary memory\n"
"                         (default: a warning and exit status 1)\n"
"  -j, --json             the report as JSON\n"
"  -o, --output FILE      the report to FILE instead of stdout\n"
"      --json-out FILE    also the report as JSON, to FILE (-: stdout)\n"
"      --labels N         label rows in the table (default 25; 0: all)\n"
"      --records N        allocation records kept (default %u)\n"
"      --lib PATH         the interposer (default: libbuddyprof.so next to\n"
"                         buddyctl, or $BUDDYPROF_LIB)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"\n"
"When the JSON report goes to stdout (-j without -o, or --json-out -), stdout\n"
"carries it alone: COMMAND's stdout and a text report go to stderr.\n"
"The device is opened before COMMAND starts: without one, nothing runs.\n"
"Exit status: the program's (128+N if killed by signal N); 1 runtime error\n"
"(no device, the report not written, most bytes fell back) and 2 usage\n"
"error of buddyctl itself.\n",
		BPROF_FRAMES, BRUN_DEF_RECS);
}

#define RO(o)		((struct run_opts *)(o))

static int set_target(void *o, const char *arg)
{
	return buddy_target_parse(arg, &RO(o)->target) ? -1 : 0;
}

static int set_codec(void *o, const char *arg)
{
	int r = buddy_codec_parse(arg);

	if (r < 0)
		return -1;
	RO(o)->codec = r;
	return 0;
}

static int set_profile(void *o, const char *arg)
{
	RO(o)->profile_file = arg;
	return 0;
}

static int set_device(void *o, const char *arg)
{
	RO(o)->device = arg;
	return 0;
}

static int set_cpunode(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v > 1023)
		return -1;
	RO(o)->cpunode = v;
	return 0;
}

static int set_base_time(void *o, const char *arg)
{
	return parse_double(arg, &RO(o)->base_time) ||
	       !(RO(o)->base_time > 0) ? -1 : 0;
}

static int set_base_run(void *o, const char *arg)
{
	RO(o)->base_run = true;
	return 0;
}

static int set_progress(void *o, const char *arg)
{
	return parse_double(arg, &RO(o)->progress) ||
	       !(RO(o)->progress >= 0 && RO(o)->progress <= 86400) ? -1 : 0;
}

static int set_um_page(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v < 4096 || v > (2u << 20) || (v & (v - 1)))
		return -1;
	RO(o)->um_page = v;
	return 0;
}

static int set_allow_fallback(void *o, const char *arg)
{
	RO(o)->allow_fallback = true;
	return 0;
}

static int set_records(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || !v || v > (1u << 24))
		return -1;
	RO(o)->nrecs = v;
	return 0;
}

enum {
	OPT_CPUNODE = 300, OPT_BASE, OPT_RECORDS, OPT_UM_PAGE, OPT_BASE_RUN,
	OPT_PROGRESS, OPT_ALLOW_FALLBACK, OPT_DEVICE,
};

static const struct eng_option run_options[] = {
	{ "target", 't', true, set_target,
	  "a target: 16x, 4x, 2x, 4/3x, 1x or auto" },
	{ "codec", 'c', true, set_codec,
	  "a codec: bpc, zvc, bdi, fpc, none or default" },
	{ "profile", 'p', true, set_profile, NULL },
	{ "device", OPT_DEVICE, true, set_device, NULL },
	{ "cpunodebind", OPT_CPUNODE, true, set_cpunode, "a node in 0..1023" },
	{ "base-time", OPT_BASE, true, set_base_time, "a number of seconds above 0" },
	{ "base-run", OPT_BASE_RUN, false, set_base_run, NULL },
	{ "progress", OPT_PROGRESS, true, set_progress,
	  "a number of seconds in 0..86400" },
	{ "um-page", OPT_UM_PAGE, true, set_um_page,
	  "a power of two from 4K to 2M" },
	{ "records", OPT_RECORDS, true, set_records, "in 1..16777216" },
	{ "allow-fallback", OPT_ALLOW_FALLBACK, false, set_allow_fallback, NULL },
	{ NULL }
};

static const struct eng_command run_cmd = {
	.name = "run",
	.options = run_options,
	.usage = run_usage,
	.no_command = "no command given (buddyctl run [OPTIONS] -- COMMAND)",
};

int cmd_run(int argc, char **argv)
{
	struct run_opts o = {
		.min_size = BRUN_DEF_MIN, .depth = 8, .unwind = true,
		.target = BUDDY_TARGET_AUTO, .codec = BUDDY_CODEC_DEFAULT,
		.uid = getuid(), .cpunode = -1, .show_labels = 25,
		.nrecs = BRUN_DEF_RECS, .um_page = 64 << 10, .progress = 10,
	};
	char *lib;
	int r;

	r = eng_parse(&run_cmd, &o, argc, argv);
	if (r >= 0)
		return r;
	lib = prof_find_lib(o.lib);
	if (!lib) {
		buddyctl_err("run: libbuddyprof.so not found (--lib PATH or $BUDDYPROF_LIB)");
		return 1;
	}
	r = run_program(&o, lib);
	free(lib);
	return r;
}
