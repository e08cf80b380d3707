/* SPDX-License-Identifier: GPL-2.0 */
/*
 * buddyctl.h - what the subcommands of buddyctl share.
 *
 * Each subcommand is one function cmd_<verb>(argc, argv) in its own file,
 * declared here and listed in the command table of buddyctl.c (the cxl-cli
 * pattern).  argv[0] is the subcommand's name; options follow.
 *
 * Exit codes of every subcommand:
 *   0  success
 *   1  runtime error (unreadable file, failed ioctl, ...)
 *   2  usage error (unknown option or codec, missing argument)
 */
#ifndef BUDDYCTL_H
#define BUDDYCTL_H

#include <stdint.h>

#include "tools/common/msg.h"
#include "tools/common/parse.h"

#define BUDDYCTL_VERSION	"0.1"

#define EXIT_USAGE		2

/* Print "buddyctl: <msg>" to stderr (printf format). */
#define buddyctl_err(...)	msg_err("buddyctl", __VA_ARGS__)

int cmd_analyze(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_set_target(int argc, char **argv);
int cmd_show_profiles(int argc, char **argv);
int cmd_load_profiles(int argc, char **argv);
int cmd_clear_profiles(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif /* BUDDYCTL_H */
