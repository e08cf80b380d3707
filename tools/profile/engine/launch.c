// SPDX-License-Identifier: GPL-2.0
/*
 * launch.c - starting the program with the interposer (launch.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
