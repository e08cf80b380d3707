# SPDX-License-Identifier: GPL-2.0
# Selftests of buddy.ko, run in a QEMU guest (included from the top Makefile).
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
KMOD_TEST_LIBS := $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
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
		tools/lib/libbuddy.h $(CORE_HDRS) \
		$(KMOD_TEST_LIBS) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -pthread -o $@ $< \
	    selftests/kmod/kmod_util.c $(KMOD_TEST_LIBS) -luring -lm

# The ABI fuzzer (Documentation/fuzzing.rst) also submits io_uring SQEs.
$(KMOD_TEST_DIR)/buddy_fuzz: selftests/kmod/buddy_fuzz.c selftests/kmod/kmod_util.c \
		selftests/kmod/kmod_util.h tools/lib/datagen.h $(CORE_HDRS) \
		$(KMOD_TEST_LIBS) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< \
	    selftests/kmod/kmod_util.c $(KMOD_TEST_LIBS) -luring -lm

$(KMOD_TEST_DIR)/guest-tests.sh: selftests/kmod/guest-tests.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

selftests-kmod: $(KMOD_TESTS) $(KMOD_TEST_DIR)/guest-tests.sh

# One guest run: $(1) = name, $(2) = run.sh options, $(3) = guest-tests.sh
# mode, $(4) = the directory of buddy.ko and the tests (default
# $(KMOD_TEST_DIR)), $(5) = environment assignments for the guest script.
# The guest's output is split at the script's "### BEGIN name" /
# "### END name rc=N" markers into $(B)/results/guest-kmod-$(1)-<name>.log,
# one per test binary or group of shell checks; a section without "# Totals:"
# (crash, hang), a missing buddy.ko and a failed run.sh verdict (unexpected
# kernel log lines, panic, timeout) each add a failing totals line.
define kmod_guest_run
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out; \
	run=$(B)/guest/kmod-$(1).out; \
	rm -f $$out/guest-kmod-$(1)-*.log; \
	if [ ! -f $(or $(4),$(KMOD_TEST_DIR))/buddy.ko ]; then \
		echo "check-guest: $(1): no buddy.ko, not run"; exit 1; fi; \
	echo "check-guest: $(1): scripts/guest/run.sh $(2)"; \
	scripts/guest/run.sh $(2) \
	    --log $(B)/guest/kmod-$(1).console $(KMOD_ALLOW_KMSG) \
	    --file $(or $(4),$(KMOD_TEST_DIR)):/opt/kmod -- \
	    '$(5) sh /opt/kmod/guest-tests.sh $(3)' >$$run 2>&1; \
	rc=$$?; \
	awk -v out=$$out -v run=$(1) ' \
		/^### BEGIN / { f = out "/guest-kmod-" run "-" $$3 ".log"; \
			printf "" > f; tot = 0; next } \
		/^### END / { if (f && !tot) { \
				print "# " $$3 ": no totals (" $$4 ", crashed?)" >> f; \
				print "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >> f } \
			close(f); f = ""; next } \
		f { print >> f; if ($$0 ~ /^# Totals:/) tot = 1 } \
		END { if (f && !tot) { \
				print "# section cut short (guest died?)" >> f; \
				print "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >> f } }' \
		$$run; \
	for f in $$out/guest-kmod-$(1)-*.log; do \
		[ -f "$$f" ] || continue; \
		grep -hE '^not ok ' "$$f"; \
		printf '  %-44s %s\n' "$$(basename $$f .log)" \
		    "$$(grep -h '^# Totals' $$f | sed 's/^# Totals: //; s/ xfail:0 xpass:0//')"; \
	done; \
	if [ $$rc -ne 0 ]; then \
		log=$$out/guest-kmod-$(1)-verdict.log; \
		grep '^run.sh:' $$run | head -40 | sed 's/^/# /' >$$log; \
		sed -n '/unexpected kernel log lines/,/^run.sh: FAIL/p' $$run | \
		    head -60 | sed 's/^/# /' >>$$log; \
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>$$log; \
		echo "check-guest: $(1): run.sh exited $$rc (see $$run)"; \
		cat $$log; \
	fi; \
	exit $$rc
endef

# buddy.ko for the guest; a build failure is one failed result.
define kmod_build_module
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out $(KMOD_TEST_DIR); \
	rm -f $(KMOD_TEST_DIR)/buddy.ko $$out/guest-kmod-module.log; \
	if $(MAKE) --no-print-directory module >$(B)/guest/kmod-module-build.log 2>&1 && \
	   cp kmod/buddy.ko $(KMOD_TEST_DIR)/buddy.ko; then \
		echo "check-guest: buddy.ko built"; \
	else \
		tail -30 $(B)/guest/kmod-module-build.log; \
		{ echo "# buddy.ko does not build: see $(B)/guest/kmod-module-build.log"; \
		  echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; } \
		    >$$out/guest-kmod-module.log; \
		exit 1; \
	fi
endef

check-guest: selftests-kmod
	-$(kmod_build_module)
	-$(call kmod_guest_run,2node,--nodes 2 --mem $(KMOD_GUEST_MEM) --timeout $(KMOD_GUEST_TIMEOUT),full)
	-$(call kmod_guest_run,4node,--nodes 4 --mem $(KMOD_GUEST_MEM) --far-mem 512 --timeout 600,numa4)
	-$(call kmod_guest_run,big,--nodes 2 --mem $(KMOD_BIG_MEM) --timeout 1800 --append no_timer_check,big)
	-$(call kmod_guest_run,codec,--nodes 2 --mem $(KMOD_GUEST_MEM) --cpu max --timeout 1200,codec)
	@scripts/summary.sh
