# SPDX-License-Identifier: GPL-2.0
# The shared core natively (buddy.ko builds the same sources in kbuild,
# kmod/Kbuild): $(CORE_A) and $(CORE_SAN_A), its tests and its fuzzers.
#
#   make check-native  the core's tests (selftests/core/*_test.c, kselftest
#                      harness) under ASan+UBSan, the striping code under
#                      TSan, then buddyd's native tests
#                      (check-daemon-native); TAP in $(B)/results/native-*.log
#   make check-fuzz    each decoder's libFuzzer target for CHECK_FUZZ_SECONDS,
#                      one TAP line per decoder
#   make fuzz          the same for FUZZ_SECONDS
#   make check-style   checkpatch.pl over kmod/, core/ and the uapi header

$(CORE_A): $(CORE_SRCS:%.c=$(B)/opt/%.o)
	$(AR) rcs $@ $^
$(CORE_SAN_A): $(CORE_SRCS:%.c=$(B)/san/%.o)
	$(AR) rcs $@ $^

CORE_TESTS := $(patsubst selftests/core/%.c,$(B)/san/tests/%,\
	$(wildcard selftests/core/*_test.c))

$(B)/san/tests/%: selftests/core/%.c $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ $< \
	    $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) -lm -lpthread

# The striping code under ThreadSanitizer: its threaded test exercises the
# kernel's locking rule (one lock per stripe of whole metadata bytes).
TSAN_TESTS := $(B)/tsan/tests/stripe_test
$(B)/tsan/tests/%: selftests/core/%.c $(CORE_SRCS) $(CORE_HDRS) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) -fsanitize=thread -o $@ $< $(CORE_SRCS) -lpthread

.PHONY: check-native check-style check-fuzz
check-native: $(CORE_TESTS) $(TSAN_TESTS)
	@scripts/run-native-tests.sh $(CORE_TESTS) $(TSAN_TESTS)
	@$(MAKE) --no-print-directory check-daemon-native

# The differential test of both BPC implementations (scalar and vector)
# against the reference at full size, optimised: 10 million entries per
# data class and per kind of bit pattern, and as many random streams
# (make check-native runs the same test under the sanitizers on
# BPC_VEC_ENTRIES' default, 65536).
BPC_VEC_FULL ?= 10000000
$(B)/opt/tests/bpc_vec_test: selftests/core/bpc_vec_test.c $(CORE_A) $(TOOLS_A) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -o $@ $< $(TOOLS_A) $(CORE_A) -lm -lpthread

# The reference BPC the differential tests hold both implementations to.
$(B)/san/tests/bpc_vec_test $(B)/opt/tests/bpc_vec_test $(B)/fuzz/fuzz_bpc_vec: \
	selftests/core/bpc_ref.h

.PHONY: check-bpc-vec
check-bpc-vec: $(B)/opt/tests/bpc_vec_test
	@BPC_VEC_ENTRIES=$(BPC_VEC_FULL) scripts/run-native-tests.sh $<

check-style: harness
	@scripts/checkpatch.sh

# libFuzzer targets, one per decoder (clang): `make fuzz` runs each for
# FUZZ_SECONDS; `make check` runs each briefly and records one TAP line per
# decoder (a crash or a failed round trip fails it).
FUZZ_CODECS := bpc zvc bdi fpc none
FUZZ_BINS := $(FUZZ_CODECS:%=$(B)/fuzz/fuzz_decode_%)
CHECK_FUZZ_SECONDS ?= 4
$(B)/fuzz/fuzz_decode_%: selftests/fuzz/fuzz_decode.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all $(CPPFLAGS) -DFUZZ_CODEC='"$*"' \
	    -o $@ $< $(CORE_SRCS)

# Both BPC implementations against the reference, on the same inputs.
FUZZ_BINS += $(B)/fuzz/fuzz_bpc_vec
$(B)/fuzz/fuzz_bpc_vec: selftests/fuzz/fuzz_bpc_vec.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all $(CPPFLAGS) -o $@ $< $(CORE_SRCS)

fuzz: $(FUZZ_BINS)
	@scripts/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

check-fuzz: $(FUZZ_BINS)
	@scripts/run-fuzz.sh $(CHECK_FUZZ_SECONDS) $(FUZZ_BINS)
