// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * codeclib.c - libbuddycodec.so (buddycodec.h): core's codecs sizing
 * buffers on a pool of threads, glibc only.
 *
 * A call cuts its buffer into work items of at most ITEM_ENTRIES entries,
 * never across two ranges, and the threads take items off a shared counter
 * until none is left; each item is summed into a result of its own, and the
 * caller adds the items of each range in order once every thread is done,
 * so the result never depends on which thread sized what.  The workers
 * sleep on a condition variable between calls; a call wakes them by
 * bumping a generation number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "buddycodec.h"
#include "core/codec.h"
#include "tools/policy/fig3.h"

/* 512 KiB: small enough to balance 16 threads over a 64 MiB piece. */
#define ITEM_ENTRIES	4096u

static const struct buddy_codec *const sz_codecs[BUDDY_SIZING_NC] = {
	&buddy_codec_bpc, &buddy_codec_zvc, &buddy_codec_bdi, &buddy_codec_fpc,
};

struct sz_item {
	size_t range;
	uint64_t first;			/* entry index into the buffer */
	uint64_t count;
};

struct sz_job {
	const uint8_t *buf;
	const struct sz_item *items;
	size_t nitems;
	size_t next;			/* atomic: next item to take */
	/* ranges mode */
	uint32_t codecs;
	struct buddy_size_stat *res;	/* one per item */
	/* entries mode (@res NULL) */
	const struct buddy_codec *codec;
	uint8_t *codes;
	uint16_t *bits;
};

struct buddy_sizing {
	pthread_mutex_t call;		/* one call at a time */
	pthread_mutex_t lock;		/* the fields below */
	pthread_cond_t wake;		/* workers: a new generation */
	pthread_cond_t idle;		/* caller: every worker done */
	unsigned long gen;
	unsigned int busy;		/* workers still on this generation */
	bool stop;
	struct sz_job *job;
	unsigned int nthreads;		/* the caller included */
	unsigned int nworkers;		/* started */
	pthread_t *tids;
};

unsigned int buddy_sizing_abi(void)
{
	return BUDDY_SIZING_ABI;
}

const char *buddy_sizing_codec_name(unsigned int codec)
{
	return codec < BUDDY_SIZING_NC ? sz_codecs[codec]->name : NULL;
}

static void size_ranges_item(const struct sz_job *j, const struct sz_item *it,
			     struct buddy_size_stat *st)
{
	const uint8_t *p = j->buf + it->first * BUDDY_ENTRY_BYTES;
	const struct buddy_codec *cs[BUDDY_SIZING_NC];
	uint64_t e;
	unsigned int c;

	/* the implementations in force (vector ones where the CPU has them) */
	for (c = 0; c < BUDDY_SIZING_NC; c++)
		cs[c] = buddy_codec_by_id(sz_codecs[c]->id);
	memset(st, 0, sizeof(*st));
	st->entries = it->count;
	for (e = 0; e < it->count; e++, p += BUDDY_ENTRY_BYTES) {
		if (buddy_entry_is_zero(p)) {
			for (c = 0; c < BUDDY_SIZING_NC; c++)
				if (j->codecs & (1u << c))
					st->hist[c][BUDDY_CODE_ZERO]++;
			continue;
		}
		for (c = 0; c < BUDDY_SIZING_NC; c++) {
			unsigned int bits;

			if (!(j->codecs & (1u << c)))
				continue;
			bits = cs[c]->size(p);
			st->hist[c][buddy_code_of_bits(bits)]++;
			st->fig3_bytes[c] += buddy_fig3_bytes(bits);
		}
	}
}

static void size_entries_item(const struct sz_job *j, const struct sz_item *it)
{
	const uint8_t *p = j->buf + it->first * BUDDY_ENTRY_BYTES;
	uint64_t e;

	for (e = it->first; e < it->first + it->count;
	     e++, p += BUDDY_ENTRY_BYTES) {
		unsigned int bits = 0, code = BUDDY_CODE_ZERO;

		if (!buddy_entry_is_zero(p)) {
			bits = j->codec->size(p);
			code = buddy_code_of_bits(bits);
		}
		if (j->codes)
			j->codes[e] = code;
		if (j->bits)
			j->bits[e] = bits;
	}
}

static void run_job(struct sz_job *j)
{
	size_t i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) <
	       j->nitems) {
		if (j->res)
			size_ranges_item(j, &j->items[i], &j->res[i]);
		else
			size_entries_item(j, &j->items[i]);
	}
}

static void *worker(void *arg)
{
	struct buddy_sizing *s = arg;
	unsigned long seen = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct sz_job *j;

		while (!s->stop && s->gen == seen)
			pthread_cond_wait(&s->wake, &s->lock);
		if (s->stop)
			break;
		seen = s->gen;
		j = s->job;
		pthread_mutex_unlock(&s->lock);
		run_job(j);
		pthread_mutex_lock(&s->lock);
		if (--s->busy == 0)
			pthread_cond_signal(&s->idle);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Run @j on every thread, the caller's included; returns when all is done. */
static void run_everywhere(struct buddy_sizing *s, struct sz_job *j)
{
	unsigned int helpers = s->nworkers;

	/* one item needs no helper: waking them would only cost */
	if (j->nitems < 2)
		helpers = 0;
	pthread_mutex_lock(&s->call);
	if (helpers) {
		pthread_mutex_lock(&s->lock);
		s->job = j;
		s->busy = s->nworkers;
		s->gen++;
		pthread_cond_broadcast(&s->wake);
		pthread_mutex_unlock(&s->lock);
	}
	run_job(j);
	if (helpers) {
		pthread_mutex_lock(&s->lock);
		while (s->busy)
			pthread_cond_wait(&s->idle, &s->lock);
		s->job = NULL;
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&s->call);
}

static unsigned int cpus_allowed(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n;
}

struct buddy_sizing *buddy_sizing_new(unsigned int threads)
{
	struct buddy_sizing *s;
	unsigned int i;
	int err;

	if (threads > BUDDY_SIZING_MAX_THREADS) {
		errno = EINVAL;
		return NULL;
	}
	if (!threads) {
		threads = cpus_allowed();
		if (threads > BUDDY_SIZING_MAX_THREADS)
			threads = BUDDY_SIZING_MAX_THREADS;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->tids = calloc(threads, sizeof(*s->tids));
	if (!s->tids) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->call, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->nthreads = threads;
	for (i = 0; i + 1 < threads; i++) {
		err = pthread_create(&s->tids[i], NULL, worker, s);
		if (err) {
			buddy_sizing_free(s);
			errno = err;
			return NULL;
		}
		s->nworkers++;
	}
	return s;
}

void buddy_sizing_free(struct buddy_sizing *s)
{
	unsigned int i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < s->nworkers; i++)
		pthread_join(s->tids[i], NULL);
	pthread_cond_destroy(&s->idle);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->call);
	free(s->tids);
	free(s);
}

unsigned int buddy_sizing_threads(const struct buddy_sizing *s)
{
	return s ? s->nthreads : 0;
}

/*
 * The work items of @n ranges of @lens bytes (each a multiple of 128): at
 * most ITEM_ENTRIES entries each, none across two ranges.  Malloc'd into
 * *@items; returns their number, or -errno.
 */
static ssize_t cut_items(const uint64_t *lens, size_t n, struct sz_item **items)
{
	size_t i, k = 0, nitems = 0;
	uint64_t first = 0, total = 0;
	struct sz_item *it;

	for (i = 0; i < n; i++) {
		uint64_t ents = lens[i] / BUDDY_ENTRY_BYTES;

		if (lens[i] % BUDDY_ENTRY_BYTES)
			return -EINVAL;
		if (__builtin_add_overflow(total, lens[i], &total) ||
		    total > (uint64_t)SIZE_MAX)
			return -EOVERFLOW;
		nitems += (ents + ITEM_ENTRIES - 1) / ITEM_ENTRIES;
	}
	it = calloc(nitems + 1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t left = lens[i] / BUDDY_ENTRY_BYTES;

		while (left) {
			uint64_t c = left < ITEM_ENTRIES ? left : ITEM_ENTRIES;

			it[k].range = i;
			it[k].first = first;
			it[k].count = c;
			k++;
			first += c;
			left -= c;
		}
	}
	*items = it;
	return k;
}

int buddy_sizing_ranges(struct buddy_sizing *s, const void *buf,
			const uint64_t *lens, size_t n, uint32_t codecs,
			struct buddy_size_stat *out)
{
	struct sz_job j = { .buf = buf, .codecs = codecs };
	struct sz_item *items = NULL;
	ssize_t nitems;
	size_t i;
	unsigned int c, q;

	if (!s || (n && (!lens || !out)) || !codecs ||
	    (codecs & ~BUDDY_SIZING_ALL))
		return -EINVAL;
	nitems = cut_items(lens, n, &items);
	if (nitems < 0)
		return nitems;
	if (nitems && !buf) {
		free(items);
		return -EINVAL;
	}
	j.res = calloc(nitems + 1, sizeof(*j.res));
	if (!j.res) {
		free(items);
		return -ENOMEM;
	}
	j.items = items;
	j.nitems = nitems;
	run_everywhere(s, &j);
	if (n)
		memset(out, 0, n * sizeof(*out));
	for (i = 0; i < (size_t)nitems; i++) {
		struct buddy_size_stat *o = &out[items[i].range];
		const struct buddy_size_stat *r = &j.res[i];

		o->entries += r->entries;
		for (c = 0; c < BUDDY_SIZING_NC; c++) {
			for (q = 0; q < BUDDY_CODE_NR; q++)
				o->hist[c][q] += r->hist[c][q];
			o->fig3_bytes[c] += r->fig3_bytes[c];
		}
	}
	free(j.res);
	free(items);
	return 0;
}

int buddy_sizing_entries(struct buddy_sizing *s, const void *buf,
			 uint64_t len, unsigned int codec, uint8_t *codes,
			 uint16_t *bits)
{
	struct sz_job j = { .buf = buf, .codes = codes, .bits = bits };
	struct sz_item *items = NULL;
	ssize_t nitems;

	if (!s || (len && !buf) || codec >= BUDDY_SIZING_NC)
		return -EINVAL;
	nitems = cut_items(&len, 1, &items);
	if (nitems < 0)
		return nitems;
	j.codec = buddy_codec_by_id(sz_codecs[codec]->id);
	j.items = items;
	j.nitems = nitems;
	run_everywhere(s, &j);
	free(items);
	return 0;
}
