/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile_priv.h - what the files of the profile engine share and nothing
 * outside it sees: the raw samples of the snapshots, the run loop's
 * state, and the decisions the reports print.
 *
 *   profile_schedule.c  start the program, the snapshot schedule, the loop
 *   profile_snapshot.c  one snapshot: stop, read the tables and the memory,
 *                       label, classify
 *   profile_decide.c    the decisions and figures of one report
 *   profile_symbols.c   return addresses to symbols, from the ELF files
 *   profile_text.c      the report as text
 *   profile_json.c      the report as JSON, the profile file, the dump
 *                       index; prof_report()
 *   profile_common.c    messages, the clock, which snapshots are kept
 *   profile_guard.c     the program goes on (or dies) when buddyctl dies
 */
#ifndef BUDDY_PROFILE_PRIV_H
#define BUDDY_PROFILE_PRIV_H

#include <stdio.h>

#include "tools/policy/heuristic.h"
#include "profiler.h"

#define MIB	(1024.0 * 1024.0)

/* realloc() or exit(1) after a message. */
void *prof_xrealloc(void *p, size_t n);

#define GROW(arr, n, cap)						\
	do {								\
		if ((n) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 16;			\
			(arr) = prof_xrealloc((arr), (cap) * sizeof(*(arr)));\
		}							\
	} while (0)

/* The raw sample of one allocation in one snapshot. */
struct prof_piece {
	size_t alloc;			/* index into run->allocs */
	uint64_t off;			/* into the snapshot's buffer */
	uint64_t len;			/* bytes read (whole entries, padded) */
	uint64_t unread;		/* entries that could not be read */
	uint64_t stride;		/* 1 of @stride blocks read */
	uint64_t blocks, read;		/* blocks readable, read */
};

struct prof_raw {
	unsigned int snap;		/* index into run->snaps */
	struct prof_piece *pieces;
	size_t npieces;
	uint8_t *buf;
	uint64_t stride;
};

struct prof_state {
	struct prof_run *r;
	int sfd;
	int fd;				/* the region's memfd */
	struct prof_raw *pending;		/* adaptive: unclassified snapshots */
	size_t npending, cappending;
	uint64_t progress_seen;		/* hdr->nr_progress_snaps answered */
	double delta;			/* adaptive interval */
	double next;			/* next timer snapshot, s since start */
	unsigned int timer_taken;	/* fixed/at: timer snapshots taken */
	uint8_t *scratch;		/* immediate mode buffer */
	uint64_t scratch_len;
	pid_t guard;			/* profile_guard.c */
	int guard_fd;			/* its pipe, -1: none */
};

/* ---- the decisions ------------------------------------------------------------- */

struct prof_rep {
	struct prof_run *r;
	int proc;			/* the process's (run->procs), -1: all */
	bool all;			/* also the --exclude'd allocations */
	unsigned int nsnap;		/* kept snapshots */
	int *final_of;			/* internal snapshot id -> kept index */
	unsigned int *snap_of;		/* kept index -> internal id */
	size_t n;			/* allocations with a kept observation */
	size_t *idx;			/* -> run->allocs */
	uint64_t (*rows[PROF_NC])[BUDDY_CODE_NR];	/* n * nsnap rows per codec */
	struct buddy_heur_alloc *ha[PROF_NC];
	struct buddy_heur_alloc *mix;
	struct buddy_heur_choice *ch;
	struct buddy_heur_params p;	/* per allocation, main threshold */
	unsigned int main;

	/* results */
	bool with_all;			/* --exclude: the figures without it */
	uint64_t all_pairs, all_fig3, all_bytes, excluded_bytes;
	struct buddy_heur_result all_final, all_naive;
	uint64_t pairs, fig3[PROF_NC], fig3_best;
	struct buddy_heur_cmp cmp;
	struct buddy_heur_result sweep[BUDDY_HEUR_SWEEP_NR];
	struct buddy_heur_point *series;
	struct buddy_heur_result final_codec[PROF_NC];
	struct buddy_heur_result best_alloc;	/* best codec per allocation */
	struct buddy_heur_result per_label;	/* profile: pooled, best codec */
	/*
	 * Labels whose allocations the final design gives different targets
	 * (a profile file names one per label): how many, the largest
	 * (-1: none) and its targets' range.
	 */
	unsigned int nmixed;
	int mixed_label;
	unsigned int mixed_lo, mixed_hi;
	uint64_t *snap_pairs, *snap_fig3;	/* main codec, per kept snapshot */
	/* per label, per kept snapshot */
	uint64_t *lab_bytes, *lab_pairs, *lab_fig3;
	uint64_t (*lab_hist)[PROF_NC][BUDDY_CODE_NR];	/* per label, all snapshots */
	unsigned int *order;		/* labels by bytes, descending */
	size_t nlab_used;
	size_t nexcluded;		/* labels left out by --exclude */
};

/* profile_schedule.c */
bool prof_adaptive_progress(const struct prof_opts *o);
bool prof_adaptive(const struct prof_opts *o);
/* CPU seconds of the first followed process (all threads), -1: gone */
/*
 * prof_cpu_cover() - the share of the run's CPU time that @rp's kept
 * snapshots reach (the CPU time of the last / the program's), -1 when
 * unknown (no snapshot, no CPU time).
 */
double prof_cpu_cover(const struct prof_rep *rp);
/* Whether the profile file's figure is below the final design's */
bool prof_per_label_below(const struct prof_rep *rp);
/* Why it is, one sentence into @buf */
void prof_per_label_why(const struct prof_rep *rp, char *buf, size_t len);
double prof_cpu_now(const struct prof_run *r);
void prof_progress_step(struct prof_state *st);

/*
 * profile_guard.c: prof_guard_start() forks the guard (after the region,
 * before the program; 0 or -1 after a message); prof_guard_child() names
 * COMMAND's pid to it; prof_guard_stop() at a normal end.
 */
int prof_guard_start(struct prof_state *st);
void prof_guard_child(struct prof_state *st, pid_t child);
void prof_guard_stop(struct prof_state *st);

/* profile_snapshot.c */
int prof_snapshot(struct prof_state *st, bool requested);
void prof_sync_procs(struct prof_run *r);
void prof_classify(struct prof_run *r, struct prof_raw *raw);
void prof_free_raw(struct prof_raw *raw, bool keep_buf);

/* profile_symbols.c */
void prof_symbolize(struct prof_run *r, const struct prof_frame *f, char *buf,
		      size_t len);
/*
 * prof_native_site() - label @l's native site into @buf: its first frame
 * outside the allocator libraries (libc, libstdc++, libc10, numpy's and
 * libtorch's allocation functions), symbolized; frame 0 when all are in
 * them.  Returns the frame's index, -1 without frames.
 */
int prof_native_site(struct prof_run *r, const struct prof_label *l,
		     char *buf, size_t len);
/*
 * prof_site() - label @l's site into @buf: the Python site recorded
 * ("file.py:LINE function"; returns PROF_SITE_PYTHON), --cuda's site of
 * a label without frames (returns 0), else the native site, as
 * prof_native_site().
 */
#define PROF_SITE_PYTHON	(-2)
int prof_site(struct prof_run *r, const struct prof_label *l, char *buf,
	      size_t len);
/* prof_short_sym() - a symbolized frame without its parameter list. */
void prof_short_sym(char *s);

/* profile_decide.c */
void prof_free_rep(struct prof_rep *rp);
double prof_ratio_of(uint64_t logical, uint64_t stored);
int prof_rep_make(struct prof_run *r, int proc, struct prof_rep *rp);

/* profile_snapshot.c */
void prof_seq_grow(struct prof_run *r);

/* profile_text.c */
void prof_fmt_cmd(char *buf, size_t len, char **argv);
void prof_fmt_ratio(char *buf, size_t len, double v);
unsigned int prof_nr_tables(const struct prof_run *r);
void prof_proc_counters(const struct prof_run *r, int proc,
			  struct bprof_proc *c);
struct prof_psnap prof_snap_proc(const struct prof_snap *sn, int proc);
int prof_report_text(FILE *f, struct prof_run *r);

struct json_object;

/* profile_cuda.c: the hook's lines of the text report, its JSON object */
void prof_cuda_text(FILE *f, const struct prof_run *r);
struct json_object *prof_cuda_json(const struct prof_run *r);

/* profile_json.c */
int prof_report_json(FILE *f, struct prof_run *r);

#endif /* BUDDY_PROFILE_PRIV_H */
