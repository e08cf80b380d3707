/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run_priv.h - what the two files of the run engine share:
 *   run_engine.c  the region, the program, waiting for it; run_program()
 *   run_report.c  its buddy allocations per label, the link-time sweep and
 *                 the baselines, as text and JSON
 */
#ifndef BUDDY_RUN_PRIV_H
#define BUDDY_RUN_PRIV_H

#include "profiler.h"
#include "tools/profile/interposer/run_shm.h"

struct run_label {
	char name[BUDDY_LABEL_LEN];
	unsigned int target;		/* asked for (the last allocation's) */
	bool from_profile;
	uint64_t nallocs, nfallback, nunfinished;
	uint64_t logical, fallback_bytes, device, buddy;
	uint64_t faults, hits, writebacks;
	uint64_t entries, buddy_acc;
	uint64_t bud_sectors, dev_sectors;
	uint64_t link_ns, link_req;
	int err;			/* the first fallback's errno */
};

/* "buddyctl: run: <msg>" on stderr, unless --quiet (run_msg()) */
void run_msg(const struct run_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void run_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * run_report() - the report of the program that ran @secs seconds and
 * exited with wait status @status, from the region @h.  0, -1 when it
 * could not be written, 1 when more than half the tracked bytes fell
 * back to ordinary memory (a warning said so) and not --allow-fallback.
 */
int run_report(struct run_opts *o, struct brun_hdr *h, double secs, int status);

#endif /* BUDDY_RUN_PRIV_H */
