#!/bin/sh
# Run one stage of `make check` (its tests write "# Totals:" lines into
# build/results/*.log).  A stage that fails without recording a failure of
# its own (a build error, a crash before any test ran) is recorded as one
# failed test, so the closing line can never hide it.
#
# STAGE_BEFORE names a list of the result files (cksum lines) as they were
# before the stage: scripts/summary.sh run inside the stage skips them, so a
# stage's own summary never fails for an earlier stage's results.
out=${RESULTS:-build/results}
name=$1
shift
mkdir -p "$out"
fails() {
	cat "$out"/*.log 2>/dev/null |
	sed -n 's/^# Totals: pass:[0-9]* fail:\([0-9]*\).* error:\([0-9]*\).*/\1 \2/p' |
	awk '{ n += $1 + $2 } END { print n + 0 }'
}
STAGE_BEFORE=$out/.stage-$name.before
for f in "$out"/*.log; do
	[ -f "$f" ] && cksum "$f"
done >"$STAGE_BEFORE"
export STAGE_BEFORE
before=$(fails)
echo "=== $name: $*"
"$@"
rc=$?
if [ $rc -ne 0 ] && [ "$(fails)" -eq "$before" ]; then
	{
		echo "not ok 1 stage $name: '$*' exited $rc"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	} >"$out/stage-$name.log"
	echo "=== $name: FAILED (exit $rc)"
fi
rm -f "$STAGE_BEFORE"
exit 0
