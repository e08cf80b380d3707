# SPDX-License-Identifier: GPL-2.0
# Applied to linux-source-6.1's kselftest_harness.h when the Makefile
# copies it into build/include: a FIXTURE_SETUP that says SKIP ends its
# test there, as the harness of later kernels does.  6.1's goes on to run
# the test's body with the fixture half made (a NULL codec on a CPU
# without the instructions the setup looked for: a crash where a SKIP was
# meant).  selftests/ci/harness_test.c checks the result.
s/^\([[:space:]]*\)if (!_metadata->passed) \\$/\1if (!_metadata->passed || _metadata->skip) \\/
