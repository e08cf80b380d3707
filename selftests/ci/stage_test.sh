#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# stage_test.sh - how `make check` counts: scripts/stage.sh runs each stage,
# scripts/summary.sh sums the results.  Synthetic stages in a scratch
# results directory: a failure is counted once, in the stage that has it,
# even when a later stage ends with its own summary (as the guest stage
# does).  TAP on stdout, closing "# Totals:" line.
src=$(cd "$(dirname "$0")/../.." && pwd)
stage=$src/scripts/stage.sh
summary=$src/scripts/summary.sh
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $*"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $*"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/stage-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export RESULTS=$work/results
unset STAGE_BEFORE

# A stage command: write one result file with PASS passes and FAIL failures,
# then (with "summary") end with scripts/summary.sh as check-guest does.
cat >"$work/fake-stage" <<'S'
#!/bin/sh
# fake-stage NAME PASS FAIL [summary|exit=N]
{
	[ "$3" -gt 0 ] && echo "not ok 1 $1 broken"
	echo "# Totals: pass:$2 fail:$3 xfail:0 xpass:0 skip:0 error:0"
} >"$RESULTS/$1.log"
case ${4:-} in
summary) exec "$SUMMARY" ;;
exit=*) exit "${4#exit=}" ;;
esac
[ "$3" -eq 0 ]
S
chmod +x "$work/fake-stage"
export SUMMARY=$summary

# run STAGE-ARGS...; then the closing line of the whole run
closing() { "$summary"; }
expect() { # description wanted-closing-line
	got=$(closing)
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		echo "# want: $2"
		echo "# got:  $got"
		for f in "$RESULTS"/*.log; do sed "s|^|# $(basename "$f"): |" "$f"; done
		nok "$1"
	fi
}
reset() { rm -rf "$RESULTS"; mkdir -p "$RESULTS"; }

# 1. The fresh-machine case: install fails once, the guest stage
#    passes its own tests and ends with scripts/summary.sh.
reset
"$stage" install "$work/fake-stage" native-install 13 1 >/dev/null
"$stage" guest "$work/fake-stage" guest-kmod 40 0 summary >/dev/null
expect "an earlier stage's failure is not counted again by a later stage's summary" \
	"53 passed, 1 failed, 0 skipped"
if [ -e "$RESULTS/stage-guest.log" ]; then
	sed 's/^/# /' "$RESULTS/stage-guest.log"
	nok "the guest stage is not marked failed for the install stage's test"
else
	ok "the guest stage is not marked failed for the install stage's test"
fi

# 2. A stage that fails its own test and ends with the summary: once.
reset
"$stage" guest "$work/fake-stage" guest-kmod 39 1 summary >/dev/null
expect "a stage's own failure, then its summary, counts once" \
	"39 passed, 1 failed, 0 skipped"

# 3. A stage that fails without writing a result (a build error): once.
reset
"$stage" install "$work/fake-stage" native-install 14 0 >/dev/null
"$stage" lib false >/dev/null
expect "a stage that exits non-zero without results counts as one failure" \
	"14 passed, 1 failed, 0 skipped"
grep -q "^not ok 1 stage lib: 'false' exited 1" "$RESULTS/stage-lib.log" 2>/dev/null &&
	ok "that failure names the stage and its exit status" ||
	nok "that failure names the stage and its exit status"

# 4. Both: an earlier failure and a later stage that breaks on its own
#    after its summary passed (exit 2 without a failing result).
reset
"$stage" install "$work/fake-stage" native-install 13 1 >/dev/null
"$stage" guest "$work/fake-stage" guest-kmod 40 0 exit=2 >/dev/null
expect "a later stage's own breakage is still counted with an earlier failure" \
	"53 passed, 2 failed, 0 skipped"

# 5. A stage rewriting its own result file from an earlier run of the same
#    stage: the new content counts.
reset
"$stage" guest "$work/fake-stage" guest-kmod 40 0 >/dev/null
"$stage" guest "$work/fake-stage" guest-kmod 39 1 summary >/dev/null
expect "a result file rewritten by the stage counts with its new content" \
	"39 passed, 1 failed, 0 skipped"

# 6. Outside a stage, summary.sh sums everything and says so in its status.
reset
"$work/fake-stage" a 2 0
"$work/fake-stage" b 3 1
if out=$("$summary"); then rc=0; else rc=$?; fi
[ "$out" = "5 passed, 1 failed, 0 skipped" ] && [ $rc = 1 ] &&
	ok "summary.sh alone sums every result file and exits 1 on a failure" ||
	{ echo "# got '$out' rc=$rc"; nok "summary.sh alone sums every result file and exits 1 on a failure"; }
rm -f "$RESULTS/b.log"
"$summary" >/dev/null &&
	ok "summary.sh exits 0 when nothing failed" ||
	nok "summary.sh exits 0 when nothing failed"
left=$(find "$RESULTS" -mindepth 1 ! -name '*.log')
if [ -z "$left" ]; then
	ok "stage.sh leaves no bookkeeping file behind"
else
	echo "$left" | sed 's/^/# /'
	nok "stage.sh leaves no bookkeeping file behind"
fi

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
