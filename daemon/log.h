/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - buddyd's log: one line per message on stderr, prefixed with its
 * syslog priority as "<N>" (sd-daemon.h's SD_ERR, SD_WARNING, SD_INFO ...),
 * which journald turns into the record's priority.
 */
#ifndef BUDDYD_LOG_H
#define BUDDYD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

/* Messages of a priority value above this are dropped (LOG_INFO default). */
extern int bd_log_max;

/*
 * For a person at a terminal (buddyd --check-config): "buddyd: error: ",
 * "buddyd: warning: " or "buddyd: " instead of "<N>".
 */
extern bool bd_log_words;

/*
 * When set, every message that passes bd_log_max goes here instead of
 * stderr (tests collect warnings this way).
 */
extern void (*bd_log_hook)(int prio, const char *msg);

void bd_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void bd_vlog(int prio, const char *fmt, va_list ap);

#define bd_err(...)	bd_log(LOG_ERR, __VA_ARGS__)
#define bd_warn(...)	bd_log(LOG_WARNING, __VA_ARGS__)
#define bd_notice(...)	bd_log(LOG_NOTICE, __VA_ARGS__)
#define bd_info(...)	bd_log(LOG_INFO, __VA_ARGS__)
#define bd_debug(...)	bd_log(LOG_DEBUG, __VA_ARGS__)

#endif /* BUDDYD_LOG_H */
