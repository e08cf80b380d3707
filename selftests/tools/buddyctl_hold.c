// SPDX-License-Identifier: GPL-2.0
/*
 * buddyctl_hold - make allocations of known content and hold them open, for
 * the buddyctl guest test (selftests/tools/buddyctl-guest.sh).
 *
 *   buddyctl_hold -o FILE SPEC...
 *   buddyctl_hold --as UID COMMAND [ARG]...   (run COMMAND as uid and gid
 *                                            UID, no groups: no privilege)
 *
 * SPEC is LABEL:SIZE:TARGET:CODEC:UID:PATTERN
 *   LABEL    the allocation's label ("-" for none)
 *   SIZE     bytes
 *   TARGET   as buddy_target_parse() takes it (2x, 4, auto, ...)
 *   CODEC    bpc zvc bdi fpc none default
 *   UID      the allocation is made with this real and effective uid
 *            (saved uid 0 is kept to switch back)
 *   PATTERN  what every 128-byte entry i holds:
 *              zero     nothing written (all ZERO)
 *              raw      random bytes (RAW under any codec)
 *              code-N   an entry whose size code under CODEC is N (0..5)
 *              bands    the code of (i / 64) % 6: row r of the Fig. 8
 *                       picture (64 entries per row) all code r % 6
 *              ramp     code (i * 6) / entries: six equal runs 0..5
 *              class-C  datagen class C (tools/common/datagen.h), e.g.
 *                       class-mixed: one data class per 4 KiB page
 *
 * Once every allocation is made and written, FILE is created (atomically)
 * with a JSON array, one object per SPEC: id, label, size, target (bytes),
 * codec, uid, pid, nr_entries, histogram {zero..raw} and, for at most 4096
 * entries, "codes", one digit per entry.  The expected codes come from the
 * very codecs the module links (entry_code() of selftests/kmod/kmod_util).
 *
 * Then it waits: SIGUSR1 reads every allocation back and writes "ok N" (N
 * allocations) or "FAIL ..." to FILE.verify (atomically); SIGTERM or
 * SIGINT exits, which frees the allocations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <unistd.h>

#include "tools/common/datagen.h"
#include "selftests/kmod/kmod_util.h"
#include "lib/libbuddy.h"

#define MAX_SPECS	16

struct hold {
	char label[BUDDY_LABEL_LEN];
	uint64_t size, nr, id;
	unsigned int target, codec, uid, got_target, got_codec;
	const char *pattern;
	int fd;
	uint8_t *data, *code;
};

static volatile sig_atomic_t got_usr1, got_term;

static void on_sig(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else
		got_term = 1;
}

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "buddyctl_hold: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Entry i's content: its wanted code, or -1 for random bytes. */
static int want_code(const struct hold *h, uint64_t i)
{
	if (!strcmp(h->pattern, "zero"))
		return BUDDY_CODE_ZERO;
	if (!strcmp(h->pattern, "raw"))
		return -1;
	if (!strncmp(h->pattern, "code-", 5))
		return atoi(h->pattern + 5);
	if (!strcmp(h->pattern, "bands"))
		return (i / 64) % BUDDY_CODE_NR;
	if (!strcmp(h->pattern, "ramp"))
		return (int)(i * BUDDY_CODE_NR / h->nr);
	return -2;
}

static void fill(struct hold *h)
{
	uint8_t proto[BUDDY_CODE_NR][BUDDY_ENTRY_SIZE];
	bool have[BUDDY_CODE_NR] = { false };
	struct datagen_rng r;
	uint64_t i;
	unsigned int codec = h->got_codec;

	datagen_seed(&r, 0xb0dd1e + h->id);
	if (!strncmp(h->pattern, "class-", 6)) {
		int cls = datagen_class_by_name(h->pattern + 6);

		if (cls < 0)
			die(h->pattern, EINVAL);
		datagen_fill(cls, 0xb0dd1e, h->data, h->nr * BUDDY_ENTRY_SIZE);
		for (i = 0; i < h->nr; i++)
			h->code[i] = entry_code(codec,
						h->data + i * BUDDY_ENTRY_SIZE);
		goto tail;
	}
	for (i = 0; i < h->nr; i++) {
		uint8_t *e = h->data + i * BUDDY_ENTRY_SIZE;
		int c = want_code(h, i);

		if (c == -2)
			die(h->pattern, EINVAL);
		if (c < 0) {
			for (unsigned int w = 0; w < BUDDY_ENTRY_SIZE; w += 8) {
				uint64_t v = datagen_next(&r);

				memcpy(e + w, &v, 8);
			}
		} else {
			if (c >= BUDDY_CODE_NR)
				die(h->pattern, EINVAL);
			if (!have[c]) {
				if (!entry_with_code(codec, c, proto[c]))
					die("no entry with that code for the codec",
					    EINVAL);
				have[c] = true;
			}
			memcpy(e, proto[c], BUDDY_ENTRY_SIZE);
		}
		h->code[i] = entry_code(codec, e);
	}
tail:
	/* bytes past the size stay as the kernel keeps them: zero */
	if (h->size % BUDDY_ENTRY_SIZE) {
		uint8_t *last = h->data + (h->nr - 1) * BUDDY_ENTRY_SIZE;

		memset(last + h->size % BUDDY_ENTRY_SIZE, 0,
		       BUDDY_ENTRY_SIZE - h->size % BUDDY_ENTRY_SIZE);
		h->code[h->nr - 1] = entry_code(codec, last);
	}
}

static void parse_spec(const char *spec, struct hold *h)
{
	char *s = strdup(spec), *f[6], *save = NULL;
	int k, r;

	if (!s)
		die("strdup", ENOMEM);
	for (k = 0; k < 6; k++) {
		f[k] = strtok_r(k ? NULL : s, ":", &save);
		if (!f[k])
			die(spec, EINVAL);
	}
	memset(h, 0, sizeof(*h));
	if (strcmp(f[0], "-")) {
		if (strlen(f[0]) >= BUDDY_LABEL_LEN)
			die(spec, ENAMETOOLONG);
		strcpy(h->label, f[0]);
	}
	h->size = strtoull(f[1], NULL, 0);
	if (buddy_target_parse(f[2], &h->target))
		die(f[2], EINVAL);
	r = buddy_codec_parse(f[3]);
	if (r < 0)
		die(f[3], EINVAL);
	h->codec = r;
	h->uid = strtoul(f[4], NULL, 0);
	h->pattern = f[5];
	h->nr = (h->size + BUDDY_ENTRY_SIZE - 1) / BUDDY_ENTRY_SIZE;
}

static void make(int devfd, struct hold *h)
{
	struct buddy_alloc a;
	ssize_t n;

	memset(&a, 0, sizeof(a));
	a.size = h->size;
	a.target = h->target;
	a.codec = h->codec;
	a.flags = BUDDY_ALLOC_CLOEXEC;
	memcpy(a.label, h->label, BUDDY_LABEL_LEN);
	if (h->uid && setresuid(h->uid, h->uid, 0))
		die("setresuid", errno);
	h->fd = buddy_alloc(devfd, &a);
	if (h->uid && setresuid(0, 0, 0))
		die("setresuid back", errno);
	if (h->fd < 0)
		die(buddy_strerror(h->fd, BUDDY_OP_ALLOC), -h->fd);
	h->id = a.id;
	h->got_target = a.target;
	h->got_codec = a.codec;
	h->data = calloc(h->nr, BUDDY_ENTRY_SIZE);
	h->code = calloc(h->nr, 1);
	if (!h->data || !h->code)
		die("calloc", ENOMEM);
	fill(h);
	if (strcmp(h->pattern, "zero")) {
		n = buddy_pwrite(h->fd, h->data, h->size, 0);
		if (n != (ssize_t)h->size)
			die("pwrite", n < 0 ? (int)-n : EIO);
	}
}

static void write_atomic(const char *path, const char *text)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		die(path, errno);
}

static void report(const char *path, struct hold *h, int n)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int i, k;

#define OUT(...) do {							\
		int w_;							\
		while ((w_ = snprintf(buf + len, cap - len, __VA_ARGS__)) >= \
		       (int)(cap - len)) {				\
			cap *= 2;					\
			buf = realloc(buf, cap);			\
			if (!buf)					\
				die("realloc", ENOMEM);			\
		}							\
		len += w_;						\
	} while (0)

	if (!buf)
		die("malloc", ENOMEM);
	OUT("[\n");
	for (i = 0; i < n; i++) {
		uint64_t hist[BUDDY_CODE_SLOTS] = { 0 };
		uint64_t e;

		for (e = 0; e < h[i].nr; e++)
			hist[h[i].code[e]]++;
		OUT("  {\"id\": %llu, \"label\": \"%s\", \"size\": %llu, "
		    "\"target\": %u, \"codec\": %u, \"uid\": %u, \"pid\": %d, "
		    "\"nr_entries\": %llu, \"pattern\": \"%s\", \"histogram\": {",
		    (unsigned long long)h[i].id, h[i].label,
		    (unsigned long long)h[i].size, h[i].got_target,
		    h[i].got_codec, h[i].uid, (int)getpid(),
		    (unsigned long long)h[i].nr, h[i].pattern);
		for (k = 0; k < BUDDY_CODE_NR; k++)
			OUT("%s\"%s\": %llu", k ? ", " : "",
			    (const char *[]){ "zero", "c8", "c32", "c64", "c96",
					      "raw" }[k],
			    (unsigned long long)hist[k]);
		OUT("}");
		if (h[i].nr <= 4096) {
			OUT(", \"codes\": \"");
			for (e = 0; e < h[i].nr; e++)
				OUT("%c", '0' + h[i].code[e]);
			OUT("\"");
		}
		OUT("}%s\n", i + 1 < n ? "," : "");
	}
	OUT("]\n");
	write_atomic(path, buf);
	free(buf);
}

static void verify(const char *path, struct hold *h, int n)
{
	char msg[256], vpath[512];
	int i;

	snprintf(msg, sizeof(msg), "ok %d\n", n);
	for (i = 0; i < n; i++) {
		uint8_t *back = malloc(h[i].size ? h[i].size : 1);
		ssize_t got;
		long d;

		if (!back)
			die("malloc", ENOMEM);
		got = buddy_pread(h[i].fd, back, h[i].size, 0);
		if (got != (ssize_t)h[i].size) {
			snprintf(msg, sizeof(msg), "FAIL id %llu: read %zd of %llu\n",
				 (unsigned long long)h[i].id, got,
				 (unsigned long long)h[i].size);
			free(back);
			break;
		}
		d = first_diff(back, h[i].data, h[i].size);
		free(back);
		if (d >= 0) {
			snprintf(msg, sizeof(msg), "FAIL id %llu: byte %ld differs\n",
				 (unsigned long long)h[i].id, d);
			break;
		}
	}
	snprintf(vpath, sizeof(vpath), "%s.verify", path);
	write_atomic(vpath, msg);
}

int main(int argc, char **argv)
{
	struct hold h[MAX_SPECS];
	struct sigaction sa;
	const char *out = NULL;
	sigset_t block, old;
	int i, n = 0, devfd;

	if (argc > 3 && !strcmp(argv[1], "--as")) {
		unsigned int id = strtoul(argv[2], NULL, 0);

		if (setgroups(0, NULL) || setresgid(id, id, id) ||
		    setresuid(id, id, id))
			die("--as", errno);
		execvp(argv[3], argv + 3);
		die(argv[3], errno);
	}
	if (argc > 2 && !strcmp(argv[1], "-o")) {
		out = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (!out || argc < 2 || argc - 1 > MAX_SPECS) {
		fprintf(stderr, "usage: buddyctl_hold -o FILE LABEL:SIZE:TARGET:CODEC:UID:PATTERN...\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);

	devfd = buddy_open(NULL);
	if (devfd < 0)
		die(buddy_strerror(devfd, BUDDY_OP_OPEN), -devfd);
	for (i = 1; i < argc; i++, n++) {
		parse_spec(argv[i], &h[n]);
		make(devfd, &h[n]);
	}
	close(devfd);
	report(out, h, n);

	while (!got_term) {
		sigsuspend(&old);
		if (got_usr1) {
			got_usr1 = 0;
			verify(out, h, n);
		}
	}
	return 0;
}
