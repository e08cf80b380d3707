// SPDX-License-Identifier: GPL-2.0
/*
 * profile_schedule.c - the profile engine's run: start the program with
 * the interposer preloaded, take the snapshots the schedule asks for (its
 * progress, a timer, its own requests), thin them out, and collect what is
 * left when it exits (Documentation/profiler.rst, "When").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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

#include "launch.h"
#include "profile_priv.h"
#include "schedule_rule.h"

/*
 * The automatic schedule: adaptive on the program's progress (the default),
 * or a timer on wall-clock or CPU seconds; --every-allocs/--every-bytes are
 * fixed progress steps the interposer keeps by itself.  The default also
 * runs the adaptive timer on the program's CPU time: a program that
 * allocates up front and then computes gets points while it computes, not
 * only while it allocates; the points kept are spread over its CPU time.
 */
bool prof_adaptive_progress(const struct prof_opts *o)
{
	return o->timer && o->clock == PROF_CLOCK_PROGRESS && !o->every_allocs &&
	       !o->every_bytes;
}

static bool clock_timer(const struct prof_opts *o)
{
	return o->timer && o->clock != PROF_CLOCK_PROGRESS;
}

/* The timer's clock: the default's runs on CPU time. */
static enum prof_clock timer_clock(const struct prof_opts *o)
{
	return prof_adaptive_progress(o) ? PROF_CLOCK_CPU : o->clock;
}

/* Snapshots thinned out as they come (adaptive spacing, either clock). */
bool prof_adaptive(const struct prof_opts *o)
{
	return prof_adaptive_progress(o) ||
	       (clock_timer(o) && !o->interval && !o->nat);
}

double prof_max_stopped(const struct prof_opts *o)
{
	if (o->cuda || o->cuda_records)
		return 0;	/* the hook's schedule */
	if (o->max_stopped >= 0)
		return o->max_stopped;
	return prof_adaptive(o) ? PROF_DEF_MAX_STOPPED : 0;
}

static double clock_now(struct prof_state *st);

/* The timer's clock when the last snapshot was taken (r->nsnaps > 0). */
static double last_snap_clock(const struct prof_run *r)
{
	const struct prof_snap *sn = &r->snaps[r->nsnaps - 1];

	return timer_clock(r->o) == PROF_CLOCK_CPU ? sn->cpu : sn->t;
}

/*
 * The program has been stopped its share of the run so far, or would be
 * after one more snapshot as long as the longest yet: the automatic one
 * due now is skipped.  The first is always taken, and so is a point of the
 * timer once its clock has doubled since the last snapshot taken: a
 * program whose first snapshot was long (much memory, a loaded machine)
 * still gets snapshots of the later run, a few more of them the longer it
 * runs, or its figures would describe only its start.
 */
static bool over_budget(struct prof_state *st, bool timer_point)
{
	struct prof_run *r = st->r;
	double share = prof_max_stopped(r->o), longest = 0;

	if (!share || !r->nsnaps)
		return false;
	if (timer_point && last_snap_clock(r) > 0 &&
	    clock_now(st) >= 2 * last_snap_clock(r))
		return false;
	for (unsigned int s = 0; s < r->nsnaps; s++)
		if (r->snaps[s].stopped_ms > longest)
			longest = r->snaps[s].stopped_ms;
	if (r->stopped_s + longest / 1e3 <=
	    share * fmax(prof_now() - r->t_start, PROF_STOP_MIN_RUN_S))
		return false;
	r->nskipped++;
	return true;
}

static uint64_t first_bytes(const struct prof_opts *o)
{
	return o->first_bytes ? o->first_bytes : PROF_DEF_FIRST_BYTES;
}

/* ---- starting the program ---------------------------------------------------- */

int prof_exe_dir(char *dir)
{
	ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

char *prof_find_preload(const char *lib, const char *env_name,
			const char *name)
{
	static const char *const where[] = { "%s/%s", "%s/../lib/buddy/%s",
					     "%s/../%s" };
	char exe[PATH_MAX], path[PATH_MAX + 64], *res;
	const char *env = getenv(env_name);

	if (lib)
		return realpath(lib, NULL);
	if (env && *env)
		return realpath(env, NULL);
	if (prof_exe_dir(exe))
		return NULL;
	/* next to buddyctl, installed, or above a static build/static/ */
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(path, sizeof(path), where[i], exe, name);
		if ((res = realpath(path, NULL)) && !access(res, R_OK))
			return res;
		free(res);
	}
	return NULL;
}

char *prof_find_lib(const char *lib)
{
	return prof_find_preload(lib, "BUDDYPROF_LIB", "libbuddyprof.so");
}

static int make_region(struct prof_run *r, char *path, size_t len)
{
	struct prof_opts *o = r->o;
	uint32_t nprocs = o->procs ? o->procs : BPROF_DEF_PROCS;
	uint64_t bytes = BPROF_REGION_BYTES(nprocs, o->slots);
	struct bprof_hdr *h;
	int fd;

	fd = memfd_create("buddyprof", MFD_CLOEXEC);
	if (fd < 0) {
		prof_err("memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ftruncate(fd, bytes)) {
		prof_err("ftruncate: %s", strerror(errno));
		close(fd);
		return -1;
	}
	h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		prof_err("mmap: %s", strerror(errno));
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
	h->every_bytes = prof_adaptive_progress(o) ? first_bytes(o) : o->every_bytes;
	h->free_bytes = o->free_bytes;
	if (o->match)
		snprintf(h->match, sizeof(h->match), "%s", o->match);
	r->hdr = h;
	/* The program opens it by this path; the fd stays ours (CLOEXEC). */
	snprintf(path, len, "/proc/%d/fd/%d", (int)getpid(), fd);
	return fd;
}

static unsigned int pending_kept(const struct prof_state *st)
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
void prof_progress_step(struct prof_state *st)
{
	struct bprof_hdr *h = st->r->hdr;
	unsigned int points = st->r->o->points;

	if (sched_step_doubles(pending_kept(st), points))
		__atomic_store_n(&h->every_bytes, 2 * h->every_bytes,
				 __ATOMIC_RELAXED);
}

/*
 * Pending snapshot @raw is being thinned out (already marked dropped): it
 * stays kept for each process it was the last to read, with allocations
 * in it (prof_psnap.last), when that process has exited (@gone_only; at the
 * end, always), so that a process that exited keeps the data of its last
 * snapshot.  The raw sample is cut to those processes' pieces: the other
 * processes' data is freed now, the schedule (pending_kept()) no longer
 * counts it.  Returns true when @raw is held so (classify it at the end),
 * false when it was freed.
 */
static bool hold_last(struct prof_run *r, struct prof_raw *raw, bool gone_only)
{
	struct prof_snap *sn = &r->snaps[raw->snap];
	uint64_t pos = 0;
	size_t i, j;
	bool any = false;
	uint8_t *buf;

	for (unsigned int p = 0; p < sn->npp && p < r->nprocs; p++) {
		struct prof_proc *pr = &r->procs[p];

		if (sn->pp[p].read && sn->pp[p].allocs &&
		    pr->last_read == sn->id + 1 && (pr->gone || !gone_only)) {
			sn->pp[p].last = true;
			any = true;
		}
	}
	if (!any) {
		prof_free_raw(raw, false);
		return false;
	}
	/* the pieces are in buffer order: move the kept ones down */
	for (i = 0, j = 0; i < raw->npieces; i++) {
		struct prof_piece *pc = &raw->pieces[i];

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
static void thin(struct prof_state *st)
{
	struct prof_run *r = st->r;
	unsigned int n = pending_kept(st), keep = 0;
	size_t i, j;

	if (!sched_thin_now(n, r->o->points))
		return;
	for (i = 0, j = 0; i < st->npending; i++) {
		struct prof_raw *p = &st->pending[i];

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
 * The default schedule's choice of at most @n of the @m pending snapshots
 * (@keep, in pending order) once its CPU timer took one: for each of @n
 * points evenly spaced over the CPU time the snapshots span, the one
 * nearest to it within half a spacing, if any.  A burst of progress
 * points while the program allocates up front stands for almost none of
 * its CPU time: it gives one point at most, or none when the program
 * computes long after it.  Without a timer point the progress points are
 * evenly spaced already, on the program's own progress.
 */
static void keep_by_cpu(struct prof_state *st, bool *keep, size_t m, size_t n)
{
	struct prof_run *r = st->r;
	double *cpu = calloc(m + 1, sizeof(*cpu)), end;
	size_t i, k, best;

	if (!cpu)
		exit(1);
	for (i = 0, k = 0; i < st->npending; i++)
		if (!r->snaps[st->pending[i].snap].dropped)
			cpu[k++] = r->snaps[st->pending[i].snap].cpu;
	end = cpu[m - 1];
	if (!n || n > m)
		n = m;
	for (i = 0; i < n; i++) {
		double t = end * (i + 1) / n;

		for (k = 0, best = m; k < m; k++)
			if (fabs(cpu[k] - t) <= end / n / 2 && (best == m ||
			    fabs(cpu[k] - t) < fabs(cpu[best] - t)))
				best = k;
		if (best < m)
			keep[best] = true;
	}
	free(cpu);
}

/*
 * At the end: keep N evenly spaced pending snapshots (of those not held
 * by hold_last()), classify them, and what is held for processes that
 * were last read by a snapshot not kept.
 */
static void finish_pending(struct prof_state *st)
{
	struct prof_run *r = st->r;
	size_t m = pending_kept(st), n = r->o->points, i, k;
	bool *keep = calloc(m + 1, 1);

	if (!keep)
		exit(1);
	if (prof_adaptive_progress(r->o) && st->timer_taken && m) {
		keep_by_cpu(st, keep, m, n);
	} else if (m <= n || !n) {
		for (i = 0; i < m; i++)
			keep[i] = true;
	} else {
		for (i = 0; i < n; i++)
			keep[sched_kept_index(i, m, n)] = true;
	}
	for (i = 0, k = 0; i < st->npending; i++) {
		struct prof_raw *p = &st->pending[i];
		struct prof_snap *sn = &r->snaps[p->snap];

		if (!sn->dropped && !keep[k++]) {
			sn->dropped = true;
			if (!hold_last(r, p, false))
				continue;
		}
		prof_classify(r, p);
		prof_free_raw(p, false);
	}
	st->npending = 0;
	free(keep);
}

/*
 * CPU seconds of the first followed process (all its threads; the child
 * until one loaded the interposer).  -1 when the process is gone.
 */
double prof_cpu_now(const struct prof_run *r)
{
	struct timespec ts;
	clockid_t cid;
	pid_t pid;

	pid = __atomic_load_n(&r->hdr->first_pid, __ATOMIC_ACQUIRE);
	if (pid <= 0)
		pid = r->child;
	if (clock_getcpuclockid(pid, &cid) || clock_gettime(cid, &ts))
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double clock_now(struct prof_state *st)
{
	if (timer_clock(st->r->o) != PROF_CLOCK_CPU)
		return prof_now() - st->r->t_start;
	return prof_cpu_now(st->r);
}

/* Time of the next timer snapshot (clock_now() s), or -1 for none. */
static double next_timer(struct prof_state *st)
{
	struct prof_opts *o = st->r->o;

	if (prof_adaptive_progress(o))
		return st->next;
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

static void after_timer(struct prof_state *st, double t)
{
	st->timer_taken++;
	if (prof_adaptive(st->r->o)) {
		thin(st);
		st->next = t + st->delta;
	}
}

/* ---- the run ----------------------------------------------------------------------- */

static void reap(struct prof_run *r)
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
			r->t_end = prof_now();
		}
	}
}

static void answer_requests(struct prof_run *r, uint32_t req)
{
	__atomic_store_n(&r->hdr->snap_done, req, __ATOMIC_RELEASE);
	syscall(SYS_futex, &r->hdr->snap_done, 1 /* FUTEX_WAKE */, INT_MAX,
		NULL, NULL, 0);
}

static int run_loop(struct prof_state *st)
{
	struct prof_run *r = st->r;

	while (!r->exited) {
		struct pollfd pfd = { .fd = st->sfd, .events = POLLIN };
		double nt = next_timer(st), now = clock_now(st);
		int timeout = -1, n;

		if (nt >= 0)
			timeout = nt <= now ? 0 : (int)((nt - now) * 1000) + 1;
		/* CPU time runs at up to one second per thread and second */
		if (nt >= 0 && timer_clock(r->o) == PROF_CLOCK_CPU && timeout > 20)
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
					if (!r->exited &&
					    !(prog && over_budget(st, false)))
						prof_snapshot(st, !prog);
					if (prog && prof_adaptive_progress(r->o))
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
			if (!over_budget(st, true))
				prof_snapshot(st, false);
			after_timer(st, clock_now(st));
		}
	}
	return 0;
}

int prof_exit_code(const struct prof_run *r)
{
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return 1;
}

int prof_run_program(struct prof_run *r, const char *lib)
{
	struct prof_opts *o = r->o;
	struct prof_state st = { .r = r, .guard_fd = -1 };
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
		prof_err("signalfd: %s", strerror(errno));
		close(fd);
		return -1;
	}

	fflush(NULL);
	if (prof_guard_start(&st)) {
		close(st.sfd);
		close(fd);
		return -1;
	}
	r->t_start = prof_now();
	r->child = fork();
	if (r->child < 0) {
		prof_err("fork: %s", strerror(errno));
		prof_guard_stop(&st);
		close(st.sfd);
		close(fd);
		return -1;
	}
	if (!r->child) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		eng_exec("buddyctl: profile", lib, BPROF_ENV_SHM, shm,
			 BPROF_ENV_PID, eng_json_on_stdout(&o->common),
			 o->argv);
	}
	prof_guard_child(&st, r->child);
	if (o->nice)
		setpriority(PRIO_PROCESS, 0, o->nice);
	prof_msg(r, "pid %d, %s, tracking >= %llu B, %u points%s%s", (int)r->child,
	       lib, (unsigned long long)o->min_size, o->nat ? o->nat : o->points,
	       o->every_allocs || o->every_bytes ? " (fixed progress steps)" :
	       prof_adaptive_progress(o) ? " (adaptive, on tracked bytes allocated and CPU time)" :
	       !o->timer ? " (on request only)" : o->interval ? " (fixed interval)" :
	       o->nat ? " (at given times)" : " (adaptive spacing)",
	       !clock_timer(o) ? "" : o->clock == PROF_CLOCK_CPU ? ", CPU time" :
	       ", wall-clock");
	st.delta = prof_adaptive_progress(o) ? PROF_DEF_CPU_FIRST : o->first;
	st.next = st.delta;

	run_loop(&st);
	prof_guard_stop(&st);
	finish_pending(&st);
	if (prof_adaptive_progress(o) && !r->nsnaps)
		prof_err("no snapshot: the program's tracked allocations "
		       "totalled %llu bytes, less than the first progress step "
		       "(%llu; --first-bytes, or --clock wall)",
		       (unsigned long long)r->hdr->progress_bytes,
		       (unsigned long long)first_bytes(o));
	memcpy(&r->final, r->hdr, sizeof(r->final));
	prof_sync_procs(r);
	for (unsigned int p = 0; p < r->nprocs; p++) {
		memcpy(&r->procs[p].final, &BPROF_PROCS(r->hdr)[p],
		       sizeof(r->procs[p].final));
		r->procs[p].final.exe[sizeof(r->procs[p].final.exe) - 1] = 0;
	}
	if (!r->t_end)
		r->t_end = prof_now();
	free(st.scratch);
	close(st.sfd);
	close(fd);
	return 0;
}
