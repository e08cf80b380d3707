# SPDX-License-Identifier: GPL-2.0
# `buddyctl profile` and `buddyctl run`: the LD_PRELOAD interposer
# (tools/profile/interposer/) and the engine of both commands
# (tools/profile/engine/, $(PROFILE_ENGINE_A), which buddyctl links; its
# command lines are tools/buddyctl/profile.c and run.c).
#
#   make                  also builds $(PROFILE_LIB) next to buddyctl
#   make check-profile    native end-to-end tests (no QEMU, ~50 s): TAP and
#                         totals in $(B)/results/native-profile.log (profile)
#                         and native-run.log (buddyctl run on the in-process
#                         device), native-cuda-driver.log (--cuda=driver on
#                         a fake libcuda); the "profile" stage of `make check`

PROFILE_ENGINE_SRCS := $(wildcard tools/profile/engine/*.c)
PROFILE_ENGINE_OBJS := $(PROFILE_ENGINE_SRCS:%.c=$(B)/opt/%.o)
PROFILE_HDRS := $(wildcard tools/profile/engine/*.h tools/profile/interposer/*.h)
$(PROFILE_ENGINE_OBJS): $(PROFILE_HDRS)
$(PROFILE_ENGINE_A): $(PROFILE_ENGINE_OBJS)
	$(AR) rcs $@ $^

# -z now: no lazy PLT resolution inside a malloc hook; libgcc_s is linked
# so that _Unwind_Backtrace() never dlopens anything.
# buddyctl run's half (run_alloc.c) makes its allocations with libbuddy,
# linked in statically and kept hidden (--exclude-libs), so that a program
# that links libbuddy.so itself is not confused.
# Python sites (python_site.c) need CPython 3.11's internal headers
# (libpython3.11-dev); without them the library is built without them.
INTERPOSER_SRCS := $(wildcard tools/profile/interposer/*.c)
PYSITE_INCLUDE ?= /usr/include/python3.11
PYSITE_CPPFLAGS := $(if $(wildcard $(PYSITE_INCLUDE)/internal/pycore_frame.h),\
	-DPYSITE_CPYTHON -I$(PYSITE_INCLUDE))
$(PROFILE_LIB): $(INTERPOSER_SRCS) $(PROFILE_HDRS) $(USER_HDRS) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $(PYSITE_CPPFLAGS) -fPIC -shared \
	    -fvisibility=hidden -ftls-model=initial-exec -Wl,-z,now \
	    -Wl,-z,nodelete -Wl,--exclude-libs,ALL -o $@ $(INTERPOSER_SRCS) \
	    $(LIBBUDDY_A) -luring -lpthread -ldl -lgcc_s

tools: $(PROFILE_ENGINE_A) $(PROFILE_LIB)

# --- tests ---------------------------------------------------------------------
PROFILE_TESTS     := known threaded forker family progress runprog hpcprog labels \
		     fakepy
PROFILE_TEST_BINS := $(PROFILE_TESTS:%=$(PROFILE_TEST_DIR)/%)

$(PROFILE_TEST_DIR)/%: selftests/profile/%.c selftests/profile/test_data.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -o $@ $< -lpthread -ldl

# labels calls libstdc++'s operator new (from C: no C++ compiler needed)
$(PROFILE_TEST_DIR)/labels: selftests/profile/labels.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -o $@ $< -ldl -lstdc++

# fakepy exports the names the interposer looks CPython up by
$(PROFILE_TEST_DIR)/fakepy: selftests/profile/fakepy.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -rdynamic -o $@ $< -ldl

# known, statically linked: it never loads the interposer (LD_PRELOAD is
# the dynamic loader's), and the report must say so.
$(PROFILE_TEST_DIR)/known-static: selftests/profile/known.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -static -o $@ $< -lpthread -ldl

# buddyd's own state-file reader: the tests load the profile file with it.
$(PROFILE_TEST_DIR)/stateload: selftests/profile/stateload.c daemon/state.c \
		daemon/log.c $(USER_HDRS) $(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -o $@ $< daemon/state.c \
	    daemon/log.c $(TOOLS_A) $(LIBBUDDY_A)

.PHONY: check-profile
check-profile: $(BUDDYCTL) $(PROFILE_LIB) $(PROFILE_TEST_BINS) \
		$(PROFILE_TEST_DIR)/stateload $(PROFILE_TEST_DIR)/known-static
	@export RESULTS=$${RESULTS:-$(B)/results}; rc=0; \
	export PYSITES=$(if $(PYSITE_CPPFLAGS),yes,no); \
	scripts/run-native-tests.sh --name profile selftests/profile/profile_test.sh \
	    $(BUDDYCTL) $(PROFILE_LIB) $(PROFILE_TEST_DIR) || rc=1; \
	scripts/run-native-tests.sh --name run selftests/profile/run_test.sh \
	    $(BUDDYCTL) $(PROFILE_LIB) $(PROFILE_TEST_DIR) || rc=1; \
	scripts/run-native-tests.sh --name cuda-driver \
	    selftests/profile/cuda_driver_test.sh $(BUDDYCTL) $(CUDA_PROF_LIB) \
	    $(PROFILE_TEST_DIR) || rc=1; \
	exit $$rc
