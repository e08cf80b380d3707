/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest_util.h - what buddyd's guest tests and the report workload share:
 * entries of a known size code, allocations filled with a known mix of
 * codes, and running buddyd as a child with its output captured.
 */
#ifndef BUDDYD_GUEST_UTIL_H
#define BUDDYD_GUEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/libbuddy.h"

/*
 * gu_entry() - 128 bytes whose size code under @codec is @code, varied by
 * @seed (different seeds give different bytes where the code allows).
 * Return: false when no candidate has that code (e.g. C32 under "none").
 */
bool gu_entry(unsigned int codec, unsigned int code, uint64_t seed,
	      uint8_t *e);

/*
 * gu_fill_mix() - fill @buf (sum of @counts entries) with @counts[c]
 * entries of code c, in an order shuffled by @seed.
 * @codes: receives each entry's code when not NULL.
 * Return: 0, or -EINVAL when some code cannot be produced.
 */
int gu_fill_mix(unsigned int codec, const uint64_t counts[BUDDY_CODE_NR],
		uint64_t seed, uint8_t *buf, uint8_t *codes);

/*
 * gu_alloc_write() - allocate @size bytes (explicit @target, @codec,
 * @label) on @devfd and write @buf (@size bytes) into it.
 * Return: the allocation fd, or -errno.
 */
int gu_alloc_write(int devfd, uint64_t size, unsigned int target,
		   unsigned int codec, const char *label, const void *buf,
		   uint64_t *id);

/*
 * gu_spawn() - start @argv[0] with @argv and the environment plus the
 * "NAME=value" strings of @env (NULL-terminated, may be NULL), stdout and
 * stderr to @out_path and @err_path.  NOTIFY_SOCKET is removed from the
 * inherited environment unless @env sets it.
 * Return: the pid, or -errno.
 */
pid_t gu_spawn(char *const argv[], char *const env[], const char *out_path,
	       const char *err_path);

/*
 * gu_wait() - wait for @pid at most @timeout_ms (then SIGKILL it).
 * Return: its exit status (0..255), 128 + signal, or -ETIMEDOUT.
 */
int gu_wait(pid_t pid, int timeout_ms);

/* The whole file, NUL-terminated, malloc'ed ("" when unreadable). */
char *gu_read_file(const char *path);
int gu_write_file(const char *path, const char *text);

/* The buddyd binary: $BUDDYD, or /opt/daemon/buddyd. */
const char *gu_buddyd(void);

/* Milliseconds of CLOCK_MONOTONIC. */
uint64_t gu_ms(void);

#endif /* BUDDYD_GUEST_UTIL_H */
