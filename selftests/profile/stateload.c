// SPDX-License-Identifier: GPL-2.0
/*
 * stateload - load a profile file with buddyd's own state-file reader
 * (daemon/state.c) and print "uid label target codec" per profile, so that
 * the profile tests can check that buddyd takes what buddyctl profile wrote.
 */
#include <stdio.h>
#include <string.h>

#include "lib/libbuddy.h"
#include "daemon/state.h"

int main(int argc, char **argv)
{
	struct buddy_profile_table t = { 0 };
	unsigned int bad = 0;
	int r;

	if (argc != 2)
		return 2;
	r = bd_state_load(argv[1], &t, &bad);
	if (r) {
		fprintf(stderr, "bd_state_load: %s\n", strerror(-r));
		return 1;
	}
	for (size_t i = 0; i < t.n; i++)
		printf("%u %s %s %s\n", t.v[i].uid, t.v[i].label,
		       buddy_target_name(t.v[i].target),
		       buddy_codec_name(t.v[i].codec));
	printf("bad %u\n", bad);
	buddy_profile_free(&t);
	return bad ? 1 : 0;
}
