// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's report (daemon/report.c) on a hand-made window: the Fig. 7, 10
 * and 9 figures against values computed by hand, the table and the JSON,
 * and an empty window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kselftest_harness.h>
#include "daemon/report.h"
#include "tools/policy/heur_json.h"

static struct buddy_alloc_stat st(uint64_t id, const char *label, uint64_t n,
				  unsigned int code)
{
	struct buddy_alloc_stat s;

	memset(&s, 0, sizeof(s));
	s.id = id;
	strncpy(s.label, label, sizeof(s.label) - 1);
	s.size = n * BUDDY_ENTRY_SIZE;
	s.nr_entries = n;
	s.codes[code] = n;
	s.target = BUDDY_TARGET_1X;
	s.codec = BUDDY_CODEC_BPC;
	s.counters.entry_reads = 100;
	s.counters.buddy_accesses = 25;
	return s;
}

FIXTURE(rep) {
	struct bd_conf conf;
	struct buddy_info info;
	struct bd_window win;
	struct bd_decision d;
	struct bd_report r;
	char *text;
	size_t len;
};

FIXTURE_SETUP(rep)
{
	struct buddy_alloc_stat s[3] = {
		st(1, "r-zero", 1000, BUDDY_CODE_ZERO),
		st(2, "r-c8", 1000, BUDDY_CODE_C8),
		st(3, "r-rand", 1000, BUDDY_CODE_RAW),
	};
	struct buddy_heur_params p;

	bd_conf_defaults(&self->conf);
	memset(&self->info, 0, sizeof(self->info));
	self->info.device_bytes = 16 << 20;
	self->info.buddy_bytes = 48 << 20;
	ASSERT_EQ(0, bd_window_init(&self->win, 4));
	for (int k = 0; k < 4; k++) {
		bd_window_begin(&self->win, 1000000 + k * 20000);
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(0, bd_window_add(&self->win, &s[i]));
		bd_window_end(&self->win);
	}
	buddy_heur_default_params(&p);
	ASSERT_EQ(0, bd_decide(&self->win, &p, &self->d));
	self->r = (struct bd_report){ .conf = &self->conf, .info = &self->info,
				      .win = &self->win, .d = &self->d,
				      .interval_us = 20000 };
	self->text = NULL;
}

FIXTURE_TEARDOWN(rep)
{
	free(self->text);
	bd_decision_free(&self->d);
	bd_window_free(&self->win);
}

static double num(struct json_object *o, const char *path)
{
	char buf[128], *save, *k;
	struct json_object *v = o;

	strcpy(buf, path);
	for (k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(v, json_type_array))
			v = json_object_array_get_idx(v, atoi(k));
		else if (!json_object_object_get_ex(v, k, &v))
			return NAN;
	}
	return json_object_get_double(v);
}

#define NEAR(want, got) EXPECT_TRUE(fabs((want) - (got)) < 1e-3) \
	TH_LOG("want %f, got %f", (double)(want), (double)(got))

TEST_F(rep, json_figures)
{
	struct json_object *root;
	FILE *f = open_memstream(&self->text, &self->len);

	ASSERT_EQ(0, bd_report_json(f, &self->r));
	fclose(f);
	root = json_tokener_parse(self->text);
	ASSERT_NE(NULL, root) TH_LOG("%s", self->text);
	NEAR(30, num(root, "params.threshold_pct"));
	NEAR(4, num(root, "params.snapshots"));
	NEAR(20, num(root, "params.interval_ms"));
	/* 3000 entries, 136000 stored bytes per snapshot */
	NEAR(128.0 * 3000 / 136000, num(root, "fig7.ideal_ratio"));
	NEAR(2.0, num(root, "fig7.naive.ratio"));
	NEAR(1.0 / 3, num(root, "fig7.naive.buddy_frac"));
	NEAR(2.0, num(root, "fig7.per_allocation.ratio"));
	NEAR(384000.0 / 168000, num(root, "fig7.plus_16x.ratio"));
	NEAR(0, num(root, "fig7.plus_16x.buddy_frac"));
	for (int i = 0; i < 4; i++) {
		char k[32];

		snprintf(k, sizeof(k), "fig10.%d.threshold_pct", i);
		NEAR(10 * (i + 1), num(root, k));
		snprintf(k, sizeof(k), "fig10.%d.ratio", i);
		NEAR(384000.0 / 168000, num(root, k));
		snprintf(k, sizeof(k), "fig9.%d.entries", i);
		NEAR(3000, num(root, k));
		snprintf(k, sizeof(k), "fig9.%d.t_ms", i);
		NEAR(20 * i, num(root, k));
	}
	NEAR(384000.0 / 72000, num(root, "fig10.4.ratio"));
	/* best: zeros 16x, C8 and random 4x */
	NEAR(1, num(root, "fig10.4.by_target.16x"));
	NEAR(2, num(root, "fig10.4.by_target.4x"));
	NEAR(3, num(root, "decision.by_target.16x") +
		num(root, "decision.by_target.4x") +
		num(root, "decision.by_target.1x"));
	/* buddyd's keys of the previous release, as aliases */
	NEAR(1, num(root, "fig10.4.units_by_target.16x"));
	NEAR(0.3, num(root, "fig10.2.threshold"));
	NEAR(0.25, num(root, "units.0.measured_buddy_frac"));
	NEAR(0, num(root, "units.2.over_frac.1x"));
	NEAR(1, num(root, "units.2.over_frac.4x"));
	json_object_put(root);
}

/* The one schema of a heuristic result, and each producer's old keys. */
TEST(result_schema)
{
	static const char *const keys[] = {
		"ratio", "buddy_frac", "threshold", "logical_bytes",
		"device_bytes", "buddy_bytes", "steps", "by_target", "errno",
		"error_name",
	};
	struct buddy_heur_result res = {
		.err = -ENOSPC, .threshold_ppm = 300000, .logical_bytes = 4096,
		.device_bytes = 2048, .buddy_bytes = 2048, .ratio = 2,
		.buddy_frac = 0.25, .steps = 3,
		.nr_by_target = { 1, 2, 3, 4, 5 },
	};
	struct json_object *o, *v;
	int i = 0;

	o = buddy_heur_result_json(&res, BUDDY_HEUR_JSON_BUDDYD);
	json_object_object_foreach(o, k, val) {
		(void)val;
		if (i < 10)
			EXPECT_STREQ(keys[i], k);
		i++;
	}
	EXPECT_EQ(12, i);
	NEAR(0.3, num(o, "threshold"));
	NEAR(-ENOSPC, num(o, "errno"));
	NEAR(4, num(o, "by_target.4/3x"));
	NEAR(4, num(o, "units_by_target.4/3x"));
	ASSERT_TRUE(json_object_object_get_ex(o, "error_name", &v));
	EXPECT_STREQ("ENOSPC", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(o, "error", &v));
	EXPECT_STREQ("ENOSPC", json_object_get_string(v));
	json_object_put(o);

	res.err = 0;
	o = buddy_heur_result_json(&res, BUDDY_HEUR_JSON_PROFILER);
	NEAR(5, num(o, "allocations_by_target.1x"));
	ASSERT_TRUE(json_object_object_get_ex(o, "error", &v));
	EXPECT_TRUE(json_object_is_type(v, json_type_int));
	EXPECT_EQ(0, json_object_get_int(v));
	ASSERT_TRUE(json_object_object_get_ex(o, "error_name", &v));
	EXPECT_EQ(NULL, v);
	json_object_put(o);
}

TEST_F(rep, table)
{
	FILE *f = open_memstream(&self->text, &self->len);

	ASSERT_EQ(0, bd_report_text(f, &self->r));
	fclose(f);
	printf("%s", self->text);
	EXPECT_NE(NULL, strstr(self->text, "4 snapshots 20ms apart, Buddy Threshold 30%"));
	EXPECT_NE(NULL, strstr(self->text, "units: 3 decided"));
	EXPECT_NE(NULL, strstr(self->text, "     0 r-zero                    1      0.12 bpc   1x    16x    16x    yes    16.00x     0.00%    25.00%\n"));
	EXPECT_NE(NULL, strstr(self->text, "naive (one target for the program) 2x        2.00x     33.33%\n"));
	EXPECT_NE(NULL, strstr(self->text, "30% *           2.29x      0.00%     1     1     0     0     1      0\n"));
	EXPECT_NE(NULL, strstr(self->text, "       4     0.060         3000          0      0.00%\n"));
	/* no line ends in a blank */
	EXPECT_EQ(NULL, strstr(self->text, " \n"));
}

TEST_F(rep, empty_window)
{
	struct buddy_heur_params p;
	FILE *f;

	bd_decision_free(&self->d);
	bd_window_free(&self->win);
	ASSERT_EQ(0, bd_window_init(&self->win, 2));
	bd_window_begin(&self->win, 0);
	bd_window_end(&self->win);
	bd_window_begin(&self->win, 1);
	bd_window_end(&self->win);
	buddy_heur_default_params(&p);
	ASSERT_EQ(0, bd_decide(&self->win, &p, &self->d));
	EXPECT_EQ(0, self->d.n);
	f = open_memstream(&self->text, &self->len);
	ASSERT_EQ(0, bd_report_text(f, &self->r));
	ASSERT_EQ(0, bd_report_json(f, &self->r));
	fclose(f);
	EXPECT_NE(NULL, strstr(self->text, "units: 0 decided"));
	EXPECT_NE(NULL, strstr(self->text, "\"units\": [\n  ]")) TH_LOG("%s", self->text);
	EXPECT_NE(NULL, strstr(self->text, "\"fig9\": [\n    {\n      \"snapshot\": 1,"));
}

TEST_HARNESS_MAIN
