# SPDX-License-Identifier: GPL-2.0
# libbuddycudaprof.so: `buddyctl profile --cuda=driver`'s interposer of the
# CUDA driver API (tools/profile/cuda_driver/), preloaded into any CUDA
# program; the codec core linked in (libbuddycodec's objects, hidden), so
# that it needs nothing but glibc on a GPU machine.  Its tests
# (selftests/profile/cuda_driver_test.sh, with a fake libcuda.so.1 on host
# memory) run in make check-profile.
#
#   make cuda-driver     $(CUDA_PROF_LIB) (also built by make, make tools
#                        and make codeclib: the glibc-only libraries a GPU
#                        machine is given, with make buddyctl-static)

CUDA_PROF_LIB  := $(B)/libbuddycudaprof.so
CUDA_PROF_SRCS := $(wildcard tools/profile/cuda_driver/*.c)
CUDA_PROF_HDRS := $(wildcard tools/profile/cuda_driver/*.h) $(CODECLIB_HDRS) \
		  tools/profile/engine/schedule_rule.h \
		  tools/profile/interposer/profile_shm.h
CUDA_PROF_OBJS := $(CUDA_PROF_SRCS:%.c=$(B)/codeclib/pic/%.o)

.PHONY: cuda-driver

$(CUDA_PROF_OBJS): $(CUDA_PROF_HDRS)

$(CUDA_PROF_LIB): $(CUDA_PROF_OBJS) $(CODECLIB_OBJS) \
		tools/profile/cuda_driver/exports.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -pthread -fvisibility=hidden \
	    -Wl,--version-script=tools/profile/cuda_driver/exports.map \
	    -Wl,--no-undefined -Wl,-z,now -Wl,-z,noexecstack -o $@ \
	    $(CUDA_PROF_OBJS) $(CODECLIB_OBJS) -ldl

cuda-driver: $(CUDA_PROF_LIB)
tools codeclib: cuda-driver

# The fake driver and the program of the tests.  -Bsymbolic: its
# cuGetProcAddress hands out its own functions, as libcuda's does, never
# the interposer's of the same name.
CUDA_FAKE_DIR := $(PROFILE_TEST_DIR)/fake-cuda
$(CUDA_FAKE_DIR)/libcuda.so.1: selftests/profile/fake_libcuda.c \
		tools/profile/cuda_driver/cuda_api.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -fPIC -shared \
	    -Wl,-Bsymbolic -Wl,-soname,libcuda.so.1 -o $@ $< \
	    -lpthread

$(PROFILE_TEST_DIR)/cuda_driver_prog: selftests/profile/cuda_driver_prog.c \
		tools/profile/cuda_driver/cuda_api.h tools/common/datagen.c \
		tools/common/datagen.h $(CUDA_FAKE_DIR)/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -rdynamic -o $@ $< \
	    tools/common/datagen.c -L$(CUDA_FAKE_DIR) -l:libcuda.so.1 -ldl -lm

check-profile: $(CUDA_PROF_LIB) $(CUDA_FAKE_DIR)/libcuda.so.1 \
	$(PROFILE_TEST_DIR)/cuda_driver_prog
