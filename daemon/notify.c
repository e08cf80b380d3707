// SPDX-License-Identifier: GPL-2.0
/*
 * notify.c - sd_notify() as systemd's src/libsystemd/sd-daemon does it, for
 * the datagram case: no credentials or file descriptors are passed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "notify.h"

uint64_t bd_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int bd_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t salen;
	size_t len;
	ssize_t n;
	int fd, err;

	if (!name || !*name)
		return 0;
	len = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, len);
	if (name[0] == '@') {
		sa.sun_path[0] = 0;	/* abstract: no terminating NUL counted */
		salen = offsetof(struct sockaddr_un, sun_path) + len;
	} else {
		salen = offsetof(struct sockaddr_un, sun_path) + len + 1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen);
	err = n < 0 ? -errno : 1;
	close(fd);
	return err;
}

int bd_notifyf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return bd_notify(buf);
}
