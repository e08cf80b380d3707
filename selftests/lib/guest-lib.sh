#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-lib.sh - run INSIDE the QEMU guest by `make check-lib`: load
# buddy.ko, run libbuddy's io_uring/AUTO harness test, then the
# documentation's example program and the buddy-fill helper, and unload;
# then reload it fresh for buddy_twin (/dev/buddy vs the in-process device).  Everything between
# "### TAP BEGIN" and "### TAP END" is the log the host keeps; the harness
# prints its own "# Totals:" line and the example adds a second TAP stream.
dir=$(cd "$(dirname "$0")" && pwd)
status=0
echo "### TAP BEGIN"
if ! insmod "$dir/buddy.ko" device_mb=16 max_ratio=4; then
	echo "not ok 1 insmod buddy.ko"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	echo "### TAP END"
	exit 1
fi
"$dir/libbuddy_aio_test" || status=1

# The example: exit 0, the data read back identical, the pools empty after.
out=$("$dir/buddy-example" -l doc-example 4 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
pass=0 fail=0
if [ $rc = 0 ] && echo "$out" | grep -q 'identical$'; then
	pass=1; echo "ok 1 buddy-example stores and reads back 4 MiB"
else
	fail=1; echo "not ok 1 buddy-example stores and reads back 4 MiB (exit $rc)"
fi
mm=$(cat /sys/class/misc/buddy/mm_stat)
set -- $mm
if [ "$2 $4 $6" = "0 0 0" ]; then
	pass=$((pass + 1)); echo "ok 2 pools empty after the example: $mm"
else
	fail=$((fail + 1)); echo "not ok 2 pools empty after the example: $mm"
fi
# buddy-fill, the admin guide's helper: the allocation lives while its
# command runs (4 MiB of zeros at 16x: one allocation, 4 MiB logical).
got=$("$dir/buddy-fill" zeros:4:16x:bpc:zero -- cat /sys/class/misc/buddy/mm_stat)
set -- $got
if [ "$5 $6" = "4194304 1" ]; then
	pass=$((pass + 1)); echo "ok 3 buddy-fill holds its allocation: $got"
else
	fail=$((fail + 1)); echo "not ok 3 buddy-fill holds its allocation: $got"
fi
echo "1..3"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ] || status=1
rmmod buddy || status=1

# The same workload on a freshly loaded buddy.ko and on the in-process
# device with the module's parameters: every errno, histogram, counter and
# pool byte must agree (buddy_twin prints its own TAP and totals).
# Link parameters not the defaults: both must apply what they are given.
params="device_mb=16 max_ratio=4 chunk_kb=256 link_gbps=100 link_latency_ns=300 device_gbps=700"
if insmod "$dir/buddy.ko" $params; then
	"$dir/buddy_twin" /dev/buddy "inproc:$(echo $params | tr ' ' ,)" ||
		status=1
	rmmod buddy || status=1
else
	echo "not ok 1 insmod buddy.ko $params"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	status=1
fi
echo "### TAP END"
exit $status
