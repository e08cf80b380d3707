// SPDX-License-Identifier: GPL-2.0
/*
 * harness_test.c - the kselftest harness as this tree builds it (the
 * Makefile's harness rule): a FIXTURE_SETUP that says SKIP ends its test
 * there, as later kernels' harness does.  6.1's runs the test's body
 * after such a setup, with the fixture half made: a vector codec test
 * that SKIPs on a CPU without GFNI then crashes on its NULL codec.
 *
 * The skipped fixture's setup and body leave marks in memory shared with
 * the harness's forks; the fixture after it (fixtures run in the order
 * they are declared) reads them.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"

struct marks {
	int setup_ran, body_ran;
};

static struct marks *marks;

static void __attribute__((constructor)) map_marks(void)
{
	marks = mmap(NULL, sizeof(*marks), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}

FIXTURE(skipped) {
	int unused;
};

FIXTURE_SETUP(skipped)
{
	if (marks != MAP_FAILED)
		marks->setup_ran = 1;
	SKIP(return, "this setup always skips");
}

FIXTURE_TEARDOWN(skipped)
{
}

TEST_F(skipped, body_after_a_skipping_setup)
{
	if (marks != MAP_FAILED)
		marks->body_ran = 1;
}

FIXTURE(after) {
	int unused;
};

FIXTURE_SETUP(after)
{
}

FIXTURE_TEARDOWN(after)
{
}

TEST_F(after, a_setup_skip_ends_its_test)
{
	ASSERT_NE(MAP_FAILED, marks);
	ASSERT_EQ(1, marks->setup_ran) TH_LOG("the skipping fixture did not run first");
	EXPECT_EQ(0, marks->body_ran) TH_LOG("the test body ran after its setup said SKIP");
}

TEST_HARNESS_MAIN
