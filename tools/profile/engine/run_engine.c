// SPDX-License-Identifier: GPL-2.0
/*
 * run_engine.c - the engine of `buddyctl run`: a region for the
 * interposer's run half (run_shm.h, interposer/run_alloc.c) with the
 * profile file's targets, the program started with the interposer
 * preloaded, waited for, and reported (run_report.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <numa.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/libbuddy.h"
#include "launch.h"
#include "run_priv.h"
#include "tools/common/msg.h"
#include "tools/policy/profile_file.h"

void run_msg(const struct run_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void run_msg(const struct run_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	msg_verr("buddyctl: run", fmt, ap);
	va_end(ap);
}

void run_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void run_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_verr("buddyctl: run", fmt, ap);
	va_end(ap);
}

/* The profile file's entries of @uid into the region. */
static int load_profiles(struct run_opts *o, struct brun_hdr *h)
{
	struct brun_profile *p = BRUN_PROFILES(h);
	FILE *f = fopen(o->profile_file, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	int ret = 0;

	if (!f) {
		run_err("%s: %s", o->profile_file, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		struct buddy_profile_entry e;
		const char *why = NULL;
		size_t n = strcspn(line, "\n");
		int r;

		lineno++;
		line[n] = 0;
		r = buddy_profile_parse_line(line, &e, &why);
		if (r < 0) {
			run_err("%s:%u: %s", o->profile_file, lineno, why);
			ret = -1;
			break;
		}
		if (!r || e.uid != o->uid)
			continue;
		if (h->nprofiles >= BRUN_MAX_PROFILES) {
			run_err("%s: more than %u profiles for uid %u",
			    o->profile_file, BRUN_MAX_PROFILES, o->uid);
			ret = -1;
			break;
		}
		memcpy(p[h->nprofiles].label, e.label, BUDDY_LABEL_LEN);
		p[h->nprofiles].target = e.target;
		p[h->nprofiles].codec = e.codec;
		h->nprofiles++;
	}
	free(line);
	fclose(f);
	return ret;
}

/*
 * The device the program's allocations will go to, opened and asked for
 * its info before the program starts: a program run without one would
 * only fall back to ordinary memory, its report all 1.0x.  An in-process
 * device is made in the program itself: nothing to check here.
 */
static int check_device(const struct run_opts *o)
{
	const char *env = getenv("BUDDY_DEVICE");
	const char *dev = o->device ? o->device :
			  env && *env ? env : BUDDY_DEV_PATH;
	struct buddy_info info;
	int fd, err;

	if (!strncmp(dev, "inproc:", 7))
		return 0;
	fd = buddy_open(dev);
	err = fd < 0 ? -fd : -buddy_get_info(fd, &info);
	if (fd >= 0)
		buddy_close(fd);
	if (!err)
		return 0;
	if (err == ENOENT || err == ENODEV || err == ENXIO)
		run_err("%s: %s: the buddy module is not loaded (modprobe buddy); without it, --device inproc:device_mb=N runs the program in ordinary memory through the in-process device",
			dev, strerror(err));
	else if (err == ENOTTY || err == EINVAL)
		run_err("%s: not a buddy device (%s); give --device /dev/buddy or inproc:device_mb=N",
			dev, strerror(err));
	else
		run_err("%s: %s; the program was not started", dev,
			strerror(err));
	return -1;
}

static struct brun_hdr *make_region(struct run_opts *o, char *path, size_t len,
				    int *fdp)
{
	uint64_t bytes = BRUN_REGION_BYTES(o->nrecs);
	struct brun_hdr *h;
	int fd;

	fd = memfd_create("buddyrun", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, bytes)) {
		run_err("region: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		run_err("region: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	h->magic = BRUN_MAGIC;
	h->version = BRUN_VERSION;
	h->hdr_bytes = BRUN_HDR_BYTES;
	h->nrecs = o->nrecs;
	h->rec_bytes = sizeof(struct brun_rec);
	h->min_size = o->min_size;
	h->depth = o->depth;
	h->flags = o->unwind ? BRUN_F_UNWIND : 0;
	h->target = o->target;
	h->codec = o->codec;
	if (o->device)
		snprintf(h->device, sizeof(h->device), "%s", o->device);
	if (o->profile_file && load_profiles(o, h)) {
		munmap(h, bytes);
		close(fd);
		return NULL;
	}
	snprintf(path, len, "/proc/%d/fd/%d", (int)getpid(), fd);
	*fdp = fd;
	return h;
}

/* In the child: onto --cpunodebind's node, or _exit(126). */
static void bind_node(const struct run_opts *o)
{
	if (o->cpunode >= 0 && numa_run_on_node(o->cpunode)) {
		run_err("--cpunodebind %d: %s", o->cpunode, strerror(errno));
		_exit(126);
	}
}

/* Wait for @pid, through EINTR: its wait status, 0 when waitpid failed. */
static int wait_for(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			run_err("waitpid: %s", strerror(errno));
			break;
		}
	}
	return status;
}

/*
 * --base-run: the command once without the interposer, its output thrown
 * away, timed as the run is: o->base_time.  0, or -1 when it could not be
 * run or did not exit 0 (said; the report then has no slowdown).
 */
static int base_run(struct run_opts *o)
{
	double t0, t1;
	pid_t pid;
	int status;

	fflush(NULL);
	t0 = prof_now();
	pid = fork();
	if (pid < 0) {
		run_err("--base-run: fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		bind_node(o);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execvp(o->argv[0], o->argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	status = wait_for(pid);
	t1 = prof_now();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		run_err("--base-run: the plain run of %s %s %d: no base time",
			o->argv[0], WIFEXITED(status) ? "exited with" :
			"was killed by signal", WIFEXITED(status) ?
			WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	o->base_time = t1 - t0;
	run_msg(o, "--base-run: the plain run took %.3f s", o->base_time);
	return 0;
}

/* sysfs window_stat: limit resident orphans faults hits writebacks evictions */
static bool window_stat(uint64_t ws[7])
{
	FILE *f = fopen(BUDDY_SYSFS_DIR "/window_stat", "re");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %"
		    SCNu64 " %" SCNu64 " %" SCNu64, &ws[0], &ws[1], &ws[2],
		    &ws[3], &ws[4], &ws[5], &ws[6]) == 7;
	fclose(f);
	return ok;
}

/* What the progress line compares with its last one. */
struct progress {
	double t0, last;
	bool window;		/* buddy.ko's window_stat is readable */
	bool warned;
	uint64_t ws[7];
};

/*
 * One progress line on stderr: time, live buddy bytes and, with buddy.ko,
 * the window's faults and write-backs per second since the last line.
 * Write-backs about as many as faults while more pages fault than the
 * window holds: each fault evicts a dirty page the program needs again
 * (the working set exceeds the window), said once.
 */
static void progress_line(const struct run_opts *o, const struct brun_hdr *h,
			  struct progress *p)
{
	double now = prof_now(), dt = now - p->last;
	uint64_t ws[7], df, dw;

	if (!p->window || h->nr_dev_inproc || !window_stat(ws)) {
		run_msg(o, "%.0f s: %.1f MiB of buddy memory live (peak %.1f MiB)",
			now - p->t0, h->live_bytes / 1048576.0,
			h->peak_live_bytes / 1048576.0);
		p->last = now;
		return;
	}
	df = ws[3] - p->ws[3];
	dw = ws[5] - p->ws[5];
	run_msg(o, "%.0f s: %.1f MiB of buddy memory live (peak %.1f MiB); window: %.0f faults/s, %.0f write-backs/s (%.2f per fault)",
		now - p->t0, h->live_bytes / 1048576.0,
		h->peak_live_bytes / 1048576.0, df / dt, dw / dt,
		df ? (double)dw / df : 0.0);
	if (!p->warned && df > ws[0] && dw >= 0.9 * df) {
		run_msg(o, "the window thrashes: %.2f write-backs per fault, %llu faults in %.0f s against a window of %llu pages (window_mb; see the report)",
			(double)dw / df, (unsigned long long)df, dt,
			(unsigned long long)ws[0]);
		p->warned = true;
	}
	memcpy(p->ws, ws, sizeof(ws));
	p->last = now;
}

/*
 * Wait for @child, with a progress line every --progress seconds and a
 * last one when it exits, so that a run shorter than the interval, or the
 * tail of a longer one, still shows its rates (none when it cannot wait on
 * a pidfd, before Linux 5.3).
 */
static int wait_progress(const struct run_opts *o, const struct brun_hdr *h,
			 pid_t child, double t0)
{
	struct progress p = { .t0 = t0, .last = t0 };
	int pfd = -1;

	if (o->progress > 0 && !o->quiet)
		pfd = syscall(SYS_pidfd_open, child, 0);
	if (pfd < 0)
		return wait_for(child);
	p.window = window_stat(p.ws);
	for (;;) {
		struct pollfd pl = { .fd = pfd, .events = POLLIN };
		int n = poll(&pl, 1, (int)(o->progress * 1000));

		if (n > 0 || (n < 0 && errno != EINTR))
			break;
		if (!n)
			progress_line(o, h, &p);
	}
	if (prof_now() > p.last)
		progress_line(o, h, &p);
	close(pfd);
	return wait_for(child);
}

int run_program(struct run_opts *o, const char *lib)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	struct brun_hdr *h;
	char shm[64];
	double t0, t1;
	int fd, status, code;
	pid_t child;

	h = make_region(o, shm, sizeof(shm), &fd);
	if (!h)
		return 1;
	if (check_device(o)) {
		munmap(h, BRUN_REGION_BYTES(o->nrecs));
		close(fd);
		return 1;
	}
	if (o->cpunode >= 0) {
		if (numa_available() < 0) {
			run_err("--cpunodebind %d: no NUMA support here", o->cpunode);
			return 1;
		}
		if (o->cpunode > numa_max_node()) {
			run_err("--cpunodebind %d: the highest node is %d", o->cpunode,
			    numa_max_node());
			return 2;
		}
	}
	if (o->base_run && base_run(o))
		o->base_run = false;
	fflush(NULL);
	t0 = prof_now();
	child = fork();
	if (child < 0) {
		run_err("fork: %s", strerror(errno));
		return 1;
	}
	if (!child) {
		bind_node(o);
		eng_exec("buddyctl: run", lib, BRUN_ENV_SHM, shm, NULL,
			 eng_json_on_stdout(&o->common), o->argv);
	}
	/* like system(): the terminal's signals go to the program */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	run_msg(o, "pid %d, %s, buddy memory for allocations >= %llu B",
	    (int)child, lib, (unsigned long long)o->min_size);
	status = wait_progress(o, h, child, t0);
	t1 = prof_now();
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	code = WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	if (run_report(o, h, t1 - t0, status) && !code)
		code = 1;	/* not written, or mostly fell back */
	munmap(h, BRUN_REGION_BYTES(o->nrecs));
	close(fd);
	return code;
}
