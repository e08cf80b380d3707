// SPDX-License-Identifier: GPL-2.0
/*
 * log.c - one line per message on stderr, one write(2) each so that lines
 * of different threads or processes never interleave.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int bd_log_max = LOG_INFO;
bool bd_log_words = true;
void (*bd_log_hook)(int prio, const char *msg);

bool bd_log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;

	/* systemd.exec(5): "DEVICE:INODE" of the stream it connected */
	if (!js || sscanf(js, "%ju:%ju", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void bd_vlog(int prio, const char *fmt, va_list ap)
{
	char buf[2048];
	int n, m;

	if (prio > bd_log_max)
		return;
	if (bd_log_words)
		n = snprintf(buf, sizeof(buf), "buddyd: %s",
			     (prio & 7) <= LOG_ERR ? "error: " :
			     (prio & 7) == LOG_WARNING ? "warning: " : "");
	else
		n = snprintf(buf, sizeof(buf), "<%d>", prio & 7);
	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	if ((size_t)m > sizeof(buf) - n - 2)
		m = sizeof(buf) - n - 2;	/* cut, keep the newline */
	if (bd_log_hook) {
		bd_log_hook(prio & 7, buf + n);
		return;
	}
	buf[n + m] = '\n';
	/* on failure there is nowhere left to report it */
	if (write(STDERR_FILENO, buf, n + m + 1) < 0)
		return;
}

void bd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bd_vlog(prio, fmt, ap);
	va_end(ap);
}
