# SPDX-License-Identifier: GPL-2.0
# make check-hostroot: the host's own programs in the QEMU guest through
# scripts/guest/run.sh --host-root.  compute.py (numpy, torch)
# and LAMMPS (in.melt, 50 steps) run on the host and, in one guest boot,
# through chroot /host; check.py compares the results (numbers exactly or
# within a stated tolerance, the LAMMPS log up to timings) and that
# buddyctl in the chroot reaches buddy.ko through /dev/buddy; the same
# programs, runprog (fork, exec, every allocation call) and GNU sort of an
# 8 MiB file read from the writable 9p export under `buddyctl run` with a
# device pool and a window smaller than their footprints give the same
# results, with window faults and buddy traffic reported; run.sh's
# verdict (kernel log clean, no crash or timeout) is one more result.
# buddy.torch's activation policies run on /dev/buddy and on the in-process
# device in one guest process; selftests/dnn/backends.py compares them.
# The host runs come first and are timed: their run times are the native
# base of each `buddyctl run` report's bandwidth sweep, which check.py
# writes to $(B)/hostroot/native-sweep.md.
# TAP: $(B)/results/guest-hostroot.log, hostroot-dnn.log and
# hostroot-selftest.log
# (check.py's and backends.py's own comparisons must reject changed values).

HOSTROOT_DIR     := $(abspath $(B))/hostroot
HOSTROOT_TIMEOUT ?= 1800

.PHONY: check-hostroot
check-hostroot: $(BUDDYCTL) $(PROFILE_LIB) $(PROFILE_TEST_DIR)/runprog \
		$(PROFILE_TEST_DIR)/hpcprog lib
	@out=$${RESULTS:-$(B)/results}; mkdir -p $$out $(B)/guest; d=$(HOSTROOT_DIR); \
	python3 selftests/hostroot/check.py --self-test >$$out/hostroot-selftest.log 2>&1; \
	python3 selftests/dnn/backends.py --self-test >>$$out/hostroot-selftest.log 2>&1; \
	grep -q '^# Totals:' $$out/hostroot-selftest.log || \
	    echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>$$out/hostroot-selftest.log; \
	grep -E '^not ok |^# Totals' $$out/hostroot-selftest.log | sed 's/^/check-hostroot: self-test: /'; \
	MAKE="$(MAKE)" B=$(B) scripts/guest/stage.sh module hostroot - || exit 1; \
	rm -rf $$d; mkdir -p $$d/host/lammps $$d/guest; \
	echo "check-hostroot: host part first (its run times are the native base of the bandwidth sweep)"; \
	t0=$$(date +%s.%N); \
	/usr/bin/python3 selftests/hostroot/compute.py $$d/host/compute.json \
	    >$$d/host/compute.out 2>&1; \
	t1=$$(date +%s.%N); \
	( cd $$d/host/lammps && /usr/bin/lmp -in $(CURDIR)/selftests/hostroot/in.melt \
	      -log log.lammps -screen none >$$d/host/lammps.out 2>&1 ); \
	t2=$$(date +%s.%N); \
	echo "$$t0 $$t1" | awk '{ printf "%.3f\n", $$2 - $$1 }' >$$d/host/compute.time; \
	echo "$$t1 $$t2" | awk '{ printf "%.3f\n", $$2 - $$1 }' >$$d/host/lammps.time; \
	B=$(B) scripts/guest/stage.sh run \
	    --check "python3 selftests/hostroot/check.py $$d/host $$d/guest \"\$$RUN\"" \
	    hostroot --host-root --host-rw $$d/guest --timeout $(HOSTROOT_TIMEOUT) -- \
	    "sh /host$(CURDIR)/selftests/hostroot/guest.sh $(CURDIR) $$d/guest /host$(CURDIR)/kmod/buddy.ko $(abspath $(BUDDYCTL)) $(abspath $(PROFILE_TEST_DIR))/runprog $(abspath $(PROFILE_TEST_DIR))/hpcprog"; \
	rc=$$?; \
	python3 selftests/dnn/backends.py compare $$d/guest/dnn.json >$$out/hostroot-dnn.log 2>&1; \
	drc=$$?; \
	grep -E '^not ok |^# Totals' $$out/hostroot-dnn.log | sed 's/^/check-hostroot: dnn: /'; \
	echo "check-hostroot: guest output in $$d/guest/"; \
	[ $$rc -eq 0 ] && [ $$drc -eq 0 ]
