# SPDX-License-Identifier: GPL-2.0
#
# Buddy Compression: top-level build.
#
#   make          userspace tools and library (build/) and buddy.ko (kmod/)
#   make check    native tests (sanitizers), fuzzers for a bounded time,
#                 then the module's selftests in a QEMU guest
#   make bench    codec, in-process and fault-path benchmarks natively, then
#                 the device benchmark in QEMU
#   make fuzz     libFuzzer targets (clang), FUZZ_SECONDS per decoder
#   make demo     the main job: boot a guest and run the demo end to end
#   make check-ci the first stage of make check: every host program a stage
#                 runs is in scripts/deps.manifest and comes from a package
#                 install-deps.sh installs (selftests/ci/ci.mk)
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
CPPFLAGS := -I. -Itools/lib -isystem $(B)/include
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
LINUX_SRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
KDIR     ?= $(shell scripts/kdir.sh)
FUZZ_SECONDS ?= 10

CORE_SRCS := core/codec.c core/stripe.c core/chunk.c core/alloc.c $(wildcard core/codecs/*.c)
CORE_HDRS := $(wildcard core/*.h) uapi/linux/buddy.h

.PHONY: all tools module check check-native check-guest bench fuzz demo clean \
	harness deps
all: tools module

# --- kselftest harness and kernel scripts, from the linux-source tarball ----
harness: $(B)/include/kselftest_harness.h
$(B)/include/kselftest_harness.h:
	@mkdir -p $(B)/include $(B)/scripts
	tar -xJf $(LINUX_SRC_TAR) -C $(B) --strip-components=1 \
	    linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
	    linux-source-6.1/tools/testing/selftests/kselftest.h \
	    linux-source-6.1/scripts/checkpatch.pl \
	    linux-source-6.1/scripts/spelling.txt \
	    linux-source-6.1/scripts/const_structs.checkpatch \
	    linux-source-6.1/scripts/extract-vmlinux
	cp $(B)/tools/testing/selftests/kselftest_harness.h \
	   $(B)/tools/testing/selftests/kselftest.h $(B)/include/
	cp $(B)/scripts/checkpatch.pl $(B)/scripts/spelling.txt \
	   $(B)/scripts/const_structs.checkpatch $(B)/scripts/extract-vmlinux \
	   $(B)/scripts/ 2>/dev/null || true

# --- shared core, two userspace flavours: optimised and sanitized ----------
$(B)/opt/%.o: %.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -c -o $@ $<
$(B)/san/%.o: %.c $(CORE_HDRS) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -c -o $@ $<

$(B)/opt/libbuddycore.a: $(CORE_SRCS:%.c=$(B)/opt/%.o)
	$(AR) rcs $@ $^
$(B)/san/libbuddycore.a: $(CORE_SRCS:%.c=$(B)/san/%.o)
	$(AR) rcs $@ $^

include tools/tools.mk
include tools/buddyctl/buddyctl.mk
include tools/bench/bench.mk
include selftests/selftests.mk
include tools/demo/demo.mk
include selftests/kmod/kmod.mk
include selftests/kmod/debug.mk
include daemon/daemon.mk
include tools/profile/profile.mk
include tools/lib/lib.mk
include selftests/dnn/dnn.mk
include selftests/gpu/gpu.mk
include packaging/install.mk
include selftests/ci/ci.mk
include selftests/hostroot/hostroot.mk
include tools/codeclib/codeclib.mk

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
