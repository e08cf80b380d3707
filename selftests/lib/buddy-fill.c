// SPDX-License-Identifier: GPL-2.0
/*
 * buddy-fill - hold allocations of known content while a command runs.
 *
 *   buddy-fill LABEL:MIB:TARGET:CODEC:CLASS... [-- COMMAND [ARG]...]
 *
 * Makes one allocation per argument (MIB MiB, TARGET as buddyctl takes it,
 * CODEC by name), fills it with the datagen class CLASS (seed 42: zero,
 * relu90, float32, random, ...), closes /dev/buddy and executes COMMAND,
 * which inherits the allocations (they are not close-on-exec) and so keeps
 * them alive.  Without COMMAND the allocations are freed on exit.  The
 * walk-through of Documentation/admin-guide/buddy.rst was captured with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "lib/libbuddy.h"

static int fill_one(int devfd, const char *spec)
{
	char label[BUDDY_LABEL_LEN], target[16], codec[16], cls[32];
	struct buddy_alloc a;
	unsigned int mib, t;
	int c, k, fd;
	ssize_t n;
	void *buf;

	if (sscanf(spec, "%31[^:]:%u:%15[^:]:%15[^:]:%31s", label, &mib,
		   target, codec, cls) != 5)
		goto bad;
	c = buddy_codec_parse(codec);
	k = datagen_class_by_name(cls);
	if (buddy_target_parse(target, &t) || c < 0 || k < 0 || !mib)
		goto bad;
	memset(&a, 0, sizeof(a));
	a.size = (uint64_t)mib << 20;
	a.target = t;
	a.codec = c;
	strcpy(a.label, label);
	fd = buddy_alloc(devfd, &a);
	if (fd < 0) {
		fprintf(stderr, "buddy-fill: %s: %s\n", label,
			buddy_strerror(fd, BUDDY_OP_ALLOC));
		return fd;
	}
	buf = malloc(a.size);
	if (!buf)
		return -ENOMEM;
	datagen_fill(k, 42, buf, a.size);
	n = buddy_pwrite(fd, buf, a.size, 0);
	free(buf);
	if (n != (ssize_t)a.size) {
		fprintf(stderr, "buddy-fill: %s: write: %s\n", label,
			n < 0 ? buddy_strerror(n, BUDDY_OP_WRITE) : "short");
		return n < 0 ? n : -EIO;
	}
	return 0;
bad:
	fprintf(stderr, "buddy-fill: bad spec '%s'\n", spec);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	int devfd, i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: buddy-fill LABEL:MIB:TARGET:CODEC:CLASS... [-- COMMAND [ARG]...]\n");
		return argc < 2 ? 2 : 0;
	}
	devfd = buddy_open(NULL);
	if (devfd < 0) {
		fprintf(stderr, "buddy-fill: %s\n",
			buddy_strerror(devfd, BUDDY_OP_OPEN));
		return 1;
	}
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (fill_one(devfd, argv[i]))
			return 1;
	close(devfd);
	if (i + 1 >= argc)
		return 0;
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "buddy-fill: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
