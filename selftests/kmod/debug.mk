# SPDX-License-Identifier: GPL-2.0
# buddy.ko under a debug kernel, and the ABI fuzzer (included from the top
# Makefile; Documentation/fuzzing.rst).
#
#   make check-debug   build (or take from the cache) the KASAN debug kernel
#                      (scripts/debug-kernel/), build buddy.ko against it,
#                      boot it (a CPU with AVX2, for the codec test's vector
#                      paths) and run selftests/kmod/guest-tests.sh debug:
#                      DEBUG_TESTS selftests, then the fuzzer with fault
#                      injection until DEBUG_FUZZ_OPS operations or
#                      DEBUG_FUZZ_SECONDS, failing below DEBUG_FUZZ_MIN_OPS;
#                      kmemleak at the end
#   make check-kcsan   the same under the KCSAN kernel (not in `make check`)
#   make fuzz-long     the fuzzer alone under Debian's kernel, FUZZ_LONG_OPS
#                      operations (1,000,000), no fault injection, module
#                      parameters FUZZ_PARAMS (a small window: evictions)
#
# FUZZ_SEED picks the fuzzer's seed (default: a new one each run, printed in
# the TAP log); the same seed replays each worker's operation sequence.

DEBUG_TESTS          ?= api io codec pin wait
DEBUG_PARAMS         ?= device_mb=16 chunk_kb=64 window_mb=1
# The fuzzer's time limit leaves the rest of the guest's for the selftests
# before it and kmemleak after, so a slow machine fails "at least
# DEBUG_FUZZ_MIN_OPS operations" instead of the guest's timeout.
DEBUG_FUZZ_SECONDS   ?= 900
DEBUG_FUZZ_OPS       ?= 120000
DEBUG_FUZZ_MIN_OPS   ?= 100000
DEBUG_GUEST_TIMEOUT  ?= 1800
FUZZ_LONG_OPS        ?= 1000000
FUZZ_LONG_SECONDS    ?= 3000
FUZZ_PARAMS          ?= window_mb=1
FUZZ_SEED            ?= $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# Boot messages of the debug kernel that are not findings: kmemleak's own
# start-up lines, and its "new suspected memory leaks" after a scan (the
# guest script fails a leak itself when a buddy frame is in it).
DEBUG_ALLOW_KMSG := \
	--allow-kmsg '^kmemleak: Kernel memory leak detector initialized.*$$' \
	--allow-kmsg '^kmemleak: [0-9]+ new suspected memory leaks \(see /sys/kernel/debug/kmemleak\)$$'

.PHONY: check-debug check-kcsan fuzz-long debug-kernel

debug-kernel:
	scripts/debug-kernel/build.sh kasan

# $(1) = variant (kasan, kcsan): the kernel, buddy.ko against it, and the
# binaries the guest runs, into $(B)/guest/debug-$(1)/.  A failure is one
# failed result.
define debug_prepare
	@out=$${RESULTS:-$(B)/results}; d=$(B)/guest/debug-$(1); \
	mkdir -p $$out $$d; rm -f $$out/guest-debug-$(1)-build.log $$d/buddy.ko $$d/kernel; \
	log=$(B)/guest/debug-$(1)-build.log; src=$(B)/guest/debug-$(1)-src; \
	t0=$$(date +%s); \
	if kdir=$$(scripts/debug-kernel/build.sh $(1) 2>$$log); then \
		t1=$$(date +%s); \
		echo "check-debug: $(1) kernel $$kdir ($$((t1 - t0)) s)"; \
		rm -rf $$src && mkdir -p $$src && \
		tar -cf - --exclude='*.o' --exclude='.*.cmd' --exclude='*.ko' \
		    --exclude='*.mod*' Kbuild kmod core uapi | tar -xf - -C $$src && \
		$(MAKE) --no-print-directory -C $$kdir M=$(CURDIR)/$$src modules >>$$log 2>&1 && \
		cp $$src/kmod/buddy.ko $$d/buddy.ko && \
		echo "check-debug: buddy.ko built against it ($$(($$(date +%s) - t1)) s)" && \
		echo $$kdir/arch/x86/boot/bzImage >$$d/kernel; \
	fi; \
	if [ ! -s $$d/kernel ]; then \
		tail -30 $$log; \
		{ echo "# the $(1) debug kernel or buddy.ko against it does not build: see $$log"; \
		  echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; } \
		    >$$out/guest-debug-$(1)-build.log; \
		exit 1; \
	fi; \
	cp $(KMOD_TEST_DIR)/guest-tests.sh $(KMOD_TEST_DIR)/buddy_fuzz $(KMOD_TEST_DIR)/buddy_hold \
	    $(patsubst %,$(KMOD_TEST_DIR)/buddy_%_test,$(DEBUG_TESTS)) $$d/
endef

# $(1) = variant, $(2) = fuzzer seconds, $(3) = minimum operations,
# $(4) = operations to stop at
define debug_check
	-$(call debug_prepare,$(1))
	-$(call kmod_guest_run,debug-$(1),--kernel $$(cat $(B)/guest/debug-$(1)/kernel) \
	    --nodes 2 --mem 512 --cpu max --timeout $(DEBUG_GUEST_TIMEOUT) --append pci=noacpi \
	    $(DEBUG_ALLOW_KMSG),debug,$(B)/guest/debug-$(1),\
	    DEBUG_TESTS="$(DEBUG_TESTS)" DEBUG_PARAMS="$(DEBUG_PARAMS)" \
	    FUZZ_SEED=$(FUZZ_SEED) FUZZ_SECONDS=$(2) FUZZ_MIN_OPS=$(3) FUZZ_OPS=$(4))
	@scripts/summary.sh
endef

check-debug: selftests-kmod
	$(call debug_check,kasan,$(DEBUG_FUZZ_SECONDS),$(DEBUG_FUZZ_MIN_OPS),$(DEBUG_FUZZ_OPS))

check-kcsan: selftests-kmod
	$(call debug_check,kcsan,$(DEBUG_FUZZ_SECONDS),0,0)

fuzz-long: selftests-kmod
	-$(kmod_build_module)
	-$(call kmod_guest_run,fuzz-long,--nodes 2 --mem 512 \
	    --timeout $$(($(FUZZ_LONG_SECONDS) + 300)),fuzz,,\
	    FUZZ_SEED=$(FUZZ_SEED) FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) \
	    FUZZ_PARAMS="$(FUZZ_PARAMS)" \
	    FUZZ_OPS=$(FUZZ_LONG_OPS) FUZZ_MIN_OPS=$(FUZZ_LONG_OPS))
	@scripts/summary.sh
