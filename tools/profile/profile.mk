# SPDX-License-Identifier: GPL-2.0
# buddyctl profile: the LD_PRELOAD interposer, its tests and the evaluation
# on real programs.  Included from the top Makefile after tools/tools.mk,
# which builds the profiler's engine $(B)/opt/libbuddyprofile.a
# (tools/profile/prof_*.c, buddyprof.h) and $(B)/buddyctl, whose
# tools/buddyctl/profile.c is the command line around it.
#
#   make                  also builds $(B)/libbuddyprof.so next to buddyctl
#   make check-profile    native end-to-end tests (no QEMU, ~50 s): TAP and
#                         totals in $(B)/results/native-profile.log (profile)
#                         and native-run.log (buddyctl run on the in-process
#                         device); the "profile" stage of `make check`
#   make eval             installs Debian's PyTorch, GROMACS, LAMMPS, Quantum
#                         ESPRESSO, HPCC, OpenFOAM (apt-get; ~3 GB, ~3 min),
#                         runs each workload for a minute or less under
#                         buddyctl profile, and writes $(B)/eval/results.md
#                         and $(B)/eval/results.png.  Not part of make check.
#                         EVAL_ONLY="dl" or "hpc" or workload names limits
#                         it; EVAL_NO_INSTALL=1 skips apt-get.  Each
#                         workload runs EVAL_REPEAT times (default 3); its
#                         figures are the medians, with their range
#                         (results.json: "final", "final_frac", "spread").

PROFILE_LIB      := $(B)/libbuddyprof.so
PROFILE_TEST_DIR := $(B)/profile-tests
PROFILE_TESTS    := known threaded forker family progress runprog
PROFILE_TEST_BINS := $(PROFILE_TESTS:%=$(PROFILE_TEST_DIR)/%)

# -z now: no lazy PLT resolution inside a malloc hook; libgcc_s is linked
# so that _Unwind_Backtrace() never dlopens anything.
# buddyctl run's half (interpose_run.c) makes its allocations with libbuddy,
# linked in statically and kept hidden (--exclude-libs), so that a program
# that links libbuddy.so itself is not confused.
$(PROFILE_LIB): tools/profile/interpose.c tools/profile/interpose_run.c \
		tools/profile/interpose.h tools/lib/profshm.h tools/lib/runshm.h \
		$(B)/lib/libbuddy.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -fPIC -shared \
	    -fvisibility=hidden -ftls-model=initial-exec -Wl,-z,now \
	    -Wl,-z,nodelete -Wl,--exclude-libs,ALL -o $@ tools/profile/interpose.c \
	    tools/profile/interpose_run.c $(B)/lib/libbuddy.a -luring -lpthread \
	    -ldl -lgcc_s

tools: $(PROFILE_LIB)

$(PROFILE_TEST_DIR)/%: tools/profile/tests/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -o $@ $< -lpthread -ldl

# known, statically linked: it never loads the interposer (LD_PRELOAD is
# the dynamic loader's), and the report must say so.
$(PROFILE_TEST_DIR)/known-static: tools/profile/tests/known.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -static -o $@ $< -lpthread -ldl

# buddyd's own state-file reader, when the daemon is in the tree: the tests
# load the profile file with it.
PROFILE_STATELOAD := $(if $(wildcard daemon/state.c daemon/log.c),$(PROFILE_TEST_DIR)/stateload)
$(PROFILE_TEST_DIR)/stateload: tools/profile/tests/stateload.c daemon/state.c \
		daemon/log.c $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -Idaemon -o $@ $< daemon/state.c \
	    daemon/log.c $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a

.PHONY: check-profile eval
check-profile: $(B)/buddyctl $(PROFILE_LIB) $(PROFILE_TEST_BINS) $(PROFILE_STATELOAD) \
		$(PROFILE_TEST_DIR)/known-static
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out; \
	log=$$out/native-profile.log; \
	tools/profile/tests/profile_test.sh $(B)/buddyctl $(PROFILE_LIB) \
	    $(PROFILE_TEST_DIR) >$$log 2>&1; rc=$$?; \
	rlog=$$out/native-run.log; \
	tools/profile/tests/run_test.sh $(B)/buddyctl $(PROFILE_LIB) \
	    $(PROFILE_TEST_DIR) >$$rlog 2>&1 || rc=1; \
	grep -E '^not ok |^# Totals' $$rlog; \
	if ! grep -q '^# Totals' $$rlog; then \
		echo "# run_test.sh: exited without totals"; tail -20 $$rlog; \
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>$$rlog; \
		rc=1; \
	fi; \
	grep -E '^not ok |^# Totals' $$log; \
	if ! grep -q '^# Totals' $$log; then \
		echo "# profile_test.sh: exited $$rc without totals"; \
		tail -20 $$log; \
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>$$log; \
		rc=1; \
	fi; \
	exit $$rc

eval: $(B)/buddyctl $(PROFILE_LIB)
	tools/profile/eval/run-eval.sh $(B)/buddyctl $(B)/eval

# make eval-agree: the evaluation twice, alone (build/eval-alone) and beside
# two CPU-bound loops (build/eval-loaded), without the timing runs, then
# tools/profile/eval/agree.py: per workload the two final ratios and buddy
# fractions against the stated bounds (3%, 1 point); the table goes to
# stdout and $(B)/eval-agree.md, and the target fails when a workload is
# outside.  EVAL, EVAL_REPEAT, EVAL_ONLY apply to both runs.
.PHONY: eval-agree
eval-agree: $(B)/buddyctl $(PROFILE_LIB)
	EVAL_TIMING=0 tools/profile/eval/run-eval.sh $(B)/buddyctl $(B)/eval-alone
	yes >/dev/null & y1=$$!; yes >/dev/null & y2=$$!; \
	EVAL_TIMING=0 EVAL_NO_INSTALL=1 tools/profile/eval/run-eval.sh \
	    $(B)/buddyctl $(B)/eval-loaded; rc=$$?; kill $$y1 $$y2; exit $$rc
	tools/profile/eval/agree.py $(B)/eval-alone/results.json \
	    $(B)/eval-loaded/results.json >$(B)/eval-agree.md; \
	    rc=$$?; cat $(B)/eval-agree.md; exit $$rc
