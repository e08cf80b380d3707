# SPDX-License-Identifier: GPL-2.0
#
# Buddy Compression: top-level build.
#
#   make          userspace tools and library (build/) and buddy.ko (kmod/)
#   make check    every stage of CHECK_STAGES below, one after the other
#   make bench    codec, in-process and fault-path benchmarks natively, then
#                 the device benchmark in QEMU
#   make fuzz     libFuzzer targets (clang), FUZZ_SECONDS per decoder
#   make demo     the main job: boot a guest and run the demo end to end
#   make check-ci the first stage of make check: every host program a stage
#                 runs is in scripts/deps.manifest and comes from a package
#                 install-deps.sh installs (selftests/ci/ci.mk)
#
# This file holds what every component shares: the compilers and flags,
# the object rules, and the names of the products one component links
# from another (below).  Each component's .mk builds its products and
# owns its check-* rules; they are included in any order.
#
# Nothing here builds against the running kernel: KDIR is the tree of
# Debian's linux-headers-amd64 package (see scripts/kdir.sh).

# Every stage runs Debian's programs, the ones scripts/install-deps.sh
# installs (scripts/deps.manifest, checked by `make check-ci`), ahead of
# others earlier in PATH (pyenv's python3, /usr/local): the same programs as
# on a fresh machine.
DEBIAN_PATH := /usr/sbin:/usr/bin:/sbin:/bin
export PATH := $(if $(filter $(DEBIAN_PATH):%,$(PATH)),$(PATH),$(DEBIAN_PATH):$(PATH))

B        ?= build
CC       ?= gcc
CLANG    ?= clang
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wshadow
# Headers are named from the tree's root: "core/codec.h", "lib/libbuddy.h",
# "tools/common/json.h" (selftests/ci/include_graph.py checks the layers).
CPPFLAGS := -I. -isystem $(B)/include
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
LINUX_SRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
KDIR     ?= $(shell scripts/kdir.sh)
FUZZ_SECONDS ?= 10

# --- the products one component links from another --------------------------
# core/core.mk: the shared core, natively (the module builds it in kbuild)
CORE_A         := $(B)/opt/libbuddycore.a
CORE_SAN_A     := $(B)/san/libbuddycore.a
# lib/lib.mk: libbuddy with the in-process device and the core, from PIC
# objects; the .a is what the tools link
LIBBUDDY_A     := $(B)/lib/libbuddy.a
LIBBUDDY_SAN_A := $(B)/san/libbuddy.a
# tools/tools.mk: the tools' helpers and policy (tools/common, tools/policy)
TOOLS_A        := $(B)/opt/libbuddytools.a
TOOLS_SAN_A    := $(B)/san/libbuddytools.a
# tools/buddyctl/buddyctl.mk, daemon/daemon.mk
BUDDYCTL       := $(B)/buddyctl
BUDDYD         := $(B)/buddyd
# tools/profile/profile.mk: the profiler's engine (buddyctl links it), the
# interposer, and the profiler's test programs
PROFILE_ENGINE_A := $(B)/opt/libbuddyprofile.a
PROFILE_LIB    := $(B)/libbuddyprof.so
PROFILE_TEST_DIR := $(B)/profile-tests

# Every header a userspace program may include: a change to one rebuilds
# what depends on it (a superset, kept simple).
CORE_SRCS := core/codec.c core/stripe.c core/chunk.c core/alloc.c $(wildcard core/codecs/*.c)
CORE_HDRS := $(wildcard core/*.h core/codecs/*.h) uapi/linux/buddy.h
USER_HDRS := $(CORE_HDRS) $(wildcard lib/*.h tools/common/*.h tools/policy/*.h)
JSONC_LIBS := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
JSONC_STATIC := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libjson-c.a \
		/usr/lib/libjson-c.a /usr/local/lib/libjson-c.a))

.PHONY: all tools module check bench fuzz demo clean harness deps
all: tools module

# --- kselftest harness and kernel scripts, from the linux-source tarball ----
harness: $(B)/include/kselftest_harness.h
$(B)/include/kselftest_harness.h: scripts/kselftest-harness.sed
	@mkdir -p $(B)/include $(B)/scripts
	tar -xJf $(LINUX_SRC_TAR) -C $(B) --strip-components=1 \
	    linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
	    linux-source-6.1/tools/testing/selftests/kselftest.h \
	    linux-source-6.1/scripts/checkpatch.pl \
	    linux-source-6.1/scripts/spelling.txt \
	    linux-source-6.1/scripts/const_structs.checkpatch \
	    linux-source-6.1/scripts/extract-vmlinux
	cp $(B)/tools/testing/selftests/kselftest.h $(B)/include/
	sed -f scripts/kselftest-harness.sed \
	    $(B)/tools/testing/selftests/kselftest_harness.h >$@.tmp
	grep -q '_metadata->passed || _metadata->skip' $@.tmp
	mv $@.tmp $@
	cp $(B)/scripts/checkpatch.pl $(B)/scripts/spelling.txt \
	   $(B)/scripts/const_structs.checkpatch $(B)/scripts/extract-vmlinux \
	   $(B)/scripts/ 2>/dev/null || true

# --- objects in two userspace flavours: optimised and sanitized --------------
$(B)/opt/%.o: %.c $(USER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -c -o $@ $<
$(B)/san/%.o: %.c $(USER_HDRS) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -c -o $@ $<

include core/core.mk
include lib/lib.mk
include tools/tools.mk
include tools/buddyctl/buddyctl.mk
include tools/profile/profile.mk
include tools/eval/eval.mk
include tools/bench/bench.mk
include tools/demo/demo.mk
include daemon/daemon.mk
include selftests/kmod/kmod.mk
include selftests/kmod/debug.mk
include selftests/dnn/dnn.mk
include selftests/gpu/gpu.mk
include selftests/hostroot/hostroot.mk
include selftests/ci/ci.mk
include tools/codeclib/codeclib.mk
include tools/profile/cuda_driver/cuda_driver.mk
include packaging/install.mk

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Every stage runs even when an earlier one fails; the closing line sums
# the "# Totals:" lines that all stages wrote into $(B)/results.
CHECK_STAGES ?= ci native inproc fuzz tools buddyctl-native style docs install \
	profile dnn guest lib daemon buddyctl hostroot debug
deps:
	@scripts/install-deps.sh

check: deps
	@rm -rf $(B)/results
	@for s in $(CHECK_STAGES); do scripts/stage.sh $$s $(MAKE) --no-print-directory check-$$s; done
	@scripts/summary.sh

clean:
	rm -rf $(B)
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1
