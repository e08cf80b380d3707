# SPDX-License-Identifier: GPL-2.0
# Selftests of buddy.ko, run in a QEMU guest.
#
#   make selftests-kmod   static test binaries + guest script in $(B)/guest/kmod/
#   make check-guest      build the module and the tests, boot the guest(s),
#                         run selftests/kmod/guest-tests.sh there; each test
#                         binary's TAP lands in $(B)/results/guest-*.log.
#                         The codec run boots a CPU with AVX2 (--cpu max),
#                         for the module's vector codecs.
#
# The guest is a busybox initramfs without libc: everything is linked
# -static.  Each binary links the shared core (the codecs the module uses,
# for exact expectations), libbuddy and the kselftest harness.

KMOD_TEST_DIR  := $(B)/guest/kmod
KMOD_TEST_SRCS := $(wildcard selftests/kmod/*_test.c)
KMOD_TESTS     := $(patsubst selftests/kmod/%.c,$(KMOD_TEST_DIR)/%,$(KMOD_TEST_SRCS)) \
		  $(KMOD_TEST_DIR)/buddy_hold $(KMOD_TEST_DIR)/buddy_fuzz
KMOD_TEST_LIBS := $(TOOLS_A) $(LIBBUDDY_A)
KMOD_GUEST_TIMEOUT ?= 1200
KMOD_GUEST_MEM     ?= 512
KMOD_BIG_MEM       ?= 2048

# Kernel messages the guest script provokes on purpose (failed loads).
KMOD_ALLOW_KMSG := \
	--allow-kmsg '^buddy: device_node=7: no such online NUMA node$$' \
	--allow-kmsg '^buddy: (device|buddy) pool: cannot reserve [0-9]+ MiB on node -?[0-9]+ \(got [0-9]+ pages\)$$' \
	--allow-kmsg '^buddy: (device|buddy)_node=7: .*$$' \
	--allow-kmsg '^buddy: [a-z_]+=-?[0-9]+: (must be|no such online NUMA node).*$$'

.PHONY: selftests-kmod check-guest

$(KMOD_TEST_DIR)/%: selftests/kmod/%.c selftests/kmod/kmod_util.c \
		selftests/kmod/kmod_util.h selftests/kmod/kmod_test.h \
		$(USER_HDRS) \
		$(KMOD_TEST_LIBS) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -pthread -o $@ $< \
	    selftests/kmod/kmod_util.c $(KMOD_TEST_LIBS) -luring -lm

# The ABI fuzzer (Documentation/fuzzing.rst) also submits io_uring SQEs.
$(KMOD_TEST_DIR)/buddy_fuzz: selftests/kmod/buddy_fuzz.c selftests/kmod/kmod_util.c \
		selftests/kmod/kmod_util.h $(USER_HDRS) \
		$(KMOD_TEST_LIBS) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -pthread -o $@ $< \
	    selftests/kmod/kmod_util.c $(KMOD_TEST_LIBS) -luring -lm

$(KMOD_TEST_DIR)/guest-tests.sh: selftests/kmod/guest-tests.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

# /dev/ram0 for the O_DIRECT tests: Debian builds brd as a module; it comes
# from the kernel image package that scripts/guest/prepare.sh fetched.
$(KMOD_TEST_DIR)/brd.ko:
	@mkdir -p $(dir $@)
	scripts/guest/prepare.sh -q
	dpkg-deb --fsys-tarfile $$(ls $${GUEST_BUILD:-build/guest}/linux-image-*.deb | head -n 1) | \
	    tar -xO --wildcards './lib/modules/*/kernel/drivers/block/brd.ko' >$@.tmp
	mv $@.tmp $@

selftests-kmod: $(KMOD_TESTS) $(KMOD_TEST_DIR)/guest-tests.sh $(KMOD_TEST_DIR)/brd.ko

# One guest run: $(1) = name, $(2) = run.sh options, $(3) = guest-tests.sh
# mode, $(4) = the directory of buddy.ko and the tests (default
# $(KMOD_TEST_DIR)), $(5) = environment assignments for the guest script.
# The guest's output is split at the script's "### BEGIN name" /
# "### END name rc=N" markers into $(B)/results/guest-kmod-$(1)-<name>.log,
# one per test binary or group of shell checks (scripts/guest/stage.sh).
define kmod_guest_run
	@B=$(B) scripts/guest/stage.sh run --sections \
	    --need $(or $(4),$(KMOD_TEST_DIR))/buddy.ko kmod-$(1) $(2) \
	    $(KMOD_ALLOW_KMSG) --file $(or $(4),$(KMOD_TEST_DIR)):/opt/kmod -- \
	    '$(5) sh /opt/kmod/guest-tests.sh $(3)'
endef

# buddy.ko for the guest; a build failure is one failed result.
define kmod_build_module
	@MAKE="$(MAKE)" B=$(B) scripts/guest/stage.sh module kmod $(KMOD_TEST_DIR)
endef

check-guest: selftests-kmod
	-$(kmod_build_module)
	-$(call kmod_guest_run,2node,--nodes 2 --mem $(KMOD_GUEST_MEM) --timeout $(KMOD_GUEST_TIMEOUT),full)
	-$(call kmod_guest_run,4node,--nodes 4 --mem $(KMOD_GUEST_MEM) --far-mem 512 --timeout 600,numa4)
	-$(call kmod_guest_run,big,--nodes 2 --mem $(KMOD_BIG_MEM) --timeout 1800 --append no_timer_check,big)
	-$(call kmod_guest_run,codec,--nodes 2 --mem $(KMOD_GUEST_MEM) --cpu max --timeout 1200,codec)
	@scripts/summary.sh
