# SPDX-License-Identifier: GPL-2.0
# libbuddy, the one library: libbuddy.c, libbuddy_aio.c, the whole-buffer
# codecs (tcodec.c, gist.c, libbuddy_tcodec.c), the in-process device
# (inproc*.c) and the shared core it is built from.
#
#   make lib     $(LIBBUDDY_A), $(B)/lib/libbuddy.so.$(LIBBUDDY_VERSION)
#                with its soname link libbuddy.so.$(LIBBUDDY_SOVERSION) and
#                the link libbuddy.so, and $(B)/lib/libbuddy-uninstalled.pc:
#                PKG_CONFIG_PATH=$(B)/lib pkg-config libbuddy builds against
#                the tree (pkg-config prefers NAME-uninstalled.pc)
#   make example $(B)/examples/buddy-example from examples/buddy-example.c,
#                compiled through that pkg-config file
#
# Its objects are compiled once, position-independent, into both the
# shared library and $(LIBBUDDY_A), which the tools link too.  The shared
# library exports the buddy_* symbols of libbuddy.h and nothing else
# (libbuddy.map); it needs liburing, zlib and liblz4 (Requires.private),
# the latter two for the whole-buffer codecs.  $(LIBBUDDY_SAN_A) is the
# same sources under ASan+UBSan, for the native tests.

LIBBUDDY_VERSION   := 1.0.0
LIBBUDDY_SOVERSION := 1
LIBBUDDY_PC_VERSION := 0.1
LIBBUDDY_SRCS      := $(wildcard lib/*.c) $(CORE_SRCS)
LIBBUDDY_HDRS      := $(wildcard lib/*.h) $(CORE_HDRS)
LIBBUDDY_PIC_OBJS  := $(LIBBUDDY_SRCS:%.c=$(B)/lib/pic/%.o)
LIBBUDDY_SO_REAL   := $(B)/lib/libbuddy.so.$(LIBBUDDY_VERSION)
LIBBUDDY_SONAME    := libbuddy.so.$(LIBBUDDY_SOVERSION)
LIBBUDDY_PC_UNINST := $(B)/lib/libbuddy-uninstalled.pc
LIBBUDDY_LIBS      := $(B)/lib/libbuddy.a $(LIBBUDDY_SO_REAL) \
		      $(B)/lib/$(LIBBUDDY_SONAME) $(B)/lib/libbuddy.so
EXAMPLE_BIN        := $(B)/examples/buddy-example

.PHONY: lib example

$(B)/lib/pic/%.o: %.c $(LIBBUDDY_HDRS) lib/lib.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -fPIC $(PIC_VIS) -c -o $@ $<

# The in-process device and the core it is built from stay inside the
# library: only libbuddy.h's buddy_* calls are exported.
$(patsubst %.c,$(B)/lib/pic/%.o,$(wildcard lib/inproc*.c) lib/tcodec.c \
	lib/gist.c $(CORE_SRCS)): \
	PIC_VIS := -fvisibility=hidden

$(LIBBUDDY_SAN_A): $(LIBBUDDY_SRCS:%.c=$(B)/san/%.o)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Both archives from the same PIC objects: one compilation, and a static
# libbuddy.a that can also go into other shared objects.
$(LIBBUDDY_A): $(LIBBUDDY_PIC_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBBUDDY_SO_REAL): $(LIBBUDDY_PIC_OBJS) lib/libbuddy.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(LIBBUDDY_SONAME) \
	    -Wl,--version-script=lib/libbuddy.map -Wl,--no-undefined \
	    -o $@ $(LIBBUDDY_PIC_OBJS) -luring -lpthread -lz -llz4 -lm

$(B)/lib/$(LIBBUDDY_SONAME) $(B)/lib/libbuddy.so: $(LIBBUDDY_SO_REAL)
	ln -sf $(notdir $<) $@

# The in-tree pkg-config file: headers from the source tree, the library
# from $(B)/lib.  Absolute paths, so it works from any directory.
$(LIBBUDDY_PC_UNINST): lib/lib.mk
	@mkdir -p $(dir $@)
	@{ echo 'prefix=$(abspath $(B))'; \
	   echo 'libdir=$${prefix}/lib'; \
	   echo 'srcdir=$(CURDIR)'; \
	   echo ''; \
	   echo 'Name: libbuddy'; \
	   echo 'Description: Buddy Compression /dev/buddy access (uninstalled, in-tree)'; \
	   echo 'Version: $(LIBBUDDY_PC_VERSION)'; \
	   echo 'Requires.private: liburing zlib liblz4'; \
	   echo 'Libs: -L$${libdir} -lbuddy'; \
	   echo 'Libs.private: -lm'; \
	   echo 'Cflags: -I$${srcdir}/lib -I$${srcdir}'; \
	} >$@
	@echo "  GEN     $@"

lib: $(LIBBUDDY_LIBS) $(LIBBUDDY_PC_UNINST)

# The documentation's example, built the way its users build it.
$(EXAMPLE_BIN): examples/buddy-example.c $(LIBBUDDY_HDRS) $(LIBBUDDY_LIBS) \
		$(LIBBUDDY_PC_UNINST)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -o $@ $< \
	    $$(PKG_CONFIG_PATH=$(abspath $(B)/lib) pkg-config --cflags --libs libbuddy) \
	    -Wl,-rpath,$(abspath $(B)/lib)

example: $(EXAMPLE_BIN)

# --- libbuddy in the guest ---------------------------------------------------
#   make check-lib   the io_uring context, uring_cmd and AUTO tests
#                    (selftests/lib/libbuddy_aio_test.c) and the example
#                    program, both linked -static against $(B)/lib/libbuddy.a,
#                    the admin guide's helper buddy-fill, and buddy_twin
#                    (one workload on /dev/buddy and on the in-process
#                    device: histograms, counters, pool usage identical),
#                    run in a QEMU guest with buddy.ko loaded; TAP in
#                    $(B)/results/guest-lib.log
LIB_GUEST_DIR := $(B)/guest/lib
LIB_GUEST_TIMEOUT ?= 300

.PHONY: check-lib lib-guest-bins

$(LIB_GUEST_DIR)/libbuddy_aio_test: selftests/lib/libbuddy_aio_test.c \
		$(LIBBUDDY_HDRS) $(LIBBUDDY_A) | harness
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< $(LIBBUDDY_A) -luring

# The example as its users would link it statically (--static adds liburing).
$(LIB_GUEST_DIR)/buddy-example: examples/buddy-example.c $(LIBBUDDY_HDRS) \
		$(LIBBUDDY_LIBS) $(LIBBUDDY_PC_UNINST)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -static -o $@ $< \
	    $$(PKG_CONFIG_PATH=$(abspath $(B)/lib) pkg-config --static --cflags --libs libbuddy)

# The helper the admin guide's walk-through was captured with.
$(LIB_GUEST_DIR)/buddy-fill: selftests/lib/buddy-fill.c $(USER_HDRS) \
		$(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -lm

# One workload on /dev/buddy and on the in-process device, compared.
$(LIB_GUEST_DIR)/buddy_twin: selftests/lib/buddy_twin.c $(USER_HDRS) \
		$(TOOLS_A) $(LIBBUDDY_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< \
	    $(TOOLS_A) $(LIBBUDDY_A) -luring -lm

$(LIB_GUEST_DIR)/guest-lib.sh: selftests/lib/guest-lib.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

lib-guest-bins: $(LIB_GUEST_DIR)/libbuddy_aio_test $(LIB_GUEST_DIR)/buddy-example \
	$(LIB_GUEST_DIR)/buddy-fill $(LIB_GUEST_DIR)/buddy_twin \
	$(LIB_GUEST_DIR)/guest-lib.sh

check-lib: lib-guest-bins
	@MAKE="$(MAKE)" B=$(B) scripts/guest/stage.sh module lib $(LIB_GUEST_DIR)
	@B=$(B) scripts/guest/stage.sh run lib --timeout $(LIB_GUEST_TIMEOUT) \
	    --file $(LIB_GUEST_DIR):/opt/lib -- 'sh /opt/lib/guest-lib.sh'

# --- libbuddy natively, on the in-process device ----------------------------
#   make check-inproc  selftests/lib/libbuddy_inproc_test.c under ASan+UBSan
#                      against the in-process device (every call, every
#                      errno, counters against the map, re-targets, profiles,
#                      AUTO, aio, threads), and the documentation's example
#                      run with BUDDY_DEVICE=inproc:...; TAP in
#                      $(B)/results/native-*.log
INPROC_TEST := $(B)/san/tests/lib/libbuddy_inproc_test

.PHONY: check-inproc
$(INPROC_TEST): selftests/lib/libbuddy_inproc_test.c $(USER_HDRS) \
		$(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) | harness
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ $< \
	    $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) -luring -lm -lpthread

# buddy_twin: the guest's /dev/buddy-vs-inproc comparison, here on two
# in-process devices (the workload is deterministic, the comparison works).
TWIN_NATIVE := $(B)/san/tests/lib/buddy_twin
$(TWIN_NATIVE): selftests/lib/buddy_twin.c $(USER_HDRS) \
		$(TOOLS_SAN_A) $(LIBBUDDY_SAN_A)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(SAN) -o $@ $< \
	    $(TOOLS_SAN_A) $(LIBBUDDY_SAN_A) -luring -lm -lpthread

check-inproc: $(INPROC_TEST) $(EXAMPLE_BIN) $(TWIN_NATIVE)
	@scripts/run-native-tests.sh $(INPROC_TEST)
	@RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name inproc-twin $(TWIN_NATIVE) \
	    inproc:device_mb=16,max_ratio=4,chunk_kb=256 \
	    inproc:device_mb=16,max_ratio=4,chunk_kb=256
	@RESULTS=$${RESULTS:-$(B)/results} scripts/run-native-tests.sh \
	    --name inproc-example selftests/lib/inproc-example.sh $(EXAMPLE_BIN)
