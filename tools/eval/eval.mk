# SPDX-License-Identifier: GPL-2.0
# The evaluation on real programs (tools/eval/), not part of make check.
#
#   make eval             installs Debian's PyTorch, GROMACS, LAMMPS, Quantum
#                         ESPRESSO, HPCC, OpenFOAM (apt-get; ~3 GB, ~3 min),
#                         runs each workload for a minute or less under
#                         buddyctl profile, and writes $(B)/eval/results.md
#                         and $(B)/eval/results.png.
#                         EVAL_ONLY="dl" or "hpc" or workload names limits
#                         it; EVAL_NO_INSTALL=1 skips apt-get.  Each
#                         workload runs EVAL_REPEAT times (default 3); its
#                         figures are the medians, with their range
#                         (results.json: "final", "final_frac", "spread").
#   make eval-agree       the evaluation twice, alone ($(B)/eval-alone) and
#                         beside two CPU-bound loops ($(B)/eval-loaded),
#                         without the timing runs, then tools/eval/agree.py:
#                         per workload the two final ratios and buddy
#                         fractions against the stated bounds (3%, 1 point);
#                         the table goes to stdout and $(B)/eval-agree.md,
#                         and the target fails when a workload is outside.
#                         EVAL, EVAL_REPEAT, EVAL_ONLY apply to both runs.
#   make eval-dnn         real training under every buddy.torch policy
#                         (tools/eval/eval_dnn.py): buddyctl calibrate's
#                         model for cswap, one per model fitted on the
#                         activations its first forward saves (eval_dnn.py
#                         --dump-activations, calibrate --tensors), then the
#                         CNN on Fashion-MNIST, ResNet-18, VGG-11 and
#                         MobileNetV2 on libbuddy's in-process device, one
#                         torch thread; $(B)/eval/dnn.md and dnn.png.
#                         Minutes on 2 shared cores.  It runs under buddyctl
#                         profile --no-timer (the interposer preloaded, no
#                         snapshots): memory is the whole process's live
#                         tracked bytes (buddy.live_bytes()); the profiler's
#                         report goes to dnn-profile.txt.
#   make eval-dnn-gpu     the policies on a CUDA device against no offload
#                         and PyTorch's save_on_cpu(pin_memory=True)
#                         (tools/eval/dnn_gpu.py): ResNet-50 in float32 and
#                         bfloat16 autocast, VGG-16-BN, GPT-2 small.  Four
#                         runs of at most 5 minutes each on one H100
#                         (measure: two pairs of models; capacity, the
#                         largest batch under EVAL_DNN_GPU_CAP_GIB: two
#                         pairs), then the report: $OUT (else
#                         $(B)/eval)/dnn-gpu.md and dnn-gpu.png, and the
#                         goals, met or NOT met.  Without a CUDA device each
#                         run says SKIP.  eval-dnn-gpu-data writes the
#                         Fashion-MNIST subset a machine without Debian's
#                         dataset-fashion-mnist reads ($(B)/eval/gpu-data).
#                         GPU_PYTHON (selftests/gpu/gpu.mk) runs it.

EVAL_PYTHON     ?= /usr/bin/python3
EVAL_DNN_DEVICE ?= inproc:device_mb=1536,max_ratio=4
EVAL_DNN_ARGS   ?=
EVAL_DNN_GPU_ARGS ?=
EVAL_DNN_GPU_CAP_GIB ?= 24

.PHONY: eval eval-agree eval-dnn eval-dnn-gpu eval-dnn-gpu-data
eval: $(BUDDYCTL) $(PROFILE_LIB)
	tools/eval/run-eval.sh $(BUDDYCTL) $(B)/eval

eval-agree: $(BUDDYCTL) $(PROFILE_LIB)
	EVAL_TIMING=0 tools/eval/run-eval.sh $(BUDDYCTL) $(B)/eval-alone
	yes >/dev/null & y1=$$!; yes >/dev/null & y2=$$!; \
	EVAL_TIMING=0 EVAL_NO_INSTALL=1 tools/eval/run-eval.sh \
	    $(BUDDYCTL) $(B)/eval-loaded; rc=$$?; kill $$y1 $$y2; exit $$rc
	tools/eval/agree.py $(B)/eval-alone/results.json \
	    $(B)/eval-loaded/results.json >$(B)/eval-agree.md; \
	    rc=$$?; cat $(B)/eval-agree.md; exit $$rc

eval-dnn: $(BUDDYCTL) $(PROFILE_LIB) lib
	@mkdir -p $(B)/eval
	rm -rf $(B)/eval/dnn-acts
	$(EVAL_PYTHON) tools/eval/eval_dnn.py --dump-activations \
	    --calibration - --out $(B)/eval/dnn-acts $(EVAL_DNN_ARGS)
	for d in $(B)/eval/dnn-acts/*/; do \
		m=$$(basename $$d); \
		$(BUDDYCTL) calibrate -c zvc,rle,csr,lz4 --repeat 3 --tensors $$d \
		    -o $(B)/eval/dnn-calibration-$$m.json || exit 1; \
	done
	BUDDY_DEVICE=$(EVAL_DNN_DEVICE) $(BUDDYCTL) profile --no-timer \
	    --no-unwind -q -o $(B)/eval/dnn-profile.txt -- \
	    $(EVAL_PYTHON) tools/eval/eval_dnn.py \
	    --calibration '$(B)/eval/dnn-calibration-{model}.json' --out $(B)/eval \
	    $(EVAL_DNN_ARGS)
	@echo "  wrote $(B)/eval/dnn.md and $(B)/eval/dnn.png"

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
	$(EVAL_PYTHON) tools/eval/dnn_gpu.py --write-data $(B)/eval/gpu-data
