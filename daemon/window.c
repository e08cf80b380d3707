// SPDX-License-Identifier: GPL-2.0
/*
 * window.c - snapshot windows per unit, and the decision on them (see
 * window.h for the rules).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/policy/profile_file.h"
#include "window.h"

int bd_window_init(struct bd_window *win, unsigned int w)
{
	memset(win, 0, sizeof(*win));
	if (!w)
		return -EINVAL;
	win->w = w;
	win->t_us = calloc(w, sizeof(*win->t_us));
	return win->t_us ? 0 : -ENOMEM;
}

static void key_free(struct bd_key *k)
{
	free(k->rows);
	free(k->size);
	free(k->members);
}

void bd_window_free(struct bd_window *win)
{
	for (size_t i = 0; i < win->n; i++)
		key_free(&win->keys[i]);
	free(win->keys);
	free(win->t_us);
	memset(win, 0, sizeof(*win));
}

static unsigned int cur_row(const struct bd_window *win)
{
	return (win->seq - 1) % win->w;
}

void bd_window_begin(struct bd_window *win, uint64_t t_us)
{
	unsigned int r;

	win->seq++;
	r = cur_row(win);
	win->t_us[r] = t_us;
	for (size_t i = 0; i < win->n; i++) {
		struct bd_key *k = &win->keys[i];

		memset(k->rows[r], 0, sizeof(k->rows[r]));
		k->size[r] = 0;
		k->members[r] = 0;
	}
}

long bd_window_find(const struct bd_window *win, uint32_t uid,
		    const char *label, uint64_t id)
{
	if (label[0])
		id = 0;
	for (size_t i = 0; i < win->n; i++) {
		const struct bd_key *k = &win->keys[i];

		if (k->uid == uid && k->id == id &&
		    !strncmp(k->label, label, BUDDY_LABEL_LEN))
			return i;
	}
	return -1;
}

long bd_window_find_stat(const struct bd_window *win,
			 const struct buddy_alloc_stat *st)
{
	char label[BUDDY_LABEL_LEN];

	memcpy(label, st->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN - 1] = 0;
	return bd_window_find(win, st->owner_uid, label, st->id);
}

static struct bd_key *key_new(struct bd_window *win, uint32_t uid,
			      const char *label, uint64_t id)
{
	struct bd_key *k;

	if (win->n == win->cap) {
		size_t cap = win->cap ? 2 * win->cap : 16;
		struct bd_key *v = realloc(win->keys, cap * sizeof(*v));

		if (!v)
			return NULL;
		win->keys = v;
		win->cap = cap;
	}
	k = &win->keys[win->n];
	memset(k, 0, sizeof(*k));
	k->rows = calloc(win->w, sizeof(*k->rows));
	k->size = calloc(win->w, sizeof(*k->size));
	k->members = calloc(win->w, sizeof(*k->members));
	if (!k->rows || !k->size || !k->members) {
		key_free(k);
		return NULL;
	}
	k->uid = uid;
	k->id = label[0] ? 0 : id;
	memcpy(k->label, label, strnlen(label, BUDDY_LABEL_LEN - 1));
	win->n++;
	return k;
}

int bd_window_add(struct bd_window *win, const struct buddy_alloc_stat *st)
{
	char label[BUDDY_LABEL_LEN];
	unsigned int r = cur_row(win);
	struct bd_key *k;
	long i;
	int t;

	memcpy(label, st->label, BUDDY_LABEL_LEN);
	label[BUDDY_LABEL_LEN - 1] = 0;
	i = bd_window_find(win, st->owner_uid, label, st->id);
	k = i >= 0 ? &win->keys[i] : key_new(win, st->owner_uid, label, st->id);
	if (!k)
		return -ENOMEM;
	if (k->cur_seq != win->seq) {
		k->cur_seq = win->seq;
		k->cur_size = 0;
		k->cur_members = 0;
		k->cur_device_bytes = k->cur_buddy_bytes = 0;
		memset(k->codec_entries, 0, sizeof(k->codec_entries));
		memset(&k->counters, 0, sizeof(k->counters));
		k->target_mask = 0;
	}
	for (unsigned int c = 0; c < BUDDY_CODE_NR; c++)
		k->rows[r][c] += st->codes[c];
	k->size[r] += st->size;
	k->members[r]++;
	k->cur_size += st->size;
	k->cur_members++;
	k->cur_device_bytes += st->device_bytes;
	k->cur_buddy_bytes += st->buddy_bytes;
	if (st->codec < BUDDY_CODEC_NR)
		k->codec_entries[st->codec] += st->nr_entries;
	t = buddy_heur_target_index(st->target);
	if (t >= 0)
		k->target_mask |= 1u << t;
	for (unsigned int c = 0; c < 8; c++)
		((uint64_t *)&k->counters)[c] +=
			((const uint64_t *)&st->counters)[c];
	return 0;
}

unsigned int bd_window_rows(const struct bd_window *win)
{
	return win->seq < win->w ? win->seq : win->w;
}

unsigned int bd_key_present(const struct bd_window *win, const struct bd_key *k)
{
	unsigned int n = 0;

	for (unsigned int r = 0; r < win->w; r++)
		n += !!k->members[r];
	return n;
}

bool bd_key_ready(const struct bd_window *win, const struct bd_key *k)
{
	return win->seq >= win->w && bd_key_present(win, k) == win->w;
}

/* Keep only the current row of @k (its codec changed). */
static void key_restart(struct bd_window *win, struct bd_key *k)
{
	unsigned int r = cur_row(win);

	for (unsigned int i = 0; i < win->w; i++) {
		if (i == r)
			continue;
		memset(k->rows[i], 0, sizeof(k->rows[i]));
		k->size[i] = 0;
		k->members[i] = 0;
	}
}

void bd_window_end(struct bd_window *win)
{
	size_t i = 0;

	while (i < win->n) {
		struct bd_key *k = &win->keys[i];

		if (bd_key_present(win, k)) {
			if (k->cur_seq == win->seq) {
				unsigned int c = bd_key_codec(k);

				if (k->rows_codec && k->rows_codec != c)
					key_restart(win, k);
				k->rows_codec = c;
			}
			i++;
			continue;
		}
		key_free(&win->keys[i]);
		memmove(&win->keys[i], &win->keys[i + 1],
			(win->n - i - 1) * sizeof(win->keys[0]));
		win->n--;
	}
}

/* Ring row of the i-th row in use, oldest first. */
static unsigned int row_of(const struct bd_window *win, unsigned int i)
{
	uint64_t s = win->seq - bd_window_rows(win) + 1 + i;	/* 1-based */

	return (s - 1) % win->w;
}

void bd_key_series(const struct bd_window *win, const struct bd_key *k,
		   uint64_t (*out)[BUDDY_CODE_NR])
{
	unsigned int n = bd_window_rows(win);

	for (unsigned int i = 0; i < n; i++)
		memcpy(out[i], k->rows[row_of(win, i)], sizeof(out[i]));
}

uint64_t bd_window_time(const struct bd_window *win, unsigned int i)
{
	return win->t_us[row_of(win, i)];
}

unsigned int bd_key_codec(const struct bd_key *k)
{
	unsigned int best = BUDDY_CODEC_BPC;
	uint64_t most = 0;

	for (unsigned int c = 1; c < BUDDY_CODEC_NR; c++) {
		if (k->codec_entries[c] > most) {
			most = k->codec_entries[c];
			best = c;
		}
	}
	return best;
}

void bd_decision_free(struct bd_decision *d)
{
	free(d->key);
	free(d->a);
	free(d->rows);
	free(d->ch);
	free(d->codec);
	free(d->codec_target);
	memset(d, 0, sizeof(*d));
}

static uint64_t less(uint64_t limit, uint64_t held)
{
	if (!limit)
		return 0;	/* unlimited */
	return limit > held ? limit - held : 1;
}

int bd_decide(const struct bd_window *win, const struct buddy_heur_params *p,
	      struct bd_decision *d)
{
	struct buddy_heur_params q = *p;
	size_t n = 0, j = 0;

	memset(d, 0, sizeof(*d));
	d->nr_rows = win->w;
	for (size_t i = 0; i < win->n; i++) {
		const struct bd_key *k = &win->keys[i];

		if (bd_key_ready(win, k)) {
			n++;
			continue;
		}
		d->pending++;
		if (k->cur_seq == win->seq) {
			d->pending_device += k->cur_device_bytes;
			d->pending_buddy += k->cur_buddy_bytes;
		}
	}
	d->n = n;
	if (n) {
		d->key = calloc(n, sizeof(*d->key));
		d->a = calloc(n, sizeof(*d->a));
		d->rows = calloc(n * win->w, sizeof(*d->rows));
		d->ch = calloc(n, sizeof(*d->ch));
		d->codec = calloc(n, sizeof(*d->codec));	/* DEFAULT: keep */
		d->codec_target = calloc(n, sizeof(*d->codec_target));
		if (!d->key || !d->a || !d->rows || !d->ch || !d->codec ||
		    !d->codec_target) {
			bd_decision_free(d);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < win->n; i++) {
		const struct bd_key *k = &win->keys[i];
		uint64_t (*rows)[BUDDY_CODE_NR];

		if (!bd_key_ready(win, k))
			continue;
		rows = d->rows + j * win->w;
		bd_key_series(win, k, rows);
		d->key[j] = i;
		d->a[j].label = k->label[0] ? k->label : NULL;
		d->a[j].size = k->cur_size;
		d->a[j].nr_snaps = win->w;
		d->a[j].hist = (const uint64_t (*)[BUDDY_CODE_NR])rows;
		j++;
	}
	q.pool_labels = false;
	q.device_bytes = less(p->device_bytes, d->pending_device);
	q.carveout_bytes = less(p->carveout_bytes, d->pending_buddy);
	d->params = q;
	d->err = buddy_heur_decide(&q, d->a, n, d->ch, &d->res);
	return 0;
}

size_t bd_choose_codecs(const struct bd_window *win, struct bd_decision *d,
			const struct buddy_profile_table *t)
{
	size_t m = 0;

	for (size_t u = 0; u < d->n; u++) {
		const struct bd_key *k = &win->keys[d->key[u]];
		const struct buddy_profile_entry *p;

		d->codec[u] = BUDDY_CODEC_DEFAULT;
		d->codec_target[u] = 0;
		if (!k->label[0] || !t)
			continue;
		p = buddy_profile_find(t, k->uid, k->label);
		if (!p || p->codec == BUDDY_CODEC_DEFAULT ||
		    p->codec >= BUDDY_CODEC_NR || p->codec == bd_key_codec(k) ||
		    buddy_heur_target_index(p->target) < 0)
			continue;
		d->codec[u] = p->codec;
		d->codec_target[u] = p->target;
		m++;
	}
	return m;
}

static int cmp_move(const void *x, const void *y)
{
	const struct bd_move *a = x, *b = y;
	bool ga = a->to < a->from, gb = b->to < b->from;	/* gives back */

	if (ga != gb)
		return ga ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

size_t bd_plan_live(const struct bd_window *win, const struct bd_decision *d,
		    const struct buddy_alloc_stat *st, size_t n,
		    struct bd_move *moves)
{
	size_t m = 0;

	if (d->err == -EINVAL || d->err == -EOVERFLOW)
		return 0;
	for (size_t i = 0; i < n; i++) {
		long k = bd_window_find_stat(win, &st[i]);

		if (k < 0)
			continue;
		for (size_t u = 0; u < d->n; u++) {
			if (d->key[u] != (size_t)k)
				continue;
			moves[m].id = st[i].id;
			moves[m].from = st[i].target;
			moves[m].from_codec = st[i].codec;
			moves[m].unit = u;
			if (d->codec && d->codec[u] != BUDDY_CODEC_DEFAULT &&
			    st[i].codec != d->codec[u]) {
				moves[m].to = d->codec_target[u];
				moves[m].codec = d->codec[u];
				m++;
			} else if (st[i].target != d->ch[u].target) {
				moves[m].to = d->ch[u].target;
				moves[m].codec = BUDDY_CODEC_DEFAULT;
				m++;
			}
			break;
		}
	}
	qsort(moves, m, sizeof(*moves), cmp_move);
	return m;
}
