#!/bin/sh
# Run native test binaries (kselftest harness, TAP on stdout); record each
# binary's totals in build/results/ for scripts/summary.sh.
out=${RESULTS:-build/results}
mkdir -p "$out"
status=0
for t in "$@"; do
	name=$(echo "$t" | sed "s|^build/||; s|/tests/|-|; s|/|-|g")
	log="$out/native-$name.log"
	"$t" >"$log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^# (PASSED|FAILED)|^# Totals' "$log" | grep -v '^ok ' || true
	if ! grep -q '^# Totals' "$log"; then
		echo "# $name: exited $rc without totals (crash?)"; tail -20 "$log"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>"$log"
	fi
	[ $rc -eq 0 ] || status=1
done
exit $status
