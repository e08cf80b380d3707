#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Record every output of buddyctl and buddyd that the native tool tests
# produce, so that two trees (before and after a change that must not
# change behaviour) can be compared with one diff:
#
#   selftests/tools/capture-outputs.sh TREE OUTDIR
#   diff -r OUTDIR-before OUTDIR-after
#
# TREE is a built tree (make build/buddyctl build/buddyd
# build/libbuddyprof.so and the profiler's test programs).  Its test
# scripts are found by name, wherever the tree keeps them, and run with
# buddyctl and buddyd replaced by a wrapper that passes stdin through and
# records, per invocation: the arguments, the exit status, stdout, stderr
# and every file argument the command wrote.  One record file per test
# script in OUTDIR, and guest.txt: the command blocks of the guest run of
# `make check-buddyctl` (TREE/build/guest/buddyctl.out) when it is there.
#
# Paths of the tree and of scratch directories are replaced by fixed names;
# what depends on the clock or the scheduler (times, rates, pids, snapshot
# counts) is masked by normalize() below, one rule per kind of field.
set -u
tree=$(realpath "${1:?tree}")
out=${2:?outdir}
mkdir -p "$out"
out=$(realpath "$out")
here=$(dirname "$(realpath "$0")")
wrap=$(mktemp -d /tmp/capture-wrap.XXXXXX)
trap 'rm -rf "$wrap"' EXIT

find_test() {
	find "$tree" -path "$tree/build" -prune -o -name "$1" -print | head -1
}

# The wrapper: the real binary's stdout and stderr are kept in files and
# then written out (stdout first), so a test's 2>&1 capture can change its
# interleaving, nothing else.
make_wrapper() { # NAME REAL
	cat >"$wrap/$1" <<EOF
#!/bin/bash
rec=\$CAPTURE_REC
# FILE, and a newline when it does not end with one
show() { cat "\$1"; [ -s "\$1" ] && [ -n "\$(tail -c1 "\$1")" ] && echo; true; }
n=\$(flock "\$rec.lock" sh -c 'n=\$(cat "\$0" 2>/dev/null || echo 0); echo \$((n + 1)) >"\$0"; echo \$n' "\$rec.count")
d=\$(mktemp -d /tmp/capture-call.XXXXXX)
touch "\$d/stamp"
sleep 0.01
"$2" "\$@" >"\$d/out" 2>"\$d/err"
rc=\$?
{
	printf '### %s: $1' "\$n"
	printf ' %q' "\$@"
	printf '\n### rc %s\n' "\$rc"
	echo "### stdout"; show "\$d/out"
	echo "### stderr"; show "\$d/err"
	for a in "\$@"; do
		a=\${a#*=}
		[ -f "\$a" ] && [ "\$a" -nt "\$d/stamp" ] || continue
		case \$a in /dev/*) continue ;; esac
		if grep -qI . "\$a" 2>/dev/null || [ ! -s "\$a" ]; then
			echo "### file \$a"; show "\$a"
		else
			echo "### file \$a (binary) \$(sha256sum <"\$a" | cut -c1-64)"
		fi
	done
} >"\$rec.\$n"
cat "\$d/out"; cat "\$d/err" >&2
rm -rf "\$d"
exit \$rc
EOF
	chmod +x "$wrap/$1"
}
make_wrapper buddyctl "$tree/build/buddyctl"
make_wrapper buddyd "$tree/build/buddyd"

normalize() {
	sed -E \
	    -e "s#$tree#TREE#g" \
	    -e 's#/tmp/[A-Za-z0-9_-]+\.[A-Za-z0-9]{6,10}#/tmp/SCRATCH#g' \
	    -e 's#/tmp/tmp\.[A-Za-z0-9]{10}#/tmp/SCRATCH#g'
}

run_test() { # NAME SCRIPT ARGS...
	local name=$1 script=$2
	shift 2
	local rec=$wrap/rec-$name
	echo 0 >"$rec.count"
	echo "capture: $name ($script)"
	CAPTURE_REC=$rec "$script" "$@" >"$wrap/$name.tap" 2>&1
	grep '^# Totals' "$wrap/$name.tap"
	local i=0
	while [ -f "$rec.$i" ]; do
		cat "$rec.$i"
		i=$((i + 1))
	done | normalize >"$out/$name.txt"
}

bc=$wrap/buddyctl bd=$wrap/buddyd
lib=$tree/build/libbuddyprof.so
tdir=$(dirname "$(find "$tree/build" -name runprog -type f | grep -v guest | head -1)")

run_test analyze "$(find_test analyze_test.sh)" "$bc"
run_test buddyctl-cli "$(find_test buddyctl_cli_test.sh)" "$bc"
run_test calibrate-cli "$(find_test calibrate_cli_test.sh)" "$bc"
run_test check-config "$(find_test check_config_test.sh)" "$bd"
run_test profile "$(find_test profile_test.sh)" "$bc" "$lib" "$tdir"
run_test run "$(find_test run_test.sh)" "$bc" "$lib" "$tdir"

# The guest runs' outputs: the command blocks of `make check-buddyctl`, as
# buddyctl_check.py reads them, and buddyd's report of `make check-daemon`
# (GUEST_OUT: a directory holding copies of those files instead).
g=${GUEST_OUT:-}
if [ -f "${g:-$tree/build/guest}/buddyctl.out" ]; then
	awk '/^### BEGIN /, /^### END / { print }' \
	    "${g:-$tree/build/guest}/buddyctl.out" | normalize >"$out/guest.txt"
fi
for f in buddyd-report.txt buddyd-report.json; do
	if [ -f "${g:-$tree/build/results}/$f" ]; then
		normalize <"${g:-$tree/build/results}/$f" >"$out/guest-$f"
	fi
done
