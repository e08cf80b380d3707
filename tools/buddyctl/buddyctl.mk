# SPDX-License-Identifier: GPL-2.0
# buddyctl: one binary, one file per subcommand (tools/buddyctl/*.c), with
# the profiler's engine ($(PROFILE_ENGINE_A), tools/profile/profile.mk),
# the tools' library and libbuddy.
#
#   make check-tools            `buddyctl analyze` against an independent
#                               model of every codec's sizes
#                               (selftests/tools/analyze_test.sh), and the
#                               README's five-minute tour pasted as written
#                               (selftests/tools/readme_tour_test.py); TAP
#                               in $(B)/results/native-analyze.log and
#                               native-readme-tour.log
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
#   make buddyctl-static        $(B)/static/buddyctl, the same static build
#                               as the guest's: for a machine without
#                               json-c, liblz4 or libnuma (a GPU machine:
#                               `make check-gpu` runs its profile --cuda)
#
# The heatmap links libpng (and zlib), `info` libnuma (numa_distance()
# between the pools' nodes), the report libstdc++ (its C++ demangler); the
# guest binaries are -static with json-c's, libpng's, zlib's and libnuma's
# static libraries.

BUDDYCTL_SRCS := $(wildcard tools/buddyctl/*.c)
BUDDYCTL_OBJS := $(BUDDYCTL_SRCS:%.c=$(B)/opt/%.o)
BUDDYCTL_HDRS := $(wildcard tools/buddyctl/*.h tools/profile/engine/*.h \
		 tools/profile/interposer/*.h) $(USER_HDRS)
BUDDYCTL_LIBS := $(PROFILE_ENGINE_A) $(TOOLS_A) $(LIBBUDDY_A)
BUDDYCTL_PNG_LIBS := $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng) -lz -lm
$(BUDDYCTL_OBJS): $(BUDDYCTL_HDRS)

$(BUDDYCTL): $(BUDDYCTL_OBJS) $(BUDDYCTL_LIBS)
	$(CC) $(CFLAGS) -o $@ $(BUDDYCTL_OBJS) $(BUDDYCTL_LIBS) $(JSONC_LIBS) \
	    $(BUDDYCTL_PNG_LIBS) -lnuma -llz4 -lz -lm -lstdc++

tools: $(BUDDYCTL)

.PHONY: check-tools
check-tools: $(BUDDYCTL) $(PROFILE_LIB) lib
	@export RESULTS=$${RESULTS:-$(B)/results}; rc=0; \
	scripts/run-native-tests.sh --name analyze \
	    selftests/tools/analyze_test.sh $(BUDDYCTL) || rc=1; \
	scripts/run-native-tests.sh --name readme-tour \
	    python3 selftests/tools/readme_tour_test.py . || rc=1; \
	exit $$rc

BUDDYCTL_GUEST_DIR := $(B)/guest/buddyctl
BUDDYCTL_GUEST_OUT := $(B)/buddyctl-guest
BUDDYCTL_GUEST_TIMEOUT ?= 180
BUDDYCTL_GUEST_MEM ?= 256
BUDDYCTL_STATIC_LIBS := $(foreach l,json-c png16 z numa,$(firstword $(wildcard \
	/usr/lib/x86_64-linux-gnu/lib$(l).a /usr/lib/lib$(l).a \
	/usr/local/lib/lib$(l).a)))

BUDDYCTL_STATIC := $(B)/static/buddyctl

.PHONY: check-buddyctl check-buddyctl-native buddyctl-guest-bins buddyctl-static

buddyctl-static: $(BUDDYCTL_STATIC)

$(BUDDYCTL_GUEST_DIR)/buddyctl $(BUDDYCTL_STATIC): $(BUDDYCTL_OBJS) $(BUDDYCTL_LIBS)
	@test $(words $(BUDDYCTL_STATIC_LIBS)) = 4 || { echo "need libjson-c.a, libpng16.a, libz.a, libnuma.a (apt-get install libjson-c-dev libpng-dev zlib1g-dev libnuma-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $(BUDDYCTL_OBJS) $(BUDDYCTL_LIBS) \
	    $(BUDDYCTL_STATIC_LIBS) -llz4 -lm -lstdc++

$(BUDDYCTL_GUEST_DIR)/buddyctl_hold: selftests/tools/buddyctl_hold.c \
		selftests/kmod/kmod_util.c selftests/kmod/kmod_util.h \
		$(USER_HDRS) $(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< \
	    selftests/kmod/kmod_util.c $(TOOLS_A) $(LIBBUDDY_A) -lm

$(BUDDYCTL_GUEST_DIR)/buddyctl-guest.sh: selftests/tools/buddyctl-guest.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

buddyctl-guest-bins: $(BUDDYCTL_GUEST_DIR)/buddyctl \
	$(BUDDYCTL_GUEST_DIR)/buddyctl_hold $(BUDDYCTL_GUEST_DIR)/buddyctl-guest.sh

# One guest boot; everything is checked on the host from the captured output.
check-buddyctl: buddyctl-guest-bins
	@MAKE="$(MAKE)" B=$(B) scripts/guest/stage.sh module buddyctl $(BUDDYCTL_GUEST_DIR)
	@mkdir -p $(BUDDYCTL_GUEST_OUT)
	@B=$(B) scripts/guest/stage.sh run \
	    --check 'python3 selftests/tools/buddyctl_check.py "$$RUN" $(BUDDYCTL_GUEST_OUT)' \
	    buddyctl --mem $(BUDDYCTL_GUEST_MEM) --timeout $(BUDDYCTL_GUEST_TIMEOUT) \
	    --file $(BUDDYCTL_GUEST_DIR):/opt/buddyctl -- \
	    'sh /opt/buddyctl/buddyctl-guest.sh'
	@echo "check-buddyctl: pictures in $(BUDDYCTL_GUEST_OUT)/"

# --- native tests ------------------------------------------------------------
BUDDYCTL_NATIVE_TESTS := $(B)/san/tests/buddyctl/hmap_test

$(B)/san/tests/buddyctl/hmap_test: selftests/tools/hmap_test.c \
		tools/buddyctl/hmap.c tools/buddyctl/hmap.h | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ $< \
	    tools/buddyctl/hmap.c -lm

check-buddyctl-native: $(BUDDYCTL_NATIVE_TESTS) $(BUDDYCTL)
	@scripts/run-native-tests.sh $(BUDDYCTL_NATIVE_TESTS); rc=$$?; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name buddyctl-cli selftests/tools/buddyctl_cli_test.sh \
	    $(BUDDYCTL) || rc=1; \
	exit $$rc
