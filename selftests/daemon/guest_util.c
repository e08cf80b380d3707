// SPDX-License-Identifier: GPL-2.0
/*
 * guest_util.c - helpers of buddyd's guest tests (see guest_util.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "guest_util.h"

extern char **environ;

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* Candidate @fam of the search, seeded. */
static void candidate(unsigned int fam, uint64_t seed, uint8_t *e)
{
	struct datagen_rng r;
	uint32_t v;

	datagen_seed(&r, datagen_mix(seed, fam));
	memset(e, 0, BUDDY_ENTRY_SIZE);
	if (fam == 0) {			/* one constant word */
		v = (uint32_t)datagen_next(&r) | 1;
		for (int w = 0; w < 32; w++)
			put32(e + 4 * w, v);
	} else if (fam <= 32) {		/* every word fam-bit random */
		for (int w = 0; w < 32; w++) {
			v = (uint32_t)datagen_next(&r);
			if (fam < 32)
				v &= (1u << fam) - 1;
			put32(e + 4 * w, v | (w == 0));
		}
	} else {			/* the first fam - 32 words random */
		for (unsigned int w = 0; w < fam - 32; w++)
			put32(e + 4 * w, (uint32_t)datagen_next(&r) | 1);
	}
}

bool gu_entry(unsigned int codec, unsigned int code, uint64_t seed,
	      uint8_t *e)
{
	/* the families that usually give each code under BPC, first */
	static const unsigned int first[BUDDY_CODE_NR] = {
		0, 0, 4, 10, 18, 32,
	};
	const struct buddy_codec *c = buddy_codec_by_id(codec);

	if (code == BUDDY_CODE_ZERO) {
		memset(e, 0, BUDDY_ENTRY_SIZE);
		return true;
	}
	if (!c || code >= BUDDY_CODE_NR)
		return false;
	for (unsigned int s = 0; s < 4; s++) {
		candidate(first[code], seed + s * 0x10001, e);
		if (buddy_entry_classify(c, e) == code)
			return true;
	}
	for (unsigned int fam = 0; fam <= 64; fam++) {
		for (unsigned int s = 0; s < 4; s++) {
			candidate(fam, seed + s * 0x10001, e);
			if (buddy_entry_classify(c, e) == code)
				return true;
		}
	}
	return false;
}

int gu_fill_mix(unsigned int codec, const uint64_t counts[BUDDY_CODE_NR],
		uint64_t seed, uint8_t *buf, uint8_t *codes)
{
	struct datagen_rng r;
	uint64_t n = 0, i;
	uint8_t *order;

	for (unsigned int c = 0; c < BUDDY_CODE_NR; c++)
		n += counts[c];
	order = malloc(n ? n : 1);
	if (!order)
		return -ENOMEM;
	for (unsigned int c = 0, k = 0; c < BUDDY_CODE_NR; c++)
		for (i = 0; i < counts[c]; i++)
			order[k++] = c;
	datagen_seed(&r, seed);
	for (i = n; i > 1; i--) {
		uint64_t j = datagen_next(&r) % i;
		uint8_t t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		if (!gu_entry(codec, order[i], datagen_mix(seed, i),
			      buf + i * BUDDY_ENTRY_SIZE)) {
			free(order);
			return -EINVAL;
		}
		if (codes)
			codes[i] = order[i];
	}
	free(order);
	return 0;
}

int gu_alloc_write(int devfd, uint64_t size, unsigned int target,
		   unsigned int codec, const char *label, const void *buf,
		   uint64_t *id)
{
	int fd = buddy_alloc_simple(devfd, size, target, codec, label, id);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = buddy_pwrite(fd, buf, size, 0);
	if (n != (ssize_t)size) {
		close(fd);
		return n < 0 ? n : -EIO;
	}
	return fd;
}

pid_t gu_spawn(char *const argv[], char *const env[], const char *out_path,
	       const char *err_path)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		sigset_t none;

		if (o < 0 || e < 0)
			_exit(126);
		dup2(o, 1);
		dup2(e, 2);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		unsetenv("NOTIFY_SOCKET");
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

int gu_wait(pid_t pid, int timeout_ms)
{
	uint64_t end = gu_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0)
			return -errno;
		if (gu_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -ETIMEDOUT;
		}
		usleep(5000);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

char *gu_read_file(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	buf[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	for (;;) {
		if (cap - len < 2048) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = 0;
	close(fd);
	return buf;
}

int gu_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

const char *gu_buddyd(void)
{
	const char *p = getenv("BUDDYD");

	return p && *p ? p : "/opt/daemon/buddyd";
}

uint64_t gu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
