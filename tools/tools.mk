# SPDX-License-Identifier: GPL-2.0
# Userspace helpers shared by tools, tests and benchmarks (tools/lib/), and
# the tools themselves.

TOOLS_LIB_SRCS := $(wildcard tools/lib/*.c)

$(B)/opt/libbuddytools.a: $(TOOLS_LIB_SRCS:%.c=$(B)/opt/%.o)
	$(AR) rcs $@ $^
$(B)/san/libbuddytools.a: $(TOOLS_LIB_SRCS:%.c=$(B)/san/%.o)
	$(AR) rcs $@ $^

tools: $(B)/opt/libbuddytools.a $(B)/opt/libbuddycore.a
