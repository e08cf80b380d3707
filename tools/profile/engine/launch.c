// SPDX-License-Identifier: GPL-2.0
/*
 * launch.c - starting the program with the interposer (launch.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "tools/common/msg.h"

/* LD_PRELOAD with @lib first, and the region's variables. */
static int set_env(const char *lib, const char *shm_env, const char *shm,
		   const char *pid_env)
{
	const char *old = getenv("LD_PRELOAD");
	char pid[16], *pre;
	int r;

	if (old && *old) {
		if (asprintf(&pre, "%s:%s", lib, old) < 0)
			return -1;
	} else {
		pre = strdup(lib);
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	r = !pre || setenv("LD_PRELOAD", pre, 1) || setenv(shm_env, shm, 1) ||
	    (pid_env && setenv(pid_env, pid, 1));
	free(pre);
	return r ? -1 : 0;
}

void eng_exec(const char *who, const char *lib, const char *shm_env,
	      const char *shm, const char *pid_env, bool out_to_err,
	      char **argv)
{
	if (set_env(lib, shm_env, shm, pid_env)) {
		msg_err(who, "setenv failed");
		_exit(127);
	}
	if (out_to_err && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		msg_err(who, "stdout to stderr: %s", strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	msg_err(who, "%s: %s", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Can @path be executed as execve() would?  0 or the errno it would give. */
static int exec_errno(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;	/* execve() says EACCES; this is the cause */
	if (!S_ISREG(st.st_mode))
		return EACCES;
	return access(path, X_OK) ? errno : 0;
}

int eng_check_program(const char *who, const char *prog)
{
	const char *path = getenv("PATH"), *p, *end;
	char cand[PATH_MAX];
	int err = ENOENT, e;

	if (strchr(prog, '/')) {
		err = exec_errno(prog);
	} else {
		/* execvp()'s search: the first executable wins, EACCES kept */
		for (p = path && *path ? path : "/bin:/usr/bin"; err; p = end + 1) {
			end = strchrnul(p, ':');
			snprintf(cand, sizeof(cand), "%.*s%s%s", (int)(end - p), p,
				 end > p ? "/" : "", prog);
			e = exec_errno(cand);
			if (!e || e == EACCES)
				err = e;
			if (!*end)
				break;
		}
	}
	if (!err)
		return 0;
	if (err == ENOENT && !strchr(prog, '/'))
		msg_err(who, "cannot execute %s: not found in PATH", prog);
	else
		msg_err(who, "cannot execute %s: %s", prog, strerror(err));
	return err == ENOENT ? 127 : 126;
}

const char *eng_status_text(int status, char *buf, size_t len)
{
	const char *name;

	if (WIFSIGNALED(status)) {
		name = sigabbrev_np(WTERMSIG(status));
		if (name)
			snprintf(buf, len, "killed by SIG%s (exit status %d)",
				 name, 128 + WTERMSIG(status));
		else
			snprintf(buf, len, "killed by signal %d (exit status %d)",
				 WTERMSIG(status), 128 + WTERMSIG(status));
	} else {
		snprintf(buf, len, "exit status %d",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	return buf;
}
