/* SPDX-License-Identifier: GPL-2.0 */
/*
 * msg.h - the one way the tools print an error or a progress message:
 * "WHO: text" and a newline on stderr, WHO naming the tool and the command
 * ("buddyctl", "buddyctl: profile", "buddyctl: run").
 */
#ifndef BUDDY_TOOLS_MSG_H
#define BUDDY_TOOLS_MSG_H

#include <stdarg.h>

void msg_verr(const char *who, const char *fmt, va_list ap);
void msg_err(const char *who, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* BUDDY_TOOLS_MSG_H */
