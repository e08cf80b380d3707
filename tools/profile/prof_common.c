// SPDX-License-Identifier: GPL-2.0
/*
 * prof_common.c - what the profiler's engine (prof_run.c) and its report
 * (prof_report.c) both use: the codecs, the clock, messages, directories and
 * the reason an empty run is empty.  Both depend on this file and on
 * buddyprof.h, never on each other (the report reads only struct pf_run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "buddyprof.h"

const struct buddy_codec *const pf_codecs[PF_NC] = {
	&buddy_codec_bpc, &buddy_codec_zvc, &buddy_codec_bdi, &buddy_codec_fpc,
};

double pf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void pf_msg(struct pf_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->o->quiet)
		return;
	fputs("buddyctl: profile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void pf_err(const char *fmt, ...)
{
	va_list ap;

	fputs("buddyctl: profile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int pf_mkdir_p(const char *dir)
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

const char *pf_empty_reason(const struct pf_run *r, char *buf, size_t len)
{
	const struct bprof_hdr *h = &r->final;
	const struct pf_opts *o = r->o;
	char first[sizeof(h->not_followed) + 1];

	if (h->nr_alloc)
		return NULL;
	memcpy(first, h->not_followed, sizeof(h->not_followed));
	first[sizeof(h->not_followed)] = 0;
	if (!h->owner_pid && !h->nr_not_followed) {
		snprintf(buf, len,
			 "%s never loaded libbuddyprof.so: a statically linked program ignores LD_PRELOAD (so does a setuid one, or one that clears the environment); profile a dynamically linked build",
			 o->argv[0]);
	} else if (!h->owner_pid) {
		snprintf(buf, len,
			 "no process matched --match %s; %u process%s loaded libbuddyprof.so (the first: %s): give --match one of them",
			 o->match ? o->match : "", h->nr_not_followed,
			 h->nr_not_followed == 1 ? "" : "es", first);
	} else if (h->nr_not_followed) {
		snprintf(buf, len,
			 "pid %d (%s) made no allocation of at least %llu B, and the %u process%s it started %s not followed (the first: %s): to profile one, --match %s",
			 (int)h->owner_pid,
			 h->owner_pid == r->child ? o->argv[0] : "its owner",
			 (unsigned long long)o->min_size, h->nr_not_followed,
			 h->nr_not_followed == 1 ? "" : "es",
			 h->nr_not_followed == 1 ? "was" : "were", first, first);
	} else if (h->nr_forked) {
		snprintf(buf, len,
			 "pid %d (%s) made no allocation of at least %llu B, and the %u child%s it forked (without exec) %s not followed: buddyctl profile follows one process",
			 (int)h->owner_pid,
			 h->owner_pid == r->child ? o->argv[0] : "its owner",
			 (unsigned long long)o->min_size, h->nr_forked,
			 h->nr_forked == 1 ? "" : "ren",
			 h->nr_forked == 1 ? "was" : "were");
	} else {
		snprintf(buf, len,
			 "pid %d (%s) made no allocation of at least %llu B and started no other program; a lower --min-size tracks smaller ones",
			 (int)h->owner_pid,
			 h->owner_pid == r->child ? o->argv[0] : "its owner",
			 (unsigned long long)o->min_size);
	}
	return buf;
}
