#!/bin/sh
# Run each libFuzzer binary for a bounded time; one TAP line per target and
# a totals line in build/results/native-fuzz.log.
secs=$1
shift
out=${RESULTS:-build/results}
log=$out/native-fuzz.log
mkdir -p "$out" build/fuzz/corpus
pass=0 fail=0 n=0
: >"$log"
for f in "$@"; do
	n=$((n + 1))
	name=$(basename "$f")
	mkdir -p "build/fuzz/corpus/$name"
	if "$f" -max_total_time="$secs" -max_len=400 -print_final_stats=1 \
		"build/fuzz/corpus/$name" >"build/fuzz/$name.log" 2>&1; then
		runs=$(sed -n 's/.*stat::number_of_executed_units: *//p' "build/fuzz/$name.log")
		echo "ok $n $name ($runs runs in ${secs}s)" >>"$log"
		pass=$((pass + 1))
	else
		echo "not ok $n $name" >>"$log"
		tail -30 "build/fuzz/$name.log" | sed 's/^/# /' >>"$log"
		fail=$((fail + 1))
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0" >>"$log"
cat "$log"
[ $fail -eq 0 ]
