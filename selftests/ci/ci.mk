# SPDX-License-Identifier: GPL-2.0
# The CI machinery itself, and the tree's layout rules.
#
#   make check-ci   the "ci" stage of `make check`, natively, ~15 s:
#                   - selftests/ci/stage_test.sh: scripts/stage.sh and
#                     scripts/summary.sh count a failure once, in its own
#                     stage (synthetic stages in a scratch results dir);
#                   - selftests/ci/check-deps.py: every program the stages
#                     of `make check` run (found by scanning make's database
#                     and the scripts the recipes run, with shfmt) is a
#                     "command" line of scripts/deps.manifest, and each one
#                     comes from a package install-deps.sh installs (or
#                     their Depends, or Priority: required);
#                   - selftests/ci/deps_test.sh: that check fails, naming
#                     the command and the package, on a synthetic project
#                     with an unlisted program, an uncovered package, a
#                     missing program and a wrong package;
#                   - selftests/ci/harness_test.c: the kselftest harness
#                     as the Makefile builds it ends a test whose
#                     FIXTURE_SETUP says SKIP (6.1's ran the body on);
#                   - selftests/ci/layout_check.py: the include graph runs
#                     from higher layers to lower ones only, no source file
#                     outside selftests/ is over 1000 lines, no function
#                     over 150 (`python3 selftests/ci/layout_check.py
#                     --graph` prints the graph).
#                   TAP in $(B)/results/native-ci-{stages,deps,deps-test,harness,layout}.log
#   make deps-list  what the scan finds: each program and one place it is run
#   make deps-trace the stages under strace, compared with the manifest (below)

CI_GOALS = check $(addprefix check-,$(CHECK_STAGES))

$(B)/opt/tests/harness_test: selftests/ci/harness_test.c $(B)/include/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $<

.PHONY: check-ci deps-list
check-ci: $(B)/opt/tests/harness_test
	@rc=0; export RESULTS=$${RESULTS:-$(B)/results}; \
	scripts/run-native-tests.sh --name ci-stages selftests/ci/stage_test.sh || rc=1; \
	scripts/run-native-tests.sh --name ci-deps \
	    python3 selftests/ci/check-deps.py $(CI_GOALS) || rc=1; \
	scripts/run-native-tests.sh --name ci-deps-test selftests/ci/deps_test.sh || rc=1; \
	scripts/run-native-tests.sh --name ci-harness $(B)/opt/tests/harness_test || rc=1; \
	scripts/run-native-tests.sh --name ci-layout python3 selftests/ci/layout_check.py || rc=1; \
	exit $$rc

deps-list:
	@python3 selftests/ci/check-deps.py --list $(CI_GOALS)

# The other way round, to find what the scan cannot see (programs that other
# programs run: checkpatch.pl's git, gcc's as, kbuild's helpers): run stages
# under strace -f -e trace=execve and compare every program executed from
# PATH's directories with the manifest.  Not in make check: it reruns the
# stages, and LeakSanitizer does not work under ptrace, so the default
# leaves out the sanitizer stages.  TAP in $(B)/deps-trace/trace.log.
DEPS_TRACE_STAGES ?= ci tools docs install profile style
.PHONY: deps-trace
deps-trace:
	@d=$(abspath $(B))/deps-trace; rm -rf $$d; mkdir -p $$d/results; \
	echo "deps-trace: strace of make $(addprefix check-,$(DEPS_TRACE_STAGES))"; \
	RESULTS=$$d/results strace -f -qq -e trace=execve -e signal=none \
	    -o $$d/execve.log $(MAKE) -k --no-print-directory \
	    $(addprefix check-,$(DEPS_TRACE_STAGES)) >$$d/stages.log 2>&1; \
	python3 selftests/ci/check-deps.py --trace $$d/execve.log >$$d/trace.log; \
	rc=$$?; grep -E '^not ok|^# Totals' $$d/trace.log; exit $$rc
