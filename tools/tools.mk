# SPDX-License-Identifier: GPL-2.0
# The tools' own library, $(TOOLS_A) (and $(TOOLS_SAN_A) for the native
# tests): tools/common (JSON, number parsing, messages, test data,
# statistics, time spans, UTF-8, file replacement, CSWAP's time model) and
# tools/policy (the Buddy Threshold heuristic, the profile file), shared by
# buddyctl, buddyd, the profiler, the benchmarks and the tests.  The tools
# link it before $(LIBBUDDY_A).

TOOLS_SRCS := $(wildcard tools/common/*.c tools/policy/*.c)

$(TOOLS_A): $(TOOLS_SRCS:%.c=$(B)/opt/%.o)
	$(AR) rcs $@ $^
$(TOOLS_SAN_A): $(TOOLS_SRCS:%.c=$(B)/san/%.o)
	$(AR) rcs $@ $^

tools: $(TOOLS_A) $(LIBBUDDY_A)
