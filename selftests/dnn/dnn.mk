# SPDX-License-Identifier: GPL-2.0
# Issue 14 (activations in buddy memory): the whole-buffer codecs of
# tools/lib/tcodec.h and gist.c, "buddyctl calibrate" and the Python
# package buddy (python/), included from the top Makefile.
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

$(B)/san/tests/dnn/%: selftests/dnn/%.c $(B)/san/libbuddytools.a \
		$(B)/san/libbuddycore.a $(wildcard tools/lib/*.h) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -Itools/buddyctl $(SAN) -o $@ $< \
	    $(DNN_SAN_EXTRA_$*) $(B)/san/libbuddytools.a $(B)/san/libbuddycore.a \
	    $(DNN_CODEC_LIBS) $(JSONC_LIBS)

DNN_NATIVE_TESTS := $(B)/san/tests/dnn/tcodec_test $(B)/san/tests/dnn/calib_test

# Every decoder of tools/lib/tcodec.h on arbitrary streams.
DNN_FUZZ_SECONDS ?= 8
DNN_FUZZ := $(B)/fuzz/fuzz_tcodec
$(DNN_FUZZ): selftests/dnn/fuzz_tcodec.c tools/lib/tcodec.c tools/lib/gist.c \
		tools/lib/tcodec.h $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all $(CPPFLAGS) -o $@ $< \
	    tools/lib/tcodec.c tools/lib/gist.c $(CORE_SRCS) -lz -llz4 -lm

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

check-dnn: $(DNN_NATIVE_TESTS) $(B)/buddyctl $(B)/libbuddyprof.so $(LIBBUDDY_LIBS) \
		$(DNN_FUZZ)
	@scripts/run-native-tests.sh $(DNN_NATIVE_TESTS); rc=$$?; \
	$(MAKE) --no-print-directory check-dnn-fuzz || rc=1; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-calibrate selftests/dnn/calibrate_cli_test.sh \
	    $(B)/buddyctl || rc=1; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name dnn-python env $(if $(DNN_PY_DEVICE),BUDDY_DEVICE=$(DNN_PY_DEVICE)) \
	    $(DNN_PYTHON) python/tests/run.py || rc=1; \
	exit $$rc

# --- make eval-dnn -------------------------------------------------------
#   Real training under every buddy.torch policy (tools/dnn/eval_dnn.py):
#   buddyctl calibrate's model for cswap, one per model fitted on the
#   activations its first forward saves (eval_dnn.py --dump-activations,
#   calibrate --tensors), then the CNN on Fashion-MNIST,
#   ResNet-18, VGG-11 and MobileNetV2 on libbuddy's in-process device, one
#   torch thread; $(B)/eval/dnn.md and dnn.png.  Minutes on 2 shared cores.
#   It runs under buddyctl profile --no-timer (the interposer preloaded,
#   no snapshots): memory is the whole process's live tracked bytes
#   (buddy.live_bytes()); the profiler's report goes to dnn-profile.txt.
EVAL_DNN_DEVICE ?= inproc:device_mb=1536,max_ratio=4
EVAL_DNN_ARGS ?=

.PHONY: eval-dnn
eval-dnn: $(B)/buddyctl $(B)/libbuddyprof.so $(LIBBUDDY_LIBS)
	@mkdir -p $(B)/eval
	rm -rf $(B)/eval/dnn-acts
	$(DNN_PYTHON) tools/dnn/eval_dnn.py --dump-activations \
	    --calibration - --out $(B)/eval/dnn-acts $(EVAL_DNN_ARGS)
	for d in $(B)/eval/dnn-acts/*/; do \
		m=$$(basename $$d); \
		$(B)/buddyctl calibrate -c zvc,rle,csr,lz4 -r 3 -t $$d \
		    -o $(B)/eval/dnn-calibration-$$m.json || exit 1; \
	done
	BUDDY_DEVICE=$(EVAL_DNN_DEVICE) $(B)/buddyctl profile --no-timer \
	    --no-unwind -q -o $(B)/eval/dnn-profile.txt -- \
	    $(DNN_PYTHON) tools/dnn/eval_dnn.py \
	    --calibration '$(B)/eval/dnn-calibration-{model}.json' --out $(B)/eval \
	    $(EVAL_DNN_ARGS)
	@echo "  wrote $(B)/eval/dnn.md and $(B)/eval/dnn.png"

# --- make eval-dnn-gpu ---------------------------------------------------
#   The policies on a CUDA device against no offload and PyTorch's
#   save_on_cpu(pin_memory=True) (tools/eval/dnn_gpu.py): ResNet-50 in
#   float32 and bfloat16 autocast, VGG-16-BN, GPT-2 small.  Four runs of at
#   most 5 minutes each on one H100 (measure: two pairs of models;
#   capacity, the largest batch under EVAL_DNN_GPU_CAP_GIB: two pairs),
#   then the report: $OUT (else $(B)/eval)/dnn-gpu.md and dnn-gpu.png, and
#   the goals, met or NOT met.  Without a CUDA device each run says SKIP.
#   eval-dnn-gpu-data writes the Fashion-MNIST subset a machine without
#   Debian's dataset-fashion-mnist reads ($(B)/eval/gpu-data).
EVAL_DNN_GPU_ARGS ?=
EVAL_DNN_GPU_CAP_GIB ?= 24

.PHONY: eval-dnn-gpu eval-dnn-gpu-data
eval-dnn-gpu:
	@out=$${OUT:-$(B)/eval}; mkdir -p $$out; rm -f $$out/dnn-gpu-*.json; \
	run="$(GPU_PYTHON) tools/eval/dnn_gpu.py --out $$out"; \
	$$run --part measure --models resnet50,resnet50-bf16 $(EVAL_DNN_GPU_ARGS) && \
	$$run --part measure --models vgg16bn,gpt2 $(EVAL_DNN_GPU_ARGS) && \
	$$run --part capacity --models gpt2,vgg16bn \
	    --cap-gib $(EVAL_DNN_GPU_CAP_GIB) $(EVAL_DNN_GPU_ARGS) && \
	$$run --part capacity --models resnet50,resnet50-bf16 \
	    --cap-gib $(EVAL_DNN_GPU_CAP_GIB) $(EVAL_DNN_GPU_ARGS) && \
	$$run --part report $(EVAL_DNN_GPU_ARGS)

eval-dnn-gpu-data:
	$(DNN_PYTHON) tools/eval/dnn_gpu.py --write-data $(B)/eval/gpu-data
