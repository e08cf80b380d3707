// SPDX-License-Identifier: GPL-2.0
/*
 * buddyd's per-label codec choice (daemon/window.c: bd_choose_codecs(),
 * bd_plan_live(), the window's restart on a codec change), end to end on
 * libbuddy's in-process device, which is built from the same core/ as
 * buddy.ko: sparse ReLU data allocated as BPC, whose profile names ZVC,
 * gets ZVC through SET_TARGET exactly as buddyd issues it, and its data
 * reads back intact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kselftest_harness.h>
#include "tools/common/datagen.h"
#include "lib/libbuddy.h"
#include "tools/policy/profile_file.h"
#include "daemon/window.h"

#define MIB	(1024 * 1024)
#define W	3

/* One snapshot of every live allocation into @w, as buddyd takes it. */
static int snapshot(int devfd, struct bd_window *w, struct buddy_alloc_stat *st,
		    size_t cap, size_t *n)
{
	unsigned int cnt;
	uint64_t total;
	int r = buddy_list(devfd, 0, st, cap, &cnt, &total);

	if (r)
		return r;
	bd_window_begin(w, w->seq * 1000);
	for (unsigned int i = 0; i < cnt; i++) {
		r = bd_window_add(w, &st[i]);
		if (r)
			return r;
	}
	bd_window_end(w);
	*n = cnt;
	return 0;
}

/* Bytes the codes of @st stand for (0, 8, 32, 64, 96, 128 per entry). */
static uint64_t coded_bytes(const struct buddy_alloc_stat *st)
{
	static const unsigned int b[BUDDY_CODE_NR] = { 0, 8, 32, 64, 96, 128 };
	uint64_t s = 0;

	for (int c = 0; c < BUDDY_CODE_NR; c++)
		s += st->codes[c] * b[c];
	return s;
}

FIXTURE(cc) {
	int devfd;
	int afd;
	uint64_t id;
	uint64_t size;
	uint8_t *data;
	struct bd_window win;
	struct buddy_profile_table prof;
	struct buddy_alloc_stat st[8];
	struct buddy_heur_params p;
};

FIXTURE_SETUP(cc)
{
	struct buddy_profile_entry e;
	char line[96];
	const char *why;

	memset(&self->prof, 0, sizeof(self->prof));
	self->devfd = buddy_open_inproc("device_mb=8,max_ratio=4,chunk_kb=64");
	ASSERT_LE(0, self->devfd);
	self->size = 1 * MIB;
	self->data = malloc(self->size);
	ASSERT_NE(NULL, self->data);
	/* ReLU output, 90% zeros: ZVC's case, hard for BPC's bit planes */
	datagen_fill(DATAGEN_RELU90, 7, self->data, self->size);
	self->afd = buddy_alloc_simple(self->devfd, self->size, BUDDY_TARGET_2X,
				       BUDDY_CODEC_BPC, "relu", &self->id);
	ASSERT_LE(0, self->afd);
	ASSERT_EQ((ssize_t)self->size,
		  buddy_pwrite(self->afd, self->data, self->size, 0));
	ASSERT_EQ(0, bd_window_init(&self->win, W));
	buddy_heur_default_params(&self->p);
	/* the profile `buddyctl profile -p` writes for such a label */
	snprintf(line, sizeof(line), "%u\trelu\t4x\tzvc", (unsigned int)getuid());
	ASSERT_EQ(1, buddy_profile_parse_line(line, &e, &why));
	ASSERT_EQ(1, buddy_profile_put(&self->prof, &e));
}

FIXTURE_TEARDOWN(cc)
{
	bd_window_free(&self->win);
	buddy_profile_free(&self->prof);
	free(self->data);
	buddy_close(self->afd);
	buddy_close(self->devfd);
}

/* Decide on a full window and carry out the moves as buddyd's act_live(). */
static size_t decide_and_move(struct __test_metadata *_metadata,
			      FIXTURE_DATA(cc) *self, bool codec_keep,
			      size_t *chosen)
{
	struct bd_move mv[8];
	struct bd_decision d;
	size_t n = 0, m;

	for (int s = 0; s < W; s++)
		EXPECT_EQ(0, snapshot(self->devfd, &self->win, self->st, 8, &n));
	EXPECT_EQ(0, bd_decide(&self->win, &self->p, &d));
	EXPECT_EQ(1, d.n);
	*chosen = codec_keep ? 0 : bd_choose_codecs(&self->win, &d, &self->prof);
	m = bd_plan_live(&self->win, &d, self->st, n, mv);
	for (size_t i = 0; i < m; i++)
		EXPECT_EQ(0, buddy_set_target(self->devfd, mv[i].id, mv[i].to,
					      mv[i].codec));
	bd_decision_free(&d);
	return m;
}

TEST_F(cc, relu_data_as_bpc_gets_the_profiles_zvc)
{
	struct buddy_alloc_stat before, after;
	uint8_t *back = malloc(self->size);
	size_t chosen;
	long k;

	ASSERT_NE(NULL, back);
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &before));
	ASSERT_EQ(BUDDY_CODEC_BPC, before.codec);

	EXPECT_EQ(1, decide_and_move(_metadata, self, false, &chosen));
	EXPECT_EQ(1, chosen);
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &after));
	/* the codec and target the profile names, re-encoded */
	EXPECT_EQ(BUDDY_CODEC_ZVC, after.codec);
	EXPECT_EQ(BUDDY_TARGET_4X, after.target);
	/* and it was worth it: ZVC stores this data in far fewer bytes */
	EXPECT_LT(coded_bytes(&after) * 3, coded_bytes(&before) * 2)
		TH_LOG("zvc %llu bytes, bpc %llu", (unsigned long long)
		       coded_bytes(&after), (unsigned long long)coded_bytes(&before));
	EXPECT_LT(after.device_bytes, before.device_bytes);
	ASSERT_EQ((ssize_t)self->size,
		  buddy_pread(self->afd, back, self->size, 0));
	EXPECT_EQ(0, memcmp(back, self->data, self->size));

	/* the unit's BPC rows are gone: pending until W snapshots of ZVC */
	{
		size_t n;

		ASSERT_EQ(0, snapshot(self->devfd, &self->win, self->st, 8, &n));
		k = bd_window_find(&self->win, getuid(), "relu", 0);
		ASSERT_LE(0, k);
		EXPECT_EQ(1, bd_key_present(&self->win, &self->win.keys[k]));
		EXPECT_FALSE(bd_key_ready(&self->win, &self->win.keys[k]));
		EXPECT_EQ(BUDDY_CODEC_ZVC, self->win.keys[k].rows_codec);
	}
	/* once ready again: no codec move (it has the profile's codec) */
	{
		struct bd_move mv[8];
		struct bd_decision d;
		size_t n;

		for (int s = 0; s < W; s++)
			ASSERT_EQ(0, snapshot(self->devfd, &self->win, self->st,
					      8, &n));
		ASSERT_EQ(0, bd_decide(&self->win, &self->p, &d));
		ASSERT_EQ(1, d.n);
		EXPECT_EQ(0, bd_choose_codecs(&self->win, &d, &self->prof));
		for (size_t i = 0, m = bd_plan_live(&self->win, &d, self->st,
						   n, mv); i < m; i++)
			EXPECT_EQ(BUDDY_CODEC_DEFAULT, mv[i].codec);
		bd_decision_free(&d);
	}
	free(back);
}

TEST_F(cc, codec_keep_leaves_bpc)
{
	struct buddy_alloc_stat after;
	size_t chosen;

	decide_and_move(_metadata, self, true, &chosen);
	EXPECT_EQ(0, chosen);
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &after));
	EXPECT_EQ(BUDDY_CODEC_BPC, after.codec);
}

TEST_F(cc, profile_without_codec_or_other_label_keeps_bpc)
{
	struct buddy_profile_entry e;
	struct buddy_alloc_stat after;
	char line[96];
	const char *why;
	size_t chosen;

	/* "default" names no codec; another label's ZVC is not this one's */
	snprintf(line, sizeof(line), "%u\trelu\t4x\tdefault",
		 (unsigned int)getuid());
	ASSERT_EQ(1, buddy_profile_parse_line(line, &e, &why));
	ASSERT_EQ(1, buddy_profile_put(&self->prof, &e));
	snprintf(line, sizeof(line), "%u\trelu2\t4x\tzvc", (unsigned int)getuid());
	ASSERT_EQ(1, buddy_profile_parse_line(line, &e, &why));
	ASSERT_EQ(1, buddy_profile_put(&self->prof, &e));
	decide_and_move(_metadata, self, false, &chosen);
	EXPECT_EQ(0, chosen);
	ASSERT_EQ(0, buddy_alloc_stat(self->afd, &after));
	EXPECT_EQ(BUDDY_CODEC_BPC, after.codec);
}

TEST_HARNESS_MAIN
