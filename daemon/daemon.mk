# SPDX-License-Identifier: GPL-2.0
# buddyd, the profiling daemon.
#
#   make daemon               $(B)/buddyd (native, json-c shared) and the
#                             static guest build $(B)/guest/daemon/buddyd
#   make check-daemon-native  the pure parts (configuration and drop-ins,
#                             state-file escaping, snapshot windows, sd_notify)
#                             under ASan+UBSan, and buddyd --check-config
#                             (selftests/daemon/check_config_test.sh); TAP in
#                             $(B)/results/native-san-daemon-*.log and
#                             native-daemon-check-config.log
#   make check-daemon         build buddy.ko and the static binaries, boot a
#                             QEMU guest, run selftests/daemon/guest-daemon.sh:
#                             TAP in $(B)/results/guest-daemon.log, a real
#                             report in $(B)/results/buddyd-report.txt (and
#                             as JSON in buddyd-report.json)
#
# The guest is a busybox initramfs without libc: the guest binaries are
# -static, with json-c's static library.

DAEMON_SRCS      := daemon/conf.c daemon/log.c daemon/notify.c daemon/state.c \
		    daemon/window.c daemon/report.c
DAEMON_HDRS      := $(wildcard daemon/*.h) $(USER_HDRS)
DAEMON_CPPFLAGS  := $(CPPFLAGS)
DAEMON_LIBS      := $(TOOLS_A) $(LIBBUDDY_A)
DAEMON_GUEST_DIR := $(B)/guest/daemon
DAEMON_GUEST_TIMEOUT ?= 240
DAEMON_GUEST_MEM     ?= 256

.PHONY: daemon check-daemon check-daemon-native daemon-guest-bins

# buddyd itself: main.c (command line, configuration, signals, the loop)
# and manager.c (snapshots, decisions, acting on them)
BUDDYD_SRCS      := daemon/main.c daemon/manager.c

$(BUDDYD): $(BUDDYD_SRCS) $(DAEMON_SRCS) $(DAEMON_HDRS) $(DAEMON_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(DAEMON_CPPFLAGS) -o $@ $(BUDDYD_SRCS) \
	    $(DAEMON_SRCS) $(DAEMON_LIBS) $(JSONC_LIBS) -lm

$(DAEMON_GUEST_DIR)/buddyd: $(BUDDYD_SRCS) $(DAEMON_SRCS) $(DAEMON_HDRS) \
		$(DAEMON_LIBS)
	@test -n "$(JSONC_STATIC)" || { echo "libjson-c.a not found (apt-get install libjson-c-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(DAEMON_CPPFLAGS) -static -o $@ $(BUDDYD_SRCS) \
	    $(DAEMON_SRCS) $(DAEMON_LIBS) $(JSONC_STATIC) -lm

daemon: $(BUDDYD) $(DAEMON_GUEST_DIR)/buddyd

# --- native tests of the pure parts --------------------------------------
DAEMON_NATIVE_TESTS := $(patsubst selftests/daemon/%.c,$(B)/san/tests/daemon/%,\
	$(filter-out selftests/daemon/buddyd_guest_test.c,\
	$(wildcard selftests/daemon/*_test.c)))

$(DAEMON_NATIVE_TESTS): $(B)/san/tests/daemon/%: selftests/daemon/%.c \
		$(DAEMON_SRCS) $(DAEMON_HDRS) $(TOOLS_SAN_A) \
		$(LIBBUDDY_SAN_A) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(DAEMON_CPPFLAGS) $(SAN) -o $@ $< $(DAEMON_SRCS) \
	    $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) $(JSONC_LIBS) \
	    -luring -lz -llz4 -lpthread -lm

check-daemon-native: $(DAEMON_NATIVE_TESTS) $(BUDDYD)
	@scripts/run-native-tests.sh $(DAEMON_NATIVE_TESTS); rc=$$?; \
	RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name daemon-check-config selftests/daemon/check_config_test.sh \
	    $(BUDDYD) || rc=1; \
	exit $$rc

# --- the guest run --------------------------------------------------------
$(DAEMON_GUEST_DIR)/buddyd_guest_test: selftests/daemon/buddyd_guest_test.c \
		selftests/daemon/guest_util.c selftests/daemon/guest_util.h \
		$(DAEMON_SRCS) $(DAEMON_HDRS) $(DAEMON_LIBS) | harness
	@test -n "$(JSONC_STATIC)" || { echo "libjson-c.a not found (apt-get install libjson-c-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(DAEMON_CPPFLAGS) -static -pthread -o $@ $< \
	    selftests/daemon/guest_util.c $(DAEMON_SRCS) $(DAEMON_LIBS) \
	    $(JSONC_STATIC) -lm

$(DAEMON_GUEST_DIR)/buddyd_workload: selftests/daemon/buddyd_workload.c \
		selftests/daemon/guest_util.c selftests/daemon/guest_util.h \
		$(DAEMON_HDRS) $(DAEMON_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(DAEMON_CPPFLAGS) -static -pthread -o $@ $< \
	    selftests/daemon/guest_util.c $(DAEMON_LIBS) -lm

$(DAEMON_GUEST_DIR)/guest-daemon.sh: selftests/daemon/guest-daemon.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

daemon-guest-bins: $(DAEMON_GUEST_DIR)/buddyd \
	$(DAEMON_GUEST_DIR)/buddyd_guest_test $(DAEMON_GUEST_DIR)/buddyd_workload \
	$(DAEMON_GUEST_DIR)/guest-daemon.sh

# One guest: the harness binary's TAP goes to guest-daemon.log (with its
# "# Totals:" line), the report between "### REPORT BEGIN/END" markers to
# buddyd-report.txt, its JSON form to buddyd-report.json.
check-daemon: daemon-guest-bins
	@MAKE="$(MAKE)" B=$(B) scripts/guest/stage.sh module daemon $(DAEMON_GUEST_DIR)
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out; \
	B=$(B) scripts/guest/stage.sh run \
	    --block REPORT=$$out/buddyd-report.txt \
	    --block JSON=$$out/buddyd-report.json \
	    daemon --mem $(DAEMON_GUEST_MEM) --timeout $(DAEMON_GUEST_TIMEOUT) \
	    --file $(DAEMON_GUEST_DIR):/opt/daemon -- \
	    'sh /opt/daemon/guest-daemon.sh'; rc=$$?; \
	echo "check-daemon: report in $$out/buddyd-report.txt ($$(wc -l <$$out/buddyd-report.txt) lines)"; \
	exit $$rc
