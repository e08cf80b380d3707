// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl profile - what Buddy Compression would give a real program.
 *
 *   buddyctl profile [OPTIONS] -- COMMAND [ARGS...]
 *
 * The command line of the profiler: options, outputs checked before the
 * run, then the engine (tools/profile/engine/buddyprof.h, libbuddyprofile.a):
 * pf_run_program() runs COMMAND and takes the snapshots, pf_report() writes
 * the report.  How snapshots are taken, and which processes are followed,
 * is described in tools/profile/engine/prof_run.c and buddyprof.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buddyctl.h"
#include "tools/profile/engine/buddyprof.h"
#include "tools/policy/heuristic.h"
#include "tools/common/replace_file.h"
#include "tools/common/timespan.h"

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define BPROF_FRAMES_STR STR(BPROF_FRAMES)

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		buddyctl_err("profile: out of memory");
		exit(1);
	}
	return q;
}

/* ---- options --------------------------------------------------------------- */

static void profile_usage(FILE *f)
{
	fprintf(f,
"usage: buddyctl profile [OPTIONS] -- COMMAND [ARGS...]\n"
"\n"
"Run COMMAND with libbuddyprof.so preloaded, snapshot its large allocations\n"
"at N points, and report what Buddy Compression would give it (the paper's\n"
"Figs. 3, 7, 9, 10) per call-stack label.  No kernel module needed.\n"
"\n"
"When (the schedule):\n"
"  By default N snapshots evenly spread over the run on the program's own\n"
"  progress: one each time the tracked bytes it allocated pass a multiple\n"
"  of a step (first 16M); at 2N every other one is dropped and the step\n"
"  doubles; N evenly spaced ones are kept (and, for a process that exited,\n"
"  its last one, in its own table only).  The same program and input give\n"
"  the same points on every run, however loaded the machine is.  A marker\n"
"  the program places (buddyprof_snapshot(), e.g. at fixed training steps)\n"
"  or SIGUSR2 to buddyctl adds one, always kept.\n"
"  -n, --points N         snapshots kept (default 10)\n"
"      --first-bytes SIZE the progress schedule's first step (default 16M)\n"
"      --clock CLOCK      progress (default), wall (seconds since the start)\n"
"                         or cpu (the program's CPU time, all its threads:\n"
"                         for single-threaded programs; OpenMP threads spin)\n"
"                         for the adaptive spacing, --interval and --at;\n"
"                         a timer's points depend on the machine's load\n"
"  -i, --interval TIME    one every TIME (at most N; N=0: no limit)\n"
"      --first TIME       adaptive timer: first interval (default 1s)\n"
"      --at T1,T2,...     at these times from the start\n"
"                         (TIME: seconds, or as systemd writes it: 500ms,\n"
"                         1min 30s, 1.5h; -i, --at, --first without\n"
"                         --clock mean --clock wall)\n"
"      --points-at LIST   the same\n"
"      --no-timer         only on SIGUSR2 to buddyctl or buddyprof_snapshot()\n"
"      --every-allocs N   fixed progress steps: from the allocation call\n"
"                         that makes the Nth, 2Nth, ... tracked allocation\n"
"      --every-bytes SIZE the same, each time the tracked bytes allocated\n"
"                         pass a multiple of SIZE (K, M, G suffixes)\n"
"                         (either one: no timer unless --interval or --at;\n"
"                         every such snapshot is kept, whatever N is)\n"
"      --free-bytes SIZE  also one before the program frees (free, munmap)\n"
"                         a tracked allocation of at least SIZE, always\n"
"                         kept: its data as its phase left it (for programs\n"
"                         that allocate and free per phase; with\n"
"                         --no-timer the only automatic points)\n"
"What:\n"
"  -m, --min-size BYTES   track allocations of at least BYTES (default 64K;\n"
"                         K, M, G suffixes)\n"
"      --depth N          call-stack frames per label (1-%u, default 8)\n"
"      --no-unwind        label by the immediate caller only\n"
"  -s, --sample-mib MIB   read at most MIB per snapshot (default 16; 0: all)\n"
"      --match NAME       follow only the processes whose executable name\n"
"                         starts with NAME (default: every process of\n"
"                         COMMAND's tree, forked or exec'd, that loads the\n"
"                         interposer; each has a table and a report of\n"
"                         its own)\n"
"      --processes N      process slots: at most N processes get a table,\n"
"                         in the order of their first tracked allocation\n"
"                         (1..%u, default %u); the others are counted\n"
"      --slots N          table slots per process, a power of two\n"
"                         (default %u)\n"
"      --exclude NAME     leave out of the figures the allocations whose\n"
"                         call stack passes through a module whose file\n"
"                         name contains NAME (repeatable; they are still\n"
"                         snapshotted, and the figures with them reported)\n"
"Decisions:\n"
"  -c, --codec NAME       codec of the main figures: bpc (default), zvc, bdi,\n"
"                         fpc; all four are measured for the best-codec ones\n"
"  -t, --threshold PCT    Buddy Threshold (default 30)\n"
"      --zero PCT         mostly-zero share for 16x (default 90)\n"
"      --max-ratio R      overall ratio cap of the carve-out (default 4; 0 off)\n"
"Output:\n"
"  -j, --json             the report as JSON\n"
"  -o, --output FILE      the report to FILE instead of stdout\n"
"      --json-out FILE    also the JSON report, to FILE\n"
"  -p, --profile-out FILE a profile file (buddyd's state-file format) keyed\n"
"                         by label, for AUTO allocations\n"
"  -u, --uid UID          uid of its profiles (default: yours)\n"
"  -k, --keep-dumps DIR   keep the raw snapshots: DIR/snap-NN/SEQ.bin per\n"
"                         allocation, DIR/index.tsv; for buddyctl analyze\n"
"  -l, --labels N         label rows in the table (default 25; 0: all)\n"
"      --lib PATH         the interposer (default: libbuddyprof.so next to\n"
"                         buddyctl, or $BUDDYPROF_LIB)\n"
"      --nice N           niceness of buddyctl itself (default 0)\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"\n"
"The program's own output is left alone; the report follows when it exits.\n"
"Exit status: the program's (128+N if killed by signal N); 1 runtime error\n"
"and 2 usage error of buddyctl itself before the program ran.\n",
		BPROF_FRAMES, BPROF_MAX_PROCS, BPROF_DEF_PROCS, BPROF_DEF_SLOTS);
}

static int parse_double(const char *s, double *v)
{
	char *e;

	errno = 0;
	*v = strtod(s, &e);
	return errno || e == s || *e || *v < 0 ? -1 : 0;
}

/* A time span as systemd writes it ("1.5", "500ms", "1min 30s"): seconds. */
static int parse_span(const char *s, double *sec)
{
	uint64_t us;

	if (buddy_parse_timespan(s, &us))
		return -1;
	*sec = us / 1e6;
	return 0;
}

static int parse_pct(const char *s, uint32_t *ppm)
{
	double v;

	if (parse_double(s, &v) || v > 100)
		return -1;
	*ppm = (uint32_t)(v * 10000 + 0.5);
	return 0;
}

static int parse_at(struct pf_opts *o, const char *list)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int ret = 0;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double t;

		if (parse_span(tok, &t)) {
			ret = -1;
			break;
		}
		o->at = xrealloc(o->at, (o->nat + 1) * sizeof(double));
		o->at[o->nat++] = t;
	}
	free(dup);
	if (!ret && !o->nat)
		ret = -1;
	return ret;
}

static int parse_int(const char *s, long lo, long hi, int *v)
{
	char *e;
	long x;

	errno = 0;
	x = strtol(s, &e, 10);
	if (errno || e == s || *e || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* "--threshold" for 't': the long name of an option, as users know it. */
static const char *opt_name(const struct option *opts, int val)
{
	static char buf[72];

	for (; opts->name; opts++) {
		if (opts->val == val) {
			snprintf(buf, sizeof(buf), "--%s", opts->name);
			return buf;
		}
	}
	snprintf(buf, sizeof(buf), "-%c", val);
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

enum {
	OPT_FIRST = 256, OPT_AT, OPT_NO_TIMER, OPT_DEPTH, OPT_NO_UNWIND,
	OPT_MATCH, OPT_SLOTS, OPT_PROCS, OPT_ZERO, OPT_MAX_RATIO, OPT_LIB, OPT_NICE,
	OPT_JSON_OUT, OPT_EXCLUDE, OPT_EVERY_ALLOCS, OPT_EVERY_BYTES,
	OPT_FREE_BYTES,
	OPT_CLOCK, OPT_FIRST_BYTES,
};

static int parse_opts(struct pf_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "points",	required_argument, NULL, 'n' },
		{ "interval",	required_argument, NULL, 'i' },
		{ "first",	required_argument, NULL, OPT_FIRST },
		{ "at",		required_argument, NULL, OPT_AT },
		{ "points-at",	required_argument, NULL, OPT_AT },
		{ "no-timer",	no_argument,	   NULL, OPT_NO_TIMER },
		{ "every-allocs", required_argument, NULL, OPT_EVERY_ALLOCS },
		{ "every-bytes", required_argument, NULL, OPT_EVERY_BYTES },
		{ "free-bytes", required_argument, NULL, OPT_FREE_BYTES },
		{ "clock",	required_argument, NULL, OPT_CLOCK },
		{ "first-bytes", required_argument, NULL, OPT_FIRST_BYTES },
		{ "min-size",	required_argument, NULL, 'm' },
		{ "depth",	required_argument, NULL, OPT_DEPTH },
		{ "no-unwind",	no_argument,	   NULL, OPT_NO_UNWIND },
		{ "sample-mib",	required_argument, NULL, 's' },
		{ "match",	required_argument, NULL, OPT_MATCH },
		{ "exclude",	required_argument, NULL, OPT_EXCLUDE },
		{ "slots",	required_argument, NULL, OPT_SLOTS },
		{ "processes",	required_argument, NULL, OPT_PROCS },
		{ "codec",	required_argument, NULL, 'c' },
		{ "threshold",	required_argument, NULL, 't' },
		{ "zero",	required_argument, NULL, OPT_ZERO },
		{ "max-ratio",	required_argument, NULL, OPT_MAX_RATIO },
		{ "json",	no_argument,	   NULL, 'j' },
		{ "output",	required_argument, NULL, 'o' },
		{ "json-out",	required_argument, NULL, OPT_JSON_OUT },
		{ "profile-out", required_argument, NULL, 'p' },
		{ "uid",	required_argument, NULL, 'u' },
		{ "keep-dumps",	required_argument, NULL, 'k' },
		{ "labels",	required_argument, NULL, 'l' },
		{ "lib",	required_argument, NULL, OPT_LIB },
		{ "nice",	required_argument, NULL, OPT_NICE },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool clock_set = false, timed = false;
	uint64_t v;
	double d;
	int opt, i;

	o->points = 10;
	o->first = 1;
	o->timer = true;
	o->clock = PF_CLOCK_PROGRESS;
	o->first_bytes = PF_DEF_FIRST_BYTES;
	o->min_size = BPROF_DEF_MIN;
	o->depth = 8;
	o->unwind = true;
	o->sample_bytes = 16ULL << 20;
	o->codec = 0;
	o->threshold_ppm = BUDDY_HEUR_DEF_THRESHOLD_PPM;
	o->zero_ppm = 900000;
	o->max_ratio = 4;
	o->uid = getuid();
	o->slots = BPROF_DEF_SLOTS;
	o->procs = BPROF_DEF_PROCS;
	o->show_labels = 25;
	o->nice = 0;

	optind = 1;
	/* '+': stop at COMMAND, its options are its own. */
	while ((opt = getopt_long(argc, argv, "+n:i:m:s:c:t:jo:p:u:k:l:qh",
				  opts, NULL)) != -1) {
		const char *bad = NULL;	/* the range, for the message */

		switch (opt) {
		case 'n':
			if (buddyctl_parse_size(optarg, &v) || v > 100000)
				bad = "in 0..100000";
			else
				o->points = v;
			break;
		case 'i':
			if (parse_span(optarg, &d) || d <= 0)
				bad = "a time span above 0 (seconds, or 500ms, 1min 30s ...)";
			else
				o->interval = d;
			timed = true;
			break;
		case OPT_FIRST:
			if (parse_span(optarg, &d) || d <= 0)
				bad = "a time span above 0 (seconds, or 500ms, 1min 30s ...)";
			else
				o->first = d;
			timed = true;
			break;
		case OPT_AT:
			if (parse_at(o, optarg))
				bad = "a list of times from the start (seconds, or 500ms, 1min 30s ...)";
			timed = true;
			break;
		case OPT_CLOCK:
			if (!strcmp(optarg, "progress"))
				o->clock = PF_CLOCK_PROGRESS;
			else if (!strcmp(optarg, "wall"))
				o->clock = PF_CLOCK_WALL;
			else if (!strcmp(optarg, "cpu"))
				o->clock = PF_CLOCK_CPU;
			else
				bad = "a clock: progress, wall or cpu";
			clock_set = true;
			break;
		case OPT_FIRST_BYTES:
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "a size of at least 1 byte (K, M, G suffixes)";
			else
				o->first_bytes = v;
			break;
		case OPT_NO_TIMER:
			o->timer = false;
			break;
		case OPT_EVERY_ALLOCS:
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "a count of at least 1";
			else
				o->every_allocs = v;
			break;
		case OPT_EVERY_BYTES:
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "a size of at least 1 byte (K, M, G suffixes)";
			else
				o->every_bytes = v;
			break;
		case OPT_FREE_BYTES:
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "a size of at least 1 byte (K, M, G suffixes)";
			else
				o->free_bytes = v;
			break;
		case 'm':
			if (buddyctl_parse_size(optarg, &v) || !v)
				bad = "a size of at least 1 byte (K, M, G suffixes)";
			else
				o->min_size = v;
			break;
		case OPT_DEPTH:
			if (buddyctl_parse_size(optarg, &v) || !v || v > BPROF_FRAMES)
				bad = "in 1.." BPROF_FRAMES_STR;
			else
				o->depth = v;
			break;
		case OPT_NO_UNWIND:
			o->unwind = false;
			break;
		case 's':
			if (buddyctl_parse_size(optarg, &v) || v > (1ULL << 20))
				bad = "in 0..1048576 (MiB; 0: all)";
			else
				o->sample_bytes = v << 20;
			break;
		case OPT_MATCH:
			if (!*optarg || strlen(optarg) >= 64)
				bad = "an executable name of 1..63 bytes";
			else
				o->match = optarg;
			break;
		case OPT_EXCLUDE:
			o->exclude = xrealloc(o->exclude, (o->nexclude + 1) *
					      sizeof(char *));
			o->exclude[o->nexclude++] = optarg;
			break;
		case OPT_PROCS:
			if (buddyctl_parse_size(optarg, &v) || !v ||
			    v > BPROF_MAX_PROCS)
				bad = "in 1..1024";
			else
				o->procs = v;
			break;
		case OPT_SLOTS:
			if (buddyctl_parse_size(optarg, &v) || v < 64 || v > (1u << 24) ||
			    (v & (v - 1)))
				bad = "a power of two in 64..16777216";
			else
				o->slots = v;
			break;
		case 'c':
			for (i = 0; i < PF_NC; i++)
				if (!strcasecmp(optarg, pf_codecs[i]->name))
					break;
			if (i == PF_NC)
				bad = "a codec: bpc, zvc, bdi or fpc";
			else
				o->codec = i;
			break;
		case 't':
			if (parse_pct(optarg, &o->threshold_ppm))
				bad = "in 0..100 (percent)";
			break;
		case OPT_ZERO:
			if (parse_pct(optarg, &o->zero_ppm))
				bad = "in 0..100 (percent)";
			break;
		case OPT_MAX_RATIO:
			if (parse_double(optarg, &d) || (d && d < 1))
				bad = "0 (no cap) or a ratio of at least 1";
			else
				o->max_ratio = d;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_JSON_OUT:
			o->json_out = optarg;
			break;
		case 'p':
			o->profile_out = optarg;
			break;
		case 'u':
			if (buddyctl_parse_size(optarg, &v) || v >= 0xffffffffULL)
				bad = "a uid in 0..4294967294";
			else
				o->uid = v;
			break;
		case 'k':
			o->dumps = optarg;
			break;
		case 'l':
			if (buddyctl_parse_size(optarg, &v) || v > UINT_MAX)
				bad = "a number of rows (0: all)";
			else
				o->show_labels = v;
			break;
		case OPT_LIB:
			o->lib = optarg;
			break;
		case OPT_NICE:
			if (parse_int(optarg, -20, 19, &o->nice))
				bad = "in -20..19";
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			profile_usage(stdout);
			exit(0);
		default:
			/* getopt said what (with the "buddyctl: profile" prefix) */
			fputs("Try 'buddyctl help profile'.\n", stderr);
			return -1;
		}
		if (bad) {
			buddyctl_err("profile: %s: %s is not %s", opt_name(opts, opt),
				     optarg, bad);
			return -1;
		}
	}
	if (optind >= argc) {
		buddyctl_err("profile: no COMMAND given (buddyctl profile [OPTIONS] -- COMMAND [ARGS...])");
		return -1;
	}
	o->argv = argv + optind;
	/* A time given without a clock is wall-clock time (as before). */
	if (timed && !clock_set)
		o->clock = PF_CLOCK_WALL;
	if (timed && o->clock == PF_CLOCK_PROGRESS) {
		buddyctl_err("profile: --interval, --at and --first are times: they need --clock wall or cpu, not progress");
		return -1;
	}
	/* Fixed progress steps replace the timer unless one is asked for. */
	if ((o->every_allocs || o->every_bytes) && !o->interval && !o->nat)
		o->timer = false;
	if (o->nat)
		qsort(o->at, o->nat, sizeof(double), cmp_double);
	return 0;
}

/*
 * The module's profile table has its own commands (load-profiles,
 * show-profiles, clear-profiles): "buddyctl profile load" points there.
 * A program named so runs after "--".
 */
static const char *admin_hint(const char *s)
{
	if (!strcmp(s, "load") || !strcmp(s, "install"))
		return "load-profiles";
	if (!strcmp(s, "show") || !strcmp(s, "list") || !strcmp(s, "get"))
		return "show-profiles";
	if (!strcmp(s, "clear"))
		return "clear-profiles";
	return NULL;
}

/*
 * Every output before the program runs, so that a run is never lost to a
 * path that cannot be written: -o, --json-out and -p are created when
 * missing (never truncated; the reports replace them at the end), -k is
 * created.  Returns 0, or EXIT_USAGE with "buddyctl: profile: PATH: why".
 */
static int check_outputs(const struct pf_opts *o)
{
	const char *const paths[] = { o->out, o->json_out, o->profile_out };
	static const char *const opt[] = { "-o", "--json-out", "-p" };
	struct stat st;
	size_t i, j;
	int r;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i])
			continue;
		for (j = 0; j < i; j++) {
			if (paths[j] && !strcmp(paths[i], paths[j])) {
				buddyctl_err("profile: %s: given to both %s and %s",
					     paths[i], opt[j], opt[i]);
				return EXIT_USAGE;
			}
		}
		r = buddy_replace_check(paths[i]);
		if (r) {
			buddyctl_err("profile: %s: %s", paths[i], strerror(-r));
			return EXIT_USAGE;
		}
	}
	if (o->dumps) {
		r = pf_mkdir_p(o->dumps) ? errno :
		    stat(o->dumps, &st) ? errno :
		    !S_ISDIR(st.st_mode) ? ENOTDIR :
		    access(o->dumps, W_OK | X_OK) ? errno : 0;
		if (r) {
			buddyctl_err("profile: %s: %s", o->dumps, strerror(r));
			return EXIT_USAGE;
		}
	}
	return 0;
}

int cmd_profile(int argc, char **argv)
{
	struct pf_opts o = { 0 };
	struct pf_run r = { .o = &o };
	char *lib;
	int ret;

	if (argc > 1 && admin_hint(argv[1])) {
		buddyctl_err("profile %s: the module's profile table is 'buddyctl %s'; to profile a program named '%s': buddyctl profile -- %s",
			     argv[1], admin_hint(argv[1]), argv[1], argv[1]);
		return EXIT_USAGE;
	}
	if (parse_opts(&o, argc, argv))
		return EXIT_USAGE;
	ret = check_outputs(&o);
	if (ret)
		return ret;
	lib = pf_find_lib(&o);
	if (!lib) {
		buddyctl_err("profile: libbuddyprof.so not found (build it with make, or give --lib PATH)");
		return 1;
	}
	if (pf_run_program(&r, lib)) {
		free(lib);
		return 1;
	}
	pf_msg(&r, "%s exited (status %d) after %.2f s; %u snapshots taken",
	       o.argv[0], pf_exit_code(&r), r.t_end - r.t_start, r.nsnaps);

	{
		char why[512];

		if (pf_empty_reason(&r, why, sizeof(why)))
			buddyctl_err("profile: empty report: %s", why);
		else if (r.final.nr_not_followed)
			pf_msg(&r, "%u process%s not matching --match %s %s not followed",
			       r.final.nr_not_followed,
			       r.final.nr_not_followed == 1 ? "" : "es",
			       o.match ? o.match : "",
			       r.final.nr_not_followed == 1 ? "was" : "were");
		if (r.final.nr_no_slot)
			buddyctl_err("profile: %u process%s not followed: no process slot left (--processes %u; the first: pid %d, %.63s)",
				     r.final.nr_no_slot,
				     r.final.nr_no_slot == 1 ? " was" : "es were",
				     r.final.nprocs, (int)r.final.no_slot_pid,
				     r.final.no_slot);
	}
	ret = pf_report(&r);
	free(lib);
	if (ret)
		return 1;
	return pf_exit_code(&r);
}
