# SPDX-License-Identifier: GPL-2.0
# libbuddycodec.so: core's codecs as a sizing library that needs nothing but
# glibc (tools/codeclib/buddycodec.h), for machines without the tools'
# libraries (json-c, liburing, liblz4): the CUDA profiler's hook
# (python/buddy/cuda/) sizes GPU memory with it through ctypes
# (python/buddy/_codec.py).
#
#   make codeclib        $(B)/lib/libbuddycodec.so.1 and the link
#                        libbuddycodec.so (also built by make and make tools)
#   make check-codeclib  the library against core's codecs (every datagen
#                        class, both calls, thread counts, bad arguments)
#                        under ASan+UBSan and under TSan, the .so itself
#                        against the same, and its dependencies (glibc
#                        only, nothing exported but buddy_sizing_*); TAP in
#                        $(B)/results/native-*.log.  make check-dnn runs it.

CODECLIB_SONAME := libbuddycodec.so.1
CODECLIB_SO     := $(B)/lib/$(CODECLIB_SONAME)
CODECLIB_HDRS   := tools/codeclib/buddycodec.h tools/policy/fig3.h $(CORE_HDRS)
CODECLIB_OBJS   := $(patsubst %.c,$(B)/codeclib/pic/%.o,\
		   tools/codeclib/codeclib.c $(CORE_SRCS))

.PHONY: codeclib check-codeclib codeclib-in-dnn

# Core's symbols stay inside (hidden); the map file exports the API only.
$(B)/codeclib/pic/%.o: %.c $(CODECLIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -fPIC \
	    $(if $(filter core/%,$<),-fvisibility=hidden) -c -o $@ $<

$(CODECLIB_SO): $(CODECLIB_OBJS) tools/codeclib/codeclib.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -pthread -Wl,-soname,$(CODECLIB_SONAME) \
	    -Wl,--version-script=tools/codeclib/codeclib.map \
	    -Wl,--no-undefined -Wl,-z,noexecstack -o $@ $(CODECLIB_OBJS)

$(B)/lib/libbuddycodec.so: $(CODECLIB_SO)
	ln -sf $(notdir $<) $@

codeclib: $(CODECLIB_SO) $(B)/lib/libbuddycodec.so
tools: codeclib

CODECLIB_TEST_SRCS := selftests/codeclib/codeclib_test.c tools/codeclib/codeclib.c
$(B)/san/tests/codeclib/codeclib_test: $(CODECLIB_TEST_SRCS) $(CODECLIB_HDRS) \
		$(USER_HDRS) $(TOOLS_SAN_A) $(CORE_SAN_A) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ \
	    $(CODECLIB_TEST_SRCS) $(TOOLS_SAN_A) $(CORE_SAN_A) \
	    -ldl -lpthread -lm

$(B)/tsan/tests/codeclib/codeclib_test: $(CODECLIB_TEST_SRCS) $(CODECLIB_HDRS) \
		tools/common/datagen.h tools/common/datagen.c $(CORE_SRCS) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -fsanitize=thread -o $@ \
	    $(CODECLIB_TEST_SRCS) tools/common/datagen.c $(CORE_SRCS) -ldl -lpthread -lm

CODECLIB_TESTS := $(B)/san/tests/codeclib/codeclib_test \
		  $(B)/tsan/tests/codeclib/codeclib_test

check-codeclib: $(CODECLIB_TESTS) $(CODECLIB_SO)
	@CODECLIB_SO=$(abspath $(CODECLIB_SO)) scripts/run-native-tests.sh \
	    $(CODECLIB_TESTS); rc=$$?; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name codeclib-deps selftests/codeclib/codeclib_deps.sh \
	    $(CODECLIB_SO) || rc=1; \
	exit $$rc

# make check-dnn runs these as well: the Python hook's tests
# (python/tests/test_cuda_*.py) load the library, and a failure here,
# counted in its own log, must not keep the Python tests from running.
check-dnn: $(CODECLIB_SO) codeclib-in-dnn
codeclib-in-dnn:
	-@$(MAKE) --no-print-directory check-codeclib
