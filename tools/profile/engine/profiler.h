/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profiler.h - the engines of `buddyctl profile` and `buddyctl run`,
 * libbuddyprofile.a, which tools/buddyctl/profile.c and run.c drive.
 *
 * profile: fill a struct prof_opts (eng_parse(), options.h), set
 * prof_run.o to it, prof_find_lib(), prof_run_program(&run, lib), then
 * prof_report(&run); prof_exit_code() is the program's exit status as a
 * shell gives it.  How the program is run, which of its processes are
 * followed, when snapshots are taken and what the report says:
 * Documentation/profiler.rst.
 *
 * run: fill a struct run_opts, then run_program().
 */
#ifndef BUDDY_PROFILER_H
#define BUDDY_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/codec.h"
#include "options.h"
#include "tools/profile/interposer/profile_shm.h"

/* Codecs every snapshot is classified with (the best-codec figures). */
#define PROF_NC		4
extern const struct buddy_codec *const prof_codecs[PROF_NC];

/*
 * The clock of the automatic schedule (prof_opts.clock).  PROF_CLOCK_PROGRESS,
 * the default, counts the program's own progress: the tracked bytes it has
 * allocated, as the interposer counts them (profile_shm.h), so that the same
 * program and input are snapshotted at the same points however loaded the
 * machine is (over all followed processes).  PROF_CLOCK_CPU counts the
 * first followed process's CPU time (all its threads: meaningful for
 * single-threaded programs only, OpenMP threads spin), and PROF_CLOCK_WALL
 * seconds since the start.
 */
enum prof_clock {
	PROF_CLOCK_PROGRESS = 0,
	PROF_CLOCK_WALL,
	PROF_CLOCK_CPU,
};

/* Adaptive progress schedule: first step, in tracked bytes allocated. */
#define PROF_DEF_FIRST_BYTES	(16ULL << 20)
/* The default schedule's CPU-time timer: its first interval, seconds */
#define PROF_DEF_CPU_FIRST	0.25

struct prof_opts {
	ENGINE_OPTS(common);
	unsigned int points;		/* snapshots kept (adaptive, fixed) */
	double interval;		/* > 0: fixed interval, in @clock's s */
	double first;			/* adaptive timer: first interval */
	double *at;			/* --at times, in @clock's seconds */
	unsigned int nat;
	bool timer;			/* false: only on request/every_* */
	enum prof_clock clock;		/* of the automatic schedule */
	uint64_t first_bytes;		/* adaptive progress: first step
					 * (0: PROF_DEF_FIRST_BYTES) */
	uint64_t every_allocs;		/* progress: every N tracked allocs */
	uint64_t every_bytes;		/* progress: every N bytes allocated */
	uint64_t free_bytes;		/* snapshot before freeing >= N bytes
					 * (0: off; kept, as requested ones) */
	uint64_t sample_bytes;		/* per snapshot; 0 = everything */
	unsigned int codec;		/* index into prof_codecs */
	uint32_t threshold_ppm;
	uint32_t zero_ppm;
	double max_ratio;		/* 0 = no overall cap */
	const char *profile_out;
	const char *dumps;
	const char *match;
	const char **exclude;		/* module name substrings */
	unsigned int nexclude;
	uint32_t slots;			/* table slots per process */
	uint32_t procs;			/* process slots (0: BPROF_DEF_PROCS) */
	int nice;
	bool orphan_kill;		/* buddyctl dies: kill the program
					 * (default: it goes on) */
	/* --cuda (profile_cuda.c): the hook's records instead of the
	 * interposer's tables */
	bool cuda;			/* run COMMAND under the hook */
	bool cuda_driver;		/* --cuda=driver: the driver interposer */
	const char *cuda_records;	/* the records' directory */
	bool cuda_segments;		/* unit: segments, not blocks */
	unsigned int cuda_every;	/* a snapshot every K backward passes */
	const char *cuda_codecs;	/* the hook's --codecs */
	double max_stopped;		/* share of the run the program may be
					 * stopped; < 0: PROF_DEF_MAX_STOPPED
					 * for the adaptive schedules, none
					 * for fixed ones; 0: none */
};

/* The adaptive schedules keep the program stopped this share of its run. */
#define PROF_DEF_MAX_STOPPED	0.10

/*
 * The share is of the run so far, counted as this long at least: a
 * program of a fraction of a second may be stopped that share of a
 * second, enough for the snapshots that see its data once it has made
 * them (its first is taken at its start), at most a tenth of a second
 * more than its share with the default.
 */
#define PROF_STOP_MIN_RUN_S	1.0

/* One module (mapped file) frames resolve into. */
struct prof_module {
	char *path;
	const char *base;		/* basename within @path */
	void *elf;			/* symbol cache, profile_report.c */
};

struct prof_frame {
	int mod;			/* index into modules, -1: anonymous */
	uint64_t off;			/* file offset, or the address */
};

struct prof_label {
	char name[BUDDY_LABEL_LEN];
	uint64_t key;
	uint64_t size;
	unsigned int kind;
	unsigned int nframes;
	struct prof_frame frames[BPROF_FRAMES];
	char *site;			/* the Python site recorded, or
					 * without frames --cuda's site:
					 * "file.py:LINE function" */
	/* filled by the report */
	unsigned int nallocs;
	unsigned int target;
	unsigned int codec;		/* index into prof_codecs */
	double buddy_frac;
	double buddy_frac_err;		/* its sampling error at the threshold
					 * (~95%; 0: read whole) */
	uint64_t bytes_total;		/* sum over snapshots */
	bool excluded;			/* a frame's module matches --exclude */
};

/* One allocation seen in one snapshot. */
struct prof_obs {
	unsigned int snap;		/* internal snapshot id */
	uint64_t hist[PROF_NC][BUDDY_CODE_NR];	/* scaled entry counts */
	uint64_t fig3[PROF_NC];		/* scaled Fig. 3 bytes */
	uint64_t sampled;		/* entries actually classified */
	uint64_t unread;		/* entries not readable */
	uint64_t blocks;		/* 4 KiB blocks readable ... */
	uint64_t blocks_read;		/* ... of which read (sampling) */
};

struct prof_alloc {
	int proc;			/* index into run->procs */
	uint64_t seq;
	uint64_t addr;
	uint64_t size;
	unsigned int kind;
	int label;
	struct prof_obs *obs;
	unsigned int nobs, capobs;
};

/* One followed process in one snapshot. */
struct prof_psnap {
	bool read;			/* it was live and stopped: read */
	bool last;			/* thinned out, but the last snapshot
					 * that read it: kept for it alone */
	unsigned int not_stopped;	/* its threads not stopped in time */
	uint64_t allocs, bytes, readable, sampled, stale, unread;
	uint64_t stride;		/* the largest of its allocations' */
};

/* One followed process: a process slot of the region (the same index). */
struct prof_proc {
	pid_t pid;			/* 0: the slot was never claimed */
	unsigned long long start;	/* its start time (/proc/PID/stat) */
	bool gone;			/* a snapshot found it exited: it is
					 * not read any more */
	unsigned int last_read;		/* id + 1 of the last snapshot that
					 * read it, 0: none */
	struct bprof_proc final;	/* its counters at the end */
};

struct prof_snap {
	unsigned int id;
	double t;			/* seconds since start */
	double cpu;			/* CPU seconds of the first followed
					 * process, -1: unknown */
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
	struct prof_psnap *pp;		/* per process (run->procs index) */
	unsigned int npp;
};

struct prof_run {
	struct prof_opts *o;
	struct bprof_hdr *hdr;
	pid_t child;
	struct prof_proc *procs;		/* by process slot */
	unsigned int nprocs;
	double t_start, t_end;
	int status;			/* wait status of the child */
	double cpu_s;			/* its user + system time */
	long maxrss_kib;
	bool exited;

	struct prof_snap *snaps;
	unsigned int nsnaps, capsnaps;
	unsigned int nskipped;		/* automatic snapshots not taken: the
					 * program had been stopped its share */
	double stopped_s;		/* the snapshots' stopped time */
	struct prof_alloc *allocs;
	size_t nallocs, capallocs;
	size_t *seq_idx;		/* hash: seq -> allocs index + 1 */
	size_t seq_cap;
	struct prof_label *labels;
	size_t nlabels, caplabels;
	struct prof_module *mods;
	size_t nmods, capmods;

	/* interposer counters at the end */
	struct bprof_hdr final;
	struct prof_cuda *cuda;		/* --cuda: what the hook said */
};

/* --cuda: one process's hook. */
struct prof_cuda_proc {
	int rank;			/* torchrun's RANK, -1: none */
	char torch[32], backend[32], history[32];
};

struct prof_cuda {
	struct prof_cuda_proc *procs;	/* by run->procs index */
	char **notes;
	size_t nnotes, capnotes;
	unsigned int unsized;		/* codecs the hook did not size */
	bool expandable;		/* a segment was expandable */
	bool driver;			/* the driver interposer's records */
};

double prof_now(void);
/* "buddyctl: profile: <msg>" on stderr, unless --quiet (prof_msg). */
void prof_msg(struct prof_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "buddyctl: profile: <msg>" on stderr, always (errors). */
void prof_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
int prof_mkdir_p(const char *dir);

/*
 * prof_find_lib() - libbuddyprof.so: --lib, $BUDDYPROF_LIB, next to the
 * running executable, or ../lib/buddy/ from it.  Malloc'd, or NULL.
 */
char *prof_find_lib(const char *lib);
/*
 * prof_find_preload() - the preload library @name: @lib, $@env_name, next
 * to buddyctl, in ../lib/buddy/ from it, or one directory up (a static
 * buddyctl in build/static/); malloc'd, NULL when not found.
 */
char *prof_find_preload(const char *lib, const char *env_name,
			const char *name);

/**
 * prof_exe_dir() - the folder of the running executable, into @dir (room
 * for PATH_MAX bytes): 0, or -1 when /proc/self/exe cannot be read.
 */
int prof_exe_dir(char *dir);

/*
 * prof_run_program() - run r->o->argv with @lib preloaded until it exits,
 * taking the snapshots r->o asks for; r->final holds the interposer's
 * counters at the end.  0, or -1 after a message (nothing was run when
 * the region, the signalfd or fork failed).
 */
int prof_run_program(struct prof_run *r, const char *lib);
/*
 * prof_max_stopped() - the share of the run the program may be kept
 * stopped by automatic snapshots (0: no limit).
 */
double prof_max_stopped(const struct prof_opts *o);
/*
 * prof_cuda_run() - run r->o->argv under python/buddy/cuda's hook, then
 * prof_cuda_ingest() its records.  0; -2 when the hook's Python sees no
 * CUDA device (it said so); -1 after a message.
 */
int prof_cuda_run(struct prof_run *r);
/*
 * prof_cuda_ingest() - the record files of @dir (cuda-PID.tsv, one per
 * process, python/buddy/cuda/records.py) as the run's processes,
 * snapshots, allocations (per storage block, or per segment with
 * r->o->cuda_segments) and labels.  0, or -1 after "FILE:LINE: why".
 */
int prof_cuda_ingest(struct prof_run *r, const char *dir);
/* prof_exit_code() - the program's status as a shell gives it (128 + sig). */
int prof_exit_code(const struct prof_run *r);
/* prof_report() - the text, JSON, profile and dump index outputs; 0 or -1. */
int prof_report(struct prof_run *r);
/*
 * prof_empty_reason() - why nothing was tracked, and what to do, in @buf:
 * the program never loaded the interposer (static), no process matched
 * --match, the processes followed allocated nothing but others that
 * --match left out were started, or nothing large was allocated.  NULL
 * when something was.
 */
const char *prof_empty_reason(const struct prof_run *r, char *buf, size_t len);

/*
 * prof_snap_kept() - whether snapshot @s is kept for process @proc: not
 * thinned out, or the last that read @proc (prof_psnap.last); for -1, kept
 * for any process.
 */
bool prof_snap_kept(const struct prof_run *r, unsigned int s, int proc);
/* prof_nr_alloc() - tracked allocations of process @proc (-1: of all). */
uint64_t prof_nr_alloc(const struct prof_run *r, int proc);
/*
 * prof_main_proc() - the main process (its figures are the report's top
 * level): of the followed processes with an allocation in a kept
 * snapshot, the one that started first (COMMAND itself when it has one;
 * a parent before its children); else the first to take a process slot;
 * -1 when none had a table.
 */
int prof_main_proc(const struct prof_run *r);

/* ---- buddyctl run (run_engine.c, run_report.c) ----------------------------- */

/* Options of `buddyctl run` (tools/buddyctl/run.c). */
struct run_opts {
	ENGINE_OPTS(common);
	unsigned int target;		/* BUDDY_TARGET_*, AUTO by default */
	unsigned int codec;		/* BUDDY_CODEC_* */
	const char *profile_file;	/* -p: targets per label */
	const char *device;		/* buddy_open() path, NULL: default */
	int cpunode;			/* --cpunodebind, -1: none */
	double base_time;		/* seconds for the sweep, 0: none */
	bool base_run;			/* base_time from a plain run first */
	double progress;		/* seconds between progress lines, 0: none */
	uint64_t um_page;		/* UM baseline's migration page */
	uint32_t nrecs;			/* records in the region */
	bool allow_fallback;		/* exit 0 though most fell back */
};

/*
 * run_program() - run o->argv with @lib preloaded in run mode, wait for it and
 * write the report.  Returns the exit code buddyctl run should give: the
 * program's (128 + N if killed by signal N), 1 when buddyctl failed before
 * it ran or could not write the report.
 */
int run_program(struct run_opts *o, const char *lib);

#endif /* BUDDY_PROFILER_H */
