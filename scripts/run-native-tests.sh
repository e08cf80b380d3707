#!/bin/sh
# Run native tests (TAP on stdout ending in a kselftest "# Totals:" line);
# record each one's log in build/results/ for scripts/summary.sh.
#
#   run-native-tests.sh BINARY...
#       each test binary, without arguments, into native-NAME.log, NAME
#       from the path (build/san/tests/x/y_test: san-x-y_test)
#   run-native-tests.sh --name NAME COMMAND [ARG]...
#       one test command (a script, with its arguments) into native-NAME.log
#
# A test without totals (a crash) gets a failing totals line and fails.
out=${RESULTS:-build/results}
mkdir -p "$out"
status=0

run_one() {
	name=$1
	shift
	log="$out/native-$name.log"
	"$@" >"$log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^# (PASSED|FAILED)|^# Totals' "$log" | grep -v '^ok ' || true
	if ! grep -q '^# Totals' "$log"; then
		echo "# $name: exited $rc without totals (crash?)"; tail -20 "$log"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0" >>"$log"
		rc=1
	fi
	[ $rc -eq 0 ] || status=1
}

if [ "$1" = --name ]; then
	name=$2
	shift 2
	run_one "$name" "$@"
else
	for t in "$@"; do
		run_one "$(echo "$t" | sed "s|^build/||; s|/tests/|-|; s|/|-|g")" "$t"
	done
fi
exit $status
