/* SPDX-License-Identifier: GPL-2.0 */
/*
 * buddyprof.h - the profiler's engine, libbuddyprofile.a (tools/profile/):
 * run a program under the interposer libbuddyprof.so (interpose.c), take
 * snapshots of its tracked allocations, classify them with the codec core,
 * and report.  `buddyctl profile` (tools/buddyctl/profile.c) is a command
 * line around it.
 *
 *   prof_run.c     pf_run_program(): the region, the child, the snapshots
 *   prof_report.c  pf_report(): labels, decisions, the report, the profile
 *   prof_common.c  what both use; neither of the two depends on the other
 *   prof_exec.c    pr_run(): `buddyctl run`, the program in buddy memory
 *                  (interpose_run.c) and its per-label report
 *
 * Usage: fill a struct pf_opts, set run.o to it, pf_find_lib(),
 * pf_run_program(&run, lib), then pf_report(&run); pf_exit_code() is the
 * program's exit status as a shell gives it.
 *
 * Which processes are followed (one place: the interposer decides, with
 * the region's header, tools/profile/interposer/profshm.h):
 *   - every process of COMMAND's tree that loads libbuddyprof.so (COMMAND
 *     itself unless it is statically linked, its forked children and the
 *     programs they exec, however deep) is followed, each with a table of
 *     its own; with --match NAME only those whose executable's basename
 *     starts with NAME (several may), the others are not followed and are
 *     counted in nr_not_followed, the first one's name kept in
 *     not_followed, so that the report can name them;
 *   - a process's table is one of --processes N process slots (16 by
 *     default), claimed at its first tracked allocation (a process that
 *     never allocates that much, a shell, takes none); when none is left
 *     the process is not followed, counted in nr_no_slot, the first one
 *     named in no_slot, and the report says so;
 *   - a fork()ed child claims a slot of its own: its parent's slot is
 *     marked in a MADV_WIPEONFORK page, which reads as zero in the child,
 *     so it never writes into its parent's table; its table starts empty
 *     (what it inherited is its parent's).  Each fork counts in nr_forked;
 *   - an exec() keeps the process's slot and clears its table: the new
 *     program is followed from its start (nr_exec_reset), whatever its
 *     name;
 *   - a snapshot stops and reads every followed process that still runs;
 *     one that has exited keeps the data of the snapshots taken while it
 *     ran: those kept, and always its last one.  The adaptive schedule
 *     (prof_run.c: thin(), finish_pending()) drops whole snapshots, and a
 *     short-lived process may have been read only by dropped ones; so a
 *     snapshot dropped when it was the last to read a process (with live
 *     allocations) that has exited since (at the end: any process) stays
 *     kept for that process alone (pf_psnap.last, pf_snap_kept()): its
 *     raw sample is cut to that process's pieces at once, it no longer
 *     counts among the schedule's pending ones, and for every other
 *     process it is dropped, so the main process keeps its N evenly spaced
 *     snapshots as before.  The memory this holds is at most one
 *     snapshot's sample of each exited process;
 *   - the report has one table per process: the text a section each, the
 *     JSON an entry each of "processes" (in the order they took their
 *     slots); the top level (text and JSON) is the main process's
 *     (pf_main_proc(): the first started of those with data, COMMAND
 *     itself if it has some): with one process, the report is what it
 *     always was.  The profile file (-p) has the labels of all
 *     processes; a label seen in several is one decision over all its
 *     allocations, as allocations of one label in one process are pooled.
 * `buddyctl run` (prof_exec.c) follows every process too, by its own
 * rules (tools/profile/interposer/runshm.h).
 * An empty report names which of these happened (pf_empty_reason()).
 */
#ifndef BUDDYPROF_H
#define BUDDYPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/codec.h"
#include "tools/profile/interposer/profshm.h"

/* Codecs every snapshot is classified with (the best-codec figures). */
#define PF_NC		4
extern const struct buddy_codec *const pf_codecs[PF_NC];

/*
 * The clock of the automatic schedule (pf_opts.clock).  PF_CLOCK_PROGRESS,
 * the default, counts the program's own progress: the tracked bytes it has
 * allocated, as the interposer counts them (profshm.h), so that the same
 * program and input are snapshotted at the same points however loaded the
 * machine is (over all followed processes).  PF_CLOCK_CPU counts the
 * first followed process's CPU time (all its threads: meaningful for
 * single-threaded programs only, OpenMP threads spin), and PF_CLOCK_WALL
 * seconds since the start.
 */
enum pf_clock {
	PF_CLOCK_PROGRESS = 0,
	PF_CLOCK_WALL,
	PF_CLOCK_CPU,
};

/* Adaptive progress schedule: first step, in tracked bytes allocated. */
#define PF_DEF_FIRST_BYTES	(16ULL << 20)

struct pf_opts {
	unsigned int points;		/* snapshots kept (adaptive, fixed) */
	double interval;		/* > 0: fixed interval, in @clock's s */
	double first;			/* adaptive timer: first interval */
	double *at;			/* --at times, in @clock's seconds */
	unsigned int nat;
	bool timer;			/* false: only on request/every_* */
	enum pf_clock clock;		/* of the automatic schedule */
	uint64_t first_bytes;		/* adaptive progress: first step
					 * (0: PF_DEF_FIRST_BYTES) */
	uint64_t every_allocs;		/* progress: every N tracked allocs */
	uint64_t every_bytes;		/* progress: every N bytes allocated */
	uint64_t free_bytes;		/* snapshot before freeing >= N bytes
					 * (0: off; kept, as requested ones) */
	uint64_t min_size;
	unsigned int depth;
	bool unwind;
	uint64_t sample_bytes;		/* per snapshot; 0 = everything */
	unsigned int codec;		/* index into pf_codecs */
	uint32_t threshold_ppm;
	uint32_t zero_ppm;
	double max_ratio;		/* 0 = no overall cap */
	bool json;
	const char *out;
	const char *json_out;
	const char *profile_out;
	uint32_t uid;
	const char *dumps;
	const char *match;
	const char **exclude;		/* module name substrings */
	unsigned int nexclude;
	const char *lib;
	uint32_t slots;			/* table slots per process */
	uint32_t procs;			/* process slots (0: BPROF_DEF_PROCS) */
	unsigned int show_labels;	/* rows of the label table */
	int nice;
	bool quiet;
	char **argv;			/* the program */
};

/* One module (mapped file) frames resolve into. */
struct pf_module {
	char *path;
	const char *base;		/* basename within @path */
	void *elf;			/* symbol cache, profile_report.c */
};

struct pf_frame {
	int mod;			/* index into modules, -1: anonymous */
	uint64_t off;			/* file offset, or the address */
};

struct pf_label {
	char name[BUDDY_LABEL_LEN];
	uint64_t key;
	uint64_t size;
	unsigned int kind;
	unsigned int nframes;
	struct pf_frame frames[BPROF_FRAMES];
	/* filled by the report */
	unsigned int nallocs;
	unsigned int target;
	unsigned int codec;		/* index into pf_codecs */
	double buddy_frac;
	double buddy_frac_err;		/* its sampling error at the threshold
					 * (~95%; 0: read whole) */
	uint64_t bytes_total;		/* sum over snapshots */
	bool excluded;			/* a frame's module matches --exclude */
};

/* One allocation seen in one snapshot. */
struct pf_obs {
	unsigned int snap;		/* internal snapshot id */
	uint64_t hist[PF_NC][BUDDY_CODE_NR];	/* scaled entry counts */
	uint64_t fig3[PF_NC];		/* scaled Fig. 3 bytes */
	uint64_t sampled;		/* entries actually classified */
	uint64_t unread;		/* entries not readable */
	uint64_t blocks;		/* 4 KiB blocks readable ... */
	uint64_t blocks_read;		/* ... of which read (sampling) */
};

struct pf_alloc {
	int proc;			/* index into run->procs */
	uint64_t seq;
	uint64_t addr;
	uint64_t size;
	unsigned int kind;
	int label;
	struct pf_obs *obs;
	unsigned int nobs, capobs;
};

/* One followed process in one snapshot. */
struct pf_psnap {
	bool read;			/* it was live and stopped: read */
	bool last;			/* thinned out, but the last snapshot
					 * that read it: kept for it alone */
	unsigned int not_stopped;	/* its threads not stopped in time */
	uint64_t allocs, bytes, readable, sampled, stale, unread;
	uint64_t stride;		/* the largest of its allocations' */
};

/* One followed process: a process slot of the region (the same index). */
struct pf_proc {
	pid_t pid;			/* 0: the slot was never claimed */
	unsigned long long start;	/* its start time (/proc/PID/stat) */
	bool gone;			/* a snapshot found it exited: it is
					 * not read any more */
	unsigned int last_read;		/* id + 1 of the last snapshot that
					 * read it, 0: none */
	struct bprof_proc final;	/* its counters at the end */
};

struct pf_snap {
	unsigned int id;
	double t;			/* seconds since start */
	double stopped_ms;		/* the program was stopped this long */
	double classify_ms;
	uint64_t allocs;		/* live tracked allocations */
	uint64_t bytes;			/* their bytes */
	uint64_t readable;		/* bytes mapped and readable */
	uint64_t sampled;		/* bytes read and classified */
	uint64_t stride;		/* 1 of @stride 4 KiB blocks read, at
					 * most (each allocation its own) */
	uint64_t stale;			/* entries not mapped any more */
	uint64_t unread;		/* bytes that could not be read */
	unsigned int not_stopped;	/* threads not stopped in time */
	bool requested;			/* by signal or the program */
	bool dropped;			/* thinned out (adaptive schedule);
					 * still kept for the processes whose
					 * pp[].last is set */
	struct pf_psnap *pp;		/* per process (run->procs index) */
	unsigned int npp;
};

struct pf_run {
	struct pf_opts *o;
	struct bprof_hdr *hdr;
	pid_t child;
	struct pf_proc *procs;		/* by process slot */
	unsigned int nprocs;
	double t_start, t_end;
	int status;			/* wait status of the child */
	double cpu_s;			/* its user + system time */
	long maxrss_kib;
	bool exited;

	struct pf_snap *snaps;
	unsigned int nsnaps, capsnaps;
	struct pf_alloc *allocs;
	size_t nallocs, capallocs;
	size_t *seq_idx;		/* hash: seq -> allocs index + 1 */
	size_t seq_cap;
	struct pf_label *labels;
	size_t nlabels, caplabels;
	struct pf_module *mods;
	size_t nmods, capmods;

	/* interposer counters at the end */
	struct bprof_hdr final;
};

double pf_now(void);
/* "buddyctl: profile: <msg>" on stderr, unless --quiet (pf_msg). */
void pf_msg(struct pf_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "buddyctl: profile: <msg>" on stderr, always (errors). */
void pf_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
int pf_mkdir_p(const char *dir);

/*
 * pf_find_lib() - libbuddyprof.so: --lib, $BUDDYPROF_LIB, next to the
 * running executable, or ../lib/buddy/ from it.  Malloc'd, or NULL.
 */
char *pf_find_lib(const struct pf_opts *o);
/*
 * pf_run_program() - run r->o->argv with @lib preloaded until it exits,
 * taking the snapshots r->o asks for; r->final holds the interposer's
 * counters at the end.  0, or -1 after a message (nothing was run when
 * the region, the signalfd or fork failed).
 */
int pf_run_program(struct pf_run *r, const char *lib);
/* pf_exit_code() - the program's status as a shell gives it (128 + sig). */
int pf_exit_code(const struct pf_run *r);
/* pf_report() - the text, JSON, profile and dump index outputs; 0 or -1. */
int pf_report(struct pf_run *r);
/*
 * pf_empty_reason() - why nothing was tracked, and what to do, in @buf:
 * the program never loaded the interposer (static), no process matched
 * --match, the processes followed allocated nothing but others that
 * --match left out were started, or nothing large was allocated.  NULL
 * when something was.
 */
const char *pf_empty_reason(const struct pf_run *r, char *buf, size_t len);

/*
 * pf_snap_kept() - whether snapshot @s is kept for process @proc: not
 * thinned out, or the last that read @proc (pf_psnap.last); for -1, kept
 * for any process.
 */
bool pf_snap_kept(const struct pf_run *r, unsigned int s, int proc);
/* pf_nr_alloc() - tracked allocations of process @proc (-1: of all). */
uint64_t pf_nr_alloc(const struct pf_run *r, int proc);
/*
 * pf_main_proc() - the main process (its figures are the report's top
 * level): of the followed processes with an allocation in a kept
 * snapshot, the one that started first (COMMAND itself when it has one;
 * a parent before its children); else the first to take a process slot;
 * -1 when none had a table.
 */
int pf_main_proc(const struct pf_run *r);

/* ---- buddyctl run (prof_exec.c) ------------------------------------------- */

/* Options of `buddyctl run` (tools/buddyctl/run.c). */
struct pr_opts {
	uint64_t min_size;		/* buddy memory from this size */
	unsigned int depth;		/* frames per label (as profile) */
	bool unwind;
	unsigned int target;		/* BUDDY_TARGET_*, AUTO by default */
	unsigned int codec;		/* BUDDY_CODEC_* */
	const char *profile_file;	/* -p: targets per label */
	uint32_t uid;			/* whose profiles of that file */
	const char *device;		/* buddy_open() path, NULL: default */
	int cpunode;			/* --cpunodebind, -1: none */
	double base_time;		/* seconds for the sweep, 0: this run */
	uint64_t um_page;		/* UM baseline's migration page */
	const char *out;		/* the report, NULL: stdout */
	const char *json_out;
	unsigned int show_labels;	/* rows, 0: all */
	uint32_t nrecs;			/* records in the region */
	bool quiet;
	char **argv;
};

/*
 * pr_run() - run o->argv with @lib preloaded in run mode, wait for it and
 * write the report.  Returns the exit code buddyctl run should give: the
 * program's (128 + N if killed by signal N), 1 when buddyctl failed before
 * it ran or could not write the report.
 */
int pr_run(struct pr_opts *o, const char *lib);

#endif /* BUDDYPROF_H */
