# SPDX-License-Identifier: GPL-2.0
# The demo.
#
#   make demo       the main job, from a fresh Debian 12 machine: install the
#                   packages (build tools and the demo's data packages),
#                   prepare the guest kernel, build buddy.ko and the static
#                   demo program, boot a 2-node QEMU guest with a 32 MiB
#                   device pool and run tools/demo/run-demo.sh there.
#                   Then tools/demo/run-demo-run.sh: a real program whose
#                   data does not fit the device pool (numpy on the
#                   Fashion-MNIST images) runs under `buddyctl run` in a
#                   --host-root guest, with its per-label table, bandwidth
#                   sweep and baselines (output in $(B)/demo/run/).
#   make demo-run   that second part only.
#   make demo-bin   the static demo program only ($(DEMO_BIN)).
#
# The demo's output is also kept in $(B)/demo/demo.out.

DEMO_BIN  := $(B)/demo/buddy-demo
DEMO_LIBS := $(TOOLS_A) $(LIBBUDDY_A)

.PHONY: demo demo-bin demo-run

# Static: the guest is a busybox initramfs without libc.
$(DEMO_BIN): tools/demo/demo.c $(USER_HDRS) $(DEMO_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) -static -o $@ $< $(DEMO_LIBS) -lm

demo-bin: $(DEMO_BIN)

# Sequential on purpose: nothing can be built before the packages are in,
# and KDIR is only known once linux-headers-amd64 is installed (the sub-makes
# evaluate it again).
demo:
	scripts/install-deps.sh
	scripts/guest/prepare.sh
	$(MAKE) module
	$(MAKE) demo-bin
	tools/demo/run-demo.sh $(DEMO_BIN)
	$(MAKE) demo-run

demo-run: $(BUDDYCTL) $(PROFILE_LIB)
	$(MAKE) module
	tools/demo/run-demo-run.sh
