// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd in a guest with buddy.ko loaded (run by guest-daemon.sh; the module
 * is expected with device_mb=16 max_ratio=4, the default chunk size).
 *
 * Allocations are filled with entries of known size codes (checked against
 * BUDDY_IOC_ALLOC_STAT before buddyd runs), so every decision is known:
 * zeros and mostly-zero data 16x, C8/C32 data 4x, C64 2x, C96 4/3x, random
 * 1x, and mixes on both sides of the 30% Buddy Threshold.  Then: profiles
 * reach later AUTO allocations; a hand-edited state file is installed with
 * REPLACE; live re-targeting under concurrent I/O loses nothing; ENOSPC
 * leaves an allocation and its data as they were; non-root callers get
 * EPERM; a label's profile codec is re-encoded live (and --codec=keep
 * does not); READY=1 arrives on a NOTIFY_SOCKET; SIGHUP picks up a drop-in; the
 * report's figures match hand-computed values.
 *
 * buddyd is $BUDDYD (default /opt/daemon/buddyd).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "guest_util.h"
#include "daemon/state.h"

#define NOBODY		65534
#define E		BUDDY_ENTRY_SIZE
#define MIB		(1024 * 1024)

/* Drop to uid/gid 65534 with no supplementary groups: 0 or -1. */
static int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -1;
	return 0;
}

/* The setup SKIPped (no device): the 6.1 harness still runs the body. */
#define SETUP_DONE() do { if (_metadata->skip) return; } while (0)

enum { Z = BUDDY_CODE_ZERO, C8 = BUDDY_CODE_C8, C32 = BUDDY_CODE_C32,
       C64 = BUDDY_CODE_C64, C96 = BUDDY_CODE_C96, RAW = BUDDY_CODE_RAW };

FIXTURE(bd) {
	int fd;
	struct buddy_info info;
	char dir[64];
	char conf[128];
	char state[128];
	int runs;
	int afd[16];
	int nafd;
};

static void clear_profiles(int fd)
{
	buddy_profile_set(fd, NULL, 0, BUDDY_PROFILE_REPLACE);
}

FIXTURE_SETUP(bd)
{
	self->fd = buddy_open(NULL);
	self->nafd = 0;
	if (self->fd < 0)
		SKIP(return, "%s: %s", BUDDY_DEV_PATH,
		     buddy_strerror(self->fd, BUDDY_OP_OPEN));
	ASSERT_EQ(0, buddy_get_info(self->fd, &self->info));
	ASSERT_EQ(0, self->info.nr_allocs) TH_LOG("allocations left by an earlier test");
	clear_profiles(self->fd);
	strcpy(self->dir, "/tmp/buddyd-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->conf, sizeof(self->conf), "%s/buddyd.conf", self->dir);
	snprintf(self->state, sizeof(self->state), "%s/state/profiles", self->dir);
	ASSERT_EQ(0, gu_write_file(self->conf, "[Buddyd]\n"));
	self->runs = 0;
}

FIXTURE_TEARDOWN(bd)
{
	char cmd[128];

	if (self->fd < 0)
		return;
	chmod(BUDDY_DEV_PATH, 0660);
	for (int i = 0; i < self->nafd; i++)
		close(self->afd[i]);
	clear_profiles(self->fd);
	close(self->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

/* Print a captured output, each line as a TAP comment. */
static void show(const char *what, const char *text)
{
	const char *s = text;

	while (s && *s) {
		const char *nl = strchr(s, '\n');
		int len = nl ? (int)(nl - s) : (int)strlen(s);

		printf("# %s: %.*s\n", what, len, s);
		s = nl ? nl + 1 : NULL;
	}
	fflush(stdout);
}

/*
 * Run buddyd with --config and --state-file of the fixture, then the
 * NULL-terminated options; stdout and stderr into *@out and *@err.
 * Return: the exit status.
 */
static int run_buddyd(struct __test_metadata *_metadata,
		      FIXTURE_DATA(bd) *self, char **out, char **err, ...)
{
	char *argv[40], op[160], ep[160];
	const char *a;
	int n = 0, rc;
	va_list ap;
	pid_t pid;

	argv[n++] = (char *)gu_buddyd();
	argv[n++] = "--config";
	argv[n++] = self->conf;
	argv[n++] = "--state-file";
	argv[n++] = self->state;
	va_start(ap, err);
	while ((a = va_arg(ap, const char *)) && n < 39)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	snprintf(op, sizeof(op), "%s/out.%d", self->dir, self->runs);
	snprintf(ep, sizeof(ep), "%s/err.%d", self->dir, self->runs++);
	pid = gu_spawn(argv, NULL, op, ep);
	if (pid < 0)
		return pid;
	rc = gu_wait(pid, 120000);
	*out = gu_read_file(op);
	*err = gu_read_file(ep);
	show("buddyd", *err);
	return rc;
}

/* Keep an allocation fd until teardown. */
static void keep(FIXTURE_DATA(bd) *self, int afd)
{
	if (afd >= 0 && self->nafd < 16)
		self->afd[self->nafd++] = afd;
}

/*
 * An allocation of the entries @counts (codes Z C8 C32 C64 C96 RAW) under
 * @codec at @target, checked against ALLOC_STAT.  @buf receives the bytes
 * when not NULL (size = entries * 128).
 */
static int make_alloc(struct __test_metadata *_metadata, int fd,
		      const char *label, unsigned int codec, unsigned int target,
		      const uint64_t counts[BUDDY_CODE_NR], uint64_t seed,
		      uint64_t *id, uint8_t **bufp)
{
	struct buddy_alloc_stat st;
	uint64_t n = 0;
	uint8_t *buf;
	int afd;

	for (int c = 0; c < BUDDY_CODE_NR; c++)
		n += counts[c];
	buf = malloc(n * E);
	if (!buf)
		return -ENOMEM;
	if (gu_fill_mix(codec, counts, seed, buf, NULL)) {
		TH_LOG("%s: codec %s cannot make these codes", label,
		       buddy_codec_name(codec));
		free(buf);
		return -EINVAL;
	}
	afd = gu_alloc_write(fd, n * E, target, codec, label, buf, id);
	if (afd < 0) {
		TH_LOG("%s: %s", label, strerror(-afd));
		free(buf);
		return afd;
	}
	EXPECT_EQ(0, buddy_alloc_stat(afd, &st));
	for (int c = 0; c < BUDDY_CODE_NR; c++) {
		EXPECT_EQ(counts[c], st.codes[c]) TH_LOG("%s: code %d", label, c);
	}
	if (bufp)
		*bufp = buf;
	else
		free(buf);
	return afd;
}

#define MIX(z, c8, c32, c64, c96, raw) ((const uint64_t[BUDDY_CODE_NR]){ \
	z, c8, c32, c64, c96, raw })

/* The unit of @uid/@label in a JSON report, or NULL. */
static struct json_object *unit_of(struct json_object *root, uint32_t uid,
				   const char *label)
{
	struct json_object *units, *u, *v;

	if (!json_object_object_get_ex(root, "units", &units))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(units); i++) {
		u = json_object_array_get_idx(units, i);
		if (json_object_object_get_ex(u, "uid", &v) &&
		    (uint32_t)json_object_get_int64(v) == uid &&
		    json_object_object_get_ex(u, "label", &v) &&
		    !strcmp(json_object_get_string(v), label))
			return u;
	}
	return NULL;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return "(none)";
	return json_object_get_string(v);
}

static double jnum(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return -1;
	return json_object_get_double(v);
}

/* The profile of @uid/@label installed in the kernel, or -ENOENT. */
static int kernel_profile(int fd, uint32_t uid, const char *label,
			  struct buddy_profile_entry *out, unsigned int *total)
{
	struct buddy_profile_entry e[64];
	unsigned int n, tot;
	int r = buddy_profile_get(fd, e, 64, &n, &tot);

	if (r)
		return r;
	if (total)
		*total = tot;
	for (unsigned int i = 0; i < n; i++) {
		if (e[i].uid == uid && !strcmp(e[i].label, label)) {
			if (out)
				*out = e[i];
			return 0;
		}
	}
	return -ENOENT;
}

/* A child (uid NOBODY) that allocates @label of RAW data and holds it. */
struct holder {
	pid_t pid;
	int go;		/* write a byte to release it */
};

static int nobody_alloc(int fd, const char *label, uint64_t entries,
			struct holder *h)
{
	int ready[2], go[2];
	char c;

	if (pipe(ready) || pipe(go))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (!h->pid) {
		uint64_t counts[BUDDY_CODE_NR] = { [RAW] = entries };
		uint8_t *buf = malloc(entries * E);
		int afd;

		if (become_nobody())
			_exit(2);
		if (!buf || gu_fill_mix(BUDDY_CODEC_BPC, counts, 99, buf, NULL))
			_exit(3);
		afd = gu_alloc_write(fd, entries * E, BUDDY_TARGET_1X,
				     BUDDY_CODEC_BPC, label, buf, NULL);
		if (afd < 0)
			_exit(4);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(5);
		close(afd);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -EIO;
	}
	close(ready[0]);
	h->go = go[1];
	return 0;
}

static int release(struct holder *h)
{
	int st;

	if (write(h->go, "g", 1) != 1)
		return -EIO;
	close(h->go);
	waitpid(h->pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ---- decisions of known data ------------------------------------------- */

struct known {
	const char *label;
	unsigned int codec;
	uint64_t counts[BUDDY_CODE_NR];
	const char *want;
};

/* 1000 entries each, so that shares are exact per mille. */
static const struct known known[] = {
	{ "zeros",      BUDDY_CODEC_BPC, { 1000, 0, 0, 0, 0, 0 },   "16x" },
	{ "sparse-c8",  BUDDY_CODEC_BPC, { 950, 50, 0, 0, 0, 0 },   "16x" },
	{ "sparse-c32", BUDDY_CODEC_BPC, { 920, 0, 80, 0, 0, 0 },   "16x" },
	{ "zero85-c8",  BUDDY_CODEC_BPC, { 850, 150, 0, 0, 0, 0 },  "4x" },
	{ "const-c8",   BUDDY_CODEC_BPC, { 0, 1000, 0, 0, 0, 0 },   "4x" },
	{ "ramp-c32",   BUDDY_CODEC_BPC, { 0, 0, 1000, 0, 0, 0 },   "4x" },
	{ "c64",        BUDDY_CODEC_BPC, { 0, 0, 0, 1000, 0, 0 },   "2x" },
	{ "c96",        BUDDY_CODEC_BPC, { 0, 0, 0, 0, 1000, 0 },   "4/3x" },
	{ "random",     BUDDY_CODEC_BPC, { 0, 0, 0, 0, 0, 1000 },   "1x" },
	{ "half-zero",  BUDDY_CODEC_BPC, { 500, 0, 0, 0, 0, 500 },  "1x" },
	{ "at-30",      BUDDY_CODEC_BPC, { 0, 0, 700, 0, 0, 300 },  "4x" },
	{ "over-30",    BUDDY_CODEC_BPC, { 0, 0, 690, 20, 0, 290 }, "2x" },
	{ "zvc-c32",    BUDDY_CODEC_ZVC, { 0, 0, 1000, 0, 0, 0 },   "4x" },
};
#define NR_KNOWN (sizeof(known) / sizeof(known[0]))

TEST_F_TIMEOUT(bd, known_data_reaches_expected_targets, 120)
{
	struct json_object *root, *u;
	struct buddy_alloc_stat st;
	struct holder h = { .pid = -1, .go = -1 };
	uint64_t id;
	char *out, *err;
	int afd, rc;

	SETUP_DONE();
	for (size_t i = 0; i < NR_KNOWN; i++) {
		afd = make_alloc(_metadata, self->fd, known[i].label,
				 known[i].codec, BUDDY_TARGET_1X,
				 known[i].counts, i + 1, NULL, NULL);
		ASSERT_LE(0, afd);
		keep(self, afd);
	}
	/* pooled: alone "pool-b" would be 1x, with its label mate 4x */
	keep(self, make_alloc(_metadata, self->fd, "pool", BUDDY_CODEC_BPC,
			      BUDDY_TARGET_1X, MIX(0, 0, 800, 0, 0, 0), 31,
			      NULL, NULL));
	keep(self, make_alloc(_metadata, self->fd, "pool", BUDDY_CODEC_BPC,
			      BUDDY_TARGET_1X, MIX(0, 0, 0, 0, 0, 200), 32,
			      NULL, NULL));
	/* unlabelled: its own unit */
	afd = make_alloc(_metadata, self->fd, NULL, BUDDY_CODEC_BPC,
			 BUDDY_TARGET_1X, MIX(0, 0, 0, 1000, 0, 0), 33, &id,
			 NULL);
	keep(self, afd);
	/* the same label under another uid: not pooled with root's */
	ASSERT_EQ(0, nobody_alloc(self->fd, "pool", 1000, &h));

	rc = run_buddyd(_metadata, self, &out, &err, "--once", "--report",
			"--json", "--dry-run", "--window=3", "--interval=20ms",
			NULL);
	EXPECT_EQ(0, release(&h));
	ASSERT_EQ(0, rc);
	root = json_tokener_parse(out);
	ASSERT_NE(NULL, root) TH_LOG("not JSON: %s", out);
	for (size_t i = 0; i < NR_KNOWN; i++) {
		char want[160];

		u = unit_of(root, 0, known[i].label);
		ASSERT_NE(NULL, u) TH_LOG("no unit for %s", known[i].label);
		EXPECT_STREQ(known[i].want, jstr(u, "target"))
			TH_LOG("%s", known[i].label);
		/* every decision is logged with its figures */
		snprintf(want, sizeof(want),
			 "buddyd: decide uid=0 label=\"%s\" allocs=1 size=0.12MiB codec=%s snapshots=3 entries=3000 target=%s (was new)",
			 known[i].label, buddy_codec_name(known[i].codec),
			 known[i].want);
		EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
	}
	u = unit_of(root, 0, "pool");
	EXPECT_STREQ("4x", jstr(u, "target"));
	EXPECT_EQ(2, (int)jnum(u, "allocations"));
	EXPECT_STREQ("1x", jstr(unit_of(root, NOBODY, "pool"), "target"));
	u = unit_of(root, 0, "");
	EXPECT_STREQ("2x", jstr(u, "target"));
	EXPECT_EQ(id, (uint64_t)jnum(u, "id"));
	EXPECT_NE(NULL, strstr(err, "mostly-zero=yes over[16x/4x/2x/4/3x]=0.00%/0.00%/0.00%/0.00% expected-buddy=0.00% ratio=16.00x"));
	/* at-30 sits exactly on the threshold: 30% over at 4x qualifies */
	EXPECT_NE(NULL, strstr(err, "label=\"at-30\" allocs=1 size=0.12MiB codec=bpc snapshots=3 entries=3000 target=4x (was new) threshold-target=4x mostly-zero=no over[16x/4x/2x/4/3x]=100.00%/30.00%/30.00%/30.00% expected-buddy=30.00%"));
	json_object_put(root);

	/* a dry run changes nothing */
	EXPECT_EQ(-ENOENT, kernel_profile(self->fd, 0, "zeros", NULL, NULL));
	EXPECT_NE(0, access(self->state, F_OK));
	for (int i = 0; i < self->nafd; i++) {
		ASSERT_EQ(0, buddy_alloc_stat(self->afd[i], &st));
		EXPECT_EQ(BUDDY_TARGET_1X, st.target);
	}
	EXPECT_NE(NULL, strstr(err, "dry run: would set profile uid=0 label=\"zeros\": 16x bpc (was none)"));
	EXPECT_NE(NULL, strstr(err, "dry run: would retarget allocation"));
	free(out);
	free(err);
}

/* ---- profiles for AUTO allocations ------------------------------------ */

TEST_F_TIMEOUT(bd, profiles_reach_later_auto_allocations, 120)
{
	static const struct {
		const char *label;
		unsigned int codec, target;
		uint64_t counts[BUDDY_CODE_NR];
	} p[] = {
		{ "p-zero", BUDDY_CODEC_BPC, BUDDY_TARGET_16X, { 1000 } },
		{ "p-c64", BUDDY_CODEC_BPC, BUDDY_TARGET_2X, { 0, 0, 0, 1000 } },
		{ "p-zvc", BUDDY_CODEC_ZVC, BUDDY_TARGET_4X, { 0, 0, 1000 } },
		{ "p-rand", BUDDY_CODEC_BPC, BUDDY_TARGET_1X, { 0, 0, 0, 0, 0, 1000 } },
	};
	struct buddy_profile_entry stale = { .uid = 0, .target = BUDDY_TARGET_2X,
					     .label = "stale" }, e;
	struct buddy_profile_entry stale2 = { .uid = 1000,
					      .target = BUDDY_TARGET_4X,
					      .label = "by-hand" };
	struct buddy_profile_table t = { 0 };
	struct buddy_alloc_stat st;
	struct buddy_alloc req;
	unsigned int total;
	char *out, *err;
	int afd;

	SETUP_DONE();
	/* loaded by hand: without a state file buddyd keeps them, and saves them */
	ASSERT_EQ(0, buddy_profile_set(self->fd, &stale, 1, 0));
	ASSERT_EQ(0, buddy_profile_set(self->fd, &stale2, 1, 0));
	for (size_t i = 0; i < 4; i++) {
		afd = make_alloc(_metadata, self->fd, p[i].label, p[i].codec,
				 BUDDY_TARGET_1X, p[i].counts, 40 + i, NULL,
				 NULL);
		ASSERT_LE(0, afd);
		keep(self, afd);
	}
	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--window=3", "--interval=20ms", NULL));
	EXPECT_EQ(0, kernel_profile(self->fd, 0, "stale", &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_2X, e.target);
	EXPECT_EQ(0, kernel_profile(self->fd, 1000, "by-hand", &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_4X, e.target);
	EXPECT_NE(NULL, strstr(err, "no state file yet: keeping the 2 profiles installed in /dev/buddy"));
	ASSERT_EQ(0, kernel_profile(self->fd, 0, "p-zero", NULL, &total));
	EXPECT_EQ(6, total);
	for (size_t i = 0; i < 4; i++) {
		ASSERT_EQ(0, kernel_profile(self->fd, 0, p[i].label, &e, NULL));
		EXPECT_EQ(p[i].target, e.target) TH_LOG("%s", p[i].label);
		EXPECT_EQ(p[i].codec, e.codec) TH_LOG("%s", p[i].label);
	}
	EXPECT_NE(NULL, strstr(err, "buddyd: profile uid=0 label=\"p-zvc\": 4x zvc (was none)"));
	/* the state file says the same, the profile loaded by hand too */
	ASSERT_EQ(0, bd_state_load(self->state, &t, NULL));
	EXPECT_EQ(6, t.n);
	EXPECT_NE(NULL, buddy_profile_find(&t, 0, "stale"));
	EXPECT_NE(NULL, buddy_profile_find(&t, 1000, "by-hand"));
	for (size_t i = 0; i < 4; i++) {
		struct buddy_profile_entry *q = buddy_profile_find(&t, 0, p[i].label);

		ASSERT_NE(NULL, q) TH_LOG("%s not in %s", p[i].label, self->state);
		EXPECT_EQ(p[i].target, q->target);
		EXPECT_EQ(p[i].codec, q->codec);
	}
	buddy_profile_free(&t);
	/* profiles mode leaves the live allocations alone */
	for (int i = 0; i < self->nafd; i++) {
		ASSERT_EQ(0, buddy_alloc_stat(self->afd[i], &st));
		EXPECT_EQ(BUDDY_TARGET_1X, st.target);
		close(self->afd[i]);
	}
	self->nafd = 0;

	/* later AUTO allocations with those labels get their profiles */
	for (size_t i = 0; i < 4; i++) {
		memset(&req, 0, sizeof(req));
		req.size = 64 * 1024;
		req.target = BUDDY_TARGET_AUTO;
		req.codec = BUDDY_CODEC_DEFAULT;
		req.flags = BUDDY_ALLOC_CLOEXEC;
		strcpy(req.label, p[i].label);
		afd = buddy_alloc(self->fd, &req);
		ASSERT_LE(0, afd) TH_LOG("%s: %s", p[i].label, strerror(-afd));
		EXPECT_EQ(BUDDY_SRC_PROFILE, req.target_source) TH_LOG("%s", p[i].label);
		EXPECT_EQ(p[i].target, req.target) TH_LOG("%s", p[i].label);
		EXPECT_EQ(p[i].codec, req.codec) TH_LOG("%s", p[i].label);
		ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
		EXPECT_EQ(BUDDY_SRC_PROFILE, st.target_source);
		EXPECT_EQ(p[i].target, st.target);
		close(afd);
	}
	/* without a profile: the module's default */
	memset(&req, 0, sizeof(req));
	req.size = 4096;
	req.flags = BUDDY_ALLOC_CLOEXEC;
	strcpy(req.label, "no-such-profile");
	afd = buddy_alloc(self->fd, &req);
	ASSERT_LE(0, afd);
	EXPECT_EQ(BUDDY_SRC_DEFAULT, req.target_source);
	close(afd);
	free(out);
	free(err);
}

/* ---- the state file at start -------------------------------------------- */

TEST_F_TIMEOUT(bd, state_file_installed_with_replace, 60)
{
	static const char text[] =
		"# edited by hand\n"
		"\n"
		"0\tweights\t2x\tbpc\n"
		"0\tbad\\q\t2x\tbpc\n"				/* 4 */
		"65534\tspace label #1 \\\\ \"q\"\t4x\tzvc\n"
		"0\t\\x41BC\t4/3x\tdefault\n"
		"0\tctl\\x01\t2x\tbpc\n"			/* 7: kernel says no */
		"0\tslash/label\t2x\tbpc\n"			/* 8: kernel says no */
		"x\ty\tz\n"					/* 9 */
		"0\tauto\tauto\tbpc\n";				/* 10 */
	struct buddy_profile_entry stale = { .uid = 0, .target = BUDDY_TARGET_2X,
					     .label = "stale" }, e;
	unsigned int total;
	char *out, *err, *after;
	int ready[2], st;
	pid_t pid;

	SETUP_DONE();
	ASSERT_EQ(0, mkdir(strcat(strcpy((char[128]){ 0 }, self->dir), "/state"), 0755));
	ASSERT_EQ(0, gu_write_file(self->state, text));
	ASSERT_EQ(0, buddy_profile_set(self->fd, &stale, 1, 0));
	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--report", "--window=1", "--interval=10ms",
				NULL));
	/* nothing allocated: an empty report, still every section */
	EXPECT_NE(NULL, strstr(out, "units: 0 decided")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "Fig. 7:"));
	EXPECT_NE(NULL, strstr(out, "Fig. 10:"));
	EXPECT_NE(NULL, strstr(out, "Fig. 9:"));
	EXPECT_EQ(-ENOENT, kernel_profile(self->fd, 0, "stale", NULL, NULL));
	ASSERT_EQ(0, kernel_profile(self->fd, 0, "weights", &e, &total));
	EXPECT_EQ(3, total);
	EXPECT_EQ(BUDDY_TARGET_2X, e.target);
	ASSERT_EQ(0, kernel_profile(self->fd, 0, "ABC", &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_4_3X, e.target);
	EXPECT_EQ(BUDDY_CODEC_DEFAULT, e.codec);
	ASSERT_EQ(0, kernel_profile(self->fd, NOBODY, "space label #1 \\ \"q\"",
				    &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_4X, e.target);
	EXPECT_EQ(BUDDY_CODEC_ZVC, e.codec);
	EXPECT_NE(NULL, strstr(err, "profiles:4: bad escape")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "profiles:9: expected 4 TAB-separated fields"));
	EXPECT_NE(NULL, strstr(err, "profiles:10: invalid target"));
	EXPECT_NE(NULL, strstr(err, "label \"ctl\\x01\": buddy.ko labels are printable ASCII without '/'; not installed"));
	EXPECT_NE(NULL, strstr(err, "label \"slash/label\": buddy.ko labels"));
	EXPECT_NE(NULL, strstr(err, "buddyd: installed 3 profiles from"));
	EXPECT_NE(NULL, strstr(err, "profiles, replacing the 1 of /dev/buddy"));
	/* nothing decided: the file is as the person left it */
	after = gu_read_file(self->state);
	EXPECT_STREQ(text, after);
	free(after);

	/* uid 65534's AUTO allocation with that label gets its profile */
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct buddy_alloc req;
		int afd;

		if (become_nobody())
			_exit(2);
		memset(&req, 0, sizeof(req));
		req.size = 4096;
		req.flags = BUDDY_ALLOC_CLOEXEC;
		strcpy(req.label, "space label #1 \\ \"q\"");
		afd = buddy_alloc(self->fd, &req);
		if (afd < 0)
			_exit(3);
		_exit(req.target_source == BUDDY_SRC_PROFILE &&
		      req.target == BUDDY_TARGET_4X &&
		      req.codec == BUDDY_CODEC_ZVC ? 0 : 4);
	}
	waitpid(pid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(ready[0]);
	close(ready[1]);
	free(out);
	free(err);
}

/* ---- live re-targeting under I/O --------------------------------------- */

struct io_thread {
	pthread_t th;
	int afd;
	uint8_t *shadow;	/* the whole allocation */
	const uint8_t *cls;	/* per entry: 0 zero, 1 C8 */
	const uint8_t *pool;	/* 64 C8 entries */
	uint64_t first, count;	/* this thread's entries */
	volatile int *stop;
	uint64_t ops, errors, mismatches;
	uint64_t seed;
};

static void *io_main(void *arg)
{
	struct io_thread *t = arg;
	struct datagen_rng r;
	uint8_t buf[4 * E];

	datagen_seed(&r, t->seed);
	while (!*t->stop) {
		uint64_t e = t->first + datagen_below(&r, t->count);
		unsigned int k = 1 + datagen_below(&r, 3), i;
		uint64_t off, len;

		if (e + k > t->first + t->count)
			k = t->first + t->count - e;
		/* write k whole entries, each keeping its class (and code) */
		for (i = 0; i < k; i++) {
			if (t->cls[e + i])
				memcpy(buf + i * E,
				       t->pool + datagen_below(&r, 64) * E, E);
			else
				memset(buf + i * E, 0, E);
		}
		if (buddy_pwrite(t->afd, buf, k * E, e * E) != (ssize_t)(k * E)) {
			t->errors++;
			continue;
		}
		memcpy(t->shadow + e * E, buf, k * E);
		/* read back an unaligned piece of this thread's range */
		off = t->first * E + datagen_below(&r, t->count * E);
		len = 1 + datagen_below(&r, sizeof(buf));
		if (off + len > (t->first + t->count) * E)
			len = (t->first + t->count) * E - off;
		if (buddy_pread(t->afd, buf, len, off) != (ssize_t)len)
			t->errors++;
		else if (memcmp(buf, t->shadow + off, len))
			t->mismatches++;
		t->ops++;
	}
	return NULL;
}

TEST_F_TIMEOUT(bd, live_retarget_under_io_loses_nothing, 180)
{
	enum { ENTRIES = 32768, THREADS = 2 };	/* 4 MiB: two chunks each */
	static const struct {
		const char *label;
		unsigned int zero_pm;	/* zero entries per mille */
		unsigned int want;
	} a[2] = {
		{ "live-c8", 0, BUDDY_TARGET_4X },
		{ "live-sparse", 950, BUDDY_TARGET_16X },
	};
	struct io_thread th[2][THREADS];
	uint8_t *shadow[2], *cls[2], *pool, *back;
	volatile int stop = 0;
	struct buddy_alloc_stat st;
	uint64_t id[2], ops_at_start = 0, ops_at_end = 0;
	char *out, *err, op[160], ep[160], want[96];
	struct datagen_rng r;
	pid_t pid;
	int afd[2], rc;

	SETUP_DONE();
	pool = malloc(64 * E);
	ASSERT_NE(NULL, pool);
	for (int i = 0; i < 64; i++)
		ASSERT_TRUE(gu_entry(BUDDY_CODEC_BPC, C8, 1000 + i, pool + i * E));
	datagen_seed(&r, 5);
	for (int k = 0; k < 2; k++) {
		shadow[k] = calloc(ENTRIES, E);
		cls[k] = calloc(ENTRIES, 1);
		ASSERT_NE(NULL, shadow[k]);
		ASSERT_NE(NULL, cls[k]);
		for (int e = 0; e < ENTRIES; e++) {
			cls[k][e] = datagen_below(&r, 1000) >= a[k].zero_pm;
			if (cls[k][e])
				memcpy(shadow[k] + (size_t)e * E,
				       pool + datagen_below(&r, 64) * E, E);
		}
		afd[k] = gu_alloc_write(self->fd, (uint64_t)ENTRIES * E,
					BUDDY_TARGET_1X, BUDDY_CODEC_BPC,
					a[k].label, shadow[k], &id[k]);
		ASSERT_LE(0, afd[k]);
		keep(self, afd[k]);
		for (int i = 0; i < THREADS; i++) {
			struct io_thread *t = &th[k][i];

			memset(t, 0, sizeof(*t));
			t->afd = afd[k];
			t->shadow = shadow[k];
			t->cls = cls[k];
			t->pool = pool;
			t->first = (uint64_t)i * ENTRIES / THREADS;
			t->count = ENTRIES / THREADS;
			t->stop = &stop;
			t->seed = 77 + 10 * k + i;
		}
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < THREADS; i++)
			ASSERT_EQ(0, pthread_create(&th[k][i].th, NULL, io_main,
						    &th[k][i]));
	usleep(100000);
	{
		char *argv[] = { (char *)gu_buddyd(), "--config", self->conf,
				 "--state-file", self->state, "--once",
				 "--apply=live", "--window=4", "--interval=50ms",
				 NULL };

		snprintf(op, sizeof(op), "%s/out.live", self->dir);
		snprintf(ep, sizeof(ep), "%s/err.live", self->dir);
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < THREADS; i++)
				ops_at_start += th[k][i].ops;
		pid = gu_spawn(argv, NULL, op, ep);
		ASSERT_LT(0, pid);
		rc = gu_wait(pid, 120000);
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < THREADS; i++)
				ops_at_end += th[k][i].ops;
	}
	usleep(100000);
	stop = 1;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[k][i].th, NULL);
	out = gu_read_file(op);
	err = gu_read_file(ep);
	show("buddyd", err);
	EXPECT_EQ(0, rc);
	TH_LOG("%llu I/O operations while buddyd ran",
	       (unsigned long long)(ops_at_end - ops_at_start));
	EXPECT_LT(0, ops_at_end - ops_at_start);

	back = malloc((size_t)ENTRIES * E);
	ASSERT_NE(NULL, back);
	for (int k = 0; k < 2; k++) {
		uint64_t errors = 0, mism = 0;

		for (int i = 0; i < THREADS; i++) {
			errors += th[k][i].errors;
			mism += th[k][i].mismatches;
		}
		EXPECT_EQ(0, errors) TH_LOG("%s: I/O errors", a[k].label);
		EXPECT_EQ(0, mism) TH_LOG("%s: reads that differed from the shadow",
					  a[k].label);
		ASSERT_EQ((ssize_t)ENTRIES * E,
			  buddy_pread(afd[k], back, (size_t)ENTRIES * E, 0));
		EXPECT_EQ(0, memcmp(back, shadow[k], (size_t)ENTRIES * E))
			TH_LOG("%s: contents differ after re-targeting", a[k].label);
		ASSERT_EQ(0, buddy_alloc_stat(afd[k], &st));
		EXPECT_EQ(a[k].want, st.target) TH_LOG("%s", a[k].label);
		EXPECT_EQ(BUDDY_SRC_EXPLICIT, st.target_source);
		snprintf(want, sizeof(want), "buddyd: retarget allocation %llu (uid=0 label=\"%s\"",
			 (unsigned long long)id[k], a[k].label);
		EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
		snprintf(want, sizeof(want), ": 1x -> %s in ",
			 buddy_target_name(a[k].want));
		EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
	}
	/* and the profiles were written too */
	EXPECT_EQ(0, kernel_profile(self->fd, 0, "live-c8", NULL, NULL));
	free(back);
	for (int k = 0; k < 2; k++) {
		free(shadow[k]);
		free(cls[k]);
	}
	free(pool);
	free(out);
	free(err);
}

/* ---- ENOSPC ------------------------------------------------------------- */

TEST_F_TIMEOUT(bd, enospc_retarget_leaves_data_intact, 180)
{
	uint64_t xsize = 8 * MIB, fsize, id, fid;
	struct buddy_alloc_stat st, before;
	uint8_t *x, *f, *back;
	struct buddy_info info;
	char *out, *err, want[200];
	int xfd, ffd;

	SETUP_DONE();
	if (self->info.device_bytes != 16 * MIB)
		SKIP(return, "needs buddy.ko device_mb=16 (has %llu MiB)",
		     (unsigned long long)self->info.device_bytes / MIB);
	/* random data at 4x: 2 MiB of device pool, 6 MiB of carve-out */
	x = malloc(xsize);
	ASSERT_NE(NULL, x);
	datagen_fill(DATAGEN_RANDOM, 1, x, xsize);
	xfd = gu_alloc_write(self->fd, xsize, BUDDY_TARGET_4X, BUDDY_CODEC_BPC,
			     "enospc-x", x, &id);
	ASSERT_LE(0, xfd);
	keep(self, xfd);
	/* random filler at 1x, so that 1x for x cannot fit (nor would it) */
	ASSERT_EQ(0, buddy_get_info(self->fd, &info));
	fsize = info.device_bytes - info.device_used - 3 * MIB;
	f = malloc(fsize);
	ASSERT_NE(NULL, f);
	datagen_fill(DATAGEN_RANDOM, 2, f, fsize);
	ffd = gu_alloc_write(self->fd, fsize, BUDDY_TARGET_1X, BUDDY_CODEC_BPC,
			     "enospc-filler", f, &fid);
	ASSERT_LE(0, ffd);
	keep(self, ffd);
	ASSERT_EQ(0, buddy_alloc_stat(xfd, &before));
	/* the kernel agrees that 1x does not fit now */
	EXPECT_EQ(-ENOSPC, buddy_set_target(self->fd, id, BUDDY_TARGET_1X, 0));

	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--apply=live", "--window=2", "--interval=20ms",
				NULL));
	snprintf(want, sizeof(want),
		 "buddyd: warning: retarget allocation %llu (uid=0 label=\"enospc-x\"",
		 (unsigned long long)id);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
	EXPECT_NE(NULL, strstr(err, ": 4x -> 1x: BUDDY_IOC_SET_TARGET: No space left on device: left at 4x"));
	ASSERT_EQ(0, buddy_alloc_stat(xfd, &st));
	EXPECT_EQ(BUDDY_TARGET_4X, st.target);
	EXPECT_EQ(before.device_bytes, st.device_bytes);
	EXPECT_EQ(before.buddy_bytes, st.buddy_bytes);
	EXPECT_EQ(0, memcmp(before.codes, st.codes, sizeof(st.codes)));
	back = malloc(xsize > fsize ? xsize : fsize);
	ASSERT_NE(NULL, back);
	ASSERT_EQ((ssize_t)xsize, buddy_pread(xfd, back, xsize, 0));
	EXPECT_EQ(0, memcmp(back, x, xsize));
	ASSERT_EQ((ssize_t)fsize, buddy_pread(ffd, back, fsize, 0));
	EXPECT_EQ(0, memcmp(back, f, fsize));
	/* buddyd went on: the profiles are written even so */
	EXPECT_EQ(0, kernel_profile(self->fd, 0, "enospc-filler", NULL, NULL));
	free(back);
	free(x);
	free(f);
	free(out);
	free(err);
}

/* ---- codec choice --------------------------------------------------------- */

/*
 * Sparse ReLU data allocated as BPC, whose label's profile (as `buddyctl
 * profile -p` writes it) names ZVC at 4x: --codec=keep leaves it BPC,
 * then the default (--codec=profile) re-encodes it live to ZVC at 4x, in
 * fewer device bytes, its data intact.
 */
TEST_F_TIMEOUT(bd, live_codec_choice_from_profile, 180)
{
	uint64_t size = 2 * MIB, id;
	struct buddy_alloc_stat before, st;
	uint8_t *x, *back;
	char *out, *err, want[200], keep_state[160];
	int afd;

	SETUP_DONE();
	x = malloc(size);
	back = malloc(size);
	ASSERT_NE(NULL, x);
	ASSERT_NE(NULL, back);
	datagen_fill(DATAGEN_RELU90, 5, x, size);
	afd = gu_alloc_write(self->fd, size, BUDDY_TARGET_2X, BUDDY_CODEC_BPC,
			     "cc-relu", x, &id);
	ASSERT_LE(0, afd);
	keep(self, afd);
	ASSERT_EQ(0, mkdir(strcat(strcpy((char[128]){ 0 }, self->dir), "/state"), 0755));
	ASSERT_EQ(0, gu_write_file(self->state, "0\tcc-relu\t4x\tzvc\n"));

	/* on a copy of the state file: keep saves the codec in use */
	snprintf(keep_state, sizeof(keep_state), "%s/state/keep", self->dir);
	ASSERT_EQ(0, gu_write_file(keep_state, "0\tcc-relu\t4x\tzvc\n"));
	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--apply=live", "--window=2", "--interval=20ms",
				"--codec=keep", "--state-file", keep_state, NULL));
	ASSERT_EQ(0, buddy_alloc_stat(afd, &before));
	EXPECT_EQ(BUDDY_CODEC_BPC, before.codec);
	EXPECT_EQ(NULL, strstr(err, " zvc (the profile's codec"));
	free(out);
	free(err);

	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--apply=live", "--window=2", "--interval=20ms",
				NULL));
	snprintf(want, sizeof(want),
		 "buddyd: retarget allocation %llu (uid=0 label=\"cc-relu\"",
		 (unsigned long long)id);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
	snprintf(want, sizeof(want), "%s bpc -> 4x zvc in ",
		 buddy_target_name(before.target));
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("missing: %s", want);
	ASSERT_EQ(0, buddy_alloc_stat(afd, &st));
	EXPECT_EQ(BUDDY_CODEC_ZVC, st.codec);
	EXPECT_EQ(BUDDY_TARGET_4X, st.target);
	EXPECT_LT(st.device_bytes, before.device_bytes);
	ASSERT_EQ((ssize_t)size, buddy_pread(afd, back, size, 0));
	EXPECT_EQ(0, memcmp(back, x, size));
	/* the profile keeps its codec */
	{
		struct buddy_profile_entry pe;

		EXPECT_EQ(0, kernel_profile(self->fd, 0, "cc-relu", &pe, NULL));
		EXPECT_EQ(BUDDY_CODEC_ZVC, pe.codec);
	}
	free(out);
	free(err);
	free(back);
	free(x);
}

/* ---- non-root ------------------------------------------------------------- */

TEST_F_TIMEOUT(bd, non_root_gets_eperm, 60)
{
	struct buddy_profile_entry e = { .uid = 0, .target = 64, .label = "x" };
	char *out, *err, op[160], ep[160];
	uint64_t id;
	int st, afd;
	pid_t pid;

	SETUP_DONE();
	afd = buddy_alloc_simple(self->fd, 4096, BUDDY_TARGET_1X, 0, "mine", &id);
	ASSERT_LE(0, afd);
	keep(self, afd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct buddy_alloc_stat s[2];
		struct buddy_profile_entry g[2];
		unsigned int cnt, n;
		uint8_t codes[4];
		uint64_t total;
		int bad = 0;

		if (become_nobody())
			_exit(100);
		/* the descriptor root opened: admin calls still need the cap */
		bad |= (buddy_list(self->fd, 0, s, 2, &cnt, &total) != -EPERM) << 0;
		bad |= (buddy_set_target(self->fd, id, BUDDY_TARGET_2X, 0) != -EPERM) << 1;
		bad |= (buddy_profile_set(self->fd, &e, 1, 0) != -EPERM) << 2;
		bad |= (buddy_profile_set(self->fd, NULL, 0, BUDDY_PROFILE_REPLACE) != -EPERM) << 3;
		bad |= (buddy_profile_get(self->fd, g, 2, &n, NULL) != -EPERM) << 4;
		bad |= (buddy_stat_id(self->fd, id, s) != -EPERM) << 5;
		bad |= (buddy_get_map_id(self->fd, id, 0, 4, codes) != -EPERM) << 6;
		/* and cannot open the device itself (0660 root) */
		bad |= (buddy_open(NULL) != -EACCES) << 7;
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("calls that did not fail with EPERM: mask %#x",
					   WEXITSTATUS(st));
	/* the allocation was not touched */
	{
		struct buddy_alloc_stat s;

		ASSERT_EQ(0, buddy_alloc_stat(afd, &s));
		EXPECT_EQ(BUDDY_TARGET_1X, s.target);
		EXPECT_EQ(-ENOENT, kernel_profile(self->fd, 0, "x", NULL, NULL));
	}

	/* buddyd itself, unprivileged: explicit errors, exit status 1 */
	ASSERT_EQ(0, chmod(self->dir, 0777));	/* its output files */
	for (int round = 0; round < 2; round++) {
		snprintf(op, sizeof(op), "%s/out.nobody%d", self->dir, round);
		snprintf(ep, sizeof(ep), "%s/err.nobody%d", self->dir, round);
		if (round)
			ASSERT_EQ(0, chmod(BUDDY_DEV_PATH, 0666));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			char *argv[] = { (char *)gu_buddyd(), "--config",
					 self->conf, "--once", "--dry-run",
					 "--window=1", NULL };
			pid_t p;

			if (become_nobody())
				_exit(100);
			p = gu_spawn(argv, NULL, op, ep);
			_exit(p < 0 ? 101 : gu_wait(p, 30000));
		}
		waitpid(pid, &st, 0);
		chmod(BUDDY_DEV_PATH, 0660);
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(1, WEXITSTATUS(st));
		err = gu_read_file(ep);
		show("buddyd (uid 65534)", err);
		EXPECT_NE(NULL, strstr(err, round ?
			"buddyd: error: BUDDY_IOC_LIST: Operation not permitted: buddyd needs CAP_SYS_ADMIN" :
			"buddyd: error: /dev/buddy: Permission denied: buddyd must run as root"))
			TH_LOG("%s", err);
		free(err);
	}
	/* and without the module's device node */
	EXPECT_EQ(1, run_buddyd(_metadata, self, &out, &err, "--once",
				"--device=/dev/no-buddy-here", NULL));
	EXPECT_NE(NULL, strstr(err, "buddyd: error: /dev/no-buddy-here: No such file or directory: is buddy.ko loaded?"));
	free(out);
	free(err);
}

/* ---- sd_notify ------------------------------------------------------------ */

/* A datagram socket for NOTIFY_SOCKET: abstract when @abstract. */
static int notify_socket(char *name, size_t len, bool abstract, int n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t salen;
	int fd;

	snprintf(name, len, "%s/tmp/buddyd-notify-%d-%d", abstract ? "@" : "",
		 getpid(), n);
	if (!abstract)
		unlink(name);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strncpy(sa.sun_path, name, sizeof(sa.sun_path) - 1);
	salen = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	if (abstract)
		sa.sun_path[0] = 0;
	else
		salen++;
	if (bind(fd, (struct sockaddr *)&sa, salen)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Wait up to @ms for a message containing @needle; the message in @buf. */
static bool wait_notify(int fd, const char *needle, char *buf, size_t len,
			int ms)
{
	uint64_t end = gu_ms() + ms;

	while (gu_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, end - gu_ms() > 0 ? (int)(end - gu_ms()) : 0) <= 0)
			continue;
		n = recv(fd, buf, len - 1, 0);
		if (n < 0)
			continue;
		buf[n] = 0;
		printf("# notify: %s\n", buf);
		if (strstr(buf, needle))
			return true;
	}
	return false;
}

/* Start buddyd with NOTIFY_SOCKET, expect READY=1, SIGTERM it. */
static void ready_and_sigterm(struct __test_metadata *_metadata,
			      FIXTURE_DATA(bd) *self, bool abstract)
{
	char name[108], env[128], buf[512], op[160], ep[160], *err;
	char *argv[] = { (char *)gu_buddyd(), "--config", self->conf,
			 "--state-file", self->state, "--interval=50ms",
			 "--window=2", NULL };
	char *envv[] = { env, NULL };
	struct buddy_profile_entry e;
	int nfd, rc;
	pid_t pid;

	clear_profiles(self->fd);
	nfd = notify_socket(name, sizeof(name), abstract, abstract);
	ASSERT_LE(0, nfd) TH_LOG("%s: %s", name, strerror(-nfd));
	TH_LOG("NOTIFY_SOCKET=%s", name);
	snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", name);
	snprintf(op, sizeof(op), "%s/out.notify%d", self->dir, abstract);
	snprintf(ep, sizeof(ep), "%s/err.notify%d", self->dir, abstract);
	pid = gu_spawn(argv, envv, op, ep);
	ASSERT_LT(0, pid);
	EXPECT_TRUE(wait_notify(nfd, "READY=1", buf, sizeof(buf), 20000));
	/* READY=1 comes after the state file was installed */
	EXPECT_EQ(0, kernel_profile(self->fd, 0, "from-state", &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_4X, e.target);
	usleep(200000);		/* a few snapshots */
	EXPECT_EQ(0, kill(pid, SIGTERM));
	EXPECT_TRUE(wait_notify(nfd, "STOPPING=1", buf, sizeof(buf), 20000));
	rc = gu_wait(pid, 20000);
	EXPECT_EQ(0, rc) TH_LOG("buddyd exit status after SIGTERM");
	err = gu_read_file(ep);
	show("buddyd", err);
	EXPECT_NE(NULL, strstr(err, "buddyd: Terminated: exiting"));
	free(err);
	close(nfd);
	if (!abstract)
		unlink(name);
}

TEST_F_TIMEOUT(bd, ready_after_profiles_and_clean_sigterm, 60)
{
	SETUP_DONE();
	ASSERT_EQ(0, mkdir(strcat(strcpy((char[128]){ 0 }, self->dir), "/state"), 0755));
	ASSERT_EQ(0, gu_write_file(self->state, "0\tfrom-state\t4x\tbpc\n"));
	ready_and_sigterm(_metadata, self, true);	/* "@name" */
	ready_and_sigterm(_metadata, self, false);	/* "/tmp/name" */
}

/* ---- SIGHUP ------------------------------------------------------------- */

TEST_F_TIMEOUT(bd, sighup_reload_picks_up_dropins, 120)
{
	char name[108], env[128], buf[512], op[160], ep[160], dd[160], p[200];
	struct buddy_profile_entry e;
	unsigned long long mono = 0;
	uint64_t before_us, end;
	char *err, *s;
	int nfd, afd, rc;
	pid_t pid;

	SETUP_DONE();
	/* 20% over at 4x: 4x at a 30% threshold, 1x at 10% */
	afd = make_alloc(_metadata, self->fd, "reload-me", BUDDY_CODEC_BPC,
			 BUDDY_TARGET_1X, MIX(0, 0, 800, 0, 0, 200), 61, NULL,
			 NULL);
	ASSERT_LE(0, afd);
	keep(self, afd);
	ASSERT_EQ(0, gu_write_file(self->conf,
		"[Buddyd]\nThreshold=30%\nWindow=2\nInterval=50ms\n"));
	snprintf(dd, sizeof(dd), "%s.d", self->conf);
	ASSERT_EQ(0, mkdir(dd, 0755));
	nfd = notify_socket(name, sizeof(name), true, 2);
	ASSERT_LE(0, nfd);
	snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", name);
	{
		char *argv[] = { (char *)gu_buddyd(), "--config", self->conf,
				 "--state-file", self->state, NULL };
		char *envv[] = { env, NULL };

		snprintf(op, sizeof(op), "%s/out.hup", self->dir);
		snprintf(ep, sizeof(ep), "%s/err.hup", self->dir);
		pid = gu_spawn(argv, envv, op, ep);
		ASSERT_LT(0, pid);
	}
	ASSERT_TRUE(wait_notify(nfd, "READY=1", buf, sizeof(buf), 20000));
	for (end = gu_ms() + 20000; gu_ms() < end; usleep(20000))
		if (!kernel_profile(self->fd, 0, "reload-me", &e, NULL))
			break;
	ASSERT_EQ(0, kernel_profile(self->fd, 0, "reload-me", &e, NULL));
	EXPECT_EQ(BUDDY_TARGET_4X, e.target);

	/* two drop-ins: 50-b.conf is read after 10-a.conf and wins */
	snprintf(p, sizeof(p), "%s/10-a.conf", dd);
	ASSERT_EQ(0, gu_write_file(p, "[Buddyd]\nThreshold=40%\n"));
	snprintf(p, sizeof(p), "%s/50-b.conf", dd);
	ASSERT_EQ(0, gu_write_file(p, "[Buddyd]\nThreshold=10%\n"));
	before_us = gu_ms() * 1000;
	ASSERT_EQ(0, kill(pid, SIGHUP));
	ASSERT_TRUE(wait_notify(nfd, "RELOADING=1", buf, sizeof(buf), 20000));
	s = strstr(buf, "MONOTONIC_USEC=");
	ASSERT_NE(NULL, s) TH_LOG("RELOADING=1 without MONOTONIC_USEC=: %s", buf);
	mono = strtoull(s + 15, NULL, 10);
	EXPECT_LE(before_us, mono + 1000);
	EXPECT_GE(gu_ms() * 1000 + 1000, mono);
	EXPECT_TRUE(wait_notify(nfd, "READY=1", buf, sizeof(buf), 20000));
	for (end = gu_ms() + 20000; gu_ms() < end; usleep(20000))
		if (!kernel_profile(self->fd, 0, "reload-me", &e, NULL) &&
		    e.target == BUDDY_TARGET_1X)
			break;
	EXPECT_EQ(BUDDY_TARGET_1X, e.target);
	kill(pid, SIGTERM);
	rc = gu_wait(pid, 20000);
	EXPECT_EQ(0, rc);
	err = gu_read_file(ep);
	show("buddyd", err);
	EXPECT_NE(NULL, strstr(err, "buddyd: reloaded: threshold 10%, mostly-zero 90%, interval 50ms, window 2"));
	EXPECT_NE(NULL, strstr(err, "profile uid=0 label=\"reload-me\": 1x bpc (was 4x)"));
	free(err);
	err = gu_read_file(self->state);
	EXPECT_NE(NULL, strstr(err, "\n0\treload-me\t1x\tbpc\n")) TH_LOG("%s", err);
	free(err);
	close(nfd);
}

/* ---- the report ------------------------------------------------------------ */

#define NEAR(a, b)	((a) - (b) < 1e-3 && (b) - (a) < 1e-3)

TEST_F_TIMEOUT(bd, report_figures_match_hand_computation, 60)
{
	struct json_object *root, *o, *arr, *v;
	char *out, *err;

	SETUP_DONE();
	/* zeros (16x; 4x without the 16x rule), C8 (4x), random (1x) */
	keep(self, make_alloc(_metadata, self->fd, "r-zero", BUDDY_CODEC_BPC,
			      BUDDY_TARGET_1X, MIX(1000, 0, 0, 0, 0, 0), 71,
			      NULL, NULL));
	keep(self, make_alloc(_metadata, self->fd, "r-c8", BUDDY_CODEC_BPC,
			      BUDDY_TARGET_1X, MIX(0, 1000, 0, 0, 0, 0), 72,
			      NULL, NULL));
	keep(self, make_alloc(_metadata, self->fd, "r-rand", BUDDY_CODEC_BPC,
			      BUDDY_TARGET_1X, MIX(0, 0, 0, 0, 0, 1000), 73,
			      NULL, NULL));
	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--report", "--json", "--dry-run", "--window=4",
				"--interval=20ms", NULL));
	root = json_tokener_parse(out);
	ASSERT_NE(NULL, root) TH_LOG("not JSON: %s", out);
	/*
	 * Per snapshot 3000 entries storing 0 + 8000 + 128000 bytes: ideal
	 * 128 * 3000 / 136000 = 2.8235x; naive: the smallest t with
	 * 136000 <= 3000 t is 64 (2x), 1000 random entries over it (33.3%);
	 * per-allocation 4x, 4x, 1x = 192000 device bytes for 384000
	 * logical (2.0x, nothing over); +16x: 168000 (2.2857x); best (no
	 * threshold): random at 4x too, 72000 (5.3333x, 33.3% over).
	 */
	ASSERT_TRUE(json_object_object_get_ex(root, "fig7", &o));
	EXPECT_TRUE(NEAR(2.8235, jnum(o, "ideal_ratio")));
	EXPECT_STREQ("2x", jstr(o, "naive_target"));
	json_object_object_get_ex(o, "naive", &v);
	EXPECT_TRUE(NEAR(2.0, jnum(v, "ratio")));
	EXPECT_TRUE(NEAR(1.0 / 3, jnum(v, "buddy_frac")));
	json_object_object_get_ex(o, "per_allocation", &v);
	EXPECT_TRUE(NEAR(2.0, jnum(v, "ratio")));
	EXPECT_TRUE(NEAR(0.0, jnum(v, "buddy_frac")));
	json_object_object_get_ex(o, "plus_16x", &v);
	EXPECT_TRUE(NEAR(384000.0 / 168000, jnum(v, "ratio")));
	EXPECT_TRUE(NEAR(0.0, jnum(v, "buddy_frac")));

	ASSERT_TRUE(json_object_object_get_ex(root, "fig10", &arr));
	ASSERT_EQ(5, json_object_array_length(arr));
	for (int i = 0; i < 4; i++) {
		v = json_object_array_get_idx(arr, i);
		EXPECT_TRUE(NEAR(10.0 * (i + 1), jnum(v, "threshold_pct")));
		EXPECT_TRUE(NEAR(384000.0 / 168000, jnum(v, "ratio")));
	}
	v = json_object_array_get_idx(arr, 4);
	EXPECT_STREQ("true", jstr(v, "best"));
	EXPECT_TRUE(NEAR(384000.0 / 72000, jnum(v, "ratio")));
	EXPECT_TRUE(NEAR(1.0 / 3, jnum(v, "buddy_frac")));

	ASSERT_TRUE(json_object_object_get_ex(root, "fig9", &arr));
	ASSERT_EQ(4, json_object_array_length(arr));
	for (int i = 0; i < 4; i++) {
		v = json_object_array_get_idx(arr, i);
		EXPECT_EQ(3000, (int)jnum(v, "entries"));
		EXPECT_EQ(0, (int)jnum(v, "over"));
		EXPECT_EQ(i + 1, (int)jnum(v, "snapshot"));
	}
	json_object_put(root);
	free(out);
	free(err);

	/* the same as a table */
	ASSERT_EQ(0, run_buddyd(_metadata, self, &out, &err, "--once",
				"--report", "--dry-run", "--window=4",
				"--interval=20ms", NULL));
	show("report", out);
	EXPECT_NE(NULL, strstr(out, "Fig. 7: design optimizations"));
	EXPECT_NE(NULL, strstr(out, "naive (one target for the program) 2x        2.00x     33.33%"));
	EXPECT_NE(NULL, strstr(out, "+ 16x for mostly-zero (final)      -         2.29x      0.00%"));
	EXPECT_NE(NULL, strstr(out, "Fig. 10: Buddy Threshold sweep"));
	EXPECT_NE(NULL, strstr(out, "30% *"));
	EXPECT_NE(NULL, strstr(out, "best (none)     5.33x     33.33%"));
	EXPECT_NE(NULL, strstr(out, "Fig. 9: buddy-access fraction per snapshot"));
	free(out);
	free(err);
}

TEST_HARNESS_MAIN
