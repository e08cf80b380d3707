/* SPDX-License-Identifier: GPL-2.0 */
/*
 * notify.h - the sd_notify() protocol without libsystemd (which has no
 * static library): one datagram of "VAR=value" lines to the AF_UNIX socket
 * named by $NOTIFY_SOCKET, an abstract socket when the name starts with '@'.
 */
#ifndef BUDDYD_NOTIFY_H
#define BUDDYD_NOTIFY_H

#include <stdint.h>

/*
 * bd_notify() - send @state ("READY=1", "RELOADING=1\nMONOTONIC_USEC=...").
 * Return: 1 when sent, 0 when $NOTIFY_SOCKET is unset or empty (not under
 * systemd), -EINVAL for a name that is neither absolute nor abstract or too
 * long, other -errno values from socket() or sendto().
 */
int bd_notify(const char *state);
int bd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in microseconds (the MONOTONIC_USEC= value). */
uint64_t bd_now_usec(void);

#endif /* BUDDYD_NOTIFY_H */
