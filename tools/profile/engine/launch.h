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

#endif /* BUDDY_ENGINE_LAUNCH_H */
