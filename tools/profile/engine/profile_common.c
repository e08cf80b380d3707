// SPDX-License-Identifier: GPL-2.0
/*
 * profile_common.c - what the files of the profile engine all use: the
 * codecs, the clock, messages, directories, which snapshots are kept for
 * whom, and the reason an empty run is empty.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/libbuddy.h"
#include "profile_priv.h"
#include "tools/common/msg.h"

const struct buddy_codec *const prof_codecs[PROF_NC] = {
	&buddy_codec_bpc, &buddy_codec_zvc, &buddy_codec_bdi, &buddy_codec_fpc,
};

double prof_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void prof_msg(struct prof_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->o->quiet)
		return;
	va_start(ap, fmt);
	msg_verr("buddyctl: profile", fmt, ap);
	va_end(ap);
}

void prof_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_verr("buddyctl: profile", fmt, ap);
	va_end(ap);
}

int prof_mkdir_p(const char *dir)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

uint64_t prof_nr_alloc(const struct prof_run *r, int proc)
{
	uint64_t n = 0;

	for (unsigned int p = 0; p < r->nprocs; p++)
		if (proc < 0 || (unsigned int)proc == p)
			n += r->procs[p].final.nr_alloc;
	return n;
}

bool prof_snap_kept(const struct prof_run *r, unsigned int s, int proc)
{
	const struct prof_snap *sn = &r->snaps[s];

	/* --cuda: each process has snapshots of its own */
	if (r->cuda && proc >= 0 &&
	    ((unsigned int)proc >= sn->npp || !sn->pp[proc].read))
		return false;
	if (!sn->dropped)
		return true;
	for (unsigned int p = 0; p < sn->npp; p++)
		if (sn->pp[p].last && (proc < 0 || (unsigned int)proc == p))
			return true;
	return false;
}

/* Whether process @p has an allocation in a snapshot kept for it. */
static bool has_kept(const struct prof_run *r, unsigned int p)
{
	for (size_t i = 0; i < r->nallocs; i++) {
		const struct prof_alloc *a = &r->allocs[i];

		if (a->proc != (int)p)
			continue;
		for (unsigned int j = 0; j < a->nobs; j++)
			if (prof_snap_kept(r, a->obs[j].snap, p))
				return true;
	}
	return false;
}

/* @a started before @b (start time, then pid: a parent before its child). */
static bool earlier(const struct prof_proc *a, const struct prof_proc *b)
{
	unsigned long long sa = a->start ? a->start : ~0ULL;
	unsigned long long sb = b->start ? b->start : ~0ULL;

	return sa != sb ? sa < sb : a->pid < b->pid;
}

int prof_main_proc(const struct prof_run *r)
{
	int first = -1, best = -1;

	for (unsigned int p = 0; p < r->nprocs; p++) {
		if (!r->procs[p].pid)
			continue;
		if (first < 0)
			first = p;
		if (has_kept(r, p) &&
		    (best < 0 || earlier(&r->procs[p], &r->procs[best])))
			best = p;
	}
	return best >= 0 ? best : first;
}

/* @s, a fixed-size name of the region, NUL-terminated in @buf. */
static const char *name_of(const char *s, size_t n, char *buf)
{
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

const char *prof_empty_reason(const struct prof_run *r, char *buf, size_t len)
{
	const struct bprof_hdr *h = &r->final;
	const struct prof_opts *o = r->o;
	char first[sizeof(h->not_followed) + 1], fexe[sizeof(h->first_exe) + 1];
	const char *who;

	if (r->cuda) {
		if (r->nallocs)
			return NULL;
		if (o->cuda_driver && !r->nprocs)
			snprintf(buf, len,
				 "no record: no process of %s allocated through the CUDA driver API with libbuddycudaprof.so loaded (no CUDA device or driver, or a statically linked or setuid program, which ignores LD_PRELOAD)",
				 o->argv && o->argv[0] ? o->argv[0] : "the run");
		else
			snprintf(buf, len, r->nprocs ?
				 "the records hold no live CUDA block at a kept snapshot" :
				 "no record: no Python process of %s ran a backward pass on CUDA (or its Python ignores PYTHONPATH, or runs with -S or -I)",
				 o->argv && o->argv[0] ? o->argv[0] : "the run");
		return buf;
	}
	if (prof_nr_alloc(r, -1))
		return NULL;
	name_of(h->not_followed, sizeof(h->not_followed), first);
	who = h->first_pid == r->child ? o->argv[0] :
	      name_of(h->first_exe, sizeof(h->first_exe), fexe);
	if (!h->first_pid && !h->nr_not_followed) {
		snprintf(buf, len,
			 "%s never loaded libbuddyprof.so: a statically linked program ignores LD_PRELOAD (so does a setuid one, or one that clears the environment); profile a dynamically linked build",
			 o->argv[0]);
	} else if (!h->first_pid) {
		snprintf(buf, len,
			 "no process matched --match %s; %u process%s loaded libbuddyprof.so (the first: %s): give --match one of them",
			 o->match ? o->match : "", h->nr_not_followed,
			 h->nr_not_followed == 1 ? "" : "es", first);
	} else if (h->nr_not_followed) {
		snprintf(buf, len,
			 "pid %d (%s) made no allocation of at least %llu B, and the %u other process%s that loaded libbuddyprof.so %s not followed, not matching --match %s (the first: %s): to profile one, --match %s",
			 (int)h->first_pid, who,
			 (unsigned long long)o->min_size, h->nr_not_followed,
			 h->nr_not_followed == 1 ? "" : "es",
			 h->nr_not_followed == 1 ? "was" : "were",
			 o->match ? o->match : "", first, first);
	} else if (h->nr_followed > 1 || h->nr_forked) {
		snprintf(buf, len,
			 "none of the processes followed (%u that loaded libbuddyprof.so, the first pid %d (%s); %u forked) made an allocation of at least %llu B; a lower --min-size tracks smaller ones",
			 h->nr_followed, (int)h->first_pid, who, h->nr_forked,
			 (unsigned long long)o->min_size);
	} else {
		snprintf(buf, len,
			 "pid %d (%s) made no allocation of at least %llu B and started no other program; a lower --min-size tracks smaller ones",
			 (int)h->first_pid, who,
			 (unsigned long long)o->min_size);
	}
	return buf;
}

void *prof_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		prof_err("out of memory");
		exit(1);
	}
	return q;
}

double prof_cpu_cover(const struct prof_rep *rp)
{
	const struct prof_run *r = rp->r;
	double last = -1;

	if (r->cuda)
		return -1;	/* the CUDA records carry no CPU clock */
	for (unsigned int s = 0; s < r->nsnaps; s++)
		if (rp->final_of[s] >= 0 && r->snaps[s].cpu > last)
			last = r->snaps[s].cpu;
	if (last < 0 || !(r->cpu_s > 0))
		return -1;
	return last < r->cpu_s ? last / r->cpu_s : 1;
}

bool prof_per_label_below(const struct prof_rep *rp)
{
	return rp->per_label.ratio <
	       rp->final_codec[rp->main].ratio * (1 - 1e-3);
}

void prof_per_label_why(const struct prof_rep *rp, char *buf, size_t len)
{
	const struct prof_run *r = rp->r;
	char a[16], b[16];

	prof_fmt_ratio(a, sizeof(a), rp->per_label.ratio);
	prof_fmt_ratio(b, sizeof(b), rp->final_codec[rp->main].ratio);
	if (rp->mixed_label < 0) {
		snprintf(buf, len, "%sx, below %s's %sx: the profile file pools each label's allocations under one Buddy Threshold",
			 a, prof_codecs[rp->main]->name, b);
		return;
	}
	snprintf(buf, len, "%sx, below %s's %sx: %u label(s) hold allocations the final design gives different targets (the largest, %s: %s to %s); the profile file names one target per label, the one its least compressible allocation fits",
		 a, prof_codecs[rp->main]->name, b, rp->nmixed,
		 r->labels[rp->mixed_label].name,
		 buddy_target_name(rp->mixed_lo),
		 buddy_target_name(rp->mixed_hi));
}
