// SPDX-License-Identifier: GPL-2.0
/*
 * profile_guard.c - a profiler that dies never leaves the program stopped.
 *
 * A snapshot stops the followed processes (SIGSTOP) and a progress or
 * marker snapshot makes the asking thread wait for buddyctl; killed in
 * between (kill -9, the OOM killer, a batch scheduler's limit), buddyctl
 * would leave the program stopped for ever.  The guard is a small process
 * forked before the program that holds the read end of a pipe only
 * buddyctl writes to: the kernel closes it whatever way buddyctl ends, and
 * the guard then continues (or kills, --orphan kill) every process of the
 * run, tells the interposer there is no profiler any more and answers its
 * waiting requests.  A normal end says so first, and the guard just exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile_priv.h"
#include "tools/common/msg.h"

/* Whether @pid maps the region whose inode is @ino: a process of this run. */
static bool maps_region(pid_t pid, ino_t ino)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long inode;

		if (sscanf(line, "%*s %*s %*s %*s %llu", &inode) == 1 &&
		    inode == (unsigned long long)ino && strstr(line, "buddyprof"))
			found = true;
	}
	fclose(f);
	return found;
}

/* The start time of @pid (field 22 of /proc/PID/stat), 0 when gone. */
static unsigned long long start_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

/* buddyctl is gone: the run's processes go on (or die), nothing waits. */
static void rescue(struct bprof_hdr *h, ino_t ino, pid_t child,
		   unsigned long long child_start, bool kill_them)
{
	struct bprof_proc *bp = BPROF_PROCS(h);
	int sig = kill_them ? SIGKILL : SIGCONT;
	unsigned int n = 0;

	/* no more requests; those waiting are answered */
	__atomic_store_n(&h->profiler_pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->snap_done,
			 __atomic_load_n(&h->snap_req, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->snap_done, 1 /* FUTEX_WAKE */, INT_MAX, NULL,
		NULL, 0);
	for (uint32_t i = 0; i < h->nprocs; i++) {
		pid_t pid = __atomic_load_n(&bp[i].pid, __ATOMIC_ACQUIRE);

		if (pid > 0 && pid != child && maps_region(pid, ino) &&
		    !kill(pid, sig))
			n++;
	}
	/* COMMAND itself, before it loaded the interposer or without it */
	if (child > 0 && start_of(child) == child_start && !kill(child, sig))
		n++;
	msg_err("buddyctl: profile",
		"the profiler exited before the program: %u process%s %s",
		n, n == 1 ? "" : "es", kill_them ? "killed (--orphan kill)" :
		"continued (its report is lost)");
}

static void __attribute__((noreturn))
guard_main(int rfd, struct bprof_hdr *h, int region_fd, bool kill_them)
{
	unsigned long long child_start = 0;
	pid_t child = 0;
	struct stat st;
	sigset_t all;
	int nul;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "buddyctl-guard", 0, 0, 0);
	if (fstat(region_fd, &st))
		_exit(1);
	/* a reader of buddyctl's stdout must not wait for the guard */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup2(nul, STDIN_FILENO);
		dup2(nul, STDOUT_FILENO);
	}
	for (int fd = 3; fd < 1024; fd++)
		if (fd != rfd)
			close(fd);
	for (;;) {
		int32_t v;
		ssize_t n = read(rfd, &v, sizeof(v));

		if (n < 0 && errno == EINTR)
			continue;
		if (n == sizeof(v) && v > 0) {
			child = v;
			child_start = start_of(child);
			continue;
		}
		if (n == sizeof(v) && v == 0)
			_exit(0);	/* a normal end */
		break;			/* EOF: buddyctl is gone */
	}
	rescue(h, st.st_ino, child, child_start, kill_them);
	_exit(0);
}

int prof_guard_start(struct prof_state *st)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		prof_err("guard: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		prof_err("guard: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid)
		guard_main(p[0], st->r->hdr, st->fd, st->r->o->orphan_kill);
	close(p[0]);
	st->guard = pid;
	st->guard_fd = p[1];
	return 0;
}

void prof_guard_child(struct prof_state *st, pid_t child)
{
	int32_t v = child;

	if (write(st->guard_fd, &v, sizeof(v)) != sizeof(v))
		prof_err("guard: %s", strerror(errno));
}

void prof_guard_stop(struct prof_state *st)
{
	int32_t v = 0;

	if (st->guard_fd < 0)
		return;
	if (write(st->guard_fd, &v, sizeof(v)) != sizeof(v))
		prof_err("guard: %s", strerror(errno));
	close(st->guard_fd);
	st->guard_fd = -1;
	while (waitpid(st->guard, NULL, 0) < 0 && errno == EINTR)
		;
}
