// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl profile - what Buddy Compression would give a real program.
 *
 *   buddyctl profile [OPTIONS] -- COMMAND [ARGS...]
 *
 * The command line only: its options (the ones `buddyctl run` shares are
 * in tools/profile/engine/options.c), outputs checked before the run, then
 * the engine (tools/profile/engine/profiler.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buddyctl.h"
#include "tools/common/replace_file.h"
#include "tools/policy/heuristic.h"
#include "tools/profile/engine/launch.h"
#include "tools/profile/engine/profiler.h"

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
"  -N, --points N         snapshots kept (default 10)\n"
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
"      --max-stopped PCT  keep the program stopped at most PCT%% of its run:\n"
"                         an automatic snapshot due when it has been is\n"
"                         skipped (default 10 for the adaptive schedules,\n"
"                         none for fixed ones; 0: no limit, the points\n"
"                         then the same on every run)\n"
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
"  -T, --threshold PCT    Buddy Threshold (default 30)\n"
"      --zero PCT         mostly-zero share for 16x (default 90)\n"
"      --max-ratio R      overall ratio cap of the carve-out (default 4; 0 off)\n"
"CUDA (the device memory instead of the heap):\n"
"      --cuda[=torch]     a PyTorch program, through python/buddy/cuda's\n"
"                         hook: snapshots at the start of backward passes\n"
"      --cuda=driver      any CUDA program, through libbuddycudaprof.so, an\n"
"                         interposer of the driver API's allocation calls:\n"
"                         snapshots on the adaptive wall-clock timer (--first,\n"
"                         --no-timer, --points) and at buddy_cuda_snapshot()\n"
"      --cuda-records DIR keep the record files in DIR (without --cuda:\n"
"                         report DIR's records, no COMMAND)\n"
"      --cuda-unit UNIT   block (default) or segment\n"
"      --every-backward K --cuda=torch: a snapshot every K backward passes\n"
"      --codecs LIST      the codecs sized (default bpc,zvc,bdi,fpc)\n"
"Output:\n"
"  -j, --json             the report as JSON\n"
"  -o, --output FILE      the report to FILE instead of stdout\n"
"      --json-out FILE    also the JSON report, to FILE (-: stdout)\n"
"  -p, --profile-out FILE a profile file (buddyd's state-file format) keyed\n"
"                         by label, for AUTO allocations\n"
"  -U, --uid UID          uid of its profiles (default: yours)\n"
"  -k, --keep-dumps DIR   keep the raw snapshots: DIR/snap-NN/SEQ.bin per\n"
"                         allocation, DIR/index.tsv; for buddyctl analyze\n"
"      --labels N         label rows in the table (default 25; 0: all)\n"
"      --lib PATH         the interposer (default: libbuddyprof.so next to\n"
"                         buddyctl, or $BUDDYPROF_LIB)\n"
"      --nice N           niceness of buddyctl itself (default 0)\n"
"      --orphan ACTION    when buddyctl dies before COMMAND (kill -9, the OOM\n"
"                         killer): continue (default: COMMAND goes on, never\n"
"                         left stopped) or kill its processes\n"
"  -q, --quiet            no progress messages\n"
"  -h, --help             this text\n"
"\n"
"The program's own output is left alone; the report follows when it exits.\n"
"When the JSON report goes to stdout (-j without -o, or --json-out -), stdout\n"
"carries it alone: COMMAND's stdout and a text report go to stderr.\n"
"Exit status: the program's (128+N if killed by signal N); 127 or 126 when\n"
"COMMAND is not found or cannot be executed; 1 runtime error and 2 usage\n"
"error of buddyctl itself before the program ran.\n",
		BPROF_FRAMES, BPROF_MAX_PROCS, BPROF_DEF_PROCS, BPROF_DEF_SLOTS);
}

/* ---- options --------------------------------------------------------------- */

static bool timed, clock_set;	/* a time was given; --clock was */

#define PO(o)		((struct prof_opts *)(o))
#define SPAN		"a time span above 0 (seconds, or 500ms, 1min 30s ...)"
#define SIZE1		"a size of at least 1 byte (K, M, G suffixes)"
#define PCT		"in 0..100 (percent)"

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		buddyctl_err("profile: out of memory");
		exit(1);
	}
	return q;
}

static int set_points(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v > 100000)
		return -1;
	PO(o)->points = v;
	return 0;
}

static int set_interval(void *o, const char *arg)
{
	timed = true;
	return parse_span(arg, &PO(o)->interval) || PO(o)->interval <= 0 ?
	       -1 : 0;
}

static int set_first(void *o, const char *arg)
{
	double d;

	timed = true;
	if (parse_span(arg, &d) || d <= 0)
		return -1;
	PO(o)->first = d;
	return 0;
}

static int set_at(void *o, const char *list)
{
	struct prof_opts *po = o;
	char *dup = strdup(list), *save = NULL, *tok;
	int ret = 0;

	timed = true;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double t;

		if (parse_span(tok, &t)) {
			ret = -1;
			break;
		}
		po->at = xrealloc(po->at, (po->nat + 1) * sizeof(double));
		po->at[po->nat++] = t;
	}
	free(dup);
	if (!ret && !po->nat)
		ret = -1;
	return ret;
}

static int set_clock(void *o, const char *arg)
{
	clock_set = true;
	if (!strcmp(arg, "progress"))
		PO(o)->clock = PROF_CLOCK_PROGRESS;
	else if (!strcmp(arg, "wall"))
		PO(o)->clock = PROF_CLOCK_WALL;
	else if (!strcmp(arg, "cpu"))
		PO(o)->clock = PROF_CLOCK_CPU;
	else
		return -1;
	return 0;
}

/* A size or count of at least 1 into @v. */
static int size1(const char *arg, uint64_t *v)
{
	uint64_t x;

	if (parse_size(arg, &x) || !x)
		return -1;
	*v = x;
	return 0;
}

static int set_first_bytes(void *o, const char *arg)
{
	return size1(arg, &PO(o)->first_bytes);
}

static int set_no_timer(void *o, const char *arg)
{
	PO(o)->timer = false;
	return 0;
}

static int set_every_allocs(void *o, const char *arg)
{
	return size1(arg, &PO(o)->every_allocs);
}

static int set_every_bytes(void *o, const char *arg)
{
	return size1(arg, &PO(o)->every_bytes);
}

static int set_free_bytes(void *o, const char *arg)
{
	return size1(arg, &PO(o)->free_bytes);
}

static int set_sample_mib(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v > (1ULL << 20))
		return -1;
	PO(o)->sample_bytes = v << 20;
	return 0;
}

static int set_match(void *o, const char *arg)
{
	if (!*arg || strlen(arg) >= 64)
		return -1;
	PO(o)->match = arg;
	return 0;
}

static int set_exclude(void *o, const char *arg)
{
	struct prof_opts *po = o;

	po->exclude = xrealloc(po->exclude, (po->nexclude + 1) * sizeof(char *));
	po->exclude[po->nexclude++] = arg;
	return 0;
}

static int set_processes(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || !v || v > BPROF_MAX_PROCS)
		return -1;
	PO(o)->procs = v;
	return 0;
}

static int set_slots(void *o, const char *arg)
{
	uint64_t v;

	if (parse_size(arg, &v) || v < 64 || v > (1u << 24) || (v & (v - 1)))
		return -1;
	PO(o)->slots = v;
	return 0;
}

static int set_codec(void *o, const char *arg)
{
	for (unsigned int i = 0; i < PROF_NC; i++) {
		if (!strcasecmp(arg, prof_codecs[i]->name)) {
			PO(o)->codec = i;
			return 0;
		}
	}
	return -1;
}

static int set_threshold(void *o, const char *arg)
{
	return parse_pct(arg, &PO(o)->threshold_ppm);
}

static int set_zero(void *o, const char *arg)
{
	return parse_pct(arg, &PO(o)->zero_ppm);
}

static int set_max_ratio(void *o, const char *arg)
{
	double d;

	if (parse_double(arg, &d) || (d && d < 1))
		return -1;
	PO(o)->max_ratio = d;
	return 0;
}

static int set_profile_out(void *o, const char *arg)
{
	PO(o)->profile_out = arg;
	return 0;
}

static int set_dumps(void *o, const char *arg)
{
	PO(o)->dumps = arg;
	return 0;
}

/* --cuda, --cuda=torch: the PyTorch hook; --cuda=driver: any CUDA program. */
static int set_cuda(void *o, const char *arg)
{
	if (arg && strcmp(arg, "torch") && strcmp(arg, "driver"))
		return -1;
	PO(o)->cuda = true;
	PO(o)->cuda_driver = arg && !strcmp(arg, "driver");
	return 0;
}

static int set_cuda_records(void *o, const char *arg)
{
	if (!*arg)
		return -1;
	PO(o)->cuda_records = arg;
	return 0;
}

static int set_cuda_unit(void *o, const char *arg)
{
	if (!strcmp(arg, "block"))
		PO(o)->cuda_segments = false;
	else if (!strcmp(arg, "segment"))
		PO(o)->cuda_segments = true;
	else
		return -1;
	return 0;
}

static int set_every_backward(void *o, const char *arg)
{
	uint64_t v;

	if (size1(arg, &v) || v > 1000000)
		return -1;
	PO(o)->cuda_every = v;
	return 0;
}

static int set_codecs(void *o, const char *arg)
{
	PO(o)->cuda_codecs = arg;
	return 0;
}

static int set_max_stopped(void *o, const char *arg)
{
	uint32_t ppm;

	if (parse_pct(arg, &ppm))
		return -1;
	PO(o)->max_stopped = ppm / 1e6;
	return 0;
}

static int set_orphan(void *o, const char *arg)
{
	if (!strcmp(arg, "continue"))
		PO(o)->orphan_kill = false;
	else if (!strcmp(arg, "kill"))
		PO(o)->orphan_kill = true;
	else
		return -1;
	return 0;
}

static int set_nice(void *o, const char *arg)
{
	return parse_int(arg, -20, 19, &PO(o)->nice);
}

enum {
	OPT_FIRST = 300, OPT_AT, OPT_NO_TIMER, OPT_MATCH, OPT_SLOTS, OPT_PROCS,
	OPT_ZERO, OPT_MAX_RATIO, OPT_NICE, OPT_EXCLUDE, OPT_EVERY_ALLOCS,
	OPT_EVERY_BYTES, OPT_FREE_BYTES, OPT_CLOCK, OPT_FIRST_BYTES,
	OPT_ORPHAN, OPT_MAX_STOPPED, OPT_CUDA, OPT_CUDA_RECORDS, OPT_CUDA_UNIT,
	OPT_EVERY_BACKWARD, OPT_CODECS,
};

static const struct eng_option profile_options[] = {
	{ "points", 'N', true, set_points, "in 0..100000" },
	{ "interval", 'i', true, set_interval, SPAN },
	{ "first", OPT_FIRST, true, set_first, SPAN },
	{ "at", OPT_AT, true, set_at,
	  "a list of times from the start (seconds, or 500ms, 1min 30s ...)" },
	{ "points-at", OPT_AT, true, set_at, NULL },
	{ "no-timer", OPT_NO_TIMER, false, set_no_timer, NULL },
	{ "every-allocs", OPT_EVERY_ALLOCS, true, set_every_allocs,
	  "a count of at least 1" },
	{ "every-bytes", OPT_EVERY_BYTES, true, set_every_bytes, SIZE1 },
	{ "free-bytes", OPT_FREE_BYTES, true, set_free_bytes, SIZE1 },
	{ "clock", OPT_CLOCK, true, set_clock, "a clock: progress, wall or cpu" },
	{ "first-bytes", OPT_FIRST_BYTES, true, set_first_bytes, SIZE1 },
	{ "sample-mib", 's', true, set_sample_mib, "in 0..1048576 (MiB; 0: all)" },
	{ "match", OPT_MATCH, true, set_match, "an executable name of 1..63 bytes" },
	{ "exclude", OPT_EXCLUDE, true, set_exclude, NULL },
	{ "slots", OPT_SLOTS, true, set_slots, "a power of two in 64..16777216" },
	{ "processes", OPT_PROCS, true, set_processes, "in 1..1024" },
	{ "codec", 'c', true, set_codec, "a codec: bpc, zvc, bdi or fpc" },
	{ "threshold", 'T', true, set_threshold, PCT },
	{ "zero", OPT_ZERO, true, set_zero, PCT },
	{ "max-ratio", OPT_MAX_RATIO, true, set_max_ratio,
	  "0 (no cap) or a ratio of at least 1" },
	{ "profile-out", 'p', true, set_profile_out, NULL },
	{ "keep-dumps", 'k', true, set_dumps, NULL },
	{ "nice", OPT_NICE, true, set_nice, "in -20..19" },
	{ "orphan", OPT_ORPHAN, true, set_orphan, "continue or kill" },
	{ "max-stopped", OPT_MAX_STOPPED, true, set_max_stopped, PCT },
	{ "cuda", OPT_CUDA, ENG_ARG_OPTIONAL, set_cuda, "torch or driver" },
	{ "cuda-records", OPT_CUDA_RECORDS, true, set_cuda_records,
	  "a directory" },
	{ "cuda-unit", OPT_CUDA_UNIT, true, set_cuda_unit, "block or segment" },
	{ "every-backward", OPT_EVERY_BACKWARD, true, set_every_backward,
	  "in 1..1000000" },
	{ "codecs", OPT_CODECS, true, set_codecs, NULL },
	{ NULL }
};

/* --cuda-records DIR without --cuda reports records: no COMMAND. */
static bool records_only(const void *o)
{
	const struct prof_opts *po = o;

	return po->cuda_records && !po->cuda;
}

static const struct eng_command profile_cmd = {
	.command_optional = records_only,
	.name = "profile",
	.options = profile_options,
	.usage = profile_usage,
	.no_command = "no COMMAND given (buddyctl profile [OPTIONS] -- COMMAND [ARGS...])",
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The defaults, the command line, and what follows from both. */
static int parse_opts(struct prof_opts *o, int argc, char **argv)
{
	int ret;

	o->points = 10;
	o->max_stopped = -1;
	o->first = 1;
	o->timer = true;
	o->clock = PROF_CLOCK_PROGRESS;
	o->first_bytes = PROF_DEF_FIRST_BYTES;
	o->min_size = BPROF_DEF_MIN;
	o->depth = 8;
	o->unwind = true;
	o->sample_bytes = 16ULL << 20;
	o->threshold_ppm = BUDDY_HEUR_DEF_THRESHOLD_PPM;
	o->zero_ppm = 900000;
	o->max_ratio = 4;
	o->uid = getuid();
	o->slots = BPROF_DEF_SLOTS;
	o->procs = BPROF_DEF_PROCS;
	o->show_labels = 25;
	ret = eng_parse(&profile_cmd, o, argc, argv);
	if (ret >= 0)
		return ret;
	/* A time given without a clock is wall-clock time. */
	if (timed && !clock_set)
		o->clock = PROF_CLOCK_WALL;
	if (timed && o->clock == PROF_CLOCK_PROGRESS) {
		buddyctl_err("profile: --interval, --at and --first are times: they need --clock wall or cpu, not progress");
		return EXIT_USAGE;
	}
	/* Fixed progress steps replace the timer unless one is asked for. */
	if ((o->every_allocs || o->every_bytes) && !o->interval && !o->nat)
		o->timer = false;
	if (o->nat)
		qsort(o->at, o->nat, sizeof(double), cmp_double);
	return -1;
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
 * created.  Returns 0; EXIT_USAGE for one path given to two options; 1,
 * a runtime error, with "buddyctl: profile: OPTION PATH: why" for a path
 * that cannot be written.
 */
static int check_outputs(const struct prof_opts *o)
{
	const char *const paths[] = { o->out, o->json_out, o->profile_out };
	static const char *const opt[] = { "-o", "--json-out", "-p" };
	char failed[PATH_MAX + 16];
	struct stat st;
	size_t i, j;
	int r;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i] || (i == 1 && !strcmp(paths[i], "-")))
			continue;
		for (j = 0; j < i; j++) {
			if (paths[j] && !strcmp(paths[i], paths[j])) {
				buddyctl_err("profile: %s: given to both %s and %s",
					     paths[i], opt[j], opt[i]);
				return EXIT_USAGE;
			}
		}
		r = buddy_replace_check(paths[i], failed, sizeof(failed));
		if (r && strcmp(failed, paths[i]) &&
		    strstr(failed, ".tmpXXXXXX"))
			buddyctl_err("profile: %s %s: cannot make its temporary file %s (the report replaces it at the end): %s",
				     opt[i], paths[i], failed, strerror(-r));
		else if (r)
			buddyctl_err("profile: %s %s: %s", opt[i], failed,
				     strerror(-r));
		if (r)
			return 1;
	}
	if (o->dumps) {
		r = prof_mkdir_p(o->dumps) ? errno :
		    stat(o->dumps, &st) ? errno :
		    !S_ISDIR(st.st_mode) ? ENOTDIR :
		    access(o->dumps, W_OK | X_OK) ? errno : 0;
		if (r) {
			buddyctl_err("profile: -k %s: %s", o->dumps, strerror(r));
			return 1;
		}
	}
	return 0;
}

/*
 * --cuda: the hook measures, not the interposer; the interposer's options
 * and its schedule's mean nothing then.  0, or EXIT_USAGE naming the
 * first one given.
 */
static int check_cuda_opts(struct prof_opts *o)
{
	static char *none[] = { NULL };
	/* the driver interposer's timer: --first, --no-timer; its --lib */
	bool drv = o->cuda_driver;
	const char *bad = o->interval ? "--interval" : o->nat ? "--at" :
		timed && !drv ? "--first" : clock_set ? "--clock" :
		o->first_bytes != PROF_DEF_FIRST_BYTES ? "--first-bytes" :
		o->every_allocs ? "--every-allocs" :
		o->every_bytes ? "--every-bytes" :
		o->free_bytes ? "--free-bytes" :
		!o->timer && !drv ? "--no-timer" :
		o->min_size != BPROF_DEF_MIN ? "--min-size" :
		o->depth != 8 ? "--depth" : !o->unwind ? "--no-unwind" :
		o->sample_bytes != 16ULL << 20 ? "--sample-mib" :
		o->match ? "--match" : o->nexclude ? "--exclude" :
		o->slots != BPROF_DEF_SLOTS ? "--slots" :
		o->procs != BPROF_DEF_PROCS ? "--processes" :
		o->lib && !drv ? "--lib" : o->dumps ? "--keep-dumps" :
		o->max_stopped >= 0 ? "--max-stopped" :
		o->orphan_kill ? "--orphan" : NULL;

	if (!o->cuda && !o->cuda_records) {
		bad = o->cuda_segments ? "--cuda-unit" :
		      o->cuda_every ? "--every-backward" :
		      o->cuda_codecs ? "--codecs" : NULL;
		if (bad) {
			buddyctl_err("profile: %s: only with --cuda or --cuda-records", bad);
			return EXIT_USAGE;
		}
		return 0;
	}
	if (bad) {
		buddyctl_err("profile: %s: not with --cuda or --cuda-records (the hook takes the snapshots: --points, --every-backward, --codecs)",
			     bad);
		return EXIT_USAGE;
	}
	if (!o->cuda && o->argv && o->argv[0]) {
		buddyctl_err("profile: --cuda-records DIR without --cuda reports DIR's records: no COMMAND (%s); with --cuda, COMMAND's records go to DIR",
			     o->argv[0]);
		return EXIT_USAGE;
	}
	if (drv && o->cuda_every) {
		buddyctl_err("profile: --every-backward: only with --cuda=torch (the driver interposer snapshots on its timer: --first, --no-timer, --points)");
		return EXIT_USAGE;
	}
	if (!o->cuda && (o->cuda_every || o->cuda_codecs)) {
		buddyctl_err("profile: %s: only with --cuda (the records are made)",
			     o->cuda_every ? "--every-backward" : "--codecs");
		return EXIT_USAGE;
	}
	if (!o->argv)
		o->argv = none;
	return 0;
}

/* --cuda, --cuda-records: the hook's records, the same report. */
static int profile_cuda(struct prof_opts *o)
{
	struct prof_run r = { .o = o };
	char *what[] = { "--cuda-records", (char *)o->cuda_records, NULL };
	char why[512];
	int ret;

	if (o->cuda) {
		ret = prof_cuda_run(&r);
		if (ret == -2)
			return EXIT_USAGE;	/* no CUDA device: said */
		if (ret)
			return 1;
		prof_msg(&r, "%s exited (status %d) after %.2f s; %u snapshots in the records",
			 o->argv[0], prof_exit_code(&r), r.t_end - r.t_start,
			 r.nsnaps);
	} else {
		o->argv = what;
		if (prof_cuda_ingest(&r, o->cuda_records))
			return 1;
	}
	if (prof_empty_reason(&r, why, sizeof(why)))
		buddyctl_err("profile: empty report: %s", why);
	if (prof_report(&r))
		return 1;
	return prof_exit_code(&r);
}

int cmd_profile(int argc, char **argv)
{
	struct prof_opts o = { 0 };
	struct prof_run r = { .o = &o };
	char *lib;
	int ret;

	if (argc > 1 && admin_hint(argv[1])) {
		buddyctl_err("profile %s: the module's profile table is 'buddyctl %s'; to profile a program named '%s': buddyctl profile -- %s",
			     argv[1], admin_hint(argv[1]), argv[1], argv[1]);
		return EXIT_USAGE;
	}
	ret = parse_opts(&o, argc, argv);
	if (ret >= 0)
		return ret;
	ret = check_cuda_opts(&o);
	if (ret)
		return ret;
	ret = check_outputs(&o);
	if (ret)
		return ret;
	if (o.cuda || o.cuda_records)
		return profile_cuda(&o);
	/* a program that cannot start gets no empty report, just why */
	ret = eng_check_program("buddyctl: profile", o.argv[0]);
	if (ret)
		return ret;
	lib = prof_find_lib(o.lib);
	if (!lib) {
		buddyctl_err("profile: libbuddyprof.so not found (build it with make, or give --lib PATH)");
		return 1;
	}
	if (prof_run_program(&r, lib)) {
		free(lib);
		return 1;
	}
	{
		char why[512], st[64];

		prof_msg(&r, "%s ended (%s) after %.2f s; %u snapshots taken",
			 o.argv[0], eng_status_text(r.status, st, sizeof(st)),
			 r.t_end - r.t_start, r.nsnaps);

		if (prof_empty_reason(&r, why, sizeof(why)))
			buddyctl_err("profile: empty report: %s", why);
		else if (r.final.nr_not_followed)
			prof_msg(&r, "%u process%s not matching --match %s %s not followed",
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
	ret = prof_report(&r);
	free(lib);
	if (ret)
		return 1;
	return prof_exit_code(&r);
}
