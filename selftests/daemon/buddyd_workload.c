// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd_workload - allocations that look like a small training job, held
 * (and partly rewritten, as a framework reuses its buffers) while a command
 * runs: the input of the captured `buddyd --once --report`.
 *
 *   buddyd_workload [-c CHURN_MS] -- COMMAND [ARG...]
 *
 * Every allocation is made at 2x (one whole-program target, as a user
 * without a profiler would choose) with BPC, filled with a data class of
 * tools/common/datagen.h.  A thread rewrites a 64 KiB piece of the activations,
 * the gradients and one of the buffers every CHURN_MS (default 10)
 * milliseconds, with a sparser or denser class in turn (phases of about a
 * tenth of a second), and reads a piece of every allocation, so
 * that compressibility and the access counters move while buddyd takes its
 * snapshots.  Exits with COMMAND's status (127 if it cannot run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "guest_util.h"

#define KIB	1024
#define PIECE	(64 * KIB)

static const struct set {
	const char *label;	/* NULL: unlabelled */
	enum datagen_class cls;
	unsigned int kib;
} sets[] = {
	{ "zero-init",   DATAGEN_ZERO,     4096 },
	{ "relu-act",    DATAGEN_RELU95,   4096 },
	{ "weights",     DATAGEN_FLOAT32,  3072 },
	{ "grads",       DATAGEN_RELU50,   2048 },
	{ "indices",     DATAGEN_ALTSIGN,  1024 },
	{ "pointers",    DATAGEN_POINTER,  1024 },
	{ "random",      DATAGEN_RANDOM,   1024 },
	{ "mixed",       DATAGEN_MIXED,    2048 },
	{ "buffers",     DATAGEN_ZERO,     1024 },	/* pooled with the next */
	{ "buffers",     DATAGEN_RELU95,   1024 },
	{ NULL,          DATAGEN_BITNOISE,  512 },
};
#define NR_SETS (sizeof(sets) / sizeof(sets[0]))

static int fds[NR_SETS];
static volatile int stop;
static unsigned int churn_ms = 10;

static void *churn(void *arg)
{
	static const enum datagen_class act[] = { DATAGEN_RELU90, DATAGEN_RELU95,
						  DATAGEN_RELU50 };
	static const enum datagen_class grad[] = { DATAGEN_RELU50, DATAGEN_RELU10 };
	uint8_t *buf = malloc(PIECE);
	struct datagen_rng r;
	uint64_t round = 0;

	datagen_seed(&r, 2024);
	while (buf && !stop) {
		for (size_t i = 0; i < NR_SETS; i++) {
			uint64_t pieces = sets[i].kib * KIB / PIECE;
			uint64_t off = datagen_below(&r, pieces) * PIECE;

			if (i == 1 || i == 3 || i == 9) {
				enum datagen_class c = i == 3 ?
					grad[round / 12 % 2] : act[round / 8 % 3];

				datagen_fill(c, datagen_next(&r), buf, PIECE);
				buddy_pwrite(fds[i], buf, PIECE, off);
			}
			buddy_pread(fds[i], buf, PIECE / 4, off);
		}
		round++;
		usleep(churn_ms * 1000);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	int o, devfd, st;
	pid_t pid;

	while ((o = getopt(argc, argv, "c:")) != -1) {
		if (o != 'c') {
			fprintf(stderr, "usage: buddyd_workload [-c CHURN_MS] -- COMMAND [ARG...]\n");
			return 2;
		}
		churn_ms = atoi(optarg);
	}
	if (optind >= argc) {
		fprintf(stderr, "buddyd_workload: no command\n");
		return 2;
	}
	devfd = buddy_open(NULL);
	if (devfd < 0) {
		fprintf(stderr, "buddyd_workload: %s: %s\n", BUDDY_DEV_PATH,
			buddy_strerror(devfd, BUDDY_OP_OPEN));
		return 1;
	}
	for (size_t i = 0; i < NR_SETS; i++) {
		size_t size = (size_t)sets[i].kib * KIB;
		uint8_t *buf = malloc(size);

		if (!buf)
			return 1;
		datagen_fill(sets[i].cls, 100 + i, buf, size);
		fds[i] = gu_alloc_write(devfd, size, BUDDY_TARGET_2X,
					BUDDY_CODEC_BPC, sets[i].label, buf, NULL);
		free(buf);
		if (fds[i] < 0) {
			fprintf(stderr, "buddyd_workload: %s: %s\n",
				sets[i].label ? sets[i].label : "(unlabelled)",
				buddy_strerror(fds[i], BUDDY_OP_ALLOC));
			return 1;
		}
	}
	if (pthread_create(&th, NULL, churn, NULL))
		return 1;
	pid = fork();
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "buddyd_workload: %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		st = 127 << 8;
	stop = 1;
	pthread_join(th, NULL);
	for (size_t i = 0; i < NR_SETS; i++)
		close(fds[i]);
	close(devfd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
