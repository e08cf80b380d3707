// SPDX-License-Identifier: GPL-2.0
/*
 * cuda_run.c - `buddyctl profile --cuda`: running COMMAND under what
 * writes the CUDA records (python/buddy/cuda's hook for --cuda=torch,
 * libbuddycudaprof.so preloaded for --cuda=driver), then ingesting them
 * (profile_cuda.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "profile_priv.h"

/*
 * The directory holding buddy/cuda: $BUDDY_PYTHONPATH, the tree's python/
 * next to buddyctl; NULL: the Python's own (an installed package).
 */
static char *find_pkg(void)
{
	const char *env = getenv("BUDDY_PYTHONPATH");
	static const char *const rel[] = { "/../python" };
	char exe[PATH_MAX], path[PATH_MAX + 64];

	if (env && *env)
		return realpath(env, NULL);
	if (prof_exe_dir(exe))
		return NULL;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/buddy/cuda/__main__.py", exe,
			 rel[i]);
		if (!access(path, R_OK)) {
			snprintf(path, sizeof(path), "%s%s", exe, rel[i]);
			return realpath(path, NULL);
		}
	}
	/* a static build one level further down (build/static/) */
	snprintf(path, sizeof(path), "%s/../../python/buddy/cuda/__main__.py", exe);
	if (!access(path, R_OK)) {
		snprintf(path, sizeof(path), "%s/../../python", exe);
		return realpath(path, NULL);
	}
	return NULL;
}

/* Run @argv with PYTHONPATH=@pkg:...; its wait status, -1 if not run. */
static int spawn(struct prof_run *r, const char *pkg, char **argv, bool ours)
{
	const char *old = getenv("PYTHONPATH");
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		prof_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		char *pp;

		if (pkg && (asprintf(&pp, "%s%s%s", pkg, old && *old ? ":" : "",
				     old && *old ? old : "") < 0 ||
			    setenv("PYTHONPATH", pp, 1)))
			_exit(127);
		if (!ours && eng_json_on_stdout(&r->o->common))
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp(argv[0], argv);
		prof_err("%s: %s", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (!ours) {
		r->child = pid;
		signal(SIGINT, SIG_IGN);	/* the program gets it */
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	if (!ours) {
		r->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			   ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		r->maxrss_kib = ru.ru_maxrss;
		signal(SIGINT, SIG_DFL);
	}
	return status;
}

/* The records' directory: --cuda-records DIR, else a new one in @tmpl. */
static char *records_dir(const struct prof_opts *o, char *tmpl)
{
	char *dir = (char *)o->cuda_records;

	if (!dir) {
		dir = mkdtemp(tmpl);
		if (!dir)
			prof_err("--cuda: %s: %s", tmpl, strerror(errno));
	} else if (prof_mkdir_p(dir)) {
		prof_err("--cuda-records %s: %s", dir, strerror(errno));
		dir = NULL;
	}
	return dir;
}

/* The program's wait status @st: ingest @dir, remove it when it was ours. */
static int ingest_run(struct prof_run *r, const char *dir, int st)
{
	int ret;

	if (st < 0)
		return -1;
	r->status = st;
	r->exited = true;
	ret = prof_cuda_ingest(r, dir);
	if (!r->o->cuda_records) {
		/* our own temporary records: gone with the run */
		char cmd[PATH_MAX + 16];
		struct dirent **ents;
		int m = scandir(dir, &ents, NULL, NULL);

		for (int i = 0; i < m; i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", dir, ents[i]->d_name);
			if (ents[i]->d_name[0] != '.')
				unlink(cmd);
			free(ents[i]);
		}
		if (m >= 0)
			free(ents);
		rmdir(dir);
	}
	return ret;
}

/*
 * --cuda=driver: COMMAND with libbuddycudaprof.so preloaded (its settings
 * in the environment, inherited by every process of the run).
 */
static int run_driver(struct prof_run *r)
{
	struct prof_opts *o = r->o;
	char *lib = prof_find_preload(o->lib, "BUDDYCUDA_LIB",
				      "libbuddycudaprof.so");
	char tmpl[] = "/tmp/buddyctl-cuda-XXXXXX", num[32], *pre, *dir;
	const char *old = getenv("LD_PRELOAD");
	int st;

	if (!lib) {
		prof_err("--cuda=driver: libbuddycudaprof.so not found (build it with make, or give --lib PATH or $BUDDYCUDA_LIB)");
		return -1;
	}
	dir = records_dir(o, tmpl);
	if (!dir) {
		free(lib);
		return -1;
	}
	if (asprintf(&pre, "%s%s%s", lib, old && *old ? ":" : "",
		     old && *old ? old : "") < 0)
		exit(1);
	setenv("LD_PRELOAD", pre, 1);
	setenv("BUDDY_CUDA_DRIVER_DIR", dir, 1);
	snprintf(num, sizeof(num), "%u", o->points);
	setenv("BUDDY_CUDA_POINTS", num, 1);
	snprintf(num, sizeof(num), "%.0f", o->timer ? o->first * 1e3 : 0);
	setenv("BUDDY_CUDA_FIRST_MS", num, 1);
	if (o->cuda_codecs)
		setenv("BUDDY_CUDA_CODECS", o->cuda_codecs, 1);
	prof_msg(r, "--cuda=driver: %s with %s preloaded, records in %s",
		 o->argv[0], lib, dir);
	r->t_start = prof_now();
	st = spawn(r, NULL, o->argv, false);
	r->t_end = prof_now();
	unsetenv("LD_PRELOAD");
	if (old)
		setenv("LD_PRELOAD", old, 1);
	free(pre);
	free(lib);
	return ingest_run(r, dir, st);
}

int prof_cuda_run(struct prof_run *r)
{
	struct prof_opts *o = r->o;
	const char *env = getenv("BUDDY_PYTHON");
	char *py = env && *env ? (char *)env : "python3";
	char *pkg, tmpl[] = "/tmp/buddyctl-cuda-XXXXXX";
	char points[16], every[16], *dir;
	char *probe[] = { py, "-m", "buddy.cuda", "probe", NULL };
	char **argv;
	size_t n = 0, k = 0;
	int st;

	if (o->cuda_driver)
		return run_driver(r);
	pkg = find_pkg();
	st = spawn(r, pkg, probe, true);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		free(pkg);
		if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2)
			return -2;	/* it said: no CUDA device */
		prof_err("--cuda: %s -m buddy.cuda probe failed: is the buddy package installed for it ($BUDDY_PYTHON, $BUDDY_PYTHONPATH)?",
			 py);
		return -1;
	}
	dir = records_dir(o, tmpl);
	if (!dir) {
		free(pkg);
		return -1;
	}
	while (o->argv[n])
		n++;
	argv = prof_xrealloc(NULL, (n + 20) * sizeof(*argv));
	snprintf(points, sizeof(points), "%u", o->points);
	snprintf(every, sizeof(every), "%u", o->cuda_every);
	argv[k++] = py;
	argv[k++] = "-m";
	argv[k++] = "buddy.cuda";
	argv[k++] = "run";
	argv[k++] = "--no-probe";
	argv[k++] = "-q";
	argv[k++] = "-o";
	argv[k++] = dir;
	argv[k++] = "--points";
	argv[k++] = points;
	argv[k++] = "--every";
	argv[k++] = every;
	if (o->cuda_codecs) {
		argv[k++] = "--codecs";
		argv[k++] = (char *)o->cuda_codecs;
	}
	argv[k++] = "--";
	for (size_t i = 0; i < n; i++)
		argv[k++] = o->argv[i];
	argv[k] = NULL;
	prof_msg(r, "--cuda: %s under buddy.cuda's hook (%s), records in %s",
		 o->argv[0], pkg ? pkg : "installed", dir);
	r->t_start = prof_now();
	st = spawn(r, pkg, argv, false);
	r->t_end = prof_now();
	free(argv);
	free(pkg);
	return ingest_run(r, dir, st);
}
