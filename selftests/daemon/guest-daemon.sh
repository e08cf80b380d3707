#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-daemon.sh - buddyd's tests, run INSIDE the QEMU guest by busybox sh
# (started by `make check-daemon` through scripts/guest/run.sh).
#
# Loads buddy.ko with a 16 MiB device pool and a 48 MiB carve-out, runs the
# harness binary buddyd_guest_test (its TAP between "### TAP BEGIN/END" for
# the host), then captures a real `buddyd --once --report` (table and JSON)
# on the report workload between "### REPORT BEGIN/END" and
# "### JSON BEGIN/END", and unloads the module.  The exit status is non-zero
# when anything failed.

dir=$(cd "$(dirname "$0")" && pwd)
export BUDDYD=$dir/buddyd
status=0

echo "### TAP BEGIN"
if ! insmod "$dir/buddy.ko" device_mb=16 max_ratio=4; then
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 insmod buddy.ko device_mb=16 max_ratio=4"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	echo "### TAP END"
	exit 1
fi
"$dir/buddyd_guest_test"
rc=$?
echo "### TAP END"
[ "$rc" = 0 ] || status=1

# The report: one workload, the table and then the JSON on the same
# allocations (the workload keeps rewriting some of them meanwhile).
cmd="$BUDDYD --once --report --dry-run --interval=100ms --state-file=/tmp/report-profiles"
"$dir/buddyd_workload" -- sh -c "
	$cmd >/tmp/report.txt 2>/tmp/report.log
	echo \$? >/tmp/report.rc
	$cmd --json >/tmp/report.json 2>/dev/null"
wrc=$?
echo "### REPORT BEGIN"
echo "\$ buddyd_workload -- $cmd    (in the QEMU guest, $(uname -r))"
cat /tmp/report.txt
echo
echo "--- buddyd's log (stderr) ---"
cat /tmp/report.log
echo "--- exit status $(cat /tmp/report.rc 2>/dev/null), workload exit status $wrc"
echo "### REPORT END"
echo "### JSON BEGIN"
cat /tmp/report.json
echo "### JSON END"
[ "$wrc" = 0 ] && [ "$(cat /tmp/report.rc 2>/dev/null)" = 0 ] || {
	echo "# the report run failed"
	status=1
}

if ! rmmod buddy; then
	echo "# rmmod buddy failed: something still holds the device"
	status=1
fi
echo "# guest-daemon.sh: done, status $status"
exit $status
