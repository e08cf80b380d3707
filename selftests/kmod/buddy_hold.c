// SPDX-License-Identifier: GPL-2.0
/*
 * buddy_hold - run a command while an allocation is alive.
 *
 *   buddy_hold SIZE COMMAND [ARG]...
 *
 * Allocates SIZE bytes at 2x (1x when there is no carve-out) without
 * O_CLOEXEC, closes /dev/buddy, exports the allocation's descriptor as
 * BUDDY_FD and executes COMMAND, which inherits it.  The guest script uses
 * it to check that a live allocation pins the module (rmmod must fail).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/libbuddy.h"

int main(int argc, char **argv)
{
	struct buddy_alloc a;
	struct buddy_info info;
	char num[16];
	int fd, r;

	if (argc < 3) {
		fprintf(stderr, "usage: buddy_hold SIZE COMMAND [ARG]...\n");
		return 2;
	}
	fd = buddy_open(NULL);
	if (fd < 0) {
		fprintf(stderr, "buddy_hold: %s\n", buddy_strerror(fd, BUDDY_OP_OPEN));
		return 1;
	}
	r = buddy_get_info(fd, &info);
	if (r) {
		fprintf(stderr, "buddy_hold: GET_INFO: %s\n", strerror(-r));
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.size = strtoull(argv[1], NULL, 0);
	a.target = info.buddy_bytes ? BUDDY_TARGET_2X : BUDDY_TARGET_1X;
	strcpy(a.label, "buddy_hold");
	r = buddy_alloc(fd, &a);
	if (r < 0) {
		fprintf(stderr, "buddy_hold: ALLOC: %s\n", buddy_strerror(r, BUDDY_OP_ALLOC));
		return 1;
	}
	close(fd);
	snprintf(num, sizeof(num), "%d", a.fd);
	setenv("BUDDY_FD", num, 1);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "buddy_hold: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
