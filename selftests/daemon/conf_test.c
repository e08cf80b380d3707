// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's configuration (daemon/conf.c): value syntax, the ini file,
 * drop-in order and precedence, and what is an error and what a warning.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "daemon/conf.h"
#include "daemon/log.h"
#include "tools/common/timespan.h"

/* Messages bd_log() would print, collected. */
static char logbuf[8192];
static int nwarn, nerr;

static void hook(int prio, const char *msg)
{
	if (prio == LOG_WARNING)
		nwarn++;
	if (prio <= LOG_ERR)
		nerr++;
	strncat(logbuf, msg, sizeof(logbuf) - strlen(logbuf) - 2);
	strcat(logbuf, "\n");
}

static void log_reset(void)
{
	logbuf[0] = 0;
	nwarn = nerr = 0;
	bd_log_hook = hook;
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

FIXTURE(conf) {
	char dir[64];
	char path[128];
	char dropins[160];
	struct bd_conf c;
};

FIXTURE_SETUP(conf)
{
	strcpy(self->dir, "/tmp/buddyd-conf.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/buddyd.conf", self->dir);
	snprintf(self->dropins, sizeof(self->dropins), "%s.d", self->path);
	bd_conf_defaults(&self->c);
	log_reset();
}

FIXTURE_TEARDOWN(conf)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
	bd_log_hook = NULL;
}

TEST(percent)
{
	static const struct { const char *s; int err; uint32_t ppm; } v[] = {
		{ "30%", 0, 300000 }, { "30", 0, 300000 }, { "0", 0, 0 },
		{ "0%", 0, 0 }, { "100%", 0, 1000000 }, { "12.5%", 0, 125000 },
		{ "0.0001%", 0, 1 }, { "99.9999", 0, 999999 },
		{ "100.0", 0, 1000000 }, { "100.0001%", -EINVAL, 0 },
		{ "101", -EINVAL, 0 }, { "1000", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "%", -EINVAL, 0 },
		{ "30%%", -EINVAL, 0 }, { "3 0", -EINVAL, 0 },
		{ "0.00001", -EINVAL, 0 }, { "1.", -EINVAL, 0 },
		{ ".5", 0, 5000 }, { "abc", -EINVAL, 0 }, { "30 %", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t ppm = 0xdeadbeef;

		EXPECT_EQ(v[i].err, bd_parse_percent(v[i].s, &ppm))
			TH_LOG("'%s'", v[i].s);
		if (!v[i].err) {
			EXPECT_EQ(v[i].ppm, ppm) TH_LOG("'%s'", v[i].s);
		} else {
			EXPECT_EQ(0xdeadbeef, ppm) TH_LOG("'%s' changed the output", v[i].s);
		}
	}
}

TEST(percent_format_round_trip)
{
	static const uint32_t v[] = { 0, 1, 10, 5000, 125000, 300000, 999999,
				      1000000 };
	char buf[16];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint32_t back;

		bd_format_percent(v[i], buf, sizeof(buf));
		ASSERT_EQ(0, bd_parse_percent(buf, &back)) TH_LOG("%s", buf);
		EXPECT_EQ(v[i], back) TH_LOG("%s", buf);
	}
	EXPECT_STREQ("30%", bd_format_percent(300000, buf, sizeof(buf)));
	EXPECT_STREQ("12.5%", bd_format_percent(125000, buf, sizeof(buf)));
}

TEST(timespan)
{
	static const struct { const char *s; int err; uint64_t us; } v[] = {
		{ "10s", 0, 10000000 }, { "10", 0, 10000000 },
		{ "500ms", 0, 500000 }, { "1min", 0, 60000000 },
		{ "1m", 0, 60000000 }, { "2h", 0, 7200000000ULL },
		{ "1hr", 0, 3600000000ULL }, { "1sec", 0, 1000000 },
		{ "1min 30s", 0, 90000000 }, { "1min30s", 0, 90000000 },
		{ "1ms", 0, 1000 }, { "1000us", 0, 1000 }, { "24h", 0, 86400000000ULL },
		/* systemd.time(7): days, fractions, blanks between and inside */
		{ "1d", 0, 86400000000ULL }, { "1.5s", 0, 1500000 },
		{ "10 s", 0, 10000000 }, { "1min\t30s", 0, 90000000 },
		{ " 1 min  30 sec ", 0, 90000000 }, { "0.5h", 0, 1800000000ULL },
		{ "2.5ms", 0, 2500 }, { "1seconds", 0, 1000000 },
		{ "1minute", 0, 60000000 }, { "12hours", 0, 43200000000ULL },
		{ "1day", 0, 86400000000ULL }, { "1000usec", 0, 1000 },
		{ "5msec", 0, 5000 },
		{ "999us", -EINVAL, 0 }, { "0", -EINVAL, 0 }, { "0s", -EINVAL, 0 },
		{ "25h", -EINVAL, 0 }, { "1d 1s", -EINVAL, 0 }, { "1w", -EINVAL, 0 },
		{ "1M", -EINVAL, 0 }, { "", -EINVAL, 0 }, { " \t", -EINVAL, 0 },
		{ "s", -EINVAL, 0 }, { "-1s", -EINVAL, 0 }, { ".s", -EINVAL, 0 },
		{ "10 parsecs", -EINVAL, 0 }, { "1S", -EINVAL, 0 },
		{ "99999999999999999999s", -EINVAL, 0 },
		{ "18446744073709551615us", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t us = 7;

		EXPECT_EQ(v[i].err, bd_parse_timespan(v[i].s, &us))
			TH_LOG("'%s'", v[i].s);
		if (!v[i].err) {
			EXPECT_EQ(v[i].us, us) TH_LOG("'%s'", v[i].s);
		}
	}
}

/* The shared parser itself: every unit of systemd.time(7), no range. */
TEST(timespan_units)
{
	static const struct { const char *s; int err; uint64_t us; } v[] = {
		{ "1us", 0, 1 }, { "1\xc2\xb5s", 0, 1 }, { "1w", 0, 604800000000ULL },
		{ "2weeks", 0, 1209600000000ULL }, { "1M", 0, 2629800000000ULL },
		{ "1month", 0, 2629800000000ULL }, { "1y", 0, 31557600000000ULL },
		{ "1years", 0, 31557600000000ULL }, { "1y 12month", 0, 63115200000000ULL },
		{ "55s500ms", 0, 55500000 }, { "300ms20s 5day", 0, 432020300000ULL },
		{ "0", 0, 0 }, { "1.", 0, 1000000 },
		{ "1 2", 0, 3000000 }, { "1x", -EINVAL, 0 }, { "1 s s", -EINVAL, 0 },
		{ "999999999999y", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t us = 7;

		EXPECT_EQ(v[i].err, buddy_parse_timespan(v[i].s, &us))
			TH_LOG("'%s'", v[i].s);
		if (!v[i].err) {
			EXPECT_EQ(v[i].us, us) TH_LOG("'%s'", v[i].s);
		}
	}
}

TEST(timespan_format_round_trip)
{
	static const uint64_t v[] = { 1000, 20000, 100000, 1000000, 10000000,
				      90000000, 3723004005ULL };
	char buf[48];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t back;

		bd_format_timespan(v[i], buf, sizeof(buf));
		ASSERT_EQ(0, bd_parse_timespan(buf, &back)) TH_LOG("%s", buf);
		EXPECT_EQ(v[i], back) TH_LOG("%s", buf);
	}
	EXPECT_STREQ("10s", bd_format_timespan(10000000, buf, sizeof(buf)));
	EXPECT_STREQ("100ms", bd_format_timespan(100000, buf, sizeof(buf)));
}

TEST(window_and_mode)
{
	unsigned int w = 5;
	enum bd_mode m = BD_MODE_LIVE;

	EXPECT_EQ(0, bd_parse_window("1", &w));
	EXPECT_EQ(1, w);
	EXPECT_EQ(0, bd_parse_window("1000", &w));
	EXPECT_EQ(1000, w);
	EXPECT_EQ(-EINVAL, bd_parse_window("0", &w));
	EXPECT_EQ(-EINVAL, bd_parse_window("1001", &w));
	EXPECT_EQ(-EINVAL, bd_parse_window("-3", &w));
	EXPECT_EQ(-EINVAL, bd_parse_window("10x", &w));
	EXPECT_EQ(-EINVAL, bd_parse_window("", &w));
	EXPECT_EQ(1000, w);
	EXPECT_EQ(0, bd_parse_mode("dry-run", &m));
	EXPECT_EQ(BD_MODE_DRY_RUN, m);
	EXPECT_EQ(0, bd_parse_mode("profiles", &m));
	EXPECT_EQ(BD_MODE_PROFILES, m);
	EXPECT_EQ(0, bd_parse_mode("live", &m));
	EXPECT_EQ(BD_MODE_LIVE, m);
	EXPECT_EQ(-EINVAL, bd_parse_mode("Live", &m));
	EXPECT_EQ(-EINVAL, bd_parse_mode("none", &m));
	EXPECT_STREQ("live", bd_mode_name(m));
}

TEST_F(conf, defaults_without_any_file)
{
	struct bd_conf def;

	bd_conf_defaults(&def);
	EXPECT_EQ(300000, def.threshold_ppm);
	EXPECT_EQ(900000, def.zero_ppm);
	EXPECT_EQ(10000000, def.interval_us);
	EXPECT_EQ(10, def.window);
	EXPECT_EQ(BD_MODE_PROFILES, def.mode);
	EXPECT_STREQ("/var/lib/buddy/profiles", def.state_file);
	EXPECT_STREQ("/dev/buddy", def.device);
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, false));
	EXPECT_EQ(0, memcmp(&def, &self->c, sizeof(def)));
	EXPECT_EQ(-ENOENT, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(1, nerr);
}

TEST_F(conf, main_file)
{
	put(self->dir, "buddyd.conf",
	    "# buddyd\n"
	    "; also a comment\n"
	    "\n"
	    "[Buddyd]\n"
	    "Threshold = 20%\n"
	    "  MostlyZero=95\n"
	    "Interval=500ms\n"
	    "Window=5\n"
	    "Mode=live\n"
	    "StateFile=/tmp/some where/profiles\n"
	    "Device=/dev/buddy1\n");
	ASSERT_EQ(0, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(200000, self->c.threshold_ppm);
	EXPECT_EQ(950000, self->c.zero_ppm);
	EXPECT_EQ(500000, self->c.interval_us);
	EXPECT_EQ(5, self->c.window);
	EXPECT_EQ(BD_MODE_LIVE, self->c.mode);
	EXPECT_STREQ("/tmp/some where/profiles", self->c.state_file);
	EXPECT_STREQ("/dev/buddy1", self->c.device);
	EXPECT_EQ(0, nwarn + nerr) TH_LOG("%s", logbuf);
}

TEST_F(conf, dropins_override_in_lexical_order)
{
	ASSERT_EQ(0, mkdir(self->dropins, 0755));
	put(self->dir, "buddyd.conf",
	    "[Buddyd]\nThreshold=20%\nWindow=5\nMode=dry-run\n");
	/* strcmp order: 10-a < 20-b < 9-c; the last word wins */
	put(self->dropins, "20-b.conf", "[Buddyd]\nThreshold=40%\nWindow=7\n");
	put(self->dropins, "10-a.conf", "[Buddyd]\nThreshold=35%\nMostlyZero=80%\n");
	put(self->dropins, "9-c.conf", "[Buddyd]\nWindow=9\n");
	/* not drop-ins: wrong suffix, hidden, a directory */
	put(self->dropins, "99-x.conf.bak", "[Buddyd]\nWindow=99\n");
	put(self->dropins, ".99-hidden.conf", "[Buddyd]\nWindow=98\n");
	put(self->dropins, "README", "Window=97\n");
	{
		char d[256];

		snprintf(d, sizeof(d), "%s/zz.conf", self->dropins);
		ASSERT_EQ(0, mkdir(d, 0755));
	}
	ASSERT_EQ(0, bd_conf_load(&self->c, self->path, true)) TH_LOG("%s", logbuf);
	EXPECT_EQ(400000, self->c.threshold_ppm);	/* 20-b over 10-a over main */
	EXPECT_EQ(800000, self->c.zero_ppm);		/* only 10-a */
	EXPECT_EQ(9, self->c.window);			/* 9-c is last */
	EXPECT_EQ(BD_MODE_DRY_RUN, self->c.mode);	/* only main */

	{
		char **names;
		int n = bd_conf_dropins(self->dropins, &names);

		ASSERT_EQ(3, n);
		EXPECT_STREQ("10-a.conf", names[0]);
		EXPECT_STREQ("20-b.conf", names[1]);
		EXPECT_STREQ("9-c.conf", names[2]);
		bd_conf_free_names(names, n);
	}
}

TEST_F(conf, dropins_without_main_file)
{
	ASSERT_EQ(0, mkdir(self->dropins, 0755));
	put(self->dropins, "50-threshold.conf", "[Buddyd]\nThreshold=10%\n");
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, false));
	EXPECT_EQ(100000, self->c.threshold_ppm);
}

TEST_F(conf, command_line_after_files)
{
	/* buddyd applies its options with bd_conf_set() after loading */
	ASSERT_EQ(0, mkdir(self->dropins, 0755));
	put(self->dir, "buddyd.conf", "[Buddyd]\nThreshold=20%\n");
	put(self->dropins, "50.conf", "[Buddyd]\nThreshold=25%\n");
	ASSERT_EQ(0, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(250000, self->c.threshold_ppm);
	ASSERT_EQ(0, bd_conf_set(&self->c, "Threshold", "5%", "--threshold"));
	EXPECT_EQ(50000, self->c.threshold_ppm);
}

TEST_F(conf, empty_value_resets_to_default)
{
	ASSERT_EQ(0, mkdir(self->dropins, 0755));
	put(self->dir, "buddyd.conf",
	    "[Buddyd]\nThreshold=20%\nStateFile=/x\nMode=live\nInterval=1s\n");
	put(self->dropins, "50.conf",
	    "[Buddyd]\nThreshold=\nStateFile=\nMode=\nInterval=\n");
	ASSERT_EQ(0, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(300000, self->c.threshold_ppm);
	EXPECT_STREQ(BD_STATE_PATH, self->c.state_file);
	EXPECT_EQ(BD_MODE_PROFILES, self->c.mode);
	EXPECT_EQ(BD_DEF_INTERVAL_US, self->c.interval_us);
}

TEST_F(conf, unknown_keys_and_sections_warn)
{
	put(self->dir, "buddyd.conf",
	    "[Buddyd]\nThreshold=20%\nNoSuchKey=1\nthreshold=50%\n"
	    "[Other]\nThreshold=90%\nWhatever\n[Buddyd]\nWindow=3\n");
	/* "Whatever" in an ignored section is still not an assignment */
	EXPECT_EQ(-EINVAL, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(200000, self->c.threshold_ppm);	/* keys are case-sensitive */
	EXPECT_EQ(3, self->c.window);
	EXPECT_EQ(3, nwarn) TH_LOG("%s", logbuf);	/* 2 keys, 1 section */
	EXPECT_EQ(1, nerr) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "buddyd.conf:3: unknown key 'NoSuchKey'"))
		TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "buddyd.conf:4: unknown key 'threshold' in section [Buddyd], ignored: keys are case-sensitive, Threshold= is meant? In force: Threshold=20%"))
		TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "buddyd.conf:7: missing '='"))
		TH_LOG("%s", logbuf);
}

/* The warning says what is in force instead of the misspelt key. */
TEST_F(conf, unknown_key_names_the_value_in_force)
{
	put(self->dir, "buddyd.conf", "[Buddyd]\nthreshold=50%\nWindw=3\n");
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(2, nwarn) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "buddyd.conf:2: unknown key 'threshold' in section [Buddyd], ignored: keys are case-sensitive, Threshold= is meant? In force: Threshold=30%"))
		TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, "buddyd.conf:3: unknown key 'Windw' in section [Buddyd], ignored (keys: Threshold,"))
		TH_LOG("%s", logbuf);
}

/* buddyd --check-config: an unknown key is an error, the rest is read. */
TEST_F(conf, unknown_key_is_an_error_when_strict)
{
	put(self->dir, "buddyd.conf", "[Buddyd]\nthreshold=50%\nWindow=4\n");
	bd_conf_strict = true;
	EXPECT_EQ(-EINVAL, bd_conf_load(&self->c, self->path, true));
	bd_conf_strict = false;
	EXPECT_EQ(1, nerr) TH_LOG("%s", logbuf);
	EXPECT_EQ(0, nwarn) TH_LOG("%s", logbuf);
	EXPECT_EQ(4, self->c.window);
	EXPECT_EQ(300000, self->c.threshold_ppm);
}

/* A byte-order mark before "[Buddyd]" is skipped, not a bad section. */
TEST_F(conf, utf8_bom_is_skipped)
{
	put(self->dir, "buddyd.conf", "\xef\xbb\xbf[Buddyd]\nWindow=7\n");
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, true)) TH_LOG("%s", logbuf);
	EXPECT_EQ(7, self->c.window);
	EXPECT_EQ(0, nerr + nwarn) TH_LOG("%s", logbuf);
	/* only at the start of a file */
	log_reset();
	put(self->dir, "buddyd.conf", "[Buddyd]\n\xef\xbb\xbfWindow=7\n");
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(1, nwarn) TH_LOG("%s", logbuf);
}

/* What --check-config prints: a configuration file of what is in force. */
TEST(codec_key)
{
	struct bd_conf c;

	bd_conf_defaults(&c);
	EXPECT_FALSE(c.codec_keep);
	EXPECT_EQ(0, bd_conf_set(&c, "Codec", "keep", "t"));
	EXPECT_TRUE(c.codec_keep);
	EXPECT_EQ(-EINVAL, bd_conf_set(&c, "Codec", "zvc", "t"));
	EXPECT_TRUE(c.codec_keep);	/* unchanged on error */
	EXPECT_EQ(0, bd_conf_set(&c, "Codec", "", "t"));
	EXPECT_FALSE(c.codec_keep);
	EXPECT_EQ(0, bd_conf_set(&c, "Codec", "keep", "t"));
	EXPECT_EQ(0, bd_conf_set(&c, "Codec", "profile", "t"));
	EXPECT_FALSE(c.codec_keep);
}

TEST(print_effective)
{
	struct bd_conf c;
	char buf[1024] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	ASSERT_NE(NULL, f);
	bd_conf_defaults(&c);
	c.interval_us = 90000000;
	bd_conf_print(f, &c);
	fclose(f);
	EXPECT_STREQ("[Buddyd]\nThreshold=30%\nMostlyZero=90%\nInterval=1min30s\nWindow=10\nMode=profiles\nCodec=profile\nStateFile=/var/lib/buddy/profiles\nDevice=/dev/buddy\n", buf);
}

TEST_F(conf, bad_values_are_errors_naming_file_and_line)
{
	static const char *const bad[] = {
		"Threshold=130%", "MostlyZero=x", "Interval=0", "Window=0",
		"Mode=fast", "Interval=10 parsecs", "Codec=best",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128], want[160];
		struct bd_conf c;

		bd_conf_defaults(&c);
		log_reset();
		snprintf(text, sizeof(text), "[Buddyd]\nWindow=4\n%s\nThreshold=11%%\n",
			 bad[i]);
		put(self->dir, "buddyd.conf", text);
		EXPECT_EQ(-EINVAL, bd_conf_load(&c, self->path, true)) TH_LOG("%s", bad[i]);
		snprintf(want, sizeof(want), "buddyd.conf:3: invalid ");
		EXPECT_NE(NULL, strstr(logbuf, want)) TH_LOG("%s: %s", bad[i], logbuf);
		/* the other lines still apply */
		EXPECT_EQ(4, c.window);
		EXPECT_EQ(110000, c.threshold_ppm);
	}
}

TEST_F(conf, syntax_errors)
{
	put(self->dir, "buddyd.conf", "Threshold=20%\n[Buddyd\n[Buddyd]\nWindow=2\n");
	EXPECT_EQ(-EINVAL, bd_conf_load(&self->c, self->path, true));
	EXPECT_EQ(2, nerr) TH_LOG("%s", logbuf);
	EXPECT_NE(NULL, strstr(logbuf, ":1: assignment outside of any section"));
	EXPECT_NE(NULL, strstr(logbuf, ":2: invalid section header"));
	EXPECT_EQ(300000, self->c.threshold_ppm);
	EXPECT_EQ(2, self->c.window);
}

TEST_F(conf, error_in_a_dropin_still_reads_the_rest)
{
	ASSERT_EQ(0, mkdir(self->dropins, 0755));
	put(self->dropins, "10.conf", "[Buddyd]\nWindow=oops\n");
	put(self->dropins, "20.conf", "[Buddyd]\nWindow=6\n");
	EXPECT_EQ(-EINVAL, bd_conf_load(&self->c, self->path, false));
	EXPECT_EQ(6, self->c.window);
	EXPECT_NE(NULL, strstr(logbuf, "10.conf:2: invalid Window value 'oops'"))
		TH_LOG("%s", logbuf);
}

TEST_F(conf, set_leaves_config_alone_on_error)
{
	struct bd_conf before = self->c;

	EXPECT_EQ(-EINVAL, bd_conf_set(&self->c, "Threshold", "200%", "t"));
	EXPECT_EQ(-ENOENT, bd_conf_set(&self->c, "Nope", "1", "t"));
	EXPECT_EQ(0, memcmp(&before, &self->c, sizeof(before)));
}

TEST_F(conf, crlf_and_tabs)
{
	put(self->dir, "buddyd.conf", "[Buddyd]\r\n\tThreshold\t=\t15%\r\nWindow=8\r\n");
	EXPECT_EQ(0, bd_conf_load(&self->c, self->path, true)) TH_LOG("%s", logbuf);
	EXPECT_EQ(150000, self->c.threshold_ppm);
	EXPECT_EQ(8, self->c.window);
}

TEST_HARNESS_MAIN
