/* SPDX-License-Identifier: GPL-2.0 */
/*
 * buddyd.h - what buddyd's two halves share, as systemd-oomd's do:
 *
 *   main.c     the command line, the configuration, signals, the loop
 *   manager.c  the device: snapshots, decisions, acting on them
 */
#ifndef BUDDYD_H
#define BUDDYD_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"
#include "lib/libbuddy.h"
#include "tools/policy/profile_file.h"
#include "window.h"

#define BUDDYD_VERSION	"0.1"
#define MIB		(1024.0 * 1024.0)
#define MAX_OVERRIDES	32

struct override {
	const char *key;
	const char *value;
	const char *opt;
};

struct failed {
	uint64_t id;
	unsigned int target;
	unsigned int codec;
};

struct buddyd {
	/* command line */
	const char *config_path;
	bool config_given;
	struct override ov[MAX_OVERRIDES];
	int nov;
	bool once, report, json, interval_given, check;

	/* configuration in force */
	struct bd_conf conf;
	uint64_t interval_us;

	/* the device */
	int devfd;
	struct buddy_info info;

	/* state */
	struct bd_window win;
	struct buddy_profile_table profiles;
	struct buddy_alloc_stat *st;	/* the newest snapshot */
	size_t nst, stcap;
	struct failed *failed;		/* re-targetings that failed, logged */
	size_t nfailed, failcap;
	unsigned long codec_changes;	/* live re-encodings to a profile's codec */
	bool list_failing;		/* the last snapshot failed (logged) */
	int sigfd;
};

/*
 * manager_open_device() - open @path and check that buddyd can work with
 * it: 0, or the exit status after a message.
 */
int manager_open_device(struct buddyd *b, const char *path, int *fdp,
			struct buddy_info *info);
/* Read the state file and, unless in dry-run, install it: 0 or -errno. */
int manager_load_profiles(struct buddyd *b);
/* One snapshot of every live allocation into the window: 0 or -errno. */
int manager_snapshot(struct buddyd *b);
/*
 * manager_decide() - decide on the window; log the decisions that are new
 * or changed and act on them.  @d is kept for the report (free it with
 * bd_decision_free()).  0 or -errno.
 */
int manager_decide(struct buddyd *b, struct bd_decision *d);

#endif /* BUDDYD_H */
