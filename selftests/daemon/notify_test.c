// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's sd_notify() (daemon/notify.c): abstract and path sockets, unset
 * and invalid $NOTIFY_SOCKET.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "daemon/notify.h"

/* A datagram socket bound to @name ('@' = abstract). */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, name, strlen(name));
	if (name[0] == '@')
		sa.sun_path[0] = 0;
	else
		len++;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len))
		return -1;
	return fd;
}

static void expect_msg(struct __test_metadata *_metadata, int fd,
		       const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	ASSERT_LT(0, n);
	buf[n] = 0;
	EXPECT_STREQ(want, buf);
}

TEST(abstract_socket)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "@buddyd-notify-test-%d", getpid());
	fd = listener(name);
	ASSERT_LE(0, fd);
	setenv("NOTIFY_SOCKET", name, 1);
	EXPECT_EQ(1, bd_notify("READY=1"));
	expect_msg(_metadata, fd, "READY=1");
	EXPECT_EQ(1, bd_notifyf("RELOADING=1\nMONOTONIC_USEC=%llu", 42ULL));
	expect_msg(_metadata, fd, "RELOADING=1\nMONOTONIC_USEC=42");
	close(fd);
}

TEST(path_socket)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "/tmp/buddyd-notify-test-%d", getpid());
	unlink(name);
	fd = listener(name);
	ASSERT_LE(0, fd);
	setenv("NOTIFY_SOCKET", name, 1);
	EXPECT_EQ(1, bd_notify("STOPPING=1"));
	expect_msg(_metadata, fd, "STOPPING=1");
	close(fd);
	unlink(name);
}

TEST(unset_or_invalid)
{
	unsetenv("NOTIFY_SOCKET");
	EXPECT_EQ(0, bd_notify("READY=1"));
	setenv("NOTIFY_SOCKET", "", 1);
	EXPECT_EQ(0, bd_notify("READY=1"));
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	EXPECT_EQ(-EINVAL, bd_notify("READY=1"));
	setenv("NOTIFY_SOCKET", "/tmp/buddyd-notify-nobody-listens", 1);
	EXPECT_EQ(-ENOENT, bd_notify("READY=1"));
	{
		char longname[200];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[0] = '/';
		longname[sizeof(longname) - 1] = 0;
		setenv("NOTIFY_SOCKET", longname, 1);
		EXPECT_EQ(-EINVAL, bd_notify("READY=1"));
	}
	unsetenv("NOTIFY_SOCKET");
}

TEST(monotonic_clock)
{
	uint64_t a = bd_now_usec(), b;

	usleep(2000);
	b = bd_now_usec();
	EXPECT_LE(a + 2000, b);
}

TEST_HARNESS_MAIN
