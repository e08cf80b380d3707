# SPDX-License-Identifier: GPL-2.0
# buddyctl's device subcommands (info stats list show heatmap set-target
# show-profiles load-profiles clear-profiles), included from the top Makefile
# after tools/tools.mk, which builds $(B)/buddyctl from tools/buddyctl/*.c.
#
#   make check-buddyctl-native  without a module: the heatmap's geometry,
#                               downsampling, palette and rendering
#                               (tools/buddyctl/hmap.c) under ASan+UBSan, and
#                               the CLI (usage errors and exit codes, errors
#                               naming the device, stats from a fake sysfs,
#                               load-profiles --dry-run); TAP in
#                               $(B)/results/native-san-buddyctl-hmap_test.log
#                               and native-buddyctl-cli.log
#   make check-buddyctl         build buddy.ko, a static buddyctl and the
#                               static helper buddyctl_hold, boot a QEMU guest,
#                               run selftests/tools/buddyctl-guest.sh there and
#                               check its captured output on the host
#                               (selftests/tools/buddyctl_check.py): TAP and
#                               totals in $(B)/results/guest-buddyctl.log, the
#                               heatmap PNGs in $(B)/buddyctl-guest/
#
# The heatmap links libpng (and zlib); the guest binaries are -static with
# json-c's, libpng's and zlib's static libraries.

BUDDYCTL_PNG_LIBS := $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng) -lz -lm
# The native rule (tools/tools.mk) links $(JSONC_LIBS): add libpng for it,
# and libnuma (info: numa_distance() between the pools' nodes).
$(B)/buddyctl: JSONC_LIBS += $(BUDDYCTL_PNG_LIBS) -lnuma

BUDDYCTL_GUEST_DIR := $(B)/guest/buddyctl
BUDDYCTL_GUEST_OUT := $(B)/buddyctl-guest
BUDDYCTL_GUEST_TIMEOUT ?= 180
BUDDYCTL_GUEST_MEM ?= 256
BUDDYCTL_STATIC_LIBS := $(foreach l,json-c png16 z numa,$(firstword $(wildcard \
	/usr/lib/x86_64-linux-gnu/lib$(l).a /usr/lib/lib$(l).a \
	/usr/local/lib/lib$(l).a)))
BUDDYCTL_HDRS := $(wildcard tools/buddyctl/*.h tools/lib/*.h) $(CORE_HDRS)

.PHONY: check-buddyctl check-buddyctl-native buddyctl-guest-bins

$(BUDDYCTL_GUEST_DIR)/buddyctl: $(BUDDYCTL_SRCS) $(BUDDYCTL_HDRS) \
		$(PROFILE_ENGINE_SRCS) $(PROFILE_ENGINE_HDRS) \
		$(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
	@test $(words $(BUDDYCTL_STATIC_LIBS)) = 4 || { echo "need libjson-c.a, libpng16.a, libz.a, libnuma.a (apt-get install libjson-c-dev libpng-dev zlib1g-dev libnuma-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -Itools/profile -static -o $@ \
	    $(BUDDYCTL_SRCS) $(PROFILE_ENGINE_SRCS) \
	    $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a \
	    $(BUDDYCTL_STATIC_LIBS) -llz4 -lm

$(BUDDYCTL_GUEST_DIR)/buddyctl_hold: selftests/tools/buddyctl_hold.c \
		selftests/kmod/kmod_util.c selftests/kmod/kmod_util.h \
		$(BUDDYCTL_HDRS) $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -Iselftests/kmod -static -o $@ $< \
	    selftests/kmod/kmod_util.c $(B)/opt/libbuddytools.a \
	    $(B)/opt/libbuddycore.a -lm

$(BUDDYCTL_GUEST_DIR)/buddyctl-guest.sh: selftests/tools/buddyctl-guest.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

buddyctl-guest-bins: $(BUDDYCTL_GUEST_DIR)/buddyctl \
	$(BUDDYCTL_GUEST_DIR)/buddyctl_hold $(BUDDYCTL_GUEST_DIR)/buddyctl-guest.sh

# One guest boot; everything is checked on the host from the captured output.
# A failed module build, a run without totals, or a failed run.sh verdict
# (crash, timeout, unexpected kernel log lines) each add a failing line.
check-buddyctl: buddyctl-guest-bins
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out $(BUDDYCTL_GUEST_OUT); \
	log=$$out/guest-buddyctl.log; run=$(B)/guest/buddyctl.out; \
	rm -f $(BUDDYCTL_GUEST_DIR)/buddy.ko; \
	if ! $(MAKE) --no-print-directory module >$(B)/guest/buddyctl-module-build.log 2>&1 || \
	   ! cp kmod/buddy.ko $(BUDDYCTL_GUEST_DIR)/buddy.ko; then \
		tail -20 $(B)/guest/buddyctl-module-build.log; \
		{ echo "not ok 1 - buddy.ko builds (see $(B)/guest/buddyctl-module-build.log)"; \
		  echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; } >$$log; \
		exit 1; \
	fi; \
	echo "check-buddyctl: scripts/guest/run.sh --mem $(BUDDYCTL_GUEST_MEM) --timeout $(BUDDYCTL_GUEST_TIMEOUT)"; \
	scripts/guest/run.sh --mem $(BUDDYCTL_GUEST_MEM) \
	    --timeout $(BUDDYCTL_GUEST_TIMEOUT) --log $(B)/guest/buddyctl.console \
	    --file $(BUDDYCTL_GUEST_DIR):/opt/buddyctl -- \
	    'sh /opt/buddyctl/buddyctl-guest.sh' >$$run 2>&1; \
	rc=$$?; \
	python3 selftests/tools/buddyctl_check.py $$run $(BUDDYCTL_GUEST_OUT) >$$log 2>&1; \
	prc=$$?; \
	if ! grep -q '^# Totals:' $$log; then \
		echo "not ok - buddyctl_check.py exited $$prc without totals" >>$$log; \
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>$$log; \
	fi; \
	scripts/guest/verdict.sh $$rc $$run $$log; \
	grep -E '^not ok |^# Totals' $$log; \
	echo "check-buddyctl: log in $$log, pictures in $(BUDDYCTL_GUEST_OUT)/"; \
	[ $$rc -eq 0 ] && [ $$prc -eq 0 ]

# --- native tests ------------------------------------------------------------
BUDDYCTL_NATIVE_TESTS := $(B)/san/tests/buddyctl/hmap_test

$(B)/san/tests/buddyctl/hmap_test: selftests/tools/hmap_test.c \
		tools/buddyctl/hmap.c tools/buddyctl/hmap.h | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -Itools/buddyctl $(SAN) -o $@ $< \
	    tools/buddyctl/hmap.c -lm

check-buddyctl-native: $(BUDDYCTL_NATIVE_TESTS) $(B)/buddyctl
	@scripts/run-native-tests.sh $(BUDDYCTL_NATIVE_TESTS); rc=$$?; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name buddyctl-cli selftests/tools/buddyctl_cli_test.sh \
	    $(B)/buddyctl || rc=1; \
	exit $$rc
