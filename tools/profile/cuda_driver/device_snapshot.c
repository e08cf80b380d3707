// SPDX-License-Identifier: GPL-2.0
/*
 * device_snapshot.c - the driver interposer's snapshots: when (a thread on
 * the adaptive timer, and whenever the program calls
 * buddy_cuda_snapshot()), and how: every live allocation copied to host in
 * pieces, never one copy across two allocations, and sized with the codec
 * core (libbuddycodec's buddy_sizing_ranges(), linked in).
 *
 * The schedule is the profiler's adaptive rule (schedule_rule.h, as
 * python/buddy/cuda/schedule.py applies it to backward passes and
 * tools/profile/engine/profile_schedule.c to the CPU clock) on wall-clock
 * seconds: the first point
 * BUDDY_CUDA_FIRST_MS after the first allocation, the next ones at
 * multiples of a step (that much at first) from the process's start; when a snapshot would make 2N of
 * them held the step doubles and every other one is dropped; at the end N
 * evenly spaced ones of those held are kept.  The program's own requests
 * are kept outside that count.
 *
 * The program is not stopped: its threads run on while a snapshot copies,
 * only its allocation and free calls wait (the table's lock).  Each
 * context is synchronised once before its allocations are read, so that
 * the work the program queued before the snapshot is in the copy; kernels
 * it launches during the copy may change memory already read or not yet
 * read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_prof.h"
#include "tools/profile/engine/schedule_rule.h"

static void hold(unsigned int **arr, size_t *n, unsigned int id)
{
	unsigned int *a = realloc(*arr, (*n + 1) * sizeof(**arr));

	if (!a)
		return;		/* not listed: counted as dropped */
	a[(*n)++] = id;
	*arr = a;
}

/* A timer snapshot @id was taken at @t: the adaptive rule. */
static void timer_taken(unsigned int id, double t)
{
	if (sched_step_doubles(cu.nheld, cu.points))
		cu.delta_s *= 2;
	hold(&cu.held, &cu.nheld, id);
	cu.next_s = ((unsigned long long)(t / cu.delta_s) + 1) * cu.delta_s;
	if (!sched_thin_now(cu.nheld, cu.points))
		return;
	/* drop the first, third, ...: those left stay evenly spaced */
	for (size_t i = 0, j = 0; i < cu.nheld; i++) {
		if (!(i & 1))
			fprintf(cu.out, "drop\t%u\n", cu.held[i]);
		else
			cu.held[j++] = cu.held[i];
	}
	cu.nheld /= 2;
	fflush(cu.out);
}

void cu_schedule_finish(void)
{
	size_t m = cu.nheld, n = cu.points, k = 0, p = 0;

	if (!n || m <= n)
		return;
	for (size_t i = 0; i < m; i++) {
		if (p < n && sched_kept_index(p, m, n) == i) {
			cu.held[k++] = cu.held[i];
			p++;
		} else {
			fprintf(cu.out, "drop\t%u\n", cu.held[i]);
		}
	}
	cu.nheld = k;
}

/* ---- one snapshot ------------------------------------------------------------- */

struct piece_times {
	double sync_s, copy_s, size_s;
};

/* Make @ctx current on this thread (popping the last one pushed). */
static CUresult switch_ctx(const struct cu_driver *d, CUcontext *pushed,
			   CUcontext ctx)
{
	CUcontext old;
	CUresult rc;

	if (*pushed == ctx)
		return CUDA_SUCCESS;
	if (*pushed)
		d->ctx_pop(&old);
	*pushed = NULL;
	rc = d->ctx_push(ctx);
	if (rc == CUDA_SUCCESS)
		*pushed = ctx;
	return rc;
}

/*
 * Read and size allocation @a into @st: pieces of cu.piece_bytes, each
 * within the allocation.  Returns the bytes not read.
 */
static uint64_t read_alloc(const struct cu_driver *d, const struct cu_alloc *a,
			   struct buddy_size_stat *st, struct piece_times *tm)
{
	uint64_t whole = a->size / BUDDY_ENTRY_SIZE * BUDDY_ENTRY_SIZE;
	uint8_t *buf = cu.staging;

	memset(st, 0, sizeof(*st));
	for (uint64_t off = 0; off < whole; off += cu.piece_bytes) {
		uint64_t n = whole - off < cu.piece_bytes ? whole - off :
			     cu.piece_bytes;
		struct buddy_size_stat ps;
		double t = cu_now();
		CUresult rc = d->dtoh(buf, a->addr + off, n);
		int err;

		tm->copy_s += cu_now() - t;
		if (rc != CUDA_SUCCESS) {
			cu.copy_errors++;
			cu_note_once("copy", "a copy failed (%s at 0x%llx, %llu bytes from offset %llu): CUresult %d; the rest of it is counted unread",
				     cu_path_name[a->path],
				     (unsigned long long)a->addr,
				     (unsigned long long)n,
				     (unsigned long long)off, rc);
			return a->size - off;
		}
		t = cu_now();
		err = buddy_sizing_ranges(cu.sizer, buf, &n, 1, cu.codecs, &ps);
		tm->size_s += cu_now() - t;
		if (err) {
			cu_note_once("size", "sizing failed: %s", strerror(-err));
			return a->size - off;
		}
		st->entries += ps.entries;
		for (int c = 0; c < BUDDY_SIZING_NC; c++) {
			for (int k = 0; k < BUDDY_CODE_NR; k++)
				st->hist[c][k] += ps.hist[c][k];
			st->fig3_bytes[c] += ps.fig3_bytes[c];
		}
	}
	return a->size - whole;
}

static void write_blk(unsigned int sid, size_t seg, const struct cu_alloc *a,
		      const struct buddy_size_stat *st, uint64_t unread)
{
	FILE *f = cu.out;

	fprintf(f, "blk\t%u\t%zu\t0\t%llu\t%llu\ta\t%s\t%llu\t%llu", sid, seg,
		(unsigned long long)a->size, (unsigned long long)a->size,
		cu.labels[a->label].name, (unsigned long long)st->entries,
		(unsigned long long)unread);
	for (int c = 0; c < BUDDY_SIZING_NC; c++)
		for (int k = 0; k < BUDDY_CODE_NR; k++)
			fprintf(f, "\t%llu", (unsigned long long)st->hist[c][k]);
	for (int c = 0; c < BUDDY_SIZING_NC; c++)
		fprintf(f, "\t%llu", (unsigned long long)st->fig3_bytes[c]);
	fputc('\n', f);
}

/* Whether every context of the table was synchronised; notes when not. */
static void sync_contexts(const struct cu_driver *d, CUcontext *pushed)
{
	for (size_t i = 0; i < cu.nallocs; i++) {
		CUcontext ctx = cu.allocs[i].ctx;
		bool seen = false;
		CUresult rc;

		for (size_t j = 0; j < i && !seen; j++)
			seen = cu.allocs[j].ctx == ctx;
		if (seen || !ctx)
			continue;
		rc = switch_ctx(d, pushed, ctx);
		if (rc == CUDA_SUCCESS)
			rc = d->ctx_sync();
		if (rc != CUDA_SUCCESS)
			cu_note_once("sync", "synchronising a context failed: CUresult %d; its memory is read as it is",
				     rc);
	}
}

int cu_snapshot(bool marked)
{
	const struct cu_driver *d = cu_driver_get();
	struct buddy_size_stat *st;
	struct piece_times tm = { 0 };
	uint64_t *unread, bytes = 0, unread_sum = 0;
	double t0 = cu_now();
	CUcontext pushed = NULL, old;
	unsigned int sid;

	if (!cu.out || !d)
		return -1;
	if (!cu.sizer) {
		cu.sizer = buddy_sizing_new(cu.threads);
		if (!cu.sizer) {
			cu_note_once("sizer", "no sizing threads: %s; no snapshot",
				     strerror(errno));
			return -1;
		}
	}
	if (!cu.staging) {
		cu.staging = malloc(cu.piece_bytes);
		if (!cu.staging) {
			cu_note_once("staging", "no staging buffer of %llu bytes; no snapshot",
				     (unsigned long long)cu.piece_bytes);
			return -1;
		}
	}
	st = calloc(cu.nallocs + 1, sizeof(*st));
	unread = calloc(cu.nallocs + 1, sizeof(*unread));
	if (!st || !unread) {
		free(st);
		free(unread);
		cu_note_once("nomem-snap", "out of memory for a snapshot of %zu allocations",
			     cu.nallocs);
		return -1;
	}
	sync_contexts(d, &pushed);
	tm.sync_s = cu_now() - t0;
	for (size_t i = 0; i < cu.nallocs; i++) {
		const struct cu_alloc *a = &cu.allocs[i];

		bytes += a->size;
		if (!a->readable || !a->ctx) {
			unread[i] = a->size;
		} else if (switch_ctx(d, &pushed, a->ctx) != CUDA_SUCCESS) {
			cu_note_once("push", "a context could not be made current: its allocations are counted unread");
			unread[i] = a->size;
		} else {
			unread[i] = read_alloc(d, a, &st[i], &tm);
		}
		unread_sum += unread[i];
	}
	if (pushed)
		d->ctx_pop(&old);
	sid = cu.nsnaps++;
	fprintf(cu.out, "snap\t%u\t%.6f\t%llu\t%.3f\t%.3f\t%.3f\t%zu\t%zu\t%llu\t%llu\n",
		sid, t0 - cu.t0_mono, (unsigned long long)cu.ncalls,
		(cu_now() - t0) * 1e3, (tm.sync_s + tm.copy_s) * 1e3,
		tm.size_s * 1e3, cu.nallocs, cu.nallocs,
		(unsigned long long)bytes, (unsigned long long)unread_sum);
	for (size_t i = 0; i < cu.nallocs; i++) {
		const struct cu_alloc *a = &cu.allocs[i];

		fprintf(cu.out, "seg\t%u\t%zu\t%d\t0x%llx\t%llu\t0\t0,0\t%s\t0\n",
			sid, i, a->device, (unsigned long long)a->addr,
			(unsigned long long)a->size, cu_path_name[a->path]);
	}
	for (size_t i = 0; i < cu.nallocs; i++) {
		cu_write_label(&cu.labels[cu.allocs[i].label]);
		write_blk(sid, i, &cu.allocs[i], &st[i], unread[i]);
	}
	fflush(cu.out);
	free(st);
	free(unread);
	if (marked)
		hold(&cu.marked, &cu.nmarked, sid);
	else
		timer_taken(sid, t0 - cu.t0_mono);
	return sid;
}

/*
 * buddy_cuda_snapshot() - what a program calls for a snapshot now (found
 * with dlsym(RTLD_DEFAULT, "buddy_cuda_snapshot"): absent when it runs
 * without the interposer).  Returns the snapshot's id in this process's
 * records, -1 when none was taken (no allocation yet, profiling off, no
 * driver).
 */
EXPORT int buddy_cuda_snapshot(void)
{
	int ret = -1;

	pthread_mutex_lock(&cu.lock);
	if (cu.started && cu.enabled && getpid() == cu.pid)
		ret = cu_snapshot(true);
	pthread_mutex_unlock(&cu.lock);
	return ret;
}

/* ---- the thread ---------------------------------------------------------------- */

static void *snapshot_thread(void *arg)
{
	sigset_t all;

	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&cu.lock);
	while (!cu.stop) {
		double now = cu_now() - cu.t0_mono;

		if (now >= cu.next_s) {
			/* none taken (no driver, no memory): the next point */
			if (cu_snapshot(false) < 0)
				cu.next_s = now + cu.delta_s;
			continue;
		}
		{
			struct timespec ts;
			double until = cu.t0_mono + cu.next_s, s;

			/* the condition variable's clock is CLOCK_REALTIME */
			clock_gettime(CLOCK_REALTIME, &ts);
			s = ts.tv_sec + ts.tv_nsec / 1e9 + (until - cu_now());
			ts.tv_sec = (time_t)s;
			ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&cu.wake, &cu.lock, &ts);
		}
	}
	pthread_mutex_unlock(&cu.lock);
	return NULL;
}

void cu_thread_start(void)
{
	if (!cu.first_s)
		return;		/* requests only */
	cu.delta_s = cu.first_s;
	cu.next_s = cu_now() - cu.t0_mono + cu.first_s;
	cu.stop = false;
	if (pthread_create(&cu.thread, NULL, snapshot_thread, NULL)) {
		cu_note("no snapshot thread: %s; snapshots on request only",
			strerror(errno));
		return;
	}
	cu.thread_running = true;
}

void cu_thread_stop(void)
{
	bool running;

	pthread_mutex_lock(&cu.lock);
	running = cu.thread_running;
	cu.stop = true;
	cu.thread_running = false;
	pthread_cond_broadcast(&cu.wake);
	pthread_mutex_unlock(&cu.lock);
	if (running)
		pthread_join(cu.thread, NULL);
}
