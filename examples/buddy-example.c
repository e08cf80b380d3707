// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * buddy-example - store a buffer in /dev/buddy and read it back.
 *
 * Build:  cc -o buddy-example buddy-example.c $(pkg-config --cflags --libs libbuddy)
 * Run:    buddy-example [-d DEVICE] [-l LABEL] [MIB]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libbuddy.h>

#define PIECE	(64 * 1024)	/* bytes per io_uring write */

int main(int argc, char **argv)
{
	const char *dev = NULL, *label = "example";
	struct buddy_aio_completion done[16];
	struct buddy_alloc_stat st;
	struct buddy_alloc req;
	struct buddy_info info;
	struct buddy_aio *aio;
	size_t size, off, i;
	char *buf, *back;
	int devfd, afd, n, err, opt;

	while ((opt = getopt(argc, argv, "d:l:h")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-d DEVICE] [-l LABEL] [MIB]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	size = (optind < argc ? strtoul(argv[optind], NULL, 0) : 1) << 20;

	devfd = buddy_open(dev);
	if (devfd < 0) {
		fprintf(stderr, "%s: %s\n", dev ? dev : BUDDY_DEV_PATH,
			buddy_strerror(devfd, BUDDY_OP_OPEN));
		return 1;
	}
	err = buddy_get_info(devfd, &info);
	if (err || !(info.features & BUDDY_FEAT_AUTO) ||
	    !(info.features & BUDDY_FEAT_IO_URING)) {
		fprintf(stderr, "buddy.ko too old: %s\n",
			err ? strerror(-err) : "no AUTO or io_uring");
		return 1;
	}
	printf("ABI %u: device pool %llu MiB, buddy carve-out %llu MiB\n",
	       info.abi_version, (unsigned long long)info.device_bytes >> 20,
	       (unsigned long long)info.buddy_bytes >> 20);

	/* AUTO: the profile for (my uid, label), else auto_target */
	afd = buddy_alloc_auto(devfd, size, label, &req);
	if (afd < 0) {
		fprintf(stderr, "alloc: %s\n", buddy_strerror(afd, BUDDY_OP_ALLOC));
		return 1;
	}
	printf("allocation %llu: %zu bytes, target %s (%s), codec %s\n",
	       (unsigned long long)req.id, size, buddy_target_name(req.target),
	       buddy_source_name(req.target_source),
	       buddy_codec_name(req.codec));

	/* half zeros, half small integers: compressible data */
	buf = calloc(1, size);
	back = malloc(size);
	for (i = size / 2; i < size; i += 4)
		buf[i] = i / 4 % 7;

	/* write asynchronously, PIECE bytes per operation */
	aio = buddy_aio_init(16, &err);
	if (!aio) {
		fprintf(stderr, "io_uring: %s\n", strerror(-err));
		return 1;
	}
	for (off = 0; off < size || buddy_aio_pending(aio); ) {
		while (off < size && buddy_aio_pending(aio) < 16) {
			err = buddy_aio_write(aio, afd, buf + off, PIECE, off, off);
			if (err)
				break;
			off += PIECE;
		}
		n = buddy_aio_wait(aio, done, 16);
		if (n < 0) {
			fprintf(stderr, "io_uring: %s\n", strerror(-n));
			return 1;
		}
		for (i = 0; i < (size_t)n; i++) {
			if (done[i].res != PIECE) {
				fprintf(stderr, "write at %llu: %s\n",
					(unsigned long long)done[i].user_data,
					done[i].res < 0 ? strerror(-done[i].res) : "short");
				return 1;
			}
		}
	}
	buddy_aio_exit(aio);

	/* read back synchronously and compare */
	if (buddy_pread(afd, back, size, 0) != (ssize_t)size ||
	    memcmp(buf, back, size)) {
		fprintf(stderr, "read back: mismatch\n");
		return 1;
	}
	buddy_alloc_stat(afd, &st);
	printf("stored in %llu device + %llu buddy bytes; entries zero %llu, c8 %llu, c32 %llu, c64 %llu, c96 %llu, raw %llu\n",
	       (unsigned long long)st.device_bytes,
	       (unsigned long long)st.buddy_bytes,
	       (unsigned long long)st.codes[BUDDY_CODE_ZERO],
	       (unsigned long long)st.codes[BUDDY_CODE_C8],
	       (unsigned long long)st.codes[BUDDY_CODE_C32],
	       (unsigned long long)st.codes[BUDDY_CODE_C64],
	       (unsigned long long)st.codes[BUDDY_CODE_C96],
	       (unsigned long long)st.codes[BUDDY_CODE_RAW]);
	printf("read back %zu bytes: identical\n", size);

	close(afd);		/* frees the allocation */
	close(devfd);
	free(buf);
	free(back);
	return 0;
}
