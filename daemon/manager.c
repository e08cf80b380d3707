// SPDX-License-Identifier: GPL-2.0
/*
 * manager.c - buddyd's work on the device: the snapshots (BUDDY_IOC_LIST
 * into the window), the decisions (the Buddy Threshold heuristic per unit)
 * and acting on them by Mode: log, install profiles, re-stripe live
 * allocations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buddyd.h"
#include "log.h"
#include "notify.h"
#include "state.h"

/* ---- the device ---------------------------------------------------------- */

/* Open @path and check that buddyd can work with it: 0 or exit status. */
int manager_open_device(struct buddyd *b, const char *path, int *fdp,
			struct buddy_info *info)
{
	unsigned int cnt;
	uint64_t total;
	int fd, r;

	fd = buddy_open(path);
	if (fd < 0) {
		if (fd == -ENOENT || fd == -ENODEV || fd == -ENXIO)
			bd_err("%s: %s: is buddy.ko loaded?", path, strerror(-fd));
		else if (fd == -EACCES || fd == -EPERM)
			bd_err("%s: %s: buddyd must run as root (it needs CAP_SYS_ADMIN)",
			       path, strerror(-fd));
		else
			bd_err("%s: %s", path, strerror(-fd));
		return 1;
	}
	r = buddy_get_info(fd, info);
	if (r) {
		bd_err("%s: BUDDY_IOC_GET_INFO: %s%s", path, strerror(-r),
		       r == -ENOTTY ? ": not a buddy device" : "");
		goto fail;
	}
	if (info->abi_version != BUDDY_ABI_VERSION)
		bd_notice("%s: buddy.ko ABI %u, buddyd built for ABI %d", path,
			  info->abi_version, BUDDY_ABI_VERSION);
	if (!(info->features & BUDDY_FEAT_ADMIN)) {
		bd_err("%s: buddy.ko lacks the admin interface (BUDDY_FEAT_ADMIN): buddyd needs BUDDY_IOC_LIST",
		       path);
		goto fail;
	}
	if (b->conf.mode != BD_MODE_DRY_RUN &&
	    !(info->features & BUDDY_FEAT_AUTO)) {
		bd_err("%s: buddy.ko lacks AUTO allocations (BUDDY_FEAT_AUTO): nothing would use the profiles; run with --dry-run",
		       path);
		goto fail;
	}
	r = buddy_list(fd, 0, NULL, 0, &cnt, &total);
	if (r) {
		bd_err("BUDDY_IOC_LIST: %s%s", strerror(-r),
		       r == -EPERM ? ": buddyd needs CAP_SYS_ADMIN" : "");
		goto fail;
	}
	*fdp = fd;
	return 0;
fail:
	close(fd);
	return 1;
}

/* Install the whole table, REPLACE: what the kernel cannot take is skipped. */
static int install_profiles(struct buddyd *b)
{
	struct buddy_profile_entry *e;
	char esc[BUDDY_LABEL_ESC_MAX];
	unsigned int n = 0, got, before;
	int r;

	e = calloc(b->profiles.n ? b->profiles.n : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < b->profiles.n; i++) {
		const struct buddy_profile_entry *p = &b->profiles.v[i];

		if (!buddy_label_kernel_valid(p->label)) {
			buddy_label_escape(p->label, esc, sizeof(esc), true);
			bd_warn("%s: uid %u label \"%s\": buddy.ko labels are printable ASCII without '/'; not installed",
				b->conf.state_file, p->uid, esc);
			continue;
		}
		if (n == BUDDY_PROFILE_MAX) {
			bd_warn("%s: more than %d profiles; the rest is not installed",
				b->conf.state_file, BUDDY_PROFILE_MAX);
			break;
		}
		e[n++] = *p;
	}
	/* what the table held before is said: it may have been loaded by hand */
	if (buddy_profile_get(b->devfd, NULL, 0, &got, &before))
		before = 0;
	r = buddy_profile_set(b->devfd, e, n, BUDDY_PROFILE_REPLACE);
	free(e);
	if (r)
		bd_err("BUDDY_IOC_PROFILE_SET: %s: %s", strerror(-r),
		       buddy_strerror(r, BUDDY_OP_PROFILE));
	else
		bd_info("installed %u profiles from %s, replacing the %u of %s",
			n, b->conf.state_file, before, b->conf.device);
	return r;
}

/*
 * No state file, or one without profiles: nothing to restore, so the
 * device's table stays as it is (loaded by hand, or by an earlier buddyd)
 * and becomes buddyd's own, saved with its next decision.
 */
static int adopt_profiles(struct buddyd *b, struct buddy_profile_table *t,
			  const char *why)
{
	struct buddy_profile_entry *v;
	unsigned int got = 0, total;
	int r;

	v = calloc(BUDDY_PROFILE_MAX, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = buddy_profile_get(b->devfd, v, BUDDY_PROFILE_MAX, &got, &total);
	if (r) {
		bd_err("BUDDY_IOC_PROFILE_GET: %s: %s", strerror(-r),
		       buddy_strerror(r, BUDDY_OP_PROFILE));
		free(v);
		return r;
	}
	for (unsigned int i = 0; i < got && r >= 0; i++)
		r = buddy_profile_put(t, &v[i]);	/* 1: added */
	free(v);
	if (r < 0) {
		bd_err("%s: %s", b->conf.device, strerror(-r));
		return r;
	}
	bd_notice("%s: %s: keeping the %u profiles installed in %s (saved in the state file with the next decision)",
		  b->conf.state_file, why, got, b->conf.device);
	return 0;
}

/* Read the state file and, unless in dry-run, install it.  0 or -errno. */
int manager_load_profiles(struct buddyd *b)
{
	struct buddy_profile_table t = { 0 };
	unsigned int bad;
	int r;

	r = bd_state_load(b->conf.state_file, &t, &bad);
	if (r && r != -ENOENT) {
		bd_err("%s: %s", b->conf.state_file, strerror(-r));
		buddy_profile_free(&t);
		return r;
	}
	if (r == -ENOENT || !t.n) {
		r = adopt_profiles(b, &t, r ? "no state file yet" :
				   "no profiles in the state file");
		if (r) {
			buddy_profile_free(&t);
			return r;
		}
		buddy_profile_free(&b->profiles);
		b->profiles = t;
		return 0;
	}
	bd_info("%s: %zu profiles%s", b->conf.state_file, t.n,
		bad ? " (bad lines skipped)" : "");
	buddy_profile_free(&b->profiles);
	b->profiles = t;
	if (b->conf.mode == BD_MODE_DRY_RUN) {
		bd_info("dry run: not installing the %zu profiles", t.n);
		return 0;
	}
	return install_profiles(b);
}

/* ---- snapshots and decisions ------------------------------------------- */

int manager_snapshot(struct buddyd *b)
{
	uint64_t start = 0, total, t = bd_now_usec();
	unsigned int cnt;
	int r;

	b->nst = 0;
	for (;;) {
		if (b->stcap - b->nst < 64) {
			size_t cap = b->stcap ? 2 * b->stcap : 256;
			void *v = realloc(b->st, cap * sizeof(*b->st));

			if (!v)
				return -ENOMEM;
			b->st = v;
			b->stcap = cap;
		}
		r = buddy_list(b->devfd, start, b->st + b->nst,
			       b->stcap - b->nst, &cnt, &total);
		if (r) {
			/* once per run of failures */
			bd_log(b->list_failing ? LOG_DEBUG : LOG_WARNING,
			       "BUDDY_IOC_LIST: %s: snapshot skipped",
			       strerror(-r));
			b->list_failing = true;
			return r;
		}
		b->nst += cnt;
		if (!cnt || cnt >= total)
			break;
		start = b->st[b->nst - 1].id + 1;
	}
	bd_window_begin(&b->win, t);
	for (size_t i = 0; i < b->nst; i++) {
		r = bd_window_add(&b->win, &b->st[i]);
		if (r)
			return r;
	}
	bd_window_end(&b->win);
	if (b->list_failing)
		bd_info("BUDDY_IOC_LIST works again");
	b->list_failing = false;
	bd_debug("snapshot %llu: %zu allocations, %zu units",
		 (unsigned long long)b->win.seq, b->nst, b->win.n);
	return 0;
}

static void heur_params(struct buddyd *b, struct buddy_heur_params *p)
{
	buddy_heur_default_params(p);
	p->threshold_ppm = b->conf.threshold_ppm;
	p->zero_ppm = b->conf.zero_ppm;
	/*
	 * The heuristic counts E * t bytes per allocation; the module adds
	 * half a byte of metadata per entry and page rounding per chunk:
	 * leave it 1/128 of each pool.
	 */
	if (buddy_get_info(b->devfd, &b->info) == 0) {
		p->device_bytes = b->info.device_bytes - b->info.device_bytes / 128;
		p->carveout_bytes = b->info.buddy_bytes - b->info.buddy_bytes / 128;
	}
	if (!p->device_bytes)
		p->device_bytes = 1;
	if (!p->carveout_bytes)
		p->carveout_bytes = 1;	/* no carve-out: 0 would mean unlimited */
}

static const char *unit_name(const struct bd_key *k, char *buf, size_t len)
{
	char esc[BUDDY_LABEL_ESC_MAX];

	if (k->label[0]) {
		buddy_label_escape(k->label, esc, sizeof(esc), true);
		snprintf(buf, len, "uid=%u label=\"%s\"", k->uid, esc);
	} else {
		snprintf(buf, len, "uid=%u unlabelled id=%llu", k->uid,
			 (unsigned long long)k->id);
	}
	return buf;
}

static void log_decision(struct buddyd *b, const struct bd_decision *d,
			 size_t u)
{
	struct bd_key *k = &b->win.keys[d->key[u]];
	const struct buddy_heur_choice *c = &d->ch[u];
	char name[BUDDY_LABEL_ESC_MAX + 64], over[128], was[16], codec[48];
	double p = c->pairs ? 100.0 / c->pairs : 0;

	if (d->codec[u] != BUDDY_CODEC_DEFAULT)
		snprintf(codec, sizeof(codec), "%s (profile: %s %s)",
			 buddy_codec_name(bd_key_codec(k)),
			 buddy_codec_name(d->codec[u]),
			 buddy_target_name(d->codec_target[u]));
	else
		snprintf(codec, sizeof(codec), "%s",
			 buddy_codec_name(bd_key_codec(k)));

	snprintf(over, sizeof(over), "%.2f%%/%.2f%%/%.2f%%/%.2f%%",
		 p * c->over_at[0], p * c->over_at[1], p * c->over_at[2],
		 p * c->over_at[3]);
	snprintf(was, sizeof(was), "%s", k->logged_target ?
		 buddy_target_name(k->logged_target) : "new");
	bd_info("decide %s allocs=%u size=%.2fMiB codec=%s snapshots=%u entries=%llu target=%s (was %s) threshold-target=%s mostly-zero=%s over[16x/4x/2x/4/3x]=%s expected-buddy=%.2f%% ratio=%.2fx",
		unit_name(k, name, sizeof(name)), k->cur_members,
		k->cur_size / MIB, codec, d->nr_rows, (unsigned long long)c->pairs,
		buddy_target_name(c->target), was,
		buddy_target_name(c->threshold_target),
		c->mostly_zero ? "yes" : "no", over, 100.0 * c->buddy_frac,
		c->ratio);
	k->logged_target = c->target;
}

/* The profile changes of this decision, installed and saved. */
static void act_profiles(struct buddyd *b, const struct bd_decision *d)
{
	struct buddy_profile_entry *e;
	char name[BUDDY_LABEL_ESC_MAX + 64];
	unsigned int n = 0;
	int r;

	if (!d->n)
		return;
	e = calloc(d->n, sizeof(*e));
	if (!e) {
		bd_err("out of memory");
		return;
	}
	for (size_t u = 0; u < d->n; u++) {
		const struct bd_key *k = &b->win.keys[d->key[u]];
		const struct buddy_profile_entry *old;
		unsigned int codec = bd_key_codec(k);

		if (!k->label[0])
			continue;	/* nothing to key a profile by */
		/*
		 * Moving to its profile's codec: the profile says codec and
		 * target already; the heuristic's target is for the old one.
		 */
		if (d->codec[u] != BUDDY_CODEC_DEFAULT)
			continue;
		old = buddy_profile_find(&b->profiles, k->uid, k->label);
		/* the codec a profile chose stays (Codec=profile) */
		if (old && !b->conf.codec_keep &&
		    old->codec != BUDDY_CODEC_DEFAULT)
			codec = old->codec;
		if (old && old->target == d->ch[u].target &&
		    old->codec == codec)
			continue;
		if (b->conf.mode == BD_MODE_DRY_RUN) {
			bd_info("dry run: would set profile %s: %s %s (was %s)",
				unit_name(k, name, sizeof(name)),
				buddy_target_name(d->ch[u].target),
				buddy_codec_name(codec),
				old ? buddy_target_name(old->target) : "none");
			continue;
		}
		e[n].uid = k->uid;
		e[n].target = d->ch[u].target;
		e[n].codec = codec;
		memcpy(e[n].label, k->label, BUDDY_LABEL_LEN);
		n++;
	}
	if (!n)
		goto out;
	r = buddy_profile_set(b->devfd, e, n, 0);
	if (r) {
		bd_err("BUDDY_IOC_PROFILE_SET: %s: %s (will retry)",
		       strerror(-r), buddy_strerror(r, BUDDY_OP_PROFILE));
		goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct buddy_profile_entry *p = &e[i], *old;
		char esc[BUDDY_LABEL_ESC_MAX];

		old = buddy_profile_find(&b->profiles, p->uid, p->label);
		buddy_label_escape(p->label, esc, sizeof(esc), true);
		bd_info("profile uid=%u label=\"%s\": %s %s (was %s)", p->uid,
			esc, buddy_target_name(p->target),
			buddy_codec_name(p->codec),
			old ? buddy_target_name(old->target) : "none");
		r = buddy_profile_put(&b->profiles, p);
		if (r < 0)
			bd_err("profile uid=%u label=\"%s\": not kept: %s", p->uid,
			       esc, r == -ENOSPC ? "the table is full" :
			       strerror(-r));
	}
	r = bd_state_save(b->conf.state_file, &b->profiles);
	if (r)
		bd_err("%s: cannot save the profiles: %s", b->conf.state_file,
		       strerror(-r));
	else
		bd_info("%s: saved %zu profiles", b->conf.state_file,
			b->profiles.n);
out:
	free(e);
}

static bool failed_before(struct buddyd *b, uint64_t id, unsigned int target,
			  unsigned int codec)
{
	for (size_t i = 0; i < b->nfailed; i++)
		if (b->failed[i].id == id && b->failed[i].target == target &&
		    b->failed[i].codec == codec)
			return true;
	return false;
}

static void remember_failure(struct buddyd *b, uint64_t id,
			     unsigned int target, unsigned int codec)
{
	if (b->nfailed == b->failcap) {
		size_t cap = b->failcap ? 2 * b->failcap : 16;
		void *v = realloc(b->failed, cap * sizeof(*b->failed));

		if (!v)
			return;
		b->failed = v;
		b->failcap = cap;
	}
	b->failed[b->nfailed++] = (struct failed){ id, target, codec };
}

/* Forget failures of allocations that are gone. */
static void prune_failures(struct buddyd *b)
{
	size_t j = 0;

	for (size_t i = 0; i < b->nfailed; i++) {
		bool live = false;

		for (size_t s = 0; s < b->nst && !live; s++)
			live = b->st[s].id == b->failed[i].id;
		if (live)
			b->failed[j++] = b->failed[i];
	}
	b->nfailed = j;
}

static const struct buddy_alloc_stat *stat_of(struct buddyd *b, uint64_t id)
{
	for (size_t i = 0; i < b->nst; i++)
		if (b->st[i].id == id)
			return &b->st[i];
	return NULL;
}

static void act_live(struct buddyd *b, const struct bd_decision *d)
{
	struct bd_move *mv;
	size_t n;

	if (!b->nst)
		return;
	mv = calloc(b->nst, sizeof(*mv));
	if (!mv) {
		bd_err("out of memory");
		return;
	}
	prune_failures(b);
	n = bd_plan_live(&b->win, d, b->st, b->nst, mv);
	for (size_t i = 0; i < n; i++) {
		const struct buddy_alloc_stat *st = stat_of(b, mv[i].id);
		char what[BUDDY_LABEL_ESC_MAX + 128], esc[BUDDY_LABEL_ESC_MAX];
		char comm[sizeof(st->comm) + 1], lab[BUDDY_LABEL_LEN];
		char how[64];
		uint64_t t0;
		int r;

		memcpy(comm, st->comm, sizeof(st->comm));
		comm[sizeof(st->comm)] = 0;
		memcpy(lab, st->label, BUDDY_LABEL_LEN);
		lab[BUDDY_LABEL_LEN - 1] = 0;
		buddy_label_escape(lab, esc, sizeof(esc), true);
		snprintf(what, sizeof(what),
			 "allocation %llu (uid=%u label=\"%s\" pid=%u comm=%s, %.2f MiB)",
			 (unsigned long long)st->id, st->owner_uid, esc,
			 st->owner_pid, comm, st->size / MIB);
		/* "2x -> 4x" or, with a codec change, "2x bpc -> 4x zvc" */
		if (mv[i].codec != BUDDY_CODEC_DEFAULT)
			snprintf(how, sizeof(how), "%s %s -> %s %s",
				 buddy_target_name(mv[i].from),
				 buddy_codec_name(mv[i].from_codec),
				 buddy_target_name(mv[i].to),
				 buddy_codec_name(mv[i].codec));
		else
			snprintf(how, sizeof(how), "%s -> %s",
				 buddy_target_name(mv[i].from),
				 buddy_target_name(mv[i].to));
		if (b->conf.mode != BD_MODE_LIVE) {
			/* dry run: say once what --apply=live would do */
			if (!failed_before(b, mv[i].id, mv[i].to, mv[i].codec)) {
				bd_info("dry run: would retarget %s: %s", what,
					how);
				remember_failure(b, mv[i].id, mv[i].to,
						 mv[i].codec);
			}
			continue;
		}
		t0 = bd_now_usec();
		r = buddy_set_target(b->devfd, mv[i].id, mv[i].to, mv[i].codec);
		if (!r) {
			bd_info("retarget %s: %s in %.1f ms%s", what, how,
				(bd_now_usec() - t0) / 1000.0,
				mv[i].codec != BUDDY_CODEC_DEFAULT ?
				" (the profile's codec; re-encoded)" : "");
			if (mv[i].codec != BUDDY_CODEC_DEFAULT)
				b->codec_changes++;
		} else if (r == -ENOENT) {
			bd_debug("retarget %s: gone meanwhile", what);
		} else if (failed_before(b, mv[i].id, mv[i].to, mv[i].codec)) {
			bd_debug("retarget %s: %s: %s again", what, how,
				 strerror(-r));
		} else {
			bd_log(r == -ENOSPC || r == -E2BIG ? LOG_WARNING : LOG_ERR,
			       "retarget %s: %s: BUDDY_IOC_SET_TARGET: %s: left at %s %s",
			       what, how, strerror(-r),
			       buddy_target_name(mv[i].from),
			       buddy_codec_name(mv[i].from_codec));
			remember_failure(b, mv[i].id, mv[i].to, mv[i].codec);
		}
	}
	free(mv);
}

/*
 * Decide on the window; log the decisions that are new or changed and act
 * on them.  @d is kept for the report (free it with bd_decision_free()).
 */
int manager_decide(struct buddyd *b, struct bd_decision *d)
{
	struct buddy_heur_params p;
	bool changed = false;
	int r;

	heur_params(b, &p);
	r = bd_decide(&b->win, &p, d);
	if (r) {
		bd_err("deciding: %s", strerror(-r));
		return r;
	}
	if (d->err == -EINVAL || d->err == -EOVERFLOW) {
		bd_err("the heuristic failed: %s", strerror(-d->err));
		return d->err;
	}
	if (!b->conf.codec_keep)
		bd_choose_codecs(&b->win, d, &b->profiles);
	for (size_t u = 0; u < d->n; u++) {
		if (b->win.keys[d->key[u]].logged_target != d->ch[u].target) {
			log_decision(b, d, u);
			changed = true;
		}
	}
	bd_log(changed || b->once ? LOG_INFO : LOG_DEBUG,
	       "decision: %zu units (%zu pending): ratio %.2fx, expected buddy accesses %.2f%%, needs device %.2f MiB and carve-out %.2f MiB of %.2f and %.2f; %u capacity steps",
	       d->n, d->pending, d->res.ratio, 100.0 * d->res.buddy_frac,
	       d->res.device_bytes / MIB, d->res.buddy_bytes / MIB,
	       d->params.device_bytes / MIB, d->params.carveout_bytes / MIB,
	       d->res.steps);
	if (!b->once)
		bd_notifyf("STATUS=%zu units (%zu pending): ratio %.2fx, expected buddy accesses %.2f%%",
			   d->n, d->pending, d->res.ratio,
			   100.0 * d->res.buddy_frac);
	if (d->err == -ENOSPC)
		bd_log(changed || b->once ? LOG_WARNING : LOG_DEBUG,
		       "the pools cannot hold every unit at its Buddy Threshold target (heuristic: ENOSPC); acting on the targets reached");
	act_profiles(b, d);
	if (b->conf.mode == BD_MODE_LIVE || b->conf.mode == BD_MODE_DRY_RUN)
		act_live(b, d);
	return 0;
}
