/* SPDX-License-Identifier: GPL-2.0 */
/*
 * launch.h - how both engines start the program: in the child of fork(),
 * the interposer preloaded and the shared region named in the environment.
 */
#ifndef BUDDY_ENGINE_LAUNCH_H
#define BUDDY_ENGINE_LAUNCH_H

#include <stdbool.h>

/*
 * eng_exec() - in the child: @lib ahead of $LD_PRELOAD, the region's path
 * @shm in $@shm_env and, when @pid_env is not NULL, the child's pid in
 * $@pid_env; then exec @argv, its stdout on our stderr when @out_to_err
 * (stdout is the JSON report's: eng_json_on_stdout()).  Never returns: on
 * failure "WHO: ..." on stderr and exit 127 (the environment, or no such
 * program) or 126.
 */
void eng_exec(const char *who, const char *lib, const char *shm_env,
	      const char *shm, const char *pid_env, bool out_to_err,
	      char **argv)
	__attribute__((noreturn));

/*
 * eng_check_program() - before anything starts: can @prog be executed
 * (searched in $PATH as execvp() does)?  0, or 127 (not found) or 126
 * (found, not executable) after "WHO: cannot execute PROG: why" on
 * stderr: no run, no report, the shell's exit status.
 */
int eng_check_program(const char *who, const char *prog);

/*
 * eng_status_text() - a wait() @status in words: "exit status 3", or
 * "killed by SIGKILL (exit status 137)".  Returns @buf.
 */
const char *eng_status_text(int status, char *buf, size_t len);

#endif /* BUDDY_ENGINE_LAUNCH_H */
