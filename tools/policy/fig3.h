/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fig3.h - the entry sizes of the Buddy Compression paper's Fig. 3, shared
 * by `buddyctl analyze` and `buddyctl profile`.
 *
 * Fig. 3 is optimistic: it assumes eight compressed entry sizes, 0, 8, 16,
 * 32, 64, 80, 96 and 128 bytes.  An all-zero entry costs 0 B (the caller
 * tests that with buddy_entry_is_zero()); any other costs its stream's
 * ceil(bits / 8) bytes rounded up to the next of 8, 16, 32, 64, 80, 96 and
 * 128 B, and a stream longer than 128 B counts 128 B (stored raw).
 */
#ifndef BUDDY_TOOLS_FIG3_H
#define BUDDY_TOOLS_FIG3_H

static inline unsigned int buddy_fig3_bytes(unsigned int bits)
{
	static const unsigned int steps[] = { 8, 16, 32, 64, 80, 96, 128 };
	unsigned int bytes = (bits + 7) / 8, i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (bytes <= steps[i])
			return steps[i];
	return 128;
}

#endif /* BUDDY_TOOLS_FIG3_H */
