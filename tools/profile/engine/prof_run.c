// SPDX-License-Identifier: GPL-2.0
/*
 * prof_run.c - the profiler's engine: run a program under libbuddyprof.so
 * and take snapshots of its tracked allocations (`buddyctl profile`,
 * tools/buddyctl/profile.c, is its command line; prof_report.c turns the
 * snapshots into the report).
 *
 * Runs COMMAND, unmodified, with libbuddyprof.so preloaded (it records every
 * allocation of at least --min-size bytes, with a short call stack, in a
 * table shared with this process: tools/profile/interposer/profshm.h), takes snapshots of
 * the live allocations at N points of the run, classifies every 128-byte
 * entry with the codec core, and reports the Buddy Compression paper's
 * figures for the program (section II-C, III-B; Figs. 3, 7, 9, 10) plus a
 * profile file of per-label targets and codecs.  No kernel module is needed.
 *
 * A snapshot covers every followed process that still runs (buddyprof.h):
 * SIGSTOP to each one's thread group, then wait until every task in
 * /proc/PID/task is in state 'T' (no ptrace: the program may be traced or
 * debugged as usual); read each one's /proc/PID/maps and table; read the
 * memory with process_vm_readv() through that process's pid (entries no
 * longer mapped are "stale" and skipped, an EFAULT skips the block, never a
 * crash); SIGCONT to all.  The sampling budget is shared over all of them.  Classification happens
 * outside the stop.  Caveat of stopping: a few blocking calls (epoll_wait,
 * semop, sigtimedwait with a timeout, ...) return EINTR after a stop and
 * continue, as after ^Z / fg (signal(7)); most programs retry them.
 *
 * Sampling: a snapshot reads at most --sample-mib MiB.  When the live
 * tracked bytes exceed that, the budget is shared out as water fills
 * vessels: every allocation of at most L 4 KiB blocks is read whole, and
 * each larger one reads one block out of every k_i = ceil(blocks / L) (the
 * middle one of each group of k_i), its counts scaled by k_i; L is the
 * largest level whose total fits the budget (at least 1 block each).  So
 * every allocation is read, small ones exactly, and the report gives each
 * sampled one's error (the blocks read and out of how many go into
 * buddy_heur_alloc.sampled/.population).
 *
 * When: by default N (--points, 10) snapshots evenly spread over a run of
 * unknown length, on the program's progress (PF_CLOCK_PROGRESS): the
 * interposer asks for one each time the tracked bytes allocated pass a
 * multiple of a step (--first-bytes, 16 MiB at first); when 2N are held
 * every other one is dropped and the step doubles (written into the table's
 * header while the program is still stopped, so the next points are the
 * same on every run); at the end N evenly spaced ones are kept (raw samples
 * are kept in memory until then and classified at the end, so the program
 * is not slowed by classification).  A snapshot dropped so that was the
 * last to read a process that has exited since stays kept for that
 * process alone, its sample cut to that process's data (hold_last(),
 * buddyprof.h).  With --clock wall or cpu the same adaptive spacing runs
 * on seconds (--first, 1 s at first) of wall-clock or
 * of the first followed process's CPU time; --interval takes one every SEC seconds (N at
 * most; 0 = no limit), --at at given times.  --every-allocs/--every-bytes
 * take one at fixed progress steps, all kept.  --free-bytes takes one
 * before the program frees a tracked allocation of at least that size
 * (the interposer asks from free()/munmap(), profshm.h), all kept: the
 * allocation's data as its phase left it, at a point of the program's own
 * (a program that allocates and frees its data per phase, as HPCC does,
 * is seen in every phase, whatever the load).  A SIGUSR2 to buddyctl, or
 * buddyprof_snapshot() called by the program, takes one more, never dropped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#include "buddyprof.h"
#include "tools/policy/fig3.h"
#include "tools/policy/heuristic.h"
#include "tools/common/replace_file.h"
#include "tools/common/timespan.h"

#define BLK		4096u
#define IOV_BATCH	1024
#define IOV_MERGE	(1u << 20)	/* adjacent blocks: one read up to this */
#define STOP_TIMEOUT_S	5.0

/* The raw sample of one allocation in one snapshot. */
struct pf_piece {
	size_t alloc;			/* index into run->allocs */
	uint64_t off;			/* into the snapshot's buffer */
	uint64_t len;			/* bytes read (whole entries, padded) */
	uint64_t unread;		/* entries that could not be read */
	uint64_t stride;		/* 1 of @stride blocks read */
	uint64_t blocks, read;		/* blocks readable, read */
};

struct pf_raw {
	unsigned int snap;		/* index into run->snaps */
	struct pf_piece *pieces;
	size_t npieces;
	uint8_t *buf;
	uint64_t stride;
};

struct pf_map {
	uint64_t start, end, off;
	bool readable;
	int mod;			/* -1: no file */
	char *path;
};

struct pf_state {
	struct pf_run *r;
	int sfd;
	int fd;				/* the region's memfd */
	struct pf_raw *pending;		/* adaptive: unclassified snapshots */
	size_t npending, cappending;
	uint64_t progress_seen;		/* hdr->nr_progress_snaps answered */
	double delta;			/* adaptive interval */
	double next;			/* next timer snapshot, s since start */
	unsigned int timer_taken;	/* fixed/at: timer snapshots taken */
	uint8_t *scratch;		/* immediate mode buffer */
	uint64_t scratch_len;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		pf_err("out of memory");
		exit(1);
	}
	return q;
}

#define GROW(arr, n, cap)						\
	do {								\
		if ((n) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 16;			\
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));\
		}							\
	} while (0)


/*
 * The automatic schedule: adaptive on the program's progress (the default),
 * or a timer on wall-clock or CPU seconds; --every-allocs/--every-bytes are
 * fixed progress steps the interposer keeps by itself.
 */
static bool adaptive_progress(const struct pf_opts *o)
{
	return o->timer && o->clock == PF_CLOCK_PROGRESS && !o->every_allocs &&
	       !o->every_bytes;
}

static bool clock_timer(const struct pf_opts *o)
{
	return o->timer && o->clock != PF_CLOCK_PROGRESS;
}

/* Snapshots thinned out as they come (adaptive spacing, either clock). */
static bool adaptive(const struct pf_opts *o)
{
	return adaptive_progress(o) ||
	       (clock_timer(o) && !o->interval && !o->nat);
}

static uint64_t first_bytes(const struct pf_opts *o)
{
	return o->first_bytes ? o->first_bytes : PF_DEF_FIRST_BYTES;
}

/* ---- starting the program ---------------------------------------------------- */

static char *find_lib(const struct pf_opts *o)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash, *res;
	const char *env = getenv("BUDDYPROF_LIB");
	ssize_t n;

	if (o->lib)
		return realpath(o->lib, NULL);
	if (env && *env)
		return realpath(env, NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	snprintf(path, sizeof(path), "%s/libbuddyprof.so", exe);
	if ((res = realpath(path, NULL)) && !access(res, R_OK))
		return res;
	free(res);
	snprintf(path, sizeof(path), "%s/../lib/buddy/libbuddyprof.so", exe);
	if ((res = realpath(path, NULL)) && !access(res, R_OK))
		return res;
	free(res);
	return NULL;
}

static int make_region(struct pf_run *r, char *path, size_t len)
{
	struct pf_opts *o = r->o;
	uint32_t nprocs = o->procs ? o->procs : BPROF_DEF_PROCS;
	uint64_t bytes = BPROF_REGION_BYTES(nprocs, o->slots);
	struct bprof_hdr *h;
	int fd;

	fd = memfd_create("buddyprof", MFD_CLOEXEC);
	if (fd < 0) {
		pf_err("memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ftruncate(fd, bytes)) {
		pf_err("ftruncate: %s", strerror(errno));
		close(fd);
		return -1;
	}
	h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		pf_err("mmap: %s", strerror(errno));
		close(fd);
		return -1;
	}
	h->magic = BPROF_MAGIC;
	h->version = BPROF_VERSION;
	h->hdr_bytes = BPROF_HDR_BYTES;
	h->nslots = o->slots;
	h->slot_bytes = sizeof(struct bprof_slot);
	h->nprocs = nprocs;
	h->proc_bytes = sizeof(struct bprof_proc);
	h->min_size = o->min_size;
	h->depth = o->depth;
	h->flags = o->unwind ? BPROF_F_UNWIND : 0;
	h->profiler_pid = getpid();
	h->every_allocs = o->every_allocs;
	h->every_bytes = adaptive_progress(o) ? first_bytes(o) : o->every_bytes;
	h->free_bytes = o->free_bytes;
	if (o->match)
		snprintf(h->match, sizeof(h->match), "%s", o->match);
	r->hdr = h;
	/* The program opens it by this path; the fd stays ours (CLOEXEC). */
	snprintf(path, len, "/proc/%d/fd/%d", (int)getpid(), fd);
	return fd;
}

static int set_env(const char *lib, const char *shm)
{
	const char *old = getenv("LD_PRELOAD");
	char pid[16], *pre;

	if (old && *old) {
		if (asprintf(&pre, "%s:%s", lib, old) < 0)
			return -1;
	} else {
		pre = strdup(lib);
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (!pre || setenv("LD_PRELOAD", pre, 1) || setenv(BPROF_ENV_SHM, shm, 1) ||
	    setenv(BPROF_ENV_PID, pid, 1))
		return -1;
	free(pre);
	return 0;
}

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
	double deadline = pf_now() + STOP_TIMEOUT_S;
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
		if (!running || pf_now() > deadline)
			return running;
		usleep(200);
	}
}

static int cmp_map(const void *a, const void *b)
{
	const struct pf_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static struct pf_map *read_maps(pid_t pid, size_t *nmaps)
{
	char path[64], *line = NULL;
	struct pf_map *m = NULL;
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

static void free_maps(struct pf_map *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

static struct pf_map *find_map(struct pf_map *m, size_t n, uint64_t addr)
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
static uint64_t readable_len(struct pf_map *m, size_t n, uint64_t addr,
			     uint64_t len)
{
	struct pf_map *p = find_map(m, n, addr);
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

static int intern_module(struct pf_run *r, const char *path)
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
 * The label of an allocation: a hash of its call stack, each return address
 * as (module basename, file offset), so that it is the same in every run
 * whatever the address-space layout, and of its size, so that tensors of
 * different shapes made by one framework function get different labels.
 */
static int label_of(struct pf_run *r, const struct bprof_slot *s,
		    struct pf_map *maps, size_t nmaps)
{
	struct pf_label l = { 0 };
	uint64_t h = BPROF_FNV_INIT;
	unsigned int i, n = s->depth > BPROF_FRAMES ? BPROF_FRAMES : s->depth;

	for (i = 0; i < n; i++) {
		uint64_t a = s->frames[i];
		struct pf_map *m = find_map(maps, nmaps, a);

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
	/* 0-31 printable bytes without '/': "bp-" and 12 hex digits. */
	snprintf(l.name, sizeof(l.name), BPROF_LABEL_FMT, BPROF_LABEL_ARG(h));
	GROW(r->labels, r->nlabels, r->caplabels);
	r->labels[r->nlabels] = l;
	return r->nlabels++;
}

/* ---- allocations ------------------------------------------------------------------ */

static size_t seq_slot(struct pf_run *r, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ULL >> 20) & (r->seq_cap - 1);
}

static void seq_rehash(struct pf_run *r)
{
	size_t i;

	free(r->seq_idx);
	r->seq_cap = r->seq_cap ? 2 * r->seq_cap : 1024;
	r->seq_idx = calloc(r->seq_cap, sizeof(size_t));
	if (!r->seq_idx) {
		pf_err("out of memory");
		exit(1);
	}
	for (i = 0; i < r->nallocs; i++) {
		size_t k = seq_slot(r, r->allocs[i].seq);

		while (r->seq_idx[k])
			k = (k + 1) & (r->seq_cap - 1);
		r->seq_idx[k] = i + 1;
	}
}

static size_t alloc_of(struct pf_run *r, int proc, const struct bprof_slot *s,
		       struct pf_map *maps, size_t nmaps)
{
	size_t k;
	struct pf_alloc *a;

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

static void write_dump(struct pf_run *r, const struct pf_snap *sn,
		       const struct pf_alloc *a, const uint8_t *buf,
		       uint64_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	size_t done = 0;
	int fd;

	snprintf(dir, sizeof(dir), "%s/snap-%03u", r->o->dumps, sn->id);
	if (pf_mkdir_p(dir)) {
		pf_err("%s: %s", dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/%llu.bin", dir,
		 (unsigned long long)a->seq);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		pf_err("%s: %s", path, strerror(errno));
		return;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			pf_err("%s: %s", path, strerror(errno));
			break;
		}
		done += n;
	}
	close(fd);
}

static void classify(struct pf_run *r, struct pf_raw *raw)
{
	struct pf_snap *sn = &r->snaps[raw->snap];
	const struct buddy_codec *cs[PF_NC];
	double t0 = pf_now();
	size_t i;

	/* the implementations in force (vector ones where the CPU has them) */
	for (i = 0; i < PF_NC; i++)
		cs[i] = buddy_codec_by_id(pf_codecs[i]->id);
	for (i = 0; i < raw->npieces; i++) {
		struct pf_piece *pc = &raw->pieces[i];
		struct pf_alloc *a = &r->allocs[pc->alloc];
		const uint8_t *buf = raw->buf + pc->off;
		uint64_t e, ents = pc->len / BUDDY_ENTRY_BYTES, k = pc->stride;
		struct pf_obs *ob;
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
				for (c = 0; c < PF_NC; c++)
					ob->hist[c][BUDDY_CODE_ZERO] += k;
				continue;
			}
			for (c = 0; c < PF_NC; c++) {
				unsigned int bits = cs[c]->size(ent);

				ob->hist[c][buddy_code_of_bits(bits)] += k;
				ob->fig3[c] += (uint64_t)buddy_fig3_bytes(bits) * k;
			}
		}
		if (r->o->dumps)
			write_dump(r, sn, a, buf, pc->len);
	}
	sn->classify_ms = (pf_now() - t0) * 1e3;
}

static void free_raw(struct pf_raw *raw, bool keep_buf)
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

static unsigned int pending_kept(const struct pf_state *st)
{
	unsigned int n = 0;

	for (size_t i = 0; i < st->npending; i++)
		if (!st->r->snaps[st->pending[i].snap].dropped)
			n++;
	return n;
}

/*
 * Adaptive progress: this snapshot makes 2N pending, so thin() will drop
 * every other one; double the step now, while the program is stopped, so
 * that no allocation is made under the old step after this point.  The
 * multiples of the new step are multiples of the old: the points kept
 * stay evenly spaced.
 */
static void progress_step(struct pf_state *st)
{
	struct bprof_hdr *h = st->r->hdr;
	unsigned int points = st->r->o->points;

	if (points && pending_kept(st) + 1 >= 2 * points)
		__atomic_store_n(&h->every_bytes, 2 * h->every_bytes,
				 __ATOMIC_RELAXED);
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
static void sync_procs(struct pf_run *r)
{
	struct bprof_proc *bp = BPROF_PROCS(r->hdr);
	uint32_t i;

	for (i = 0; i < r->hdr->nprocs; i++) {
		pid_t pid = __atomic_load_n(&bp[i].pid, __ATOMIC_ACQUIRE);
		struct pf_proc *p;
		char st;

		if (!pid)
			continue;
		if (i >= r->nprocs) {
			r->procs = xrealloc(r->procs, (i + 1) * sizeof(*r->procs));
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
static bool proc_alive(struct pf_proc *p)
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
static void scan_table(struct pf_state *st, unsigned int p, struct live **lv,
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

/* Read the pending iovecs of one process, charging what failed. */
static void flush_iovs(pid_t pid, struct pf_snap *sn, struct pf_raw *raw,
		       struct live *lv, struct iovec *loc, struct iovec *rem,
		       uint8_t *unread, size_t *owner_of, size_t *niov)
{
	uint64_t missed;

	if (!*niov)
		return;
	missed = read_iovs(pid, loc, rem, *niov, unread);
	sn->unread += missed;
	for (size_t j = 0; j < *niov; j++) {
		struct pf_piece *pc = &raw->pieces[owner_of[j]];

		if (!unread[j])
			continue;
		pc->unread += loc[j].iov_len / BUDDY_ENTRY_BYTES;
		sn->pp[lv[pc->alloc].proc].unread += loc[j].iov_len;
	}
	*niov = 0;
}

/*
 * One snapshot of every followed process that has a table and still runs:
 * all are stopped, their tables and memory read, then all continued.  A
 * process that has exited is not read any more: its figures are those of
 * the snapshots taken while it ran.
 */
static int snapshot(struct pf_state *st, bool requested)
{
	struct pf_run *r = st->r;
	struct pf_opts *o = r->o;
	struct live *lv = NULL;
	size_t nlv = 0, caplv = 0, i;
	struct pf_map **maps;
	size_t *nmaps;
	bool *stopped;
	struct pf_snap *sn;
	struct pf_raw raw = { 0 };
	uint64_t total_blocks = 0, cap_blocks, k, bufpos = 0;
	struct iovec loc[IOV_BATCH], rem[IOV_BATCH];
	uint8_t unread[IOV_BATCH];
	size_t owner_of[IOV_BATCH];
	size_t niov = 0, cappieces = 0;
	double t0 = pf_now();
	unsigned int p, nstopped = 0;
	pid_t cur = 0;

	if (!__atomic_load_n(&r->hdr->first_pid, __ATOMIC_ACQUIRE))
		return 0;	/* no process followed yet */
	sync_procs(r);
	stopped = calloc(r->nprocs + 1, sizeof(*stopped));
	maps = calloc(r->nprocs + 1, sizeof(*maps));
	nmaps = calloc(r->nprocs + 1, sizeof(*nmaps));
	if (!stopped || !maps || !nmaps) {
		pf_err("out of memory for a snapshot");
		exit(1);
	}
	for (p = 0; p < r->nprocs; p++) {
		if (!r->procs[p].pid || !proc_alive(&r->procs[p]))
			continue;
		if (kill(r->procs[p].pid, SIGSTOP)) {
			r->procs[p].gone = true;
			continue;
		}
		stopped[p] = true;
	}

	GROW(r->snaps, r->nsnaps, r->capsnaps);
	sn = &r->snaps[r->nsnaps];
	memset(sn, 0, sizeof(*sn));
	sn->id = r->nsnaps;
	sn->t = t0 - r->t_start;
	sn->requested = requested;
	sn->npp = r->nprocs;
	sn->pp = calloc(r->nprocs + 1, sizeof(*sn->pp));
	if (!sn->pp) {
		pf_err("out of memory for a snapshot");
		exit(1);
	}

	for (p = 0; p < r->nprocs; p++) {
		int running;

		if (!stopped[p])
			continue;
		running = wait_stopped(r->procs[p].pid);
		if (running < 0) {
			kill(r->procs[p].pid, SIGCONT);
			stopped[p] = false;
			r->procs[p].gone = true;
			continue;
		}
		nstopped++;
		sn->not_stopped += running;
		sn->pp[p].not_stopped = running;
		sn->pp[p].read = true;
		r->procs[p].last_read = sn->id + 1;
		maps[p] = read_maps(r->procs[p].pid, &nmaps[p]);
		scan_table(st, p, &lv, &nlv, &caplv);
	}
	qsort(lv, nlv, sizeof(*lv), cmp_live);

	for (i = 0; i < nlv; i++) {
		struct pf_psnap *pp = &sn->pp[lv[i].proc];
		uint64_t len = readable_len(maps[lv[i].proc], nmaps[lv[i].proc],
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
		total_blocks += (len + BLK - 1) / BLK;
	}
	cap_blocks = o->sample_bytes ? (o->sample_bytes + BLK - 1) / BLK : 0;
	k = share_budget(lv, nlv, cap_blocks);
	raw.stride = k;
	sn->stride = k;
	total_blocks = 0;
	for (i = 0; i < nlv; i++) {
		uint64_t nb = (lv[i].readable + BLK - 1) / BLK;

		total_blocks += (nb + lv[i].stride - 1) / lv[i].stride;
		if (lv[i].stride > sn->pp[lv[i].proc].stride)
			sn->pp[lv[i].proc].stride = lv[i].stride;
	}
	for (p = 0; p < r->nprocs; p++)
		if (sn->pp[p].read && !sn->pp[p].stride)
			sn->pp[p].stride = 1;
	raw.buf = malloc((total_blocks + 1) * BLK);
	raw.snap = r->nsnaps;
	if (!raw.buf) {
		pf_err("out of memory for a snapshot");
		exit(1);
	}

	for (i = 0; i < nlv; i++) {
		struct live *l = &lv[i];
		uint64_t nb = (l->readable + BLK - 1) / BLK, b, start = bufpos;
		struct pf_piece *pc;

		if (!l->readable)
			continue;
		if (cur != r->procs[l->proc].pid) {
			/* the iovecs read one process's memory */
			flush_iovs(cur, sn, &raw, lv, loc, rem, unread, owner_of,
				   &niov);
			cur = r->procs[l->proc].pid;
		}
		GROW(raw.pieces, raw.npieces, cappieces);
		pc = &raw.pieces[raw.npieces++];
		pc->alloc = i;		/* the live entry until all is read */
		pc->off = bufpos;
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
			memset(raw.buf + bufpos + blen, 0, plen - blen);
			if (niov && owner_of[niov - 1] == raw.npieces - 1 &&
			    (uint8_t *)loc[niov - 1].iov_base + loc[niov - 1].iov_len ==
			    raw.buf + bufpos &&
			    (uintptr_t)rem[niov - 1].iov_base + rem[niov - 1].iov_len ==
			    l->s.addr + b * BLK && loc[niov - 1].iov_len < IOV_MERGE) {
				/* adjacent on both sides: one larger read */
				loc[niov - 1].iov_len += blen;
				rem[niov - 1].iov_len += blen;
				bufpos += plen;
				pc->len += plen;
				continue;
			}
			loc[niov].iov_base = raw.buf + bufpos;
			loc[niov].iov_len = blen;
			rem[niov].iov_base = (void *)(uintptr_t)(l->s.addr + b * BLK);
			rem[niov].iov_len = blen;
			unread[niov] = 0;
			owner_of[niov] = raw.npieces - 1;
			niov++;
			bufpos += plen;
			pc->len += plen;
			if (niov == IOV_BATCH)
				flush_iovs(cur, sn, &raw, lv, loc, rem, unread,
					   owner_of, &niov);
		}
		sn->pp[l->proc].sampled += bufpos - start;
	}
	flush_iovs(cur, sn, &raw, lv, loc, rem, unread, owner_of, &niov);
	if (adaptive_progress(o) && !requested)
		progress_step(st);
	for (p = 0; p < r->nprocs; p++)
		if (stopped[p])
			kill(r->procs[p].pid, SIGCONT);
	sn->stopped_ms = nstopped ? (pf_now() - t0) * 1e3 : 0;
	sn->sampled = bufpos;
	/* the allocations, labelled through their own process's maps */
	for (i = 0; i < raw.npieces; i++) {
		struct live *l = &lv[raw.pieces[i].alloc];

		raw.pieces[i].alloc = alloc_of(r, l->proc, &l->s, maps[l->proc],
					       nmaps[l->proc]);
	}
	r->nsnaps++;
	for (p = 0; p < r->nprocs; p++)
		if (maps[p])
			free_maps(maps[p], nmaps[p]);
	free(maps);
	free(nmaps);
	free(stopped);
	free(lv);

	if (adaptive(o) && !requested) {
		/* adaptive: keep the raw sample until the end */
		GROW(st->pending, st->npending, st->cappending);
		st->pending[st->npending++] = raw;
	} else {
		classify(r, &raw);
		free_raw(&raw, false);
	}
	return 1;
}

/*
 * Pending snapshot @raw is being thinned out (already marked dropped): it
 * stays kept for each process it was the last to read, with allocations
 * in it (pf_psnap.last), when that process has exited (@gone_only; at the
 * end, always), so that a process that exited keeps the data of its last
 * snapshot.  The raw sample is cut to those processes' pieces: the other
 * processes' data is freed now, the schedule (pending_kept()) no longer
 * counts it.  Returns true when @raw is held so (classify it at the end),
 * false when it was freed.
 */
static bool hold_last(struct pf_run *r, struct pf_raw *raw, bool gone_only)
{
	struct pf_snap *sn = &r->snaps[raw->snap];
	uint64_t pos = 0;
	size_t i, j;
	bool any = false;
	uint8_t *buf;

	for (unsigned int p = 0; p < sn->npp && p < r->nprocs; p++) {
		struct pf_proc *pr = &r->procs[p];

		if (sn->pp[p].read && sn->pp[p].allocs &&
		    pr->last_read == sn->id + 1 && (pr->gone || !gone_only)) {
			sn->pp[p].last = true;
			any = true;
		}
	}
	if (!any) {
		free_raw(raw, false);
		return false;
	}
	/* the pieces are in buffer order: move the kept ones down */
	for (i = 0, j = 0; i < raw->npieces; i++) {
		struct pf_piece *pc = &raw->pieces[i];

		if (!sn->pp[r->allocs[pc->alloc].proc].last)
			continue;
		memmove(raw->buf + pos, raw->buf + pc->off, pc->len);
		pc->off = pos;
		pos += pc->len;
		raw->pieces[j++] = *pc;
	}
	raw->npieces = j;
	buf = realloc(raw->buf, pos ? pos : 1);
	if (buf)
		raw->buf = buf;
	return true;
}

/*
 * Adaptive spacing: at 2N timer snapshots drop every other one (those
 * held for an exited process by hold_last() stay, outside the count).
 */
static void thin(struct pf_state *st)
{
	struct pf_run *r = st->r;
	unsigned int n = pending_kept(st), keep = 0;
	size_t i, j;

	if (!r->o->points || n < 2 * r->o->points)
		return;
	for (i = 0, j = 0; i < st->npending; i++) {
		struct pf_raw *p = &st->pending[i];

		if (!r->snaps[p->snap].dropped && (keep++ & 1) == 0) {
			r->snaps[p->snap].dropped = true;
			if (!hold_last(r, p, true))
				continue;
		}
		st->pending[j++] = *p;
	}
	st->npending = j;
	st->delta *= 2;
}

/*
 * At the end: keep N evenly spaced pending snapshots (of those not held
 * by hold_last()), classify them, and what is held for processes that
 * were last read by a snapshot not kept.
 */
static void finish_pending(struct pf_state *st)
{
	struct pf_run *r = st->r;
	size_t m = pending_kept(st), n = r->o->points, i, k;
	bool *keep = calloc(m + 1, 1);

	if (!keep)
		exit(1);
	if (m <= n || !n) {
		for (i = 0; i < m; i++)
			keep[i] = true;
	} else {
		for (i = 0; i < n; i++)
			keep[((i + 1) * m + n - 1) / n - 1] = true;
	}
	for (i = 0, k = 0; i < st->npending; i++) {
		struct pf_raw *p = &st->pending[i];
		struct pf_snap *sn = &r->snaps[p->snap];

		if (!sn->dropped && !keep[k++]) {
			sn->dropped = true;
			if (!hold_last(r, p, false))
				continue;
		}
		classify(r, p);
		free_raw(p, false);
	}
	st->npending = 0;
	free(keep);
}

/*
 * The timer's clock: seconds since the start, or CPU seconds of the first
 * followed process (all its threads; the child until one loaded the
 * interposer).  -1 when the process is gone.
 */
static double clock_now(struct pf_state *st)
{
	struct pf_run *r = st->r;
	struct timespec ts;
	clockid_t cid;
	pid_t pid;

	if (r->o->clock != PF_CLOCK_CPU)
		return pf_now() - r->t_start;
	pid = __atomic_load_n(&r->hdr->first_pid, __ATOMIC_ACQUIRE);
	if (pid <= 0)
		pid = r->child;
	if (clock_getcpuclockid(pid, &cid) || clock_gettime(cid, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Time of the next timer snapshot (clock_now() s), or -1 for none. */
static double next_timer(struct pf_state *st)
{
	struct pf_opts *o = st->r->o;

	if (!clock_timer(o))
		return -1;
	if (o->nat)
		return st->timer_taken < o->nat ? o->at[st->timer_taken] : -1;
	if (o->interval) {
		if (o->points && st->timer_taken >= o->points)
			return -1;
		return (st->timer_taken + 1) * o->interval;
	}
	return st->next;
}

static void after_timer(struct pf_state *st, double t)
{
	st->timer_taken++;
	if (adaptive(st->r->o)) {
		thin(st);
		st->next = t + st->delta;
	}
}

/* ---- the run ----------------------------------------------------------------------- */

static void reap(struct pf_run *r)
{
	struct rusage ru;
	int status;
	pid_t p;

	while ((p = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		if (p == r->child) {
			r->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				   ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
			r->maxrss_kib = ru.ru_maxrss;
			r->status = status;
			r->exited = true;
			r->t_end = pf_now();
		}
	}
}

static void answer_requests(struct pf_run *r, uint32_t req)
{
	__atomic_store_n(&r->hdr->snap_done, req, __ATOMIC_RELEASE);
	syscall(SYS_futex, &r->hdr->snap_done, 1 /* FUTEX_WAKE */, INT_MAX,
		NULL, NULL, 0);
}

static int run_loop(struct pf_state *st)
{
	struct pf_run *r = st->r;

	while (!r->exited) {
		struct pollfd pfd = { .fd = st->sfd, .events = POLLIN };
		double nt = next_timer(st), now = clock_now(st);
		int timeout = -1, n;

		if (nt >= 0)
			timeout = nt <= now ? 0 : (int)((nt - now) * 1000) + 1;
		/* CPU time runs at up to one second per thread and second */
		if (nt >= 0 && r->o->clock == PF_CLOCK_CPU && timeout > 20)
			timeout = 20;
		n = poll(&pfd, 1, timeout);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n > 0) {
			struct signalfd_siginfo si;

			while (read(st->sfd, &si, sizeof(si)) == sizeof(si)) {
				switch (si.ssi_signo) {
				case SIGCHLD:
					reap(r);
					break;
				case SIGUSR2: {
					uint32_t req = __atomic_load_n(
						&r->hdr->snap_req, __ATOMIC_ACQUIRE);
					uint64_t ps = __atomic_load_n(
						&r->hdr->nr_progress_snaps,
						__ATOMIC_ACQUIRE);
					/* the progress schedule's, or a marker */
					bool prog = ps != st->progress_seen;

					st->progress_seen = ps;
					if (!r->exited)
						snapshot(st, !prog);
					if (prog && adaptive_progress(r->o))
						thin(st);
					answer_requests(r, req);
					break;
				}
				default:	/* SIGINT, SIGTERM, SIGHUP, SIGQUIT */
					kill(r->child, si.ssi_signo);
					break;
				}
			}
			continue;
		}
		if (nt >= 0 && clock_now(st) >= nt && !r->exited) {
			reap(r);
			if (r->exited)
				break;
			snapshot(st, false);
			after_timer(st, clock_now(st));
		}
	}
	return 0;
}

int pf_exit_code(const struct pf_run *r)
{
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return 1;
}

char *pf_find_lib(const struct pf_opts *o)
{
	return find_lib(o);
}

int pf_run_program(struct pf_run *r, const char *lib)
{
	struct pf_opts *o = r->o;
	struct pf_state st = { .r = r };
	char shm[64];
	sigset_t mask, old;
	int fd;

	fd = make_region(r, shm, sizeof(shm));
	if (fd < 0)
		return -1;
	st.fd = fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &old);
	st.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (st.sfd < 0) {
		pf_err("signalfd: %s", strerror(errno));
		close(fd);
		return -1;
	}

	fflush(NULL);
	r->t_start = pf_now();
	r->child = fork();
	if (r->child < 0) {
		pf_err("fork: %s", strerror(errno));
		close(st.sfd);
		close(fd);
		return -1;
	}
	if (!r->child) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (set_env(lib, shm)) {
			fprintf(stderr, "buddyctl: profile: setenv failed\n");
			_exit(127);
		}
		execvp(o->argv[0], o->argv);
		fprintf(stderr, "buddyctl: profile: %s: %s\n", o->argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (o->nice)
		setpriority(PRIO_PROCESS, 0, o->nice);
	pf_msg(r, "pid %d, %s, tracking >= %llu B, %u points%s%s", (int)r->child,
	       lib, (unsigned long long)o->min_size, o->nat ? o->nat : o->points,
	       o->every_allocs || o->every_bytes ? " (fixed progress steps)" :
	       adaptive_progress(o) ? " (adaptive, on tracked bytes allocated)" :
	       !o->timer ? " (on request only)" : o->interval ? " (fixed interval)" :
	       o->nat ? " (at given times)" : " (adaptive spacing)",
	       !clock_timer(o) ? "" : o->clock == PF_CLOCK_CPU ? ", CPU time" :
	       ", wall-clock");
	st.delta = o->first;
	st.next = o->first;

	run_loop(&st);
	finish_pending(&st);
	if (adaptive_progress(o) && !r->nsnaps)
		pf_err("no snapshot: the program's tracked allocations "
		       "totalled %llu bytes, less than the first progress step "
		       "(%llu; --first-bytes, or --clock wall)",
		       (unsigned long long)r->hdr->progress_bytes,
		       (unsigned long long)first_bytes(o));
	memcpy(&r->final, r->hdr, sizeof(r->final));
	sync_procs(r);
	for (unsigned int p = 0; p < r->nprocs; p++) {
		memcpy(&r->procs[p].final, &BPROF_PROCS(r->hdr)[p],
		       sizeof(r->procs[p].final));
		r->procs[p].final.exe[sizeof(r->procs[p].final.exe) - 1] = 0;
	}
	if (!r->t_end)
		r->t_end = pf_now();
	free(st.scratch);
	close(st.sfd);
	close(fd);
	return 0;
}
