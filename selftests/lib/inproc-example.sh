#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The documentation's example on the in-process device, natively: it must
# exit 0 and read back what it wrote.  TAP with a "# Totals:" line.
ex=$1
echo "TAP version 13"
echo "1..2"
out=$(BUDDY_DEVICE=inproc:device_mb=64,max_ratio=4 "$ex" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
pass=0 fail=0
if [ $rc -eq 0 ]; then
	echo "ok 1 buddy-example exits 0 on inproc:device_mb=64,max_ratio=4"
	pass=$((pass + 1))
else
	echo "not ok 1 buddy-example exited $rc"
	fail=$((fail + 1))
fi
if echo "$out" | grep -q 'identical'; then
	echo "ok 2 buddy-example reads back what it wrote"
	pass=$((pass + 1))
else
	echo "not ok 2 buddy-example did not read back its data"
	fail=$((fail + 1))
fi
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
