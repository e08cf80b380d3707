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
#include <numa.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int run_program(struct run_opts *o, const char *lib)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	struct brun_hdr *h;
	char shm[64];
	double t0, t1;
	int fd, status = 0, code;
	pid_t child;

	h = make_region(o, shm, sizeof(shm), &fd);
	if (!h)
		return 1;
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
	fflush(NULL);
	t0 = prof_now();
	child = fork();
	if (child < 0) {
		run_err("fork: %s", strerror(errno));
		return 1;
	}
	if (!child) {
		if (o->cpunode >= 0 && numa_run_on_node(o->cpunode)) {
			run_err("--cpunodebind %d: %s", o->cpunode,
				strerror(errno));
			_exit(126);
		}
		eng_exec("buddyctl: run", lib, BRUN_ENV_SHM, shm, NULL, o->argv);
	}
	/* like system(): the terminal's signals go to the program */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	run_msg(o, "pid %d, %s, buddy memory for allocations >= %llu B",
	    (int)child, lib, (unsigned long long)o->min_size);
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			run_err("waitpid: %s", strerror(errno));
			break;
		}
	}
	t1 = prof_now();
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	code = WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	if (run_report(o, h, t1 - t0, status) && !code)
		code = 1;
	munmap(h, BRUN_REGION_BYTES(o->nrecs));
	close(fd);
	return code;
}
