#!/bin/sh
# scripts/guest/verdict.sh RC RUN LOG
#
# After a guest run whose run.sh output was captured in RUN and whose TAP
# went to LOG: when run.sh exited RC other than 0 (crash, timeout,
# unexpected kernel log lines), append its verdict lines to LOG as comments
# and count it as one failed test.
rc=$1 run=$2 log=$3
[ "$rc" -ne 0 ] || exit 0
grep '^run.sh:' "$run" | head -40 | sed 's/^/# /' >>"$log"
sed -n '/unexpected kernel log lines/,/^run.sh: FAIL/p' "$run" |
    head -60 | sed 's/^/# /' >>"$log"
echo "not ok - guest run: run.sh exited $rc (see $run)" >>"$log"
echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>"$log"
