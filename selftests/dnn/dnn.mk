# SPDX-License-Identifier: GPL-2.0
# Issue 14 (activations in buddy memory): the whole-buffer codecs of
# tools/lib/tcodec.h and gist.c, "buddyctl calibrate" and the Python
# package buddy (python/), included from the top Makefile.
#
#   make check-dnn   natively: tcodec_test and calib_test under ASan+UBSan,
#                    the calibrate CLI (selftests/dnn/calibrate_cli_test.sh)
#                    and the Python package's tests with /usr/bin/python3
#                    (python/tests/run.py) on libbuddy's in-process device
#                    (DNN_PY_DEVICE; empty: /dev/buddy, and the device
#                    tests SKIP, saying why, when there is none); TAP in
#                    $(B)/results/native-*.log

DNN_CODEC_LIBS := -lz -llz4 -lm

$(B)/san/tests/dnn/%: selftests/dnn/%.c $(B)/san/libbuddytools.a \
		$(B)/san/libbuddycore.a $(wildcard tools/lib/*.h) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -Itools/buddyctl $(SAN) -o $@ $< \
	    $(DNN_SAN_EXTRA_$*) $(B)/san/libbuddytools.a $(B)/san/libbuddycore.a \
	    $(DNN_CODEC_LIBS) $(JSONC_LIBS)

DNN_NATIVE_TESTS := $(B)/san/tests/dnn/tcodec_test $(B)/san/tests/dnn/calib_test

.PHONY: check-dnn
# The Python tests use /usr/bin/python3: Debian's numpy and torch are
# visible only to it.  They load $(B)/lib/libbuddy.so.1 from the tree.
DNN_PYTHON ?= /usr/bin/python3
DNN_PY_DEVICE ?= inproc:device_mb=64,max_ratio=4

check-dnn: $(DNN_NATIVE_TESTS) $(B)/buddyctl $(LIBBUDDY_LIBS)
	@scripts/run-native-tests.sh $(DNN_NATIVE_TESTS); rc=$$?; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-calibrate selftests/dnn/calibrate_cli_test.sh \
	    $(B)/buddyctl || rc=1; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-python env $(if $(DNN_PY_DEVICE),BUDDY_DEVICE=$(DNN_PY_DEVICE)) \
	    $(DNN_PYTHON) python/tests/run.py || rc=1; \
	exit $$rc
