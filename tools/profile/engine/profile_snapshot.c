// SPDX-License-Identifier: GPL-2.0
/*
 * profile_snapshot.c - one snapshot of the followed processes: stop them,
 * read their tables and the memory of their tracked allocations (within
 * the sampling budget), continue them; label each allocation by its call
 * stack and classify its entries with the codec core
 * (Documentation/profiler.rst, "Snapshots").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile_priv.h"
#include "tools/policy/fig3.h"

#define BLK		4096u

#define IOV_BATCH	1024

#define IOV_MERGE	(1u << 20)	/* adjacent blocks: one read up to this */

#define STOP_TIMEOUT_S	5.0

struct prof_map {
	uint64_t start, end, off;
	bool readable;
	int mod;			/* -1: no file */
	char *path;
};

/* ---- stopping and reading ------------------------------------------------------ */

/*
 * The fields after the command name of a /proc stat file, read into @buf
 * (@len bytes): "S ..." (field 3, the state, on); NULL when it cannot be
 * read (the task is gone), "" when it does not look like one.
 */
static char *stat_fields(const char *path, char *buf, size_t len)
{
	char *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : buf + n;
}

static char task_state(pid_t pid, const char *tid)
{
	char path[320], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	p = stat_fields(path, buf, sizeof(buf));
	if (!p)
		return 'X';	/* gone */
	return *p ? *p : '?';
}

/*
 * Wait until every task of @pid is stopped.  Returns the number of tasks
 * still running at the deadline, or -1 when the process is gone.
 */
static int wait_stopped(pid_t pid)
{
	double deadline = prof_now() + STOP_TIMEOUT_S;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (;;) {
		DIR *d = opendir(path);
		struct dirent *de;
		int running = 0, tasks = 0;

		if (!d)
			return -1;
		while ((de = readdir(d))) {
			char st;

			if (de->d_name[0] == '.')
				continue;
			tasks++;
			st = task_state(pid, de->d_name);
			if (st != 'T' && st != 't' && st != 'Z' && st != 'X')
				running++;
		}
		closedir(d);
		if (!tasks)
			return -1;
		if (!running || prof_now() > deadline)
			return running;
		usleep(200);
	}
}

static int cmp_map(const void *a, const void *b)
{
	const struct prof_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct prof_map *read_maps(pid_t pid, size_t *nmaps)
{
	char path[64], *line = NULL;
	struct prof_map *m = NULL;
	size_t n = 0, cap = 0, lcap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long s, e, off;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms,
			   &off, &pos) < 4)
			continue;
		GROW(m, n, cap);
		m[n].start = s;
		m[n].end = e;
		m[n].off = off;
		m[n].readable = perms[0] == 'r';
		m[n].mod = -1;
		m[n].path = NULL;
		if (pos && line[pos] == '/') {
			char *nl = strchr(line + pos, '\n');

			if (nl)
				*nl = 0;
			m[n].path = strdup(line + pos);
		}
		n++;
	}
	free(line);
	fclose(f);
	qsort(m, n, sizeof(*m), cmp_map);
	*nmaps = n;
	return m;
}

static void free_maps(struct prof_map *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

static struct prof_map *find_map(struct prof_map *m, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < m[mid].start)
			hi = mid;
		else if (addr >= m[mid].end)
			lo = mid + 1;
		else
			return &m[mid];
	}
	return NULL;
}

/* Readable bytes from @addr on, at most @len, over adjacent mappings. */
static uint64_t readable_len(struct prof_map *m, size_t n, uint64_t addr,
			     uint64_t len)
{
	struct prof_map *p = find_map(m, n, addr);
	uint64_t end = addr, want = addr + len;

	while (p && p->readable && p < m + n && p->start <= end) {
		end = p->end;
		if (end >= want)
			return len;
		p++;
	}
	return end - addr;
}

/* ---- labels -------------------------------------------------------------------- */

static int intern_module(struct prof_run *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->nmods; i++)
		if (!strcmp(r->mods[i].path, path))
			return i;
	GROW(r->mods, r->nmods, r->capmods);
	r->mods[r->nmods].path = strdup(path);
	r->mods[r->nmods].base = strrchr(r->mods[r->nmods].path, '/');
	r->mods[r->nmods].base = r->mods[r->nmods].base ?
		r->mods[r->nmods].base + 1 : r->mods[r->nmods].path;
	r->mods[r->nmods].elf = NULL;
	return r->nmods++;
}

/*
 * The Python site slot @s names (profile_shm.h) into @buf (BPROF_PYSITE_LEN
 * bytes); 0 when it has none or the entry is not a valid one.
 */
static size_t pysite_of(struct prof_run *r, const struct bprof_slot *s,
			char *buf)
{
	const struct bprof_pysite *e;
	size_t n;

	if (!s->pysite || s->pysite > BPROF_NPYSITES(r->hdr->nslots))
		return 0;
	e = &BPROF_PYSITES_AT(r->hdr)[s->pysite - 1];
	if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != BPROF_LIVE)
		return 0;
	memcpy(buf, e->site, BPROF_PYSITE_LEN);
	n = strnlen(buf, BPROF_PYSITE_LEN);
	if (n == BPROF_PYSITE_LEN)
		return 0;
	return n;
}

/*
 * The label of an allocation: a hash of its call stack, each return address
 * as (module basename, file offset), so that it is the same in every run
 * whatever the address-space layout, of its Python site when it has one
 * (the interpreter's native frames are the same for every line of a
 * script), and of its size, so that tensors of different shapes made by
 * one framework function get different labels.
 */
static int label_of(struct prof_run *r, const struct bprof_slot *s,
		    struct prof_map *maps, size_t nmaps)
{
	struct prof_label l = { 0 };
	uint64_t h = BPROF_FNV_INIT;
	unsigned int i, n = s->depth > BPROF_FRAMES ? BPROF_FRAMES : s->depth;
	char site[BPROF_PYSITE_LEN];
	size_t ns = pysite_of(r, s, site);

	for (i = 0; i < n; i++) {
		uint64_t a = s->frames[i];
		struct prof_map *m = find_map(maps, nmaps, a);

		if (m && m->path) {
			if (m->mod < 0)
				m->mod = intern_module(r, m->path);
			l.frames[i].mod = m->mod;
			l.frames[i].off = a - m->start + m->off;
			h = bprof_fnv(h, r->mods[m->mod].base,
				strlen(r->mods[m->mod].base) + 1);
		} else {
			l.frames[i].mod = -1;
			l.frames[i].off = a;
			h = bprof_fnv(h, "?", 2);
		}
		h = bprof_fnv(h, &l.frames[i].off, sizeof(uint64_t));
	}
	if (ns)
		h = bprof_fnv(h, site, ns + 1);
	h = bprof_fnv(h, &s->size, sizeof(s->size));
	for (i = 0; i < r->nlabels; i++)
		if (r->labels[i].key == h)
			return i;
	for (i = 0; i < n && !l.excluded; i++) {
		unsigned int x;

		if (l.frames[i].mod < 0)
			continue;
		for (x = 0; x < r->o->nexclude; x++)
			if (strstr(r->mods[l.frames[i].mod].base, r->o->exclude[x]))
				l.excluded = true;
	}
	l.key = h;
	l.size = s->size;
	l.kind = s->kind;
	l.nframes = n;
	if (ns) {
		l.site = strdup(site);
		if (!l.site) {
			prof_err("out of memory");
			exit(1);
		}
	}
	/* 0-31 printable bytes without '/': "bp-" and 12 hex digits. */
	snprintf(l.name, sizeof(l.name), BPROF_LABEL_FMT, BPROF_LABEL_ARG(h));
	GROW(r->labels, r->nlabels, r->caplabels);
	r->labels[r->nlabels] = l;
	return r->nlabels++;
}

/* ---- allocations ------------------------------------------------------------------ */

static size_t seq_slot(struct prof_run *r, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ULL >> 20) & (r->seq_cap - 1);
}

/* The allocation index, empty and twice as large (1024 at first). */
void prof_seq_grow(struct prof_run *r)
{
	free(r->seq_idx);
	r->seq_cap = r->seq_cap ? 2 * r->seq_cap : 1024;
	r->seq_idx = calloc(r->seq_cap, sizeof(size_t));
	if (!r->seq_idx) {
		prof_err("out of memory");
		exit(1);
	}
}

static void seq_rehash(struct prof_run *r)
{
	size_t i;

	prof_seq_grow(r);
	for (i = 0; i < r->nallocs; i++) {
		size_t k = seq_slot(r, r->allocs[i].seq);

		while (r->seq_idx[k])
			k = (k + 1) & (r->seq_cap - 1);
		r->seq_idx[k] = i + 1;
	}
}

static size_t alloc_of(struct prof_run *r, int proc, const struct bprof_slot *s,
		       struct prof_map *maps, size_t nmaps)
{
	size_t k;
	struct prof_alloc *a;

	if (2 * (r->nallocs + 1) > r->seq_cap)
		seq_rehash(r);
	for (k = seq_slot(r, s->seq); r->seq_idx[k];
	     k = (k + 1) & (r->seq_cap - 1))
		if (r->allocs[r->seq_idx[k] - 1].seq == s->seq)
			return r->seq_idx[k] - 1;
	GROW(r->allocs, r->nallocs, r->capallocs);
	a = &r->allocs[r->nallocs];
	memset(a, 0, sizeof(*a));
	a->proc = proc;
	a->seq = s->seq;
	a->addr = s->addr;
	a->size = s->size;
	a->kind = s->kind;
	a->label = label_of(r, s, maps, nmaps);
	r->seq_idx[k] = r->nallocs + 1;
	return r->nallocs++;
}

/* ---- classification ---------------------------------------------------------------- */

static void write_dump(struct prof_run *r, const struct prof_snap *sn,
		       const struct prof_alloc *a, const uint8_t *buf,
		       uint64_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	size_t done = 0;
	int fd;

	snprintf(dir, sizeof(dir), "%s/snap-%03u", r->o->dumps, sn->id);
	if (prof_mkdir_p(dir)) {
		prof_err("%s: %s", dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/%llu.bin", dir,
		 (unsigned long long)a->seq);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		prof_err("%s: %s", path, strerror(errno));
		return;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			prof_err("%s: %s", path, strerror(errno));
			break;
		}
		done += n;
	}
	close(fd);
}

void prof_classify(struct prof_run *r, struct prof_raw *raw)
{
	struct prof_snap *sn = &r->snaps[raw->snap];
	const struct buddy_codec *cs[PROF_NC];
	double t0 = prof_now();
	size_t i;

	/* the implementations in force (vector ones where the CPU has them) */
	for (i = 0; i < PROF_NC; i++)
		cs[i] = buddy_codec_by_id(prof_codecs[i]->id);
	for (i = 0; i < raw->npieces; i++) {
		struct prof_piece *pc = &raw->pieces[i];
		struct prof_alloc *a = &r->allocs[pc->alloc];
		const uint8_t *buf = raw->buf + pc->off;
		uint64_t e, ents = pc->len / BUDDY_ENTRY_BYTES, k = pc->stride;
		struct prof_obs *ob;
		unsigned int c;

		GROW(a->obs, a->nobs, a->capobs);
		ob = &a->obs[a->nobs++];
		memset(ob, 0, sizeof(*ob));
		ob->snap = sn->id;
		ob->sampled = ents;
		ob->unread = pc->unread;
		ob->blocks = pc->blocks;
		ob->blocks_read = pc->read;
		for (e = 0; e < ents; e++) {
			const u8 *ent = buf + e * BUDDY_ENTRY_BYTES;

			if (buddy_entry_is_zero(ent)) {
				for (c = 0; c < PROF_NC; c++)
					ob->hist[c][BUDDY_CODE_ZERO] += k;
				continue;
			}
			for (c = 0; c < PROF_NC; c++) {
				unsigned int bits = cs[c]->size(ent);

				ob->hist[c][buddy_code_of_bits(bits)] += k;
				ob->fig3[c] += (uint64_t)buddy_fig3_bytes(bits) * k;
			}
		}
		if (r->o->dumps)
			write_dump(r, sn, a, buf, pc->len);
	}
	sn->classify_ms = (prof_now() - t0) * 1e3;
}

void prof_free_raw(struct prof_raw *raw, bool keep_buf)
{
	free(raw->pieces);
	if (!keep_buf)
		free(raw->buf);
	memset(raw, 0, sizeof(*raw));
}

/* ---- one snapshot ------------------------------------------------------------------- */

struct live {
	struct bprof_slot s;
	unsigned int proc;		/* index into run->procs */
	uint64_t readable;
	uint64_t stride;		/* 1 block of every @stride is read */
};

/* Blocks read under level @L: sum of min(blocks, L). */
static uint64_t filled(const struct live *lv, size_t n, uint64_t L)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t nb = (lv[i].readable + BLK - 1) / BLK;

		sum += nb < L ? nb : L;
	}
	return sum;
}

/*
 * Per-allocation strides within a budget of @cap blocks (0: no budget):
 * the largest level L with filled(L) <= cap, by bisection; whole reads for
 * allocations of at most L blocks.  Returns the largest stride.
 */
static uint64_t share_budget(struct live *lv, size_t n, uint64_t cap)
{
	uint64_t lo = 1, hi = 1, kmax = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t nb = (lv[i].readable + BLK - 1) / BLK;

		lv[i].stride = 1;
		if (nb > hi)
			hi = nb;
	}
	if (!cap || filled(lv, n, hi) <= cap)
		return 1;
	while (lo < hi) {	/* filled(lo) <= cap or lo == 1 */
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (filled(lv, n, mid) <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t nb = (lv[i].readable + BLK - 1) / BLK;

		if (nb > lo)
			lv[i].stride = (nb + lo - 1) / lo;
		if (lv[i].stride > kmax)
			kmax = lv[i].stride;
	}
	return kmax;
}

static int cmp_live(const void *a, const void *b)
{
	const struct live *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->s.seq < y->s.seq ? -1 : x->s.seq > y->s.seq;
}

/* Read the @n iovecs; on a short read, one by one.  Returns bytes missed. */
static uint64_t read_iovs(pid_t pid, struct iovec *loc, struct iovec *rem,
			  size_t n, uint8_t *unread_flags)
{
	uint64_t want = 0, missed = 0;
	ssize_t got;
	size_t i;

	for (i = 0; i < n; i++)
		want += rem[i].iov_len;
	got = process_vm_readv(pid, loc, n, rem, n, 0);
	if (got == (ssize_t)want)
		return 0;
	for (i = 0; i < n; i++) {
		got = process_vm_readv(pid, &loc[i], 1, &rem[i], 1, 0);
		if (got != (ssize_t)rem[i].iov_len) {
			memset(loc[i].iov_base, 0, loc[i].iov_len);
			unread_flags[i] = 1;
			missed += rem[i].iov_len;
		}
	}
	return missed;
}

/*
 * The state letter and start time (clock ticks since boot) of @pid from
 * /proc/PID/stat; 'X' when it is gone.
 */
static char proc_stat(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p, st;
	unsigned long long v = 0;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	p = stat_fields(path, buf, sizeof(buf));
	if (!p || !*p)
		return 'X';
	st = *p;
	/* field 3 is the state; 22 the start time */
	for (f = 3; *p && f < 22; p++)
		if (*p == ' ')
			f++;
	if (f == 22)
		v = strtoull(p, NULL, 10);
	*start = v;
	return st;
}

/* run->procs: every process slot claimed so far, by its index. */
void prof_sync_procs(struct prof_run *r)
{
	struct bprof_proc *bp = BPROF_PROCS(r->hdr);
	uint32_t i;

	for (i = 0; i < r->hdr->nprocs; i++) {
		pid_t pid = __atomic_load_n(&bp[i].pid, __ATOMIC_ACQUIRE);
		struct prof_proc *p;
		char st;

		if (!pid)
			continue;
		if (i >= r->nprocs) {
			r->procs = prof_xrealloc(r->procs, (i + 1) * sizeof(*r->procs));
			memset(r->procs + r->nprocs, 0,
			       (i + 1 - r->nprocs) * sizeof(*r->procs));
			r->nprocs = i + 1;
		}
		p = &r->procs[i];
		if (p->pid)
			continue;
		p->pid = pid;
		st = proc_stat(pid, &p->start);
		p->gone = st == 'X' || st == 'Z';
	}
}

/* Whether followed process @p still runs (not exited, its pid not reused). */
static bool proc_alive(struct prof_proc *p)
{
	unsigned long long start = 0;
	char st;

	if (p->gone)
		return false;
	st = proc_stat(p->pid, &start);
	if (st == 'X' || st == 'Z' || start != p->start)
		p->gone = true;
	return !p->gone;
}

/*
 * The LIVE slots of process @p's table into @lv.  Only the parts of the
 * table the process has written are read: a page never written is a hole
 * of the memfd (SEEK_DATA skips it), so a table of 8 MiB costs what its
 * process used of it, not 2048 page faults (all of it when lseek cannot
 * tell).
 */
static void scan_table(struct prof_state *st, unsigned int p, struct live **lv,
		       size_t *nlv, size_t *caplv)
{
	struct bprof_hdr *h = st->r->hdr;
	struct bprof_slot *slots = BPROF_SLOTS(h, p);
	off_t lo = (char *)slots - (char *)h;
	off_t hi = lo + (off_t)BPROF_TABLE_BYTES(h->nslots), pos = lo;

	while (pos < hi) {
		off_t d = lseek(st->fd, pos, SEEK_DATA), e;
		uint64_t i, end;

		if (d < 0 && errno == ENXIO)
			break;		/* no data after @pos */
		if (d < 0) {
			d = pos;	/* cannot tell: all of it */
			e = hi;
		} else {
			if (d >= hi)
				break;
			e = lseek(st->fd, d, SEEK_HOLE);
			if (e < 0 || e > hi)
				e = hi;
		}
		end = (e - lo + sizeof(*slots) - 1) / sizeof(*slots);
		for (i = (d - lo) / sizeof(*slots); i < end; i++) {
			struct bprof_slot *s = &slots[i];

			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != BPROF_LIVE)
				continue;
			GROW(*lv, *nlv, *caplv);
			memcpy(&(*lv)[*nlv].s, s, sizeof(*s));
			(*lv)[*nlv].proc = p;
			if ((*lv)[*nlv].s.state != BPROF_LIVE || !(*lv)[*nlv].s.size)
				continue;
			(*nlv)++;
		}
		pos = e > d ? e : hi;
	}
}

/* One snapshot being taken. */
struct snap_ctx {
	struct prof_state *st;
	struct prof_run *r;
	struct prof_snap *sn;
	struct live *lv;		/* the live allocations of all */
	size_t nlv, caplv;
	struct prof_map **maps;		/* per process, its /proc/PID/maps */
	size_t *nmaps;
	bool *stopped;			/* per process */
	unsigned int nstopped;
	struct prof_raw raw;
	size_t cappieces;
	uint64_t bufpos;		/* bytes of raw.buf filled */
	/* the reads of one process not yet done */
	pid_t cur;
	struct iovec loc[IOV_BATCH], rem[IOV_BATCH];
	uint8_t unread[IOV_BATCH];
	size_t owner_of[IOV_BATCH];	/* their pieces */
	size_t niov;
};

static void *snap_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		prof_err("out of memory for a snapshot");
		exit(1);
	}
	return p;
}

/* Read the pending iovecs of one process, charging what failed. */
static void flush_iovs(struct snap_ctx *c)
{
	uint64_t missed;

	if (!c->niov)
		return;
	missed = read_iovs(c->cur, c->loc, c->rem, c->niov, c->unread);
	c->sn->unread += missed;
	for (size_t j = 0; j < c->niov; j++) {
		struct prof_piece *pc = &c->raw.pieces[c->owner_of[j]];

		if (!c->unread[j])
			continue;
		pc->unread += c->loc[j].iov_len / BUDDY_ENTRY_BYTES;
		c->sn->pp[c->lv[pc->alloc].proc].unread += c->loc[j].iov_len;
	}
	c->niov = 0;
}

/* SIGSTOP to every followed process that still runs. */
static void stop_all(struct snap_ctx *c)
{
	struct prof_run *r = c->r;

	for (unsigned int p = 0; p < r->nprocs; p++) {
		if (!r->procs[p].pid || !proc_alive(&r->procs[p]))
			continue;
		if (kill(r->procs[p].pid, SIGSTOP)) {
			r->procs[p].gone = true;
			continue;
		}
		c->stopped[p] = true;
	}
}

/* The snapshot's record, taken at @t0. */
static void new_snap(struct snap_ctx *c, double t0, bool requested)
{
	struct prof_run *r = c->r;
	struct prof_snap *sn;

	GROW(r->snaps, r->nsnaps, r->capsnaps);
	sn = c->sn = &r->snaps[r->nsnaps];
	memset(sn, 0, sizeof(*sn));
	sn->id = r->nsnaps;
	sn->t = t0 - r->t_start;
	sn->cpu = prof_cpu_now(r);
	sn->requested = requested;
	sn->npp = r->nprocs;
	sn->pp = snap_calloc(r->nprocs + 1, sizeof(*sn->pp));
}

/* Once each stopped process has stopped: its maps and its table. */
static void read_tables(struct snap_ctx *c)
{
	struct prof_run *r = c->r;
	struct prof_snap *sn = c->sn;

	for (unsigned int p = 0; p < r->nprocs; p++) {
		int running;

		if (!c->stopped[p])
			continue;
		running = wait_stopped(r->procs[p].pid);
		if (running < 0) {
			kill(r->procs[p].pid, SIGCONT);
			c->stopped[p] = false;
			r->procs[p].gone = true;
			continue;
		}
		c->nstopped++;
		sn->not_stopped += running;
		sn->pp[p].not_stopped = running;
		sn->pp[p].read = true;
		r->procs[p].last_read = sn->id + 1;
		c->maps[p] = read_maps(r->procs[p].pid, &c->nmaps[p]);
		scan_table(c->st, p, &c->lv, &c->nlv, &c->caplv);
	}
	qsort(c->lv, c->nlv, sizeof(*c->lv), cmp_live);
}

/*
 * Each live allocation's readable bytes, counted per snapshot and
 * process; then its stride within the sampling budget, and raw.buf for
 * what will be read.
 */
static void plan_reads(struct snap_ctx *c)
{
	struct prof_snap *sn = c->sn;
	struct live *lv = c->lv;
	uint64_t total_blocks = 0, sample = c->r->o->sample_bytes, k;
	size_t i;

	for (i = 0; i < c->nlv; i++) {
		struct prof_psnap *pp = &sn->pp[lv[i].proc];
		uint64_t len = readable_len(c->maps[lv[i].proc],
					    c->nmaps[lv[i].proc],
					    lv[i].s.addr, lv[i].s.size);

		sn->allocs++;
		sn->bytes += lv[i].s.size;
		pp->allocs++;
		pp->bytes += lv[i].s.size;
		if (!len) {
			sn->stale++;
			pp->stale++;
		}
		lv[i].readable = len;
		sn->readable += len;
		pp->readable += len;
	}
	k = share_budget(lv, c->nlv, sample ? (sample + BLK - 1) / BLK : 0);
	c->raw.stride = k;
	sn->stride = k;
	for (i = 0; i < c->nlv; i++) {
		uint64_t nb = (lv[i].readable + BLK - 1) / BLK;

		total_blocks += (nb + lv[i].stride - 1) / lv[i].stride;
		if (lv[i].stride > sn->pp[lv[i].proc].stride)
			sn->pp[lv[i].proc].stride = lv[i].stride;
	}
	for (unsigned int p = 0; p < c->r->nprocs; p++)
		if (sn->pp[p].read && !sn->pp[p].stride)
			sn->pp[p].stride = 1;
	c->raw.buf = malloc((total_blocks + 1) * BLK);
	c->raw.snap = c->r->nsnaps;
	if (!c->raw.buf) {
		prof_err("out of memory for a snapshot");
		exit(1);
	}
}

/*
 * Block @b (@blen bytes, padded to @plen) of live allocation @l into the
 * reads of piece @pc: merged with the previous read when both sides are
 * adjacent, else a read of its own.
 */
static void add_read(struct snap_ctx *c, const struct live *l,
		     struct prof_piece *pc, uint64_t b, uint64_t blen,
		     uint64_t plen)
{
	uint8_t *to = c->raw.buf + c->bufpos;
	uint64_t from = l->s.addr + b * BLK;
	size_t last = c->niov - 1;

	if (c->niov && c->owner_of[last] == c->raw.npieces - 1 &&
	    (uint8_t *)c->loc[last].iov_base + c->loc[last].iov_len == to &&
	    (uintptr_t)c->rem[last].iov_base + c->rem[last].iov_len == from &&
	    c->loc[last].iov_len < IOV_MERGE) {
		/* adjacent on both sides: one larger read */
		c->loc[last].iov_len += blen;
		c->rem[last].iov_len += blen;
		c->bufpos += plen;
		pc->len += plen;
		return;
	}
	c->loc[c->niov].iov_base = to;
	c->loc[c->niov].iov_len = blen;
	c->rem[c->niov].iov_base = (void *)(uintptr_t)from;
	c->rem[c->niov].iov_len = blen;
	c->unread[c->niov] = 0;
	c->owner_of[c->niov] = c->raw.npieces - 1;
	c->niov++;
	c->bufpos += plen;
	pc->len += plen;
	if (c->niov == IOV_BATCH)
		flush_iovs(c);
}

/* Live allocation @i: its piece of the sample, its blocks' reads. */
static void read_alloc(struct snap_ctx *c, size_t i)
{
	struct live *l = &c->lv[i];
	uint64_t nb = (l->readable + BLK - 1) / BLK, b, start = c->bufpos;
	struct prof_piece *pc;

	if (!l->readable)
		return;
	if (c->cur != c->r->procs[l->proc].pid) {
		/* the iovecs read one process's memory */
		flush_iovs(c);
		c->cur = c->r->procs[l->proc].pid;
	}
	GROW(c->raw.pieces, c->raw.npieces, c->cappieces);
	pc = &c->raw.pieces[c->raw.npieces++];
	pc->alloc = i;		/* the live entry until all is read */
	pc->off = c->bufpos;
	pc->len = 0;
	pc->unread = (l->s.size - l->readable) / BUDDY_ENTRY_BYTES;
	pc->stride = l->stride;
	pc->blocks = nb;
	pc->read = 0;
	for (b = 0; b < nb; b++) {
		uint64_t blen, plen;

		/* the middle block of each group of @stride */
		if (b % l->stride != l->stride / 2)
			continue;
		pc->read++;
		blen = l->readable - b * BLK;
		if (blen > BLK)
			blen = BLK;
		/* whole entries: the tail is zero-padded */
		plen = (blen + BUDDY_ENTRY_BYTES - 1) &
		       ~(uint64_t)(BUDDY_ENTRY_BYTES - 1);
		memset(c->raw.buf + c->bufpos + blen, 0, plen - blen);
		add_read(c, l, pc, b, blen, plen);
	}
	c->sn->pp[l->proc].sampled += c->bufpos - start;
}

/*
 * The processes continued: the snapshot's figures, its allocations
 * labelled through their own process's maps, and what is freed.
 */
static void finish_snap(struct snap_ctx *c, double t0)
{
	struct prof_run *r = c->r;
	unsigned int p;

	for (p = 0; p < r->nprocs; p++)
		if (c->stopped[p])
			kill(r->procs[p].pid, SIGCONT);
	c->sn->stopped_ms = c->nstopped ? (prof_now() - t0) * 1e3 : 0;
	r->stopped_s += c->sn->stopped_ms / 1e3;
	c->sn->sampled = c->bufpos;
	for (size_t i = 0; i < c->raw.npieces; i++) {
		struct live *l = &c->lv[c->raw.pieces[i].alloc];

		c->raw.pieces[i].alloc = alloc_of(r, l->proc, &l->s,
						  c->maps[l->proc],
						  c->nmaps[l->proc]);
	}
	r->nsnaps++;
	for (p = 0; p < r->nprocs; p++)
		if (c->maps[p])
			free_maps(c->maps[p], c->nmaps[p]);
	free(c->maps);
	free(c->nmaps);
	free(c->stopped);
	free(c->lv);
}

/*
 * One snapshot of every followed process that has a table and still runs:
 * all are stopped, their tables and memory read, then all continued.  A
 * process that has exited is not read any more: its figures are those of
 * the snapshots taken while it ran.
 */
int prof_snapshot(struct prof_state *st, bool requested)
{
	struct prof_run *r = st->r;
	struct snap_ctx *c;
	double t0 = prof_now();

	if (!__atomic_load_n(&r->hdr->first_pid, __ATOMIC_ACQUIRE))
		return 0;	/* no process followed yet */
	prof_sync_procs(r);
	c = snap_calloc(1, sizeof(*c));
	c->st = st;
	c->r = r;
	c->stopped = snap_calloc(r->nprocs + 1, sizeof(*c->stopped));
	c->maps = snap_calloc(r->nprocs + 1, sizeof(*c->maps));
	c->nmaps = snap_calloc(r->nprocs + 1, sizeof(*c->nmaps));
	stop_all(c);
	new_snap(c, t0, requested);
	read_tables(c);
	plan_reads(c);
	for (size_t i = 0; i < c->nlv; i++)
		read_alloc(c, i);
	flush_iovs(c);
	if (prof_adaptive_progress(r->o) && !requested)
		prof_progress_step(st);
	finish_snap(c, t0);
	if (prof_adaptive(r->o) && !requested) {
		/* adaptive: keep the raw sample until the end */
		GROW(st->pending, st->npending, st->cappending);
		st->pending[st->npending++] = c->raw;
	} else {
		prof_classify(r, &c->raw);
		prof_free_raw(&c->raw, false);
	}
	free(c);
	return 1;
}
