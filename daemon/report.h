/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - `buddyd --once --report [--json]`: the decision per unit and
 * the paper's three views of it, all on the same window of snapshots:
 *
 *   Fig. 7   the design optimizations applied one after the other: one
 *            whole-program target (naive), per-allocation targets, plus 16x
 *            for mostly-zero allocations (the final design): compression
 *            ratio and expected buddy-access fraction of each;
 *   Fig. 10  the Buddy Threshold swept over 10, 20, 30 and 40%, and the best
 *            ratio with no threshold at all;
 *   Fig. 9   the buddy-access fraction at the chosen targets in every
 *            snapshot of the window.
 *
 * Everything comes from tools/policy/heuristic.h (buddy_heur_compare(),
 * buddy_heur_sweep(), buddy_heur_series()) with the parameters the decision
 * used: units pooled by uid and label, capacity net of pending units.
 */
#ifndef BUDDYD_REPORT_H
#define BUDDYD_REPORT_H

#include <stdio.h>

#include "conf.h"
#include "window.h"

struct bd_report {
	const struct bd_conf *conf;	/* threshold, window, mode, device */
	const struct buddy_info *info;	/* the pools */
	const struct bd_window *win;
	const struct bd_decision *d;
	uint64_t interval_us;		/* as used */
};

/* Return 0, or -ENOMEM. */
int bd_report_text(FILE *f, const struct bd_report *r);
int bd_report_json(FILE *f, const struct bd_report *r);

#endif /* BUDDYD_REPORT_H */
