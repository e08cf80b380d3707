// SPDX-License-Identifier: GPL-2.0
/*
 * msg.c - the tools' messages (msg.h).
 */
#include <stdio.h>

#include "msg.h"

void msg_verr(const char *who, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", who);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msg_err(const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_verr(who, fmt, ap);
	va_end(ap);
}
