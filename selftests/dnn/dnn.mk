# SPDX-License-Identifier: GPL-2.0
# Activations in buddy memory: the whole-buffer codecs of lib/tcodec.h and
# gist.c, "buddyctl calibrate" and the Python package buddy (python/).
#
#   make check-dnn   natively: tcodec_test and calib_test under ASan+UBSan,
#                    the calibrate CLI (selftests/dnn/calibrate_cli_test.sh)
#                    fuzz_tcodec (libFuzzer, clang) for DNN_FUZZ_SECONDS,
#                    and the Python package's tests with /usr/bin/python3
#                    (python/tests/run.py) on libbuddy's in-process device
#                    (DNN_PY_DEVICE; empty: /dev/buddy, and the device
#                    tests SKIP, saying why, when there is none); TAP in
#                    $(B)/results/native-*.log

DNN_CODEC_LIBS := -lz -llz4 -lm

$(B)/san/tests/dnn/%: selftests/dnn/%.c $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) \
		$(USER_HDRS) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ $< \
	    $(DNN_SAN_EXTRA_$*) $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) \
	    $(DNN_CODEC_LIBS) $(JSONC_LIBS)

DNN_NATIVE_TESTS := $(B)/san/tests/dnn/tcodec_test $(B)/san/tests/dnn/calib_test

# Every decoder of lib/tcodec.h on arbitrary streams.
DNN_FUZZ_SECONDS ?= 8
DNN_FUZZ := $(B)/fuzz/fuzz_tcodec
$(DNN_FUZZ): selftests/dnn/fuzz_tcodec.c lib/tcodec.c lib/gist.c \
		lib/tcodec.h $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all $(CPPFLAGS) -o $@ $< \
	    lib/tcodec.c lib/gist.c $(CORE_SRCS) -lz -llz4 -lm

# One TAP line in $(B)/results/native-dnn-fuzz.log.
.PHONY: check-dnn-fuzz
check-dnn-fuzz: $(DNN_FUZZ)
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out $(B)/fuzz/corpus/fuzz_tcodec; \
	log=$$out/native-dnn-fuzz.log; \
	if $(DNN_FUZZ) -max_total_time=$(DNN_FUZZ_SECONDS) -max_len=2048 \
	    -print_final_stats=1 $(B)/fuzz/corpus/fuzz_tcodec \
	    >$(B)/fuzz/fuzz_tcodec.log 2>&1; then \
		runs=$$(sed -n 's/.*stat::number_of_executed_units: *//p' $(B)/fuzz/fuzz_tcodec.log); \
		printf 'ok 1 fuzz_tcodec (%s runs in %ss)\n# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n' "$$runs" $(DNN_FUZZ_SECONDS) >$$log; \
	else \
		{ echo "not ok 1 fuzz_tcodec"; tail -30 $(B)/fuzz/fuzz_tcodec.log | sed 's/^/# /'; \
		  echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; } >$$log; \
	fi; cat $$log; grep -q '^ok' $$log

.PHONY: check-dnn
# The Python tests use /usr/bin/python3: Debian's numpy and torch are
# visible only to it.  They load $(B)/lib/libbuddy.so.1 from the tree.
DNN_PYTHON ?= /usr/bin/python3
DNN_PY_DEVICE ?= inproc:device_mb=64,max_ratio=4

check-dnn: $(DNN_NATIVE_TESTS) $(BUDDYCTL) $(PROFILE_LIB) lib \
		$(DNN_FUZZ)
	@scripts/run-native-tests.sh $(DNN_NATIVE_TESTS); rc=$$?; \
	$(MAKE) --no-print-directory check-dnn-fuzz || rc=1; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-calibrate selftests/dnn/calibrate_cli_test.sh \
	    $(BUDDYCTL) || rc=1; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-python env $(if $(DNN_PY_DEVICE),BUDDY_DEVICE=$(DNN_PY_DEVICE)) \
	    $(DNN_PYTHON) python/tests/run.py || rc=1; \
	exit $$rc
