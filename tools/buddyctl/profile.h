/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile.h - what the two halves of `buddyctl profile` share: profile.c
 * runs the program and takes the snapshots, profile_report.c turns them into
 * labels, decisions and the report.
 */
#ifndef BUDDYCTL_PROFILE_H
#define BUDDYCTL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec.h"
#include "profshm.h"

/* Codecs every snapshot is classified with (the best-codec figures). */
#define PF_NC		4
extern const struct buddy_codec *const pf_codecs[PF_NC];

struct pf_opts {
	unsigned int points;		/* snapshots kept (timer) */
	double interval;		/* > 0: fixed interval, seconds */
	double first;			/* adaptive: first interval */
	double *at;			/* --at times, seconds */
	unsigned int nat;
	bool timer;			/* false: only on request */
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
	uint32_t slots;
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
};

struct pf_alloc {
	uint64_t seq;
	uint64_t addr;
	uint64_t size;
	unsigned int kind;
	int label;
	struct pf_obs *obs;
	unsigned int nobs, capobs;
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
	uint64_t stride;		/* 1 of @stride 4 KiB blocks read */
	uint64_t stale;			/* entries not mapped any more */
	uint64_t unread;		/* bytes that could not be read */
	unsigned int not_stopped;	/* threads not stopped in time */
	bool requested;			/* by signal or the program */
	bool dropped;			/* thinned out (adaptive timer) */
};

struct pf_run {
	struct pf_opts *o;
	struct bprof_hdr *hdr;
	pid_t child;
	pid_t owner;
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
void pf_msg(struct pf_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pf_report(struct pf_run *r);
int pf_mkdir_p(const char *dir);
/*
 * pf_empty_reason() - why nothing was tracked, and what to do, in @buf:
 * the program never loaded the interposer (static), no process matched
 * --match, the owner allocated nothing but started programs that were not
 * followed, or it allocated nothing large.  NULL when something was.
 */
const char *pf_empty_reason(const struct pf_run *r, char *buf, size_t len);

#endif /* BUDDYCTL_PROFILE_H */
