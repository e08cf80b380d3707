// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's state file: label escaping round trips for every byte and
 * hostile labels, line parsing (tools/policy/profile_file.c), the table, and
 * save/load (daemon/state.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "daemon/log.h"
#include "daemon/state.h"

static char logbuf[16384];
static int nwarn;

static void hook(int prio, const char *msg)
{
	if (prio == LOG_WARNING)
		nwarn++;
	strncat(logbuf, msg, sizeof(logbuf) - strlen(logbuf) - 2);
	strcat(logbuf, "\n");
}

/* Escape, check the alphabet of the result, unescape, compare. */
static void round_trip(struct __test_metadata *_metadata, const char *label)
{
	char esc[BUDDY_LABEL_ESC_MAX], back[BUDDY_LABEL_LEN];
	size_t n = buddy_label_escape(label, esc, sizeof(esc), false);

	ASSERT_EQ(strlen(esc), n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = esc[i];

		/* no TAB, newline, CR or non-ASCII in the file */
		EXPECT_TRUE(c >= 0x20 && c <= 0x7e) TH_LOG("byte %#x in '%s'", c, esc);
	}
	ASSERT_EQ(0, buddy_label_unescape(esc, n, back)) TH_LOG("'%s'", esc);
	EXPECT_STREQ(label, back);
	/* NUL-padded */
	for (size_t i = strlen(back); i < BUDDY_LABEL_LEN; i++) {
		EXPECT_EQ(0, back[i]);
	}
}

TEST(escape_known)
{
	static const struct { const char *in, *out; } v[] = {
		{ "", "" }, { "weights", "weights" }, { "a b", "a b" },
		{ "tab\there", "tab\\there" }, { "nl\n", "nl\\n" },
		{ "cr\r", "cr\\r" }, { "back\\slash", "back\\\\slash" },
		{ "\x01\x1f\x7f\x80\xff", "\\x01\\x1f\\x7f\\x80\\xff" },
		{ "#hash", "#hash" }, { "quote\"", "quote\"" },
		{ "\\x41", "\\\\x41" }, { "/", "/" },
	};
	char esc[BUDDY_LABEL_ESC_MAX];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		buddy_label_escape(v[i].in, esc, sizeof(esc), false);
		EXPECT_STREQ(v[i].out, esc);
	}
	buddy_label_escape("say \"hi\"", esc, sizeof(esc), true);
	EXPECT_STREQ("say \\x22hi\\x22", esc);
}

TEST(round_trip_every_byte)
{
	char label[BUDDY_LABEL_LEN];

	for (int c = 1; c < 256; c++) {
		memset(label, 0, sizeof(label));
		memset(label, c, BUDDY_LABEL_LEN - 1);	/* 31 times */
		round_trip(_metadata, label);
		label[1] = 0;
		round_trip(_metadata, label);
	}
}

TEST(round_trip_random_hostile)
{
	static const char *const hostile[] = {
		"\t", "\n", "\\", "\\\\", "\\t", "\\x", "\\x4", "\\xzz",
		"a\tb\tc\td", "#", " leading", "trailing ", "   ", "\r\n",
		"\xef\xbb\xbf" "bom", "\xc3\xa9t\xc3\xa9", "%s%n%p",
		"x\x1b[31mred", "'; DROP TABLE profiles;--", "../../etc/passwd",
		"1000\t0\t16x\tbpc", "\x7f", "0123456789012345678901234567890",
	};
	struct datagen_rng r;
	char label[BUDDY_LABEL_LEN];

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		round_trip(_metadata, hostile[i]);
	datagen_seed(&r, 42);
	for (int i = 0; i < 20000; i++) {
		unsigned int len = datagen_below(&r, BUDDY_LABEL_LEN);

		memset(label, 0, sizeof(label));
		for (unsigned int k = 0; k < len; k++)
			label[k] = 1 + datagen_below(&r, 255);
		round_trip(_metadata, label);
	}
}

TEST(unescape_errors)
{
	static const struct { const char *in; int err; } v[] = {
		{ "\\", -EINVAL }, { "a\\", -EINVAL }, { "\\q", -EINVAL },
		{ "\\x", -EINVAL }, { "\\x4", -EINVAL }, { "\\xg0", -EINVAL },
		{ "\\x00", -EINVAL }, { "\\X41", -EINVAL }, { "raw\ttab", -EINVAL },
		{ "raw\x80", -EINVAL }, { "\x7f", -EINVAL },
		{ "0123456789012345678901234567890", 0 },
		{ "01234567890123456789012345678901", -ENAMETOOLONG },
		{ "\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48\\x49\\x4a\\x4b\\x4c\\x4d\\x4e\\x4f\\x50"
		  "\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48\\x49\\x4a\\x4b\\x4c\\x4d\\x4e\\x4f", 0 },
		{ "\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48\\x49\\x4a\\x4b\\x4c\\x4d\\x4e\\x4f\\x50"
		  "\\x41\\x42\\x43\\x44\\x45\\x46\\x47\\x48\\x49\\x4a\\x4b\\x4c\\x4d\\x4e\\x4f\\x50",
		  -ENAMETOOLONG },
		{ "\\x4A\\x4a", 0 },
	};
	char label[BUDDY_LABEL_LEN];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		EXPECT_EQ(v[i].err, buddy_label_unescape(v[i].in,
							 strlen(v[i].in),
							 label)) TH_LOG("'%s'", v[i].in);
	}
	ASSERT_EQ(0, buddy_label_unescape("\\x4A\\x4a", 8, label));
	EXPECT_STREQ("JJ", label);
}

TEST(kernel_validity)
{
	EXPECT_TRUE(buddy_label_kernel_valid(""));
	EXPECT_TRUE(buddy_label_kernel_valid("resnet50 act #1 \\~"));
	EXPECT_FALSE(buddy_label_kernel_valid("a/b"));
	EXPECT_FALSE(buddy_label_kernel_valid("tab\t"));
	EXPECT_FALSE(buddy_label_kernel_valid("\x7f"));
	EXPECT_FALSE(buddy_label_kernel_valid("\xc3\xa9"));
}

TEST(parse_lines)
{
	struct buddy_profile_entry p;
	const char *why;

	EXPECT_EQ(0, buddy_profile_parse_line("", &p, &why));
	EXPECT_EQ(0, buddy_profile_parse_line("   ", &p, &why));
	EXPECT_EQ(0, buddy_profile_parse_line("# comment\twith\ttabs", &p, &why));
	EXPECT_EQ(0, buddy_profile_parse_line("  \t# indented", &p, &why));
	EXPECT_EQ(0, buddy_profile_parse_line("\r", &p, &why));

	ASSERT_EQ(1, buddy_profile_parse_line("1000\tweights\t2x\tbpc", &p, &why));
	EXPECT_EQ(1000, p.uid);
	EXPECT_STREQ("weights", p.label);
	EXPECT_EQ(BUDDY_TARGET_2X, p.target);
	EXPECT_EQ(BUDDY_CODEC_BPC, p.codec);

	/* spaces around uid/target/codec dropped, kept inside the label */
	ASSERT_EQ(1, buddy_profile_parse_line(" 7 \t a b \t 4/3x \t ZVC \r", &p, &why));
	EXPECT_EQ(7, p.uid);
	EXPECT_STREQ(" a b ", p.label);
	EXPECT_EQ(BUDDY_TARGET_4_3X, p.target);
	EXPECT_EQ(BUDDY_CODEC_ZVC, p.codec);

	ASSERT_EQ(1, buddy_profile_parse_line("0\t\t16\tdefault", &p, &why));
	EXPECT_STREQ("", p.label);
	EXPECT_EQ(BUDDY_TARGET_16X, p.target);
	EXPECT_EQ(BUDDY_CODEC_DEFAULT, p.codec);

	ASSERT_EQ(1, buddy_profile_parse_line("4294967294\t\\t#\\\\\t32B\tnone", &p, &why));
	EXPECT_EQ(4294967294u, p.uid);
	EXPECT_STREQ("\t#\\", p.label);
	EXPECT_EQ(BUDDY_TARGET_4X, p.target);

	static const char *const bad[] = {
		"1000 weights 2x bpc", "1000\tweights\t2x", "1000\tw\t2x\tbpc\textra",
		"x\tw\t2x\tbpc", "-1\tw\t2x\tbpc", "4294967295\tw\t2x\tbpc",
		"99999999999\tw\t2x\tbpc", "\tw\t2x\tbpc", "0\tw\tauto\tbpc",
		"0\tw\t3x\tbpc", "0\tw\t2x\tgzip", "0\tw\\q\t2x\tbpc",
		"0\t01234567890123456789012345678901\t2x\tbpc", "0\tw\t\tbpc",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		EXPECT_EQ(-EINVAL, buddy_profile_parse_line(bad[i], &p, &why)) TH_LOG("'%s'", bad[i]);
		EXPECT_NE(NULL, why);
	}
}

TEST(format_parse_round_trip)
{
	struct buddy_profile_entry p = { .uid = 65534,
					 .target = BUDDY_TARGET_4_3X,
					 .codec = BUDDY_CODEC_FPC }, q;
	char line[256];
	const char *why;
	size_t n;

	strcpy(p.label, "a\tb\nc\\d \x01\xff");
	n = buddy_profile_format_line(&p, line, sizeof(line));
	ASSERT_GT(n, 0);
	EXPECT_EQ('\n', line[n - 1]);
	EXPECT_EQ(NULL, memchr(line, '\n', n - 1));
	line[n - 1] = 0;
	EXPECT_STREQ("65534\ta\\tb\\nc\\\\d \\x01\\xff\t4/3x\tfpc", line);
	ASSERT_EQ(1, buddy_profile_parse_line(line, &q, &why));
	EXPECT_EQ(0, memcmp(&p, &q, sizeof(p)));
}

TEST(table_put_find)
{
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry p = { .uid = 1, .label = "x", .target = 64, .codec = 1 };

	EXPECT_EQ(1, buddy_profile_put(&t, &p));
	EXPECT_EQ(0, buddy_profile_put(&t, &p));		/* same: no change */
	p.target = 32;
	EXPECT_EQ(1, buddy_profile_put(&t, &p));		/* replaced */
	EXPECT_EQ(1, t.n);
	p.uid = 2;
	EXPECT_EQ(1, buddy_profile_put(&t, &p));		/* other uid: new */
	strcpy(p.label, "y");
	EXPECT_EQ(1, buddy_profile_put(&t, &p));
	EXPECT_EQ(3, t.n);
	ASSERT_NE(NULL, buddy_profile_find(&t, 1, "x"));
	EXPECT_EQ(32, buddy_profile_find(&t, 1, "x")->target);
	EXPECT_EQ(NULL, buddy_profile_find(&t, 1, "y"));
	EXPECT_EQ(NULL, buddy_profile_find(&t, 3, "x"));
	/* grows past its first capacity */
	for (int i = 0; i < 100; i++) {
		snprintf(p.label, sizeof(p.label), "l%d", i);
		EXPECT_EQ(1, buddy_profile_put(&t, &p));
	}
	EXPECT_EQ(103, t.n);
	buddy_profile_free(&t);
}

FIXTURE(file) {
	char dir[64];
	char path[128];
};

FIXTURE_SETUP(file)
{
	strcpy(self->dir, "/tmp/buddyd-state.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	/* a directory save must create */
	snprintf(self->path, sizeof(self->path), "%s/lib/profiles", self->dir);
	logbuf[0] = 0;
	nwarn = 0;
	bd_log_hook = hook;
}

FIXTURE_TEARDOWN(file)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
	bd_log_hook = NULL;
}

TEST_F(file, save_load_round_trip_hostile)
{
	struct buddy_profile_table t = { 0 }, u = { 0 };
	struct datagen_rng r;
	struct buddy_profile_entry p;
	char *text;
	FILE *f;
	long len;

	EXPECT_EQ(-ENOENT, bd_state_load(self->path, &u, NULL));
	datagen_seed(&r, 7);
	for (int i = 0; i < 500; i++) {
		unsigned int ll = 1 + datagen_below(&r, BUDDY_LABEL_LEN - 1);

		memset(&p, 0, sizeof(p));
		p.uid = i % 3 ? (uint32_t)datagen_next(&r) % 0xffffffffu : 0;
		for (unsigned int k = 0; k < ll; k++)
			p.label[k] = 1 + datagen_below(&r, 255);
		p.target = (unsigned int[]){ 8, 32, 64, 96, 128 }[i % 5];
		p.codec = i % BUDDY_CODEC_NR;
		ASSERT_LE(0, buddy_profile_put(&t, &p));
	}
	memset(&p, 0, sizeof(p));	/* and an empty label */
	p.target = 128;
	ASSERT_LE(0, buddy_profile_put(&t, &p));
	ASSERT_EQ(0, bd_state_save(self->path, &t));

	ASSERT_EQ(0, bd_state_load(self->path, &u, NULL));
	EXPECT_EQ(t.n, u.n);
	for (size_t i = 0; i < t.n; i++) {
		struct buddy_profile_entry *q = buddy_profile_find(&u, t.v[i].uid, t.v[i].label);

		ASSERT_NE(NULL, q) TH_LOG("entry %zu lost", i);
		EXPECT_EQ(t.v[i].target, q->target);
		EXPECT_EQ(t.v[i].codec, q->codec);
	}
	EXPECT_EQ(0, nwarn) TH_LOG("%s", logbuf);

	/* one line per profile, plus the comment header; no stray bytes */
	f = fopen(self->path, "r");
	ASSERT_NE(NULL, f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = malloc(len + 1);
	ASSERT_EQ(len, (long)fread(text, 1, len, f));
	text[len] = 0;
	fclose(f);
	{
		size_t lines = 0, comments = 0;

		for (char *s = text; *s; s = strchr(s, '\n') + 1) {
			lines++;
			comments += *s == '#';
			if (!strchr(s, '\n'))
				break;
		}
		EXPECT_EQ(t.n, lines - comments);
	}
	for (long i = 0; i < len; i++) {
		EXPECT_TRUE(text[i] == '\n' || text[i] == '\t' ||
			    (text[i] >= 0x20 && text[i] <= 0x7e));
	}
	free(text);
	buddy_profile_free(&t);
	buddy_profile_free(&u);
}

TEST_F(file, load_skips_bad_lines_and_later_lines_win)
{
	struct buddy_profile_table t = { 0 };
	unsigned int bad = 0;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/hand-edited", self->dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("# edited by hand\n"
	      "\n"
	      "0\tweights\t2x\tbpc\n"
	      "0\tbad\\q\t2x\tbpc\n"		/* 4: bad escape */
	      "1000\tspace label #1\t4x\tzvc\n"
	      "oops\n"				/* 6: fields */
	      "0\tweights\t4x\tbpc\n"		/* 7: replaces line 3 */
	      "0\t\\x41BC\t16x\tdefault\n"
	      "0\tauto\tauto\tbpc\n"		/* 9: target */
	      "0\tno newline at end\t1x\tnone", f);
	fclose(f);
	ASSERT_EQ(0, bd_state_load(path, &t, &bad));
	EXPECT_EQ(3, bad);
	EXPECT_EQ(4, t.n);
	ASSERT_NE(NULL, buddy_profile_find(&t, 0, "weights"));
	EXPECT_EQ(BUDDY_TARGET_4X, buddy_profile_find(&t, 0, "weights")->target);
	ASSERT_NE(NULL, buddy_profile_find(&t, 1000, "space label #1"));
	EXPECT_EQ(BUDDY_CODEC_ZVC, buddy_profile_find(&t, 1000, "space label #1")->codec);
	ASSERT_NE(NULL, buddy_profile_find(&t, 0, "ABC"));
	ASSERT_NE(NULL, buddy_profile_find(&t, 0, "no newline at end"));
	EXPECT_EQ(4, nwarn) TH_LOG("%s", logbuf);	/* 3 bad + 1 duplicate */
	EXPECT_NE(NULL, strstr(logbuf, "hand-edited:4: bad escape")) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "hand-edited:6: expected 4")) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "hand-edited:7: uid 0 label \"weights\" again"));
	EXPECT_NE(NULL, strstr(logbuf, "hand-edited:9: invalid target"));
	buddy_profile_free(&t);
}

TEST_F(file, save_is_atomic_and_sorted)
{
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry p = { .target = 64, .codec = 1 };
	char dir[128];

	p.uid = 5;
	strcpy(p.label, "b");
	buddy_profile_put(&t, &p);
	p.uid = 5;
	strcpy(p.label, "a");
	buddy_profile_put(&t, &p);
	p.uid = 1;
	strcpy(p.label, "z");
	buddy_profile_put(&t, &p);
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	{
		FILE *f = fopen(self->path, "r");
		char line[256], out[1024] = "";

		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f))
			if (line[0] != '#')
				strcat(out, line);
		fclose(f);
		EXPECT_STREQ("1\tz\t2x\tbpc\n5\ta\t2x\tbpc\n5\tb\t2x\tbpc\n", out);
	}
	/* no temporary left behind */
	snprintf(dir, sizeof(dir), "ls -a %s/lib | grep -c tmp >/dev/null", self->dir);
	EXPECT_NE(0, system(dir));
	buddy_profile_free(&t);
}

/* The whole of @path in @buf (NUL-terminated); its length, or -1. */
static long slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

/*
 * A hand-edited file: comments, blank lines, a bad line, a CRLF line, odd
 * spacing, a duplicate.  After a load and a save with one profile changed
 * and one added, every line is where it was: unchanged ones byte for byte,
 * the changed one rewritten on its line, the new one at the end.
 */
TEST_F(file, save_keeps_every_line_in_place)
{
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry p = { .uid = 0, .target = BUDDY_TARGET_16X,
					 .codec = BUDDY_CODEC_BPC };
	static const char in[] =
		"# my notes: weights compress well\n"
		"\n"
		"0\tweights\t2x\tbpc\n"
		"  0 \tspaced\t 4x \tzvc  \n"
		"0\tbad\\q\t2x\tbpc\n"
		"; not a comment to the parser either\n"
		"0\tcrlf\t1x\tnone\r\n"
		"# the next line is replaced by the later one\n"
		"0\tdup\t2x\tbpc\n"
		"0\tdup\t4x\tbpc\n"
		"0\tlast\t1x\tbpc";		/* no newline at the end */
	static const char want[] =
		"# my notes: weights compress well\n"
		"\n"
		"0\tweights\t16x\tbpc\n"	/* changed: written anew */
		"  0 \tspaced\t 4x \tzvc  \n"
		"0\tbad\\q\t2x\tbpc\n"
		"; not a comment to the parser either\n"
		"0\tcrlf\t1x\tnone\r\n"
		"# the next line is replaced by the later one\n"
		"0\tdup\t2x\tbpc\n"
		"0\tdup\t4x\tbpc\n"
		"0\tlast\t1x\tbpc\n"
		"0\tnew\t2x\tfpc\n";		/* added: at the end */
	char out[2048];
	unsigned int bad;

	snprintf(self->path, sizeof(self->path), "%s/edited", self->dir);
	spit(self->path, in);
	ASSERT_EQ(0, bd_state_load(self->path, &t, &bad));
	EXPECT_EQ(2, bad);	/* the bad escape and the ';' line */
	EXPECT_EQ(5, t.n);
	strcpy(p.label, "weights");
	EXPECT_EQ(1, buddy_profile_put(&t, &p));
	strcpy(p.label, "new");
	p.target = BUDDY_TARGET_2X;
	p.codec = BUDDY_CODEC_FPC;
	EXPECT_EQ(1, buddy_profile_put(&t, &p));
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_LT(0, slurp(self->path, out, sizeof(out)));
	EXPECT_STREQ(want, out);

	/* and it loads back to the same table */
	ASSERT_EQ(0, bd_state_load(self->path, &t, &bad));
	EXPECT_EQ(6, t.n);
	EXPECT_EQ(BUDDY_TARGET_16X, buddy_profile_find(&t, 0, "weights")->target);
	EXPECT_EQ(BUDDY_TARGET_4X, buddy_profile_find(&t, 0, "dup")->target);
	/* a second save without changes writes the same bytes */
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_LT(0, slurp(self->path, out, sizeof(out)));
	EXPECT_STREQ(want, out);
	buddy_profile_free(&t);
}

/* A byte-order mark is skipped (and kept on save), not a bad uid. */
TEST_F(file, utf8_bom_is_skipped)
{
	struct buddy_profile_table t = { 0 };
	char out[256];
	unsigned int bad = 9;

	snprintf(self->path, sizeof(self->path), "%s/bom", self->dir);
	spit(self->path, "\xef\xbb\xbf" "7\tw\t4x\tbpc\n");
	ASSERT_EQ(0, bd_state_load(self->path, &t, &bad));
	EXPECT_EQ(0, bad) TH_LOG("%s", logbuf);
	ASSERT_NE(NULL, buddy_profile_find(&t, 7, "w"));
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_LT(0, slurp(self->path, out, sizeof(out)));
	EXPECT_STREQ("\xef\xbb\xbf" "7\tw\t4x\tbpc\n", out);
	buddy_profile_free(&t);
}

/* The file's mode stays (0600 here); a new file follows the umask. */
TEST_F(file, save_keeps_the_mode)
{
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry p = { .uid = 1, .label = "x",
					 .target = BUDDY_TARGET_2X };
	struct stat st;
	mode_t old;

	ASSERT_EQ(1, buddy_profile_put(&t, &p));
	old = umask(022);
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, chmod(self->path, 0600));
	p.target = BUDDY_TARGET_4X;
	ASSERT_EQ(1, buddy_profile_put(&t, &p));
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0600, st.st_mode & 07777);
	ASSERT_EQ(0, chmod(self->path, 0640));
	ASSERT_EQ(0, bd_state_save(self->path, &t));
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0640, st.st_mode & 07777);
	umask(old);
	buddy_profile_free(&t);
}

/* A symlink stays a symlink; its target gets the new content. */
TEST_F(file, save_writes_through_a_symlink)
{
	struct buddy_profile_table t = { 0 };
	struct buddy_profile_entry p = { .uid = 2, .label = "y",
					 .target = BUDDY_TARGET_4X };
	char real[192], link[192], dangling[192], out[1024];
	struct stat st;

	snprintf(real, sizeof(real), "%s/real", self->dir);
	snprintf(link, sizeof(link), "%s/link", self->dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", self->dir);
	spit(real, "# kept\n");
	ASSERT_EQ(0, symlink("real", link));	/* relative, as usual */
	ASSERT_EQ(0, bd_state_load(link, &t, NULL));
	ASSERT_EQ(1, buddy_profile_put(&t, &p));
	ASSERT_EQ(0, bd_state_save(link, &t));
	ASSERT_EQ(0, lstat(link, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	ASSERT_LT(0, slurp(real, out, sizeof(out)));
	EXPECT_STREQ("# kept\n2\ty\t4x\tdefault\n", out);
	/* a dangling link: its target is created */
	ASSERT_EQ(0, symlink("made", dangling));
	ASSERT_EQ(0, bd_state_save(dangling, &t));
	ASSERT_EQ(0, lstat(dangling, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	snprintf(real, sizeof(real), "%s/made", self->dir);
	ASSERT_EQ(0, stat(real, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	buddy_profile_free(&t);
}

/*
 * One rule with buddyctl load-profiles (profile_file.h): the first 4096
 * profiles are loaded, the lines past them are reported once with the
 * first one's number, and a later line for a loaded profile still wins.
 * 100000 lines, as in the report of the quadratic loader.
 */
TEST_F(file, more_than_4096_profiles)
{
	struct buddy_profile_table t = { 0 };
	unsigned int bad = 9;
	FILE *f;

	snprintf(self->path, sizeof(self->path), "%s/big", self->dir);
	f = fopen(self->path, "w");
	ASSERT_NE(NULL, f);
	fputs("# big\n", f);
	for (int i = 0; i < 100000; i++)
		fprintf(f, "%d\tl%d\t2x\tbpc\n", i % 7, i);
	fputs("0\tl0\t16x\tzvc\n", f);	/* replaces the first */
	fclose(f);
	ASSERT_EQ(0, bd_state_load(self->path, &t, &bad));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(BUDDY_PROFILE_MAX, t.n);
	EXPECT_NE(NULL, buddy_profile_find(&t, 4095 % 7, "l4095"));
	EXPECT_EQ(NULL, buddy_profile_find(&t, 4096 % 7, "l4096"));
	ASSERT_NE(NULL, buddy_profile_find(&t, 0, "l0"));
	EXPECT_EQ(BUDDY_TARGET_16X, buddy_profile_find(&t, 0, "l0")->target);
	EXPECT_NE(NULL, strstr(logbuf, "big:4098: more than 4096 profiles")) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "95903 later profile lines not loaded")) TH_LOG("%s", logbuf);
	buddy_profile_free(&t);
}

TEST_HARNESS_MAIN
