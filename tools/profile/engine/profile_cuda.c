// SPDX-License-Identifier: GPL-2.0
/*
 * profile_cuda.c - `buddyctl profile --cuda`: the CUDA memory of a PyTorch
 * program, measured by python/buddy/cuda's hook, in the report the engine
 * gives CPU programs.
 *
 * The hook (loaded into every Python process of the run through its
 * sitecustomize) snapshots the caching allocator's blocks at the start of
 * backward passes, sizes them with the codec core on the GPU machine and
 * writes one record file per process (python/buddy/cuda/records.py has the
 * format); the driver interposer (tools/profile/cuda_driver/) writes the
 * same records for any CUDA program.  prof_cuda_run() (cuda_run.c) runs
 * the command under either; prof_cuda_ingest() turns record files into
 * the engine's processes, snapshots, allocations and labels
 * (Documentation/dnn.rst, "Wiring into buddyctl profile"), so that
 * prof_report() gives Figs. 3, 7, 9, 10, the label table, -p and
 * --json as for a CPU program.  The blocks were read whole: no sampling.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "profile_priv.h"

#define REC_MAGIC	"buddy-cuda-profile"
#define REC_VERSION	"1"
#define NHIST		(PROF_NC * BUDDY_CODE_NR)
#define MAXF		(10 + NHIST + PROF_NC)	/* fields of a blk line */

/* ---- one record file ------------------------------------------------------------- */

struct rd {
	struct prof_run *r;
	const char *path;
	unsigned int line;
	int proc;			/* its run->procs index */
	double t0;			/* the hook's start, Unix time */
	/* its snapshots: local id -> run->snaps index */
	uint64_t *ids;
	unsigned int *snap_of;
	size_t nids, capids;
	int cur;			/* snapshot being read, -1: none */
	/* the current snapshot's segments: index -> address */
	uint64_t *seg_addr, *seg_size;
	size_t nsegs, capsegs;
	uint64_t *dropped;
	size_t ndropped, capdropped;
	uint64_t *kept;
	size_t nkept, capkept;
	bool ended;
	bool codecs;			/* its codecs record was read */
	/* segment unit: per segment of the current snapshot, its sums */
	struct prof_obs *seg_obs;
	int *seg_label;
	uint64_t *seg_lab_size;
};

static int bad(struct rd *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad(struct rd *d, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	prof_err("%s:%u: %s", d->path, d->line, msg);
	return -1;
}

/* A text field unescaped in place (records.py's escape()); -1 if bad. */
static int unescape(char *s)
{
	char *o = s;

	while (*s) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		switch (s[1]) {
		case '\\': *o++ = '\\'; s += 2; break;
		case 't': *o++ = '\t'; s += 2; break;
		case 'n': *o++ = '\n'; s += 2; break;
		case 'r': *o++ = '\r'; s += 2; break;
		case 'x': {
			char hex[3] = { s[2], s[2] ? s[3] : 0, 0 }, *end;
			long v = strtol(hex, &end, 16);

			if (!hex[0] || !hex[1] || *end)
				return -1;
			*o++ = (char)v;
			s += 4;
			break;
		}
		default:
			return -1;
		}
	}
	*o = 0;
	return 0;
}

static int num(struct rd *d, const char *s, const char *what, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!*s || *s == '-') {
		return bad(d, "%s %s is not a number of 0 or more", what, s);
	}
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return bad(d, "%s %s is not a number", what, s);
	return 0;
}

static int fnum(struct rd *d, const char *s, const char *what, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || !*s || !(*v >= 0))
		return bad(d, "%s %s is not a number of 0 or more", what, s);
	return 0;
}

/* The label named @name, made with @site when new (site NULL: must exist). */
static int label_named(struct prof_run *r, const char *name, const char *site)
{
	uint64_t h = bprof_fnv(BPROF_FNV_INIT, name, strlen(name));
	struct prof_label *l;

	for (size_t i = 0; i < r->nlabels; i++)
		if (r->labels[i].key == h && !strcmp(r->labels[i].name, name))
			return i;
	if (!site)
		return -1;
	GROW(r->labels, r->nlabels, r->caplabels);
	l = &r->labels[r->nlabels];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->key = h;
	l->kind = BPROF_KIND_HEAP;
	l->site = strdup(site);
	if (!l->site) {
		prof_err("out of memory");
		exit(1);
	}
	return r->nlabels++;
}

static uint64_t alloc_hash(int proc, uint64_t addr, uint64_t size, int label)
{
	uint64_t k[3] = { addr, size, ((uint64_t)proc << 32) | (uint32_t)label };

	return bprof_fnv(BPROF_FNV_INIT, k, sizeof(k));
}

/* run->seq_idx as a hash of the allocations by identity: index + 1. */
static size_t *alloc_slot(struct prof_run *r, int proc, uint64_t addr,
			  uint64_t size, int label)
{
	size_t k = alloc_hash(proc, addr, size, label) & (r->seq_cap - 1);

	for (; r->seq_idx[k]; k = (k + 1) & (r->seq_cap - 1)) {
		const struct prof_alloc *a = &r->allocs[r->seq_idx[k] - 1];

		if (a->proc == proc && a->addr == addr && a->size == size &&
		    a->label == label)
			break;
	}
	return &r->seq_idx[k];
}

static void alloc_rehash(struct prof_run *r)
{
	prof_seq_grow(r);
	for (size_t i = 0; i < r->nallocs; i++) {
		const struct prof_alloc *a = &r->allocs[i];

		*alloc_slot(r, a->proc, a->addr, a->size, a->label) = i + 1;
	}
}

/* The allocation of (@proc, @addr, @size, @label), found or made. */
static size_t alloc_at(struct prof_run *r, int proc, uint64_t addr,
		       uint64_t size, int label)
{
	struct prof_alloc *a;
	size_t *slot;

	if (2 * (r->nallocs + 1) > r->seq_cap)
		alloc_rehash(r);
	slot = alloc_slot(r, proc, addr, size, label);
	if (*slot)
		return *slot - 1;
	*slot = r->nallocs + 1;
	GROW(r->allocs, r->nallocs, r->capallocs);
	a = &r->allocs[r->nallocs];
	memset(a, 0, sizeof(*a));
	a->proc = proc;
	a->seq = r->nallocs + 1;
	a->addr = addr;
	a->size = size;
	a->kind = BPROF_KIND_HEAP;
	a->label = label;
	if (!r->labels[label].size)
		r->labels[label].size = size;
	return r->nallocs++;
}

/* One observation of allocation @i in the snapshot being read. */
static void observe(struct rd *d, size_t i, const struct prof_obs *o)
{
	struct prof_run *r = d->r;
	struct prof_alloc *a = &r->allocs[i];
	struct prof_snap *sn = &r->snaps[d->snap_of[d->cur]];
	struct prof_psnap *pp = &sn->pp[d->proc];
	struct prof_obs *ob;

	GROW(a->obs, a->nobs, a->capobs);
	ob = &a->obs[a->nobs++];
	*ob = *o;
	ob->snap = d->snap_of[d->cur];
	sn->allocs++;
	pp->allocs++;
	sn->bytes += a->size;
	pp->bytes += a->size;
	sn->readable += a->size;
	pp->readable += a->size;
	sn->sampled += o->sampled * BUDDY_ENTRY_BYTES;
	pp->sampled += o->sampled * BUDDY_ENTRY_BYTES;
}

/* The segment unit: each segment of the finished snapshot, its sums. */
static void flush_segments(struct rd *d)
{
	struct prof_run *r = d->r;

	if (d->cur < 0 || !r->o->cuda_segments)
		return;
	for (size_t g = 0; g < d->nsegs; g++) {
		if (d->seg_label[g] < 0)
			continue;	/* a segment without blocks */
		observe(d, alloc_at(r, d->proc, d->seg_addr[g], d->seg_size[g],
				    d->seg_label[g]), &d->seg_obs[g]);
	}
}

static int rec_proc(struct rd *d, char **f, int n)
{
	struct prof_run *r = d->r;
	struct prof_proc *p = &r->procs[d->proc];
	struct prof_cuda_proc *cp = &r->cuda->procs[d->proc];
	uint64_t pid;

	if (n != 13)
		return bad(d, "proc: %d fields, not 12", n - 1);
	if (r->procs[d->proc].pid)
		return bad(d, "a second proc record");
	if (num(d, f[1], "pid", &pid) || fnum(d, f[6], "t0", &d->t0))
		return -1;
	if (!pid || pid > INT_MAX)
		return bad(d, "pid %s is not a process id", f[1]);
	if (unescape(f[7]) || unescape(f[9]) || unescape(f[11]))
		return bad(d, "proc: a bad escape");
	p->pid = pid;
	p->gone = true;
	p->start = 1;
	cp->rank = atoi(f[3]);
	snprintf(cp->torch, sizeof(cp->torch), "%s", f[7]);
	snprintf(cp->backend, sizeof(cp->backend), "%s", f[8]);
	if (!strcmp(f[8], "driver"))
		r->cuda->driver = true;
	snprintf(cp->history, sizeof(cp->history), "%s", f[9]);
	snprintf(p->final.exe, sizeof(p->final.exe), "%s", f[11]);
	p->final.pid = pid;
	return 0;
}

static int rec_codecs(struct rd *d, char **f, int n)
{
	for (int c = 0; c < PROF_NC; c++) {
		if (c + 1 >= n || (strcmp(f[c + 1], "-") &&
				   strcasecmp(f[c + 1], prof_codecs[c]->name)))
			return bad(d, "codecs: not %s %s %s %s (or -) in that order",
				   prof_codecs[0]->name, prof_codecs[1]->name,
				   prof_codecs[2]->name, prof_codecs[3]->name);
		if (!strcmp(f[c + 1], "-"))
			d->r->cuda->unsized |= 1u << c;
	}
	d->codecs = true;
	return n == PROF_NC + 1 ? 0 : bad(d, "codecs: %d fields", n - 1);
}

static int rec_snap(struct rd *d, char **f, int n)
{
	struct prof_run *r = d->r;
	struct prof_snap *sn;
	uint64_t id, progress;
	double t, stop, copy, size;

	if (n != 11)
		return bad(d, "snap: %d fields, not 10", n - 1);
	if (num(d, f[1], "id", &id) || fnum(d, f[2], "t", &t) ||
	    num(d, f[3], "progress", &progress) ||
	    fnum(d, f[4], "stop_ms", &stop) || fnum(d, f[5], "copy_ms", &copy) ||
	    fnum(d, f[6], "size_ms", &size))
		return -1;
	for (size_t i = 0; i < d->nids; i++)
		if (d->ids[i] == id)
			return bad(d, "snapshot %llu twice",
				   (unsigned long long)id);
	flush_segments(d);
	GROW(d->ids, d->nids, d->capids);
	d->snap_of = prof_xrealloc(d->snap_of, d->capids * sizeof(*d->snap_of));
	d->ids[d->nids] = id;
	d->snap_of[d->nids] = r->nsnaps;
	d->cur = d->nids++;
	d->nsegs = 0;
	GROW(r->snaps, r->nsnaps, r->capsnaps);
	sn = &r->snaps[r->nsnaps++];
	memset(sn, 0, sizeof(*sn));
	sn->t = d->t0 + t;		/* made relative once all are read */
	sn->stopped_ms = stop;
	sn->classify_ms = size;
	sn->stride = 1;
	sn->npp = r->nprocs;
	sn->pp = calloc(r->nprocs + 1, sizeof(*sn->pp));
	if (!sn->pp) {
		prof_err("out of memory");
		exit(1);
	}
	sn->pp[d->proc].read = true;
	sn->pp[d->proc].stride = 1;
	r->stopped_s += stop / 1e3;
	return 0;
}

static int rec_seg(struct rd *d, char **f, int n)
{
	uint64_t sid, seg, addr, size;

	if (n != 10)
		return bad(d, "seg: %d fields, not 9", n - 1);
	if (num(d, f[1], "snap", &sid) || num(d, f[2], "seg", &seg) ||
	    num(d, f[4], "addr", &addr) || num(d, f[5], "size", &size))
		return -1;
	if (d->cur < 0 || d->ids[d->cur] != sid)
		return bad(d, "seg of snapshot %llu outside it",
			   (unsigned long long)sid);
	if (seg != d->nsegs)
		return bad(d, "segment %llu out of order", (unsigned long long)seg);
	if (d->nsegs == d->capsegs) {
		d->capsegs = d->capsegs ? 2 * d->capsegs : 16;
		d->seg_addr = prof_xrealloc(d->seg_addr, d->capsegs * 8);
		d->seg_size = prof_xrealloc(d->seg_size, d->capsegs * 8);
		d->seg_obs = prof_xrealloc(d->seg_obs,
					   d->capsegs * sizeof(*d->seg_obs));
		d->seg_label = prof_xrealloc(d->seg_label, d->capsegs * sizeof(int));
		d->seg_lab_size = prof_xrealloc(d->seg_lab_size, d->capsegs * 8);
	}
	d->seg_addr[d->nsegs] = addr;
	d->seg_size[d->nsegs] = size;
	memset(&d->seg_obs[d->nsegs], 0, sizeof(d->seg_obs[0]));
	d->seg_label[d->nsegs] = -1;
	d->seg_lab_size[d->nsegs] = 0;
	d->nsegs++;
	if (!strcmp(f[9], "1"))
		d->r->cuda->expandable = true;
	return 0;
}

static int rec_blk(struct rd *d, char **f, int n)
{
	struct prof_run *r = d->r;
	uint64_t sid, seg, off, size, req, ents, unread, v[NHIST + PROF_NC];
	struct prof_obs o = { 0 };
	bool active;
	int label;

	if (n != MAXF)
		return bad(d, "blk: %d fields, not %d", n - 1, MAXF - 1);
	if (num(d, f[1], "snap", &sid) || num(d, f[2], "seg", &seg) ||
	    num(d, f[3], "off", &off) || num(d, f[4], "size", &size) ||
	    num(d, f[5], "requested", &req) || num(d, f[8], "entries", &ents) ||
	    num(d, f[9], "unread", &unread))
		return -1;
	for (int i = 0; i < NHIST + PROF_NC; i++)
		if (num(d, f[10 + i], "count", &v[i]))
			return -1;
	if (d->cur < 0 || d->ids[d->cur] != sid)
		return bad(d, "blk of snapshot %llu outside it",
			   (unsigned long long)sid);
	if (seg >= d->nsegs)
		return bad(d, "block of segment %llu, not in snapshot %llu",
			   (unsigned long long)seg, (unsigned long long)sid);
	if (strcmp(f[6], "a") && strcmp(f[6], "p") && strcmp(f[6], "i"))
		return bad(d, "state '%s'", f[6]);
	label = label_named(r, f[7], NULL);
	if (label < 0)
		return bad(d, "label %s before its label record", f[7]);
	if (ents * BUDDY_ENTRY_BYTES + unread != size)
		return bad(d, "entries %llu and unread %llu do not make size %llu",
			   (unsigned long long)ents, (unsigned long long)unread,
			   (unsigned long long)size);
	for (int c = 0; c < PROF_NC; c++) {
		uint64_t sum = 0;

		for (int k = 0; k < BUDDY_CODE_NR; k++)
			sum += o.hist[c][k] = v[c * BUDDY_CODE_NR + k];
		if (sum && sum != ents)
			return bad(d, "%s: histogram sums to %llu, not %llu",
				   prof_codecs[c]->name,
				   (unsigned long long)sum,
				   (unsigned long long)ents);
		o.fig3[c] = v[NHIST + c];
	}
	o.sampled = ents;
	o.unread = unread / BUDDY_ENTRY_BYTES;
	o.blocks = o.blocks_read = (size + 4095) / 4096;
	r->snaps[d->snap_of[d->cur]].unread += unread;
	r->snaps[d->snap_of[d->cur]].pp[d->proc].unread += unread;
	active = !strcmp(f[6], "a");
	if (r->o->cuda_segments) {
		struct prof_obs *s = &d->seg_obs[seg];

		for (int c = 0; c < PROF_NC; c++) {
			for (int k = 0; k < BUDDY_CODE_NR; k++)
				s->hist[c][k] += o.hist[c][k];
			s->fig3[c] += o.fig3[c];
		}
		s->sampled += o.sampled;
		s->unread += o.unread;
		s->blocks = s->blocks_read = (d->seg_size[seg] + 4095) / 4096;
		/* the segment's label: its largest live block's (else any) */
		if ((active && size > d->seg_lab_size[seg]) ||
		    d->seg_label[seg] < 0) {
			d->seg_label[seg] = label;
			if (active)
				d->seg_lab_size[seg] = size;
		}
	} else if (active) {
		observe(d, alloc_at(r, d->proc, d->seg_addr[seg] + off, size,
				    label), &o);
	}
	return 0;
}

static int id_list(struct rd *d, char *s, uint64_t **arr, size_t *n,
		   size_t *cap)
{
	char *save = NULL, *tok;

	if (!strcmp(s, "-"))
		return 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (num(d, tok, "kept id", &v))
			return -1;
		GROW(*arr, *n, *cap);
		(*arr)[(*n)++] = v;
	}
	return 0;
}

static int record(struct rd *d, char **f, int n)
{
	struct prof_run *r = d->r;
	uint64_t v;

	if (!strcmp(f[0], "proc"))
		return rec_proc(d, f, n);
	if (!strcmp(f[0], "codecs"))
		return rec_codecs(d, f, n);
	if (!strcmp(f[0], "snap"))
		return rec_snap(d, f, n);
	if (!strcmp(f[0], "seg"))
		return rec_seg(d, f, n);
	if (!strcmp(f[0], "blk"))
		return rec_blk(d, f, n);
	if (!strcmp(f[0], "note")) {
		struct prof_cuda *cu = r->cuda;

		if (n != 2 || unescape(f[1]))
			return bad(d, "note: one escaped text field");
		GROW(cu->notes, cu->nnotes, cu->capnotes);
		if (asprintf(&cu->notes[cu->nnotes], "pid %d: %s",
			     (int)r->procs[d->proc].pid, f[1]) < 0)
			exit(1);
		cu->nnotes++;
		return 0;
	}
	if (!strcmp(f[0], "label")) {
		if (n != 4 || unescape(f[3]))
			return bad(d, "label: name kind site");
		if (!*f[1] || strlen(f[1]) >= BUDDY_LABEL_LEN || strchr(f[1], '/'))
			return bad(d, "label %s: not a name of 1..%d bytes without /",
				   f[1], BUDDY_LABEL_LEN - 1);
		label_named(r, f[1], f[3]);
		return 0;
	}
	if (!strcmp(f[0], "drop")) {
		if (n != 2 || num(d, f[1], "id", &v))
			return n != 2 ? bad(d, "drop: one field") : -1;
		GROW(d->dropped, d->ndropped, d->capdropped);
		d->dropped[d->ndropped++] = v;
		return 0;
	}
	if (!strcmp(f[0], "end")) {
		double rec_s;
		uint64_t nalloc;

		if (n != 6)
			return bad(d, "end: %d fields, not 5", n - 1);
		if (num(d, f[3], "allocations", &nalloc) ||
		    fnum(d, f[4], "record_s", &rec_s) ||
		    id_list(d, f[5], &d->kept, &d->nkept, &d->capkept))
			return -1;
		r->procs[d->proc].final.nr_alloc = nalloc;
		r->procs[d->proc].final.hook_ns = rec_s * 1e9;
		d->ended = true;
		return 0;
	}
	return bad(d, "unknown record '%s'", f[0]);
}

static bool has(const uint64_t *a, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return true;
	return false;
}

static int read_file(struct prof_run *r, int proc, const char *path)
{
	struct rd d = { .r = r, .path = path, .proc = proc, .cur = -1 };
	FILE *fp = fopen(path, "re");
	char *line = NULL, *f[MAXF + 1];
	size_t cap = 0;
	int ret = 0;

	if (!fp) {
		prof_err("%s: %s", path, strerror(errno));
		return -1;
	}
	while (!ret && getline(&line, &cap, fp) >= 0) {
		int n = 0;
		char *p = line;

		d.line++;
		line[strcspn(line, "\n")] = 0;
		if (d.line == 1) {
			if (strcmp(line, REC_MAGIC "\t" REC_VERSION))
				ret = bad(&d, "not a " REC_MAGIC " " REC_VERSION " file");
			continue;
		}
		for (;;) {
			if (n == MAXF + 1) {
				n++;
				break;
			}
			f[n++] = p;
			p = strchr(p, '\t');
			if (!p)
				break;
			*p++ = 0;
		}
		if (n > MAXF)
			ret = bad(&d, "%s: too many fields", f[0]);
		else if (!r->procs[proc].pid && strcmp(f[0], "proc"))
			ret = bad(&d, "%s before the proc record", f[0]);
		else
			ret = record(&d, f, n);
	}
	if (!ret && !d.line)
		ret = bad(&d, "empty");
	else if (!ret && (!r->procs[proc].pid || !d.codecs))
		ret = bad(&d, "no %s record", !r->procs[proc].pid ? "proc" :
			  "codecs");
	if (!ret)
		flush_segments(&d);
	/* the snapshots that count: the end's kept ones, else not dropped */
	for (size_t i = 0; !ret && i < d.nids; i++) {
		struct prof_snap *sn = &r->snaps[d.snap_of[i]];

		sn->dropped = d.ended ? !has(d.kept, d.nkept, d.ids[i]) :
			      has(d.dropped, d.ndropped, d.ids[i]);
	}
	free(line);
	fclose(fp);
	free(d.ids);
	free(d.snap_of);
	free(d.seg_addr);
	free(d.seg_size);
	free(d.seg_obs);
	free(d.seg_label);
	free(d.seg_lab_size);
	free(d.dropped);
	free(d.kept);
	return ret;
}

/* ---- all of them -------------------------------------------------------------------- */

static int cmp_snap_t(const void *a, const void *b)
{
	const struct prof_snap *x = *(const struct prof_snap *const *)a;
	const struct prof_snap *y = *(const struct prof_snap *const *)b;

	return x->t < y->t ? -1 : x->t > y->t ? 1 : x->id < y->id ? -1 : 1;
}

static int cmp_obs(const void *a, const void *b)
{
	const struct prof_obs *x = a, *y = b;

	return x->snap < y->snap ? -1 : x->snap > y->snap;
}

static int is_record(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return !strncmp(e->d_name, "cuda-", 5) && n > 9 &&
	       !strcmp(e->d_name + n - 4, ".tsv");
}

static int by_pid(const struct dirent **a, const struct dirent **b)
{
	long x = atol((*a)->d_name + 5), y = atol((*b)->d_name + 5);

	return x < y ? -1 : x > y;
}

/*
 * All processes' snapshots in one list by time: the ids are their
 * indices, the observations point at them, the clock starts at the
 * earliest hook.
 */
static void order_snaps(struct prof_run *r, double t_first)
{
	struct prof_snap **by = prof_xrealloc(NULL, (r->nsnaps + 1) * sizeof(*by));
	struct prof_snap *ns = prof_xrealloc(NULL, (r->nsnaps + 1) * sizeof(*ns));
	unsigned int *newid = prof_xrealloc(NULL, (r->nsnaps + 1) * sizeof(*newid));

	for (unsigned int s = 0; s < r->nsnaps; s++) {
		r->snaps[s].id = s;
		by[s] = &r->snaps[s];
	}
	qsort(by, r->nsnaps, sizeof(*by), cmp_snap_t);
	for (unsigned int s = 0; s < r->nsnaps; s++) {
		newid[by[s]->id] = s;
		ns[s] = *by[s];
		ns[s].id = s;
		ns[s].t -= t_first;
	}
	free(r->snaps);
	r->snaps = ns;
	r->capsnaps = r->nsnaps + 1;
	for (size_t i = 0; i < r->nallocs; i++) {
		struct prof_alloc *a = &r->allocs[i];

		for (unsigned int j = 0; j < a->nobs; j++)
			a->obs[j].snap = newid[a->obs[j].snap];
		qsort(a->obs, a->nobs, sizeof(*a->obs), cmp_obs);
	}
	for (unsigned int s = 0; s < r->nsnaps; s++)
		for (unsigned int p = 0; p < r->nprocs; p++)
			if (r->snaps[s].pp[p].read)
				r->procs[p].last_read = s + 1;
	free(by);
	free(newid);
}

int prof_cuda_ingest(struct prof_run *r, const char *dir)
{
	struct dirent **ents;
	double t_first = 0, t_last = 0;
	int n, ret = 0;

	n = scandir(dir, &ents, is_record, by_pid);
	if (n < 0) {
		prof_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!r->cuda)
		r->cuda = calloc(1, sizeof(*r->cuda));
	if (!r->cuda) {
		prof_err("out of memory");
		exit(1);
	}
	r->cuda->procs = calloc(n + 1, sizeof(*r->cuda->procs));
	r->procs = calloc(n + 1, sizeof(*r->procs));
	if (!r->procs || !r->cuda->procs) {
		prof_err("out of memory");
		exit(1);
	}
	r->nprocs = n;
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (!ret && read_file(r, i, path))
			ret = -1;
		free(ents[i]);
	}
	free(ents);
	if (ret)
		return -1;
	for (unsigned int s = 0; s < r->nsnaps; s++) {
		if (!s || r->snaps[s].t < t_first)
			t_first = r->snaps[s].t;
		if (r->snaps[s].t > t_last)
			t_last = r->snaps[s].t;
	}
	order_snaps(r, t_first);
	r->final.nr_followed = n;
	r->final.nprocs = n;
	if (n) {
		r->final.first_pid = r->procs[0].pid;
		memcpy(r->final.first_exe, r->procs[0].final.exe,
		       sizeof(r->final.first_exe));
	}
	if (!r->child && n)
		r->child = r->procs[0].pid;
	if (!r->t_end) {	/* records alone: the time they span */
		r->t_start = 0;
		r->t_end = t_last - t_first;
	}
	return 0;
}

/* ---- what the report says of the hook ----------------------------------------------- */

void prof_cuda_text(FILE *f, const struct prof_run *r)
{
	const struct prof_cuda *cu = r->cuda;

	if (!cu)
		return;
	if (cu->driver)
		fprintf(f, "  cuda: the driver API's allocations (libbuddycudaprof.so), snapshots on a wall-clock timer and the program's requests; unit: allocation; the program is not stopped, stop-ms is how long its allocation calls could wait\n");
	else
		fprintf(f, "  cuda: PyTorch's caching allocator, snapshots at the start of backward passes; unit: %s\n",
			r->o->cuda_segments ? "segment (every block of a cudaMalloc region, cached ones too)" :
			"storage block (live blocks)");
	for (unsigned int p = 0; p < r->nprocs; p++) {
		const struct prof_cuda_proc *cp = &cu->procs[p];
		char rank[24] = "";

		if (cp->rank >= 0)
			snprintf(rank, sizeof(rank), ", rank %d", cp->rank);
		fprintf(f, "  cuda: pid %d%s: torch %s, allocator %s, stacks %s, %llu CUDA allocations, stack recording ~%.3f s\n",
			(int)r->procs[p].pid, rank, cp->torch, cp->backend,
			cp->history,
			(unsigned long long)r->procs[p].final.nr_alloc,
			r->procs[p].final.hook_ns / 1e9);
	}
	if (cu->unsized)
		fprintf(f, "  cuda: codecs not sized by the hook count as raw\n");
	for (size_t i = 0; i < cu->nnotes; i++)
		fprintf(f, "  cuda note: %s\n", cu->notes[i]);
}

struct json_object *prof_cuda_json(const struct prof_run *r)
{
	const struct prof_cuda *cu = r->cuda;
	struct json_object *j = json_object_new_object();
	struct json_object *ps = json_object_new_array();
	struct json_object *ns = json_object_new_array();

	json_object_object_add(j, "unit", json_object_new_string(
		r->o->cuda_segments ? "segment" : "block"));
	json_object_object_add(j, "source", json_object_new_string(
		cu->driver ? "driver" : "torch"));
	for (unsigned int p = 0; p < r->nprocs; p++) {
		struct json_object *x = json_object_new_object();

		json_object_object_add(x, "pid", json_object_new_int(r->procs[p].pid));
		json_object_object_add(x, "rank", json_object_new_int(cu->procs[p].rank));
		json_object_object_add(x, "torch", json_object_new_string(cu->procs[p].torch));
		json_object_object_add(x, "backend", json_object_new_string(cu->procs[p].backend));
		json_object_object_add(x, "history", json_object_new_string(cu->procs[p].history));
		json_object_object_add(x, "allocations",
			json_object_new_int64(r->procs[p].final.nr_alloc));
		json_object_object_add(x, "record_s",
			json_object_new_double(r->procs[p].final.hook_ns / 1e9));
		json_object_array_add(ps, x);
	}
	json_object_object_add(j, "processes", ps);
	for (size_t i = 0; i < cu->nnotes; i++)
		json_object_array_add(ns, json_object_new_string(cu->notes[i]));
	json_object_object_add(j, "notes", ns);
	json_object_object_add(j, "expandable_segments",
			       json_object_new_boolean(cu->expandable));
	return j;
}
