# SPDX-License-Identifier: GPL-2.0
# GPU checks (included from the top Makefile).
#
#   make check-gpu   every selftests/gpu/test_*.py, each a program, run
#                    by selftests/gpu/run_gpu_tests.py (its docstring is the
#                    convention a test file there follows) with GPU_PYTHON,
#                    the Python whose torch has CUDA (python3 from PATH by
#                    default), all of them within GPU_TIMEOUT seconds; where
#                    there is no CUDA device each file says SKIP with the
#                    reason and the stage passes.  Nothing is built: libbuddy
#                    is compared against where $(B)/lib has it, and buddyctl
#                    is $(B)/buddyctl where it runs, else the static
#                    $(B)/static/buddyctl (`make buddyctl-static codeclib`
#                    on a machine with the -dev packages, carried to a GPU
#                    machine that has no json-c; codeclib builds
#                    libbuddycodec.so.1 and libbuddycudaprof.so, both
#                    glibc only).  TAP in
#                    $(B)/results/native-gpu.log.
GPU_PYTHON ?= python3
GPU_TIMEOUT ?= 300

.PHONY: check-gpu
check-gpu:
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out; \
	RESULTS=$$out scripts/run-native-tests.sh --name gpu \
	    $(GPU_PYTHON) selftests/gpu/run_gpu_tests.py $(GPU_TIMEOUT); \
	rc=$$?; grep -h '# SKIP\|^# .*: [0-9.]* s$$' $$out/native-gpu.log; \
	exit $$rc
