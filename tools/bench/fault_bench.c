// SPDX-License-Identifier: GPL-2.0
/*
 * fault_bench - the data path of a window fault, natively, over the same
 * core code as buddy.ko, next to the codec alone.
 *
 * A fault on a page outside the resident window runs page_entries_io()
 * (kmod/window.c): buddy_stripe_rw() (core/stripe.c) over the page's one
 * stripe of 32 entries, a read for a fault-in and a write for a
 * write-back.  This harness runs exactly that call on a chunk built with
 * buddy_extent_init() over malloc'd extents, page after page, and, over
 * the same data, the codec alone on the same 32 entries per page:
 * buddy_entry_decode() of the streams the data gives (a 128-byte copy at
 * 1x, which stores plain) for a fault-in, buddy_entry_encode()
 * (buddy_entry_classify() at 1x) for a write-back.  The kernel's lock,
 * kmap and page-table work around the call are not the data path and are
 * not here.
 *
 * Each of the four loops is a function of its own (noipa: never inlined
 * nor cloned) so that an instruction counter can tell them apart:
 * tools/bench/fault-ipf.sh runs this under valgrind's callgrind and
 * divides each loop's inclusive instructions by its pages (`make
 * bench-fault`).
 *
 *   fault_bench [-c CODEC] [-t TARGET] [-d CLASS] [-p PAGES]
 *
 * prints the loops' names and the pages each ran, then one line of what
 * the fault-ins counted (a check that the loops did the work).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "tools/common/datagen.h"
#include "lib/libbuddy.h"
#include "core/stripe.h"

#define PAGE	4096u
#define EPP	BUDDY_STRIPE_ENTRIES	/* entries per page */

static volatile unsigned int sink;

/* Fault-in: decompress each page's 32 entries into a window page. */
__attribute__((noipa))
static int fault_in_pages(const struct buddy_extent *x, u8 *page,
			  unsigned int pages, struct buddy_io_acct *acct)
{
	unsigned int p;
	int ret = 0;

	for (p = 0; p < pages; p++)
		ret |= buddy_stripe_rw(x, p * EPP, 0, page, PAGE, false, acct);
	return ret;
}

/* Write-back: compress each dirty page back into its 32 entries. */
__attribute__((noipa))
static int write_back_pages(const struct buddy_extent *x, const u8 *data,
			    unsigned int pages, struct buddy_io_acct *acct)
{
	unsigned int p;
	int ret = 0;

	for (p = 0; p < pages; p++)
		ret |= buddy_stripe_rw(x, p * EPP, 0,
				       (u8 *)data + (size_t)p * PAGE, PAGE,
				       true, acct);
	return ret;
}

/* The codec alone decoding the same 32 entries per page. */
__attribute__((noipa))
static int codec_decode_pages(const struct buddy_codec *c, unsigned int target,
			      const u8 *codes, const u8 *streams,
			      const u8 *data, u8 *page, unsigned int pages)
{
	unsigned int e, nr = pages * EPP;
	int ret = 0;

	for (e = 0; e < nr; e++) {
		u8 *out = page + (e % EPP) * BUDDY_ENTRY_BYTES;

		if (target == BUDDY_TARGET_1X)
			memcpy(out, data + (size_t)e * BUDDY_ENTRY_BYTES,
			       BUDDY_ENTRY_BYTES);
		else
			ret |= buddy_entry_decode(c, codes[e], streams +
						  (size_t)e * BUDDY_STREAM_MAX,
						  out);
	}
	sink += page[0];
	return ret;
}

/* The codec alone encoding the same 32 entries per page. */
__attribute__((noipa))
static void codec_encode_pages(const struct buddy_codec *c, unsigned int target,
			       const u8 *data, u8 *streams, unsigned int pages)
{
	unsigned int e, nr = pages * EPP;

	for (e = 0; e < nr; e++) {
		const u8 *in = data + (size_t)e * BUDDY_ENTRY_BYTES;

		if (target == BUDDY_TARGET_1X)
			sink += buddy_entry_classify(c, in);
		else
			sink += buddy_entry_encode(c, in, streams +
						   (size_t)e * BUDDY_STREAM_MAX);
	}
}

int main(int argc, char **argv)
{
	const char *codec_name = "bpc", *class_name = "mixed", *tname = "2x";
	unsigned int target, pages = 256, e, nr;
	struct buddy_io_acct fill = {}, in = {}, out = {};
	const struct buddy_codec *c;
	u8 *data, *dev, *bud, *streams, *codes, *page;
	struct buddy_extent x;
	int cls, opt;

	while ((opt = getopt(argc, argv, "c:t:d:p:h")) != -1) {
		switch (opt) {
		case 'c':
			codec_name = optarg;
			break;
		case 't':
			tname = optarg;
			break;
		case 'd':
			class_name = optarg;
			break;
		case 'p':
			pages = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: fault_bench [-c CODEC] [-t TARGET] [-d CLASS] [-p PAGES]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	c = buddy_codec_by_name(codec_name);
	cls = datagen_class_by_name(class_name);
	if (!c) {
		fprintf(stderr, "fault_bench: -c %s: no such codec\n", codec_name);
		return 2;
	}
	if (cls < 0) {
		fprintf(stderr, "fault_bench: -d %s: no such data class\n",
			class_name);
		return 2;
	}
	if (buddy_target_parse(tname, &target) || target == BUDDY_TARGET_AUTO) {
		fprintf(stderr, "fault_bench: -t %s: want 1x, 4/3x, 2x, 4x or 16x\n",
			tname);
		return 2;
	}
	if (!pages || pages > 65536) {
		fprintf(stderr, "fault_bench: -p %u: want 1..65536 pages\n",
			pages);
		return 2;
	}
	nr = pages * EPP;
	data = malloc((size_t)pages * PAGE);
	dev = calloc(1, buddy_extent_dev_bytes(nr, target));
	bud = calloc(1, buddy_extent_bud_bytes(nr, target) + 1);
	streams = malloc((size_t)nr * BUDDY_STREAM_MAX);
	codes = malloc(nr);
	page = aligned_alloc(PAGE, PAGE);
	if (!data || !dev || !bud || !streams || !codes || !page) {
		fprintf(stderr, "fault_bench: out of memory\n");
		return 1;
	}
	datagen_fill(cls, 42, data, (size_t)pages * PAGE);
	buddy_extent_init(&x, dev, target == BUDDY_TARGET_1X ? NULL : bud,
			  target, nr, c);
	/* the chunk holds the data, the codec-only side its streams */
	for (e = 0; e < pages; e++)
		buddy_stripe_rw(&x, e * EPP, 0, data + (size_t)e * PAGE, PAGE,
				true, &fill);
	for (e = 0; e < nr; e++)
		codes[e] = buddy_entry_encode(c, data +
					      (size_t)e * BUDDY_ENTRY_BYTES,
					      streams + (size_t)e *
					      BUDDY_STREAM_MAX);

	if (fault_in_pages(&x, page, pages, &in) ||
	    memcmp(page, data + (size_t)(pages - 1) * PAGE, PAGE) ||
	    codec_decode_pages(c, target, codes, streams, data, page, pages) ||
	    memcmp(page, data + (size_t)(pages - 1) * PAGE, PAGE)) {
		fprintf(stderr, "fault_bench: a page did not read back as written\n");
		return 1;
	}
	write_back_pages(&x, data, pages, &out);
	codec_encode_pages(c, target, data, streams, pages);
	printf("fault_in_pages %u\nwrite_back_pages %u\ncodec_decode_pages %u\ncodec_encode_pages %u\n",
	       pages, pages, pages, pages);
	printf("# %s %s %s: %llu entry reads, %llu buddy accesses, %llu entry writes\n",
	       c->name, buddy_target_name(target), class_name,
	       (unsigned long long)in.c.entry_reads,
	       (unsigned long long)in.c.buddy_accesses,
	       (unsigned long long)out.c.entry_writes);
	if (in.c.entry_reads != nr || out.c.entry_writes != nr) {
		fprintf(stderr, "fault_bench: the loops did not touch every entry\n");
		return 1;
	}
	free(data);
	free(dev);
	free(bud);
	free(streams);
	free(codes);
	free(page);
	return 0;
}
