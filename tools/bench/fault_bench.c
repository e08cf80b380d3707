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
 *
 *   fault_bench -w fftw|stream [-n N] [-b COLUMNS] [-t TARGET] [-d CLASS]
 *
 * is the other half: the resident window's eviction policy, on buddy.ko
 * itself (the QEMU guest: make bench-window).  It replays the page
 * accesses of an FFTW-like 2-D transform (fftw_like()), or of a stream
 * beside a hot set (stream_hot()), on mappings of /dev/buddy allocations
 * and prints the faults, hits, write-backs and evictions the window made
 * for it, with the window_mb in force.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

/* ---- the window's eviction policy, through /dev/buddy (-w) ---------------- */

/* One allocation mapped: its descriptor and mapping. */
struct win_area {
	int fd;
	u8 *p;
	size_t len;
};

static int win_area(int dev, size_t len, unsigned int target,
		    const char *label, int cls, struct win_area *w)
{
	size_t off;

	w->len = len;
	w->fd = buddy_alloc_simple(dev, len, target, BUDDY_CODEC_BPC, label,
				   NULL);
	if (w->fd < 0) {
		fprintf(stderr, "fault_bench: ALLOC %s of %zu bytes: %s\n",
			label, len, buddy_strerror(w->fd, BUDDY_OP_ALLOC));
		return -1;
	}
	w->p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
	if (w->p == MAP_FAILED) {
		perror("fault_bench: mmap");
		return -1;
	}
	/* its bytes, written as a program would before the transform */
	for (off = 0; off < len; off += PAGE)
		datagen_fill(cls, off, w->p + off, PAGE);
	return 0;
}

static void load(const u8 *p)
{
	sink += *(const volatile u8 *)p;
}

static void store(u8 *p)
{
	(*(volatile u8 *)p)++;
}

/*
 * The page accesses of an FFTW-like in-place 2-D transform of an n x n
 * array of complex doubles (16 bytes each, row-major): every row's
 * log2(n) butterfly passes over its own pages with a twiddle page each;
 * then the columns, @b at a time: gathered row by row into a contiguous
 * buffer, log2(n) passes over the buffer, scattered back.  The buffer and
 * the twiddle table are the hot pages a window must keep while the
 * column sweep streams through the array.
 */
__attribute__((noipa))
static void fftw_like(u8 *data, u8 *buf, u8 *tw, size_t twlen,
		      unsigned int n, unsigned int b)
{
	size_t row = (size_t)n * 16, blen = (size_t)n * b * 16, off;
	unsigned int r, c, s, stages = 0;

	while ((1u << stages) < n)
		stages++;
	for (r = 0; r < n; r++)
		for (s = 0; s < stages; s++) {
			for (off = 0; off < row; off += PAGE)
				store(data + r * row + off);
			load(tw + (s * PAGE) % twlen);
		}
	for (c = 0; c < n; c += b) {
		for (r = 0; r < n; r++) {
			load(data + r * row + (size_t)c * 16);
			store(buf + (size_t)r * b * 16);
		}
		for (s = 0; s < stages; s++) {
			for (off = 0; off < blen; off += PAGE)
				store(buf + off);
			load(tw + (s * PAGE) % twlen);
		}
		for (r = 0; r < n; r++) {
			load(buf + (size_t)r * b * 16);
			store(data + r * row + (size_t)c * 16);
		}
	}
}

/*
 * A stream over @data (each page stored once) beside a hot set @hot
 * touched after every @every pages of it: what second chance is for.
 */
__attribute__((noipa))
static void stream_hot(u8 *data, size_t len, u8 *hot, size_t hlen,
		       unsigned int every)
{
	size_t off, h;

	for (off = 0; off < len; off += PAGE) {
		store(data + off);
		if ((off / PAGE) % every == every - 1)
			for (h = 0; h < hlen; h += PAGE)
				load(hot + h);
	}
}

/*
 * -w fftw or -w stream: the pattern on /dev/buddy, and what the window
 * did for it.  fftw: an n x n transform, @b columns at a time (its array,
 * buffer and twiddle table); stream: n * n * 16 bytes streamed beside a
 * 512 KiB hot set touched every 8 pages.
 */
static int window_bench(const char *pattern, unsigned int n, unsigned int b,
			unsigned int target, int cls)
{
	struct win_area area[3];
	const char *const names[3] = { "bench-data", "bench-hot", "bench-twiddle" };
	u64 faults = 0, hits = 0, wb = 0, ev = 0, link = 0;
	struct timespec t0, t1;
	unsigned int i;
	char wmb[32] = "?";
	int dev, fd;

	dev = buddy_open(NULL);
	if (dev < 0) {
		fprintf(stderr, "fault_bench: %s\n",
			buddy_strerror(dev, BUDDY_OP_OPEN));
		return 1;
	}
	bool fftw = !strcmp(pattern, "fftw");

	if (win_area(dev, (size_t)n * n * 16, target, names[0], cls, &area[0]) ||
	    win_area(dev, fftw ? (size_t)n * b * 16 : 128 * PAGE, target,
		     names[1], cls, &area[1]) ||
	    win_area(dev, 16 * PAGE, target, names[2], cls, &area[2]))
		return 1;
	/* what the initialisation did is not the transform's */
	for (i = 0; i < 3; i++)
		fsync(area[i].fd);
	{
		struct buddy_alloc_stat st[3];

		for (i = 0; i < 3; i++) {
			memset(&st[i], 0, sizeof(st[i]));
			buddy_alloc_stat(area[i].fd, &st[i]);
			faults -= st[i].window_faults;
			hits -= st[i].window_hits;
			wb -= st[i].window_writebacks;
			ev -= st[i].window_evictions;
			link -= st[i].link_ns;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (fftw)
		fftw_like(area[0].p, area[1].p, area[2].p, area[2].len, n, b);
	else
		stream_hot(area[0].p, area[0].len, area[1].p, area[1].len, 8);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < 3; i++) {
		struct buddy_alloc_stat st;

		memset(&st, 0, sizeof(st));
		buddy_alloc_stat(area[i].fd, &st);
		faults += st.window_faults;
		hits += st.window_hits;
		wb += st.window_writebacks;
		ev += st.window_evictions;
		link += st.link_ns;
		munmap(area[i].p, area[i].len);
		close(area[i].fd);
	}
	fd = open(BUDDY_PARAM_DIR "/window_mb", O_RDONLY);
	if (fd >= 0) {
		ssize_t k = read(fd, wmb, sizeof(wmb) - 1);

		wmb[k > 0 ? k - 1 : 0] = 0;
		close(fd);
	}
	if (fftw)
		printf("fftw-like %ux%u complex, %u columns at a time", n, n, b);
	else
		printf("stream %zu MiB beside a 512 KiB hot set", area[0].len >> 20);
	printf(", %s, window_mb=%s: "
	       "%llu faults, %llu hits, %llu write-backs, %llu evictions, "
	       "%.3f ms of modeled link time, %.2f s\n",
	       buddy_target_name(target), wmb,
	       (unsigned long long)faults, (unsigned long long)hits,
	       (unsigned long long)wb, (unsigned long long)ev, link / 1e6,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	close(dev);
	return 0;
}

int main(int argc, char **argv)
{
	const char *codec_name = "bpc", *class_name = "mixed", *tname = "2x";
	unsigned int target, pages = 256, e, nr;
	struct buddy_io_acct fill = {}, in = {}, out = {};
	const struct buddy_codec *c;
	u8 *data, *dev, *bud, *streams, *codes, *page;
	struct buddy_extent x;
	unsigned int n = 1024, cols = 16;
	const char *window = NULL;
	int cls, opt;

	while ((opt = getopt(argc, argv, "c:t:d:p:w:n:b:h")) != -1) {
		switch (opt) {
		case 'w':
			window = optarg;
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			cols = strtoul(optarg, NULL, 0);
			break;
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
				"usage: fault_bench [-c CODEC] [-t TARGET] [-d CLASS] [-p PAGES]\n"
				"       fault_bench -w fftw|stream [-n N] [-b COLUMNS] [-t TARGET] [-d CLASS]\n");
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
	if (window) {
		if (strcmp(window, "fftw") && strcmp(window, "stream")) {
			fprintf(stderr, "fault_bench: -w %s: the patterns are fftw and stream\n",
				window);
			return 2;
		}
		if (n < 16 || n > 4096 || (n & (n - 1)) || !cols || n % cols) {
			fprintf(stderr, "fault_bench: -n %u -b %u: want a power of two N in 16..4096 and COLUMNS dividing it\n",
				n, cols);
			return 2;
		}
		return window_bench(window, n, cols, target, cls);
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
