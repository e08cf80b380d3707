// SPDX-License-Identifier: GPL-2.0
/*
 * run_report.c - the report of `buddyctl run`: the program's buddy
 * allocations per label and in total, the modeled link time swept over
 * link bandwidths, and the two baselines (Documentation/profiler.rst,
 * "buddyctl run").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "core/link_model.h"
#include "lib/libbuddy.h"
#include "launch.h"
#include "run_priv.h"
#include "tools/common/replace_file.h"

static const unsigned int sweep_gbps[] = { 50, 100, 150, 200, 16 };

#define NSWEEP	5	/* entries of sweep_gbps */

/* A module parameter of buddy.ko, or an "inproc:" option, or @def. */
static unsigned int link_param(const struct run_opts *o, const char *name,
			       unsigned int def)
{
	const char *dev = o->device ? o->device : getenv("BUDDY_DEVICE");
	char path[256], buf[32];
	unsigned long v;
	FILE *f;

	if (dev && !strncmp(dev, "inproc:", 7)) {
		const char *p = strstr(dev, name);

		v = p && p[strlen(name)] == '=' ?
		    strtoul(p + strlen(name) + 1, NULL, 10) : 0;
		return v ? v : def;
	}
	snprintf(path, sizeof(path), "%s/%s", BUDDY_PARAM_DIR, name);
	f = fopen(path, "re");
	if (!f)
		return def;
	v = fgets(buf, sizeof(buf), f) ? strtoul(buf, NULL, 10) : 0;
	if (v)
		def = v;
	fclose(f);
	return def;
}

static struct run_label *label_get(struct run_label **ls, size_t *n,
				  const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*ls)[i].name, name))
			return &(*ls)[i];
	*ls = realloc(*ls, (*n + 1) * sizeof(**ls));
	if (!*ls) {
		run_err("out of memory");
		exit(1);
	}
	memset(&(*ls)[*n], 0, sizeof(**ls));
	snprintf((*ls)[*n].name, BUDDY_LABEL_LEN, "%s", name);
	return &(*ls)[(*n)++];
}

static void add(struct run_label *l, const struct brun_rec *r)
{
	const struct buddy_counters *c = &r->st.counters;

	l->target = r->target;
	l->from_profile |= r->flags & BRUN_R_PROFILE;
	if (r->flags & BRUN_R_FALLBACK) {
		l->nfallback++;
		l->fallback_bytes += r->size;
		if (!l->err)
			l->err = r->err;
		return;
	}
	l->nallocs++;
	l->logical += r->size;
	if (r->state != BRUN_FINAL || !(r->flags & BRUN_R_STAT)) {
		l->nunfinished++;
		return;
	}
	l->device += r->st.device_bytes;
	l->buddy += r->st.buddy_bytes;
	l->faults += r->st.window_faults;
	l->hits += r->st.window_hits;
	l->writebacks += r->st.window_writebacks;
	l->entries += c->entry_reads + c->entry_writes;
	l->buddy_acc += c->buddy_accesses;
	l->bud_sectors += c->buddy_sectors_read + c->buddy_sectors_written;
	l->dev_sectors += c->device_sectors_read + c->device_sectors_written;
	l->link_ns += r->st.link_ns;
	l->link_req += r->st.link_requests;
}

static void sum(struct run_label *t, const struct run_label *l)
{
	t->nallocs += l->nallocs;
	t->nfallback += l->nfallback;
	t->nunfinished += l->nunfinished;
	t->logical += l->logical;
	t->fallback_bytes += l->fallback_bytes;
	t->device += l->device;
	t->buddy += l->buddy;
	t->faults += l->faults;
	t->hits += l->hits;
	t->writebacks += l->writebacks;
	t->entries += l->entries;
	t->buddy_acc += l->buddy_acc;
	t->bud_sectors += l->bud_sectors;
	t->dev_sectors += l->dev_sectors;
	t->link_ns += l->link_ns;
	if (!t->err)
		t->err = l->err;
	t->link_req += l->link_req;
}

static int cmp_logical(const void *a, const void *b)
{
	const struct run_label *x = a, *y = b;

	if (x->logical + x->fallback_bytes != y->logical + y->fallback_bytes)
		return x->logical + x->fallback_bytes <
		       y->logical + y->fallback_bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * The link model (core/link_model.h's formula itself) on @t's totals at @gbps,
 * in ns: rounded once, not per I/O call as the device sums it.
 */
static double model_ns(const struct run_label *t, unsigned int gbps,
		       unsigned int lat, unsigned int dev_gbps)
{
	struct buddy_counters c = {
		.buddy_sectors_read = t->bud_sectors,
		.device_sectors_read = t->dev_sectors,
	};

	return buddy_link_ps(&c, t->link_req, gbps, lat, dev_gbps) / 1e3;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / b : 0;
}

static void row(FILE *f, const struct run_label *l, const char *name)
{
	fprintf(f, "%-16s %5s %6llu %10.1f %10.1f %10.1f %6.2f %8llu %8llu %8llu %6.1f %10.1f %9llu %9.3f %4llu\n",
		name, l->nallocs && strcmp(name, "total") ?
		buddy_target_name(l->target) : "-",
		(unsigned long long)l->nallocs, l->logical / 1048576.0,
		l->device / 1048576.0, l->buddy / 1048576.0,
		ratio(l->logical, l->device),
		(unsigned long long)l->faults, (unsigned long long)l->hits,
		(unsigned long long)l->writebacks,
		100 * ratio(l->buddy_acc, l->entries),
		(double)l->bud_sectors * BUDDY_SECTOR_SIZE / 1048576.0,
		(unsigned long long)l->link_req, l->link_ns / 1e6,
		(unsigned long long)l->nfallback);
}

static json_object *jlabel(const struct run_label *l)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "label", json_object_new_string(l->name));
	json_object_object_add(j, "target",
			       json_object_new_string(buddy_target_name(l->target)));
	json_object_object_add(j, "from_profile",
			       json_object_new_boolean(l->from_profile));
#define J(f) json_object_object_add(j, #f, json_object_new_int64(l->f))
	J(nallocs); J(nfallback); J(nunfinished); J(logical);
	J(fallback_bytes); J(device); J(buddy); J(faults); J(hits);
	J(writebacks); J(entries); J(buddy_acc); J(bud_sectors);
	J(dev_sectors); J(link_ns); J(link_req);
#undef J
	json_object_object_add(j, "expansion",
			       json_object_new_double(ratio(l->logical, l->device)));
	json_object_object_add(j, "link_bytes",
			       json_object_new_int64(l->bud_sectors * BUDDY_SECTOR_SIZE));
	if (l->err)
		json_object_object_add(j, "fallback_errno",
				       json_object_new_int(l->err));
	return j;
}

/*
 * The device as the program will see it: pool sizes, nodes.  The runner
 * opens it once itself (for the in-process device: one with the same
 * options).  false when it cannot be opened.
 */
static bool device_info(const struct run_opts *o, struct buddy_info *info)
{
	int fd = buddy_open(o->device);
	bool ok;

	if (fd < 0)
		return false;
	ok = !buddy_get_info(fd, info);
	buddy_close(fd);
	return ok;
}

/*
 * The two baselines, for the same program and the same window, both
 * models computed from the window's counters:
 *
 * 1x / none: the data uncompressed in the device pool; every window fault
 * reads and every write-back writes one whole 4 KiB page of device memory,
 * nothing crosses the link.  It needs the whole footprint in the pool.
 *
 * The footprint of both is the peak of the buddy bytes live at one time
 * (over all processes), not the bytes allocated in all: a program that
 * allocates and frees per step needs its largest step in the pool.
 *
 * Unified Memory oversubscription (a model, standing in for the paper's
 * Fig. 14 measurement on V100/POWER9): the footprint beyond the device
 * pool lives in host memory.  A window fault lands on such data with the
 * probability overflow / footprint; each such fault migrates one page of
 * --um-page bytes over the link (and evicts one the same size: a
 * write-back migrates one more when the page was dirty), each migration
 * paying the link latency once.  No prefetching.  The counters say how
 * many pages faulted, not which, so locality between faults is unknown:
 * um_ns assumes none (every such fault migrates a whole --um-page page,
 * paid for bytes the program may never touch), um_local_ns assumes all
 * (the 4 KiB faults fill each --um-page page before the next is needed:
 * um_page / 4 KiB faults share one migration).  A real program lies in
 * between; at 4 KiB pages the two are equal.
 */
struct baseline {
	double none_ns;		/* 1x: device traffic only */
	double um_ns;		/* UM: link migrations + device traffic */
	double um_bytes;	/* migrated over the link */
	double um_migrations;
	double um_local_ns;	/* the same with full locality between faults */
	double overflow;	/* fraction of the footprint not in the pool */
};

static void baselines(const struct run_label *t, uint64_t foot_bytes,
		      uint64_t pool, uint64_t um_page, unsigned int gbps,
		      unsigned int lat, unsigned int dev_gbps, struct baseline *b)
{
	double pages = (double)t->faults + t->writebacks;
	double foot = (double)foot_bytes;

	b->none_ns = pages * 4096 / dev_gbps;
	b->overflow = foot > pool && foot > 0 ? (foot - pool) / foot : 0;
	b->um_migrations = pages * b->overflow;
	b->um_bytes = b->um_migrations * um_page;
	b->um_ns = b->um_bytes / gbps + b->um_migrations * lat +
		   pages * (1 - b->overflow) * 4096 / dev_gbps;
	/* full locality: the same bytes of 4 KiB faults, fewer migrations */
	b->um_local_ns = b->um_migrations * 4096 / gbps +
			 b->um_migrations * 4096 / um_page * lat +
			 pages * (1 - b->overflow) * 4096 / dev_gbps;
}

/* Why allocations fell back: errno, how many, their bytes. */
struct run_reason {
	int err;
	uint64_t n, bytes;
};

#define NREASONS	16

/* What a report is made of. */
struct run_sum {
	struct run_label *ls, tot;	/* per label, by logical bytes; all */
	size_t nl;
	bool native;			/* a device without mmap */
	uint64_t foot;			/* peak live buddy bytes */
	struct run_reason why[NREASONS];	/* by first occurrence */
	unsigned int nwhy;
	const char *base_what;		/* "given", "plain run", NULL: none */
	unsigned int lat, dgb, lgb;	/* the link model's parameters */
	double run_s, base;		/* the run's time, the sweep's base */
	bool have_info;
	struct buddy_info info;
	struct baseline bl[NSWEEP];
};

static void add_reason(struct run_sum *s, const struct brun_rec *r)
{
	unsigned int i;

	for (i = 0; i < s->nwhy && s->why[i].err != r->err; i++)
		;
	if (i == s->nwhy) {
		if (s->nwhy == NREASONS)
			i--;		/* the last slot takes the rare rest */
		else
			s->why[s->nwhy++].err = r->err;
	}
	s->why[i].n++;
	s->why[i].bytes += r->size;
}

/* What an errno of a fallback means here. */
static const char *reason_name(int err)
{
	switch (err) {
	case 0:		return "the device could not be opened";
	case EINVAL:	return "refused (an alignment above the largest served)";
	case E2BIG:	return "larger than the device takes";
	case ENOSPC:	return "the pools are full";
	default:	return strerror(err);
	}
}

static void collect(const struct run_opts *o, const struct brun_hdr *h,
		    double run_s, struct run_sum *s)
{
	const struct brun_rec *recs = BRUN_RECS(h);
	uint64_t n = h->next_rec < h->nrecs ? h->next_rec : h->nrecs, i;
	size_t k;

	memset(s, 0, sizeof(*s));
	snprintf(s->tot.name, sizeof(s->tot.name), "total");
	s->lat = link_param(o, "link_latency_ns", BUDDY_LINK_LATENCY_NS_DEFAULT);
	s->dgb = link_param(o, "device_gbps", BUDDY_DEVICE_GBPS_DEFAULT);
	s->lgb = link_param(o, "link_gbps", BUDDY_LINK_GBPS_DEFAULT);
	s->run_s = run_s;
	s->base = o->base_time > 0 ? o->base_time : 0;
	s->base_what = o->base_time <= 0 ? NULL :
		       o->base_run ? "of a plain run" : "given";
	s->have_info = device_info(o, &s->info);
	/* every allocation may have fallen back: the device says what it is */
	s->native = h->nr_dev_inproc > 0;
	s->foot = h->peak_live_bytes;
	for (i = 0; i < n; i++) {
		const struct brun_rec *r = &recs[i];

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == BRUN_EMPTY)
			continue;
		s->native |= r->flags & BRUN_R_NATIVE;
		if (r->flags & BRUN_R_FALLBACK)
			add_reason(s, r);
		add(label_get(&s->ls, &s->nl, r->label), r);
	}
	qsort(s->ls, s->nl, sizeof(*s->ls), cmp_logical);
	for (k = 0; k < s->nl; k++)
		sum(&s->tot, &s->ls[k]);
	for (k = 0; k < NSWEEP; k++)
		baselines(&s->tot, s->foot, s->info.device_bytes, o->um_page,
			  sweep_gbps[k], s->lat, s->dgb, &s->bl[k]);
}

/* (@base + @ns) / @base: the modeled slowdown, 0 without a base. */
static double slowdown(double base, double ns)
{
	return base > 0 ? (base + ns / 1e9) / base : 0;
}

/* The slowdown as a column: "-" without a base. */
static const char *slow_col(char *buf, size_t len, double base, double ns)
{
	if (base > 0)
		snprintf(buf, len, "%9.4fx", slowdown(base, ns));
	else
		snprintf(buf, len, "%10s", "-");
	return buf;
}

/* The run, the table per label and what did not go to buddy memory. */
static void text_table(FILE *f, const struct run_opts *o,
		       const struct brun_hdr *h, int status,
		       const struct run_sum *s)
{
	char st[64];
	size_t k;

	fprintf(f, "\nbuddyctl run: %s, %llu process(es), %.3f s%s%s%s\n",
		o->argv[0], (unsigned long long)h->nr_procs, s->run_s,
		WIFSIGNALED(status) ? ", " : "",
		WIFSIGNALED(status) ? eng_status_text(status, st, sizeof(st)) : "",
		s->native ? "; in ordinary memory (in-process device)" : "");
	if (s->native)
		fprintf(f, "device without mmap (in-process): the program ran in ordinary memory and\n"
			"its data was written to the device at free/exit; no window figures.\n");
	fprintf(f, "footprint: at most %.1f MiB of buddy memory live at one time (%.1f MiB allocated in all)\n",
		s->foot / 1048576.0, s->tot.logical / 1048576.0);
	if (h->nr_dev_open_failed)
		fprintf(f, "device: could not be opened in %llu process(es): %s\n",
			(unsigned long long)h->nr_dev_open_failed,
			strerror(h->dev_open_err));
	fprintf(f, "%-16s %5s %6s %10s %10s %10s %6s %8s %8s %8s %6s %10s %9s %9s %4s\n",
		"label", "tgt", "allocs", "logic MiB", "dev MiB", "buddy MiB",
		"expand", "faults", "hits", "wbacks", "bud%", "link MiB",
		"link reqs", "link ms", "fb");
	for (k = 0; k < s->nl && (!o->show_labels || k < o->show_labels); k++)
		row(f, &s->ls[k], s->ls[k].name);
	if (k < s->nl)
		fprintf(f, "(%zu more labels)\n", s->nl - k);
	row(f, &s->tot, "total");
	fprintf(f, "fell back to ordinary memory: %llu allocation(s), %.1f MiB at or above min-size; "
		"%llu below it (%.1f MiB)\n",
		(unsigned long long)s->tot.nfallback,
		s->tot.fallback_bytes / 1048576.0,
		(unsigned long long)h->nr_small, h->bytes_small / 1048576.0);
	for (unsigned int i = 0; i < s->nwhy; i++)
		fprintf(f, "  %s (%s): %llu allocation(s), %.1f MiB\n",
			s->why[i].err ? strerrorname_np(s->why[i].err) : "-",
			reason_name(s->why[i].err),
			(unsigned long long)s->why[i].n,
			s->why[i].bytes / 1048576.0);
	if (s->tot.nunfinished)
		fprintf(f, "%llu allocation(s) without final figures (the process exec'd or _exit'ed)\n",
			(unsigned long long)s->tot.nunfinished);
	if (h->nr_forks)
		fprintf(f, "fork: %llu, buddy mappings copied privately into children: %llu (%.1f MiB)\n",
			(unsigned long long)h->nr_forks,
			(unsigned long long)h->nr_private_copies,
			h->bytes_private_copies / 1048576.0);
	if (h->nr_rec_dropped)
		fprintf(f, "records dropped (raise --records): %llu\n",
			(unsigned long long)h->nr_rec_dropped);
}

/* The modeled link time swept over link bandwidths. */
static void text_sweep(FILE *f, const struct run_opts *o,
		       const struct run_sum *s)
{
	fprintf(f, "\nmodeled link time vs buddy-link bandwidth (latency %u ns once per link request,\n"
		"device %u GB/s; a model, not a measurement):\n", s->lat, s->dgb);
	if (s->base_what)
		fprintf(f, "slowdown against a base time of %.3f s (%s)\n",
			s->base, s->base_what);
	else
		fprintf(f, "no slowdown: no base time (--base-run or --base-time; this run's own %.3f s\n"
			"includes the interposer and, in a guest, the emulation)\n", s->run_s);
	fprintf(f, "%-14s %12s %10s\n", "link", "link ms", s->base_what ? "slowdown" : "");
	for (size_t k = 0; k < NSWEEP; k++) {
		double ns = model_ns(&s->tot, sweep_gbps[k], s->lat, s->dgb);

		fprintf(f, "%4u GB/s%-5s %12.3f", sweep_gbps[k],
			sweep_gbps[k] == 16 ? " PCIe" : "", ns / 1e6);
		if (s->base_what)
			fprintf(f, " %9.4fx", slowdown(s->base, ns));
		fputc('\n', f);
	}
	fprintf(f, "(the device's own link_gbps is %u GB/s: %.3f ms modeled, %.3f ms in ALLOC_STAT)\n",
		s->lgb, model_ns(&s->tot, s->lgb, s->lat, s->dgb) / 1e6,
		s->tot.link_ns / 1e6);
}

/*
 * Whether the window thrashed: nearly one write-back per fault (3 in 4 or
 * more: most faults evicted a dirty page; a last pass that only reads
 * evicts clean ones) and more faults than twice the pages ever live
 * (pages fault again after their eviction).  A program whose data fits
 * faults each page once and writes it back once at exit: 1 per fault
 * too, but no more faults than pages.
 */
static bool thrashed(const struct run_sum *s)
{
	const struct run_label *t = &s->tot;

	return !s->native && s->foot && t->faults >= 1024 &&
	       t->writebacks >= 0.75 * t->faults &&
	       t->faults > 2 * ((s->foot + 4095) / 4096);
}

/* The window the run's faults imply: one that holds the live data. */
static uint64_t window_mb_needed(const struct run_sum *s)
{
	return (s->foot + (1 << 20) - 1) >> 20;
}

/* The window's figures: what hits are, whether it thrashed. */
static void text_window(FILE *f, const struct run_opts *o,
			const struct run_sum *s)
{
	const struct run_label *t = &s->tot;

	if (s->native || !(t->faults + t->writebacks))
		return;
	fprintf(f, "\nwindow: %llu faults, %llu write-backs (%.2f per fault), %llu hits (faults on a\n"
		"page already resident, e.g. after a write-back; accesses through the mapping\n"
		"itself never reach the module, so 0 is usual)\n",
		(unsigned long long)t->faults, (unsigned long long)t->writebacks,
		ratio(t->writebacks, t->faults), (unsigned long long)t->hits);
	if (thrashed(s))
		fprintf(f, "warning: the window thrashed: %.2f write-backs per fault, %.1f faults per page\n"
			"of the %.1f MiB live at the peak; the working set exceeds window_mb=%u.  A window\n"
			"of window_mb=%llu holds it (each page would fault once).\n",
			ratio(t->writebacks, t->faults),
			(double)t->faults / ((s->foot + 4095) / 4096),
			s->foot / 1048576.0,
			link_param(o, "window_mb", 16),
			(unsigned long long)window_mb_needed(s));
}

/* The two baselines for the same window, and the pools' NUMA distance. */
static void text_baselines(FILE *f, const struct run_opts *o,
			   const struct run_sum *s)
{
	const struct run_label *tot = &s->tot;
	const struct baseline *bl = s->bl;

	if (!s->have_info) {
		fprintf(f, "\nbaselines: the device could not be opened for its pool size\n");
	} else if (s->native || !(tot->faults + tot->writebacks)) {
		fprintf(f, "\nbaselines: they need the window's faults and write-backs "
			"(a device with mmap: buddy.ko)\n");
	} else {
		fprintf(f, "\nbaselines for the same window (models; footprint %.1f MiB, the peak of live\n"
			"buddy bytes; device pool %.1f MiB, %.1f%% of the footprint beyond it;\n"
			"UM migrates %llu KiB pages):\n",
			s->foot / 1048576.0,
			s->info.device_bytes / 1048576.0, 100 * bl[0].overflow,
			(unsigned long long)(o->um_page >> 10));
		fprintf(f, "%-14s %12s %10s %12s %10s %12s %12s\n", "link",
			"buddy ms", "slowdown", "UM ms", "slowdown", "UM MiB",
			"UM-local ms");
		for (size_t k = 0; k < NSWEEP; k++) {
			double ns = model_ns(tot, sweep_gbps[k], s->lat, s->dgb);
			char a[24], b[24];

			fprintf(f, "%4u GB/s%-5s %12.3f %s %12.3f %s %12.1f %12.3f\n",
				sweep_gbps[k], sweep_gbps[k] == 16 ? " PCIe" : "",
				ns / 1e6, slow_col(a, sizeof(a), s->base, ns),
				bl[k].um_ns / 1e6,
				slow_col(b, sizeof(b), s->base, bl[k].um_ns),
				bl[k].um_bytes / 1048576.0, bl[k].um_local_ns / 1e6);
		}
		fprintf(f, "(UM: no locality between faults, each migrates a whole page; UM-local: full\n"
			"locality, %llu KiB / 4 KiB faults share one migration; a program lies in between)\n",
			(unsigned long long)(o->um_page >> 10));
		char a[24];

		fprintf(f, "1x/none: %.3f ms of device traffic, slowdown %s; needs %.1f MiB of device pool (%s)\n",
			bl[0].none_ns / 1e6,
			slow_col(a, sizeof(a), s->base, bl[0].none_ns),
			s->foot / 1048576.0,
			s->foot <= s->info.device_bytes ? "fits" : "does not fit");
	}
	if (s->have_info && s->info.device_node >= 0 &&
	    s->info.buddy_node >= 0 && numa_available() >= 0)
		fprintf(f, "pools: device on node %d, carve-out on node %d, numa_distance %d\n",
			s->info.device_node, s->info.buddy_node,
			numa_distance(s->info.device_node, s->info.buddy_node));
}

/* The baselines as JSON. */
static json_object *json_baselines(const struct run_opts *o,
				   const struct run_sum *s)
{
	json_object *b = json_object_new_object(), *sw = json_object_new_array();

	json_object_object_add(b, "device_pool",
			       json_object_new_int64(s->info.device_bytes));
	json_object_object_add(b, "footprint", json_object_new_int64(s->foot));
	json_object_object_add(b, "overflow",
			       json_object_new_double(s->bl[0].overflow));
	json_object_object_add(b, "um_page", json_object_new_int64(o->um_page));
	json_object_object_add(b, "none_ns",
			       json_object_new_double(s->bl[0].none_ns));
	for (size_t k = 0; k < NSWEEP; k++) {
		json_object *s1 = json_object_new_object();

		json_object_object_add(s1, "gbps", json_object_new_int(sweep_gbps[k]));
		json_object_object_add(s1, "um_ns", json_object_new_double(s->bl[k].um_ns));
		json_object_object_add(s1, "um_bytes", json_object_new_double(s->bl[k].um_bytes));
		json_object_object_add(s1, "um_local_ns",
				       json_object_new_double(s->bl[k].um_local_ns));
		json_object_array_add(sw, s1);
	}
	json_object_object_add(b, "um", sw);
	return b;
}

/*
 * The report as JSON, to @f, else to @path ("-": stdout).  0, or -1 when
 * it cannot be written.
 */
static int json_report(const struct run_opts *o, const struct brun_hdr *h,
		       const struct run_sum *s, FILE *f, const char *path)
{
	json_object *j = json_object_new_object(), *a = json_object_new_array();
	json_object *sw = json_object_new_array();
	int ret = 0;
	size_t k;

	for (k = 0; k < s->nl; k++)
		json_object_array_add(a, jlabel(&s->ls[k]));
	json_object_object_add(j, "labels", a);
	json_object_object_add(j, "total", jlabel(&s->tot));
	json_object_object_add(j, "native", json_object_new_boolean(s->native));
	json_object_object_add(j, "run_s", json_object_new_double(s->run_s));
	json_object_object_add(j, "base_s", s->base_what ?
			       json_object_new_double(s->base) : NULL);
	json_object_object_add(j, "base", json_object_new_string(
			       !s->base_what ? "none" : o->base_run ?
			       "plain run" : "given"));
	json_object_object_add(j, "peak_live_bytes",
			       json_object_new_int64(s->foot));
	json_object_object_add(j, "window_thrashed",
			       json_object_new_boolean(thrashed(s)));
	if (thrashed(s))
		json_object_object_add(j, "window_mb_needed",
				       json_object_new_int64(window_mb_needed(s)));
	{
		json_object *fb = json_object_new_array();

		for (unsigned int i = 0; i < s->nwhy; i++) {
			json_object *x = json_object_new_object();

			json_object_object_add(x, "errno",
					       json_object_new_int(s->why[i].err));
			json_object_object_add(x, "name", json_object_new_string(
					       s->why[i].err ?
					       strerrorname_np(s->why[i].err) : "-"));
			json_object_object_add(x, "allocs",
					       json_object_new_int64(s->why[i].n));
			json_object_object_add(x, "bytes",
					       json_object_new_int64(s->why[i].bytes));
			json_object_array_add(fb, x);
		}
		json_object_object_add(j, "fallbacks", fb);
	}
#define H(f) json_object_object_add(j, #f, json_object_new_int64(h->f))
	H(nr_procs); H(nr_small); H(bytes_small); H(nr_forks);
	H(nr_private_copies); H(bytes_private_copies);
	H(nr_dev_open_failed); H(nr_rec_dropped);
#undef H
	for (k = 0; k < NSWEEP; k++) {
		json_object *s1 = json_object_new_object();
		double ns = model_ns(&s->tot, sweep_gbps[k], s->lat, s->dgb);

		json_object_object_add(s1, "gbps", json_object_new_int(sweep_gbps[k]));
		json_object_object_add(s1, "link_ns", json_object_new_double(ns));
		if (s->base_what)
			json_object_object_add(s1, "slowdown", json_object_new_double(
					       slowdown(s->base, ns)));
		json_object_array_add(sw, s1);
	}
	json_object_object_add(j, "sweep", sw);
	if (s->have_info)
		json_object_object_add(j, "baselines", json_baselines(o, s));
	if (!f && strcmp(path, "-")) {
		if (json_object_to_file_ext(path, j, JSON_C_TO_STRING_PRETTY)) {
			run_err("%s: %s", path, strerror(errno));
			ret = -1;
		}
	} else {
		f = f ? f : stdout;
		fprintf(f, "%s\n", json_object_to_json_string_ext(j,
			JSON_C_TO_STRING_PRETTY));
		if (fflush(f) || ferror(f)) {
			run_err("writing the JSON report: %s", strerror(errno));
			ret = -1;
		}
	}
	json_object_put(j);
	return ret;
}

/*
 * More than half the tracked bytes fell back to ordinary memory: the
 * figures describe a run that hardly used buddy memory.  Said on stderr;
 * true unless --allow-fallback.
 */
static bool mostly_fallback(const struct run_opts *o, const struct run_sum *s)
{
	uint64_t all = s->tot.logical + s->tot.fallback_bytes;

	if (!all || 2 * s->tot.fallback_bytes <= all)
		return false;
	run_err("warning: %.1f of %.1f MiB tracked fell back to ordinary memory (%s): the figures are not those of buddy memory%s",
		s->tot.fallback_bytes / 1048576.0, all / 1048576.0,
		s->tot.err ? strerror(s->tot.err) : "see the report",
		o->allow_fallback ? "" : "; exit status 1 (--allow-fallback accepts such a run)");
	return !o->allow_fallback;
}

int run_report(struct run_opts *o, struct brun_hdr *h, double run_s,
	       int status)
{
	bool json_dash = o->json_out && !strcmp(o->json_out, "-");
	/* stdout is the JSON's alone when it goes there */
	FILE *f = json_dash && !o->json ? stderr : stdout;
	struct run_sum s;
	int ret = 0;

	collect(o, h, run_s, &s);
	if (o->out) {
		f = fopen(o->out, "we");
		if (!f) {
			run_err("%s: %s", o->out, strerror(errno));
			f = stderr;	/* the report is not lost */
			ret = -1;
		}
	}
	if (o->json) {
		if (json_report(o, h, &s, f, NULL))
			ret = -1;
	} else {
		text_table(f, o, h, status, &s);
		text_window(f, o, &s);
		text_sweep(f, o, &s);
		text_baselines(f, o, &s);
	}
	if (o->out && f != stdout && f != stderr && fclose(f)) {
		run_err("%s: %s", o->out, strerror(errno));
		ret = -1;
	}
	if (o->json_out && (!json_dash || o->out || !o->json) &&
	    json_report(o, h, &s, NULL, o->json_out))
		ret = -1;
	if (!ret && mostly_fallback(o, &s))
		ret = 1;
	free(s.ls);
	return ret;
}
