# SPDX-License-Identifier: GPL-2.0
# The benchmarks: `make bench` runs them one after the other (never in
# parallel: they would skew each other's timings), each ending with its
# goals, "met" or "NOT met".
#
# --- the codecs ----------------------------------------------------------------
#   make bench-codec   every codec per data class (tools/bench/codec_bench.c):
#                      portable code generation only (no -march=native): the
#                      table must mean the same on any x86-64 machine from
#                      the last decade.  The codecs themselves come from
#                      $(CORE_A), built with $(CFLAGS) like every tool.
#                      BENCH_ARGS passes options (-t SECONDS -m MIB -C CPU
#                      -c CLASS,...), BENCH_FILES files to measure too.
BENCH_CFLAGS ?= -O2 -g -march=x86-64-v2
BENCH_FILES  ?=
BENCH_ARGS   ?=

$(B)/codec_bench: tools/bench/codec_bench.c $(USER_HDRS) $(TOOLS_A) $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $< \
	    $(TOOLS_A) $(CORE_A) -llz4 -lzstd -lm

.PHONY: bench-codec
bench-codec: $(B)/codec_bench
	$(B)/codec_bench $(BENCH_ARGS) $(BENCH_FILES)

bench: deps
	$(MAKE) --no-print-directory bench-codec
	$(MAKE) --no-print-directory bench-inproc
	$(MAKE) --no-print-directory bench-fault
	$(MAKE) --no-print-directory bench-guest

# --- the device in a QEMU guest ------------------------------------------------
#   make bench-guest   build buddy.ko and the static dev_bench, boot one guest
#                      (tools/bench/guest-bench.sh), load buddy.ko and zram
#                      (lz4) there and run dev_bench; the table is printed and
#                      saved to $(B)/results/bench-guest.txt, with the
#                      resident window's fault-in and write-back rates
#                      (pages/s, per target and class, next to 1x/none and
#                      an anonymous mapping) when the module has mmap.
#                      The goals against zram are judged in a
#                      paired pass after the table: buddy and zram open
#                      together, 128 block pairs of 256 ops alternating
#                      between them, "met" on the median of the pairs' rate
#                      ratios (printed with its IQR), by wall clock and by
#                      thread CPU time; 2x/bpc's rd4K at 1.0x zram-lz4 and
#                      seq-wr at 2.0x; about 20-30 s more.  The guest's
#                      qemu64 CPU has no AVX2: buddy.ko's codecs run scalar
#                      (with --cpu max, TCG's emulated AVX2 is the slower
#                      and codec_impl=auto keeps scalar all the same).
#                      Then, in the same guest, the static inproc_bench
#                      measures buddy.ko's two-thread scaling (goal: two
#                      threads on allocations of their own >= 1.8x one;
#                      inproc_bench -D /dev/buddy -s -t
#                      BENCH_GUEST_SCALE_SECONDS, default 8), added to the
#                      same file.
#
# The guest has no libc: dev_bench is linked -static, with liburing's static
# library (liburing-dev ships liburing.a), $(TOOLS_A) (datagen) and
# $(LIBBUDDY_A).
#
# Knobs: DEV_BENCH_MIB (MiB per cell, default 16), DEV_BENCH_ROUNDS (every
# cell of the table measured that many times, medians reported; default 5;
# the goals do not depend on it), DEV_BENCH_ARGS (extra dev_bench options,
# e.g. -c mixed,random; -B BLOCKS and -O OPS for the goals' paired pass),
# BENCH_GUEST_MEM (MiB per guest node), BENCH_GUEST_DEVICE_MB (buddy.ko
# device_mb), BENCH_GUEST_TIMEOUT, BENCH_GUEST_SCALE_SECONDS.

DEV_BENCH            := $(B)/guest/bench/dev_bench
GUEST_INPROC_BENCH   := $(B)/guest/bench/inproc_bench
DEV_BENCH_CFLAGS     ?= -O2 -g
DEV_BENCH_MIB        ?= 16
DEV_BENCH_ROUNDS     ?= 5
DEV_BENCH_ARGS       ?=
BENCH_GUEST_MEM      ?= 512
BENCH_GUEST_DEVICE_MB ?= 128
BENCH_GUEST_TIMEOUT  ?= 900
BENCH_GUEST_SCALE_SECONDS ?= 8

DEV_BENCH_SRCS       := $(wildcard tools/bench/dev_bench*.c)
$(DEV_BENCH): $(DEV_BENCH_SRCS) tools/bench/dev_bench.h $(USER_HDRS) \
		$(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	@test -f /usr/include/liburing.h || \
	    { echo "bench-guest: liburing.h missing (apt-get install liburing-dev)" >&2; exit 1; }
	$(CC) $(DEV_BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ \
	    $(DEV_BENCH_SRCS) $(TOOLS_A) $(LIBBUDDY_A) -luring -lnuma -lm

.PHONY: bench-guest
bench-guest: $(DEV_BENCH) $(GUEST_INPROC_BENCH)
	$(MAKE) module
	tools/bench/guest-bench.sh --bench $(DEV_BENCH) --ko kmod/buddy.ko \
	    --mem $(BENCH_GUEST_MEM) --device-mb $(BENCH_GUEST_DEVICE_MB) \
	    --timeout $(BENCH_GUEST_TIMEOUT) --out $(B)/results/bench-guest.txt \
	    --scaling $(GUEST_INPROC_BENCH) \
	    --scaling-secs $(BENCH_GUEST_SCALE_SECONDS) \
	    -- -m $(DEV_BENCH_MIB) -R $(DEV_BENCH_ROUNDS) $(DEV_BENCH_ARGS)

# --- natively: libbuddy's data path on the in-process device ----------------
#   make bench-inproc  pread/pwrite of 128 B, 4 KiB and 1 MiB at every target
#                      through libbuddy on the in-process device, next to
#                      the codec alone; the table goes to stdout and
#                      $(B)/results/bench-inproc.txt.  Goals: a 2x/bpc
#                      4 KiB pread <= 1.2x the codec (paired blocks after
#                      the table), two threads >= 1.8x one.
#                      INPROC_BENCH_ARGS: -t SECONDS -c CODEC -d CLASS
INPROC_BENCH      := $(B)/inproc_bench
INPROC_BENCH_ARGS ?=

$(INPROC_BENCH): tools/bench/inproc_bench.c $(USER_HDRS) $(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -luring -lnuma -lm -lpthread

# The same program, static, for the guest: `inproc_bench -D /dev/buddy -s`
# there measures buddy.ko's two-thread scaling (the guest has 2 vCPUs);
# make bench-guest runs it after dev_bench.  By hand:
#   make $(B)/guest/bench/inproc_bench module
#   scripts/guest/run.sh --file DIR:/opt/b -- 'insmod /opt/b/buddy.ko; \
#       /opt/b/inproc_bench -D /dev/buddy -s -t 8'

$(GUEST_INPROC_BENCH): tools/bench/inproc_bench.c $(USER_HDRS) $(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(DEV_BENCH_CFLAGS) $(WARN) $(CPPFLAGS) \
	    -static -pthread -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -luring -lnuma -lm

.PHONY: bench-inproc
bench-inproc: $(INPROC_BENCH)
	@mkdir -p $(B)/results
	$(INPROC_BENCH) $(INPROC_BENCH_ARGS) | tee $(B)/results/bench-inproc.txt

# --- natively: where the data path's time goes -------------------------------
#   make profile-path  a 4 KiB pread at 1x/none and at 2x/bpc (and the same
#                      pwrites) looped alone by inproc_bench -l under perf
#                      (callgrind where perf cannot sample): each function's
#                      self share of the loop, top PROFILE_TOP lines; to
#                      stdout and $(B)/results/profile-path.txt.
#                      PROFILE_SECONDS per case, PROFILE_CASES to choose.
PROFILE_SECONDS ?= 3
PROFILE_TOP     ?= 12
PROFILE_CASES   ?= none:1x:pread:4096 bpc:2x:pread:4096 \
		   none:1x:pwrite:4096 bpc:2x:pwrite:4096

.PHONY: profile-path
profile-path: $(INPROC_BENCH)
	@mkdir -p $(B)/results
	tools/bench/profile-path.sh $(INPROC_BENCH) $(PROFILE_SECONDS) \
	    $(PROFILE_TOP) $(PROFILE_CASES) | tee $(B)/results/profile-path.txt

#   make profile-guest the same in a QEMU guest on buddy.ko: Debian's perf,
#                      run through the guest's chroot of the host root,
#                      samples inproc_bench -D /dev/buddy -l (kernel and user
#                      frames); tools/bench/profile-guest.sh; to stdout and
#                      $(B)/results/profile-guest.txt.  PROFILE_GUEST_CASES;
#                      PROFILE_GUEST_CPU, the guest's CPU model (default
#                      qemu64, as bench-guest boots).
PROFILE_GUEST_CASES ?= none:1x:pread:128 bpc:2x:pread:128 \
		       none:1x:pread:4096 bpc:2x:pread:4096
PROFILE_GUEST_CPU   ?= qemu64

.PHONY: profile-guest
profile-guest: $(GUEST_INPROC_BENCH)
	$(MAKE) module
	@mkdir -p $(B)/results
	PROFILE_GUEST_CPU=$(PROFILE_GUEST_CPU) \
	    tools/bench/profile-guest.sh $(CURDIR) $(GUEST_INPROC_BENCH) \
	    kmod/buddy.ko $(PROFILE_SECONDS) $(PROFILE_TOP) \
	    $(PROFILE_GUEST_CASES) >$(B)/results/profile-guest.txt; \
	    rc=$$?; cat $(B)/results/profile-guest.txt; exit $$rc

# --- natively: instructions per window fault ---------------------------------
#   make bench-fault   the window's fault-in and write-back data path
#                      (buddy_stripe_rw over one page, as kmod/window.c's
#                      page_entries_io() runs it) per target and data
#                      class, against the codec alone on the same 32
#                      entries, in instructions per page counted by
#                      callgrind (tools/bench/fault-ipf.sh); goal: <= 1.2x.
#                      To stdout and $(B)/results/bench-fault.txt.
#                      FAULT_BENCH_CODEC, _PAGES, _TARGETS, _CLASSES.
FAULT_BENCH          := $(B)/fault_bench
FAULT_BENCH_CODEC    ?= bpc
FAULT_BENCH_PAGES    ?= 256
FAULT_BENCH_TARGETS  ?= 1x 4/3x 2x 4x 16x
FAULT_BENCH_CLASSES  ?= float32 relu50 pointer random mixed

$(FAULT_BENCH): tools/bench/fault_bench.c $(USER_HDRS) $(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -luring -lm -lpthread

.PHONY: bench-fault
bench-fault: $(FAULT_BENCH)
	@mkdir -p $(B)/results
	tools/bench/fault-ipf.sh $(FAULT_BENCH) $(FAULT_BENCH_CODEC) \
	    $(FAULT_BENCH_PAGES) $(PROFILE_TOP) "$(FAULT_BENCH_TARGETS)" \
	    "$(FAULT_BENCH_CLASSES)" | tee $(B)/results/bench-fault.txt

# --- in the guest: the window's eviction policy --------------------------------
#   make bench-window  fault_bench -w fftw (the page accesses of an FFTW-like
#                      1024x1024 complex 2-D transform) and -w stream (16 MiB
#                      streamed beside a 512 KiB hot set) on /dev/buddy in
#                      the QEMU guest, for each BENCH_WINDOW_MB (default 2 4
#                      6 12): faults, hits, write-backs, evictions.  To
#                      stdout and $(B)/results/bench-window.txt.
BENCH_WINDOW_MB ?= 2 4 6 12

$(B)/guest/bench/fault_bench: tools/bench/fault_bench.c $(USER_HDRS) $(TOOLS_A) \
		$(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(DEV_BENCH_CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -luring -lm -lpthread

.PHONY: bench-window
bench-window: $(B)/guest/bench/fault_bench
	@mkdir -p $(B)/results
	$(MAKE) --no-print-directory module
	cp kmod/buddy.ko $(B)/guest/bench/buddy.ko
	scripts/guest/run.sh --mem 512 --timeout 1800 --append no_timer_check \
	    --log $(B)/guest/bench-window.console --file $(B)/guest/bench:/opt/bench -- \
	    'for w in $(BENCH_WINDOW_MB); do insmod /opt/bench/buddy.ko window_mb=$$w && \
	     /opt/bench/fault_bench -w fftw -t 2x -d float32 && \
	     /opt/bench/fault_bench -w stream -t 2x -d float32 && rmmod buddy || exit 1; done' | \
	    grep -E '^(fftw-like|stream) ' | tee $(B)/results/bench-window.txt
