/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - buddyd's log: one line per message on stderr.  For a person (a
 * terminal, a file) "buddyd: error: ", "buddyd: warning: " or "buddyd: ";
 * when stderr is the journal (systemd's $JOURNAL_STREAM names it), the
 * syslog priority as "<N>" (sd-daemon.h's SD_ERR, SD_WARNING, SD_INFO
 * ...), which journald turns into the record's priority.
 */
#ifndef BUDDYD_LOG_H
#define BUDDYD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

/* Messages of a priority value above this are dropped (LOG_INFO default). */
extern int bd_log_max;

/* The words for a person (default), or "<N>" for the journal when false. */
extern bool bd_log_words;

/* Is stderr the stream systemd connected to the journal? */
bool bd_log_stderr_is_journal(void);

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
