# SPDX-License-Identifier: GPL-2.0
# Userspace helpers shared by tools, tests and benchmarks (tools/lib/), and
# the tools themselves.

TOOLS_LIB_SRCS := $(wildcard tools/lib/*.c)

$(B)/opt/libbuddytools.a: $(TOOLS_LIB_SRCS:%.c=$(B)/opt/%.o)
	$(AR) rcs $@ $^
$(B)/san/libbuddytools.a: $(TOOLS_LIB_SRCS:%.c=$(B)/san/%.o)
	$(AR) rcs $@ $^

$(TOOLS_LIB_SRCS:%.c=$(B)/opt/%.o) $(TOOLS_LIB_SRCS:%.c=$(B)/san/%.o): \
	$(wildcard tools/lib/*.h)

tools: $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a

# --- buddyctl: one binary, one file per subcommand --------------------------
# json-c headers are included as <json-c/json.h>, found on the default path.
JSONC_LIBS := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)

# The profiler's engine (tools/profile/prof_*.c, header buddyprof.h): a
# library of its own, libbuddyprofile.a, that `buddyctl profile` links.
# (libbuddyprof.so is the interposer, tools/profile/profile.mk.)
PROFILE_ENGINE_SRCS := $(wildcard tools/profile/prof_*.c)
PROFILE_ENGINE_OBJS := $(PROFILE_ENGINE_SRCS:%.c=$(B)/opt/%.o)
PROFILE_ENGINE_HDRS := tools/profile/buddyprof.h
$(PROFILE_ENGINE_OBJS): $(PROFILE_ENGINE_HDRS) $(wildcard tools/lib/*.h)
$(PROFILE_ENGINE_OBJS): CPPFLAGS += -Itools/profile
$(B)/opt/libbuddyprofile.a: $(PROFILE_ENGINE_OBJS)
	$(AR) rcs $@ $^

BUDDYCTL_SRCS := $(wildcard tools/buddyctl/*.c)
BUDDYCTL_OBJS := $(BUDDYCTL_SRCS:%.c=$(B)/opt/%.o)
$(BUDDYCTL_OBJS): $(wildcard tools/buddyctl/*.h tools/lib/*.h) $(PROFILE_ENGINE_HDRS)
$(BUDDYCTL_OBJS): CPPFLAGS += -Itools/profile

$(B)/buddyctl: $(BUDDYCTL_OBJS) $(B)/opt/libbuddyprofile.a \
		$(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
	$(CC) $(CFLAGS) -o $@ $(BUDDYCTL_OBJS) $(B)/opt/libbuddyprofile.a \
	    $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a $(JSONC_LIBS) \
	    -llz4 -lz -lm

tools: $(B)/buddyctl

# Shell tests of the tools; TAP-ish output with a "# Totals:" line in
# $(B)/results/native-analyze.log for scripts/summary.sh.
.PHONY: check-tools
check-tools: $(B)/buddyctl
	@RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name analyze selftests/tools/analyze_test.sh $(B)/buddyctl

# --- codec benchmark ---------------------------------------------------------
# Portable code generation only (no -march=native): the table must mean the
# same on any x86-64 machine from the last decade.  The codecs themselves come
# from $(B)/opt/libbuddycore.a, built with $(CFLAGS) like every tool.
# BENCH_ARGS passes options (-t SECONDS -m MIB -C CPU -c CLASS,...).
BENCH_CFLAGS ?= -O2 -g -march=x86-64-v2
BENCH_FILES  ?=
BENCH_ARGS   ?=

$(B)/codec_bench: tools/bench/codec_bench.c tools/lib/datagen.h $(CORE_HDRS) \
		$(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $< \
	    $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a -llz4 -lzstd -lm

.PHONY: bench-codec
bench-codec: $(B)/codec_bench
	$(B)/codec_bench $(BENCH_ARGS) $(BENCH_FILES)

# One run of both benchmarks, one after the other (never in parallel: they
# would skew each other's timings).
bench: deps
	$(MAKE) --no-print-directory bench-codec
	$(MAKE) --no-print-directory bench-inproc
	$(MAKE) --no-print-directory bench-fault
	$(MAKE) --no-print-directory bench-guest
